"""Windowed reductions: reduce_window over sliding (strided, dilated, padded) windows.

Monoid reductions get one primitive each (reduce_window_sum/max/min like JAX, plus
reduce_window_prod for `lax.mul`); they lower to a single reduction Kernel over a window view.
`reduce_window` recognizes the computation by tracing it on two scalars: a single add, mul,
max or min (or and/or on booleans) of its two arguments. An init value that is not the
monoid's identity (or is traced) seeds every window's reduction once, as in JAX. Other
computations, and several operands at once (the variadic form), fold the window's strided slices
in one by one (_reduce_window_unrolled).

JAX's select_and_gather_add_p, select_and_scatter_add_p and select_and_scatter_p (the max/min-pool
derivatives) are composed primitives here: the jvp and the vjp of reduce_window_max/min.

Gradients: the sum's transpose is itself a windowed sum of the dilated cotangent; max/min
send each window's tangent to its first maximal element (JAX's select-and-gather rule), and
their vjp is the transpose of that linear map.
"""

from __future__ import annotations

import builtins
import itertools
import math
import operator
from collections.abc import Callable, Sequence

from pyjax.core import dtypes
from pyjax.core.core import ShapedArray, Tracer, bind
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.interpreters import ad, batching, staging
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax
from pyjax.lax._util import _arr, static_ints
from pyjax.lax.convolution import padtype_to_pads
from pyjax.lax.decomposed import composed_primitive
from pyjax.lax.lax import _as_array, _aval, _prim
from pyjax.runtime import execute as _execute

__all__ = [
    "reduce_window",
    "reduce_window_sum",
    "reduce_window_max",
    "reduce_window_min",
    "reduce_window_shape_tuple",
    "reduce_window_sum_p",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_prod_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
    "select_and_scatter_p",
]


def _dilate(n: int, d: int) -> int:
    return 0 if n == 0 else 1 + d * (n - 1)


