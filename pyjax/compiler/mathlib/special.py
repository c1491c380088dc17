"""The error function, its complement and inverse, lgamma and digamma in float32 and float64."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from pyjax.compiler import ir
from pyjax.compiler.mathlib.exponential import exp, log, log_of
from pyjax.compiler.mathlib.expr import *  # noqa: F403  (the shared vocabulary, expr.__all__)

# erf(x) = x E(x^2), |x| <= 1. float32: minimax; float64: the Taylor series to x^37.
_ERF_E = {
    F32: [1.128379225730896, -0.37612637877464294, 0.11283782124519348, -0.0268654003739357]
    + [0.005220945458859205, -0.0008482827106490731, 0.0001125693233916536, -9.641468750487547e-06],
    F64: [2 / math.sqrt(math.pi) * (-1) ** i / (math.factorial(i) * (2 * i + 1)) for i in range(19)],
}
# float32: erfc(x) exp(x^2): on [0.5, 1.5] in (x - 1) (6e-10), on [1.5, 2.5] in (x - 2) (5e-10),
# and x erfc(x) exp(x^2) on [2.5, 10.1] in 1/x^2 (1.4e-9).
_ERFC_A = [0.42758357524871826, -0.2732120156288147, 0.15437151491641998, -0.07922699302434921]
_ERFC_A += [0.03757401183247566, -0.0166618749499321, 0.006950917188078165, -0.002765652723610401]
_ERFC_A += [0.0011373399756848812, -0.0004058303020428866]
_ERFC_B = [0.25539568066596985, -0.10679645836353302, 0.04180275276303291, -0.01546076126396656]
_ERFC_B += [0.00544075109064579, -0.0018298830837011337, 0.0005921095726080239, -0.00019420712487772107]
_ERFC_B += [5.8113022532779723e-05]
_ERFC_C = [0.5641895532608032, -0.2820891737937927, 0.4226931631565094, -1.0396288633346558]
_ERFC_C += [3.2711548805236816, -10.149112701416016, 23.14360809326172, -26.026094436645508]


# float64: x erfc(x) exp(x^2) for x >= 1 as a Chebyshev series in s = 1.5 (x - 2) / (x + 2) - 0.5
# (s in [-1, 1]), fitted by `_fit_erfc_tail` (mpmath): the 22 terms are good to 1.4e-16.
_ERFC_CHEB = [
    0.5226852818480617, 0.06239406251578745, -0.0260663015282281,
    0.005894781567304472, -0.0007428920123522407, 1.5128890832418327e-05,
    1.0671610297733193e-05, -9.96615539739532e-07, -1.8450476010209502e-07,
    2.805919177614582e-08, 4.5876322428344715e-09, -7.389343846411987e-10,
    -1.5469505431115985e-10, 1.7584896811152985e-11, 6.057580561126259e-12,
    -2.4273932694348503e-13, -2.4051309254593736e-13, -1.075182997401723e-14,
    8.586349446804667e-15, 1.3257658165635783e-15, -2.1923478924795032e-16,
    -8.484325968029135e-17,
]  # fmt: skip
# |x| from which erfc takes the tail (below: 1 - erf)
_TAIL_FROM = {F32: 0.5, F64: 1.0}


def _fit_erfc_tail(n: int = 22, nodes: int = 64) -> list[float]:
    """Recompute `_ERFC_CHEB` by Chebyshev interpolation (development helper; mpmath)."""
    import mpmath as mp

    with mp.workdps(50):
        angles = [mp.pi * (j + mp.mpf(1) / 2) / nodes for j in range(nodes)]
        vals = []
        for a in angles:
            s = mp.cos(a)  # s = 1.5 (x - 2) / (x + 2) - 0.5
            x = 2 * (s + 2) / (1 - s)
            vals.append(x * mp.erfc(x) * mp.exp(x * x))
        c = [2 * mp.fsum(v * mp.cos(i * a) for v, a in zip(vals, angles)) / nodes for i in range(n)]
        c[0] /= 2
        return [float(v) for v in c]


def _erf_kernel(x: V) -> V:
    return x * poly(x * x, pick(x, _ERF_E))


def hi_half(x: V) -> V:
    """x with half its significant bits (float32: 12, float64: 26): products of two such
    numbers are exact."""
    return from_bits(bits(x) & -(1 << pick(x, {F32: 12, F64: 27})))


def _exp_minus_square(x: V, r: V) -> V:
    """r exp(-x^2) = r exp(d) exp(-xh^2), d = (xh - x)(xh + x), xh = hi_half(x): xh^2 is exact,
    so the rounding of x^2 never reaches the exponent; the last product alone may go subnormal.
    |d| < 2**-3 (float32, x <= 10.1) or 2**-15 (float64, x <= 30): exp(d) by its Taylor series."""
    xh = hi_half(x)
    d = (xh - x) * (xh + x)
    return (r * madd(d, poly(d, [1.0, 1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720]), 1.0)) * exp(-(xh * xh))


def _erfc_tail32(x: V) -> V:
    """erfc(x) for x >= 0.5: exp(-x^2) R(x), one polynomial whose coefficients are picked per
    interval."""
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
    return where(x >= 10.1, 0.0, _exp_minus_square(x, r))


def _monomial(cheb: list[float]) -> list[float]:
    """The coefficients in s of sum c_n T_n(s) (exact rational arithmetic, each rounded once)."""
    t = [[Fraction(1)], [Fraction(0), Fraction(1)]]  # T_0, T_1; T_n+1 = 2s T_n - T_n-1
    while len(t) < len(cheb):
        t.append([2 * a - b for a, b in zip([Fraction(0)] + t[-1], t[-2] + [Fraction(0)] * 2)])
    return [float(sum(Fraction(c) * tn[i] for c, tn in zip(cheb, t) if i < len(tn))) for i in range(len(cheb))]


# the Chebyshev series as a polynomial in s: its coefficients stay below 0.55 (sum 0.67), so the
# two Horner chains in s^2 below cost no accuracy and half the latency of Clenshaw's recurrence
_ERFC_S = _monomial(_ERFC_CHEB)


def _erfc_tail64(x: V) -> V:
    """erfc(x) for x >= 1: exp(-x^2) g(s) / x, g the Chebyshev series; 0 from x = 27.3 on (the
    clamp at 30 keeps exp's argument finite)."""
    x = clamp(x, 1.0, 30.0)
    s = 1.5 * (x - 2.0) / (x + 2.0) - 0.5
    s2 = s * s
    g = madd(s, poly(s2, _ERFC_S[1::2]), poly(s2, _ERFC_S[0::2]))
    return _exp_minus_square(x, g / x)


def _erfc_tail(x: V) -> V:
    return _erfc_tail64(x) if x.dtype == F64 else _erfc_tail32(x)


# how erf and erfc pick between the series and the tail: float64 computes the tail (the costlier
# side, past |x| = 1) in a branch, as wasm's scalar float64 loop would pay for both sides of a
# select; float32's SIMD lanes and GPU threads would mostly run both anyway, so it selects
_TAIL_SELECT = {F32: where, F64: rarely}


def erf(x: V) -> V:
    ax = fabs(x)
    y = pick(x, _TAIL_SELECT)(ax >= 1.0, copysign(1.0 - _erfc_tail(ax), x), _erf_kernel(x))
    return where(isnan(x), x, y)


def erfc(x: V) -> V:
    tail = _erfc_tail(fabs(x))
    tails = where(x >= pick(x, _TAIL_FROM), tail, 2.0 - tail)
    y = pick(x, _TAIL_SELECT)((x >= pick(x, _TAIL_FROM)) | (x <= -1.0), tails, 1.0 - _erf_kernel(x))
    return where(isnan(x), x, y)


# ---- erf_inv -----------------------------------------------------------------------------

# Giles' single-precision erf_inv: x = y P(w), w = -log(1 - y^2); P in w - 2.5 below w = 5,
# in sqrt(w) - 3 above.
_ERFINV_LO = [1.50140941, 0.246640727, -0.00417768164, -0.00125372503, 0.00021858087]
_ERFINV_LO += [-4.39150654e-06, -3.5233877e-06, 3.43273939e-07, 2.81022636e-08]
_ERFINV_HI = [2.83297682, 1.00167406, 0.00943887047, -0.0076224613, 0.00573950773]
_ERFINV_HI += [-0.00367342844, 0.00134934322, 0.000100950558, -0.000200214257]


def erf_inv(y: V) -> V:
    if y.dtype == F64:
        return _erf_inv64(y)
    # 1 - y^2 as (1 - a)(1 + a) (1 - a exact) where that avoids cancellation, log1p(-a^2) below
    a = fabs(y)
    w = -log_of((1.0 - a) * (1.0 + a), -(a * a), a < 0.5)
    lo = w < 5.0
    t = where(lo, w - 2.5, sqrt(w) - 3.0)
    coeffs = [where(lo, c, d) for c, d in zip(_ERFINV_LO, _ERFINV_HI)]
    p = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        p = madd(t, p, c)
    return where(a.eq(1.0), where(y > 0.0, INF, -INF), p * y)  # |y| > 1 and NaN: NaN from the log


# ---- lgamma, digamma ----------------------------------------------------------------------

LOG_PI = 1.1447298858494002
HALF_LOG_2PI_M1_2 = 0.41893853320467274  # log(2 pi) / 2 - 1/2
PI = 3.1415927410125732
# sin(pi a) = a S(a^2), |a| <= 1/2 (3e-8)
_SINPI = [3.1415927410125732, -5.167715549468994, 2.5501551628112793, -0.5986983180046082, 0.07836973667144775]
# lgamma(2 + t) = t L(t), |t| <= 1/2 (1.6e-8)
_LGAMMA2 = [0.42278432846069336, 0.32246702909469604, -0.06735190004110336, 0.020581359043717384]
_LGAMMA2 += [-0.0073919715359807014, 0.002880699932575226, -0.0011537940008565784, 0.0005664473865181208]
_LGAMMA2 += [-0.000312341027893126]
# digamma(z) = (z - x0) D(z - 1.75) + digamma(x0), z in [1.25, 2.25], x0 its root rounded to f32
# (2e-8): relative accuracy at the root without a two-part constant that compilers may fold
_PSI_X0, _PSI_AT_X0 = 1.4616321325302124, -1.203605215494008e-08
_DIGAMMA = [0.8581832051277161, -0.32625460624694824, 0.15712052583694458, -0.08228647708892822]
_DIGAMMA += [0.044805414974689484, -0.024884583428502083, 0.013832841999828815, -0.007867852225899696]
_DIGAMMA += [0.005384452641010284, -0.0029889217112213373]


def _sinpi(a: V) -> V:
    """sin(pi a) for |a| <= 1/2."""
    return a * poly(a * a, _SINPI)


def _nearest_offset(x: V) -> V:
    """x minus its nearest integer, in [-1/2, 1/2] (exact; integers past 2**23 may give -1)."""
    return x - floor(x + 0.5)


def _pole(x: V) -> V:
    return (x <= 0.0) & floor(x).eq(x)


def lgamma(x: V) -> V:
    if x.dtype == F64:
        return _lgamma64(x)
    # y = x, or 1 - x below 1/2 (reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)).
    # From 8 on Stirling's series; below, lgamma(y) = lgamma(2 + t) + log((y - 1) ... (y - n))
    # with y - n - 2 = t in [-1/2, 1/2), or lgamma(2 + t) - log1p(t) for y < 1.5 (t = y - 1
    # exact there: no cancellation at the zeros 1 and 2). One log serves both branches.
    refl = x < 0.5
    y = where(refl, 1.0 - x, x)
    big, low = y >= 8.0, y < 1.5
    n = floor(y - 1.5)
    t = y - where(low, 1.0, n + 2.0)
    f = [where(n >= float(i), y - float(i), 1.0) for i in range(1, 7)]
    p = ((f[0] * f[1]) * (f[2] * f[3])) * (f[4] * f[5])
    lg = log_of(where(big | low, y, p), t, low & (fabs(t) < 0.2928))
    small = madd(t, poly(t, _LGAMMA2), where(low, -lg, lg))
    iy = 1.0 / y
    series = madd(iy, poly(iy * iy, [1 / 12, -1 / 360, 1 / 1260]), HALF_LOG_2PI_M1_2)
    ly = where(big, madd(y - 0.5, lg - 1.0, series), small)
    # below 2**-24, lgamma(x) = -log|x| (to 2e-9): sin(pi x) would lose bits as a subnormal
    tiny = fabs(x) < 2.0**-24
    ls = log(where(tiny, fabs(x), _sinpi(fabs(_nearest_offset(x)))))
    r = where(tiny, -ls, (LOG_PI - ls) - ly)
    out = where(_pole(x), INF, where(refl, r, ly))
    return where(isnan(x), x, out)


def digamma(x: V) -> V:
    if x.dtype == F64:
        return _digamma64(x)
    # y = x, or 1 - x below 1/2 (reflection: digamma(x) = digamma(1 - x) - pi cot(pi x)).
    # From 8 on the asymptotic series; below, z = y - n in [1.25, 2.25) (or y + 1) and
    # digamma(y) = digamma(z) + sum 1/(y - i) (or - 1/y), the sum as one fraction.
    refl = x < 0.5
    y = where(refl, 1.0 - x, x)
    up = y < 1.25
    n = floor(y - 1.25)
    z = where(up, y + 1.0, y - n)
    num, den = where(up, -1.0, 0.0), where(up, y, 1.0)
    for i in range(1, 7):
        use = n >= float(i)
        a = y - float(i)
        num, den = where(use, madd(num, a, den), num), where(use, den * a, den)
    small = madd(z - _PSI_X0, poly(z - 1.75, _DIGAMMA), _PSI_AT_X0) + num / den
    iy = 1.0 / y
    iy2 = iy * iy
    asym = log(y) - madd(iy2, poly(iy2, [1 / 12, -1 / 120, 1 / 252]), 0.5 * iy)
    psi = where(y >= 8.0, asym, small)
    r = _nearest_offset(x)
    a = fabs(r)
    cot = xorsign(_sinpi(0.5 - a) / _sinpi(a), r)
    out = where(_pole(x), NAN, where(refl, psi - PI * cot, psi))
    return where(isnan(x), x, out)


# ---- float64: the cpu evaluator's algorithms (pyjax/backends/cpu/numpy_eval.py), unrolled ---------

_PI_DIGITS = "3.14159265358979323846264338327950288419716939937510582097494459"
# sin(pi a) = a S(a^2), |a| <= 1/2: the Taylor series to a^23 (truncation 1e-18)
_SINPI64 = [float((-1) ** k * Decimal(_PI_DIGITS) ** (2 * k + 1) / math.factorial(2 * k + 1)) for k in range(12)]
# Stirling's series lgamma(z) - ((z - 1/2) log z - z + log(2 pi) / 2) = 1/z P(1/z^2), z >= 8 (1e-16)
_STIRLING = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156]


