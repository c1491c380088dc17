"""Register-tiled, K-blocked SIMD matmul for kernels that are a float32 sum of products.

dot_general lowers to `out[b.., i, j] = epilogue(sum_k A[.., i, .., k] * B[.., k, .., j])`: a
reduction over the last axis whose body multiplies a load that does not vary along the last
output axis j (A) by one that does not vary along i (B). `match` recognizes that shape with
affine loads (any strides: transposed operands included); `emit` then generates:

    for each batch:                              (axis 0 rows or batches: the lo/hi split range)
      for jc in panels of NC columns:
        for kc in blocks of KC:
          pack B[kc:kc+KC, jc:jc+NC] into scratch as strips of NR columns ([strip][k][NR],
          zero-padded), so the inner loop reads B contiguously whatever its layout
          for i0 in tiles of MR rows (then single rows):
            pack A[i0:i0+MR, kc:kc+KC] as [k][MR] (4x4 shuffle transposes when A's rows are
            contiguous): the k loop then reads two contiguous streams, whatever the strides and
            however A, B and C happen to be aligned relative to each other (power-of-two leading
            dimensions otherwise make A's rows fight for the same cache sets)
            for each strip: MR x NR accumulators (v128) = 0, or the partial sums kept in C
              for k in block: NR/4 vector loads of the strip, MR splat loads of A (or MR vector
                              loads of A packed broadcast: the "bcast" form, see TILES),
                              MR*NR/4 multiply-adds (f32x4.relaxed_madd when the host has it
                              and the form is "madd"; else a multiply and an add)
              last block: the fused epilogue on the tile (vectorized along j), store;
              otherwise: store the partial sums into C (float32 outputs only)

Columns past N in the last strip are computed on the zero padding and never stored; their
epilogue runs lane by lane in scalar code.
"""

from __future__ import annotations

from pyjax.backends.wasm.encoder import F32, I32, V128
from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel
from pyjax.compiler.views import ShapeTracker
from pyjax.core import dtypes

__all__ = ["CANDIDATES", "MatmulPlan", "emit", "match", "may_match", "tile_for", "tunable", "tuning_kernel"]

import math
import os

# Register tile (MR rows x 4*NV columns[, form]) by the engine that compiles the module to machine
# code. Two forms of the k loop (FORMS):
#   "madd": A scalars packed [k][MR], loaded and splat; relaxed_madd(a, b, acc), 2 k steps per
#           iteration. V8 (browsers): 6 x 8 ran 1024^2 in 66-92 ms of CPU against 101-127 ms for
#           4 x 16 in Node 24's V8, and faster in every one of four rounds in Chromium 156.
#   "bcast": A packed already broadcast ([k][MR][4], one v128.load per row), a multiply then an
#           add, 1 k step per iteration. For Cranelift on x64: it lowers relaxed_madd to
#           vfmadd213ps, whose destination is a multiplicand, so every reused A or B vector
#           costs a register copy and the accumulators rotate through registers (moves or
#           spills at the loop's end); it hoists a block's loads to its top, and only 16 xmm
#           registers exist. AVX's 3-operand vmulps/vaddps keep each accumulator in place: the
#           3 x 12 loop is 30 instructions for 9 vector multiply-adds, no spill (4 x 16 "madd":
#           150 for 32, 36 stack accesses). 1024^2 on an EPYC, 5 rounds of processes: see README.
TILES = {"cranelift": (3, 3, "bcast"), "v8": (6, 2)}
FORMS = ("madd", "bcast")
# Tiles the backend's autotune times, once per process, on engines that compile ahead of time:
# which MR x NV fits best depends on how the engine's register allocator spills the MR*NV
# accumulators (x64 has 16 vector registers) and on the CPU. V8 tiers up in the background (a
# timing right after compiling measures baseline code), so browsers keep TILES.
CANDIDATES = {"cranelift": ((3, 3, "bcast"), (4, 2, "bcast"), (4, 4), (6, 2))}
_ENV_TILE = (int(os.environ.get("PYJAX_WASM_MR", "0")), int(os.environ.get("PYJAX_WASM_NV", "0")))
KC = int(os.environ.get("PYJAX_WASM_KC", "256"))  # K block
KUNROLL = int(os.environ.get("PYJAX_WASM_KU", "2"))  # k steps per inner-loop iteration
# packed B block per form (PYJAX_WASM_PANEL overrides): the "bcast" form repacks its A tile, 4x
# the bytes, for every panel, so it takes wider panels: 1024^2 on the loaded EPYC, 3 rounds of
# processes, CPU ms: 128 KiB 61.0-68.0, 512 KiB 52.9-53.3, 1 MiB 51.8-53.4, 2 MiB 50.6-52.5
PANEL_BYTES = {"madd": 128 * 1024, "bcast": 1024 * 1024}
_ENV_PANEL = int(os.environ.get("PYJAX_WASM_PANEL", "0"))
MIN_WORK = 16384  # smaller products use the generic loop nest


