"""Routines (unfusable ops) as generated Wasm: sort, cumulative, cholesky, triangular_solve, lu, scatter.

Each routine compiles to one module exporting `run(in_ptr..., out_ptr..., scratch_ptr)`; shapes are
compile-time constants. Semantics match the cpu backend (numpy_eval and routines_*.py):

- sort: stable, lexicographic over the first `num_keys` operands, along the last axis; every key
  becomes an unsigned 32-bit sort key (floats: NaN after +inf, -0.0 ties 0.0; 64-bit keys as two
  halves), and rows are sorted by a least-significant-first radix sort (insertion sort for short
  rows), which is stable, so multi-key sorts are successive passes from the last key to the first.
  All operands are then permuted by the resulting order (bit-exact copies).
- cumulative: sum/prod/max/min/logsumexp along the last axis, optionally reversed, sequential like
  numpy's accumulate (rounded to the dtype at every step).
- cholesky, triangular_solve and lu compute in float64 like the reference, with SIMD (f64x2) dot
  products and row updates; a failed cholesky (a pivot <= 0) fills its lower triangle with NaN.
- scatter copies the operand, then combines each in-range update in row-major update order.
Outputs are always written completely; scratch memory is allocated per call and never assumed zero.
"""

from __future__ import annotations

import math

from pyjax.backends.wasm.codegen import DTYPE_INFO, HALF, scalar_function, scalar_ops, valtype
from pyjax.backends.wasm.encoder import F32, F64, I32, I64, V128, Module
from pyjax.backends.wasm.halffloat import narrow_helper
from pyjax.compiler import ir
from pyjax.compiler.ir import Routine
from pyjax.compiler.mathlib import logaddexp
from pyjax.core import dtypes

__all__ = ["compile_routine"]