def _erf_inv64(y: V) -> V:
    """Winitzki's closed form (relative error < 2e-3), then three Halley steps on erf(x) - |y|,
    written (1 - |y|) - erfc(x) above 1/2 (1 - |y| exact): near |y| = 1 erf(x) itself would round
    to a neighbour of |y| and leave x undetermined by up to 1e-2."""
    a = fabs(y)
    ln = log((1.0 - a) * (1.0 + a))  # |y| > 1 and NaN: NaN from here on
    t = 2.0 / (math.pi * 0.147) + 0.5 * ln
    x = sqrt(sqrt(t * t - ln / 0.147) - t)
    for _ in range(3):  # Halley's steps on g = erf(x) - |y|: g'' = -2x g'
        k, tail = _erf_kernel(x), _erfc_tail64(x)  # x >= 0; the tail (x >= 1) in a branch
        f_tail = where(a > 0.5, (1.0 - a) - tail, (1.0 - tail) - a)
        f = rarely(x >= 1.0, f_tail, where(a > 0.5, (1.0 - a) - (1.0 - k), k - a))
        d = f / (2.0 / math.sqrt(math.pi) * exp(-(x * x)))
        x = x - d / madd(x, d, 1.0)
    return copysign(where(a.eq(1.0), INF, x), y)  # erf_inv(-0) = -0


