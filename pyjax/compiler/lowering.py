"""Lowering of primitives (by name) to lazy IR values, shared by eager mode and jit.

A Lazy is an array not yet computed: an expression over its own index space (idx(0..ndim-1))
whose loads name *sources* (buffers of the caller: argument positions eagerly, buffer ids
under jit). A Lazy may carry one pending reduction (`red`), whose result the expression reads
as the `acc` node; reduced axes always come last in the reduction's iteration space.
Movement ops rewrite loads' trackers, so they never copy; a consumer that cannot take a
pending reduction (a movement op, another reduction) asks the context to materialize it.
"""

from __future__ import annotations

import math

from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, Node, Routine, alu, cast, const, idx, where
from pyjax.compiler.views import ShapeTracker
from pyjax.core import dtypes
from pyjax.core.core import ShapedArray

i32 = dtypes.int32
BOOL = dtypes.bool_


class Red:
    __slots__ = ("op", "body", "full_shape")

    def __init__(self, op: str, body: Node, full_shape: tuple):
        self.op, self.body, self.full_shape = op, body, full_shape


class Lazy:
    __slots__ = ("shape", "dtype", "expr", "red")

    def __init__(self, shape: tuple, dtype, expr: Node, red: Red | None = None):
        self.shape, self.dtype, self.expr, self.red = shape, dtype, expr, red

    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype)

    def __repr__(self):
        return f"Lazy({self.shape}, {self.dtype}, {ir.render(self.expr)}, red={self.red and self.red.op})"


class RoutineCall:
    """A lowering result that must run a Routine on materialized, contiguous inputs."""

    __slots__ = ("routine", "inputs")

    def __init__(self, routine: Routine, inputs: list):
        self.routine, self.inputs = routine, inputs


class Context:
    """What lowering rules may ask of their caller."""

    def materialize(self, x: Lazy) -> Lazy:  # pragma: no cover - implemented by callers
        raise NotImplementedError

    def routine(self, routine: Routine, inputs: list) -> list:  # pragma: no cover
        raise NotImplementedError


def source_load(src, tracker: ShapeTracker, dtype) -> Lazy:
    return Lazy(tracker.shape, dtype, ir.load(src, tracker, dtype))


def constant(value, dtype, shape=()) -> Lazy:
    return Lazy(tuple(shape), dtype, const(value, dtype))


# --- rewriting expressions under movement ------------------------------------------------------


def _rewrite(expr: Node, on_load, index_map: tuple, memo: dict) -> Node:
    """Rebuild expr with loads mapped by on_load and idx(k) replaced by index_map[k]."""
    hit = memo.get(expr)
    if hit is not None:
        return hit
    op = expr.op
    if op == "load":
        out = on_load(expr)
    elif op == "idx":
        out = index_map[expr.arg]
    elif op in ("const", "acc"):
        out = expr
    else:
        srcs = tuple(_rewrite(s, on_load, index_map, memo) for s in expr.srcs)
        if op == "where":
            out = where(*srcs)
        elif op == "cast":
            out = cast(srcs[0], expr.dtype)
        elif op in ir.BINARY_OPS or op in ir.UNARY_OPS:
            out = alu(op, *srcs)
        else:
            out = ir.node(op, expr.dtype, srcs, expr.arg)
    memo[expr] = out
    return out


def _move(ctx, x: Lazy, tracker_fn, index_map, new_shape, pad_valid=None) -> Lazy:
    if x.red is not None:
        x = ctx.materialize(x)
    if x.expr.op == "load":
        src, tr = x.expr.arg
        return Lazy(new_shape, x.dtype, ir.load(src, tracker_fn(tr), x.dtype))
    if x.expr.op == "const" and pad_valid is None:
        return Lazy(new_shape, x.dtype, x.expr)
    with ir.shape_context(new_shape):
        imap = index_map()

        def on_load(n):
            src, tr = n.arg
            return ir.load(src, tracker_fn(tr), n.dtype)

        expr = _rewrite(x.expr, on_load, imap, {})
        if pad_valid is not None:
            expr = where(pad_valid(), expr, const(0, x.dtype))
    return Lazy(new_shape, x.dtype, expr)


