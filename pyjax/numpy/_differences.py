"""Differences and running sums: diff, ediff1d, gradient, trapezoid, unwrap and the array-API
cumulative_sum / cumulative_prod (with include_initial).
"""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _creation, _elementwise, _manipulation, _reductions
from pyjax.numpy._promotion import _check_arraylike, broadcast_to
from pyjax.numpy._util import _SCALARS, _arr, _aval, _result, _slice_axis, _to_dtype

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "unwrap", "cumulative_sum", "cumulative_prod"]


# --- differences and integrals --------------------------------------------------------------------


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """n-th discrete difference along axis (optionally with values prepended/appended)."""
    _check_arraylike("diff", a, *[v for v in (prepend, append) if v is not None])
    a = _arr(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    nd = _aval(a).ndim
    if nd == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = canonical_axis(axis, nd, "diff")
    parts = []
    for v in (prepend, append):
        if v is None:
            parts.append(None)
            continue
        v = _arr(v)
        if _aval(v).ndim == 0:
            shape = list(_aval(a).shape)
            shape[axis] = 1
            v = broadcast_to(v, tuple(shape))
        parts.append(v)
    if parts[0] is not None or parts[1] is not None:
        a = _manipulation.concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        m = _aval(a).shape[axis]
        if m == 0:
            break
        hi, lo = _slice_axis(a, 1, m, axis), _slice_axis(a, 0, m - 1, axis)
        a = lax.ne(hi, lo) if _aval(a).dtype.kind == "b" else lax.sub(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values at both ends (cast to its dtype)."""
    _check_arraylike("ediff1d", ary, *[v for v in (to_begin, to_end) if v is not None])
    a = _manipulation.ravel(_arr(ary))
    d = _aval(a).dtype
    out = diff(a) if _aval(a).shape[0] else a
    parts = []
    if to_begin is not None:
        parts.append(_manipulation.ravel(_to_dtype(to_begin, d)))
    parts.append(out)
    if to_end is not None:
        parts.append(_manipulation.ravel(_to_dtype(to_end, d)))
    return _manipulation.concatenate(parts) if len(parts) > 1 else out


def gradient(f, *varargs, axis=None, edge_order=None):
    """Numerical gradient: central differences inside, one-sided at the edges; spacing is a
    scalar or a coordinate array per axis."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a = _arr(f)
    nd = _aval(a).ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (builtins.list, builtins.tuple)):
        axes = tuple(canonical_axis(x, nd, "gradient") for x in axis)
    else:
        axes = (canonical_axis(axis, nd, "gradient"),)
    if not axes:
        return []
    if builtins.min(_aval(a).shape[x] for x in axes) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 elements are required."
        )
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(varargs)} for axis={axis}")
    (a,) = _result("gradient", a, to_float=True)
    out = [_gradient_axis(a, h, ax) for ax, h in zip(axes, spacing)]
    return out[0] if len(axes) == 1 else out


