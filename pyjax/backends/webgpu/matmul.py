"""Matmul-shaped reductions -> tiled WGSL: shared-memory tiles and an unrolled register tile.

Recognized: a `sum` Kernel over one trailing axis K whose body is `mul(a, b)` in f32, where a
does not depend on the last kept axis (N) and b does not depend on the one before it (M); axes
before M are batch axes. a and b are arbitrary fused expressions (prologues: casts from f16,
scaling, masks, transposes), evaluated while filling the shared-memory tiles; the epilogue
(bias, activation, cast) is applied to each accumulator before the store.

The register tile is TM x TN scalar locals `c{i}_{j}`, fully unrolled, and the tiles are read
from workgroup memory as vec4: WGSL arrays indexed in loops are spilled to slow memory by the
shader compilers (0.7 vs 15.5 TFLOP/s measured on an H200; shared/notes/gpu.md). The next
K-slice is prefetched into registers while the current one is multiplied (and, where the
adapter grants the workgroup memory and the config asks for it, stored into a second tile
buffer so one barrier per step suffices). Each thread's rows and columns are spread in groups of
4 (stride TY*4 / TX*4), so a warp's vec4 tile reads and output stores are contiguous. Tile
sizes depend on the problem size and stay within the WebGPU default limits (256 invocations,
16 KiB) unless the adapter grants more. CPU adapters (SwiftShader) get `_direct`: no workgroup
memory, no barriers (which they emulate slowly), 8 x 8 register tiles read from the buffers.
"""

from __future__ import annotations

import math
import os

from pyjax.backends.webgpu import wgsl
from pyjax.backends.webgpu.gpu_kernel import GPUKernel, Launch, _Bindings, _finish, _used_inputs
from pyjax.backends.webgpu.wgsl import Emitter, Scope
from pyjax.compiler import ir
from pyjax.core import dtypes

# (TX, TY, TM, TN, BK, DB): threads per workgroup TX*TY, register tile TM x TN, K step BK, two
# shared-memory buffers (1), one (0) or two when they fit (-1). Measured on an H200 (wgpu over
# Vulkan, 2026-12-02): 128x128 blocks with one buffer ran 4096^3 at 34 TFLOP/s, the same with two
# buffers at 30 (more registers, dynamic offsets), so one buffer is the default; 1024^3 needs
# smaller blocks to fill 132 SMs (64x128: 25 TFLOP/s, 128x128: 17).
CONFIGS = {
    "large": (16, 16, 8, 8, 16, 0),  # 128 x 128 blocks
    "medium": (16, 16, 4, 8, 16, 0),  # 64 x 128
    "small": (16, 16, 4, 4, 16, 0),  # 64 x 64
    "tiny": (8, 8, 4, 4, 16, 0),  # 32 x 32
    "cpu": (8, 8, 8, 8, 16, 0),  # 64 x 64 blocks for _direct on small problems (CPU adapters)
}


def _pick(M: int, N: int, batch: int, caps) -> tuple:
    forced = os.environ.get("PYJAX_WEBGPU_MATMUL_CONFIG")  # "TX,TY,TM,TN,BK[,DB]" (for tuning)
    if forced:
        cfg = tuple(int(v) for v in forced.split(","))
        return cfg if len(cfg) == 6 else cfg[:5] + (-1,)
    work = M * N * batch
    if caps.cpu_adapter:  # a few cores: fewer, bigger register tiles (less index arithmetic)
        return CONFIGS["large" if work >= (1 << 20) else "cpu"]
    if caps.max_invocations < 256:
        name = "tiny"
    elif work >= (1 << 22) and M >= 128 and N >= 128:  # >= 256 blocks of 128 x 128
        name = "large"
    elif work >= (1 << 19) and M >= 64 and N >= 128:
        name = "medium"
    elif work >= (1 << 16) and M >= 64 and N >= 64:
        name = "small"
    else:
        name = "tiny"
    return CONFIGS[name]


def _k_fastest(expr: ir.Node, k_axis: int, other_axis: int) -> bool:
    """Does the first load of expr walk memory contiguously along K (else along M/N)?"""
    for n in ir.walk(expr):
        if n.op == "load":
            tr = n.arg[1]
            if len(tr.views) == 1:
                st = tr.views[0].strides
                if k_axis < len(st) and abs(st[k_axis]) == 1:
                    return True
                if other_axis < len(st) and abs(st[other_axis]) == 1:
                    return False
    return True