def _new_idx(shape):
    return tuple(idx(i) for i in range(len(shape)))


def permute(ctx, x: Lazy, perm) -> Lazy:
    perm = tuple(perm)
    new_shape = tuple(x.shape[p] for p in perm)

    def imap():
        old = [None] * len(perm)
        for i, p in enumerate(perm):
            old[p] = idx(i)
        return tuple(old)

    return _move(ctx, x, lambda tr: tr.permute(perm), imap, new_shape)


def _unflatten(flat: Node, shape: tuple) -> tuple:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(alu("mod", alu("idiv", flat, const(acc, i32)), const(s, i32)) if s != 1 else const(0, i32))
        acc *= s
    return tuple(reversed(out))


def _flatten(index: tuple, shape: tuple) -> Node:
    flat, acc = const(0, i32), 1
    for i, s in zip(reversed(index), reversed(shape)):
        flat = alu("add", flat, alu("mul", i, const(acc, i32)))
        acc *= s
    return flat


def reshape(ctx, x: Lazy, new_shape) -> Lazy:
    new_shape = tuple(new_shape)
    if new_shape == x.shape:
        return x
    return _move(
        ctx,
        x,
        lambda tr: tr.reshape(new_shape),
        lambda: _unflatten(_flatten(_new_idx(new_shape), new_shape), x.shape),
        new_shape,
    )


def broadcast_in_dim(ctx, x: Lazy, shape, dims) -> Lazy:
    shape, dims = tuple(shape), tuple(dims)
    mid = [1] * len(shape)
    for i, d in enumerate(dims):
        mid[d] = x.shape[i]
    mid = tuple(mid)

    def imap():
        return tuple(idx(d) if x.shape[i] == shape[d] else const(0, i32) for i, d in enumerate(dims))

    return _move(ctx, x, lambda tr: tr.reshape(mid).expand(shape), imap, shape)


def shrink(ctx, x: Lazy, bounds) -> Lazy:
    bounds = tuple(bounds)
    new_shape = tuple(e - b for b, e in bounds)
    return _move(
        ctx,
        x,
        lambda tr: tr.shrink(bounds),
        lambda: tuple(alu("add", idx(i), const(b, i32)) for i, (b, _) in enumerate(bounds)),
        new_shape,
    )


def stride(ctx, x: Lazy, steps) -> Lazy:
    for ax, st in enumerate(steps):
        if st != 1:
            n = x.shape[ax]
            new_shape = tuple((n + st - 1) // st if i == ax else s for i, s in enumerate(x.shape))
            x = _move(
                ctx,
                x,
                lambda tr, ax=ax, st=st: tr.stride(ax, st),
                lambda ax=ax, st=st, k=len(x.shape): tuple(
                    alu("mul", idx(i), const(st, i32)) if i == ax else idx(i) for i in range(k)
                ),
                new_shape,
            )
    return x


def window(ctx, x: Lazy, axis: int, size: int, step: int = 1, dilation: int = 1) -> Lazy:
    """Sliding windows: axis (length n) becomes (positions, size) with new[.., p, k, ..] =
    x[.., p*step + k*dilation, ..]; a view of the loads (no copy, no gather)."""
    n = x.shape[axis]
    span = (size - 1) * dilation + 1
    out = (n - span) // step + 1 if n >= span else 0
    new_shape = x.shape[:axis] + (out, size) + x.shape[axis + 1 :]

    def imap():
        old = [idx(i) for i in range(axis)]
        old.append(alu("add", alu("mul", idx(axis), const(step, i32)), alu("mul", idx(axis + 1), const(dilation, i32))))
        old += [idx(i + 1) for i in range(axis + 1, len(x.shape))]
        return tuple(old)

    return _move(ctx, x, lambda tr: tr.window(axis, size, step, dilation), imap, new_shape)


def flip(ctx, x: Lazy, axes) -> Lazy:
    axes = tuple(axes)
    return _move(
        ctx,
        x,
        lambda tr: tr.flip(axes),
        lambda: tuple(alu("sub", const(s - 1, i32), idx(i)) if i in axes else idx(i) for i, s in enumerate(x.shape)),
        x.shape,
    )


def pad_zero(ctx, x: Lazy, pads) -> Lazy:
    """Pad with zeros: (lo, hi) >= 0 per axis."""
    pads = tuple(pads)
    new_shape = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape, pads))

    return _move(
        ctx,
        x,
        lambda tr: tr.pad(pads),
        lambda: tuple(alu("sub", idx(i), const(lo, i32)) for i, (lo, _) in enumerate(pads)),
        new_shape,
        pad_valid=lambda: _inside_pads(pads, x.shape),
    )