def _reflect_and_raise(x: V, bound: int, start: float, step) -> tuple[V, V, V]:
    """(x < 1/2, y, acc) for the float64 lgamma/digamma: y is x, or 1 - x below 1/2 (reflection),
    raised by ones (at most `bound` times) to y >= bound; acc = step(acc, y, y < bound) per raise."""
    refl = x < 0.5
    y = where(refl, 1.0 - x, x)
    acc = V(ir.const(start, F64))
    for _ in range(bound):
        small = y < float(bound)
        acc, y = step(acc, y, small), where(small, y + 1.0, y)
    return refl, y, acc


def _lgamma64(x: V) -> V:
    # y = x, or 1 - x below 1/2 (reflection); lgamma(y) = lgamma(y + n) - log(y (y + 1) ...
    # (y + n - 1)) with y + n >= 8 (n <= 8), Stirling's series there. Near the zeros 1 and 2 the
    # error is absolute (~1e-15), as the cpu evaluator's.
    refl, y, prod = _reflect_and_raise(x, 8, 1.0, lambda p, y, small: p * where(small, y, 1.0))
    iy = 1.0 / y
    series = madd(iy, poly(iy * iy, _STIRLING), 0.5 * math.log(2 * math.pi))
    st = madd(y - 0.5, log(y), series - y)  # lgamma(y + n)
    # one more log serves every branch: lgamma = st - log(prod), or for the reflection
    # log(pi / |sin(pi x)|) - (st - log(prod)) = log(pi prod / |sin(pi x)|) - st, or -log|x|
    # below 2**-54 (to 1e-17; sin(pi x) would lose bits as a subnormal there)
    tiny = fabs(x) < 2.0**-54
    q = where(refl, (prod / _sinpi64(fabs(_nearest_offset(x)))) * math.pi, prod)
    lq = log(where(tiny, fabs(x), q))
    out = where(tiny, -lq, where(refl, lq - st, st - lq))
    out = where(_pole(x) | fabs(x).eq(INF), INF, out)
    return where(isnan(x), x, out)


def _sinpi64(a: V) -> V:
    return a * poly(a * a, _SINPI64)


def _digamma64(x: V) -> V:
    # y = x, or 1 - x below 1/2 (reflection: - pi cot(pi x)); digamma(y) = digamma(y + n) -
    # sum 1/(y + i), y + n >= 6 (n <= 6), the asymptotic series there
    refl, y, acc = _reflect_and_raise(x, 6, 0.0, lambda a, y, small: a - where(small, 1.0 / y, 0.0))
    iy = 1.0 / y
    iy2 = iy * iy
    psi = acc + (log(y) - madd(iy2, poly(iy2, [1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132]), 0.5 * iy))
    r = _nearest_offset(x)
    a = fabs(r)
    cot = xorsign(_sinpi64(0.5 - a) / _sinpi64(a), r)
    out = where(_pole(x), NAN, where(refl, psi - math.pi * cot, psi))
    return where(isnan(x), x, out)


TABLE = {"erf": erf, "erfc": erfc, "erf_inv": erf_inv, "lgamma": lgamma, "digamma": digamma}
