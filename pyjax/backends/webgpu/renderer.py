"""IR Kernel -> WGSL compute shaders (a small C-like renderer over `wgsl.Emitter`).

A Kernel becomes a `GPUKernel`: one or more launches (WGSL text, buffer roles, workgroup count)
plus the temporary buffers they need. Strategies:

- elementwise: each thread computes a group of 4 consecutive outputs (or the 2/4 elements of
  one packed output word); loads that are contiguous along the last axis become one vec4 load,
  and 32-bit outputs are stored as vec4. Workgroup counts past 65535 use a 2-D grid.
- reduction, serial: one thread per output loops over the reduced elements (coalesced when
  neighbouring outputs are neighbours in memory, e.g. column sums).
- reduction, cooperative: T threads per output stride over the reduced elements and combine
  in workgroup memory (rows whose reduced axis is contiguous, or few outputs).
- reduction, split: few outputs over very many elements run in two launches (partials, then
  the combine and the epilogue), so a full reduction of 2^26 elements still fills the GPU.
  Strided (column) reductions split their rows the same way, partials laid out so reads stay
  coalesced; flat full reductions of n % 4 == 0 elements use vec4 loads (`_full_reduce_vec`).
- matmul: `sum_k a*b` with a independent of the column axis and b of the row axis goes to
  `matmul.py` (shared-memory tiles, unrolled register tile).

Inputs beyond the device's storage-buffer limit are merged into one buffer at dispatch time
(bases in a uniform), so any fused kernel runs within the WebGPU default of 8 bindings.
"""

from __future__ import annotations

import math
import os
import struct

from pyjax.backends.webgpu import wgsl
from pyjax.backends.webgpu.gpu_kernel import SIZES_FIELD, Caps, GPUKernel, Launch, _Bindings, _finish, _used_inputs
from pyjax.backends.webgpu.wgsl import ENTRY, LINEAR_WG, Emitter, Scope, ctype, decompose, lit
from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel
from pyjax.compiler.mathlib import EXACT_ARITHMETIC, expand_kernel
from pyjax.compiler.views import ShapeTracker, View
from pyjax.core import dtypes

DEBUG = os.environ.get("PYJAX_DEBUG", "") not in ("", "0")


def _pow2_floor(n: int) -> int:
    return 1 << (max(n, 1).bit_length() - 1)


# ---- one pipeline for many shapes ---------------------------------------------------------------
#
# A kernel whose loads all walk memory in order (or read one broadcast element) depends on its
# shape only through its element counts. Such kernels are flattened (elementwise: one axis;
# reductions of trailing axes: outputs x reduced length) and their sizes go to a uniform (`u.n`),
# so the WGSL text, and with it the pipeline, is shared by every shape (issue 15, item 4):
# 300 lengths of `sin(x) * 2 + x.sum()` compiled 600 pipelines, now 10; row sums of 100 shapes
# 100, now 3.


def _flat_tracker(tr: ShapeTracker, shapes: tuple, n: int) -> ShapeTracker | None:
    """The 1-axis tracker of n elements reading what tr reads over one of shapes, if it is that
    simple."""
    if len(tr.views) != 1 or tr.shape not in shapes:
        return None
    v = tr.views[0]
    if v.contiguous:
        return ShapeTracker.contiguous((n,))
    if v.mask is None and not any(v.strides):
        return ShapeTracker((View((n,), (0,), v.offset),))
    return None