def _inside_pads(pads, shape) -> Node:
    """True where the (current shape context's) index lies in the body, not in the (lo, hi) pads."""
    v = const(True, BOOL)
    for i, ((lo, hi), s) in enumerate(zip(pads, shape)):
        if lo:
            v = alu("and", v, alu("ge", idx(i), const(lo, i32)))
        if hi:
            v = alu("and", v, alu("lt", idx(i), const(lo + s, i32)))
    return v


def gather_move(ctx, x: Lazy, new_shape, index_fn, valid_fn=None) -> Lazy:
    """General movement: new[i] = x[index_fn(i)] (where valid_fn(i)); loads become gathers."""
    if x.red is not None:
        x = ctx.materialize(x)
    with ir.shape_context(new_shape):
        old_index = index_fn()

        def on_load(n):
            src, tr = n.arg
            with ir.shape_context(tr.shape):
                pass
            off, ok = ir.view_index(tr, old_index)
            g = ir.gather(src, where(ok, off, const(0, i32)), n.dtype)
            return where(ok, g, const(0, n.dtype))

        expr = _rewrite(x.expr, on_load, old_index, {})
        if valid_fn is not None:
            expr = where(valid_fn(), expr, const(0, x.dtype))
    return Lazy(tuple(new_shape), x.dtype, expr)


# --- elementwise -------------------------------------------------------------------------------


def _combine(ctx, xs: list) -> list:
    """Make inputs share at most one pending reduction."""
    reds = [x for x in xs if x.red is not None]
    if len(reds) <= 1:
        return xs
    keep = reds[0]
    return [x if (x.red is None or x is keep) else ctx.materialize(x) for x in xs]


def _red_of(xs):
    for x in xs:
        if x.red is not None:
            return x.red
    return None


def elementwise(ctx, xs: list, fn, out_dtype=None) -> Lazy:
    xs = _combine(ctx, xs)
    shape = xs[0].shape
    with ir.shape_context(shape):
        expr = fn(*[x.expr for x in xs])
    return Lazy(shape, expr.dtype if out_dtype is None else out_dtype, expr, _red_of(xs))


def _f(op):
    return lambda *a: alu(op, *a)


_SIMPLE = {
    "neg": "neg",
    "floor": "floor",
    "ceil": "ceil",
    "exp": "exp",
    "exp2": "exp2",
    "log": "log",
    "log1p": "log1p",
    "expm1": "expm1",
    "tanh": "tanh",
    "logistic": "logistic",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "asin": "asin",
    "acos": "acos",
    "atan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "asinh": "asinh",
    "acosh": "acosh",
    "atanh": "atanh",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "cbrt": "cbrt",
    "abs": "abs",
    "sign": "sign",
    "not": "not",
    "erf": "erf",
    "erfc": "erfc",
    "erf_inv": "erf_inv",
    "lgamma": "lgamma",
    "digamma": "digamma",
    "population_count": "popcnt",
    "clz": "clz",
    "add": "add",
    "add_any": "add",
    "sub": "sub",
    "mul": "mul",
    "div": "div",
    "rem": "rem",
    "pow": "pow",
    "max": "max",
    "min": "min",
    "atan2": "atan2",
    "nextafter": "nextafter",
    "and": "and",
    "or": "or",
    "xor": "xor",
    "eq": "eq",
    "ne": "ne",
    "lt": "lt",
    "le": "le",
    "gt": "gt",
    "ge": "ge",
    "shift_left": "shl",
    "shift_right_arithmetic": "shr",
}