class _Builder:
    """One routine module: `run` with the given number of i32 params, plus loop helpers."""

    def __init__(self, n_params: int):
        self.m = Module()
        self.f = self.m.function("run", [I32] * n_params, [], export=True)
        self.ops = scalar_ops(self.m, self.f)

    def local(self, t=I32) -> int:
        return self.f.local(t)

    def loop(self, var: int, start, end, body, step: int = 1) -> None:
        """for var in [start, end): start/end are ints or locals given as ("l", idx)."""
        f = self.f
        self._push(start)
        f.local_set(var)
        with f.block(), f.loop():
            f.local_get(var)
            self._push(end)
            f.i32_ge_s().br_if(1)
            body()
            f.local_get(var).i32_const(step).i32_add().local_set(var)
            f.br(0)

    def loop_down(self, var: int, start, stop, body) -> None:
        """for var in range(start - 1, stop, -1)."""
        f = self.f
        self._push(start)
        f.local_set(var)
        with f.block(), f.loop():
            f.local_get(var).i32_const(1).i32_sub().local_tee(var)
            self._push(stop)
            f.i32_le_s().br_if(1)
            body()
            f.br(0)

    def _push(self, v) -> None:
        if isinstance(v, tuple):
            self.f.local_get(v[1])
        elif callable(v):
            v()
        else:
            self.f.i32_const(v)

    def addr(self, base: int, index: int, size: int, offset_local: int | None = None) -> None:
        """Push base + (index [+ offset]) * size (locals)."""
        f = self.f
        f.local_get(base).local_get(index)
        if offset_local is not None:
            f.local_get(offset_local).i32_add()
        if size > 1:
            f.i32_const(size.bit_length() - 1).i32_shl()
        f.i32_add()

    def load(self, d) -> None:
        """Address on the stack -> value in d's scalar representation (halves as f32)."""
        self.f.op(DTYPE_INFO[d.name][1], align=0)
        if d.name in HALF:
            self.f.call(narrow_helper(self.m, d.name, "load"))

    def store(self, d) -> None:
        """Address and value (scalar representation of d) on the stack -> stored."""
        if d.name in HALF:
            self.f.call(narrow_helper(self.m, d.name, "store"))
        self.f.op(DTYPE_INFO[d.name][2], align=0)

    def load_f64(self, base: int, index: int, d) -> None:
        """Push element `index` of the d-typed array at `base`, widened to f64 (routines work in f64)."""
        self.addr(base, index, d.itemsize)
        self.load(d)
        self.ops._cast(d, dtypes.float64)

    def store_f64(self, d) -> None:
        """Address and an f64 value on the stack -> stored as d."""
        self.ops._cast(dtypes.float64, d)
        self.store(d)

    def bytes(self) -> bytes:
        self.f.finish()
        return self.m.to_bytes()

    # f64 vector helpers (module functions)

    def dot_f64(self) -> int:
        """dot(a_ptr, b_ptr, n) over f64, two f64x2 accumulators."""
        if "dot" in self.m.memo:
            return self.m.memo["dot"]
        f = self.m.function("dot_f64", [I32, I32, I32], [F64])
        self.m.memo["dot"] = f.index
        a, b, n, i, acc0, acc1, s = 0, 1, 2, f.local(I32), f.local(V128), f.local(V128), f.local(F64)
        f.v128_const(bytes(16)).local_tee(acc0).local_set(acc1)
        with f.block(), f.loop():
            f.local_get(i).i32_const(4).i32_add().local_get(n).i32_gt_s().br_if(1)
            for k, acc in ((0, acc0), (16, acc1)):
                f.local_get(acc).local_get(a).local_get(i).i32_const(3).i32_shl().i32_add().v128_load(offset=k, align=3)
                f.local_get(b).local_get(i).i32_const(3).i32_shl().i32_add().v128_load(offset=k, align=3)
                f.f64x2_mul().f64x2_add().local_set(acc)
            f.local_get(i).i32_const(4).i32_add().local_set(i)
            f.br(0)
        f.local_get(acc0).local_get(acc1).f64x2_add().local_tee(acc0).f64x2_extract_lane(0)
        f.local_get(acc0).f64x2_extract_lane(1).f64_add().local_set(s)
        with f.block(), f.loop():
            f.local_get(i).local_get(n).i32_ge_s().br_if(1)
            f.local_get(s).local_get(a).local_get(i).i32_const(3).i32_shl().i32_add().f64_load()
            f.local_get(b).local_get(i).i32_const(3).i32_shl().i32_add().f64_load().f64_mul().f64_add().local_set(s)
            f.local_get(i).i32_const(1).i32_add().local_set(i)
            f.br(0)
        f.local_get(s)
        f.finish()
        return f.index

    def axpy_f64(self) -> int:
        """y[i] -= s * x[i] for i < n (y_ptr, x_ptr, n, s), f64x2."""
        if "axpy" in self.m.memo:
            return self.m.memo["axpy"]
        f = self.m.function("axpy_f64", [I32, I32, I32, F64], [])
        self.m.memo["axpy"] = f.index
        y, x, n, s, i, sv, p = 0, 1, 2, 3, f.local(I32), f.local(V128), f.local(I32)
        f.local_get(s).f64x2_splat().local_set(sv)
        with f.block(), f.loop():
            f.local_get(i).i32_const(2).i32_add().local_get(n).i32_gt_s().br_if(1)
            f.local_get(y).local_get(i).i32_const(3).i32_shl().i32_add().local_tee(p)
            f.local_get(p).v128_load(align=3)
            f.local_get(x).local_get(i).i32_const(3).i32_shl().i32_add().v128_load(align=3)
            f.local_get(sv).f64x2_mul().f64x2_sub().v128_store(align=3)
            f.local_get(i).i32_const(2).i32_add().local_set(i)
            f.br(0)
        with f.block(), f.loop():
            f.local_get(i).local_get(n).i32_ge_s().br_if(1)
            f.local_get(y).local_get(i).i32_const(3).i32_shl().i32_add().local_tee(p)
            f.local_get(p).f64_load()
            f.local_get(x).local_get(i).i32_const(3).i32_shl().i32_add().f64_load()
            f.local_get(s).f64_mul().f64_sub().f64_store()
            f.local_get(i).i32_const(1).i32_add().local_set(i)
            f.br(0)
        f.finish()
        return f.index


def _batch(shape, nd_tail) -> int:
    return math.prod(shape[: len(shape) - nd_tail])


# --------------------------------------------------------------------------------------- sort


