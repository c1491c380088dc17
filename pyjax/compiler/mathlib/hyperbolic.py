"""tanh, logistic, sinh, cosh and the inverse hyperbolic functions, from the exponential kernels."""

from __future__ import annotations

from pyjax.compiler.mathlib.exponential import exp, expm1, expm1_kernel, log1p, log_of, pow2, reduce_ln2
from pyjax.compiler.mathlib.expr import LN2, NAN, V, clamp, copysign, fabs, isnan, sqrt, where, xorsign


def tanh(x: V) -> V:
    # em / (em + 2) with em = expm1(2|x|); tanh rounds to 1 from 9.1 on, so the scale 2**k
    # (k <= 27) needs none of expm1's range handling
    a = 2.0 * clamp(fabs(x), 0.0, 9.1)
    k, r = reduce_ln2(a)
    s = pow2(k)
    em = s * expm1_kernel(r) + (s - 1.0)
    return where(isnan(x), x, xorsign(em / (em + 2.0), x))


def logistic(x: V) -> V:
    return 1.0 / (1.0 + exp(-x))  # as JAX: 0 once exp(-x) overflows (x < -88.7); NaN passes


def sinh(x: V) -> V:
    # beyond |x| = 9, e^-|x| is below half an ulp of e^|x|; exp(|x|/2)^2 / 2 overflows no sooner
    ax = fabs(x)
    em = expm1(clamp(ax, 0.0, 9.0))
    h = exp(0.5 * ax)
    return xorsign(where(ax < 9.0, 0.5 * (em + em / (em + 1.0)), (0.5 * h) * h), x)


def cosh(x: V) -> V:
    ax = fabs(x)
    e = exp(clamp(ax, 0.0, 9.0))
    h = exp(0.5 * ax)
    return where(ax < 9.0, 0.5 * (e + 1.0 / e), (0.5 * h) * h)


def asinh(x: V) -> V:
    # a > 2: log(2a + 1/(sqrt(a^2 + 1) + a)) (+ ln2 past 2**28, where that is log(2a)); else
    # log1p(a + a^2 / (1 + sqrt(1 + a^2)))
    a = fabs(x)
    big = a > 268435456.0
    t = a * a
    v = a + t / (1.0 + sqrt(1.0 + t))
    large = a > 2.0
    u = where(large, where(big, a, 2.0 * a + 1.0 / (sqrt(t + 1.0) + a)), 1.0 + v)
    r = log_of(u, v, ~large & (v < 0.2928), extra=where(big, LN2, 0.0))
    return copysign(r, x)


def acosh(x: V) -> V:
    big = x > 268435456.0
    large = x > 2.0
    t = x - 1.0
    v = t + sqrt(2.0 * t + t * t)
    u = where(large, where(big, x, 2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))), 1.0 + v)
    r = log_of(u, v, ~large & (v < 0.2928), extra=where(big, LN2, 0.0))
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