rules: dict = {}


def _simple_rule(op):
    return lambda ctx, *xs: elementwise(ctx, list(xs), _f(op))


for _name, _op in _SIMPLE.items():
    rules[_name] = _simple_rule(_op)


def _unsigned(d):
    """The unsigned integer dtype of d's width (d itself when unsigned)."""
    return dtypes.BY_NAME["u" + d.name] if d.kind == "i" else d


def _shr_logical(a, b):
    u = _unsigned(a.dtype)
    return ir.bitcast(alu("shr", ir.bitcast(a, u), ir.bitcast(b, u)), a.dtype)


rules["shift_right_logical"] = lambda ctx, x, y: elementwise(ctx, [x, y], _shr_logical)
rules["is_finite"] = lambda ctx, x: elementwise(ctx, [x], _f("isfinite"))
rules["square"] = lambda ctx, x: elementwise(ctx, [x], lambda a: alu("mul", a, a))
rules["round"] = lambda ctx, x, rounding_method: elementwise(
    ctx, [x], _f("round_even" if rounding_method == 1 else "round_away")
)


def _ipow(a: Node, y: int) -> Node:
    if y == 0:
        return const(1, a.dtype)
    neg = y < 0
    y = -y if neg else y
    acc_, base = None, a
    while y:
        if y & 1:
            acc_ = base if acc_ is None else alu("mul", acc_, base)
        y >>= 1
        if y:
            base = alu("mul", base, base)
    return alu("div", const(1, a.dtype), acc_) if neg else acc_


rules["integer_pow"] = lambda ctx, x, y: elementwise(ctx, [x], lambda a: _ipow(a, y))


def _select_n(ctx, which, *cases):
    def fn(w, *cs):
        if w.dtype is BOOL:
            return where(w, cs[1], cs[0]) if len(cs) == 2 else cs[0]
        out = cs[-1]
        for i in range(len(cs) - 2, -1, -1):
            out = where(alu("eq", w, const(i, w.dtype)), cs[i], out)
        return out

    if which.shape != cases[0].shape:
        which = broadcast_in_dim(ctx, which, cases[0].shape, ())
    return elementwise(ctx, [which, *cases], fn)


rules["select_n"] = _select_n
rules["convert_element_type"] = lambda ctx, x, new_dtype, weak_type: elementwise(ctx, [x], lambda a: cast(a, new_dtype))
rules["bitcast_convert_type"] = lambda ctx, x, new_dtype: elementwise(ctx, [x], lambda a: ir.bitcast(a, new_dtype))
rules["stop_gradient"] = lambda ctx, x: x
rules["copy"] = lambda ctx, x: ctx.materialize(x) if x.red is None and x.expr.op == "load" else x


def _iota(ctx, *, dtype, shape, dimension):
    return Lazy(tuple(shape), dtype, cast(idx(dimension), dtype))


rules["iota"] = _iota

# --- movement ------------------------------------------------------------------------------------

rules["broadcast_in_dim"] = lambda ctx, x, shape, broadcast_dimensions: broadcast_in_dim(
    ctx, x, shape, broadcast_dimensions
)
rules["reshape"] = lambda ctx, x, new_sizes, dimensions: reshape(ctx, x, new_sizes)
rules["transpose"] = lambda ctx, x, permutation: permute(ctx, x, permutation)
rules["rev"] = lambda ctx, x, dimensions: flip(ctx, x, dimensions)


