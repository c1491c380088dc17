"""Kernel IR -> WebAssembly: loop nests with hoisted index math, SIMD inner loops, tiled matmul.

A Kernel computes `out[i] = epilogue(reduce_{trailing axes} body)`. The generated module exports
one function `run(in_ptr..., out_ptr, lo, hi, gather_len...)` (all i32) that runs output rows
`lo <= i0 < hi` of the outermost axis, so a later multithreaded host can split a kernel into
ranges without recompiling.

How a kernel becomes code:
- Loads are turned into index expressions with `ir.view_index` (built inside the tracker's shape
  context so they simplify). Every node gets the set of loop axes it depends on; it is computed
  just inside the innermost loop it depends on, so index math and loop-invariant subexpressions
  are hoisted out of inner loops (no div/mod per element for strided views).
- One axis may be vectorized (4 lanes of f32/i32/u32/bool): the innermost axis of an elementwise
  kernel or of a row reduction, or the last output axis of a reduction whose inner axis is not
  contiguous (column sums, naive matmul). Loads affine in that axis become `v128.load` (stride 1),
  a splat (stride 0) or four scalar loads; any operation without a SIMD form runs lane by lane,
  so every kernel over these dtypes vectorizes. A scalar loop handles the tail.
- A cold `where` (mathlib's `rarely`, e.g. sin's big-argument reduction) computes its true side in
  an `if` taken only when some lane's condition holds.
- A float32 sum of products with the reduced axis last and one operand broadcast along the last
  output axis (what dot_general lowers to) becomes a register-tiled, K-blocked SIMD matmul
  (see `matmul.py`), with the epilogue fused on the tiles.

Semantics follow the cpu backend (numpy_eval): C-style integer div/rem with x/0 = -1 and x%0 = x,
saturating float->int casts with NaN -> 0, shifts by >= the bit width give 0 (or the sign fill),
NaN-propagating min/max, bool stored as one byte, float16/bfloat16 stored as 16 bits and computed
in float32 with a rounding after every operation, float64 in f64, int64/uint64 in i64.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from pyjax.backends.wasm.encoder import F32, F64, I32, I64, V128, Function, Module
from pyjax.backends.wasm.halffloat import narrow_helper
from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, Node
from pyjax.compiler.mathlib import expand_kernel
from pyjax.core import dtypes, minifloat

__all__ = ["DTYPE_INFO", "KernelCodegen", "compile_kernel_bytes", "scalar_ops", "valtype"]

LANES = 4
SUM_BLOCK = 1024  # main-loop iterations a float32 sum's accumulators run before joining the total
ROW_BLOCK = 128  # rows a strided float32 sum's per-column accumulators add before joining theirs
HALF = ("float16", "bfloat16", *dtypes.FLOAT8)  # stored narrow, computed in f32
VEC_DTYPES = ("float32", "int32", "uint32", "bool")
_NATIVE_MADD = frozenset(("madd",))

# dtype name -> (wasm value type, load instruction, store instruction)
DTYPE_INFO = {
    "float32": (F32, "f32.load", "f32.store"),
    "float64": (F64, "f64.load", "f64.store"),
    "float16": (F32, "i32.load16_u", "i32.store16"),
    "bfloat16": (F32, "i32.load16_u", "i32.store16"),
    **{name: (F32, "i32.load8_u", "i32.store8") for name in dtypes.FLOAT8},
    "int32": (I32, "i32.load", "i32.store"),
    "uint32": (I32, "i32.load", "i32.store"),
    "int16": (I32, "i32.load16_s", "i32.store16"),
    "uint16": (I32, "i32.load16_u", "i32.store16"),
    "int8": (I32, "i32.load8_s", "i32.store8"),
    "uint8": (I32, "i32.load8_u", "i32.store8"),
    "bool": (I32, "i32.load8_u", "i32.store8"),
    # 4/2/1-bit integers: stored as int8/uint8 values (core/dtypes.py STRUCT_FORMAT), wrapped by _WRAP
    **{n: (I32, "i32.load8_s" if n[0] == "i" else "i32.load8_u", "i32.store8") for n in dtypes.INTN},
    "int64": (I64, "i64.load", "i64.store"),
    "uint64": (I64, "i64.load", "i64.store"),
}


def valtype(d: dtypes.DType) -> str:
    info = DTYPE_INFO.get(d.name)
    if info is None:
        raise NotImplementedError(f"wasm backend: dtype {d.name} is not supported")
    return info[0]


def _narrow_value(v: float, name: str) -> float:
    """v rounded to half float dtype `name` (round half to even; inf on overflow)."""
    if name in minifloat.FORMATS:
        return minifloat.round_to(v, name)
    if name == "bfloat16":
        return struct.unpack("<f", struct.pack("<I", minifloat.bfloat16_bits(v) << 16))[0]
    try:
        return struct.unpack("<e", struct.pack("<e", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def _float(d) -> bool:
    return d.kind == "f"


def _signed(d) -> bool:
    return d.kind == "i"


def _bits(d) -> int:
    return 1 if d.kind == "b" else d.bits


def _int_min(d) -> int:
    return -(1 << (_bits(d) - 1)) if _signed(d) else 0


def _int_max(d) -> int:
    return (1 << (_bits(d) - 1)) - 1 if _signed(d) else (1 << _bits(d)) - 1


# Ops whose float16 result needs no re-rounding (exact on representable inputs).
_HALF_EXACT = frozenset("neg abs floor ceil round_even round_away trunc max min sign where".split())
_CMP = {
    "lt": ("lt", "lt_s", "lt_u"),
    "le": ("le", "le_s", "le_u"),
    "gt": ("gt", "gt_s", "gt_u"),
    "ge": ("ge", "ge_s", "ge_u"),
    "eq": ("eq", "eq", "eq"),
    "ne": ("ne", "ne", "ne"),
}


class KernelCodegen:
    """Generates one module for one Kernel. `build()` returns the module bytes."""

    def __init__(self, kernel: Kernel, relaxed_simd: bool = True, simd: bool = True, tile: tuple[int, int] = (4, 4)):
        # exp, log, tanh, ... as core ops (compiler/mathlib/); madd: relaxed SIMD's multiply-add
        kernel = expand_kernel(kernel, _NATIVE_MADD if relaxed_simd and simd else frozenset())
        self.k = kernel
        self.relaxed = relaxed_simd
        self.simd = simd
        self.tile = tile  # matmul register tile (MR rows, NV vectors of 4 columns)
        self.m = Module()
        n = len(kernel.shape)
        self.n = n
        self.nr = len(kernel.reduce_axes) if kernel.reduce_op else 0
        self.nk = n - self.nr
        self.n_in = len(kernel.in_dtypes)
        roots = [kernel.epilogue] + ([kernel.body] if kernel.reduce_op else [])
        self.gathers = sorted({x.arg for r in roots for x in ir.walk(r) if x.op == "gather"})
        self.mode = "scalar"
        self.V = -1
        self.unroll = 1

    # ------------------------------------------------------------------ analysis

    def _analyze(self) -> None:
        k = self.k
        self.load_info: dict = {}
        self.deps: dict = {}
        self.rest: dict = {}  # load -> (rest offset node, coefficient of idx(V)) for affine vector loads
        # output offset: contiguous over the kept axes
        out_shape = k.shape[: self.nk]
        with ir.shape_context(out_shape):
            off, acc_ = ir.const(0, dtypes.int32), 1
            for a in range(self.nk - 1, -1, -1):
                if out_shape[a] != 1:
                    off = ir.alu("add", off, ir.alu("mul", ir.idx(a), ir.const(acc_, dtypes.int32)))
                acc_ *= out_shape[a]
        self.out_off = off
        self.roots = [k.epilogue] + ([k.body] if k.reduce_op else [])
        seen: set = set()
        order = [x for r in self.roots + [self.out_off] for x in ir.walk(r, seen, self._children)]
        self.order = order
        acc_mask = (1 << self.nk) - 1
        accdep: dict = {}
        for nd in order:
            if nd.op == "idx":
                d = 1 << nd.arg
            elif nd.op == "acc":
                d = acc_mask
            else:
                d = 0
                for s in self._children(nd):
                    d |= self.deps[s]
            self.deps[nd] = d
            accdep[nd] = nd.op == "acc" or any(accdep[s] for s in self._children(nd))
        self.accdep = accdep
        self._choose_mode()
        if self.mode != "scalar":
            # affine analysis of loads along V, and their rest offsets (added to the schedule)
            extra = []
            for nd in order:
                if nd.op == "load" and self.deps[nd] >> self.V & 1:
                    off, valid = self.load_info[nd]
                    info = self._affine(off, valid)
                    if info is not None:
                        self.rest[nd] = info
                        extra.append(info[0])
            info = self._affine(self.out_off, ir.const(True, dtypes.bool_))
            self.out_rest = info
            if info is not None:
                extra.append(info[0])
            for e in extra:
                self._schedule_extra(e)
        self.level = {nd: d.bit_length() - 1 for nd, d in self.deps.items()}
        self.cold = _cold_only(self.roots + [self.out_off], self._children)
        self.body_nodes = set(ir.walk(k.body, children=self._children)) if k.reduce_op else set()

    def _schedule_extra(self, root: Node) -> None:
        """Add the nodes of root (e.g. a load's rest offset) to the schedule, with deps and levels."""
        new = [x for x in ir.walk(root) if x not in self.deps]
        for nd in new:
            d = 0
            for s in self._children(nd):
                d |= self.deps[s]
            self.deps[nd] = d
            self.accdep[nd] = any(self.accdep[s] for s in self._children(nd))
            self.order.append(nd)
            if hasattr(self, "level"):
                self.level[nd] = d.bit_length() - 1

    def _children(self, nd: Node) -> tuple:
        if nd.op == "load":
            info = self.load_info.get(nd)
            if info is None:
                _, tr = nd.arg
                with ir.shape_context(tr.shape):
                    off, valid = ir.view_index(tr, tuple(ir.idx(i) for i in range(len(tr.shape))))
                info = self.load_info[nd] = (off, valid)
            return info
        return nd.srcs

    def _affine(self, off: Node, valid: Node):
        """(rest, coeff) if off = rest + coeff * idx(V) with rest and valid independent of V."""
        V = self.V
        if self.deps.get(valid, 0) >> V & 1:
            return None
        terms, c = ir._terms(off)
        coeff = 0
        rest = {}
        for atom, co in terms.items():
            if atom.op == "idx" and atom.arg == V:
                coeff = co
            elif self.deps.get(atom, 0) >> V & 1 or (atom not in self.deps and _depends_on(atom, V)):
                return None
            else:
                rest[atom] = co
        if coeff == 0:
            return None
        return ir._from_terms(rest, c, dtypes.int32), coeff

    @staticmethod
    def _vec_node_ok(nd: Node) -> bool:
        return nd.dtype.name in VEC_DTYPES and all(s.dtype.name in VEC_DTYPES for s in nd.srcs)

    def _vectorizable(self, V: int) -> bool:
        for nd in self.order:
            if self.deps[nd] >> V & 1 and nd.op != "idx" and not self._vec_node_ok(nd):
                return False
        return True

    def _contiguous_along(self, V: int) -> bool:
        for nd in self.order:
            if nd.op == "load" and self.deps[nd] >> V & 1:
                off, valid = self.load_info[nd]
                saved, self.V = self.V, V
                info = self._affine(off, valid)
                self.V = saved
                if info is None or info[1] != 1:
                    return False
        return True

    def _choose_mode(self) -> None:
        k, n, nk = self.k, self.n, self.nk
        if not self.simd or n == 0:
            return
        op = k.reduce_op
        out_vec = k.epilogue.dtype.name in VEC_DTYPES
        if op is None:
            if out_vec and k.shape[n - 1] >= LANES and self._vectorizable(n - 1):
                self.mode, self.V = "A", n - 1
            return
        if op in ("argmax", "argmin"):
            return
        acc_name = k.body.dtype.name
        if acc_name not in VEC_DTYPES:
            return
        b_ok = k.shape[n - 1] >= LANES and self._vectorizable(n - 1)
        c_ok = out_vec and nk >= 1 and k.shape[nk - 1] >= LANES and self._vectorizable(nk - 1)
        if b_ok and self._contiguous_along(n - 1):
            self.mode, self.V = "B", n - 1
        elif c_ok:
            self.mode, self.V = "C", nk - 1
            if self.nr == 1 and k.shape[n - 1] >= 8 and k.shape[nk - 1] >= 4 * LANES and op != "prod":
                self.mode = "R"  # stream rows into accumulators kept in scratch memory
        elif b_ok:
            self.mode, self.V = "B", n - 1

    # ------------------------------------------------------------------ driver

    def build(self) -> bytes:
        from pyjax.backends.wasm import matmul

        self._analyze()
        plan = matmul.match(self) if self.simd else None
        self.scratch_bytes = plan.scratch if plan is not None else 0
        if self.mode == "R":  # float32 accumulators, then float64 totals for a float32 sum
            self.scratch_bytes = (12 if self._wide_sum() else 4) * self.k.shape[self.V]
        n_params = self.n_in + 3 + len(self.gathers) + (1 if self.scratch_bytes else 0)
        f = self.m.function("run", [I32] * n_params, [], export=True)
        self.f = f
        self.p_in = list(range(self.n_in))
        self.p_out = self.n_in
        self.p_lo, self.p_hi = self.n_in + 1, self.n_in + 2
        self.p_len = {g: self.n_in + 3 + i for i, g in enumerate(self.gathers)}
        self.p_scratch = n_params - 1
        self.env: dict = {}
        self.vec = False
        self.idx_local: dict = {}
        if plan is not None:
            matmul.emit(self, plan)
        elif self.mode == "R":
            self._emit_prologue()
            self._emit_rowstream(0)
        else:
            self._emit_prologue()
            self._emit_out_loops(0)
        f.finish()
        return self.m.to_bytes()

    # ------------------------------------------------------------------ scheduling

    def _pre_emit(self, level: int) -> None:
        """Compute every node that depends on loops up to `level` (and not on acc) here."""
        skip_varying = self.vec and self.unroll > 1  # those are computed once per unrolled vector
        for nd in self.order:
            if self.level[nd] == level and not self.accdep[nd] and nd.op != "idx" and nd not in self.cold:
                if skip_varying and self.varies(nd):
                    continue
                self.get(nd)

    def _emit_prologue(self) -> None:
        self._pre_emit(-1)

    def _axis_end(self, a: int):
        if a == 0 and self.nk >= 1:
            return lambda: self.f.local_get(self.p_hi)
        s = self.k.shape[a]
        return lambda: self.f.i32_const(s)

    def _axis_start(self, a: int):
        if a == 0 and self.nk >= 1:
            return lambda: self.f.local_get(self.p_lo)
        return lambda: self.f.i32_const(0)

    def _loop(self, a: int, step: int, body, start=None, end=None) -> None:
        """for idx(a) in [start, end) step `step` (the vector loop stops 3 short of end)."""
        f = self.f
        var = self.idx_local.get((a, "var"))
        if var is None:
            var = self.idx_local[(a, "var")] = f.local(I32)
        if start is None:
            start = self._axis_start(a)
        if end is None:
            end = self._axis_end(a)
        if start is not False:
            start()
            f.local_set(var)
        lim = var
        if step > 1:
            lim = f.local(I32)
            end()
            f.i32_const(step - 1).i32_sub().local_set(lim)
        saved = dict(self.env)
        self.env[(ir.idx(a), "s")] = var
        with f.block(), f.loop():
            f.local_get(var)
            if step > 1:
                f.local_get(lim)
            else:
                end()
            f.i32_ge_s().br_if(1)
            body()
            f.local_get(var).i32_const(step).i32_add().local_set(var)
            f.br(0)
        self.env = saved

    def _split_loop(self, a: int, body_v, body_s) -> None:
        """The vectorized axis: a 4-wide main loop, then a scalar tail continuing from its index."""
        self._pre_splats()

        def main(unroll):
            def body():
                self.vec, self.unroll = True, unroll
                self._pre_emit(a)
                body_v()
                self.vec, self.unroll = False, 1

            return body

        def tail():
            self._pre_emit(a)
            body_s()

        u = self._unroll_for(a)
        if u > 1:  # U vectors per iteration (more independent accumulators, whole cache lines)
            self._loop(a, LANES * u, main(u))
            self._loop(a, LANES, main(1), start=False)
        else:
            self._loop(a, LANES, main(1))
        self._loop(a, 1, tail, start=False)

    def _emit_rowstream(self, a: int) -> None:
        """Mode R: out[.., j] = epi(reduce_r body(.., j, r)) with the r loop outside the j loop.

        For reductions whose reduced axis is strided in memory (column sums, products with a
        transposed operand) the j loop then reads rows contiguously; the per-column
        accumulators live in scratch memory (4 bytes per output column).
        """
        V, f, k = self.V, self.f, self.k
        if a < V:

            def inner():
                self._pre_emit(a)
                self._emit_rowstream(a + 1)

            self._loop(a, 1, inner)
            return
        op, d = k.reduce_op, k.body.dtype
        r_axis = self.n - 1
        acc_node = ir.acc(d)
        t = valtype(d)
        sp = self.p_scratch
        fam_load = "f32.load" if t == F32 else "i32.load"
        fam_store = "f32.store" if t == F32 else "i32.store"

        def j_loops(vec_body, scalar_body):
            self._pre_splats()

            def vb():
                self.vec = True
                vec_body()
                self.vec = False

            self._loop(V, LANES, vb)
            self._loop(V, 1, scalar_body, start=False)

        def acc_addr():
            f.local_get(sp).local_get(self.env[(ir.idx(V), "s")]).i32_const(2).i32_shl().i32_add()

        wide = self._wide_sum()

        def total_addr():  # float64 total of column j: after the accumulators
            f.local_get(sp).local_get(self.env[(ir.idx(V), "s")]).i32_const(3).i32_shl().i32_add()
            f.i32_const(4 * k.shape[V]).i32_add()

        # accumulators = identity (totals = 0)
        def init_v():
            acc_addr()
            self._vconst(self._identity(op, d), d)
            f.v128_store(align=2)
            if wide:
                for half in (0, 16):
                    total_addr()
                    f.v128_const(bytes(16)).v128_store(offset=half, align=2)

        def init_s():
            acc_addr()
            self._const(self._identity(op, d), d)
            f.op(fam_store, align=2)
            if wide:
                total_addr()
                f.f64_const(0.0).op("f64.store", align=2)

        j_loops(init_v, init_s)

        def r_body():
            # values that depend on r but not on j: once per row
            for nd in self.order:
                if self.level[nd] == r_axis and not self.varies(nd) and not self.accdep[nd]:
                    self.get(nd)

            def upd_v():
                v = self.vget(k.body)
                acc_addr()
                acc_addr()
                f.v128_load(align=2).local_get(v)
                self._vcombine(op, d)
                f.v128_store(align=2)

            def upd_s():
                v = self.get(k.body)
                a_ = f.local(t)
                acc_addr()
                f.op(fam_load, align=2).local_set(a_)
                self._combine_into(a_, v, op, d)
                acc_addr()
                f.local_get(a_).op(fam_store, align=2)

            j_loops(upd_v, upd_s)

        if wide:  # every ROW_BLOCK rows the accumulators join the float64 totals and restart at 0

            def flush_v():
                acc = f.local(V128)
                acc_addr()
                f.v128_load(align=2).local_set(acc)
                for half, part in ((0, acc), (16, self._high_half(acc))):
                    total_addr()
                    total_addr()
                    f.v128_load(offset=half, align=2).local_get(part).op("f64x2.promote_low_f32x4")
                    f.op("f64x2.add").v128_store(offset=half, align=2)
                acc_addr()
                f.v128_const(bytes(16)).v128_store(align=2)

            def flush_s():
                total_addr()
                total_addr()
                f.op("f64.load", align=2)
                acc_addr()
                f.op("f32.load", align=2).op("f64.promote_f32").op("f64.add").op("f64.store", align=2)
                acc_addr()
                f.f32_const(0.0).op("f32.store", align=2)

            self._blocks(r_axis, 1, r_body, lambda: j_loops(flush_v, flush_s), ROW_BLOCK)
        else:
            self._loop(r_axis, 1, r_body)

        def epi_v():
            loc = f.local(V128)
            if wide:
                lo, hi = f.local(V128), f.local(V128)
                for half, part in ((0, lo), (16, hi)):
                    total_addr()
                    f.v128_load(offset=half, align=2).local_set(part)
                self._f64x2_pair_to_f32x4(lo, hi, loc)
            else:
                acc_addr()
                f.v128_load(align=2).local_set(loc)
            self.env[(acc_node, "v")] = loc
            self._store_vector(self.vget(k.epilogue), k.epilogue.dtype)

        def epi_s():
            loc = f.local(t)
            if wide:
                total_addr()
                f.op("f64.load", align=2).op("f32.demote_f64").local_set(loc)
            else:
                acc_addr()
                f.op(fam_load, align=2).local_set(loc)
            self.env[(acc_node, "s")] = loc
            self._store(self.get(k.epilogue), k.epilogue.dtype)

        j_loops(epi_v, epi_s)

    def _unroll_for(self, a: int) -> int:
        """Vectors per main-loop iteration: 4 for reductions vectorized across outputs (mode C)."""
        if self.mode == "C" and self.k.shape[a] >= 4 * LANES and self.k.reduce_op != "prod":
            return 4
        return 1

    def _per_unroll(self, fn) -> None:
        """Run fn(u) once per unrolled vector, with idx(V) advanced by 4u in a scoped env."""
        var = self.env[(ir.idx(self.V), "s")]
        for u in range(self.unroll):
            saved = dict(self.env)
            if u:
                loc = self.f.local(I32)
                self.f.local_get(var).i32_const(LANES * u).i32_add().local_set(loc)
                self.env[(ir.idx(self.V), "s")] = loc
            fn(u)
            self.env = saved

    def _pre_splats(self) -> None:
        """Splat loop-invariant values used by vector nodes once, before the vector loop."""
        V = self.V
        for nd in self.order:
            if self.deps[nd] >> V & 1 and nd.op not in ("load",):
                for s in nd.srcs:
                    if not self.deps[s] >> V & 1 and (s, "s") in self.env:
                        self.vget(s)

    def _emit_out_loops(self, a: int) -> None:
        if a == self.nk:
            self._emit_element()
            return

        def inner():
            self._pre_emit(a)
            self._emit_out_loops(a + 1)

        if a == self.V and self.mode in ("A", "C"):
            self._split_loop(a, lambda: self._emit_out_loops(a + 1), lambda: self._emit_out_loops(a + 1))
        else:
            self._loop(a, 1, inner)

    def _emit_element(self) -> None:
        """Inside all output loops: reduce (if any), evaluate the epilogue, store."""
        k = self.k
        if k.reduce_op:
            self._emit_reduction()
        if self.vec:

            def store(u):
                if k.reduce_op:
                    self.env[(ir.acc(k.body.dtype), "v")] = self._red_state_u[u]
                self._store_vector(self.vget(k.epilogue), k.epilogue.dtype)

            self._per_unroll(store)
        else:
            self._store(self.get(k.epilogue), k.epilogue.dtype)

    # ------------------------------------------------------------------ reductions

    def _identity(self, op: str, d) -> float | int:
        """The value reduction op starts from (the lowest value of d for max, the highest for min)."""
        lo, hi = (-math.inf, math.inf) if _float(d) else (0, 1) if d.kind == "b" else (_int_min(d), _int_max(d))
        start = {"sum": 0, "prod": 1, "and": 1, "or": 0, "max": lo, "argmax": lo, "min": hi, "argmin": hi}.get(op)
        if start is None:
            raise NotImplementedError(f"wasm backend: reduction {op}")
        return start

    def _emit_reduction(self) -> None:
        k, f = self.k, self.f
        op, d = k.reduce_op, k.body.dtype
        acc_node = ir.acc(d)
        vec_acc = self.vec  # mode C main region: one accumulator per output lane
        if op in ("argmax", "argmin"):
            if self.nr != 1:
                raise NotImplementedError("wasm backend: arg reductions over several axes")
            best = f.local(valtype(d))
            bidx = f.local(I32)
            self._const(self._identity(op, d), d)
            f.local_set(best)
            f.i32_const(0).local_set(bidx)
            self._red_state = (best, bidx)
            self._emit_red_loops(self.nk)
            self.env[(ir.acc(dtypes.int32), "s")] = bidx
            return
        wide = self._wide_sum()
        if vec_acc:
            accs = []
            for _ in range(self.unroll):
                acc = f.local(V128)
                self._vconst(self._identity(op, d), d)
                f.local_set(acc)
                accs.append(acc)
            self._red_state = accs[0]
            self._red_state_u = accs
            if wide:  # an (lo, hi) pair of f64x2 totals per accumulator
                self._totals = [(f.local(V128), f.local(V128)) for _ in accs]
                for pair in self._totals:
                    for t in pair:
                        f.v128_const(bytes(16)).local_set(t)
            self._emit_red_loops(self.nk)
            if wide:
                for acc, (lo, hi) in zip(accs, self._totals):
                    self._f64x2_pair_to_f32x4(lo, hi, acc)
            self.env[(acc_node, "v")] = accs[0]
        else:
            acc = f.local(F64 if wide else valtype(d))  # a float32 sum adds up in float64
            self._const(self._identity(op, d), dtypes.float64 if wide else d)
            f.local_set(acc)
            self._red_state = acc
            self._emit_red_loops(self.nk)
            if wide:
                acc32 = f.local(F32)
                f.local_get(acc).f32_demote_f64().local_set(acc32)
                acc = acc32
            self.env[(acc_node, "s")] = acc

    def _emit_red_loops(self, a: int) -> None:
        if a == self.n:
            self._combine()
            return

        def inner():
            self._pre_emit(a)
            self._emit_red_loops(a + 1)

        if a == self.n - 1 and self.vec and self.mode == "C" and self._wide_sum():
            # the vector accumulators (one per output lane) restart every ROW_BLOCK rows
            def flush():
                for acc, (lo, hi) in zip(self._red_state_u, self._totals):
                    self._flush_vec(acc, lo, hi)

            self._blocks(a, 1, inner, flush, ROW_BLOCK)
        elif a == self.V and self.mode == "B":
            f = self.f
            k = self.k
            op, d = k.reduce_op, k.body.dtype
            scalar_acc = self._red_state
            unroll = 4 if k.shape[a] >= 4 * LANES else 1
            vaccs = []
            for _ in range(unroll):
                vaccs.append(f.local(V128))
                self._vconst(self._identity(op, d), d)
                f.local_set(vaccs[-1])
            vacc = vaccs[0]
            self._pre_splats()

            def main(u):
                def body():
                    self.vec, self.unroll = True, u
                    self._pre_emit(a)
                    self._red_state, self._red_state_u = vacc, vaccs
                    self._emit_red_loops(a + 1)
                    self._red_state = scalar_acc
                    self.vec, self.unroll = False, 1

                return body

            wide = self._wide_sum()  # then scalar_acc is the float64 total
            if unroll > 1:  # independent accumulators hide the add latency
                if wide:
                    self._blocks(a, LANES * unroll, main(unroll), lambda: self._flush_lanes(vaccs, scalar_acc))
                else:
                    self._loop(a, LANES * unroll, main(unroll))
                self._loop(a, LANES, main(1), start=False)
                for extra in vaccs[1:]:
                    f.local_get(vacc).local_get(extra)
                    self._vcombine(op, d)
                    f.local_set(vacc)
            else:
                self._loop(a, LANES, main(1))
            if wide:
                self._add_lanes_f64(vacc, scalar_acc)
            else:  # fold the lanes into the scalar accumulator
                for lane in range(LANES):
                    tmp = f.local(valtype(d))
                    f.local_get(vacc)
                    self._extract(lane, d)
                    f.local_set(tmp)
                    self._combine_into(scalar_acc, tmp, op, d)
            self._loop(a, 1, inner, start=False)
        else:
            self._loop(a, 1, inner)

    def _wide_sum(self) -> bool:
        """A float32 sum keeps float64 totals: its float32 accumulators restart every SUM_BLOCK
        values (16 float32 accumulators over 2^29 ones stalled at 2^24, and long row, column or
        strided sums lost 10-200x JAX's accuracy; issue 15.5)."""
        return self.k.reduce_op == "sum" and self.k.body.dtype.name == "float32"

    def _blocks(self, a: int, step: int, body, flush, block: int = SUM_BLOCK) -> None:
        """for idx(a) step `step` as blocks of `block` iterations, flush() after each block
        (the accumulators join the float64 totals and restart at 0)."""
        f = self.f
        var = self.idx_local.get((a, "var"))
        if var is None:
            var = self.idx_local[(a, "var")] = f.local(I32)
        lim, bend = f.local(I32), f.local(I32)
        end = self._axis_end(a)
        self._axis_start(a)()
        f.local_set(var)
        end()
        f.i32_const(step - 1).i32_sub().local_set(lim)
        with f.block(), f.loop():
            f.local_get(var).local_get(lim).i32_ge_s().br_if(1)
            # this block ends `block` steps on, or at the axis end
            f.local_get(var).i32_const(block * step).i32_add().local_set(bend)
            end()
            f.local_get(bend)
            end()
            f.local_get(bend).op("i32.lt_s")
            f.select().local_set(bend)
            self._loop(a, step, body, start=False, end=lambda: f.local_get(bend))
            flush()
            f.br(0)

    def _flush_lanes(self, vaccs: list, total: int) -> None:
        """total (f64) += the lanes of the float32 vector accumulators, which restart at 0."""
        f = self.f
        first = vaccs[0]
        for acc in vaccs[1:]:
            f.local_get(first).local_get(acc).op("f32x4.add").local_set(first)
        self._add_lanes_f64(first, total)
        for acc in vaccs:
            self._vconst(0.0, dtypes.float32)
            f.local_set(acc)

    def _high_half(self, vec: int) -> int:
        """A local holding lanes 2, 3 of the f32x4 vec in lanes 0, 1."""
        f = self.f
        out = f.local(V128)
        f.local_get(vec).local_get(vec).i8x16_shuffle(list(range(8, 16)) * 2).local_set(out)
        return out

    def _flush_vec(self, acc: int, lo: int, hi: int) -> None:
        """(lo, hi) f64x2 totals += the four float32 lanes of acc, which restarts at 0."""
        f = self.f
        for total, part in ((lo, acc), (hi, self._high_half(acc))):
            f.local_get(total).local_get(part).op("f64x2.promote_low_f32x4").op("f64x2.add").local_set(total)
        self._vconst(0.0, dtypes.float32)
        f.local_set(acc)

    def _f64x2_pair_to_f32x4(self, lo: int, hi: int, out: int) -> None:
        """out = the f32x4 (lo[0], lo[1], hi[0], hi[1]), each rounded once."""
        f = self.f
        f.local_get(lo).op("f32x4.demote_f64x2_zero").local_get(hi).op("f32x4.demote_f64x2_zero")
        f.i8x16_shuffle(list(range(8)) + list(range(16, 24))).local_set(out)

    def _add_lanes_f64(self, vec: int, total: int) -> None:
        """total (f64) += the four float32 lanes of vec."""
        f = self.f
        for lane in range(LANES):
            f.local_get(total).local_get(vec)
            self._extract(lane, dtypes.float32)
            f.op("f64.promote_f32").op("f64.add").local_set(total)

    def _combine(self) -> None:
        k, f = self.k, self.f
        op, d = k.reduce_op, k.body.dtype
        if op in ("argmax", "argmin"):
            best, bidx = self._red_state
            v = self.get(k.body)
            # replace when v beats best, or v is the first NaN (a NaN best is never replaced)
            t = valtype(d)
            cmp = "gt" if op == "argmax" else "lt"
            f.local_get(v).local_get(best)
            self._cmp(cmp, d)
            if _float(d):
                f.local_get(v).local_get(v).op(t + ".ne").i32_or()
                f.local_get(best).local_get(best).op(t + ".eq").i32_and()
            with f.if_():
                f.local_get(v).local_set(best)
                f.local_get(self.env[(ir.idx(self.n - 1), "s")]).local_set(bidx)
            return
        acc = self._red_state
        if self.vec and self.mode in ("B", "C"):

            def one(u):
                a = self._red_state_u[u]
                v = self.vget(k.body)
                f.local_get(a).local_get(v)
                self._vcombine(op, d)
                f.local_set(a)

            self._per_unroll(one)
        elif self.vec:
            v = self.vget(k.body)
            f.local_get(acc).local_get(v)
            self._vcombine(op, d)
            f.local_set(acc)
        elif self._wide_sum():  # the float64 total of a float32 sum
            v = self.get(k.body)
            f.local_get(acc).local_get(v).f64_promote_f32().f64_add().local_set(acc)
        else:
            v = self.get(k.body)
            self._combine_into(acc, v, op, d)

    def _combine_into(self, acc: int, v: int, op: str, d) -> None:
        self.f.local_get(acc).local_get(v)
        self._binop(_REDUCE_BINARY[op], d, [acc, v], pushed=True)
        self.f.local_set(acc)

    def _vcombine(self, op: str, d) -> None:
        """Combine the two vectors on the stack."""
        row = VECTOR[_REDUCE_BINARY[op]].get(_class(d))
        if row is None:
            raise NotImplementedError(f"wasm backend: reduction {op} on {d.name}")
        self._run(row, d, [None, None], pushed=True)

    # ------------------------------------------------------------------ values

    def varies(self, nd: Node) -> bool:
        if self.V < 0:
            return False
        d = self.deps.get(nd)
        if d is None:
            return _depends_on(nd, self.V)
        return bool(d >> self.V & 1)

    def get(self, nd: Node) -> int:
        """Local holding nd in the natural form of the current region (vector iff it varies)."""
        if self.vec and self.varies(nd):
            return self.vget(nd)
        return self._local(nd, "s", self._emit_scalar)

    def vget(self, nd: Node) -> int:
        """Local holding nd as a v128 (a splat if it does not vary)."""
        if not self.varies(nd):
            return self._local(nd, "splat", self._emit_splat)
        return self._local(nd, "v", self._emit_vector)

    def _local(self, nd: Node, form: str, emit: Callable) -> int:
        """The local holding nd in `form` ("s", "splat" or "v"), emitted by emit(nd) the first time."""
        key = (nd, form)
        loc = self.env.get(key)
        if loc is None:
            loc = self.env[key] = emit(nd)
        return loc

    def _emit_splat(self, nd: Node) -> int:
        """A new v128 local holding nd's scalar in every lane."""
        self.f.local_get(self.get_scalar(nd))
        self._splat(nd.dtype)
        loc = self.f.local(V128)
        self.f.local_set(loc)
        return loc

    def get_scalar(self, nd: Node) -> int:
        saved = self.vec
        self.vec = False
        try:
            return self.get(nd)
        finally:
            self.vec = saved

    # ------------------------------------------------------------------ scalar emission

    def _emit_scalar(self, nd: Node) -> int:
        f = self.f
        op = nd.op
        d = nd.dtype
        if op == "const":
            self._const(nd.arg, d)
        elif op == "idx":
            loc = self.env.get((nd, "s"))
            if loc is None:  # an axis outside the loops (size-1 epilogue axes of reductions)
                f.i32_const(0)
            else:
                return loc
        elif op == "acc":
            raise AssertionError("acc used outside the epilogue")
        elif op == "load":
            i, _ = nd.arg
            off, valid = self.load_info[nd]
            self._load_scalar(i, d, self.get(off), None if valid.op == "const" and valid.arg else self.get(valid))
        elif op == "gather":
            self._gather_scalar(nd.arg, d, self.get(nd.srcs[0]))
        elif op == "where" and nd.arg == "cold":
            return self._cold_where(nd)
        else:
            srcs = [self.get(s) for s in nd.srcs]
            self._scalar_op(nd, srcs)
        loc = f.local(valtype(d))
        f.local_set(loc)
        return loc

    def _const(self, v, d) -> None:
        t = valtype(d)
        if d.name in HALF:  # the value the narrow dtype holds, as a stored one would load
            self.f.f32_const(_narrow_value(float(v), d.name))
        elif t in (F32, F64):
            getattr(self.f, t + "_const")(float(v))
        else:
            getattr(self.f, t + "_const")(int(v) & ((1 << (64 if t == I64 else 32)) - 1))

    def _addr(self, base_param: int, off: int, size: int) -> None:
        f = self.f
        f.local_get(base_param).local_get(off)
        if size > 1:
            f.i32_const(size.bit_length() - 1).i32_shl()
        f.i32_add()

    def _load_scalar(self, i: int, d, off: int, valid: int | None) -> None:
        f = self.f
        t, load, _ = DTYPE_INFO[d.name]
        self._addr(self.p_in[i], off, d.itemsize)
        if valid is not None:
            f.local_get(self.p_in[i]).local_get(valid).select()
        f.op(load, align=0)
        self._half(d, "load")
        if valid is not None:
            self._const(0, d)
            f.local_get(valid).select()

    def _gather_scalar(self, i: int, d, off: int) -> None:
        f = self.f
        t, load, _ = DTYPE_INFO[d.name]
        c = f.local(I32)
        n = self.p_len[i]
        # clamp to [0, len - 1] like the cpu backend
        f.local_get(off).local_get(n).i32_const(1).i32_sub().local_tee(c)
        f.local_get(off).local_get(c).i32_lt_s().select().local_tee(c)
        f.i32_const(0).local_get(c).i32_const(0).i32_gt_s().select().local_set(c)
        self._addr(self.p_in[i], c, d.itemsize)
        f.op(load, align=0)
        self._half(d, "load")

    def _store(self, val: int, d) -> None:
        f = self.f
        _, _, store = DTYPE_INFO[d.name]
        off = self.get_scalar(self.out_off)
        self._addr(self.p_out, off, d.itemsize)
        f.local_get(val)
        self._half(d, "store")
        f.op(store, align=0)

    def _wrap(self, d) -> None:
        """Bring an i32 result back into the range of a narrow integer dtype."""
        w = _WRAP.get(d.name)
        if w is not None:
            self._run(w, dtypes.int32)

    def _cmp(self, op: str, d) -> None:
        """Compare the two values on the stack."""
        self._binop(op, d, [None, None], pushed=True)

    def _scalar_op(self, nd: Node, srcs: list) -> None:
        op, d = nd.op, nd.dtype
        sd = nd.srcs[0].dtype
        if op == "cast":
            self.f.local_get(srcs[0])
            self._cast(sd, d)
            return
        if op == "bitcast":
            self.f.local_get(srcs[0])
            self._bitcast(sd, d)
            return
        self._emit_op(op, sd, srcs)
        if op not in _HALF_EXACT and op not in ir.COMPARE_OPS:
            self._half(d, "round")

    def _emit_op(self, op: str, sd, srcs: list, pushed: bool = False) -> None:
        """Emit op on srcs (locals; on the stack already if pushed), sources of dtype sd, through
        its row of SCALAR."""
        rows = SCALAR.get(op, {})
        row = rows.get(_class(sd))
        if row is None:
            raise NotImplementedError(f"wasm backend: {op} on {sd.name}")
        if callable(row):
            if pushed:
                srcs = self._spill(len(srcs), valtype(sd))
            row(self, op, sd, srcs)
        else:
            self._run(row, sd, srcs, pushed, op=op)

    def _spill(self, n: int, t: str) -> list:
        """The n values on the stack moved into new locals (the last on top)."""
        locs = [self.f.local(t) for _ in range(n)]
        for loc in reversed(locs):
            self.f.local_set(loc)
        return locs

    def _run(self, prog: str, d, srcs=(), pushed: bool = False, op: str = "", to=None, **extra) -> None:
        """Emit a row's program (see SCALAR) over operands srcs, values of dtype d, result dtype `to`."""
        f = self.f
        t = valtype(d)
        if "{" in prog:
            top = _bits(d) - 1 if t == I64 else 31
            widen = "i64.extend_i32_s" if t == I64 else ""
            prog = prog.format(t=t, s="s" if _signed(d) else "u", bits=_bits(d), top=top, widen=widen, **extra)
        toks = prog.split()
        if pushed:
            if toks[:2] == ["a", "b"] and "a" not in toks[2:] and "b" not in toks[2:]:
                toks = toks[2:]
            else:
                srcs = self._spill(len(srcs), t)
        temps: dict = {}
        for tok in toks:
            if tok in _OPERAND:
                f.local_get(srcs[_OPERAND[tok]])
            elif tok == "select":
                f.select()
            elif tok == "wrap":
                self._wrap(to or d)
            elif tok == "round":
                self._half(to or d, "round")
            elif tok in _VCONST:
                f.v128_const(_VCONST[tok])
            elif ":" in tok:
                kind, arg = tok.split(":", 1)
                if kind == "call":
                    f.call(self._callee(arg, op, d))
                elif kind in ("set", "tee", "get"):
                    name, _, ty = arg.partition(":")
                    if name not in temps:
                        temps[name] = f.local(ty or t)
                    getattr(f, "local_" + kind)(temps[name])
                else:  # typed constant, e.g. i32:1
                    self._const(float(arg) if kind[0] == "f" else int(arg), _CONST_DTYPE[kind])
            elif tok[0].isdigit() or tok[0] == "-" or tok == "inf":
                if t in (F32, F64):
                    self._fconst(t, float(tok))
                else:
                    self._const(int(tok), d)
            else:
                f.op(tok)

    def _callee(self, name: str, op: str, d) -> int:
        """Index of the helper function a row calls."""
        return {"fmod": lambda d: self._fmod(), "ipow": self._ipow, "nextafter": self._nextafter}[name](d)

    def _half(self, d, role: str) -> None:
        """Call half float d's helper for role (load: stored bits -> f32, store: f32 -> bits,
        round: f32 to d's precision); nothing for other dtypes."""
        if d.name in HALF:
            self.f.call(narrow_helper(self.m, d.name, role))

    def _fconst(self, t: str, v: float) -> None:
        (self.f.f64_const if t == F64 else self.f.f32_const)(v)

    def _zero(self, t: str) -> None:
        getattr(self.f, t + "_const")(0)

    def _binop(self, op: str, sd, srcs: list, pushed: bool = False) -> None:
        """Push op(srcs) for source dtype sd (if `pushed`, both operands are already on the stack)."""
        self._emit_op(op, sd, srcs, pushed)

    def _float_rem(self, op, sd, srcs) -> None:
        """fmod in f64 (exact for float32 operands too)."""
        f = self.f
        f.local_get(srcs[0]).local_get(srcs[1])
        if valtype(sd) == F32:
            bb = f.local(F64)
            f.f64_promote_f32().local_set(bb).f64_promote_f32().local_get(bb)
        f.call(self._fmod())
        if valtype(sd) == F32:
            f.f32_demote_f64()

    def _int_divrem(self, op, sd, a, b, pushed) -> None:
        f = self.f
        t = valtype(sd)
        g = f.local_get
        if pushed:
            a, b = self._spill(2, t)
        signed = _signed(sd)
        zero = f.local(I32)
        g(b).op(f"{t}.eqz").local_set(zero)
        safe = f.local(t)
        # divisor 0 (and -1, which can overflow) replaced by 1
        self._const(1, sd)
        g(b)
        g(zero)
        if signed and op == "div":
            g(b)
            self._const(-1, sd)
            f.op(f"{t}.eq").i32_or()
        f.select().local_set(safe)
        g(a)
        g(safe)
        f.op(f"{t}.{op}_{'s' if signed else 'u'}")
        if op == "div":
            if signed:  # x / -1 = -x (wrapping)
                r = f.local(t)
                f.local_set(r)
                self._zero(t)
                g(a).op(f"{t}.sub")
                g(r)
                g(b)
                self._const(-1, sd)
                f.op(f"{t}.eq").select()
            self._const(-1, sd)
            r = f.local(t)
            f.local_set(r)  # -1 saved; stack: quotient
            tmp = f.local(t)
            f.local_set(tmp)
            g(r)
            g(tmp)
            g(zero).select()
            self._wrap(sd)
        else:
            g(a)
            r = f.local(t)
            f.local_set(r)
            tmp = f.local(t)
            f.local_set(tmp)
            g(r)
            g(tmp)
            g(zero).select()

    def _floor_divmod(self, op, sd, a, b, pushed) -> None:
        """Floor division / modulo (index arithmetic; numpy's // and %), x // 0 = x % 0 = 0."""
        f = self.f
        t = valtype(sd)
        g = f.local_get
        if pushed:
            a, b = self._spill(2, t)
        if not _signed(sd):
            self._int_divrem("div" if op == "idiv" else "rem", sd, a, b, False)
            return
        q, r, fix = f.local(t), f.local(t), f.local(I32)
        self._int_divrem("div", sd, a, b, False)
        f.local_set(q)
        self._int_divrem("rem", sd, a, b, False)
        f.local_tee(r)
        self._zero(t)
        f.op(f"{t}.ne")
        g(r)
        g(b)
        f.op(f"{t}.xor")
        self._zero(t)
        f.op(f"{t}.lt_s").i32_and().local_set(fix)
        if op == "idiv":
            g(q)
            self._const(1, sd)
            f.op(f"{t}.sub")
            g(q)
            g(fix).select()
        else:
            g(r)
            g(b)
            f.op(f"{t}.add")
            g(r)
            g(fix).select()
            # x % 0 = 0 for numpy's mod
            self._zero(t)
            g(b).op(f"{t}.eqz")
            r2 = f.local(t)
            z = f.local(I32)
            f.local_set(z).local_set(r2).local_set(r)
            g(r2)
            g(r)
            g(z).select()
            return
        if op == "idiv":
            r2 = f.local(t)
            f.local_set(r2)
            self._zero(t)
            g(r2)
            g(b).op(f"{t}.eqz").select()
        self._wrap(sd)

    # ------------------------------------------------------------------ casts

    def _cast(self, src, dst) -> None:
        """Convert the value on the stack from dtype src to dst."""
        if src.name == dst.name:
            return
        row = CASTS[_cast_class(src), _cast_class(dst)]
        ts, td = valtype(src), valtype(dst)
        if callable(row):
            row(self, src, dst)
            return
        sfx = "u" if src.kind in "ub" else "s"
        conv = f"{F64 if td == F64 else F32}.convert_{ts}_{sfx}"
        resize = _RESIZE.get((ts, td), "").format(sfx)
        self._run(row, src, to=dst, conv=conv, resize=resize)

    def _float_to_int(self, src, dst) -> None:
        """Saturating, NaN -> 0."""
        f = self.f
        ts = valtype(src)
        sfx = "s" if _signed(dst) else "u"
        if valtype(dst) == I64 or _bits(dst) == 32:
            f.op(f"{valtype(dst)}.trunc_sat_{ts}_{sfx}")
            return
        f.op(f"i32.trunc_sat_{ts}_s")
        v = f.local(I32)
        f.local_set(v)
        lo, hi = _int_min(dst), _int_max(dst)
        f.i32_const(hi).local_get(v).local_get(v).i32_const(hi).i32_gt_s().select().local_set(v)
        f.i32_const(lo).local_get(v).local_get(v).i32_const(lo).i32_lt_s().select()

    def _bitcast(self, src, dst) -> None:
        f = self.f
        if src.itemsize != dst.itemsize:
            raise NotImplementedError(f"wasm backend: bitcast {src.name} -> {dst.name}")
        ts, td = valtype(src), valtype(dst)
        if src.name in HALF or dst.name in HALF:  # through the 16 or 8 stored bits
            if src.name in HALF:
                self._half(src, "store")
            else:
                f.i32_const((1 << _bits(src)) - 1).i32_and()
            self._half(dst, "load")
            if dst.name == "int16":
                f.i32_extend16_s()
            elif dst.name == "int8":
                f.i32_extend8_s()
            return
        if ts == td:
            self._wrap(dst)
        elif (ts, td) in _REINTERPRET:
            f.op(_REINTERPRET[ts, td])
        else:
            raise NotImplementedError(f"wasm backend: bitcast {src.name} -> {dst.name}")

    # ------------------------------------------------------------------ helper functions

    def _helper(self, name: str, params: list, results: list, body) -> int:
        """Index of the module's helper function `name`, written by body(f) the first time
        (self.f is f meanwhile, so the op emitters write into it)."""
        key = "pyjax." + name
        if key not in self.m.memo:
            saved, f = getattr(self, "f", None), self.m.function(name, params, results)
            self.m.memo[key] = f.index
            self.f = f
            try:
                body(f)
            finally:
                self.f = saved
            f.finish()
        return self.m.memo[key]

    def _fmod(self) -> int:
        """fmod(a, b) in f64, exact (repeated exact subtraction of b * 2**k)."""
        return self._helper("pyjax_fmod_f64", [F64, F64], [F64], self._fmod_body)

    def _fmod_body(self, f) -> None:
        a, b, ax, ay, t, k = 0, 1, f.local(F64), f.local(F64), f.local(F64), f.local(I32)
        ilogb = self._ilogb()
        f.local_get(a).f64_abs().local_set(ax)
        f.local_get(b).f64_abs().local_set(ay)
        # nan / inf / zero divisor -> nan; |b| = inf -> a
        f.local_get(ax).f64_const(math.inf).f64_eq().local_get(ay).f64_const(0.0).f64_eq().i32_or()
        f.local_get(a).local_get(a).f64_ne().i32_or().local_get(b).local_get(b).f64_ne().i32_or()
        with f.if_():
            f.f64_const(math.nan).return_()
        f.local_get(ay).f64_const(math.inf).f64_eq()
        with f.if_():
            f.local_get(a).return_()
        with f.block(), f.loop():
            f.local_get(ax).local_get(ay).f64_lt().br_if(1)
            f.local_get(ax).call(ilogb).local_get(ay).call(ilogb).i32_sub().local_tee(k)
            f.i32_eqz()
            with f.if_(F64):
                f.local_get(ay)
                f.else_()
                # t = ay * 2**(k-1) in steps of at most 2**1000 (exact: scaling up, no overflow)
                f.local_get(ay).local_set(t)
                f.local_get(k).i32_const(1).i32_sub().local_set(k)
                for _ in range(3):
                    f.local_get(t)
                    f.local_get(k).i32_const(1000).local_get(k).i32_const(1000).i32_lt_s().select()
                    f.i64_extend_i32_s().i64_const(1023).i64_add().i64_const(52).i64_shl().f64_reinterpret_i64()
                    f.f64_mul().local_set(t)
                    f.local_get(k).i32_const(1000).i32_sub().local_set(k)
                    f.i32_const(0).local_get(k).local_get(k).i32_const(0).i32_lt_s().select().local_set(k)
                f.local_get(t).f64_const(2.0).f64_mul().local_get(t)
                f.local_get(t).f64_const(2.0).f64_mul().local_get(ax).f64_le().select()
            f.local_set(t)
            f.local_get(ax).local_get(t).f64_sub().local_set(ax)
            f.br(0)
        f.local_get(ax).local_get(a).f64_copysign()

    def _ilogb(self) -> int:
        return self._helper("pyjax_ilogb_f64", [F64], [I32], self._ilogb_body)

    def _ilogb_body(self, f) -> None:
        bits, e = f.local(I64), f.local(I32)
        f.local_get(0).i64_reinterpret_f64().local_tee(bits).i64_const(52).i64_shr_u().i32_wrap_i64()
        f.i32_const(0x7FF).i32_and().local_tee(e)
        f.i32_const(1023).i32_sub()
        f.i32_const(-1011).local_get(bits).i64_const((1 << 52) - 1).i64_and().i64_clz().i32_wrap_i64().i32_sub()
        f.local_get(e).select()

    def _nextafter(self, d) -> int:
        t = valtype(d)
        return self._helper(f"pyjax_nextafter_{d.name}", [t, t], [t], lambda f: self._nextafter_body(f, d))

    def _nextafter_body(self, f, d) -> None:
        t = valtype(d)
        a, b = 0, 1
        g = f.local_get
        if d.name == "float64":
            it, bits_of, from_bits, sign = I64, "i64.reinterpret_f64", "f64.reinterpret_i64", 1 << 63
        elif d.name == "float32":
            it, bits_of, from_bits, sign = I32, "i32.reinterpret_f32", "f32.reinterpret_i32", 1 << 31
        else:
            it, sign = I32, 1 << (_bits(d) - 1)
            bits_of = ("call", narrow_helper(self.m, d.name, "store"))
            from_bits = ("call", narrow_helper(self.m, d.name, "load"))

        def emit(x):
            if isinstance(x, tuple):
                f.call(x[1])
            else:
                f.op(x)

        # nan in either -> nan; equal -> b
        g(a).local_get(a).op(f"{t}.ne").local_get(b).local_get(b).op(f"{t}.ne").i32_or()
        with f.if_():
            g(a).local_get(b).op(f"{t}.add").return_()
        g(a).local_get(b).op(f"{t}.eq")
        with f.if_():
            g(b).return_()
        x = f.local(it)
        g(a)
        self._fconst(t, 0.0)
        f.op(f"{t}.eq")
        with f.if_():  # smallest subnormal with the sign of b
            g(b)
            emit(bits_of)
            (f.i64_const if it == I64 else f.i32_const)(sign)
            f.op(f"{it}.and")
            (f.i64_const if it == I64 else f.i32_const)(1)
            f.op(f"{it}.or")
            emit(from_bits)
            f.return_()
        g(a)
        emit(bits_of)
        f.local_set(x)
        # away from zero when a < b has the same sign as a > 0
        g(x)
        (f.i64_const if it == I64 else f.i32_const)(1)
        f.op(f"{it}.add")
        g(x)
        (f.i64_const if it == I64 else f.i32_const)(1)
        f.op(f"{it}.sub")
        g(a).local_get(b).op(f"{t}.lt")
        g(a)
        self._fconst(t, 0.0)
        f.op(f"{t}.gt").i32_eq().select()
        emit(from_bits)

    def _ipow(self, d) -> int:
        t = valtype(d)
        return self._helper(f"pyjax_ipow_{d.name}", [t, t], [t], lambda f: self._ipow_body(f, d))

    def _ipow_body(self, f, d) -> None:
        t = valtype(d)
        x, y, r = 0, 1, f.local(t)
        c = f.i64_const if t == I64 else f.i32_const
        if _signed(d):  # negative exponent: 1 for x = 1, +-1 for x = -1, else 0
            f.local_get(y)
            c(0)
            f.op(f"{t}.lt_s")
            with f.if_():
                f.local_get(x)
                c(1)
                f.op(f"{t}.eq")
                with f.if_():
                    c(1)
                    f.return_()
                f.local_get(x)
                c(-1)
                f.op(f"{t}.eq")
                with f.if_():
                    c(-1)
                    c(1)
                    f.local_get(y)
                    c(1)
                    f.op(f"{t}.and")
                    if t == I64:
                        f.i64_const(0).i64_ne()
                    f.select().return_()
                c(0)
                f.return_()
        c(1)
        f.local_set(r)
        with f.block(), f.loop():
            f.local_get(y).op(f"{t}.eqz").br_if(1)
            f.local_get(y)
            c(1)
            f.op(f"{t}.and")
            if t == I64:
                f.i64_const(0).i64_ne()
            with f.if_():
                f.local_get(r).local_get(x).op(f"{t}.mul").local_set(r)
            f.local_get(x).local_get(x).op(f"{t}.mul").local_set(x)
            f.local_get(y)
            c(1)
            f.op(f"{t}.shr_u").local_set(y)
            f.br(0)
        f.local_get(r)
        self._wrap(d)

    # ------------------------------------------------------------------ vector emission

    def _splat(self, d) -> None:
        if valtype(d) not in (F32, I32):
            raise AssertionError(f"no vector form for {d.name}")
        self._to_lane(d)
        self.f.op(f"{_lanes(d)}.splat")

    def _to_lane(self, d) -> None:
        """The scalar of dtype d on the stack as a lane value (bool 0/1 -> lane mask 0/-1)."""
        if d.kind == "b":
            m = self.f.local(I32)
            self.f.local_set(m).i32_const(0).local_get(m).i32_sub()

    def _vconst(self, v, d) -> None:
        if d.name == "float32":
            self.f.v128_const(struct.pack("<4f", *[float(v)] * 4))
        elif d.kind == "b":
            self.f.v128_const(struct.pack("<4i", *[-1 if v else 0] * 4))
        else:
            self.f.v128_const(struct.pack("<4I", *[int(v) & 0xFFFFFFFF] * 4))

    def _extract(self, lane: int, d) -> None:
        """v128 on the stack -> scalar lane in the scalar representation of d."""
        self.f.op(f"{_lanes(d)}.extract_lane", lane)
        if d.kind == "b":
            self.f.i32_const(1).i32_and()

    def _emit_vector(self, nd: Node) -> int:
        f = self.f
        op = nd.op
        if op == "idx":
            f.local_get(self.env[(nd, "s")]).i32x4_splat()
            f.v128_const(struct.pack("<4i", 0, 1, 2, 3)).i32x4_add()
        elif op == "acc":
            raise AssertionError("vector acc not set")
        elif op == "load":
            self._load_vector(nd)
        elif op == "where" and nd.arg == "cold":
            return self._cold_where(nd)
        elif op == "where":
            c, a, b = nd.srcs
            if self.varies(c):
                f.local_get(self.vget(a)).local_get(self.vget(b)).local_get(self.vget(c)).v128_bitselect()
            else:
                f.local_get(self.vget(a)).local_get(self.vget(b)).local_get(self.get_scalar(c)).select(V128)
        elif not self._vector_op(nd):
            self._per_lane(nd)
        loc = f.local(V128)
        f.local_set(loc)
        return loc

    def _cold_where(self, nd: Node) -> int:
        """A `where` marked cold (mathlib's `rarely`): the false sides are computed as usual, the
        true sides only in an `if` taken when some lane's condition holds (v128.any_true), then
        selected. Cold wheres of one condition share the `if`; what is computed inside it is
        forgotten after it (the env is restored), what the true sides share with code outside
        it is computed before."""
        f = self.f
        c = nd.srcs[0]
        vec = self.vec and self.varies(nd)
        group = [w for w in self.order if w.op == "where" and w.arg == "cold" and w.srcs[0] is c]
        group = [w for w in group if w not in self.cold and self._same_place(w, nd)] if nd not in self.cold else []
        group = group or [nd]
        kind = "v" if vec else "s"
        out = {}
        for w in group:
            loc = f.local(V128 if vec else valtype(w.dtype))
            f.local_get(self.vget(w.srcs[2]) if vec else self.get(w.srcs[2])).local_set(loc)
            out[w] = loc
        for w in group:  # what the true sides share with code outside the `if`
            for x in ir.walk(w.srcs[1], children=self._children):
                if x not in self.cold and x.op != "idx" and not self.accdep[x]:
                    self.get(x)
        if vec and self.varies(c):
            cv = self.vget(c)
            f.local_get(cv).op("v128.any_true")
        else:
            cv = self.get_scalar(c)
            f.local_get(cv)
        saved = dict(self.env)
        with f.if_():
            for w in group:
                a = self.vget(w.srcs[1]) if vec else self.get(w.srcs[1])
                if vec and self.varies(c):
                    f.local_get(a).local_get(out[w]).local_get(cv).v128_bitselect()
                else:
                    f.local_get(a)
                f.local_set(out[w])
        self.env = saved
        for w in group:
            self.env[(w, kind)] = out[w]
        return out[nd]

    def _same_place(self, w: Node, nd: Node) -> bool:
        """w can be computed where nd is: same loop level, vectorness and reduction scope."""
        return (
            self.level[w] == self.level[nd]
            and self.varies(w) == self.varies(nd)
            and self.accdep[w] == self.accdep[nd]
            and (w in self.body_nodes) == (nd in self.body_nodes)
        )

    def _vector_op(self, nd: Node) -> bool:
        """Emit nd with SIMD instructions if it has a SIMD form; False to fall back to lanes."""
        op, d = nd.op, nd.dtype
        sd = nd.srcs[0].dtype if nd.srcs else d
        vs = [self.vget(s) for s in nd.srcs] if op not in ("shl", "shr") else None
        if op == "cast":
            row = VECTOR_CASTS.get((sd.name, d.name))
        else:
            row = VECTOR.get(op, {}).get(_class(sd))
        if row is None:
            return False
        if callable(row):
            return row(self, nd, vs) is not False
        self._run(row, sd, vs, op=op)
        return True

    def _vshift(self, nd: Node, vs) -> bool:
        """Shift by an amount the same in every lane (else lane by lane)."""
        f = self.f
        a, b = nd.srcs
        if self.varies(b):
            return False
        av, bs = self.vget(a), self.get_scalar(b)
        small = f.local(I32)
        f.local_get(bs).i32_const(32).i32_lt_u().local_set(small)
        if nd.op == "shl":
            f.local_get(av).local_get(bs).i32x4_shl().v128_const(bytes(16)).local_get(small).select(V128)
        elif _signed(a.dtype):
            f.local_get(av).local_get(bs).i32_const(31).local_get(small).select().i32x4_shr_s()
        else:
            f.local_get(av).local_get(bs).i32x4_shr_u().v128_const(bytes(16)).local_get(small).select(V128)
        return True

    def _vmadd(self, nd: Node, vs) -> None:
        self.f.local_get(vs[0]).local_get(vs[1])
        if self.relaxed:
            self.f.local_get(vs[2]).f32x4_relaxed_madd()
        else:
            self.f.f32x4_mul().local_get(vs[2]).f32x4_add()

    def _per_lane(self, nd: Node) -> None:
        """Compute a node lane by lane with the scalar code (ops without a SIMD form)."""
        f = self.f
        d = nd.dtype
        res = f.local(V128)
        f.v128_const(bytes(16)).local_set(res)
        if nd.op == "gather":
            srcs_nodes = nd.srcs
        else:
            srcs_nodes = nd.srcs
        vlocs = [(self.vget(s) if self.varies(s) else None) for s in srcs_nodes]
        slocs = [(None if self.varies(s) else self.get_scalar(s)) for s in srcs_nodes]
        for lane in range(LANES):
            lane_srcs = []
            for s, vl, sl in zip(srcs_nodes, vlocs, slocs):
                if vl is None:
                    lane_srcs.append(sl)
                    continue
                tmp = f.local(valtype(s.dtype))
                f.local_get(vl)
                self._extract(lane, s.dtype)
                f.local_set(tmp)
                lane_srcs.append(tmp)
            f.local_get(res)
            if nd.op == "gather":
                self._gather_scalar(nd.arg, d, lane_srcs[0])
            else:
                self._scalar_op(nd, lane_srcs)
            self._to_lane(d)
            f.op(f"{_lanes(d)}.replace_lane", lane)
            f.local_set(res)
        f.local_get(res)

    def _load_vector(self, nd: Node) -> None:
        f = self.f
        i, _ = nd.arg
        d = nd.dtype
        off, valid = self.load_info[nd]
        info = self.rest.get(nd)
        size = d.itemsize
        _, load, _ = DTYPE_INFO[d.name]
        if info is None:  # general: vector offsets, lane by lane
            ov = self.vget(off)
            vv = None if (valid.op == "const" and valid.arg) else self.vget(valid)
            res = f.local(V128)
            f.v128_const(bytes(16)).local_set(res)
            for lane in range(LANES):
                o = f.local(I32)
                f.local_get(ov).i32x4_extract_lane(lane).local_set(o)
                vl = None
                if vv is not None:
                    vl = f.local(I32)
                    f.local_get(vv).i32x4_extract_lane(lane).i32_const(1).i32_and().local_set(vl)
                f.local_get(res)
                self._load_scalar(i, d, o, vl)
                self._to_lane(d)
                f.op(f"{_lanes(d)}.replace_lane", lane)
                f.local_set(res)
            f.local_get(res)
            return
        rest, coeff = info
        r = self.get_scalar(rest)
        var = self.env[(ir.idx(self.V), "s")]
        addr = f.local(I32)
        # addr = ptr + (rest + coeff * i) * size
        f.local_get(self.p_in[i]).local_get(r).local_get(var)
        if coeff != 1:
            f.i32_const(coeff).i32_mul()
        f.i32_add()
        if size > 1:
            f.i32_const(size.bit_length() - 1).i32_shl()
        f.i32_add().local_set(addr)
        has_valid = not (valid.op == "const" and valid.arg)
        if has_valid:
            vloc = self.get_scalar(valid)
            f.local_get(addr).local_get(self.p_in[i]).local_get(vloc).select().local_set(addr)
        if coeff == 1:
            if d.kind == "b":
                f.local_get(addr).v128_load32_zero(align=0).i16x8_extend_low_i8x16_u().i32x4_extend_low_i16x8_u()
                f.v128_const(bytes(16)).i32x4_ne()
            else:
                f.local_get(addr).v128_load(align=0)
        else:
            step = coeff * size
            res = f.local(V128)
            for lane in range(LANES):
                f.local_get(addr)
                if lane:
                    f.i32_const(step * lane).i32_add()
                f.op(load, align=0)
                self._to_lane(d)
                if lane == 0:
                    f.op(f"{_lanes(d)}.splat")
                else:
                    f.local_set(r2 := f.local(valtype(d))).local_get(res).local_get(r2)
                    f.op(f"{_lanes(d)}.replace_lane", lane)
                f.local_set(res)
            f.local_get(res)
        if has_valid:
            f.v128_const(bytes(16)).local_get(vloc).select(V128)

    def _store_vector(self, val: int, d) -> None:
        f = self.f
        info = self.out_rest
        var = self.env[(ir.idx(self.V), "s")]
        size = d.itemsize
        if info is None or info[1] != 1:
            raise AssertionError("vector store needs a contiguous output")
        rest, _ = info
        r = self.get_scalar(rest)
        f.local_get(self.p_out).local_get(r).local_get(var).i32_add()
        if size > 1:
            f.i32_const(size.bit_length() - 1).i32_shl()
        f.i32_add()
        f.local_get(val)
        if d.kind == "b":
            f.v128_const(struct.pack("<4i", 1, 1, 1, 1)).v128_and()
            t = f.local(V128)
            f.local_tee(t).local_get(t).i16x8_narrow_i32x4_u()
            f.local_tee(t).local_get(t).i8x16_narrow_i16x8_u()
            f.v128_store32_lane(0, align=0)
        else:
            f.v128_store(align=0)


# ---- core ops as Wasm ---------------------------------------------------------------------------
# op -> {class: row}. Classes: "f" (floats: f32, f64, and the half floats computed in f32), "i"
# (signed integers), "u" (unsigned integers), "b" (bool, an i32 0/1); a key of several letters is
# a row for each. A row is a program in WAT text order or a function (codegen, op, dtype, operand
# locals) for the few that need more. Program words: a b c (operand i's local), a number (a
# constant of the operands' type), T:n (a constant of type T), an instruction name, select, wrap
# (back into a narrow integer range), round (to a half float result), call:name (a helper: math,
# fmod, ipow, nextafter), set/tee/get:name[:type] (a temporary), v0 / vf1 (a v128 of 0 / 1.0f).
# Fields: {t} (value type), {s} (s or u), {bits}, {top} (the sign-fill shift), {widen} (an i32
# result to an i64 operand type).


def _rows(table: dict) -> dict:
    return {op: {c: r for cs, r in row.items() for c in cs} for op, row in table.items()}


def _bit_count(cg, op, sd, srcs) -> None:
    """popcnt/clz over the dtype's bits."""
    f, t, bits = cg.f, valtype(sd), _bits(sd)
    f.local_get(srcs[0])
    if t == I32 and bits < 32:
        f.i32_const((1 << bits) - 1).i32_and()
    f.op(f"{t}.{op}")
    if t == I32 and bits < 32 and op == "clz":
        f.i32_const(32 - bits).i32_sub()
    cg._wrap(sd)  # a 2-bit count of 2 wraps, as JAX's


def _int_divrem(cg, op, sd, srcs) -> None:
    cg._int_divrem(op, sd, srcs[0], srcs[1], False)


def _floor_divmod(cg, op, sd, srcs) -> None:
    cg._floor_divmod(op, sd, srcs[0], srcs[1], False)


def _compare(op: str) -> dict:
    if op in ("eq", "ne"):
        return {"fiub": f"a b {{t}}.{op}"}
    return {"f": f"a b {{t}}.{op}", "i": f"a b {{t}}.{op}_s", "ub": f"a b {{t}}.{op}_u"}


SCALAR = _rows(
    {
        # unary
        "neg": {"f": "a {t}.neg", "iub": "0 a {t}.sub wrap"},
        "not": {"b": "a i32:1 i32.xor", "iu": "a -1 {t}.xor wrap"},
        "abs": {"f": "a {t}.abs", "i": "0 a {t}.sub a a 0 {t}.lt_s select wrap", "ub": "a"},
        "sign": {
            "f": "a 0 {t}.add set:r -1 get:r a 0 {t}.lt select set:r 1 get:r a 0 {t}.gt select",
            "i": "a 0 {t}.gt_s a 0 {t}.lt_s i32.sub {widen}",
            "u": "a 0 {t}.ne {widen}",
            "b": "a",
        },
        "floor": {"f": "a {t}.floor", "iub": "a"},
        "ceil": {"f": "a {t}.ceil", "iub": "a"},
        "trunc": {"f": "a {t}.trunc", "iub": "a"},
        "round_even": {"f": "a {t}.nearest", "iub": "a"},
        "round_away": {"f": "a {t}.abs 0.5 {t}.add {t}.floor a {t}.copysign", "iub": "a"},
        "sqrt": {"f": "a {t}.sqrt"},
        "rsqrt": {"f": "1 a {t}.sqrt {t}.div"},
        "reciprocal": {"f": "1 a {t}.div"},
        "isnan": {"f": "a a {t}.ne", "iub": "i32:0"},
        "isinf": {"f": "a {t}.abs inf {t}.eq", "iub": "i32:0"},
        "isfinite": {"f": "a {t}.abs inf {t}.lt", "iub": "i32:1"},
        "popcnt": {"iub": _bit_count},
        "clz": {"iub": _bit_count},
        # binary
        "lt": _compare("lt"),
        "le": _compare("le"),
        "gt": _compare("gt"),
        "ge": _compare("ge"),
        "eq": _compare("eq"),
        "ne": _compare("ne"),
        "add": {"f": "a b {t}.add", "iu": "a b {t}.add wrap", "b": "a b i32.or"},
        "sub": {"f": "a b {t}.sub", "iu": "a b {t}.sub wrap", "b": "a b i32.xor"},
        "mul": {"f": "a b {t}.mul", "iu": "a b {t}.mul wrap", "b": "a b i32.and"},
        "div": {"f": "a b {t}.div", "iub": _int_divrem},
        "rem": {"f": lambda cg, op, sd, srcs: cg._float_rem(op, sd, srcs), "iub": _int_divrem},
        "idiv": {"iub": _floor_divmod},
        "mod": {"iub": _floor_divmod},
        "max": {"f": "a b {t}.max", "iu": "a b a b {t}.gt_{s} select", "b": "a b i32.or"},
        "min": {"f": "a b {t}.min", "iu": "a b a b {t}.lt_{s} select", "b": "a b i32.and"},
        "and": {"iub": "a b {t}.and"},
        "or": {"iub": "a b {t}.or"},
        "xor": {"iub": "a b {t}.xor"},
        "shl": {"iub": "b {bits} {t}.lt_u set:small:i32 a b {t}.shl 0 get:small select wrap"},
        "shr": {
            "i": "b {bits} {t}.lt_u set:small:i32 a b {top} get:small select {t}.shr_s",
            "ub": "b {bits} {t}.lt_u set:small:i32 a b {t}.shr_u 0 get:small select",
        },
        "pow": {"iub": "a b call:ipow"},  # float pow, atan2 and the other float functions: core ops (compiler/mathlib)
        "nextafter": {"f": "a b call:nextafter"},
        # ternary
        "where": {"b": "b c a select"},
        "madd": {"f": "a b {t}.mul c {t}.add"},  # scalar Wasm has no fused form
    }
)

# (source, destination class) -> row over the value on the stack; fields {conv} (int -> float
# instruction), {resize} (i32 <-> i64 or f32 <-> f64); `round` rounds to a half float destination. Classes: "f" float, "n"
# integer, "b" bool.
CASTS = {
    **{(c, "b"): "0 {t}.ne" for c in "fn"},
    ("b", "n"): "{resize} wrap",
    ("n", "n"): "{resize} wrap",
    ("f", "f"): "{resize} round",
    ("f", "n"): lambda cg, src, dst: cg._float_to_int(src, dst),
    ("n", "f"): "{conv} round",
    ("b", "f"): "{conv} round",
}
_RESIZE = {
    (I32, I64): "i64.extend_i32_{}",
    (I64, I32): "i32.wrap_i64",
    (F32, F64): "f64.promote_f32",
    (F64, F32): "f32.demote_f64",
}
_REINTERPRET = {
    (F32, I32): "i32.reinterpret_f32",
    (I32, F32): "f32.reinterpret_i32",
    (F64, I64): "i64.reinterpret_f64",
    (I64, F64): "f64.reinterpret_i64",
}
# narrow integer dtype -> program wrapping an i32 into its range
_WRAP = {"int8": "i32.extend8_s", "int16": "i32.extend16_s", "uint8": "255 i32.and", "uint16": "65535 i32.and"}
_WRAP.update({n: f"{32 - b} i32.shl {32 - b} i32.shr_s" for n, b in dtypes.INTN.items() if n[0] == "i"})
_WRAP.update({n: f"{(1 << b) - 1} i32.and" for n, b in dtypes.INTN.items() if n[0] == "u"})

# SIMD forms (float32, int32, uint32, bool as a lane mask 0/-1); an op without a row, or whose
# function returns False, runs lane by lane.
VECTOR = _rows(
    {
        "neg": {"f": "a f32x4.neg", "iu": "a i32x4.neg"},
        "not": {"iub": "a v128.not"},
        "abs": {"f": "a f32x4.abs", "i": "a i32x4.abs"},
        "sqrt": {"f": "a f32x4.sqrt"},
        "floor": {"f": "a f32x4.floor"},
        "ceil": {"f": "a f32x4.ceil"},
        "trunc": {"f": "a f32x4.trunc"},
        "round_even": {"f": "a f32x4.nearest"},
        "reciprocal": {"f": "vf1 a f32x4.div"},
        "rsqrt": {"f": "vf1 a f32x4.sqrt f32x4.div"},
        "isnan": {"f": "a a f32x4.ne"},
        "add": {"f": "a b f32x4.add", "iu": "a b i32x4.add", "b": "a b v128.or"},
        "sub": {"f": "a b f32x4.sub", "iu": "a b i32x4.sub"},
        "mul": {"f": "a b f32x4.mul", "iu": "a b i32x4.mul", "b": "a b v128.and"},
        "div": {"f": "a b f32x4.div"},
        "max": {"f": "a b f32x4.max", "iu": "a b i32x4.max_{s}", "b": "a b v128.or"},
        "min": {"f": "a b f32x4.min", "iu": "a b i32x4.min_{s}", "b": "a b v128.and"},
        "and": {"iub": "a b v128.and"},
        "or": {"iub": "a b v128.or"},
        "xor": {"iub": "a b v128.xor"},
        "eq": {"f": "a b f32x4.eq", "iub": "a b i32x4.eq"},
        "ne": {"f": "a b f32x4.ne", "iu": "a b i32x4.ne", "b": "a b v128.xor"},
        "lt": {"f": "a b f32x4.lt", "iu": "a b i32x4.lt_{s}"},
        "le": {"f": "a b f32x4.le", "iu": "a b i32x4.le_{s}"},
        "gt": {"f": "a b f32x4.gt", "iu": "a b i32x4.gt_{s}"},
        "ge": {"f": "a b f32x4.ge", "iu": "a b i32x4.ge_{s}"},
        "shl": {"iu": lambda cg, nd, vs: cg._vshift(nd, vs)},
        "shr": {"iu": lambda cg, nd, vs: cg._vshift(nd, vs)},
        "bitcast": {"fiub": "a"},
        "madd": {"f": lambda cg, nd, vs: cg._vmadd(nd, vs)},
    }
)
VECTOR_CASTS = {
    ("float32", "int32"): "a i32x4.trunc_sat_f32x4_s",
    ("float32", "uint32"): "a i32x4.trunc_sat_f32x4_u",
    ("int32", "float32"): "a f32x4.convert_i32x4_s",
    ("uint32", "float32"): "a f32x4.convert_i32x4_u",
    ("int32", "uint32"): "a",
    ("uint32", "int32"): "a",
    ("float32", "bool"): "a v0 f32x4.ne",
    ("int32", "bool"): "a v0 i32x4.ne",
    ("uint32", "bool"): "a v0 i32x4.ne",
    ("bool", "float32"): "a vf1 v128.and",
    ("bool", "int32"): "a i32x4.neg",
    ("bool", "uint32"): "a i32x4.neg",
}
_REDUCE_BINARY = {"sum": "add", "prod": "mul", "max": "max", "min": "min", "and": "and", "or": "or"}
_OPERAND = {"a": 0, "b": 1, "c": 2}
_VCONST = {"v0": bytes(16), "vf1": struct.pack("<4f", 1, 1, 1, 1)}
_CONST_DTYPE = {"i32": dtypes.int32, "i64": dtypes.int64, "f32": dtypes.float32, "f64": dtypes.float64}


def _class(d) -> str:
    return "f" if d.kind == "f" else "b" if d.kind == "b" else "i" if d.kind == "i" else "u"


def _lanes(d) -> str:
    """The SIMD lane shape of a vectorized dtype."""
    return "f32x4" if d.name == "float32" else "i32x4"


def _cast_class(d) -> str:
    return "f" if d.kind == "f" else "b" if d.kind == "b" else "n"


def _cold_only(roots: list, children) -> set:
    """Nodes reached only through the true side of a cold `where` (computed in its `if`)."""
    hot: set = set()
    stack = list(roots)
    while stack:
        nd = stack.pop()
        if nd in hot:
            continue
        hot.add(nd)
        kids = children(nd)
        if nd.op == "where" and nd.arg == "cold":
            kids = (kids[0], kids[2])
        stack.extend(kids)
    return {x for r in roots for x in ir.walk(r, children=children)} - hot


def _depends_on(nd: Node, axis: int) -> bool:
    return any(x.op == "idx" and x.arg == axis for x in ir.walk(nd))


def scalar_ops(m: Module, f: Function) -> KernelCodegen:
    """The scalar op/cast emitters of KernelCodegen bound to module m and function f (for routines)."""
    ops = KernelCodegen.__new__(KernelCodegen)
    ops.m, ops.f = m, f
    return ops


def scalar_function(m: Module, name: str, root: Node) -> int:
    """Index of m's function `name` computing root (core ops) from its ir.arg parameters, in order,
    by the kernels' scalar emitters: a routine's helper written once as IR (made once per module)."""
    key = "scalar_function:" + name
    if key not in m.memo:
        args = sorted((x for x in ir.walk(root) if x.op == "arg"), key=lambda x: x.arg)
        f = m.function(name, [valtype(a.dtype) for a in args], [valtype(root.dtype)])
        m.memo[key] = f.index
        cg = scalar_ops(m, f)
        cg.vec, cg.V, cg.env = False, -1, {(a, "s"): a.arg for a in args}
        f.local_get(cg.get(root))
        f.finish()
    return m.memo[key]


def compile_kernel_bytes(
    kernel: Kernel, relaxed_simd: bool = True, simd: bool = True, tile: tuple[int, int] = (4, 4)
) -> tuple[bytes, int]:
    """The Wasm module (bytes) for a Kernel, exporting `run`, and the scratch bytes `run` needs.

    `run(in_ptr..., out_ptr, lo, hi, gather_len..., [scratch_ptr])`: scratch_ptr only when the
    scratch size is nonzero (tiled matmuls pack B there).
    """
    cg = KernelCodegen(kernel, relaxed_simd=relaxed_simd, simd=simd, tile=tile)
    return cg.build(), cg.scratch_bytes
