"""tanh, logistic, sinh, cosh and the inverse hyperbolic functions, from the exponential kernels
(float32 and float64: the precisions differ in thresholds only)."""

from __future__ import annotations

from pyjax.compiler.mathlib.exponential import exp, expm1, expm1_kernel, log1p, log_of, pow2, reduce_ln2
from pyjax.compiler.mathlib.expr import F32, F64, LN2, NAN, V, clamp, copysign, fabs, isnan, pick, sqrt, where, xorsign

# |x| from which tanh rounds to +-1 (1 - tanh(x) < 2**-mant / 2)
_TANH_ONE = {F32: 9.1, F64: 19.1}
# |x| from which sinh and cosh are exp(|x|)/2, computed as (exp(|x|/2)/2) exp(|x|/2) (float32:
# where e^-|x| is below half an ulp of e^|x|; float64: only where exp(|x|) itself overflows)
_HALF_EXP = {F32: 9.0, F64: 709.0}


def tanh(x: V) -> V:
    # em / (em + 2) with em = expm1(2|x|); tanh rounds to 1 from _TANH_ONE on, so the scale 2**k
    # (k <= 56) needs none of expm1's range handling
    a = 2.0 * clamp(fabs(x), 0.0, pick(x, _TANH_ONE))
    k, r = reduce_ln2(a)
    s = pow2(k)
    em = s * expm1_kernel(r) + (s - 1.0)
    return where(isnan(x), x, xorsign(em / (em + 2.0), x))


def logistic(x: V) -> V:
    return 1.0 / (1.0 + exp(-x))  # as JAX: 0 once exp(-x) overflows (x < -88.7); NaN passes


def sinh(x: V) -> V:
    # exp(|x|/2)^2 / 2 overflows no sooner than sinh
    ax, top = fabs(x), pick(x, _HALF_EXP)
    em = expm1(clamp(ax, 0.0, top))
    h = exp(0.5 * ax)
    return xorsign(where(ax < top, 0.5 * (em + em / (em + 1.0)), (0.5 * h) * h), x)


def cosh(x: V) -> V:
    ax, top = fabs(x), pick(x, _HALF_EXP)
    e = exp(clamp(ax, 0.0, top))
    h = exp(0.5 * ax)
    return where(ax < top, 0.5 * (e + 1.0 / e), (0.5 * h) * h)


def asinh(x: V) -> V:
    # a > 2: log(2a + 1/(sqrt(a^2 + 1) + a)) (+ ln2 past 2**28, where that is log(2a)); else
    # log1p(a + a^2 / (1 + sqrt(1 + a^2)))
    a = fabs(x)
    big = a > 268435456.0
    t = a * a
    v = a + t / (1.0 + sqrt(1.0 + t))
    large = a > 2.0
    u = where(large, where(big, a, 2.0 * a + 1.0 / (sqrt(t + 1.0) + a)), 1.0 + v)
    r = log_of(u, v, ~large & (v < 0.2928), extra=where(big, LN2, 0.0, x.dtype))
    return copysign(r, x)


def acosh(x: V) -> V:
    big = x > 268435456.0
    large = x > 2.0
    t = x - 1.0
    v = t + sqrt(2.0 * t + t * t)
    u = where(large, where(big, x, 2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))), 1.0 + v)
    r = log_of(u, v, ~large & (v < 0.2928), extra=where(big, LN2, 0.0, x.dtype))
    return where(x < 1.0, NAN, r)


def atanh(x: V) -> V:
    # |x| = 1 gives log1p(inf) = inf, |x| > 1 log1p(< -1) = NaN: IEEE division does the cases
    a = fabs(x)
    u = where(a < 0.5, 2.0 * a + 2.0 * a * a / (1.0 - a), 2.0 * a / (1.0 - a))
    return copysign(0.5 * log1p(u), x)


TABLE = {
    "tanh": tanh,
    "logistic": logistic,
    "sinh": sinh,
    "cosh": cosh,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
}