def _sort(r: Routine):
    avals = r.in_avals
    nops = len(avals)
    nkeys = r.p["num_keys"]
    shape = avals[0].shape
    n = shape[-1] if shape else 1
    rows = math.prod(shape[:-1]) if shape else 1
    B = _Builder(2 * nops + 1)
    f = B.f
    ins, outs, scratch = list(range(nops)), list(range(nops, 2 * nops)), 2 * nops
    row, i, j, k, v = B.local(), B.local(), B.local(), B.local(), B.local()
    cur_k, cur_i, alt_k, alt_i, tmp, hist = (B.local() for _ in range(6))
    # scratch: idx A | idx B | keys A | keys B | 4 x 256 histogram counts
    f.local_get(scratch).local_set(cur_i)
    f.local_get(scratch).i32_const(4 * n).i32_add().local_set(alt_i)
    f.local_get(scratch).i32_const(8 * n).i32_add().local_set(cur_k)
    f.local_get(scratch).i32_const(12 * n).i32_add().local_set(alt_k)
    f.local_get(scratch).i32_const(16 * n).i32_add().local_set(hist)
    # key parts, least significant first
    parts = []
    for key in reversed(range(nkeys)):
        d = avals[key].dtype
        if d.itemsize == 8:
            parts += [(key, "lo"), (key, "hi")]
        else:
            parts.append((key, None))
    base = B.local()  # element offset of the row

    def elem_key(key, part) -> None:
        """Push the u32 sort key of operand `key` at row element idx = local v."""
        d = avals[key].dtype
        B.addr(ins[key], v, d.itemsize, base)
        B.load(d)
        if d.kind == "f":
            t = valtype(d)
            x = f.local(t)
            f.local_tee(x)
            if t == F64:
                u = f.local(I64)
                f.i64_reinterpret_f64().local_set(u)
                f.i64_const(0x7FF8000000000000).local_get(u)
                f.local_get(x).local_get(x).f64_ne().select().local_set(u)
                f.i64_const(0).local_get(u).local_get(x).f64_const(0.0).f64_eq().select().local_set(u)
                f.local_get(u).local_get(u).i64_const(63).i64_shr_s().i64_const(1 << 63).i64_or().i64_xor()
                if part == "hi":
                    f.i64_const(32).i64_shr_u()
                f.i32_wrap_i64()
            else:
                u = f.local(I32)
                f.i32_reinterpret_f32().local_set(u)
                f.i32_const(0x7FC00000).local_get(u).local_get(x).local_get(x).f32_ne().select().local_set(u)
                f.i32_const(0).local_get(u).local_get(x).f32_const(0.0).f32_eq().select().local_tee(u)
                f.local_get(u).i32_const(31).i32_shr_s().i32_const(0x80000000).i32_or().i32_xor()
        elif d.itemsize == 8:
            if d.kind == "i":
                f.i64_const(1 << 63).i64_xor()
            if part == "hi":
                f.i64_const(32).i64_shr_u()
            f.i32_wrap_i64()
        elif d.kind == "i":
            f.i32_const(0x80000000).i32_xor()

    def sort_pass(key, part) -> None:
        # keys of the current order
        def fill():
            B.addr(cur_i, i, 4)
            f.i32_load().local_set(v)
            B.addr(cur_k, i, 4)
            elem_key(key, part)
            f.i32_store()

        B.loop(i, 0, n, fill)
        if n <= 48:
            _insertion_sort(B, n, cur_k, cur_i, i, j, k, v)
        else:
            _radix_sort(B, n, cur_k, cur_i, alt_k, alt_i, tmp, hist, i, j, k, v)

    def per_row() -> None:
        f.local_get(row).i32_const(n).i32_mul().local_set(base)
        B.loop(i, 0, n, lambda: (B.addr(cur_i, i, 4), f.local_get(i).i32_store()))
        for key, part in parts:
            sort_pass(key, part)
        # permute every operand
        for o in range(nops):
            d = avals[o].dtype
            size = d.itemsize
            load, store = {
                1: ("i32.load8_u", "i32.store8"),
                2: ("i32.load16_u", "i32.store16"),
                4: ("i32.load", "i32.store"),
                8: ("i64.load", "i64.store"),
            }[size]

            def gather(o=o, size=size, load=load, store=store):
                B.addr(cur_i, i, 4)
                f.i32_load().local_set(v)
                B.addr(outs[o], i, size, base)
                B.addr(ins[o], v, size, base)
                f.op(load, align=0).op(store, align=0)

            B.loop(i, 0, n, gather)

    B.loop(row, 0, rows, per_row)
    return B.bytes(), 16 * n + 4096


