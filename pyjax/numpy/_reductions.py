"""Reductions of jax.numpy: sum, prod, max, min, all, any, mean, var, std, argmax/argmin,
cumulative sums and products, their nan-aware variants, and array comparisons that reduce."""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import dtypes
from pyjax.lax import lax

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None
from pyjax.numpy import _elementwise
from pyjax.numpy._promotion import (
    _aval,
    _check_arraylike,
    _is_array,
    _promote,
    asarray,
    broadcast_arrays,
    broadcast_to,
)

__all__ = [
    "sum",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "all",
    "any",
    "alltrue",
    "sometrue",
    "mean",
    "var",
    "std",
    "argmax",
    "argmin",
    "cumsum",
    "cumprod",
    "cumulative_sum",
    "cumulative_prod",
    "ptp",
    "count_nonzero",
    "average",
    "allclose",
    "array_equal",
    "array_equiv",
    "nansum",
    "nanprod",
    "nanmax",
    "nanmin",
    "nanmean",
    "nanvar",
    "nanstd",
    "nanargmax",
    "nanargmin",
    "nancumsum",
    "nancumprod",
]


def _reduce_axes(fn, x, axis):
    nd = _aval(x).ndim
    if axis is None:
        return tuple(range(nd))
    axes = (
        (axis,)
        if isinstance(axis, builtins.int) or hasattr(axis, "__index__") and not isinstance(axis, (tuple, list))
        else tuple(axis)
    )
    out = []
    for a in axes:
        a = operator.index(a)
        if not -nd <= a < nd:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
        out.append(a % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: duplicate value in 'axis': {axis}")
    return tuple(sorted(out))


def _keep(y, shape, axes, keepdims):
    if not keepdims:
        return y
    return lax.reshape(y, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _strong(a):
    """The array as a concrete (non-weak) dtype: JAX's reductions never return weakly typed results."""
    a = a if _is_array(a) else asarray(a)
    av = _aval(a)
    return lax._convert(a, av.dtype, False) if av.weak_type else a


def _reduction(name, lax_fn, bool_op=None, upcast_bool_int=False, has_initial=True, identity=None):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        _check_arraylike(name, a)
        a = _strong(a)
        axes = _reduce_axes(name, a, axis)
        av = _aval(a)
        if dtype is not None:
            a = lax.convert_element_type(a, dtype)
        elif (
            upcast_bool_int
            and av.dtype.kind in "bi"
            and av.dtype.itemsize < 4
            or (upcast_bool_int and av.dtype.kind == "b")
        ):
            a = lax.convert_element_type(a, dtypes.default_int())
        elif upcast_bool_int and av.dtype.kind == "u" and av.dtype.itemsize < 4:
            a = lax.convert_element_type(a, dtypes.uint32)
        if where is not None:
            if identity is None:
                if initial is None:
                    raise ValueError(
                        f"reduction operation {name} does not have an identity, so to use a where "
                        f"mask one has to specify 'initial'"
                    )
                fillv = initial
            else:
                fillv = identity(_aval(a).dtype)
            a = _where_fill(where, a, fillv)
        if identity is None and initial is None:
            for ax in axes:
                if av.shape[ax] == 0:
                    raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        y = lax_fn(a, axes)
        if initial is not None:
            y = _combine_initial(name, y, initial)
        return _keep(y, av.shape, axes, keepdims)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: reduce over axis (None = all axes)."
    return f


def _where_fill(_where_fn, a, fillv):
    w = _where_fn if _is_array(_where_fn) else asarray(_where_fn)
    w = broadcast_to(w, _aval(a).shape)
    return lax.select(w, a, lax.full_like(a, fillv))


def _combine_initial(name, y, initial):
    if name in ("sum",):
        return _elementwise.add(y, initial)
    if name == "prod":
        return _elementwise.multiply(y, initial)
    if name in ("max", "amax"):
        return _elementwise.maximum(y, initial)
    if name in ("min", "amin"):
        return _elementwise.minimum(y, initial)
    return y


def _lax_sum(a, axes):
    if _aval(a).dtype is dtypes.bool_:
        a = lax.convert_element_type(a, dtypes.default_int())
    return lax.reduce_sum(a, axes)


def _lax_prod(a, axes):
    if _aval(a).dtype is dtypes.bool_:
        a = lax.convert_element_type(a, dtypes.default_int())
    return lax.reduce_prod(a, axes)


def _lax_max(a, axes):
    return lax.reduce_or(a, axes) if _aval(a).dtype is dtypes.bool_ else lax.reduce_max(a, axes)


def _lax_min(a, axes):
    return lax.reduce_and(a, axes) if _aval(a).dtype is dtypes.bool_ else lax.reduce_min(a, axes)


def _ident_zero(d):
    return 0


def _ident_one(d):
    return 1


sum = _reduction("sum", _lax_sum, upcast_bool_int=True, identity=_ident_zero)


prod = _reduction("prod", _lax_prod, upcast_bool_int=True, identity=_ident_one)


max = _reduction("max", _lax_max)


min = _reduction("min", _lax_min)


amax, amin = max, min


def _to_bool(a):
    a = _strong(a)
    if _aval(a).dtype is not dtypes.bool_:
        a = lax.ne(*_promote("any", a, 0))
    return a


def _truth_reduce(name: str, reduce, identity: bool, a, axis, keepdims, where):
    """all/any: `reduce` the truth values of a over axis, masked-out entries counting as `identity`."""
    _check_arraylike(name, a)
    a = _to_bool(a)
    axes = _reduce_axes(name, a, axis)
    if where is not None:
        a = _where_fill(where, a, identity)
    return _keep(reduce(a, axes), _aval(a).shape, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    return _truth_reduce("all", lax.reduce_and, True, a, axis, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    return _truth_reduce("any", lax.reduce_or, False, a, axis, keepdims, where)


alltrue, sometrue = all, any


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _check_arraylike("mean", a)
    a = _strong(a)
    axes = _reduce_axes("mean", a, axis)
    av = _aval(a)
    if dtype is None:
        d = av.dtype if av.dtype.kind in "fc" else dtypes.default_float()
    else:
        d = dtypes.canonicalize(dtype)
    x = lax.convert_element_type(a, d) if av.dtype is not d else a
    if where is not None:
        w = broadcast_to(where if _is_array(where) else asarray(where), av.shape)
        s = sum(x, axis=axes, keepdims=keepdims, where=w)
        n = sum(lax.convert_element_type(w, d), axis=axes, keepdims=keepdims)
        return lax.div(s, n)
    s = lax.reduce_sum(x, axes)
    n = _count(av.shape, axes)
    y = lax.div(s, lax.full_like(s, n)) if n else lax.div(s, lax.full_like(s, 0))
    return _keep(y, av.shape, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    _check_arraylike("var", a)
    a = _strong(a)
    if correction is not None:
        ddof = correction
    axes = _reduce_axes("var", a, axis)
    av = _aval(a)
    d = (
        dtypes.canonicalize(dtype)
        if dtype is not None
        else (av.dtype if av.dtype.kind in "fc" else dtypes.default_float())
    )
    x = lax.convert_element_type(a, d) if av.dtype is not d else a
    m = mean(x, axis=axes, keepdims=True, where=where)
    c = lax.sub(x, broadcast_to(m, av.shape))
    if d.kind == "c":  # the variance of complex values is real: mean |x - mean|^2
        c = lax.abs(c)
        d = dtypes.real_dtype(d)
    sq = lax.mul(c, c)
    if where is not None:
        w = broadcast_to(where if _is_array(where) else asarray(where), av.shape)
        n = sum(lax.convert_element_type(w, d), axis=axes, keepdims=keepdims)
        s = sum(sq, axis=axes, keepdims=keepdims, where=w)
        return lax.div(s, lax.sub(n, float(ddof)))
    n = _count(av.shape, axes) - ddof
    s = lax.reduce_sum(sq, axes)
    y = lax.div(s, lax.full_like(s, builtins.max(n, 0)))
    return _keep(y, av.shape, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    _check_arraylike("std", a)
    return _elementwise.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def _arg(name, lax_fn):
    def f(a, axis=None, out=None, keepdims=False):
        _check_arraylike(name, a)
        a = a if _is_array(a) else asarray(a)
        av = _aval(a)
        if axis is None:
            if av.size == 0:
                raise ValueError(f"attempt to get {name} of an empty sequence")
            flat = lax.reshape(a, (av.size,))  # jnp.ravel
            r = lax_fn(flat, 0, dtypes.default_int())
            return lax.reshape(r, (1,) * av.ndim) if keepdims else r
        (ax,) = _reduce_axes(name, a, axis)
        if av.shape[ax] == 0:  # nothing to choose from (an empty result along a full axis is fine)
            raise ValueError(f"attempt to get {name} of an empty sequence")
        r = lax_fn(a, ax, dtypes.default_int())
        return lax.expand_dims(r, (ax,)) if keepdims else r

    f.__name__ = name
    return f


argmax = _arg("argmax", lax.argmax)


argmin = _arg("argmin", lax.argmin)


def _cumulative(name, lax_fn, bool_to_int=True):
    def f(a, axis=None, dtype=None, out=None):
        _check_arraylike(name, a)
        a = _strong(a)
        if axis is None:
            a = lax.reshape(a, (_aval(a).size,))  # jnp.ravel
            axis = 0
        (ax,) = _reduce_axes(name, a, axis)
        if dtype is not None:
            a = lax.convert_element_type(a, dtype)
        elif _aval(a).dtype.kind == "b" and bool_to_int:
            a = lax.convert_element_type(a, dtypes.default_int())
        return lax_fn(a, ax)

    f.__name__ = name
    return f


cumsum = _cumulative("cumsum", lax.cumsum)


cumprod = _cumulative("cumprod", lax.cumprod)


cumulative_sum = cumsum


cumulative_prod = cumprod


def ptp(a, axis=None, out=None, keepdims=False):
    _check_arraylike("ptp", a)
    return _elementwise.subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    return sum(lax.ne(*_promote("count_nonzero", a, 0)), axis=axis, keepdims=keepdims, dtype=dtypes.default_int())


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    a = a if _is_array(a) else asarray(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        n = lax.full_like(avg, _count(a.shape, _reduce_axes("average", a, axis)))
        return (avg, n) if returned else avg
    w = weights if _is_array(weights) else asarray(weights)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise ValueError("average: weights shape must match a, or be 1-D along axis")
        if w.shape[0] != a.shape[operator.index(axis) % a.ndim]:
            raise ValueError(
                f"average: shape of weights {w.shape} must be consistent with the length of axis {axis} of a {a.shape}"
            )
        shape = [1] * a.ndim
        shape[operator.index(axis) % a.ndim] = w.shape[0]
        w = lax.reshape(w, tuple(shape))
    a, w = _promote("average", a, w, to_float=True)
    wsum = sum(broadcast_to(w, a.shape), axis=axis, keepdims=keepdims)
    avg = _elementwise.divide(sum(_elementwise.multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    _check_arraylike("allclose", a, b)
    return all(_elementwise.isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = _elementwise.equal(a1, a2)
    if equal_nan:
        eq = _elementwise.logical_or(eq, _elementwise.logical_and(_elementwise.isnan(a1), _elementwise.isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    try:
        a1, a2 = broadcast_arrays(a1, a2)
    except ValueError:
        return asarray(False)
    return all(_elementwise.equal(a1, a2))


def _nan_replaced(a, value):
    a = a if _is_array(a) else asarray(a)
    if _aval(a).dtype.kind != "f":
        return a
    return lax.select(lax.ne(a, a), lax.full_like(a, value), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaN as zero."""
    _check_arraylike("nansum", a)
    return sum(_nan_replaced(a, 0), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaN as one."""
    _check_arraylike("nanprod", a)
    return prod(_nan_replaced(a, 1), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extreme(name, red, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _check_arraylike(name, a)
        a = a if _is_array(a) else asarray(a)
        if _aval(a).dtype.kind != "f":
            return red(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        nan_mask = _elementwise.isnan(a)
        y = red(_nan_replaced(a, fill), axis=axis, keepdims=keepdims, initial=initial, where=where)
        all_nan = all(nan_mask, axis=axis, keepdims=keepdims)  # where not applied: JAX's rule
        return _elementwise.where(all_nan, math.nan, y)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: {red.__name__} ignoring NaN (NaN where a slice is all NaN)."
    return f


nanmax = _nan_extreme("nanmax", max, -math.inf)


nanmin = _nan_extreme("nanmin", min, math.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean over the non-NaN elements (NaN where there are none)."""
    _check_arraylike("nanmean", a)
    a = a if _is_array(a) else asarray(a)
    if _aval(a).dtype.kind != "f":
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    ok = lax.bitwise_not(_elementwise.isnan(a))
    if where is not None:
        ok = _elementwise.logical_and(ok, where)
    return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=ok)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    """Variance over the non-NaN elements."""
    _check_arraylike("nanvar", a)
    a = a if _is_array(a) else asarray(a)
    if _aval(a).dtype.kind != "f":
        return var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, correction=correction)
    ok = lax.bitwise_not(_elementwise.isnan(a))
    if where is not None:
        ok = _elementwise.logical_and(ok, where)
    return var(
        _nan_replaced(a, 0), axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=ok, correction=correction
    )


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    """Standard deviation over the non-NaN elements."""
    _check_arraylike("nanstd", a)
    return _elementwise.sqrt(
        nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, correction=correction)
    )


def _nan_arg(name, fn, fill):
    def f(a, axis=None, out=None, keepdims=False):
        _check_arraylike(name, a)
        a = a if _is_array(a) else asarray(a)
        if _aval(a).dtype.kind != "f":
            return fn(a, axis=axis, keepdims=keepdims)
        nan_mask = _elementwise.isnan(a)
        r = fn(_nan_replaced(a, fill), axis=axis, keepdims=keepdims)
        return _elementwise.where(all(nan_mask, axis=axis, keepdims=keepdims), -1, r)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: index of the extreme ignoring NaN (-1 where a slice is all NaN)."
    return f


nanargmax = _nan_arg("nanargmax", argmax, -math.inf)


nanargmin = _nan_arg("nanargmin", argmin, math.inf)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as zero."""
    _check_arraylike("nancumsum", a)
    return cumsum(_nan_replaced(a, 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as one."""
    _check_arraylike("nancumprod", a)
    return cumprod(_nan_replaced(a, 1), axis=axis, dtype=dtype)
