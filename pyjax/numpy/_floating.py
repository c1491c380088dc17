"""Floating-point decomposition and related elementwise functions: frexp, ldexp, modf, spacing, and
i0 (the modified Bessel function numpy ships).
"""

from __future__ import annotations

import math

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.numpy import _creation, _elementwise
from pyjax.numpy._promotion import _check_arraylike, asarray, broadcast_arrays
from pyjax.numpy._util import _SCALARS, _arr, _aval, _result

__all__ = ["frexp", "ldexp", "modf", "spacing", "i0"]


# --- float decomposition --------------------------------------------------------------------------

# dtype name -> (mantissa bits, exponent bits, same-width unsigned and signed int dtype names)
_FLOAT_LAYOUT = {
    "float16": (10, 5, "uint16", "int16"),
    "bfloat16": (7, 8, "uint16", "int16"),
    "float32": (23, 8, "uint32", "int32"),
    "float64": (52, 11, "uint64", "int64"),
}


def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1."""
    _check_arraylike("frexp", x)
    (x,) = _result("frexp", _arr(x), to_float=True)
    d = _aval(x).dtype
    nmant, nexp, uname, iname = _FLOAT_LAYOUT[d.name]
    u, it = dtypes.dtype(uname), dtypes.dtype(iname)
    bias = (1 << (nexp - 1)) - 1
    expmask = (1 << nexp) - 1
    # scale subnormals into the normal range first
    sub = lax.bitwise_and(lax.ne(x, 0.0), lax.lt(_elementwise.abs(x), _SMALLEST_NORMAL[d.name]))
    scale = float(2 ** (nmant + 1))
    xs = _elementwise.where(sub, x * scale, x)
    bits = lax.bitcast_convert_type(xs, u)

    def uc(v):
        return lax.full(_aval(x).shape, v, u)

    biased = lax.bitwise_and(lax.shift_right_logical(bits, uc(nmant)), uc(expmask))
    mant_bits = lax.bitwise_or(
        lax.bitwise_and(bits, uc(~(expmask << nmant) & ((1 << (nmant + nexp + 1)) - 1))), uc((bias - 1) << nmant)
    )
    mant = lax.bitcast_convert_type(mant_bits, d)
    e = lax.sub(lax.convert_element_type(biased, it), lax.full(_aval(x).shape, bias - 1, it))
    e = _elementwise.where(sub, e - (nmant + 1), e)
    special = lax.bitwise_or(lax.eq(x, 0.0), lax.bitwise_not(lax.is_finite(x)))
    mant = _elementwise.where(special, x, mant)
    e = _elementwise.where(special, lax.full(_aval(x).shape, 0, it), e)
    return mant, e.astype(dtypes.canonicalize(dtypes.int64) if iname == "int64" else dtypes.int32)


_SMALLEST_NORMAL = {"float16": 2.0**-14, "bfloat16": 2.0**-126, "float32": 2.0**-126, "float64": 2.0**-1022}


def _pow2(e, d):
    """2.0**e exactly for integer e within the normal exponent range (clamped), in dtype d."""
    nmant, nexp, uname, iname = _FLOAT_LAYOUT[d.name]
    bias = (1 << (nexp - 1)) - 1
    u = dtypes.dtype(uname)
    e = _elementwise.clip(e, 1 - bias, bias)
    b = lax.convert_element_type(e + bias, u)
    return lax.bitcast_convert_type(lax.shift_left(b, lax.full(_aval(b).shape, nmant, u)), d)


def ldexp(x1, x2, /):
    """x1 * 2**x2 (x2 an integer array), exact over the whole exponent range."""
    _check_arraylike("ldexp", x1, x2)
    x2a = _arr(x2)
    if _aval(x2a).dtype.kind not in "iub":
        raise ValueError(f"ldexp: x2 must be an integer array, got dtype {_aval(x2a).dtype.name}")
    (x1,) = _result("ldexp", _arr(x1) if not isinstance(x1, _SCALARS) else x1, to_float=True)
    x1 = _arr(x1)
    d = _aval(x1).dtype
    x1, e = broadcast_arrays(x1, x2a.astype(dtypes.int32))
    nexp = _FLOAT_LAYOUT[d.name][1]
    lim = 2 * ((1 << nexp) + _FLOAT_LAYOUT[d.name][0])
    e = _elementwise.clip(e, -lim, lim)
    h1 = lax.div(e, lax.full_like(e, 2))
    h2 = e - h1
    h1b = lax.div(h1, lax.full_like(h1, 2))
    return x1 * _pow2(h1b, d) * _pow2(h1 - h1b, d) * _pow2(h2, d)


def modf(x, /, out=None):
    """(fractional part, integral part), both with the sign of x."""
    _check_arraylike("modf", x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = _result("modf", _arr(x), to_float=True)
    whole = _elementwise.where(x >= 0, _elementwise.floor(x), _elementwise.ceil(x))
    return x - whole, whole


def spacing(x, /):
    """Distance from x to the next representable float away from zero."""
    _check_arraylike("spacing", x)
    (x,) = _result("spacing", _arr(x), to_float=True)
    d = _aval(x).dtype
    inf = lax.full_like(x, float("inf"))
    toward = _elementwise.where(lax.lt(x, lax.full_like(x, 0)), -inf, inf)
    nxt = lax.nextafter(x, toward)
    return _elementwise.where(lax.eq(_elementwise.abs(x), inf), lax.full_like(x, float("nan")), nxt - x).astype(d)


def i0(x):
    """Modified Bessel function of the first kind, order 0: power series for |x| <= 15, else asymptotic."""
    _check_arraylike("i0", x)
    x = asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(dtypes.default_float())
    ax = _elementwise.abs(x)
    small = ax <= 15
    xs = _elementwise.where(small, ax, 0)
    q = xs * xs / 4
    term, total = _creation.ones_like(xs), _creation.ones_like(xs)
    for k in range(1, 60):
        term = term * q / (k * k)
        total = total + term
    xl = _elementwise.where(small, 15, ax)
    coef, series = _creation.ones_like(xl), _creation.ones_like(xl)
    for k in range(1, 12):
        coef = coef * (2 * k - 1) ** 2 / (8 * k * xl)
        series = series + coef
    large = _elementwise.exp(xl) / _elementwise.sqrt(2 * math.pi * xl) * series
    return _elementwise.where(small, total, large)