def _slice(ctx, x, start_indices, limit_indices, strides):
    x = shrink(ctx, x, list(zip(start_indices, limit_indices)))
    return stride(ctx, x, strides) if strides else x


rules["slice"] = _slice


def _pad(ctx, x, padval, padding_config):
    # Negative padding crops; interior padding interleaves; the rest is a masked view.
    if any(lo < 0 or hi < 0 for lo, hi, _ in padding_config):
        bounds = []
        for (lo, hi, it), n in zip(padding_config, x.shape):
            full_n = n + max(0, n - 1) * it
            bounds.append((max(0, -lo), full_n - max(0, -hi)))
        cfg = [(max(lo, 0), max(hi, 0), it) for lo, hi, it in padding_config]
        inner = _pad(ctx, x, padval, [(0, 0, it) for _, _, it in padding_config])
        inner = shrink(ctx, inner, bounds)
        return _pad(ctx, inner, padval, [(lo, hi, 0) for lo, hi, _ in cfg])
    if any(it for _, _, it in padding_config):
        shape = tuple(lo + hi + n + max(0, n - 1) * it for n, (lo, hi, it) in zip(x.shape, padding_config))

        def index_fn():
            return tuple(
                alu("idiv", alu("sub", idx(i), const(lo, i32)), const(it + 1, i32))
                if it
                else alu("sub", idx(i), const(lo, i32))
                for i, (lo, _, it) in enumerate(padding_config)
            )

        def valid_fn():
            v = const(True, BOOL)
            for i, ((lo, _, it), n) in enumerate(zip(padding_config, x.shape)):
                d = alu("sub", idx(i), const(lo, i32))
                v = alu("and", v, alu("ge", d, const(0, i32)))
                v = alu("and", v, alu("lt", d, const(max(0, (n - 1) * (it + 1) + 1), i32)))
                if it:
                    v = alu("and", v, alu("eq", alu("mod", d, const(it + 1, i32)), const(0, i32)))
            return v

        body = gather_move(ctx, x, shape, index_fn)
        with ir.shape_context(shape):
            v = valid_fn()
        return _fill_outside(ctx, body, padval, v)
    pads = [(lo, hi) for lo, hi, _ in padding_config]
    padded = pad_zero(ctx, x, pads)
    if padval.red is None and padval.expr.op == "const" and padval.expr.arg == 0:
        return padded
    with ir.shape_context(padded.shape):
        v = _inside_pads(pads, x.shape)
    return _fill_outside(ctx, padded, padval, v)


def _fill_outside(ctx, body: Lazy, padval: Lazy, valid: Node) -> Lazy:
    pv = broadcast_in_dim(ctx, padval, body.shape, ())
    return elementwise(ctx, [body, pv], lambda b, p: where(valid, b, p))


rules["pad"] = _pad


def _concatenate(ctx, *xs, dimension):
    total = sum(x.shape[dimension] for x in xs)
    parts, off = [], 0
    for x in xs:
        n = x.shape[dimension]
        pads = [(0, 0)] * len(x.shape)
        pads[dimension] = (off, total - off - n)
        parts.append((off + n, pad_zero(ctx, x, pads)))
        off += n
    out = parts[-1][1]
    shape = out.shape
    for end, p in reversed(parts[:-1]):
        with ir.shape_context(shape):
            cond = alu("lt", idx(dimension), const(end, i32))
        out = elementwise(ctx, [p, out], lambda a, b, cond=cond: where(cond, a, b))
    return out


rules["concatenate"] = _concatenate

# --- reductions ----------------------------------------------------------------------------------

_IDENTITY = {
    "sum": lambda d: 0,
    "prod": lambda d: 1,
    "and": lambda d: True,
    "or": lambda d: False,
}