def try_matmul(k, caps):
    """A GPUKernel for a matmul-shaped Kernel, or None when k is not one."""
    if k.reduce_op != "sum" or len(k.reduce_axes) != 1 or k.body.dtype is not dtypes.float32:
        return None
    nd = len(k.shape)
    nk = nd - 1
    if nk < 2 or k.body.op != "mul":
        return None
    ma, na, ka = nk - 2, nk - 1, nk
    a, b = k.body.srcs
    probe = Emitter({})
    da, db = probe.deps(a), probe.deps(b)
    if na in da or ma in db:
        a, b, da, db = b, a, db, da
    if na in da or ma in db or "acc" in da or "acc" in db:
        return None
    M, N, K = k.shape[ma], k.shape[na], k.shape[ka]
    batch_shape = k.shape[:ma]
    batch = math.prod(batch_shape)
    od = k.out_dtype
    P = wgsl.per_word(od)
    if M < 16 or N < 16 or K < 8 or P > 2 or (P == 2 and N % 2) or batch > caps.max_wg_per_dim:
        return None
    TX, TY, TM, TN, BK, DB = _pick(M, N, batch, caps)
    if TM % 4 or TN % 4:
        return None
    BM, BN = TY * TM, TX * TN
    NT = TX * TY
    # Rows of the tiles are padded by 4 floats (fewer bank conflicts) when that still fits.
    pad = 4 if 4 * BK * (BM + BN + 8) <= caps.max_shared else 0
    if not pad and 4 * BK * (BM + BN) > caps.max_shared and BK > 8:
        BK //= 2
    BMp, BNp = BM + pad, BN + pad
    if 4 * BK * (BMp + BNp) > caps.max_shared or NT > caps.max_invocations:
        return None
    # Two shared-memory buffers (one barrier per K step) when the adapter grants the room.
    if DB < 0:
        DB = int(2 * 4 * BK * (BMp + BNp) <= caps.max_shared)
    elif DB and 2 * 4 * BK * (BMp + BNp) > caps.max_shared:
        DB = 0
    if (BM * BK) % NT or (BN * BK) % NT:
        return None
    if -(-N // BN) > caps.max_wg_per_dim or -(-M // BM) > caps.max_wg_per_dim:
        return None
    full_m, full_n, full_k = M % BM == 0, N % BN == 0, K % BK == 0
    vec_out = P == 1 and full_n and full_m and TN % 4 == 0 and N % 4 == 0
    out_ty = wgsl.storage_type(od)
    used = _used_inputs([a, b, k.epilogue])
    bind = _Bindings(k, caps, used, [("out", f"vec4<{out_ty}>" if vec_out else out_ty, True, ("out", 0))])
    em = Emitter(bind.inputs)
    em.exact_ops = True
    lines: list = []
    bidx = wgsl.decompose("bz", batch_shape, "z", lines) if batch_shape else {}
    block = Scope(None, bidx)
    # Epilogue per accumulator.
    stores: list = []
    vals = {}
    for i in range(TM):
        for j in range(TN):
            s = Scope(block, {ma: f"m{i}", na: f"n{j}"}, acc=f"c{i}_{j}")
            with ir.shape_context(k.out_shape[:nk]):
                v = em.expr(k.epilogue, s)
            stores += s.lines
            vals[i, j] = v
    out_base = f"bz * {M * N}i"
    for i in range(TM):
        row = f"({out_base} + m{i} * {N}i)"
        if vec_out:
            for q in range(TN // 4):
                vs = ", ".join(vals[i, 4 * q + t] for t in range(4))
                stores.append(f"out[({row} + n{4 * q}) >> 2u] = vec4<{out_ty}>({vs});")
        elif P == 2:
            em.helpers |= wgsl.helpers_for_dtype(od)
            for j in range(0, TN, 2):
                w = f"{wgsl.to_bits(vals[i, j], od)} | ({wgsl.to_bits(vals[i, j + 1], od)} << 16u)"
                cond = [] if full_m else [f"m{i} < {M}i"]
                cond += [] if full_n else [f"n{j} < {N}i"]
                st = f"out[({row} + n{j}) >> 1u] = {w};"
                stores.append(f"if ({' && '.join(cond)}) {{ {st} }}" if cond else st)
        else:
            for j in range(TN):
                cond = [] if full_m else [f"m{i} < {M}i"]
                cond += [] if full_n else [f"n{j} < {N}i"]
                st = f"out[{row} + n{j}] = {vals[i, j]};"
                stores.append(f"if ({' && '.join(cond)}) {{ {st} }}" if cond else st)
    if caps.cpu_adapter:
        return _direct(k, bind, em, block, lines, stores, a, b, (ma, na, ka), (M, N, K), (TX, TY, TM, TN), batch)
    per_a, per_b = BM * BK // NT, BN * BK // NT
    a_kfast = _k_fastest(a, ka, ma)
    b_kfast = _k_fastest(b, ka, na)

    def tile_loads(kbase: str, tag: str) -> list:
        """Lines that load the A and B slices starting at K index kbase into registers."""
        out: list = []
        for side, expr, per, kfast, B, axis, full_mn, extent in (
            ("a", a, per_a, a_kfast, BM, ma, full_m, M),
            ("b", b, per_b, b_kfast, BN, na, full_n, N),
        ):
            origin = "row0" if side == "a" else "col0"
            for q in range(per):
                e = f"(tid + {q * NT}i)"
                if kfast:
                    r, kk = f"({e} / {BK}i)", f"({e} % {BK}i)"
                else:
                    kk, r = f"({e} / {B}i)", f"({e} % {B}i)"
                mi, ki = f"{side}m{tag}{q}", f"{side}k{tag}{q}"
                out.append(f"let {mi} = {origin} + {r};")
                out.append(f"let {ki} = {kbase} + {kk};")
                s = Scope(block, {axis: mi, ka: ki})
                with ir.shape_context(k.shape):
                    v = em.expr(expr, s)
                out += s.lines
                conds = ([] if full_mn else [f"{mi} < {extent}i"]) + ([] if full_k else [f"{ki} < {K}i"])
                if conds:
                    v = f"select(0.0f, {v}, {' && '.join(conds)})"
                out.append(f"p{side}{q} = {v};")
        return out

    SA, SB = BK * BMp, BK * BNp  # floats per shared buffer

    def tile_stores(off_a: str, off_b: str) -> list:
        """Lines that store the prefetched registers into the tiles at float offsets off_a/off_b."""
        out = []
        for side, per, kfast, B, Bp, off in (
            ("a", per_a, a_kfast, BM, BMp, off_a),
            ("b", per_b, b_kfast, BN, BNp, off_b),
        ):
            arr = "As" if side == "a" else "Bs"
            for q in range(per):
                e = q * NT
                if kfast:
                    pos = f"((tid + {e}i) % {BK}i) * {Bp}i + (tid + {e}i) / {BK}i"
                else:
                    pos = f"((tid + {e}i) / {B}i) * {Bp}i + (tid + {e}i) % {B}i"
                out.append(f"{{ let s = {off}{pos}; {arr}[s >> 2u][s & 3] = p{side}{q}; }}")
        return out

    # Thread (tx, ty) owns rows ty*4 + (i%4) + (i//4)*TY*4 and columns tx*4 + (j%4) + (j//4)*TX*4
    # of the block: each vec4 read of a tile row is contiguous across a warp (no bank
    # conflicts), and so is each vec4 store of the output.
    comp = "xyzw"
    compute: list = []
    for kk in range(BK):
        for q in range(TM // 4):
            compute.append(f"let a{kk}_{q} = As[oa + {kk * BMp // 4 + q * TY}i + ty];")
        for q in range(TN // 4):
            compute.append(f"let b{kk}_{q} = Bs[ob + {kk * BNp // 4 + q * TX}i + tx];")
        for i in range(TM):
            for j in range(TN):
                compute.append(f"c{i}_{j} = fma(a{kk}_{i // 4}.{comp[i % 4]}, b{kk}_{j // 4}.{comp[j % 4]}, c{i}_{j});")
    first = tile_loads("0i", "f")
    nxt = tile_loads("(k0 + " + str(BK) + "i)", "n")
    nbuf = 2 if DB else 1
    shared = (
        f"var<workgroup> As: array<vec4<f32>, {nbuf * SA // 4}>;\n"
        f"var<workgroup> Bs: array<vec4<f32>, {nbuf * SB // 4}>;\n"
    )
    ind = "  "
    body = [
        f"@compute @workgroup_size({TX}, {TY})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lv: vec3<u32>) {",
        f"{ind}let tx = i32(lv.x);",
        f"{ind}let ty = i32(lv.y);",
        f"{ind}let tid = ty * {TX}i + tx;",
        f"{ind}let row0 = i32(wid.y) * {BM}i;",
        f"{ind}let col0 = i32(wid.x) * {BN}i;",
        f"{ind}let bz = i32(wid.z);",
        ind + wgsl.runtime_zero("out"),
    ]
    body += [ind + x for x in lines]
    body += [ind + x for x in block.lines]
    body += [f"{ind}var c{i}_{j} = 0.0f;" for i in range(TM) for j in range(TN)]
    body += [f"{ind}var pa{q}: f32;" for q in range(per_a)] + [f"{ind}var pb{q}: f32;" for q in range(per_b)]
    body += [ind + x for x in first]
    i2, i3 = ind * 2, ind * 3
    if DB:
        # Buffer `ph` is read while the next K slice goes into the other one: one barrier a step.
        body += [ind + x for x in tile_stores("", "")]
        body.append(f"{ind}workgroupBarrier();")
        body.append(f"{ind}var ph = 0i;")
        body.append(f"{ind}for (var k0 = 0i; k0 < {K}i; k0 = k0 + {BK}i) {{")
        body.append(f"{i2}let oa = ph * {SA // 4}i;")
        body.append(f"{i2}let ob = ph * {SB // 4}i;")
        body.append(f"{i2}let more = k0 + {BK}i < {K}i;")
        body.append(f"{i2}if (more) {{")
        body += [i3 + x for x in nxt]
        body.append(f"{i2}}}")
        body += [i2 + x for x in compute]
        body.append(f"{i2}if (more) {{")
        body += [i3 + x for x in tile_stores(f"(1i - ph) * {SA}i + ", f"(1i - ph) * {SB}i + ")]
        body.append(f"{i2}}}")
        body.append(f"{i2}workgroupBarrier();")
        body.append(f"{i2}ph = 1i - ph;")
        body.append(f"{ind}}}")
    else:
        body.append(f"{ind}for (var k0 = 0i; k0 < {K}i; k0 = k0 + {BK}i) {{")
        body += [i2 + x for x in tile_stores("", "")]
        body.append(f"{i2}workgroupBarrier();")
        body.append(f"{i2}if (k0 + {BK}i < {K}i) {{")
        body += [i3 + x for x in nxt]
        body.append(f"{i2}}}")
        body.append(f"{i2}let oa = 0i;")
        body.append(f"{i2}let ob = 0i;")
        body += [i2 + x for x in compute]
        body.append(f"{i2}workgroupBarrier();")
        body.append(f"{ind}}}")
    body += [f"{ind}let m{i} = row0 + ty * 4i + {(i // 4) * TY * 4 + i % 4}i;" for i in range(TM)]
    body += [f"{ind}let n{j} = col0 + tx * 4i + {(j // 4) * TX * 4 + j % 4}i;" for j in range(TN)]
    body += [ind + x for x in stores]
    body.append("}")
    text = _finish(em, bind.header(), "\n".join(body) + "\n", shared)
    grid = (-(-N // BN), -(-M // BM), batch)
    return GPUKernel(k, [Launch(text, bind.roles, grid, None, bind.merged)])


def _direct(k, bind, em, block, lines, stores, a, b, axes, dims, tiles, batch) -> GPUKernel:
    """Matmul without workgroup memory or barriers, for CPU adapters: each thread reads its
    operands straight from the buffers (their caches do what shared tiles do on a GPU)."""
    ma, na, ka = axes
    M, N, K = dims
    TX, TY, TM, TN = tiles
    outer: list = []
    inner: list = []
    for side, expr, axis, n, extent in (("a", a, ma, TM, M), ("b", b, na, TN, N)):
        for q in range(n):
            name = f"m{q}" if side == "a" else f"n{q}"
            row = Scope(block, {axis: name})
            s = Scope(row, {ka: "kk"})
            with ir.shape_context(k.shape):
                v = em.expr(expr, s)
            outer += row.lines
            inner += s.lines
            # rows/columns past the edge count as 0 (their results are never stored)
            inner.append(f"let {side}{q} = select(0.0f, {v}, {name} < {extent}i);")
    # hoisted batch-only values land in block.lines while the operands are emitted
    ind, i2 = "  ", "    "
    body = [
        f"@compute @workgroup_size({TX}, {TY})",
        "fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lv: vec3<u32>) {",
        f"{ind}let tx = i32(lv.x);",
        f"{ind}let ty = i32(lv.y);",
        f"{ind}let row0 = i32(wid.y) * {TY * TM}i;",
        f"{ind}let col0 = i32(wid.x) * {TX * TN}i;",
        f"{ind}let bz = i32(wid.z);",
        ind + wgsl.runtime_zero("out"),
    ]
    body += [ind + x for x in lines] + [ind + x for x in block.lines]
    body += [f"{ind}let m{i} = row0 + ty * 4i + {(i // 4) * TY * 4 + i % 4}i;" for i in range(TM)]
    body += [f"{ind}let n{j} = col0 + tx * 4i + {(j // 4) * TX * 4 + j % 4}i;" for j in range(TN)]
    body += [f"{ind}var c{i}_{j} = 0.0f;" for i in range(TM) for j in range(TN)]
    body += [ind + x for x in outer]
    body.append(f"{ind}for (var kk = 0i; kk < {K}i; kk = kk + 1i) {{")
    body += [i2 + x for x in inner]
    body += [f"{i2}c{i}_{j} = fma(a{i}, b{j}, c{i}_{j});" for i in range(TM) for j in range(TN)]
    body.append(f"{ind}}}")
    body += [ind + x for x in stores]
    body.append("}")
    text = _finish(em, bind.header(), "\n".join(body) + "\n")
    grid = (-(-N // (TX * TN)), -(-M // (TY * TM)), batch)
    return GPUKernel(k, [Launch(text, bind.roles, grid, None, bind.merged)])
