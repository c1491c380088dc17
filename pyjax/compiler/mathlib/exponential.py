"""exp, exp2, expm1, log, log2, log1p in float32: range reduction by k ln2 (two-part ln2), the
exponent/mantissa split from the bits (subnormals too), minimax polynomials."""

from __future__ import annotations

from pyjax.compiler import ir
from pyjax.compiler.mathlib.expr import (
    F32,
    INF,
    LN2,
    LN2_HI,
    LN2_LO,
    LOG2E,
    NAN,
    SQRT2,
    V,
    bits,
    clamp,
    fabs,
    floor,
    from_bits,
    isnan,
    madd,
    poly,
    to,
    where,
)
from pyjax.core import dtypes

# exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2: relative error 3e-9.
_EXP_P = [0.4999999403953552, 0.1666652113199234, 0.04166838899254799, 0.008368714712560177, 0.0013814589474350214]
# ln(1+f) = 2s + s^3 Q(s^2), s = f/(2+f), |s| <= 0.1716: relative error 5e-12.
_LOG_Q = [0.6666666269302368, 0.4000033736228943, 0.2853720784187317, 0.2358430176973343]


# ---- exponentials -------------------------------------------------------------------------


def pow2(k: V) -> V:
    """2**k for integer-valued float32 k in [-126, 127]: k + 127 + 1.5 * 2**23 holds k + 127 in
    its low bits; times 2**23 (mod 2**32) moves them into the exponent field."""
    return from_bits(bits(k + 12583039.0) * 8388608)


def ldexp(p: V, k: V) -> V:
    """p * 2**k (k integer-valued) in two exact-scale steps: subnormal and inf results round once."""
    kc = clamp(k, -252.0, 254.0)
    k1 = floor(kc * 0.5)
    return (p * pow2(k1)) * pow2(kc - k1)


def expm1_kernel(r: V) -> V:
    """expm1(r) for |r| <= 0.35."""
    return madd(r * r, poly(r, _EXP_P), r)


def reduce_ln2(x: V) -> tuple[V, V]:
    """(k, r) with x = k ln2 + r, |r| <= ln2/2, k integer-valued (k * LN2_HI exact)."""
    k = floor(madd(x, LOG2E, 0.5))  # a tie may go either way
    return k, madd(k, -LN2_LO, madd(k, -LN2_HI, x))


def exp(x: V) -> V:
    k, r = reduce_ln2(clamp(x, -104.0, 89.0))
    k1 = floor(k * 0.5)  # 2**k as 2**k1 * 2**(k - k1): one rounding, into subnormals or inf
    y = ((1.0 + expm1_kernel(r)) * pow2(k1)) * pow2(k - k1)
    return where(isnan(x), x, y)


def exp2(x: V) -> V:
    xc = clamp(x, -152.0, 130.0)
    k = floor(xc + 0.5)
    y = ldexp(1.0 + expm1_kernel((xc - k) * LN2), k)
    return where(isnan(x), x, y)


def expm1(x: V) -> V:
    k, r = reduce_ln2(clamp(x, -104.0, 89.0))
    s = pow2(clamp(k, -30.0, 126.0))
    t = pow2(V(ir.alu("max", k.n, ir.const(126.0, F32))) - 126.0)  # 2**(k - 126) past 2**126, else 1
    # 2**k expm1(r) + (2**k - 1): 2**k - 1 is exact, no cancellation worse than 2x
    y = (s * expm1_kernel(r) + (s - 1.0)) * t
    return where(isnan(x) | x.eq(0.0), x, y)  # expm1(-0) = -0


# ---- logarithms ---------------------------------------------------------------------------


def _log1p_kernel(f: V) -> V:
    """log(1 + f) for |f| <= 0.415, f exact."""
    s = f / (2.0 + f)
    z = s * s
    return madd(s * z, poly(z, _LOG_Q), 2.0 * s)


def _frexp_sqrt2(x: V) -> tuple[V, V]:
    """(e, m - 1) with x = 2**e m, m in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too:
    their bits, converted as an integer, are the normal number x * 2**149)."""
    b0 = bits(x) & 0x7FFFFFFF
    sub = b0 < 0x00800000
    b = where(sub, bits(to(b0, F32)), b0)
    e = to(b & 0x7F800000, F32) * 2.0**-23 - where(sub, 276.0, 127.0)
    m = from_bits((b & 0x007FFFFF) | 0x3F800000)
    big = m > SQRT2
    return e + where(big, 1.0, 0.0), where(big, m * 0.5, m) - 1.0


def _log_special(x: V, v: V) -> V:
    """NaN for x < 0 or NaN, -inf for +-0, x for +inf; else v."""
    a = bits(x) & 0x7FFFFFFF
    r = where(x.eq(INF), x, v)
    return where(a.eq(0), -INF, where((x < 0.0) | (a > 0x7F800000), NAN, r))


def log_of(u: V, f: V, exact: V, scale: float = LN2, extra: V | float = 0.0) -> V:
    """log(u) * scale / ln2 + extra, where `exact` holds log(1 + f) with f exact (f = u - 1 there)
    instead of splitting u: one polynomial serves both sides of log1p-like selections."""
    e, m1 = _frexp_sqrt2(u)
    e, m1 = where(exact, 0.0, e), where(exact, f, m1)
    p = _log1p_kernel(m1)
    if scale == LN2:  # e * LN2_HI is exact
        y = madd(e, LN2_HI, madd(e, LN2_LO, p))
    else:
        y = madd(p, LOG2E, e)
    y = where(exact, p, y)  # p itself keeps log1p(-0) = -0
    return _log_special(u, y if isinstance(extra, float) and extra == 0.0 else y + extra)


def log(x: V) -> V:
    return log_of(x, x, V(ir.const(False, dtypes.bool_)))


def log2(x: V) -> V:
    return log_of(x, x, V(ir.const(False, dtypes.bool_)), scale=1.0)


def log1p(x: V) -> V:
    # |x| < 0.2928: x itself is exact for the kernel; elsewhere 1 + x rounds by <= 2.3e-7 relative
    return log_of(1.0 + x, x, fabs(x) < 0.2928)


TABLE = {"exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log2": log2, "log1p": log1p}