def _flatten(k: Kernel) -> Kernel | None:
    """k with flat loads, or None where that changes it. Elementwise: over one axis. Reductions
    of trailing axes: shape (outputs, reduced length) whose body loads are flat over all
    elements (idx 0 is o * rn + r there) and whose epilogue loads are flat over the outputs."""
    red = k.reduce_op is not None
    nd = len(k.shape)
    nk = nd - len(k.reduce_axes)
    if red and (k.reduce_axes != tuple(range(nk, nd)) or k.epilogue is None or k.body is None):
        return None
    n = math.prod(k.shape)
    memo: dict = {}

    def flat(x: ir.Node, shapes: tuple, m: int):
        # Failures are memoized too: a shared subexpression that cannot be flattened (threefry's
        # idx-heavy DAGs) would otherwise be revisited once per path to it, exponentially.
        if (x, shapes) in memo:
            return memo[(x, shapes)]
        if x.op in ("idx", "gather"):
            r = None
        elif x.op == "load":
            tr = _flat_tracker(x.arg[1], shapes, m)
            r = None if tr is None else ir.load(x.arg[0], tr, x.dtype)
        else:
            srcs = []
            for s in x.srcs:
                srcs.append(flat(s, shapes, m))
                if srcs[-1] is None:
                    break
            r = None if None in srcs else ir.node(x.op, x.dtype, tuple(srcs), x.arg)
        memo[(x, shapes)] = r
        return r

    if red:
        n_out = math.prod(k.shape[:nk])
        body = flat(k.body, (k.shape,), n)
        epi = flat(k.epilogue, (k.out_shape, k.shape[:nk]), n_out)  # epilogues read either
        if body is None or epi is None:
            return None
        return Kernel((n_out, n // n_out), k.in_dtypes, epi, k.reduce_op, (1,), body, name=k.name)
    epi = flat(k.epilogue, (k.shape,), n)
    return None if epi is None else Kernel((n,), k.in_dtypes, epi, name=k.name)


def _sizes(*vals: int) -> bytes:
    """The `u.n` uniform (vec4<u32>) after any merged-input bases."""
    return struct.pack("<4I", *(list(vals) + [0] * (4 - len(vals))))


# Kernels this large keep their sizes as literals: the uniform cost add f32 2^26 about 4% on
# the H200 (3,486 -> 3,341 GB/s), and few distinct shapes are this large.
_LITERAL_SIZES_FROM = 1 << 20


# ---- elementwise ---------------------------------------------------------------------------------


def _vec_load_ok(n: ir.Node, shape: tuple) -> bool:
    _, tr = n.arg
    if len(tr.views) != 1 or tr.shape != shape or n.dtype.itemsize != 4:
        return False
    v = tr.views[0]
    if v.mask is not None or v.offset % 4:
        return False
    if v.strides[-1] != 1:
        return False
    return all(st % 4 == 0 for st in v.strides[:-1])


def _elementwise(k: Kernel, caps: Caps, generic: bool = False) -> GPUKernel:
    """generic: k is flat (see `_flatten`) and reads its group count from `u.n.x`."""
    shape = k.shape
    n_out = math.prod(shape)
    d = k.out_dtype
    P = wgsl.per_word(d)
    # Small kernels: one output (or packed word) per thread keeps the WGSL short, which matters
    # more than vector width there (pipeline creation costs more than the dispatch).
    big = n_out >= 16384
    G = 4 if (big and n_out % 4 == 0) or P == 4 else (P if P > 1 else 1)
    nd = len(shape)
    vec = P == 1 and G == 4 and nd > 0 and shape[-1] % 4 == 0
    loads = [n for n in ir.walk(k.epilogue) if n.op == "load"]
    vec_loads = [n for n in loads if vec and _vec_load_ok(n, shape)] if vec else []
    used = _used_inputs([k.epilogue])
    out_ty = wgsl.storage_type(d)
    out_decl = ("out", f"vec4<{out_ty}>" if vec else out_ty, True, ("out", 0))
    wg = caps.wg
    groups = -(-n_out // G)
    n_groups = "u.n.x" if generic else f"{groups}u"
    n_wg = -(-groups // wg)

    def build(flags: bool) -> tuple:
        """(WGSL, bindings); flags: cold wheres render their false side only, and an element
        that needs one writes this dispatch's workgroup counts to `tv` (else an `if` each)."""
        extra = [out_decl] + ([("tv", "u32", True, ("tmp", 0))] if flags else [])
        b = _Bindings(k, caps, used, extra, {n.arg[0] for n in vec_loads}, sizes=generic)
        em = Emitter(b.inputs)
        em.exact_ops = True
        if flags:
            em.cold_flags = []
        inst_of: dict = {}
        for n in vec_loads:
            inp = b.inputs[n.arg[0]]
            if inp.vec4:
                inp.vec_loads[n] = lambda scope: (0, inst_of[id(scope)])
        thread = Scope()
        base_lines: list = []
        insts = []
        same_row = nd == 0 or shape[-1] % G == 0
        if same_row and nd:
            base = decompose("f0", shape, "b", base_lines)
        for j in range(G):
            if nd == 0:
                idx = {}
            elif same_row:
                idx = dict(base)
                if j:
                    name = f"l{j}"
                    base_lines.append(f"let {name} = {base[nd - 1]} + {j}i;")
                    idx[nd - 1] = name
            else:
                idx = decompose(f"(f0 + {j}i)", shape, f"j{j}_", base_lines)
            s = Scope(thread, idx)
            inst_of[id(s)] = j
            insts.append(s)
        with ir.shape_context(shape):
            vals = [em.expr(k.epilogue, s) for s in insts]
        stores = []
        if P > 1:
            em.helpers |= wgsl.helpers_for_dtype(d)
            bw = wgsl.bits(d)
            for w in range(G // P):
                parts = []
                for p in range(P):
                    bits_ = wgsl.to_bits(vals[w * P + p], d)
                    parts.append(bits_ if p == 0 else f"({bits_} << {p * bw}u)")
                stores.append(f"out[g * {G // P}u + {w}u] = {' | '.join(parts)};")
        elif vec:
            stores.append(f"out[g] = vec4<{out_ty}>({', '.join(vals)});")
        else:
            for j in range(G):
                stores.append(f"out[f0 + {j}i] = {vals[j]};")
        if flags and em.cold_flags:
            stores.append(f"if ({' || '.join(em.cold_flags)}) {{ tv[0] = nwg.x; tv[1] = nwg.y; tv[2] = nwg.z; }}")
        body = (
            f"@compute @workgroup_size({wg})\nfn main({ENTRY}) {{\n  {LINEAR_WG}\n"
            f"  let g = wgl * {wg}u + lid;\n  if (g >= {n_groups}) {{ return; }}\n  let f0 = i32(g) * {G}i;\n"
            f"  {wgsl.runtime_zero('out')}\n"
            + thread.code()
            + "".join(f"  {x}\n" for x in base_lines)
            + "".join(s.code() for s in insts)
            + "".join(f"  {x}\n" for x in stores)
            + "}\n"
        )
        return _finish(em, b.header(), body), b

    text, b = build(False)
    sizes = _sizes(groups) if generic else None
    full = Launch(text, b.roles, n_wg, sizes, b.merged)
    if caps.cpu_adapter and big and any(n.op == "where" and n.arg == "cold" for n in ir.walk(k.epilogue)):
        # SwiftShader runs every block under lane masks, so a cold path (sin's big-argument
        # reduction) costs every element as much as where it is taken: 33 of the bench chain's
        # 57 ms. There the kernel runs without its cold paths, flagging the elements that need
        # one by writing this kernel's workgroup counts to a scratch word; the whole kernel
        # then runs again through an indirect dispatch of those counts, zero when none did
        # (two more dispatches: kernels of 16384 elements and more).
        fast, fb = build(True)
        full.grid = ("tmp", 0)
        reset = Launch(_RESET_INDIRECT, [("tmp", 0)], 1)
        return GPUKernel(k, [reset, Launch(fast, fb.roles, n_wg, sizes, fb.merged), full], temps=[16])
    return GPUKernel(k, [full])


_RESET_INDIRECT = """@group(0) @binding(0) var<storage, read_write> tv: array<u32>;
@compute @workgroup_size(1)
fn main() { tv[0] = 0u; tv[1] = 1u; tv[2] = 1u; }
"""


# ---- reductions ----------------------------------------------------------------------------------


def _identity(op: str, d) -> str:
    t = ctype(d)
    if op in ("sum",):
        return wgsl.zero(d)
    if op == "prod":
        return lit(1, d)
    if op in ("and",):
        return "true" if t == "bool" else lit(-1, d) if t == "i32" else "0xffffffffu"
    if op == "or":
        return wgsl.zero(d)
    if op in ("max", "argmax"):
        if t == "f32":
            return "(-pj_inf())"
        if t == "i32":
            return lit(dtypes.iinfo(d).min, d)
        return "false" if t == "bool" else "0u"
    if op in ("min", "argmin"):
        if t == "f32":
            return "pj_inf()"
        if t == "i32":
            return lit(dtypes.iinfo(d).max, d)
        return "true" if t == "bool" else lit(dtypes.iinfo(d).max, d)
    raise NotImplementedError(f"webgpu backend: reduction {op}")


def _combine(op: str, a: str, b: str, d, em: Emitter) -> str:
    t = ctype(d)
    if op == "sum":
        return f"({a} || {b})" if t == "bool" else wgsl.normalize_int(f"({a} + {b})", d)
    if op == "prod":
        return f"({a} && {b})" if t == "bool" else wgsl.normalize_int(f"({a} * {b})", d)
    if op in ("max", "min"):
        if t == "f32":
            em.helpers.add("f" + op)
            return f"pj_f{op}({a}, {b})"
        if t == "bool":
            return f"({a} || {b})" if op == "max" else f"({a} && {b})"
        return f"{op}({a}, {b})"
    if op == "and":
        return f"({a} && {b})" if t == "bool" else f"({a} & {b})"
    if op == "or":
        return f"({a} || {b})" if t == "bool" else f"({a} | {b})"
    raise NotImplementedError(f"webgpu backend: reduction {op}")


def _better(op: str, v: str, cur: str, d, em: Emitter) -> str:
    """Is v strictly better than cur for argmax/argmin (NaN beats everything but NaN)?"""
    t = ctype(d)
    if t == "f32":
        em.helpers |= {"isnan", "gt", "lt"}
        cmp = "pj_gt" if op == "argmax" else "pj_lt"
        return f"({cmp}({v}, {cur}) || (pj_isnan({v}) && !pj_isnan({cur})))"
    if t == "bool":
        v, cur = f"select(0u, 1u, {v})", f"select(0u, 1u, {cur})"
    return f"({v} {'>' if op == 'argmax' else '<'} {cur})"


def _same(v: str, cur: str, d) -> str:
    if ctype(d) == "f32":
        return f"({v} == {cur} || (pj_isnan({v}) && pj_isnan({cur})))"
    return f"({v} == {cur})"


def _store_type(d) -> str:
    """Type of a partial accumulator in a temp buffer or workgroup memory (bool as u32)."""
    t = ctype(d)
    return "u32" if t == "bool" else t


def _to_store(v: str, d) -> str:
    return f"select(0u, 1u, {v})" if ctype(d) == "bool" else v


def _from_store(v: str, d) -> str:
    return f"({v} != 0u)" if ctype(d) == "bool" else v


def _contiguous_reduce(k: Kernel) -> bool:
    """Does some body load walk memory contiguously along the last reduced axis?"""
    for n in ir.walk(k.body):
        if n.op == "load":
            tr = n.arg[1]
            v = tr.views[-1]
            if len(tr.views) == 1 and v.strides and v.strides[-1] in (1, -1):
                return True
    return False


def _reduce_plan(k: Kernel, caps: Caps):
    """(T, S, cols): serial (T=1) or cooperative (T threads per output), S-way split; cols: the
    partials of neighbouring outputs are neighbours (strided reductions: reads stay coalesced)."""
    nk = len(k.shape) - len(k.reduce_axes)
    n_out = math.prod(k.shape[:nk])
    rn = math.prod(k.shape[nk:])
    wg = caps.wg
    P = wgsl.per_word(k.out_dtype)
    contig = _contiguous_reduce(k)
    split = 1
    if n_out <= 256 and rn >= 32768:
        # Enough partials to fill a large GPU (4096 workgroups for a full reduction of 2^24+).
        split = max(1, min(4096 // n_out, rn // 4096))
    per = -(-rn // split)
    if not contig and split == 1 and n_out >= 2048 and not caps.cpu_adapter:
        # Column sums: one thread per output had 8192 threads for 8192^2 (2% of the H200's
        # bandwidth). Split the rows so about 2^17 threads each sum a block of >= 64 rows.
        s = min(_pow2_floor(max(rn // 64, 1)), _pow2_floor(max(1, (1 << 17) // n_out)))
        return 1, s, s > 1
    if per < 32 or (not contig and n_out >= 2048 and split == 1) or caps.cpu_adapter:
        return 1, split, False
    t = min(wg // P if split == 1 else wg, _pow2_floor(max(per // 8, 1)))
    if not contig and split == 1:
        t = min(t, max(1, _pow2_floor(max(wg * 64 // max(n_out, 1), 1))))
    return max(1, t), split, False


def _reduction(k: Kernel, caps: Caps, generic: bool = False) -> GPUKernel:
    """generic: k is flat (see `_flatten`) and reads its sizes from `u.n`."""
    nd = len(k.shape)
    nk = nd - len(k.reduce_axes)
    if k.reduce_axes != tuple(range(nk, nd)):
        raise NotImplementedError("webgpu backend: reduced axes must be trailing")
    T, S, cols = _reduce_plan(k, caps)
    if S == 1:
        return GPUKernel(k, [_reduce_launch(k, caps, T, "direct", 1, generic)])
    n_out = math.prod(k.shape[:nk])
    arg = k.reduce_op in ("argmax", "argmin")
    temps = [4 * n_out * S] + ([4 * n_out * S] if arg else [])
    T2 = 1 if cols else min(caps.wg // wgsl.per_word(k.out_dtype), _pow2_floor(max(S // 2, 1)))
    launches = [
        _reduce_launch(k, caps, T, "partial", S, generic, cols),
        _reduce_launch(k, caps, max(1, T2), "combine", S, generic, cols),
    ]
    return GPUKernel(k, launches, temps=temps)


def _full_reduce_vec(k: Kernel, caps: Caps) -> GPUKernel | None:
    """A flat full reduction of 4-byte values over n % 4 == 0 elements: vec4 loads in a
    grid-stride loop over a fixed number of workgroups (four loads in flight per thread), a
    workgroup tree, then `_reduce_launch`'s combine. On the H200 (raw kernels, 8192^2 f32) four
    loads and 1024 workgroups read 2.84 TB/s, two loads 2.6 TB/s (512 workgroups: 2.95 TB/s, but
    test_sum_accuracy's 2^24 sum then lands one ulp from JAX's)."""
    n = k.shape[1]
    vd = k.body.dtype
    loads = [x for x in ir.walk(k.body) if x.op == "load"]
    if (
        k.shape[0] != 1
        or caps.cpu_adapter
        or n % 4
        or n < 1 << 16
        or k.reduce_op not in ("sum", "prod", "max", "min")
        or ctype(vd) not in ("f32", "i32", "u32")
        or any(x.dtype.itemsize != 4 for x in loads)
        or not any(x.arg[1].is_contiguous for x in loads)
    ):
        return None
    wg = caps.wg
    U = 4  # vec4 loads in flight per thread
    S = min(1024, max(1, -(-n // (4 * wg * 8))))  # workgroups (partials)
    vec_loads = [x for x in loads if x.arg[1].is_contiguous]
    b = _Bindings(k, caps, _used_inputs([k.body]), [("tv", ctype(vd), True, ("tmp", 0))], {x.arg[0] for x in vec_loads})
    b.uniform = (b.uniform or "") + SIZES_FIELD
    em = Emitter(b.inputs)
    em.exact_ops = True
    em.helpers.add("inf")
    lane_of: dict = {}
    for x in vec_loads:
        b.inputs[x.arg[0]].vec_loads[x] = lambda scope: lane_of[id(scope)]
    thread = Scope()
    op, ident = k.reduce_op, _identity(k.reduce_op, vd)
    pos_code = []
    for tag, i in [("a", "i")] + [(chr(97 + u), f"(i + {u}i * stride)") for u in range(1, U)]:
        lanes = []
        for j in range(4):
            sc = Scope(thread, {0: f"e{tag}{j}"})
            lane_of[id(sc)] = (tag, j)
            lanes.append(sc)
        with ir.shape_context((n,)):
            vals = [em.expr(k.body, sc) for sc in lanes]
        code = [f"let e{tag}{j} = {i} * 4i + {j}i;" for j in range(4)]
        for sc in lanes:
            code += sc.lines
        code += [f"a{tag}{j} = {_combine(op, f'a{tag}{j}', vals[j], vd, em)};" for j in range(4)]
        pos_code.append(code)
    # one accumulator per load and lane (U * 4): shorter serial chains, as accurate as 1024
    # workgroups with one accumulator per lane; then a pairwise tree
    accs = [f"a{chr(97 + u)}{j}" for u in range(U) for j in range(4)]
    while len(accs) > 1:
        accs = [_combine(op, accs[i], accs[i + 1], vd, em) for i in range(0, len(accs), 2)]
    total = accs[0]
    L = [wgsl.runtime_zero("tv"), LINEAR_WG.strip()]
    L += thread.lines
    L += ["let n4 = i32(u.n.y);", f"let stride = {S * wg}i;", f"var i = i32(wgl * {wg}u + lid);"]
    L += [f"var a{chr(97 + u)}{j}: {ctype(vd)} = {ident};" for u in range(U) for j in range(4)]
    L += [f"for (; i + {U - 1}i * stride < n4; i = i + {U}i * stride) {{"]
    L += ["  " + x for code in pos_code for x in code] + ["}"]
    L += ["for (; i < n4; i = i + stride) {"] + ["  " + x for x in pos_code[0]] + ["}"]
    L += [f"sv[lid] = {total};", "workgroupBarrier();"]
    h = wg // 2
    while h >= 1:
        L += [
            f"if (lid < {h}u) {{ sv[lid] = {_combine(op, 'sv[lid]', f'sv[lid + {h}u]', vd, em)}; }}",
            "workgroupBarrier();",
        ]
        h //= 2
    L += ["if (lid == 0u) { tv[wgl] = sv[0]; }"]
    body = f"@compute @workgroup_size({wg})\nfn main({ENTRY}) {{\n" + "".join(f"  {x}\n" for x in L) + "}\n"
    shared = f"var<workgroup> sv: array<{ctype(vd)}, {wg}>;\n"
    sizes = _sizes(1, n // 4, n, S)
    part = Launch(_finish(em, b.header(), body, shared), b.roles, S, sizes, b.merged)
    T2 = min(wg // wgsl.per_word(k.out_dtype), _pow2_floor(max(S // 2, 1)))
    comb = _reduce_launch(k, caps, max(1, T2), "combine", S, generic=True)
    comb.uniforms = sizes
    return GPUKernel(k, [part, comb], temps=[4 * S])


def _reduce_launch(k: Kernel, caps: Caps, T: int, mode: str, S: int, generic: bool = False, cols: bool = False):
    """WGSL for one reduction launch. mode: direct | partial (write accs to tmp) | combine.
    generic: the sizes (outputs, chunk, reduced length, split) come from `u.n`, not literals.
    cols: partial s of output o sits at s * n_out + o (else o * S + s)."""
    op = k.reduce_op
    arg = op in ("argmax", "argmin")
    nd = len(k.shape)
    nk = nd - len(k.reduce_axes)
    out_shape = k.shape[:nk]
    red_shape = k.shape[nk:]
    n_out = math.prod(out_shape)
    rn = math.prod(red_shape)
    vd = k.body.dtype  # value dtype being reduced
    od = k.out_dtype
    st = _store_type(vd)
    ct = ctype(vd)
    wg = caps.wg
    P = wgsl.per_word(od) if mode != "partial" else 1
    extra = []
    if mode == "partial":
        extra.append(("tv", st, True, ("tmp", 0)))
        if arg:
            extra.append(("ti", "i32", True, ("tmp", 1)))
        roots = [k.body]
    else:
        extra.append(("out", wgsl.storage_type(od), True, ("out", 0)))
        roots = [k.epilogue] if mode == "combine" else [k.body, k.epilogue]
    if mode == "combine":
        extra.insert(0, ("tv", st, False, ("tmp", 0)))
        if arg:
            extra.insert(1, ("ti", "i32", False, ("tmp", 1)))
    b = _Bindings(k, caps, _used_inputs(roots), extra, sizes=generic)
    em = Emitter(b.inputs)
    em.exact_ops = True
    em.helpers.add("inf")
    n_q = n_out * S if mode == "partial" else n_out
    chunk = -(-rn // S)
    if generic:
        NQ, CH, RN, SS = "i32(u.n.x)", "i32(u.n.y)", "i32(u.n.z)", "i32(u.n.w)"
    else:
        NQ, CH, RN, SS = f"{n_q}i", f"{chunk}i", f"{rn}i", f"{S}i"
    thread = Scope()
    L: list = []  # function body lines (around the scopes)

    def emit(s):
        L.append(s)

    # Which output q, which threads.
    coop = T > 1
    if coop:
        opw = wg // T
        emit(f"let seg = lid / {T}u;")
        emit(f"let t = i32(lid % {T}u);")
        q0 = f"(wgl * {opw}u + seg)"
        n_groups = -(-n_q // opw)
    else:
        opw = 1
        n_groups = -(-n_q // P)
    # The output (and chunk) this thread works on: q = o * S + s.
    if coop:
        emit(f"let q = i32{q0};")
        emit(f"let qv = q < {NQ};")
    out_lines: list = []
    if mode == "partial":
        if cols:
            out_lines.append(f"let o = q % {n_out}i;")
            out_lines.append(f"let rb = (q / {n_out}i) * {CH};")
        else:
            out_lines.append(f"let o = q / {SS};")
            out_lines.append(f"let rb = (q % {SS}) * {CH};")
        out_lines.append(f"let re = min(rb + {CH}, {RN});")
    elif mode == "combine":
        out_lines += ["let o = q;", "let rb = 0i;", f"let re = {SS};"]
    else:
        out_lines += ["let o = q;", "let rb = 0i;", f"let re = {RN};"]
    # generic: k is flat (see `_flatten`): idx 0 is the element o * rn + r in the body and the
    # output o in the epilogue, so no shape appears in the WGSL.
    out_idx = {} if generic else decompose("o", out_shape, "o", out_lines)
    out_scope = Scope(thread, out_idx)

    # Loop body: the value (and index) at reduced position `rv`, in its own scope.
    def body_at(rv: str, tag: str):
        if mode == "combine":
            at = f"{rv} * {n_out}i + o" if cols else f"o * {SS} + {rv}"
            return [], _from_store(f"tv[{at}]", vd), (f"ti[{at}]" if arg else None)
        lines_: list = []
        if generic:
            lines_.append(f"let f{tag} = o * {RN} + {rv};")
            sc = Scope(out_scope, {0: f"f{tag}"})
        else:
            ridx = decompose(rv, red_shape, f"r{tag}_", lines_)
            sc = Scope(out_scope, {nk + a: v for a, v in ridx.items()})
        with ir.shape_context((math.prod(k.shape),) if generic else k.shape):
            v = em.expr(k.body, sc)
        return lines_ + sc.lines, v, rv

    def accumulate(val: str, ival: str | None, tag: str) -> list:
        if arg:
            vv = f"vv{tag}"
            better = _better(op, vv, "av", vd, em)
            if mode == "combine":
                cond = f"{better} || ({_same(vv, 'av', vd)} && {ival} < ai)"
            else:
                cond = f"{better} || ai == 2147483647i"
            return [f"let {vv} = {val};", f"if ({cond}) {{ av = {vv}; ai = {ival}; }}"]
        return [f"av = {_combine(op, 'av', val, vd, em)};"]

    if arg:
        acc_init = [f"var av: {ct} = {_identity(op, vd)};", "var ai = 2147483647i;"]
    else:
        acc_init = [f"var av: {ct} = {_identity(op, vd)};"]
    step = T if coop else 1
    start = "rb + t" if coop else "rb"
    # Unrolled by U: U independent loads in flight per iteration (reductions are latency-bound),
    # then a remainder loop. Only for small bodies, so the WGSL stays short.
    small_body = mode == "combine" or len(ir.walk(k.body)) <= 24
    U = (8 if cols else 4) if small_body and (rn // max(S, 1)) // step >= 8 else 1
    loop = [f"var r = {start};"]
    if U > 1:
        loop.append(f"for (; r + {(U - 1) * step}i < re; r = r + {U * step}i) {{")
        for u in range(U):
            rv = f"ru{u}"
            bl, v, iv = body_at(rv, f"u{u}")
            loop.append(f"  let {rv} = r + {u * step}i;")
            loop += ["  " + x for x in bl]
            loop += ["  " + x for x in accumulate(v, iv, f"u{u}")]
        loop.append("}")
    bl, v, iv = body_at("r", "s")
    loop.append(f"for (; r < re; r = r + {step}i) {{")
    loop += ["  " + x for x in bl]
    loop += ["  " + x for x in accumulate(v, iv, "s")]
    loop.append("}")

    shared = ""
    lines: list = []

    # The kernel's last step for output q (after the loop / the workgroup combine): a partial
    # (value, index) pair, or the epilogue's value stored into out (packed words go by `packed`).
    def finish(acc_v: str, acc_i: str, packed: str) -> None:
        if mode == "partial":
            lines.append(f"tv[q] = {_to_store(acc_v, vd)};")
            if arg:
                lines.append(f"ti[q] = {acc_i};")
            return
        post = Scope(out_scope, {0: "o"} if generic else {}, acc=acc_i if arg else acc_v)
        with ir.shape_context((n_out,) if generic else out_shape):
            v = em.expr(k.epilogue, post)
        lines.append(("POST", post))
        if P > 1:
            em.helpers |= wgsl.helpers_for_dtype(od)
            lines.append(packed.format(bits=wgsl.to_bits(v, od)))
        else:
            lines.append(f"out[q] = {v};")

    if not coop:
        lines.append(f"let g = wgl * {wg}u + lid;")
        lines.append(f"if (i32(g) * {P}i >= {NQ}) {{ return; }}")
        lines.append("THREAD")
        if P > 1:
            lines.append("var word = 0u;")
            lines.append(f"for (var p = 0u; p < {P}u; p = p + 1u) {{")
            lines.append(f"let q = i32(g * {P}u + p);")
            lines.append(f"if (q < {NQ}) {{")
        else:
            lines.append("let q = i32(g);")
            lines.append("{")
        lines += out_lines
        lines.append("OUTSCOPE")
        lines += acc_init
        lines += loop
        finish("av", "ai", f"word = word | ({{bits}} << (p * {wgsl.bits(od)}u));")
        lines.append("}")
        if P > 1:
            lines.append("}")
            lines.append("out[g] = word;")
    else:
        shared = f"var<workgroup> sv: array<{_store_type(vd)}, {wg}>;\n"
        if arg:
            shared += f"var<workgroup> si: array<i32, {wg}>;\n"
        if P > 1 and mode != "partial":
            shared += f"var<workgroup> sres: array<u32, {opw}>;\n"
        lines.append("THREAD")
        lines += out_lines
        lines.append("OUTSCOPE")
        lines += acc_init
        lines.append("if (qv) {")
        lines += loop
        lines.append("}")
        lines.append(f"sv[lid] = {_to_store('av', vd)};")
        if arg:
            lines.append("si[lid] = ai;")
        lines.append("workgroupBarrier();")
        s = T // 2
        while s >= 1:
            lines.append(f"if (t < {s}i) {{")
            a_v, b_v = _from_store("sv[lid]", vd), _from_store(f"sv[lid + {s}u]", vd)
            if arg:
                lines.append(f"let va = {a_v}; let vb = {b_v}; let ia = si[lid]; let ib = si[lid + {s}u];")
                cond = f"{_better(op, 'vb', 'va', vd, em)} || ({_same('vb', 'va', vd)} && ib < ia)"
                lines.append(f"if ({cond}) {{ sv[lid] = {_to_store('vb', vd)}; si[lid] = ib; }}")
            else:
                lines.append(f"sv[lid] = {_to_store(_combine(op, a_v, b_v, vd, em), vd)};")
            lines.append("}")
            lines.append("workgroupBarrier();")
            s //= 2
        lines.append("if (t == 0i && qv) {")
        fin_v, fin_i = _from_store("sv[lid]", vd), "si[lid]"
        if mode != "partial":  # name them once: the epilogue may read the value several times
            lines.append(f"let fv = {fin_v};")
            if arg:
                lines.append("let fi = si[lid];")
            fin_v, fin_i = "fv", "fi"
        finish(fin_v, fin_i, "sres[seg] = {bits};")
        lines.append("}")
        if P > 1 and mode != "partial":
            lines.append("workgroupBarrier();")
            lines.append(f"if (lid < {opw // P}u) {{")
            parts = [f"(sres[lid * {P}u + {p}u] << {p * wgsl.bits(od)}u)" for p in range(P)]
            lines.append(f"  out[wgl * {opw // P}u + lid] = {' | '.join(parts)};")
            lines.append("}")
    body_lines = []
    for x in lines:
        if x == "THREAD":
            body_lines += thread.lines
        elif x == "OUTSCOPE":
            body_lines += out_scope.lines
        elif isinstance(x, tuple):
            body_lines += x[1].lines
        else:
            body_lines.append(x)
    text_body = "\n".join("  " + x for x in body_lines)
    L.insert(0, wgsl.runtime_zero("tv" if mode == "partial" else "out"))
    prefix = "\n".join("  " + x for x in L)
    body = f"@compute @workgroup_size({wg})\nfn main({ENTRY}) {{\n  {LINEAR_WG}\n{prefix}\n{text_body}\n}}\n"
    n_wg = -(-n_q // opw) if coop else -(-n_groups // wg)
    text = _finish(em, b.header(), body, shared)
    return Launch(text, b.roles, n_wg, _sizes(n_q, chunk, rn, S) if generic else None, b.merged)


# ---- entry point ----------------------------------------------------------------------------------


def _has_64bit(k: Kernel) -> bool:
    for root in (k.epilogue, k.body):
        if root is None:
            continue
        for n in ir.walk(root):
            if not wgsl.supported(n.dtype):
                return True
    return any(not wgsl.supported(d) for d in k.in_dtypes if d is not None)


def render_kernel(k: Kernel, caps: Caps) -> GPUKernel:
    """Compile a Kernel to launches (WGSL text not yet turned into pipelines)."""
    if _has_64bit(k):
        g = GPUKernel(k, [])
        g.host_fallback = True
        return g
    if math.prod(k.out_shape if k.reduce_op else k.shape) == 0:
        return GPUKernel(k, [])
    flat = _flatten(k)
    big = math.prod(k.shape) >= _LITERAL_SIZES_FROM
    # exp, log, tanh, ... as core ops, written once in compiler/mathlib/ (after _flatten, so
    # that it walks the small DAG, not the decompositions)
    images, flat_images = {}, {}
    k, flat = expand_kernel(k, memo=images), flat and expand_kernel(flat, memo=flat_images)
    token = wgsl.DECOMPOSED.set(_decomposed(k, images) | (_decomposed(flat, flat_images) if flat else frozenset()))
    try:
        return _render_expanded(k, flat, big, caps)
    finally:
        wgsl.DECOMPOSED.reset(token)


def _decomposed(k: Kernel, images: dict) -> frozenset:
    """The nodes of expanded k that are no original node's image: a decomposition's insides,
    except those of a decomposition that needs exact arithmetic (EXACT_ARITHMETIC)."""
    kept = set(images.values())
    for n, image in images.items():
        if n.op in EXACT_ARITHMETIC:
            kept.update(ir.walk(image))
    roots = [k.epilogue] + ([k.body] if k.body is not None else [])
    return frozenset(n for r in roots for n in ir.walk(r) if n not in kept)


def _render_expanded(k: Kernel, flat, big: bool, caps: Caps) -> GPUKernel:
    if k.reduce_op is None:
        gk = _elementwise(k, caps) if flat is None or big else _elementwise(flat, caps, generic=True)
        gk.kernel = k
        return gk
    from pyjax.backends.webgpu import matmul

    mm = matmul.try_matmul(k, caps)
    if mm is not None:
        return mm
    gk = None if flat is None else _full_reduce_vec(flat, caps)
    if gk is None:
        gk = _reduction(k, caps) if flat is None or big else _reduction(flat, caps, generic=True)
    gk.kernel = k
    return gk