def _insertion_sort(B: _Builder, n: int, K: int, I_: int, i: int, j: int, key: int, val: int) -> None:
    f = B.f

    def outer():
        B.addr(K, i, 4)
        f.i32_load().local_set(key)
        B.addr(I_, i, 4)
        f.i32_load().local_set(val)
        f.local_get(i).local_set(j)
        with f.block(), f.loop():
            f.local_get(j).i32_eqz().br_if(1)
            f.local_get(K).local_get(j).i32_const(1).i32_sub().i32_const(2).i32_shl().i32_add().i32_load()
            f.local_get(key).i32_le_u().br_if(1)
            # shift element j-1 up
            for arr in (K, I_):
                f.local_get(arr).local_get(j).i32_const(2).i32_shl().i32_add()
                f.local_get(arr).local_get(j).i32_const(1).i32_sub().i32_const(2).i32_shl().i32_add().i32_load()
                f.i32_store()
            f.local_get(j).i32_const(1).i32_sub().local_set(j)
            f.br(0)
        B.addr(K, j, 4)
        f.local_get(key).i32_store()
        B.addr(I_, j, 4)
        f.local_get(val).i32_store()

    B.loop(i, 1, n, outer)


def _radix_sort(B, n, cur_k, cur_i, alt_k, alt_i, tmp, hist, i, j, key, val) -> None:
    """LSD radix sort of (key, index) pairs by 8-bit digits, skipping digits that are all equal."""
    f = B.f
    f.local_get(hist).i32_const(0).i32_const(4096).memory_fill()

    def count():
        B.addr(cur_k, i, 4)
        f.i32_load().local_set(key)
        for d in range(4):
            f.local_get(hist).local_get(key)
            if d:
                f.i32_const(8 * d).i32_shr_u()
            f.i32_const(255).i32_and().i32_const(2).i32_shl().i32_add().local_tee(tmp)
            f.local_get(tmp).i32_load(offset=1024 * d).i32_const(1).i32_add().i32_store(offset=1024 * d)

    B.loop(i, 0, n, count)
    for d in range(4):
        # skip when every key has the same digit
        f.local_get(hist).local_get(cur_k).i32_load()
        if d:
            f.i32_const(8 * d).i32_shr_u()
        f.i32_const(255).i32_and().i32_const(2).i32_shl().i32_add().i32_load(offset=1024 * d)
        f.i32_const(n).i32_ne()
        with f.if_():
            # exclusive prefix sums of this digit's counts
            f.i32_const(0).local_set(val)

            def prefix():
                f.local_get(hist).local_get(j).i32_const(2).i32_shl().i32_add().local_tee(tmp)
                f.local_get(tmp).i32_load(offset=1024 * d).local_get(val).local_tee(key)
                f.i32_add().local_set(val)
                f.local_get(key).i32_store(offset=1024 * d)

            B.loop(j, 0, 256, prefix)

            def scatter():
                B.addr(cur_k, i, 4)
                f.i32_load().local_set(key)
                f.local_get(hist).local_get(key)
                if d:
                    f.i32_const(8 * d).i32_shr_u()
                f.i32_const(255).i32_and().i32_const(2).i32_shl().i32_add().local_tee(tmp)
                f.i32_load(offset=1024 * d).local_set(j)
                f.local_get(tmp).local_get(j).i32_const(1).i32_add().i32_store(offset=1024 * d)
                B.addr(alt_k, j, 4)
                f.local_get(key).i32_store()
                B.addr(alt_i, j, 4)
                B.addr(cur_i, i, 4)
                f.i32_load().i32_store()

            B.loop(i, 0, n, scatter)
            for a, b in ((cur_k, alt_k), (cur_i, alt_i)):
                f.local_get(a).local_get(b).local_set(a).local_set(b)


# --------------------------------------------------------------------------------------- cumulative