def reduce(ctx, x: Lazy, op: str, axes, out_dtype=None) -> Lazy:
    """op over `axes` of x; the result has out_dtype (default x's), cast from the accumulator. An empty
    reduction is its identity, a constant: callers never assume the result holds a reduction."""
    axes = tuple(sorted(axes))
    out_dtype = out_dtype or x.dtype
    if x.red is not None:
        x = ctx.materialize(x)
    kept = [i for i in range(len(x.shape)) if i not in axes]
    perm = kept + list(axes)
    body = permute(ctx, x, perm) if perm != list(range(len(perm))) else x
    out_shape = tuple(x.shape[i] for i in kept)
    if not axes:
        return x
    if math.prod(x.shape[a] for a in axes) == 0:
        if op in ("max", "min") and x.dtype.kind == "f":
            v = float("-inf") if op == "max" else float("inf")
        elif op in ("max", "min"):
            info = dtypes.iinfo(x.dtype) if x.dtype.kind in "iu" else None
            v = (info.min if op == "max" else info.max) if info else op == "min"
        else:
            v = _IDENTITY[op](x.dtype)
        return constant(v, out_dtype, out_shape)
    adt = x.dtype
    if op in ("sum", "prod") and x.dtype.name in dtypes.NARROW_FLOATS:
        adt = dtypes.float32  # accumulate half precision in f32
    b = cast(body.expr, adt)
    red = Red(op, b, body.shape)
    return Lazy(out_shape, out_dtype, cast(ir.acc(adt), out_dtype), red)


for _name, _op in (
    ("reduce_sum", "sum"),
    ("reduce_prod", "prod"),
    ("reduce_max", "max"),
    ("reduce_min", "min"),
    ("reduce_and", "and"),
    ("reduce_or", "or"),
):
    rules[_name] = (
        lambda op: (
            lambda ctx, x, axes: reduce(
                ctx, x, op if x.dtype is not BOOL else {"max": "or", "min": "and", "sum": "or"}.get(op, op), axes
            )
        )
    )(_op)


def _reduce_xor(ctx, x, axes):
    # xor-reduction = parity of the sum for bools; for ints, fall back to a loop-free bit trick
    s = reduce(ctx, elementwise(ctx, [x], lambda a: cast(a, i32)), "sum", axes)
    s = ctx.materialize(s)
    return elementwise(ctx, [s], lambda a: cast(alu("rem", a, const(2, i32)), x.dtype))


rules["reduce_xor"] = _reduce_xor


def _arg_reduce(op):
    def rule(ctx, x, axes, index_dtype):
        r = reduce(ctx, x, op, axes)
        return Lazy(r.shape, index_dtype, cast(ir.acc(i32), index_dtype), Red(op, r.red.body, r.red.full_shape))

    return rule


rules["argmax"] = _arg_reduce("argmax")
rules["argmin"] = _arg_reduce("argmin")