def _gradient_axis(a, h, axis):
    n = _aval(a).shape[axis]

    def s(lo, hi):
        return _slice_axis(a, lo, hi, axis)

    upper = lax.sub(s(1, 2), s(0, 1))
    lower = lax.sub(s(n - 1, n), s(n - 2, n - 1))
    if isinstance(h, _SCALARS) or _aval(_arr(h)).ndim == 0:
        h = h if isinstance(h, _SCALARS) else _to_dtype(h, _aval(a).dtype)
        upper, lower = _elementwise.true_divide(upper, h), _elementwise.true_divide(lower, h)
        inner = (
            _elementwise.true_divide(lax.sub(s(2, n), s(0, n - 2)), _elementwise.multiply(2.0, h)) if n > 2 else None
        )
    else:
        h = _arr(h)
        if _aval(h).ndim != 1:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        if _aval(h).shape[0] != n:
            raise ValueError(
                "Spacing arrays must have the same length as the dimension along which the gradient is calculated."
            )
        (h,) = _result("gradient", h, to_float=True)
        h = _to_dtype(h, _aval(a).dtype)
        shape = [1] * _aval(a).ndim
        shape[axis] = n
        h = _manipulation.reshape(h, tuple(shape))

        def hs(lo, hi):
            return _slice_axis(h, lo, hi, axis)

        upper = upper / (hs(1, 2) - hs(0, 1))
        lower = lower / (hs(n - 1, n) - hs(n - 2, n - 1))
        inner = None
        if n > 2:
            dx1 = hs(1, n - 1) - hs(0, n - 2)
            dx2 = hs(2, n) - hs(1, n - 1)
            ca = -dx2 / (dx1 * (dx1 + dx2))
            cb = (dx2 - dx1) / (dx1 * dx2)
            cc = dx1 / (dx2 * (dx1 + dx2))
            inner = ca * s(0, n - 2) + cb * s(1, n - 1) + cc * s(2, n)
    parts = [upper] + ([inner] if inner is not None else []) + [lower]
    return _manipulation.concatenate(parts, axis=axis)


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """Integral of y along axis by the trapezoidal rule (sample points x, or uniform spacing dx)."""
    _check_arraylike("trapezoid", y, *([] if x is None else [x]))
    y = _arr(y)
    if x is None:
        (y,) = _result("trapezoid", y, to_float=True)
        nd = _aval(y).ndim
        axis = canonical_axis(axis, nd, "trapezoid")
        n = _aval(y).shape[axis]
        mid = lax.add(_slice_axis(y, 1, n, axis), _slice_axis(y, 0, n - 1, axis)) if n else y
        return (
            _elementwise.multiply(dx, _reductions.sum(mid, axis=axis) * 0.5) if n else _reductions.sum(mid, axis=axis)
        )
    y, x = _result("trapezoid", y, _arr(x), to_float=True)
    nd = _aval(y).ndim
    axis = canonical_axis(axis, nd, "trapezoid")
    if _aval(x).ndim == 1:
        dxs = diff(x)
        shape = [1] * nd
        shape[axis] = _aval(dxs).shape[0]
        dxs = _manipulation.reshape(dxs, tuple(shape))
    else:
        dxs = diff(x, axis=axis)
    n = _aval(y).shape[axis]
    mid = lax.add(_slice_axis(y, 1, n, axis), _slice_axis(y, 0, n - 1, axis))
    return _reductions.sum(dxs * mid, axis=axis) * 0.5


def unwrap(p, discont=None, axis: int = -1, period=2 * math.pi):
    """Unwrap phases: remove jumps larger than discont by adding multiples of period.

    p and period are promoted together, as in JAX: an integer p with an integer period stays
    integer (half a period is then period // 2), with the default period 2*pi it becomes float."""
    _check_arraylike("unwrap", p)
    p, period = _result("unwrap", _arr(p), period)
    d = _aval(p).dtype
    if d.kind == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    axis = canonical_axis(axis, _aval(p).ndim, "unwrap")
    n = _aval(p).shape[axis]
    if n < 2:
        return p
    half = _elementwise.floor_divide(period, 2) if d.kind in "iu" else _elementwise.true_divide(period, 2)
    discont = _elementwise.true_divide(period, 2) if discont is None else discont
    dd = diff(p, axis=axis)
    ddmod = _elementwise.remainder(dd + half, period) - half
    ddmod = _elementwise.where((ddmod == -half) & (dd > 0), half, ddmod)
    corr = _elementwise.where(_elementwise.abs(dd) < discont, _creation.zeros_like(dd), ddmod - dd)
    up = _slice_axis(p, 1, n, axis) + lax.cumsum(corr, axis)
    return _manipulation.concatenate([_slice_axis(p, 0, 1, axis), up.astype(d)], axis=axis)


def _cumulative_api(name: str, fn):
    def cumulative(x, /, *, axis=None, dtype=None, include_initial: bool = False):
        _check_arraylike(name, x)
        x = _arr(x)
        nd = _aval(x).ndim
        if nd == 0:
            raise ValueError(
                f"The input must be non-scalar to take a cumulative {name[len('cumulative_') :]}, "
                "however a scalar value or scalar array was given."
            )
        if axis is None:
            if nd > 1:
                raise ValueError(
                    f"The input array has rank {nd}, however axis was not set to an explicit value. The axis "
                    "argument is only optional for one-dimensional arrays."
                )
            axis = 0
        axis = canonical_axis(axis, nd, name)
        d = _aval(x).dtype
        if dtype is None and name == "cumulative_sum" and d.kind in "biu" and d.itemsize < 4:
            dtype = "uint32" if d.kind == "u" else "int32"  # the array API's sum widens small integers (JAX too)
        out = fn(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(_aval(out).shape)
            shape[axis] = 1
            first = _creation.full(shape, 0 if name == "cumulative_sum" else 1, _aval(out).dtype)
            out = _manipulation.concatenate([first, out], axis=axis)
        return out

    cumulative.__name__ = name
    cumulative.__doc__ = f"The array API's {name}: axis needed beyond 1-D, include_initial prepends the identity."
    return cumulative


cumulative_sum = _cumulative_api("cumulative_sum", _reductions.cumsum)


cumulative_prod = _cumulative_api("cumulative_prod", _reductions.cumprod)
