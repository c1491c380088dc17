"""The error function and its complement in float32."""

from __future__ import annotations

from pyjax.compiler.mathlib.exponential import exp
from pyjax.compiler.mathlib.expr import V, bits, clamp, copysign, fabs, from_bits, isnan, madd, poly, where

# erf(x) = x E(x^2), |x| <= 1.
_ERF_E = [1.128379225730896, -0.37612637877464294, 0.11283782124519348, -0.0268654003739357]
_ERF_E += [0.005220945458859205, -0.0008482827106490731, 0.0001125693233916536, -9.641468750487547e-06]
# erfc(x) exp(x^2): on [0.5, 1.5] in (x - 1) (6e-10), on [1.5, 2.5] in (x - 2) (5e-10),
# and x erfc(x) exp(x^2) on [2.5, 10.1] in 1/x^2 (1.4e-9).
_ERFC_A = [0.42758357524871826, -0.2732120156288147, 0.15437151491641998, -0.07922699302434921]
_ERFC_A += [0.03757401183247566, -0.0166618749499321, 0.006950917188078165, -0.002765652723610401]
_ERFC_A += [0.0011373399756848812, -0.0004058303020428866]
_ERFC_B = [0.25539568066596985, -0.10679645836353302, 0.04180275276303291, -0.01546076126396656]
_ERFC_B += [0.00544075109064579, -0.0018298830837011337, 0.0005921095726080239, -0.00019420712487772107]
_ERFC_B += [5.8113022532779723e-05]
_ERFC_C = [0.5641895532608032, -0.2820891737937927, 0.4226931631565094, -1.0396288633346558]
_ERFC_C += [3.2711548805236816, -10.149112701416016, 23.14360809326172, -26.026094436645508]


def _erf_kernel(x: V) -> V:
    return x * poly(x * x, _ERF_E)


def hi12(x: V) -> V:
    """x with its 12 leading significant bits: products of two such numbers are exact."""
    return from_bits(bits(x) & -4096)


def _erfc_tail(x: V) -> V:
    """erfc(x) for x >= 0.5: exp(-x^2) R(x), one polynomial whose coefficients are picked per
    interval. exp(-x^2) = exp(-xh^2) exp((xh - x)(xh + x)) with xh = x to 12 bits: xh^2 is
    exact, so the rounding of x^2 never reaches the exponent."""
    x = clamp(x, 0.5, 10.1)
    mid, far = x >= 1.5, x >= 2.5
    t = where(far, 1.0 / (x * x), x - where(mid, 2.0, 1.0))
    n = len(_ERFC_A)
    a, b, c = (cs + [0.0] * (n - len(cs)) for cs in (_ERFC_A, _ERFC_B, _ERFC_C))
    coeffs = [where(far, ci, where(mid, bi, ai)) for ai, bi, ci in zip(a, b, c)]
    r = coeffs[-1]
    for ci in reversed(coeffs[:-1]):
        r = madd(t, r, ci)
    r = where(far, r / x, r)
    xh = hi12(x)
    return where(x >= 10.1, 0.0, (r * exp((xh - x) * (xh + x))) * exp(-(xh * xh)))


def erf(x: V) -> V:
    ax = fabs(x)
    y = where(ax < 1.0, _erf_kernel(x), copysign(1.0 - _erfc_tail(ax), x))
    return where(isnan(x), x, y)


def erfc(x: V) -> V:
    tail = _erfc_tail(fabs(x))
    y = where(x >= 0.5, tail, where(x > -1.0, 1.0 - _erf_kernel(x), 2.0 - tail))
    return where(isnan(x), x, y)


TABLE = {"erf": erf, "erfc": erfc}