def _dot_general(ctx, x, y, dimension_numbers, precision, preferred_element_type):
    (xc, yc), (xb, yb) = dimension_numbers
    xf = [i for i in range(len(x.shape)) if i not in xc and i not in xb]
    yf = [i for i in range(len(y.shape)) if i not in yc and i not in yb]
    B = [x.shape[i] for i in xb]
    M = [x.shape[i] for i in xf]
    N = [y.shape[i] for i in yf]
    K = [x.shape[i] for i in xc]
    full = tuple(B + M + N + K)
    nb, nm, nn_, nk = len(B), len(M), len(N), len(K)
    # An operand computed on the fly (relu's derivative, a scale) is evaluated again for every
    # output column it meets; past a small product it is written out once instead, which also
    # gives the backends' tiled matmul plain loads (wasm: 4x faster on the MLP's weight grad).
    if K and math.prod(full) >= _MATERIALIZE_MATMUL_OPERANDS:
        x, y = (v if _plain(v) else ctx.materialize(v) for v in (x, y))
    # x: (B, M, K) -> broadcast to (B, M, N, K); y: (B, N, K) -> (B, M, N, K)
    xt = permute(ctx, x, list(xb) + xf + list(xc))
    yt = permute(ctx, y, list(yb) + yf + list(yc))
    xdims = list(range(nb)) + list(range(nb, nb + nm)) + list(range(nb + nm + nn_, nb + nm + nn_ + nk))
    ydims = list(range(nb)) + list(range(nb + nm, nb + nm + nn_)) + list(range(nb + nm + nn_, nb + nm + nn_ + nk))
    xe = broadcast_in_dim(ctx, xt, full, xdims)
    ye = broadcast_in_dim(ctx, yt, full, ydims)
    out_dtype = preferred_element_type or x.dtype
    adt = dtypes.float32 if out_dtype.name in dtypes.NARROW_FLOATS else out_dtype
    if out_dtype is BOOL:
        prod = elementwise(ctx, [xe, ye], lambda a, b: alu("and", a, b))
        return reduce(ctx, prod, "or", range(nb + nm + nn_, len(full)))
    prod = elementwise(ctx, [xe, ye], lambda a, b: alu("mul", cast(a, adt), cast(b, adt)))
    if not K:
        return elementwise(ctx, [prod], lambda a: cast(a, out_dtype))
    return reduce(ctx, prod, "sum", range(nb + nm + nn_, len(full)), out_dtype)


rules["dot_general"] = _dot_general
_MATERIALIZE_MATMUL_OPERANDS = 1 << 16


def _plain(x: Lazy) -> bool:
    """A value read straight from a buffer (through a view, maybe widened by a cast)."""
    e = x.expr
    if e.op == "cast":
        e = e.srcs[0]
    return x.red is None and e.op == "load"


# --- routines ------------------------------------------------------------------------------------


def _last_axis_routine(ctx, name, xs, axis, params, out_dtypes=None):
    """Run a last-axis routine on xs moved so that `axis` is last, then move results back."""
    nd = len(xs[0].shape)
    perm = [i for i in range(nd) if i != axis] + [axis]
    moved = [permute(ctx, x, perm) if axis != nd - 1 else x for x in xs]
    in_avals = tuple(ShapedArray(m.shape, m.dtype) for m in moved)
    out_avals = in_avals if out_dtypes is None else tuple(ShapedArray(moved[0].shape, d) for d in out_dtypes)
    outs = ctx.routine(Routine(name, params, in_avals, out_avals), moved)
    if axis != nd - 1:
        inv = [0] * nd
        for i, p in enumerate(perm):
            inv[p] = i
        outs = [permute(ctx, o, inv) for o in outs]
    return outs


for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    rules[_name] = (
        lambda name: (
            lambda ctx, x, axis, reverse: _last_axis_routine(
                ctx, "cumulative", [x], axis, {"op": name[3:], "reverse": reverse}
            )[0]
        )
    )(_name)


def _sort(ctx, *xs, dimension, is_stable, num_keys):
    # "iota": the payload operands that are the index along the sorted axis (argsort's): a backend
    # may write the sorting permutation there instead of gathering the iota through it
    iota = tuple(j for j, x in enumerate(xs) if j >= num_keys and _is_iota(x, dimension))
    return _last_axis_routine(ctx, "sort", list(xs), dimension, {"num_keys": num_keys, "iota": iota})


def _is_iota(x: Lazy, axis: int) -> bool:
    """x is the int32 index along axis (lax.broadcasted_iota's value)."""
    e = x.expr
    if e.op == "cast" and e.dtype == i32:
        e = e.srcs[0]
    return x.red is None and x.dtype == i32 and e.op == "idx" and e.arg == axis


rules["sort"] = _sort