def _cumulative(r: Routine):
    (av,) = r.in_avals
    d = av.dtype
    op, rev = r.p["op"], r.p["reverse"]
    shape = av.shape
    n = shape[-1] if shape else 1
    rows = math.prod(shape[:-1]) if shape else 1
    B = _Builder(3)
    f, ops = B.f, B.ops
    x, out = 0, 1
    row, i, base = B.local(), B.local(), B.local()
    t = valtype(d)
    acc, val = B.local(t), B.local(t)
    h = d.name in HALF

    def step(first: bool):
        B.addr(x, i, d.itemsize, base)
        B.load(d)
        f.local_set(val)
        if first:
            f.local_get(val).local_set(acc)
        else:
            if op == "logsumexp":
                f.local_get(acc)
                if t == F32:
                    f.f64_promote_f32()
                f.local_get(val)
                if t == F32:
                    f.f64_promote_f32()
                f.call(_logaddexp(B))
                if t == F32:
                    f.f32_demote_f64()
            else:
                f.local_get(acc).local_get(val)
                ops._binop({"sum": "add", "prod": "mul", "max": "max", "min": "min"}[op], d, [acc, val], pushed=True)
            if h:
                f.call(narrow_helper(B.m, d.name, "round"))
            f.local_set(acc)
        B.addr(out, i, d.itemsize, base)
        f.local_get(acc)
        B.store(d)

    def per_row():
        f.local_get(row).i32_const(n).i32_mul().local_set(base)
        if rev:
            f.i32_const(n - 1).local_set(i)
            step(True)
            B.loop_down(i, n - 1, -1, lambda: step(False))
        else:
            f.i32_const(0).local_set(i)
            step(True)
            B.loop(i, 1, n, lambda: step(False))

    if n > 0:
        B.loop(row, 0, rows, per_row)
    return B.bytes(), 0


def _logaddexp(B: _Builder) -> int:
    a, b = ir.arg(0, dtypes.float64), ir.arg(1, dtypes.float64)
    return scalar_function(B.m, "logaddexp_f64", logaddexp(a, b))


# --------------------------------------------------------------------------------------- linalg


def _cholesky(r: Routine):
    (av,) = r.in_avals
    d = av.dtype
    n = av.shape[-1]
    nb = _batch(av.shape, 2)
    B = _Builder(3)
    f = B.f
    a, out, L = 0, 1, 2
    b, i, j, off, ok = B.local(), B.local(), B.local(), B.local(), B.local()
    s = B.local(F64)
    dot = B.dot_f64()

    def Lrow(row_local):  # push address of L[row, 0]
        f.local_get(L).local_get(row_local).i32_const(8 * n).i32_mul().i32_add()

    def inner():
        # s = a[i, j] - L[i, :j] . L[j, :j]
        f.local_get(off).local_get(i).i32_const(n).i32_mul().i32_add().local_get(j).i32_add().local_set(b)
        B.load_f64(a, b, d)
        Lrow(i)
        Lrow(j)
        f.local_get(j).call(dot).f64_sub().local_set(s)
        f.local_get(i).local_get(j).i32_eq()
        with f.if_():
            # a pivot <= 0 fails; a NaN pivot does not (NaN flows on, as in LAPACK)
            f.local_get(s).f64_const(0.0).f64_le().i32_eqz().local_get(ok).i32_and().local_set(ok)
            f.local_get(s).f64_sqrt().local_set(s)
            f.else_()
            f.local_get(s).local_get(L).local_get(j).i32_const(n + 1).i32_mul().i32_const(3).i32_shl().i32_add()
            f.f64_load().f64_div().local_set(s)
        Lrow(i)
        f.local_get(j).i32_const(3).i32_shl().i32_add().local_get(s).f64_store()

    def per_matrix():
        f.local_get(b).local_set(off)  # b holds the batch index on entry
        f.local_get(off).i32_const(n * n).i32_mul().local_set(off)
        f.i32_const(1).local_set(ok)
        B.loop(i, 0, n, lambda: B.loop(j, 0, lambda: f.local_get(i).i32_const(1).i32_add(), inner))

        def write_row():
            def write():
                f.local_get(off).local_get(i).i32_const(n).i32_mul().i32_add().local_get(j).i32_add().local_set(b)
                B.addr(out, b, d.itemsize)
                Lrow(i)
                f.local_get(j).i32_const(3).i32_shl().i32_add().f64_load()
                f.f64_const(math.nan).local_get(ok).select()  # a failed matrix: NaN lower triangle
                f.f64_const(0.0).local_get(j).local_get(i).i32_le_s().select()  # zero upper triangle
                B.store_f64(d)

            B.loop(j, 0, n, write)

        B.loop(i, 0, n, write_row)

    bi = B.local()

    def batch():
        f.local_get(bi).local_set(b)
        per_matrix()

    B.loop(bi, 0, nb, batch)
    return B.bytes(), 8 * n * n