class MatmulPlan:
    __slots__ = (
        "a",
        "b",
        "I",
        "J",
        "K",
        "M",
        "N",
        "Kd",
        "sa",
        "sb",
        "ca",
        "cb",
        "kc",
        "nc",
        "mr",
        "nv",
        "vec_epi",
        "batch_axes",
        "scratch",
        "form",
    )


def _coeffs(cg, load):
    off, valid = cg.load_info[load]
    if not (valid.op == "const" and valid.arg):
        return None
    terms, c = ir._terms(off)
    coef = {}
    for atom, co in terms.items():
        if atom.op != "idx":
            return None
        coef[atom.arg] = co
    return coef, c


def tile_for(engine: str) -> tuple:
    """(MR, NV[, form]) for modules compiled by `engine`; PYJAX_WASM_MR / PYJAX_WASM_NV override
    (PYJAX_WASM_FORM picks the form then)."""
    tile = TILES.get(engine, TILES["cranelift"])
    if not any(_ENV_TILE):
        return tile
    return (_ENV_TILE[0] or tile[0], _ENV_TILE[1] or tile[1], os.environ.get("PYJAX_WASM_FORM", "madd"))


def tunable(engine: str) -> bool:
    """Whether the backend autotunes the tile for `engine` (no PYJAX_WASM_MR/NV override)."""
    return engine in CANDIDATES and not any(_ENV_TILE)


def may_match(kernel) -> bool:
    """A cheap test on the Kernel alone: could `match` take it (a float32 sum of products)?"""
    body = kernel.body
    return (
        kernel.reduce_op == "sum"
        and len(kernel.reduce_axes) == 1
        and math.prod(kernel.shape[-3:]) >= MIN_WORK
        and body is not None
        and body.op == "mul"
        and body.dtype.name == "float32"
    )


def tuning_kernel(n: int) -> Kernel:
    """out = A @ B for n x n float32 A, B, in dot_general's lowering layout (M, N, K)."""
    full = (n, n, n)
    ta = ShapeTracker.contiguous((n, n)).reshape((n, 1, n)).expand(full)
    tb = ShapeTracker.contiguous((n, n)).permute((1, 0)).reshape((1, n, n)).expand(full)
    body = ir.alu("mul", ir.load(0, ta, dtypes.float32), ir.load(1, tb, dtypes.float32))
    return Kernel(full, [dtypes.float32, dtypes.float32], ir.acc(dtypes.float32), "sum", (2,), body, "tune")