def _linalg_routine(name):
    def rule(ctx, *xs, **params):
        in_avals = tuple(ShapedArray(x.shape, x.dtype) for x in xs)
        out_aval = in_avals[-1] if name == "triangular_solve" else in_avals[0]
        return ctx.routine(Routine(name, params, in_avals, (out_aval,)), list(xs))[0]

    return rule


rules["cholesky"] = _linalg_routine("cholesky")
rules["triangular_solve"] = _linalg_routine("triangular_solve")

# --- PRNG: threefry2x32 as plain uint32 arithmetic, so it fuses into consumers -------------------

_ROT = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry_expr(k0: Node, k1: Node, x0: Node, x1: Node) -> tuple[Node, Node]:
    u32 = dtypes.uint32

    def c(v):
        return const(v, u32)

    def rotl(v, r):
        return alu("or", alu("shl", v, c(r)), alu("shr", v, c(32 - r)))

    k2 = alu("xor", alu("xor", k0, k1), c(0x1BD11BDA))
    ks = (k0, k1, k2)
    x0 = alu("add", x0, k0)
    x1 = alu("add", x1, k1)
    for block in range(5):
        for r in _ROT[block % 2]:
            x0 = alu("add", x0, x1)
            x1 = alu("xor", rotl(x1, r), x0)
        x0 = alu("add", x0, ks[(block + 1) % 3])
        x1 = alu("add", alu("add", x1, ks[(block + 2) % 3]), c(block + 1))
    return x0, x1


def _threefry(ctx, k0, k1, x0, x1):
    xs = _combine(ctx, [k0, k1, x0, x1])
    with ir.shape_context(x0.shape):
        o0, o1 = threefry_expr(*[x.expr for x in xs])
    return [Lazy(x0.shape, dtypes.uint32, o0), Lazy(x0.shape, dtypes.uint32, o1)]


rules["threefry2x32"] = _threefry

# --- kernels from lazies -------------------------------------------------------------------------


def to_kernel(x: Lazy, name: str = "k") -> tuple[Kernel, list]:
    """Build a canonical Kernel computing x; returns it and the source of each kernel input."""
    sources: list = []
    index: dict = {}

    def on_load(n):
        src, tr = n.arg
        k = index.get(src)
        if k is None:
            k = index[src] = len(sources)
            sources.append(src)
        return ir.load(k, tr, n.dtype)

    memo: dict = {}

    def renumber(e):
        # gathers carry their source in arg; rename them too
        hit = memo.get(e)
        if hit is not None:
            return hit
        if e.op == "load":
            out = on_load(e)
        elif e.op == "gather":
            src = e.arg
            k = index.get(src)
            if k is None:
                k = index[src] = len(sources)
                sources.append(src)
            out = ir.gather(k, renumber(e.srcs[0]), e.dtype)
        elif not e.srcs:
            out = e
        else:
            out = ir.node(e.op, e.dtype, tuple(renumber(s) for s in e.srcs), e.arg)
        memo[e] = out
        return out

    if x.red is None:
        epi = renumber(x.expr)
        in_dtypes = _in_dtypes(epi, None, len(sources))
        return Kernel(x.shape, in_dtypes, epi, name=name), sources
    body = renumber(x.red.body)
    epi = renumber(x.expr)
    n_keep = len(x.shape)
    red_axes = tuple(range(n_keep, len(x.red.full_shape)))
    in_dtypes = _in_dtypes(epi, body, len(sources))
    return Kernel(x.red.full_shape, in_dtypes, epi, x.red.op, red_axes, body, name=name), sources


def _in_dtypes(epi, body, n):
    out = [None] * n
    for root in (epi, body):
        if root is None:
            continue
        for nd in ir.walk(root):
            if nd.op == "load":
                out[nd.arg[0]] = nd.dtype
            elif nd.op == "gather":
                out[nd.arg] = nd.dtype
    return out


def expr_size(x: Lazy) -> int:
    return len(ir.walk(x.expr)) + (len(ir.walk(x.red.body)) if x.red is not None else 0)