def _triangular_solve(r: Routine):
    p = r.p
    av, bv = r.in_avals
    d = bv.dtype
    m = av.shape[-1]
    left = p["left_side"]
    nrhs = bv.shape[-1] if left else bv.shape[-2]
    nb = _batch(bv.shape, 2)
    trans = bool(p["transpose_a"])
    lower_eff = bool(p["lower"]) != trans  # triangle of op(a)
    if not left:  # x op(a) = b  <=>  op(a)^T x^T = b^T
        trans = not trans
        lower_eff = not lower_eff
    unit = p["unit_diagonal"]
    B = _Builder(4)
    f = B.f
    a, b, out, X = 0, 1, 2, 3
    bi, i, j, c, e, aoff, boff = (B.local() for _ in range(7))
    t = B.local(F64)
    axpy = B.axpy_f64()
    row_bytes = 8 * nrhs

    def element(base, row, col, ncols, swap):  # e = base + index of (row, col): row-major, or (col, row) of m columns
        f.local_get(base)
        if swap:
            f.local_get(col).i32_const(m).i32_mul().local_get(row).i32_add()
        else:
            f.local_get(row).i32_const(ncols).i32_mul().local_get(col).i32_add()
        f.i32_add().local_set(e)

    def b_index(row, col):  # element (row, col) of the m x nrhs right-hand side in b's layout
        element(boff, row, col, nrhs, not left)

    def X_at(row, col=None):
        f.local_get(X).local_get(row).i32_const(row_bytes).i32_mul().i32_add()
        if col is not None:
            f.local_get(col).i32_const(3).i32_shl().i32_add()

    def load_b():
        def cell():
            b_index(i, c)
            X_at(i, c)
            B.load_f64(b, e, d)
            f.f64_store()

        B.loop(i, 0, m, lambda: B.loop(c, 0, nrhs, cell))

    def op_a(row, col):  # push op(a)[row, col] as f64
        element(aoff, row, col, m, trans)
        B.load_f64(a, e, d)

    def eliminate():
        # X[i] -= op(a)[i, j] X[j]
        X_at(i)
        X_at(j)
        f.i32_const(nrhs)
        op_a(i, j)
        f.call(axpy)

    def scale():
        if unit:
            return
        op_a(i, i)
        f.local_set(t)

        def div():
            X_at(i, c)
            X_at(i, c)
            f.f64_load().local_get(t).f64_div().f64_store()

        B.loop(c, 0, nrhs, div)

    def solve():
        if lower_eff:

            def row_fwd():
                B.loop(j, 0, ("l", i), eliminate)
                scale()

            B.loop(i, 0, m, row_fwd)
        else:

            def row_bwd():
                B.loop(j, lambda: f.local_get(i).i32_const(1).i32_add(), m, eliminate)
                scale()

            B.loop_down(i, m, -1, row_bwd)

    def store_x():
        def cell():
            b_index(i, c)
            B.addr(out, e, d.itemsize)
            X_at(i, c)
            f.f64_load()
            B.store_f64(d)

        B.loop(i, 0, m, lambda: B.loop(c, 0, nrhs, cell))

    def batch():
        f.local_get(bi).i32_const(m * m).i32_mul().local_set(aoff)
        f.local_get(bi).i32_const(m * nrhs).i32_mul().local_set(boff)
        load_b()
        solve()
        store_x()

    B.loop(bi, 0, nb, batch)
    return B.bytes(), 8 * m * nrhs