def reduce_window_shape_tuple(
    operand_shape, window_dimensions, window_strides, padding, base_dilation=None, window_dilation=None
) -> tuple:
    """Output shape of a windowed reduction."""
    nd = len(operand_shape)
    base_dilation = base_dilation or (1,) * nd
    window_dilation = window_dilation or (1,) * nd
    out = []
    for n, k, s, (lo, hi), bd, wd in zip(
        operand_shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    ):
        padded = _dilate(n, bd) + lo + hi
        span = _dilate(k, wd)
        out.append(builtins.max(0, (padded - span) // s + 1) if padded >= span else 0)
    return tuple(out)


def _rw_abstract(name):
    def rule(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        nd = x.ndim
        for pname, v in (
            ("window_dimensions", window_dimensions),
            ("window_strides", window_strides),
            ("padding", padding),
            ("base_dilation", base_dilation),
            ("window_dilation", window_dilation),
        ):
            if len(v) != nd:
                raise TypeError(f"{name}: {pname} must have one entry per operand dimension ({nd}), got {tuple(v)}.")
        for pname, v in (
            ("window_dimensions", window_dimensions),
            ("window_strides", window_strides),
            ("base_dilation", base_dilation),
            ("window_dilation", window_dilation),
        ):
            if any(s < (0 if pname == "window_dimensions" else 1) for s in v):
                raise TypeError(f"{name}: {pname} must be positive, got {tuple(v)}.")
        if name == "reduce_window_sum" and x.dtype.kind == "b":
            raise TypeError("reduce_window_sum does not accept dtype bool.")
        shape = reduce_window_shape_tuple(
            x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
        )
        return ShapedArray(shape, x.dtype, x.weak_type)

    return rule


def _rw_prim(op):
    p = _prim(f"reduce_window_{op}")
    p.abstract_eval = _rw_abstract(p.name)

    def batch(size, vals, dims, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
        x = batching.moveaxis(vals[0], dims[0], 0)
        return bind(
            p,
            x,
            window_dimensions=(1,) + window_dimensions,
            window_strides=(1,) + window_strides,
            padding=((0, 0),) + padding,
            base_dilation=(1,) + base_dilation,
            window_dilation=(1,) + window_dilation,
        ), 0

    batching.batch_rules[p] = batch
    return p


reduce_window_sum_p = _rw_prim("sum")
reduce_window_max_p = _rw_prim("max")
reduce_window_min_p = _rw_prim("min")
reduce_window_prod_p = _rw_prim("prod")
_PRIMS = {
    "sum": reduce_window_sum_p,
    "max": reduce_window_max_p,
    "min": reduce_window_min_p,
    "prod": reduce_window_prod_p,
}


# --- autodiff -----------------------------------------------------------------------------------


def _sum_transpose(ct, x_shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """x-cotangent of reduce_window_sum: a windowed sum over the stride-dilated cotangent."""
    ca = _aval(ct)
    pads = []
    for n, k, q, s, (lo, _), bd, wd in zip(
        x_shape, window_dimensions, ca.shape, window_strides, padding, base_dilation, window_dilation
    ):
        lo2 = (k - 1) * wd - lo
        length = (n - 1) * bd + (k - 1) * wd + 1 if n else 0
        pads.append((lo2, length - lo2 - _dilate(q, s)))
    return bind(
        reduce_window_sum_p,
        ct,
        window_dimensions=window_dimensions,
        window_strides=base_dilation,
        padding=tuple(pads),
        base_dilation=window_strides,
        window_dilation=window_dilation,
    )


def _sum_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    z = bind(reduce_window_sum_p, x, **params)
    return z, Zero(_aval(z)) if type(t) is Zero else bind(reduce_window_sum_p, t, **params)


ad.jvp_rules[reduce_window_sum_p] = _sum_jvp
ad.transpose_rules[reduce_window_sum_p] = lambda ct, x, **params: [_sum_transpose(ct, _aval(x).shape, **params)]


def _patches(x, fill, out_shape, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """The window taps of x as a list (one per window offset, row-major) of arrays of out_shape."""
    xp = lax.pad(x, fill, [(lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation)])
    out = []
    for offs in itertools.product(*[range(k) for k in window_dimensions]):
        start = [o * wd for o, wd in zip(offs, window_dilation)]
        limit = [st + (q - 1) * s + 1 if q else st for st, q, s in zip(start, out_shape, window_strides)]
        out.append(lax.slice(xp, start, limit, window_strides))
    return out


def _chooser_tangent(op, x, t, z, params):
    """Tangent of a windowed max/min: each window's tangent at its first extremal element."""
    xa = _aval(x)
    shape = _aval(z).shape
    fill = float("-inf") if op == "max" else float("inf")
    if xa.dtype.kind != "f":
        info = dtypes.iinfo(xa.dtype)
        fill = info.min if op == "max" else info.max
    xs = _patches(x, fill, shape, **params)
    ts = _patches(t, 0, shape, **params)
    out = None
    taken = None
    for xk, tk in zip(xs, ts):
        hit = lax.eq(xk, z)
        if taken is not None:
            hit = lax.bitwise_and(hit, lax.bitwise_not(taken))
        term = lax.select(hit, tk, lax.full_like(tk, 0))
        out = term if out is None else lax.add(out, term)
        taken = hit if taken is None else lax.bitwise_or(taken, hit)
    return out


def _prod_tangent(x, t, z, params):
    """Tangent of a windowed product: sum_k t_k * prod_{j != k} x_j (exact with zeros)."""
    shape = _aval(z).shape
    xs = _patches(x, 1, shape, **params)
    ts = _patches(t, 0, shape, **params)
    w = len(xs)
    left = [None] * w
    right = [None] * w
    acc = None
    for k in range(w):
        left[k] = acc
        acc = xs[k] if acc is None else lax.mul(acc, xs[k])
    acc = None
    for k in range(w - 1, -1, -1):
        right[k] = acc
        acc = xs[k] if acc is None else lax.mul(acc, xs[k])
    out = None
    for k in range(w):
        term = ts[k]
        for f in (left[k], right[k]):
            if f is not None:
                term = lax.mul(term, f)
        out = term if out is None else lax.add(out, term)
    return out


def _nonlinear_ad(op):
    p = _PRIMS[op]

    def tangent(x, t, z, params):
        if _aval(z).size == 0 or math.prod(params["window_dimensions"]) == 0:
            return lax.full_like(z, 0)
        return _prod_tangent(x, t, z, params) if op == "prod" else _chooser_tangent(op, x, t, z, params)

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        z = bind(p, x, **params)
        if type(t) is Zero or _aval(x).dtype.kind != "f":
            return z, Zero(_aval(z))
        return z, tangent(x, t, z, params)

    ad.jvp_rules[p] = jvp


for _op in ("max", "min", "prod"):
    _nonlinear_ad(_op)


# --- public API ---------------------------------------------------------------------------------


def _params(x, window_dimensions, window_strides, padding, base_dilation, window_dilation) -> dict:
    nd = _aval(x).ndim
    wdims = static_ints("reduce_window", "window_dimensions", window_dimensions, nd, "operand dimension", TypeError)
    strides = static_ints("reduce_window", "window_strides", window_strides, nd, "operand dimension", TypeError)
    bdil = static_ints("reduce_window", "base_dilation", base_dilation, nd, "operand dimension", TypeError)
    wdil = static_ints("reduce_window", "window_dilation", window_dilation, nd, "operand dimension", TypeError)
    if isinstance(padding, str):
        padding = padtype_to_pads(_aval(x).shape, [_dilate(k, d) for k, d in zip(wdims, wdil)], strides, padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError) as e:
        raise TypeError(
            f"reduce_window padding must be a string or a sequence of (low, high) pairs, got {padding!r}"
        ) from e
    if len(padding) != nd:
        raise TypeError(f"reduce_window padding must have one pair per operand dimension ({nd}), got {padding}")
    return dict(
        window_dimensions=wdims, window_strides=strides, padding=padding, base_dilation=bdil, window_dilation=wdil
    )


def _monoid_op(computation: Callable, dtype) -> str | None:
    """'sum' / 'prod' / 'max' / 'min' when computation(a, b) is that monoid, else None."""
    direct = {lax.add: "sum", lax.mul: "prod", lax.max: "max", lax.min: "min"}
    if computation in direct:
        return direct[computation]
    aval = ShapedArray((), dtype)
    try:
        jaxpr, consts = staging.trace_to_jaxpr(lambda a, b: [computation(a, b)], [aval, aval])
    except Exception:  # noqa: BLE001 - a computation we cannot trace is simply not a monoid
        return None
    if consts or len(jaxpr.eqns) != 1 or len(jaxpr.outs) != 1:
        return None
    (eqn,) = jaxpr.eqns
    names = {"add": "sum", "mul": "prod", "max": "max", "min": "min", "and": "min", "or": "max"}
    op = names.get(eqn.primitive.name)
    if op is None or eqn.out_binders[0] is not jaxpr.outs[0]:
        return None
    if {id(v) for v in eqn.inputs} != {id(v) for v in jaxpr.in_binders} or len(eqn.inputs) != 2:
        return None
    if eqn.primitive.name in ("and", "or") and dtype.kind != "b":
        return None
    return op


def _concrete_scalar(v):
    if isinstance(v, Tracer):
        return None
    if isinstance(v, (builtins.bool, builtins.int, builtins.float)):
        return v
    try:
        if _aval(v).shape != ():
            return None
        a = _aval(v)
        return (
            builtins.bool(v) if a.dtype.kind == "b" else (builtins.float(v) if a.dtype.kind == "f" else builtins.int(v))
        )
    except Exception:  # noqa: BLE001
        return None


def _combine(op, a, b):
    return {"sum": lax.add, "prod": lax.mul, "max": lax.max, "min": lax.min}[op](a, b)


def reduce_window(
    operand,
    init_value,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding="VALID",
    base_dilation=None,
    window_dilation=None,
):
    """Reduce sliding windows of operand with a monoid computation (lax.add/mul/max/min or any
    function that is one of them); init_value seeds every window and fills the padding."""
    flat_ops, tree = tree_flatten(operand)
    flat_init, init_tree = tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {tree} vs. {init_tree}")

    def unrolled(operands, inits):  # folding each window position's slice in turn
        return _reduce_window_unrolled(
            operands,
            inits,
            tree,
            computation,
            window_dimensions,
            window_strides,
            padding,
            base_dilation,
            window_dilation,
        )

    if tree != tree_flatten(0)[1]:  # several operands (or one in a container): JAX's variadic form
        return unrolled(flat_ops, flat_init)
    x = _as_array(operand)
    xa = _aval(x)
    params = _params(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    op = _monoid_op(computation, xa.dtype)
    if op is None:
        return unrolled([x], [init_value])
    init = _concrete_scalar(init_value)
    ident = dtypes.reduction_identity(op, xa.dtype)
    if init is not None and (
        init == ident or (op in ("max", "min") and xa.dtype.kind == "b" and builtins.bool(init) == ident)
    ):
        return bind(_PRIMS[op], x, **params)
    # Non-identity (or traced) init: it seeds each window once; padding and dilation holes
    # contribute nothing (what JAX computes).
    iv = init_value
    if isinstance(iv, (builtins.bool, builtins.int, builtins.float)):
        iv = _execute.make_scalar(iv, xa.dtype, False)
    iv = _as_array(iv)
    if _aval(iv).shape:
        raise TypeError(f"reduce_window init_value must be a scalar, got shape {_aval(iv).shape}.")
    if _aval(iv).dtype is not xa.dtype:
        iv = lax.convert_element_type(iv, xa.dtype)
    r = bind(_PRIMS[op], x, **params)
    return _combine(op, lax.broadcast_in_dim(iv, _aval(r).shape, ()), r)


def _reduce_window_unrolled(
    operands, inits, tree, computation, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """reduce_window with any computation over one or several operands (JAX's variadic form): each
    window position's strided slice of the padded, base-dilated operands is folded in with
    computation, starting from the inits (one step per window element); padding and dilation holes
    are skipped, as in JAX."""
    ops = [_arr(o) for o in operands]
    shape = _aval(ops[0]).shape
    if builtins.any(_aval(o).shape != shape for o in ops):
        raise ValueError(f"reduce_window: all operands must have the same shape, got {[_aval(o).shape for o in ops]}")
    params = _params(ops[0], window_dimensions, window_strides, padding, base_dilation, window_dilation)
    ivs = []
    for iv, o in zip(inits, ops):
        iv = _as_array(
            _execute.make_scalar(iv, _aval(o).dtype, False)
            if isinstance(iv, (builtins.bool, builtins.int, builtins.float))
            else iv
        )
        if _aval(iv).shape:
            raise TypeError(f"reduce_window init_value must be a scalar, got shape {_aval(iv).shape}.")
        if _aval(iv).dtype is not _aval(o).dtype:
            raise TypeError(
                f"reduce_window: operand dtype {_aval(o).dtype.name} and init value dtype {_aval(iv).dtype.name} differ"
            )
        ivs.append(iv)
    wdims, strides, pads = params["window_dimensions"], params["window_strides"], params["padding"]
    bdil, wdil = params["base_dilation"], params["window_dilation"]
    pad_cfg = [(lo, hi, b - 1) for (lo, hi), b in zip(pads, bdil)]
    padded = [lax.pad(o, iv, pad_cfg) for o, iv in zip(ops, ivs)]
    real = lax.pad(lax.full(shape, True, dtypes.bool_), False, pad_cfg)  # padding and holes are skipped
    pshape = _aval(padded[0]).shape
    out_shape = tuple(
        builtins.max(0, (p - (k - 1) * d - 1) // s + 1) for p, k, d, s in zip(pshape, wdims, wdil, strides)
    )
    acc = [lax.broadcast_in_dim(iv, out_shape, ()) for iv in ivs]
    for pos in itertools.product(*(range(k) for k in wdims)):
        start = [i * d for i, d in zip(pos, wdil)]
        limit = [st + (n - 1) * s + 1 if n else st for st, n, s in zip(start, out_shape, strides)]
        vals = [lax.slice(p, start, limit, strides) for p in padded]
        take = lax.slice(real, start, limit, strides)
        new = tree_flatten(computation(tree_unflatten(tree, acc), tree_unflatten(tree, vals)))[0]
        acc = [lax.select(take, n, a) for n, a in zip(new, acc)]
    return tree_unflatten(tree, acc)


def reduce_window_sum(
    operand, window_dimensions, window_strides=None, padding="VALID", base_dilation=None, window_dilation=None
):
    """Sum over sliding windows (padding counts as zeros)."""
    x = _as_array(operand)
    return bind(
        reduce_window_sum_p, x, **_params(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    )


def reduce_window_max(
    operand, window_dimensions, window_strides=None, padding="VALID", base_dilation=None, window_dilation=None
):
    """Maximum over sliding windows (padding is -inf / the dtype's minimum)."""
    x = _as_array(operand)
    return bind(
        reduce_window_max_p, x, **_params(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    )


def reduce_window_min(
    operand, window_dimensions, window_strides=None, padding="VALID", base_dilation=None, window_dilation=None
):
    """Minimum over sliding windows (padding is +inf / the dtype's maximum)."""
    x = _as_array(operand)
    return bind(
        reduce_window_min_p, x, **_params(x, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    )


# --- JAX's select-and-gather / select-and-scatter primitives ------------------------------------------


def _pool_of(select_prim) -> Callable:
    """The windowed reduction whose derivative a select primitive picks: ge (first maximum) or le (first minimum)."""
    name = getattr(select_prim, "name", select_prim)
    if name == "ge":
        return reduce_window_max
    if name == "le":
        return reduce_window_min
    raise NotImplementedError(f"pyjax selects windows with ge or le only (the max/min-pool rules), got {name}")


def _select_and_gather_add(
    tangents, operand, *, select_prim, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Each window's tangent at its selected (first maximal / minimal) operand element."""
    from pyjax.api import jvp

    pool = _pool_of(select_prim)
    return jvp(
        lambda x: pool(x, window_dimensions, window_strides, padding, base_dilation, window_dilation),
        (operand,),
        (tangents,),
    )[1]


def _select_and_scatter_add(source, operand, *, select_prim, window_dimensions, window_strides, padding):
    """Each window's source value added at its selected operand element (zeros elsewhere)."""
    from pyjax.api import vjp

    pool = _pool_of(select_prim)
    _, pull = vjp(lambda x: pool(x, window_dimensions, window_strides, padding), operand)
    return pull(source)[0]


def _only_primitive(jaxpr) -> str:
    inner = getattr(jaxpr, "jaxpr", jaxpr)
    names = [e.primitive.name for e in inner.eqns]
    return names[0] if len(names) == 1 else "/".join(names)


def _select_and_scatter(operand, source, init_value, *, select_jaxpr, scatter_jaxpr, **params):
    """select_and_scatter_p with a ge/le select and an add scatter: init_value plus the scattered source."""
    params = {k: params[k] for k in ("window_dimensions", "window_strides", "padding")}
    if _only_primitive(scatter_jaxpr) != "add":
        raise NotImplementedError(
            f"pyjax's select_and_scatter scatters with add only, got {_only_primitive(scatter_jaxpr)}"
        )
    out = _select_and_scatter_add(source, operand, select_prim=_only_primitive(select_jaxpr), **params)
    return lax.add(out, lax.convert_element_type(init_value, _aval(out).dtype))


select_and_gather_add_p = composed_primitive("select_and_gather_add", _select_and_gather_add)
select_and_scatter_add_p = composed_primitive("select_and_scatter_add", _select_and_scatter_add)
select_and_scatter_p = composed_primitive("select_and_scatter", _select_and_scatter)