def match(cg) -> MatmulPlan | None:
    k = cg.k
    mr, nv = cg.tile[:2]
    if k.reduce_op != "sum" or cg.nr != 1 or cg.nk < 2 or cg.gathers:
        return None
    body = k.body
    if body.dtype.name != "float32" or body.op != "mul":
        return None
    srcs = body.srcs
    if any(s.op != "load" or s.dtype.name != "float32" for s in srcs):
        return None
    n = cg.n
    I, J, K = cg.nk - 2, cg.nk - 1, n - 1
    M, N, Kd = k.shape[I], k.shape[J], k.shape[K]
    if N < 8 or M * N * Kd < MIN_WORK:
        return None
    info = [_coeffs(cg, s) for s in srcs]
    if None in info:
        return None
    for ia, ib in ((0, 1), (1, 0)):
        (ca, _), (cb, _) = info[ia], info[ib]
        if ca.get(J, 0) == 0 and cb.get(I, 0) == 0:
            break
    else:
        return None
    if ca.get(I, 0) < 0 or any(a not in range(n) for a in list(ca) + list(cb)):
        return None
    p = MatmulPlan()
    p.a, p.b = srcs[ia], srcs[ib]
    p.ca, p.cb = info[ia], info[ib]  # (coefficients by axis, constant)
    p.I, p.J, p.K, p.M, p.N, p.Kd = I, J, K, M, N, Kd
    p.mr, p.nv = mr, nv
    p.form = cg.tile[2] if len(cg.tile) > 2 else "madd"
    nr = 4 * nv
    out_f32 = k.out_dtype.name == "float32"
    p.kc = min(Kd, KC) if out_f32 else Kd
    nc = max(nr, ((_ENV_PANEL or PANEL_BYTES[p.form]) // 4 // p.kc) // nr * nr)
    p.nc = min(nc, -(-N // nr) * nr)
    # packed B panel, then the packed A tile (4 floats per element in the "bcast" form)
    p.scratch = p.kc * p.nc * 4 + p.kc * mr * (16 if p.form == "bcast" else 4)
    p.batch_axes = list(range(I))
    # vectorized epilogue when every epilogue node that varies along j has a 4-lane form
    cg.V = J
    epi_nodes = [x for x in cg.order if not _in_body(cg, x)]
    p.vec_epi = k.out_dtype.name in ("float32", "int32", "uint32", "bool") and all(
        cg._vec_node_ok(x) for x in epi_nodes if cg.deps[x] >> J & 1 and x.op not in ("idx",)
    )
    cg.rest = {}
    for x in epi_nodes:
        if x.op == "load" and cg.deps[x] >> J & 1:
            off, valid = cg.load_info[x]
            r = cg._affine(off, valid)
            if r is not None:
                cg.rest[x] = r
                cg._schedule_extra(r[0])
    cg.out_rest = cg._affine(cg.out_off, ir.const(True, dtypes.bool_))
    if cg.out_rest is not None:
        cg._schedule_extra(cg.out_rest[0])
    cg.mode = "M"
    return p


def _in_body(cg, x) -> bool:
    return x in cg.body_nodes


def emit(cg, p: MatmulPlan) -> None:
    f = cg.f
    k = cg.k
    I, J = p.I, p.J
    M, N, Kd = p.M, p.N, p.Kd
    nr = 4 * p.nv
    kc_max, nc = p.kc, p.nc
    (ca, a_const), (cb, b_const) = p.ca, p.cb
    sai, sak = ca.get(I, 0), ca.get(p.K, 0)
    sbj, sbk = cb.get(J, 0), cb.get(p.K, 0)
    a_ptr = cg.p_in[p.a.arg[0]]
    b_ptr = cg.p_in[p.b.arg[0]]
    scratch = cg.p_scratch
    madd = cg.relaxed
    L = f.local
    a_base, b_base, c_base = L(I32), L(I32), L(I32)
    jc, kc, kcur, s, i0, kk, pa, pb, addr, col, row_end, row_start = (L(I32) for _ in range(12))
    ivar, jvar = L(I32), L(I32)
    acc = [[L(V128) for _ in range(p.nv)] for _ in range(p.mr)]
    bvec = [L(V128) for _ in range(p.nv)]
    av = L(V128)
    w_last = N % nr  # width of the last, partial strip (0: none)

    cg._emit_prologue()

    def loop(var, start, end, step, body):
        """for var in [start, end): start is an int constant or ("l", local)."""
        if isinstance(start, tuple):
            f.local_get(start[1])
        else:
            f.i32_const(start)
        f.local_set(var)
        with f.block(), f.loop():
            f.local_get(var)
            end()
            f.i32_ge_s().br_if(1)
            body()
            f.local_get(var).i32_const(step).i32_add().local_set(var)
            f.br(0)

    def batch_body():
        # operand bases for this batch (coefficients of the batch axes and constants)
        for base, ptr, coef, const in ((a_base, a_ptr, ca, a_const), (b_base, b_ptr, cb, b_const)):
            f.i32_const(const)
            for t in p.batch_axes:
                if coef.get(t, 0):
                    f.local_get(cg.env[(ir.idx(t), "s")]).i32_const(coef[t]).i32_mul().i32_add()
            f.i32_const(2).i32_shl().local_get(ptr).i32_add().local_set(base)
        # output: contiguous (batch..., M, N)
        f.i32_const(0)
        stride = M * N
        for t in reversed(p.batch_axes):
            f.local_get(cg.env[(ir.idx(t), "s")]).i32_const(stride).i32_mul().i32_add()
            stride *= k.shape[t]
        f.i32_const(2).i32_shl().local_get(cg.p_out).i32_add().local_set(c_base)
        if I == 0:
            f.local_get(cg.p_lo).local_set(row_start)
            f.local_get(cg.p_hi).local_set(row_end)
        else:
            f.i32_const(0).local_set(row_start)
            f.i32_const(M).local_set(row_end)

        def panel():
            def block():
                # kcur = min(KC, K - kc)
                f.i32_const(kc_max).i32_const(Kd).local_get(kc).i32_sub().local_tee(kcur)
                f.local_get(kcur).i32_const(kc_max).i32_gt_s().select().local_set(kcur)  # min
                pack()
                rows()

            loop(kc, 0, lambda: f.i32_const(Kd), kc_max, block)

        loop(jc, 0, lambda: f.i32_const(N), nc, panel)

    def pack():
        """Scratch strip s, row k, column c <- B[kc + k, jc + s*nr + c] (0 beyond N)."""

        def b_addr(k_local, c_expr):
            # b_base + ((kc + k) * sbk + col * sbj) * 4, col = jc + c
            f.local_get(kc).local_get(k_local).i32_add().i32_const(sbk).i32_mul()
            c_expr()
            f.i32_const(sbj).i32_mul().i32_add().i32_const(2).i32_shl().local_get(b_base).i32_add()

        def dst_addr(k_local, c_expr):
            c_expr()
            f.i32_const(nr).i32_div_u().i32_const(kc_max * nr).i32_mul()
            f.local_get(k_local).i32_const(nr).i32_mul().i32_add()
            c_expr()
            f.i32_const(nr).i32_rem_u().i32_add().i32_const(2).i32_shl().local_get(scratch).i32_add()

        def padded_copy():
            # one element; padding columns (col >= ncur) get 0 and read a clamped address
            dst_addr(kk, lambda: f.local_get(col))
            b_addr(kk, lambda: f.local_get(jc).local_get(col).i32_add())
            f.local_set(addr)
            f.local_get(addr).local_get(b_base).local_get(col).local_get(ncur).i32_lt_s().select()
            f.f32_load(align=2)
            f.f32_const(0.0).local_get(col).local_get(ncur).i32_lt_s().select()
            f.f32_store(align=2)

        def round_up_nr(local):
            # ncur rounded up to whole strips: a division, since nr = 4 * NV need not be a power of
            # two (& -nr padded a 120-column panel of 12-column strips to 128: 8 columns past the
            # panel's scratch, into whatever was allocated next)
            f.local_get(local).i32_const(nr - 1).i32_add().i32_const(nr).i32_div_u().i32_const(nr).i32_mul()

        # columns of this panel that exist: [0, min(nc, N - jc))
        ncur = L(I32)
        f.i32_const(nc).i32_const(N).local_get(jc).i32_sub().local_tee(ncur)
        f.local_get(ncur).i32_const(nc).i32_gt_s().select().local_set(ncur)  # min
        if sbj == 1:
            # rows of B are contiguous: copy 4 columns at a time, zero-pad the partial strip
            def krow():
                def quad():
                    dst_addr(kk, lambda: f.local_get(col))
                    b_addr(kk, lambda: f.local_get(jc).local_get(col).i32_add())
                    f.v128_load(align=2).v128_store(align=2)

                ncur4 = L(I32)
                f.local_get(ncur).i32_const(-4).i32_and().local_set(ncur4)
                loop(col, 0, lambda: f.local_get(ncur4), 4, quad)

                def scalar_col():
                    padded_copy()

                loop(
                    col,
                    ("l", ncur4),
                    lambda: round_up_nr(ncur),
                    1,
                    scalar_col,
                )

            loop(kk, 0, lambda: f.local_get(kcur), 1, krow)
        else:
            # B strided along j (e.g. a transposed operand): walk each column along k
            ncur_pad = L(I32)
            round_up_nr(ncur)
            f.local_set(ncur_pad)

            def column():
                def kstep():
                    padded_copy()

                loop(kk, 0, lambda: f.local_get(kcur), 1, kstep)

            loop(col, 0, lambda: f.local_get(ncur_pad), 1, column)

    a_pack_off = kc_max * nc * 4  # the packed A tile, [k][MR] floats, after the B panel
    bcast = p.form == "bcast"
    aw = 4 if bcast else 1  # floats per packed A element (4: stored broadcast)

    def pack_a(nrows: int):
        """Scratch A tile (k, r) <- A[i0 + r, kc + k]: one contiguous stream for the k loop."""
        rb = [L(I32) for _ in range(nrows)]
        for r in range(nrows):
            f.local_get(i0)
            if r:
                f.i32_const(r).i32_add()
            f.i32_const(sai).i32_mul().local_get(kc).i32_const(sak).i32_mul().i32_add()
            f.i32_const(2).i32_shl().local_get(a_base).i32_add().local_set(rb[r])

        def dst(k_local, r, extra=0):
            f.local_get(k_local).i32_const(4 * aw * p.mr).i32_mul().local_get(scratch).i32_add()
            return a_pack_off + 4 * aw * (r + extra)

        start = 0
        if sak == 1 and nrows == 4 and p.mr == 4 and not bcast:
            # 4 x 4 blocks: four row vectors, transposed with shuffles
            k4 = L(I32)
            f.local_get(kcur).i32_const(-4).i32_and().local_set(k4)
            vs = [L(V128) for _ in range(4)]
            ts = [L(V128) for _ in range(4)]

            def lanes(*ls):
                return [4 * ln + b for ln in ls for b in range(4)]

            def block():
                for r in range(4):
                    f.local_get(rb[r]).local_get(kk).i32_const(2).i32_shl().i32_add().v128_load(align=2)
                    f.local_set(vs[r])
                for t_, (x, y, sel) in zip(
                    ts, ((0, 1, (0, 4, 1, 5)), (0, 1, (2, 6, 3, 7)), (2, 3, (0, 4, 1, 5)), (2, 3, (2, 6, 3, 7)))
                ):
                    f.local_get(vs[x]).local_get(vs[y]).i8x16_shuffle(lanes(*sel)).local_set(t_)
                for j, (x, y, sel) in enumerate(
                    ((0, 2, (0, 1, 4, 5)), (0, 2, (2, 3, 6, 7)), (1, 3, (0, 1, 4, 5)), (1, 3, (2, 3, 6, 7)))
                ):
                    off = dst(kk, 0, 4 * j)
                    f.local_get(ts[x]).local_get(ts[y]).i8x16_shuffle(lanes(*sel)).v128_store(offset=off, align=2)

            loop(kk, 0, lambda: f.local_get(k4), 4, block)
            start = ("l", kk)

        def scalar_k():
            for r in range(nrows):
                off = dst(kk, r)
                f.local_get(rb[r]).local_get(kk).i32_const(4 * sak).i32_mul().i32_add().f32_load(align=2)
                if bcast:
                    f.f32x4_splat().v128_store(offset=off, align=2)
                else:
                    f.f32_store(offset=off, align=2)

        loop(kk, start, lambda: f.local_get(kcur), 1, scalar_k)

    def rows():
        def tile_rows(nrows):
            def strips():
                pack_a(nrows)
                n_strips_here = L(I32)
                # full strips in this panel: min(nc, N - jc) // nr
                f.i32_const(nc).i32_const(N).local_get(jc).i32_sub().local_tee(n_strips_here)
                f.local_get(n_strips_here).i32_const(nc).i32_gt_s().select()  # min
                f.i32_const(nr).i32_div_u().local_set(n_strips_here)
                loop(s, 0, lambda: f.local_get(n_strips_here), 1, lambda: tile(nrows, nr))
                if w_last:
                    # the partial strip is the last one of the last panel
                    f.local_get(jc).i32_const(nc).i32_add().i32_const(N).i32_ge_s()
                    with f.if_():
                        f.local_get(n_strips_here).local_set(s)
                        tile(nrows, w_last)

            return strips

        # full tiles while i0 + MR <= row_end, then single rows
        lim = L(I32)
        f.local_get(row_end).i32_const(p.mr - 1).i32_sub().local_set(lim)
        loop(i0, ("l", row_start), lambda: f.local_get(lim), p.mr, tile_rows(p.mr))
        loop(i0, ("l", i0), lambda: f.local_get(row_end), 1, tile_rows(1))

    def tile(nrows: int, width: int):
        nvec = -(-width // 4)
        # the accumulator vectors: (row, vector, live lanes) -- the last vector of a row may be partial
        vecs = [(r, v, min(4, width - 4 * v)) for r in range(nrows) for v in range(nvec)]
        # j0 = jc + s * nr
        j0 = L(I32)
        f.local_get(jc).local_get(s).i32_const(nr).i32_mul().i32_add().local_set(j0)
        first = L(I32)
        f.local_get(kc).i32_eqz().local_set(first)

        def c_addr(r, v):
            # c_base + ((i0 + r) * N + j0 + 4v) * 4
            f.local_get(i0)
            if r:
                f.i32_const(r).i32_add()
            f.i32_const(N).i32_mul().local_get(j0).i32_add()
            if v:
                f.i32_const(4 * v).i32_add()
            f.i32_const(2).i32_shl().local_get(c_base).i32_add()

        # init: zeros on the first K block, else the partial sums stored in C
        f.local_get(first)
        with f.if_():
            for r, v, _ in vecs:
                f.v128_const(bytes(16)).local_set(acc[r][v])
            f.else_()
            for r, v, lanes in vecs:
                if lanes == 4:
                    c_addr(r, v)
                    f.v128_load(align=2).local_set(acc[r][v])
                else:
                    f.v128_const(bytes(16)).local_set(acc[r][v])
                    for ln in range(lanes):
                        f.local_get(acc[r][v])
                        c_addr(r, v)
                        f.f32_load(offset=4 * ln, align=2).f32x4_replace_lane(ln).local_set(acc[r][v])
        # pointers: the packed A tile, the packed strip s
        f.local_get(scratch).i32_const(a_pack_off).i32_add().local_set(pa)
        f.local_get(s).i32_const(kc_max * nr * 4).i32_mul().local_get(scratch).i32_add().local_set(pb)

        def step(u: int):
            """One k step; u-th of an unrolled group (memarg offsets past the pointers)."""
            for v in range(nvec):
                f.local_get(pb).v128_load(offset=16 * v + 4 * nr * u, align=2).local_set(bvec[v])
            for r in range(nrows):
                if bcast:
                    f.local_get(pa).v128_load(offset=16 * (r + u * p.mr), align=2).local_set(av)
                else:
                    # f32.load + splat: x64 broadcasts from a vector register (v128.load32_splat went
                    # through a general register: one more instruction per row, 2-4% of a 1024^2 product)
                    f.local_get(pa).f32_load(offset=4 * (r + u * p.mr), align=2).f32x4_splat().local_set(av)
                for v in range(nvec):
                    if madd and not bcast:
                        f.local_get(av).local_get(bvec[v]).local_get(acc[r][v]).f32x4_relaxed_madd()
                    else:
                        f.local_get(acc[r][v]).local_get(av).local_get(bvec[v]).f32x4_mul().f32x4_add()
                    f.local_set(acc[r][v])

        def advance(steps: int):
            f.local_get(pa).i32_const(4 * aw * p.mr * steps).i32_add().local_set(pa)
            f.local_get(pb).i32_const(4 * nr * steps).i32_add().local_set(pb)

        unroll = 1 if bcast else KUNROLL
        if unroll > 1:
            klim = L(I32)
            f.local_get(kcur).i32_const(unroll - 1).i32_sub().local_set(klim)

            def ksteps():
                for u in range(unroll):
                    step(u)
                advance(unroll)

            loop(kk, 0, lambda: f.local_get(klim), unroll, ksteps)
            loop(kk, ("l", kk), lambda: f.local_get(kcur), 1, lambda: (step(0), advance(1)))
        else:
            loop(kk, 0, lambda: f.local_get(kcur), 1, lambda: (step(0), advance(1)))
        # last K block: epilogue + store; otherwise keep the partial sums in C
        f.local_get(kc).local_get(kcur).i32_add().i32_const(Kd).i32_ge_s()
        with f.if_():
            for r, v, lanes in vecs:
                epilogue(r, v, j0, acc[r][v], lanes)
            f.else_()
            for r, v, lanes in vecs:
                if lanes == 4:
                    c_addr(r, v)
                    f.local_get(acc[r][v]).v128_store(align=2)
                else:
                    for ln in range(lanes):
                        c_addr(r, v)
                        f.local_get(acc[r][v]).f32x4_extract_lane(ln).f32_store(offset=4 * ln, align=2)

    def epilogue(r, v, j0, acc_local, lanes):
        saved_env, saved_vec = dict(cg.env), cg.vec
        f.local_get(i0)
        if r:
            f.i32_const(r).i32_add()
        f.local_set(ivar)
        f.local_get(j0)
        if v:
            f.i32_const(4 * v).i32_add()
        f.local_set(jvar)
        cg.env[(ir.idx(I), "s")] = ivar
        acc_node = ir.acc(k.body.dtype)
        if lanes == 4 and p.vec_epi:
            cg.env[(ir.idx(J), "s")] = jvar
            cg.env[(acc_node, "v")] = acc_local
            cg.vec = True
            cg._store_vector(cg.vget(k.epilogue), k.out_dtype)
        else:
            cg.vec = False
            lane_j = L(I32)
            for ln in range(lanes):
                env = dict(cg.env)
                f.local_get(jvar).i32_const(ln).i32_add().local_set(lane_j)
                a_lane = f.local(F32)
                f.local_get(acc_local).f32x4_extract_lane(ln).local_set(a_lane)
                cg.env[(ir.idx(J), "s")] = lane_j
                cg.env[(acc_node, "s")] = a_lane
                cg._store(cg.get(k.epilogue), k.out_dtype)
                cg.env = env
        cg.env, cg.vec = saved_env, saved_vec

    # batch loops (axis 0 takes the lo/hi range), then the body
    def batches(t):
        if t == len(p.batch_axes):
            batch_body()
            return
        cg._loop(p.batch_axes[t], 1, lambda: batches(t + 1))

    batches(0)