def _lu(r: Routine):
    (av,) = r.in_avals
    d = av.dtype
    m, n = av.shape[-2:]
    k = min(m, n)
    nb = _batch(av.shape, 2)
    B = _Builder(5)
    f = B.f
    a, out_lu, out_piv, out_perm, W = 0, 1, 2, 3, 4
    bi, i, j, c, e, p, off, perm = (B.local() for _ in range(8))
    best, v, piv = B.local(F64), B.local(F64), B.local(F64)
    axpy = B.axpy_f64()

    def W_at(row, col=None):
        f.local_get(W).local_get(row).i32_const(8 * n).i32_mul().i32_add()
        if col is not None:
            f.local_get(col).i32_const(3).i32_shl().i32_add()

    def per_matrix():
        f.local_get(bi).i32_const(m * n).i32_mul().local_set(off)
        f.local_get(out_perm).local_get(bi).i32_const(4 * m).i32_mul().i32_add().local_set(perm)

        def load_cell():
            W_at(i, c)
            f.local_get(off).local_get(i).i32_const(n).i32_mul().i32_add().local_get(c).i32_add().local_set(e)
            B.load_f64(a, e, d)
            f.f64_store()

        B.loop(i, 0, m, lambda: B.loop(c, 0, n, load_cell))
        B.loop(i, 0, m, lambda: (B.addr(perm, i, 4), f.local_get(i).i32_store()))

        def column():
            f.f64_const(-1.0).local_set(best)
            f.local_get(j).local_set(p)

            def search():
                W_at(i, j)
                f.f64_load().f64_abs().local_tee(v).local_get(best).f64_gt()
                with f.if_():
                    f.local_get(v).local_set(best)
                    f.local_get(i).local_set(p)

            B.loop(i, ("l", j), m, search)
            # pivot index
            f.local_get(out_piv).local_get(bi).i32_const(k).i32_mul().local_get(j).i32_add().i32_const(2).i32_shl()
            f.i32_add().local_get(p).i32_store()
            f.local_get(p).local_get(j).i32_ne()
            with f.if_():

                def swap():
                    W_at(j, c)
                    W_at(p, c)
                    f.f64_load()
                    W_at(p, c)
                    W_at(j, c)
                    f.f64_load().f64_store().f64_store()

                B.loop(c, 0, n, swap)
                B.addr(perm, j, 4)
                B.addr(perm, p, 4)
                f.i32_load()
                B.addr(perm, p, 4)
                B.addr(perm, j, 4)
                f.i32_load().i32_store().i32_store()
            W_at(j, j)
            f.f64_load().local_set(piv)

            def below():
                f.local_get(piv).f64_const(0.0).f64_ne()
                with f.if_():
                    W_at(i, j)
                    W_at(i, j)
                    f.f64_load().local_get(piv).f64_div().f64_store()
                # W[i, j+1:] -= W[i, j] * W[j, j+1:]
                f.local_get(W).local_get(i).i32_const(8 * n).i32_mul().i32_add()
                f.local_get(j).i32_const(1).i32_add().i32_const(3).i32_shl().i32_add()
                f.local_get(W).local_get(j).i32_const(8 * n).i32_mul().i32_add()
                f.local_get(j).i32_const(1).i32_add().i32_const(3).i32_shl().i32_add()
                f.i32_const(n - 1).local_get(j).i32_sub()
                W_at(i, j)
                f.f64_load().call(axpy)

            B.loop(i, lambda: f.local_get(j).i32_const(1).i32_add(), m, below)

        B.loop(j, 0, k, column)

        def store_cell():
            f.local_get(off).local_get(i).i32_const(n).i32_mul().i32_add().local_get(c).i32_add().local_set(e)
            B.addr(out_lu, e, d.itemsize)
            W_at(i, c)
            f.f64_load()
            B.store_f64(d)

        B.loop(i, 0, m, lambda: B.loop(c, 0, n, store_cell))

    B.loop(bi, 0, nb, per_matrix)
    return B.bytes(), 8 * m * n


# --------------------------------------------------------------------------------------- scatter


