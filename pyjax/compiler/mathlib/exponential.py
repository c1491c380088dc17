"""exp, exp2, expm1, log, log2, log1p in float32 and float64: range reduction by k ln2 (two-part
ln2), the exponent/mantissa split from the bits (subnormals too), polynomials per precision."""

from __future__ import annotations

from math import factorial

from pyjax.compiler import ir
from pyjax.compiler.mathlib.expr import *  # noqa: F403  (the shared vocabulary, expr.__all__)
from pyjax.core import dtypes

# exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2. float32: minimax, relative error 3e-9; float64: the
# Taylor series to r^14 (truncation 4e-18).
_EXP_P = {
    F32: [0.4999999403953552, 0.1666652113199234, 0.04166838899254799, 0.008368714712560177, 0.0013814589474350214],
    F64: [1 / factorial(i + 2) for i in range(13)],
}
# ln(1+f) = 2s + s^3 Q(s^2), s = f/(2+f), |s| <= 0.1716. float32: minimax, relative error 5e-12;
# float64: the series 2 atanh(s) to s^19 (truncation 3e-17).
_LOG_Q = {
    F32: [0.6666666269302368, 0.4000033736228943, 0.2853720784187317, 0.2358430176973343],
    F64: [2 / (2 * i + 3) for i in range(9)],
}
# x beyond which exp is 0 or inf whatever the rounding; the clamp keeps 2**k a product of normals
_EXP_RANGE = {F32: (-104.0, 89.0), F64: (-746.0, 710.0)}
# expm1: below 2**k, 2**k e^r - 1 rounds to -1
_EXPM1_KMIN = {F32: -30.0, F64: -60.0}


# ---- exponentials -------------------------------------------------------------------------


def pow2(k: V) -> V:
    """2**k for integer-valued k in the normal exponent range (float32: [-126, 127]):
    k + bias + 1.5 * 2**mant holds k + bias in its low bits; times 2**mant (mod 2**bits) moves
    them into the exponent field."""
    fm = k.fmt
    return from_bits(bits(k + (fm.bias + 1.5 * 2.0**fm.mant)) * (1 << fm.mant))


def ldexp(p: V, k: V) -> V:
    """p * 2**k (k integer-valued) in two exact-scale steps: subnormal and inf results round once."""
    bias = p.fmt.bias
    kc = clamp(k, -2.0 * (bias - 1), 2.0 * bias)
    k1 = floor(kc * 0.5)
    return (p * pow2(k1)) * pow2(kc - k1)


def expm1_kernel(r: V) -> V:
    """expm1(r) for |r| <= 0.35."""
    return madd(r * r, poly(r, pick(r, _EXP_P)), r)


def reduce_ln2(x: V) -> tuple[V, V]:
    """(k, r) with x = k ln2 + r, |r| <= ln2/2, k integer-valued (k * ln2_hi exact)."""
    k = floor(madd(x, LOG2E, 0.5))  # a tie may go either way
    return k, madd(k, -x.fmt.ln2_lo, madd(k, -x.fmt.ln2_hi, x))


def exp(x: V) -> V:
    k, r = reduce_ln2(bound(x, *pick(x, _EXP_RANGE)))  # NaN is put back below
    k1 = floor(k * 0.5)  # 2**k as 2**k1 * 2**(k - k1): one rounding, into subnormals or inf
    y = ((1.0 + expm1_kernel(r)) * pow2(k1)) * pow2(k - k1)
    return where(isnan(x), x, y)


def exp2(x: V) -> V:
    fm = x.fmt
    xc = clamp(x, fm.min_exp - 3.0, fm.bias + 3.0)
    k = floor(xc + 0.5)
    y = ldexp(1.0 + expm1_kernel((xc - k) * LN2), k)
    return where(isnan(x), x, y)


def expm1(x: V) -> V:
    k, r = reduce_ln2(clamp(x, *pick(x, _EXP_RANGE)))
    top = x.fmt.bias - 1.0  # the largest 2**k the sum below takes; beyond, a second factor
    s = pow2(clamp(k, pick(x, _EXPM1_KMIN), top))
    t = pow2(V(ir.alu("max", k.n, ir.const(top, x.dtype))) - top)  # 2**(k - top) past 2**top, else 1
    # 2**k expm1(r) + (2**k - 1): 2**k - 1 is exact, no cancellation worse than 2x
    y = (s * expm1_kernel(r) + (s - 1.0)) * t
    return where(isnan(x) | x.eq(0.0), x, y)  # expm1(-0) = -0


# ---- logarithms ---------------------------------------------------------------------------


def _log1p_kernel(f: V) -> V:
    """log(1 + f) for |f| <= 0.415, f exact."""
    s = f / (2.0 + f)
    z = s * s
    return madd(s * z, poly(z, pick(f, _LOG_Q)), 2.0 * s)


def _frexp_sqrt2(x: V) -> tuple[V, V]:
    """(e, m - 1) with x = 2**e m, m in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too:
    their bits, converted as an integer, are the normal number x * 2**-min_exp)."""
    fm, dt = x.fmt, x.dtype
    b0 = bits(x) & fm.abs_mask
    sub = b0 < (1 << fm.mant)
    b = where(sub, bits(to(b0, dt)), b0)
    e = to(b & fm.exp_mask, dt) * 2.0**-fm.mant - where(sub, float(fm.bias - fm.min_exp), float(fm.bias), dt)
    m = from_bits((b & fm.man_mask) | fm.one)
    big = m > SQRT2
    return e + where(big, 1.0, 0.0, dt), where(big, m * 0.5, m) - 1.0


def _log_special(x: V, v: V) -> V:
    """NaN for x < 0 or NaN, -inf for +-0, x for +inf; else v."""
    a = bits(x) & x.fmt.abs_mask
    r = where(x.eq(INF), x, v)
    return where(a.eq(0), -INF, where((x < 0.0) | (a > x.fmt.exp_mask), NAN, r))


def log_of(u: V, f: V, exact: V, base2: bool = False, extra: V | float = 0.0) -> V:
    """log(u) (log2(u) if base2) + extra, where `exact` holds log(1 + f) with f exact (f = u - 1
    there) instead of splitting u: one polynomial serves both sides of log1p-like selections."""
    e, m1 = _frexp_sqrt2(u)
    e, m1 = where(exact, 0.0, e), where(exact, f, m1)
    p = _log1p_kernel(m1)
    if not base2:  # e * ln2_hi is exact
        y = madd(e, u.fmt.ln2_hi, madd(e, u.fmt.ln2_lo, p))
    else:
        y = madd(p, LOG2E, e)
    y = where(exact, p, y)  # p itself keeps log1p(-0) = -0
    return _log_special(u, y if isinstance(extra, float) and extra == 0.0 else y + extra)


def log(x: V) -> V:
    return log_of(x, x, V(ir.const(False, dtypes.bool_)))


def log2(x: V) -> V:
    return log_of(x, x, V(ir.const(False, dtypes.bool_)), base2=True)


def log1p(x: V) -> V:
    # |x| < 0.2928: x itself is exact for the kernel; elsewhere 1 + x rounds by half an ulp, which
    # log(1 + x) >= 0.25 keeps to 2 ulp
    # below 2**-54, x - x^2/2 rounds to x in float32 and float64; taking x keeps tiny normal inputs
    # off the kernel's halved intermediates, which a GPU that flushes subnormals turned into 0
    return where(fabs(x) < 5.551115123125783e-17, x, log_of(1.0 + x, x, fabs(x) < 0.2928))


TABLE = {"exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "log2": log2, "log1p": log1p}
