"""Spaced sequences: linspace, logspace, geomspace and meshgrid (numpy's numerical ranges; arange,
written with lax alone, is in _creation). They reshape, concatenate and exponentiate, so they sit
above _creation, _elementwise and _manipulation."""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import core, dtypes
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _elementwise, _manipulation
from pyjax.numpy._creation import zeros
from pyjax.numpy._promotion import _check_arraylike, asarray, broadcast_shapes, broadcast_to
from pyjax.numpy._util import _SCALARS, _aval, _result, _to_dtype

__all__ = ["linspace", "logspace", "geomspace", "meshgrid"]


# --- spaced sequences -----------------------------------------------------------------------------


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0):
    """base ** linspace(start, stop, num): numbers evenly spaced on a log scale."""
    num = operator.index(core.concrete_or_error(num, "The error occurred in jnp.logspace(): num must be static"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _result("logspace", start, stop, to_float=True)
    lin = linspace(s, e, num, endpoint=endpoint, axis=axis)
    out = _elementwise.power(_to_dtype(base, _aval(lin).dtype) if not isinstance(base, _SCALARS) else base, lin)
    if dtype is not None:
        out = lax.convert_element_type(out, dtypes.canonicalize(dtype))
    return out


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers evenly spaced on a log scale between start and stop (endpoints exact)."""
    num = operator.index(core.concrete_or_error(num, "The error occurred in jnp.geomspace(): num must be static"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _result("geomspace", start, stop, to_float=True)
    sign = _elementwise.sign(s)
    res = logspace(
        _elementwise.log10(s * sign), _elementwise.log10(e * sign), num, endpoint=endpoint, base=10.0, axis=axis
    )
    res_a = _aval(res)
    ax = canonical_axis(axis, res_a.ndim, "geomspace")
    keep = tuple(i for i in builtins.range(res_a.ndim) if i != ax)
    res = res * lax.broadcast_in_dim(
        broadcast_to(sign, broadcast_shapes(_aval(s).shape, _aval(e).shape)), res_a.shape, keep
    )
    if num > 0:
        idx = lax.broadcasted_iota(dtypes.int32, res_a.shape, ax)
        bshape = tuple(res_a.shape[i] for i in keep)
        first = lax.broadcast_in_dim(broadcast_to(s, bshape), res_a.shape, keep)
        res = _elementwise.where(idx == 0, first, res)
        if endpoint and num > 1:
            last = lax.broadcast_in_dim(broadcast_to(e, bshape), res_a.shape, keep)
            res = _elementwise.where(idx == num - 1, last, res)
    if dtype is not None:
        res = lax.convert_element_type(res, dtypes.canonicalize(dtype))
    return res


# dtypes whose division by a constant XLA computes as a product with its reciprocal (bit-exact with it)
_RECIPROCAL_DIVISION = frozenset(("float16", "float32", "float64"))


def _div_by(x, n: int, real):
    """x / n as XLA computes it for real part dtype `real`."""
    d = x.dtype
    if real.name in _RECIPROCAL_DIVISION:
        return lax.mul(x, lax.full(x.shape, 1 / n, d))
    return lax.div(x, lax.full(x.shape, n, d))


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis: int = 0):
    _check_arraylike("linspace", start, stop)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start_a, stop_a = asarray(start), asarray(stop)
    d = (
        dtypes.canonicalize(dtype)
        if dtype is not None
        else dtypes.promote(
            [(start_a.dtype, start_a.weak_type), (stop_a.dtype, stop_a.weak_type), (dtypes.default_float(), True)]
        )[0]
    )
    ct = d if d.kind in "fc" else dtypes.default_float()
    s = lax.convert_element_type(start_a, ct)
    e = lax.convert_element_type(stop_a, ct)
    bshape = broadcast_shapes(s.shape, e.shape)
    s, e = broadcast_to(s, bshape), broadcast_to(e, bshape)
    axis = axis + len(bshape) + 1 if axis < 0 else axis
    ishape = bshape[:axis] + (1,) + bshape[axis:]  # the bounds with the new axis
    div = (num - 1) if endpoint else num
    if num > 1:
        # JAX's formulation, each op in ct (so narrow floats round as JAX's do): start * (1 - t) + stop * t
        # for t = iota / div, which recovers both ends exactly
        real = dtypes.real_dtype(ct)
        delta = _div_by(lax.sub(e, s), div, real)
        t = _div_by(lax.iota(real, div), div, real)
        t = lax.convert_element_type(_manipulation.reshape(t, (1,) * axis + (div,) + (1,) * (len(bshape) - axis)), ct)
        shape = bshape[:axis] + (div,) + bshape[axis:]
        s_, e_, t = (
            broadcast_to(v, shape) for v in (_manipulation.reshape(s, ishape), _manipulation.reshape(e, ishape), t)
        )
        out = lax.add(lax.mul(s_, lax.sub(lax.full(shape, 1, ct), t)), lax.mul(e_, t))
        if endpoint:
            out = _manipulation.concatenate([out, _manipulation.reshape(e, ishape)], axis=axis)
    elif num == 1:
        delta = lax.full(bshape, math.nan, ct) if endpoint else lax.sub(e, s)
        out = _manipulation.reshape(s, ishape)
    else:  # num == 0
        delta = lax.full(bshape, math.nan, ct)
        out = zeros(ishape[:axis] + (0,) + ishape[axis + 1 :], ct)
    if d.kind in "iu":
        out = lax.floor(out)
    out = lax.convert_element_type(out, d)
    if retstep:
        return out, delta
    return out


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    _check_arraylike("meshgrid", *xi)
    xs = [_manipulation.ravel(asarray(x)) for x in xi]
    nd = len(xs)
    if indexing == "xy" and nd >= 2:
        xs[0], xs[1] = xs[1], xs[0]
    shape = tuple(x.shape[0] for x in xs)
    out = []
    for i, x in enumerate(xs):
        s = [1] * nd
        s[i] = x.shape[0]
        r = _manipulation.reshape(x, s)
        out.append(r if sparse else broadcast_to(r, shape))
    if indexing == "xy" and nd >= 2:
        out[0], out[1] = out[1], out[0]
    return out