def _scatter(r: Routine):
    xv, iv, uv = r.in_avals
    axes, kind = tuple(r.p["axes"]), r.p["kind"]
    d = xv.dtype
    shape = xv.shape
    nd = len(shape)
    strides = [math.prod(shape[a + 1 :]) for a in range(nd)]
    rest = [a for a in range(nd) if a not in axes]
    nbatch = math.prod(iv.shape[:-1])
    kk = iv.shape[-1] if iv.shape else 0
    win = math.prod(shape[a] for a in rest)
    idt = iv.dtype
    B = _Builder(5)
    f, ops = B.f, B.ops
    x, ind, u, out = 0, 1, 2, 3
    bi, base, ok, e, uo = (B.local() for _ in range(5))
    wvars = [B.local() for _ in rest]
    t = valtype(d)
    old, new = B.local(t), B.local(t)
    size = d.itemsize
    f.local_get(out).local_get(x).i32_const(math.prod(shape) * size).memory_copy()

    def combine():
        # e = base + window offset; uo = update element index
        f.local_get(base)
        for wv, a in zip(wvars, rest):
            f.local_get(wv).i32_const(strides[a]).i32_mul().i32_add()
        f.local_set(e)
        B.addr(u, uo, size)
        B.load(d)
        f.local_set(new)
        B.addr(out, e, size)
        if kind != "set":
            B.addr(out, e, size)
            B.load(d)
            f.local_set(old)
            f.local_get(old).local_get(new)
            ops._binop({"add": "add", "mul": "mul", "min": "min", "max": "max"}[kind], d, [old, new], pushed=True)
            if d.name in HALF:
                f.call(narrow_helper(B.m, d.name, "round"))
        else:
            f.local_get(new)
        B.store(d)
        f.local_get(uo).i32_const(1).i32_add().local_set(uo)

    def window(level=0):
        if level == len(rest):
            combine()
            return
        B.loop(wvars[level], 0, shape[rest[level]], lambda: window(level + 1))

    def per_update():
        f.i32_const(1).local_set(ok)
        f.i32_const(0).local_set(base)
        for jx, a in enumerate(axes):
            f.local_get(ind).local_get(bi).i32_const(kk).i32_mul().i32_const(jx).i32_add()
            if idt.itemsize > 1:
                f.i32_const(idt.itemsize.bit_length() - 1).i32_shl()
            f.i32_add()
            f.op(DTYPE_INFO[idt.name][1], align=0)
            if idt.itemsize == 8:
                iv64 = B.local(I64)
                f.local_tee(iv64).i64_const(shape[a]).i64_lt_u()
                f.local_get(ok).i32_and().local_set(ok)
                f.local_get(iv64).i32_wrap_i64()
            else:
                iv32 = B.local()
                f.local_tee(iv32).i32_const(shape[a]).i32_lt_u()
                f.local_get(ok).i32_and().local_set(ok)
                f.local_get(iv32)
            f.i32_const(strides[a]).i32_mul().local_get(base).i32_add().local_set(base)
        f.local_get(bi).i32_const(win).i32_mul().local_set(uo)
        f.local_get(ok)
        with f.if_():
            window()

    if win > 0:
        B.loop(bi, 0, nbatch, per_update)
    return B.bytes(), 0


_BUILDERS = {
    "sort": _sort,
    "cumulative": _cumulative,
    "cholesky": _cholesky,
    "triangular_solve": _triangular_solve,
    "lu": _lu,
    "scatter": _scatter,
}


def compile_routine(r: Routine, backend):
    """(module bytes, make_run(fn) -> run(in_slots, out_slots), scratch bytes per call) for a Routine."""
    builder = _BUILDERS.get(r.name)
    if builder is None:
        raise NotImplementedError(f"wasm backend: routine {r.name!r} is not implemented")
    for av in r.in_avals + r.out_avals:
        valtype(av.dtype)  # raises NotImplementedError for unsupported dtypes
    if r.name == "sort" and any(a.dtype.kind == "c" for a in r.in_avals):
        raise NotImplementedError("wasm backend: complex sort")
    wasm, scratch = builder(r)

    def make_run(fn):
        if scratch:

            def run(ins, outs):
                s = backend.malloc(scratch)
                try:
                    fn(*ins, *outs, s)
                finally:
                    backend.free(s)
        else:

            def run(ins, outs):
                fn(*ins, *outs, 0)

        return run

    return wasm, make_run, scratch
