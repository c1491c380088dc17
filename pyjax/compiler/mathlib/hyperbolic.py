"""tanh, logistic, sinh, cosh and the inverse hyperbolic functions, from the exponential kernels
(float32 and float64: the precisions differ in thresholds only)."""

from __future__ import annotations

from pyjax.compiler.mathlib.exponential import exp, expm1_kernel, log1p, log_of, pow2, reduce_ln2
from pyjax.compiler.mathlib.expr import (
    F32,
    F64,
    LN2,
    NAN,
    V,
    bound,
    clamp,
    copysign,
    fabs,
    isnan,
    pick,
    quotient,
    sqrt,
    where,
    xorsign,
)

# |x| from which tanh rounds to +-1 (1 - tanh(x) < 2**-mant / 2)
_TANH_ONE = {F32: 9.1, F64: 19.1}
# |x| past which sinh and cosh overflow (the clamp keeps the reduction's k small)
_HALF_EXP_MAX = {F32: 90.0, F64: 711.0}


def tanh(x: V) -> V:
    # em / (em + 2) with em = expm1(2|x|); tanh rounds to 1 from _TANH_ONE on, so the scale 2**k
    # (k <= 56) needs none of expm1's range handling
    a = 2.0 * bound(fabs(x), None, pick(x, _TANH_ONE))  # NaN is put back below
    k, r = reduce_ln2(a)
    s = pow2(k)
    em = s * expm1_kernel(r) + (s - 1.0)
    return where(isnan(x), x, xorsign(quotient(em, em + 2.0), x))  # em + 2 in [2, 2**27]


def logistic(x: V) -> V:
    return 1.0 / (1.0 + exp(-x))  # as JAX: 0 once exp(-x) overflows (x < -88.7); NaN passes


def _exp_halves(ax: V) -> tuple[V, V]:
    """(e^ax / 2, expm1(ax) where ax < 1) for ax >= 0 from one reduction e^ax = (1 + p) 2**k:
    e^ax / 2 = ((1 + p) 2**(k - 3)) 4, where 2**(k - 3) is normal for every k the clamp lets
    through, so it rounds once (to inf at most) and is finite up to where sinh and cosh overflow."""
    k, r = reduce_ln2(clamp(ax, 0.0, pick(ax, _HALF_EXP_MAX)))
    p = expm1_kernel(r)
    t = pow2(k - 3.0)
    s = t * 8.0  # 2**k, exact for the k <= 1 it is used for
    return ((1.0 + p) * t) * 4.0, s * p + (s - 1.0)


def sinh(x: V) -> V:
    # (em + em / (em + 1)) / 2 below 1 (no cancellation); above, h - 1/(4h) cancels by < 1.4x;
    # one division serves both
    ax = fabs(x)
    h, em = _exp_halves(ax)
    small = ax < 1.0
    q = where(small, em, -0.25) / where(small, em + 1.0, h)
    y = xorsign(where(small, 0.5 * (em + q), h + q), x)
    return where(isnan(x), x, y)


def cosh(x: V) -> V:
    h, _ = _exp_halves(fabs(x))
    return h + 0.25 / h


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
    # asinh(a) = a(1 - a^2/6 + ...) rounds to a below 2**-26 in float64 as in float32 (2**-12 would
    # do there); taking a keeps tiny normal inputs off log1p's intermediates, which a GPU that flushes
    # subnormals (SwiftShader) turned into 0
    return copysign(where(a < 1.4901161193847656e-08, a, r), x)


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
