"""Lowering rules for the indexing primitives (registered into lowering.rules by name).

gather and dynamic_slice fuse: the operand is read through `gather_move` at indices computed
in-kernel from the index array (or the traced start scalars), clamped so every read is in
bounds. dynamic_update_slice fuses too, as a select between the operand and the shifted update.
scatter runs the `scatter` Routine (contiguous operand, indices, updates -> new operand).
"""

from __future__ import annotations

import math

from pyjax.compiler import ir, lowering
from pyjax.compiler.ir import Node, Routine, alu, cast, const, idx, where
from pyjax.compiler.lowering import Lazy, constant, elementwise, gather_move, pad_zero, shrink
from pyjax.core import dtypes

i32 = dtypes.int32
BOOL = dtypes.bool_


def _scalar_expr(ctx, s: Lazy, shape: tuple) -> Node:
    """The value of a scalar Lazy as an expression usable in a kernel over `shape`."""
    return gather_move(ctx, s, shape, lambda: ()).expr


def _clamp(v: Node, lo: int, hi: int) -> Node:
    """Clamp an integer expression into [lo, hi] in its own dtype, then cast to int32."""
    d = v.dtype
    out = alu("min", v, const(hi, d))
    if d.kind == "i" or lo > 0:
        out = alu("max", out, const(lo, d))
    return cast(out, i32)


def _in_range(v: Node, n: int) -> Node:
    d = v.dtype
    ok = alu("lt", v, const(n, d))
    if d.kind == "i":
        ok = alu("and", ok, alu("ge", v, const(0, d)))
    return ok


def _gather(ctx, x: Lazy, ind: Lazy, *, axes, mode, fill_value):
    nd, nb = len(x.shape), len(ind.shape) - 1
    rest = [a for a in range(nd) if a not in axes]
    out_shape = tuple(ind.shape[:-1]) + tuple(x.shape[a] for a in rest)
    fill = dtypes.gather_fill_value(x.dtype) if fill_value is None else fill_value
    if math.prod(out_shape) == 0 or math.prod(x.shape) == 0:
        return constant(fill if mode == "fill" else 0, x.dtype, out_shape)
    batch = tuple(idx(i) for i in range(nb))
    cols = [gather_move(ctx, ind, out_shape, lambda j=j: batch + (const(j, i32),)).expr for j in range(len(axes))]
    with ir.shape_context(out_shape):
        full: list = [None] * nd
        valid = const(True, BOOL)
        for j, a in enumerate(axes):
            full[a] = _clamp(cols[j], 0, x.shape[a] - 1)
            if mode == "fill":
                valid = alu("and", valid, _in_range(cols[j], x.shape[a]))
        for k, a in enumerate(rest):
            full[a] = idx(nb + k)
    g = gather_move(ctx, x, out_shape, lambda: tuple(full))
    if mode == "fill":
        g = Lazy(out_shape, x.dtype, where(valid, g.expr, const(fill, x.dtype)))
    return g


def _clamped_starts(ctx, starts, xshape, sizes, shape):
    """Start indices clamped so the window [s, s + size) stays inside the operand (as JAX does)."""
    out = []
    for s, n, k in zip(starts, xshape, sizes):
        e = _scalar_expr(ctx, s, shape)
        hi = max(n - k, 0)
        if e.op == "const":
            out.append(const(min(max(e.arg, 0), hi), i32))
        else:
            with ir.shape_context(shape):
                out.append(_clamp(e, 0, hi))
    return out


def _dynamic_slice(ctx, x: Lazy, *starts, slice_sizes):
    out_shape = tuple(slice_sizes)
    if math.prod(out_shape) == 0:
        return constant(0, x.dtype, out_shape)
    s = _clamped_starts(ctx, starts, x.shape, out_shape, out_shape)
    if all(e.op == "const" for e in s):
        return shrink(ctx, x, [(e.arg, e.arg + k) for e, k in zip(s, out_shape)])
    with ir.shape_context(out_shape):
        index = tuple(alu("add", e, idx(d)) for d, e in enumerate(s))
    return gather_move(ctx, x, out_shape, lambda: index)


def _dynamic_update_slice(ctx, x: Lazy, u: Lazy, *starts):
    shape = x.shape
    if math.prod(u.shape) == 0 or math.prod(shape) == 0:
        return x
    s = _clamped_starts(ctx, starts, shape, u.shape, shape)
    with ir.shape_context(shape):
        inside = const(True, BOOL)
        rel = []
        for d, (e, k) in enumerate(zip(s, u.shape)):
            r = alu("sub", idx(d), e)
            inside = alu("and", inside, alu("and", alu("ge", r, const(0, i32)), alu("lt", r, const(k, i32))))
            rel.append(r)
    if all(e.op == "const" for e in s):
        placed = pad_zero(ctx, u, [(e.arg, n - e.arg - k) for e, n, k in zip(s, shape, u.shape)])
    else:
        with ir.shape_context(shape):
            relc = tuple(alu("max", alu("min", r, const(k - 1, i32)), const(0, i32)) for r, k in zip(rel, u.shape))
        placed = gather_move(ctx, u, shape, lambda: relc)
    return elementwise(ctx, [x, placed], lambda a, b: where(inside, b, a))


def _scatter(ctx, x: Lazy, ind: Lazy, u: Lazy, *, axes, kind, unique_indices):
    if math.prod(u.shape) == 0 or math.prod(x.shape) == 0:
        return x
    r = Routine("scatter", {"axes": tuple(axes), "kind": kind}, (x.aval, ind.aval, u.aval), (x.aval,))
    return ctx.routine(r, [x, ind, u])[0]


lowering.rules["gather"] = _gather
lowering.rules["dynamic_slice"] = _dynamic_slice
lowering.rules["dynamic_update_slice"] = _dynamic_update_slice
lowering.rules["scatter"] = _scatter
