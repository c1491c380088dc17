"""Special functions defined by integrals: exponential integrals (expn, exp1, expi), Dawson's integral,
sine / cosine (sici) and Fresnel integrals, Spence's function and Owen's T.

Everything is composed from pyjax.numpy / lax ops (series, continued fractions evaluated backwards to a fixed
depth, fori_loop / while_loop), so every backend and autodiff work unchanged. Each branch of a select sees
in-domain ("safe") inputs, so unused branches make no NaN in values or gradients. Loaded on first use.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.custom_derivatives import custom_jvp
from pyjax.lax import lax
from pyjax.lax.control_flow import fori_loop
from pyjax.scipy.special import _promote_inexact

_EULER = 0.5772156649015329
_PI = math.pi


def _strong(x):
    """x without a weak type (JAX's special functions return strongly typed arrays)."""
    aval = get_aval(x)
    return lax._convert(x, aval.dtype, False) if aval.weak_type else x


def _is_complex(x) -> bool:
    d = getattr(x, "dtype", None)
    return isinstance(x, complex) or (d is not None and getattr(d, "kind", "") == "c")


def _real_only(name: str, *xs) -> None:
    """Raise JAX's ValueError for complex input (checked before promotion, which would drop the imaginary part)."""
    if any(_is_complex(x) for x in xs):
        raise ValueError(f"{name} does not support complex-valued inputs.")


def _fl(i, like):
    """A fori_loop index as a float of like's dtype."""
    return lax._convert(i, get_aval(like).dtype, False)


# --- exponential integrals --------------------------------------------------------------------------


def _expn_series(n, x):
    """E_n(x) for integer n >= 1, 0 < x <= 1: the power series with its digamma term at k = n - 1."""

    def body(k, c):
        term, total = c  # term = (-x)^k / k!
        kf = _fl(k, x)
        d = kf - n + 1
        total = total - jnp.where(d == 0, 0.0, term / jnp.where(d == 0, 1.0, d))
        return term * -x / (kf + 1), total

    _, total = fori_loop(0, 24, body, (jnp.ones_like(x), jnp.zeros_like(x)))
    odd = jnp.floor((n - 1) / 2) * 2 != n - 1
    mag = jnp.exp((n - 1) * jnp.log(x) - lax.lgamma(n))
    special = jnp.where(odd, -mag, mag) * (lax.digamma(n) - jnp.log(x))
    return total + special


def _expn_cf(n, x):
    """E_n(x) for x > 1 by the modified Lentz method on its continued fraction."""
    tiny = 1e-30
    b0 = x + n

    def body(i, c):
        b, cc, d, h = c
        fi = _fl(i, x)
        an = -fi * (n - 1 + fi)
        b = b + 2
        d = 1 / (an * d + b)
        cc = b + an / cc
        return b, cc, d, h * cc * d

    h = fori_loop(1, 48, body, (b0, jnp.full_like(x, 1 / tiny), 1 / b0, 1 / b0))[3]
    return h * jnp.exp(-x)


def _expn_impl(n, x):
    finite = (x > 0) & (x < jnp.inf) & (n > 0)
    small = x <= 1
    xs = jnp.where(finite & small, x, 0.5)
    ns = jnp.where(finite, n, 1.0)
    series = jnp.where(ns == jnp.floor(ns), _expn_series(ns, xs), jnp.nan)
    xc = jnp.where(finite & ~small, x, 2.0)
    cf = _expn_cf(ns, xc)
    val = jnp.where(small, series, cf)
    x0 = jnp.where(x > 0, x, 1.0)
    n1 = jnp.where(n == 1, 2.0, n)
    out = jnp.where(
        (n < 0) | (x < 0) | (x == jnp.inf),
        jnp.nan,
        jnp.where(x == 0, jnp.where(n < 2, jnp.inf, 1 / (n1 - 1)), jnp.where(n == 0, jnp.exp(-x0) / x0, val)),
    )
    return jnp.where(jnp.isnan(x) | jnp.isnan(n), jnp.nan, out).astype(get_aval(x).dtype)


@custom_jvp
def _expn(n, x):
    return _expn_impl(n, x)


@_expn.defjvp
def _expn_jvp(primals, tangents):
    n, x = primals
    return _expn(n, x), -tangents[1] * _expn(n - 1, x)


def expn(n: Any, x: Any) -> Any:
    """Generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt (NaN for n < 0 or x < 0)."""
    _real_only("expn", n, x)
    n, x = _promote_inexact("expn", n, x)
    return _strong(_expn(n, x))


def exp1(x: Any) -> Any:
    """Exponential integral E_1(x) = int_x^inf exp(-t) / t dt, for x >= 0 (NaN for x < 0)."""
    _real_only("exp1", x)
    (x,) = _promote_inexact("exp1", x)
    return _strong(_expn(jnp.ones_like(x), x))


def _expi_pos(x):
    """Ei(x) for x > 0: the power series up to 20, the asymptotic series e^x / x sum k! / x^k beyond."""
    small = x <= 20
    xs = jnp.where(small, x, 1.0)

    def s_body(k, c):
        term, total = c  # term = x^k / k!
        kf = _fl(k, x)
        term = term * xs / kf
        return term, total + term / kf

    _, total = fori_loop(1, 72, s_body, (jnp.ones_like(x), jnp.zeros_like(x)))
    series = _EULER + jnp.log(xs) + total
    xl = jnp.where(small, 40.0, x)

    def a_body(k, c):
        term, total = c
        term = term * _fl(k, x) / xl
        return term, total + term

    _, asum = fori_loop(1, 22, a_body, (jnp.ones_like(x), jnp.ones_like(x)))
    half = jnp.exp(xl / 2)  # e^x / x as two halves, so Ei stays finite up to about 93 in float32
    asym = half * (half / xl * asum)
    return jnp.where(small, series, asym)


@custom_jvp
def _expi(x):
    pos = (x > 0) & (x < jnp.inf)
    xp = jnp.where(pos, x, 1.0)
    neg = (x < 0) & (x > -jnp.inf)
    xn = jnp.where(neg, -x, 1.0)
    val = jnp.where(pos, _expi_pos(xp), -_expn(jnp.ones_like(x), xn))
    return jnp.where(pos | neg, val, jnp.nan)


_expi.defjvps(lambda g, ans, x: g * jnp.exp(x) / x)


def expi(x: Any) -> Any:
    """Exponential integral Ei(x) = PV int_-inf^x e^t / t dt (NaN at 0 and +-inf, as JAX)."""
    _real_only("expi", x)
    (x,) = _promote_inexact("expi", x)
    return _strong(_expi(x))


# --- Dawson's integral --------------------------------------------------------------------------------

_DAWSN_H = 0.25
_DAWSN_TERMS = 10  # odd offsets +-1, +-3, ..., +-19 (times h) around the nearest even grid point


def _dawsn_impl(x):
    """Taylor series near 0, Rybicki's exponentially convergent sum in the middle, asymptotics far out."""
    ax = jnp.abs(x)
    near = ax < 0.2
    far = ax > 50
    xs = jnp.where(near, x, 0.0)
    x2 = xs * xs
    term, series = xs, xs
    for k in range(1, 8):
        term = term * -2 * x2 / (2 * k + 1)
        series = series + term
    xm = jnp.where(near | far, 1.0, ax)
    h = _DAWSN_H
    n0 = 2 * jnp.round(xm / (2 * h))
    xp = xm - n0 * h
    total = jnp.zeros_like(xm)
    for j in range(1, 2 * _DAWSN_TERMS, 2):
        total = total + jnp.exp(-((xp - j * h) ** 2)) / (n0 + j) + jnp.exp(-((xp + j * h) ** 2)) / (n0 - j)
    mid = jnp.sign(x) * total / math.sqrt(_PI)
    xf = jnp.where(far, x, 100.0)
    inv = 1 / (2 * xf * xf)
    asym = (1 + inv * (1 + 3 * inv)) / (2 * xf)
    return jnp.where(near, series, jnp.where(far, asym, mid))


@custom_jvp
def _dawsn(x):
    return _dawsn_impl(x)


_dawsn.defjvps(lambda g, ans, x: g * (1 - 2 * x * ans))


def dawsn(x: Any) -> Any:
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt."""
    _real_only("dawsn", x)
    (x,) = _promote_inexact("dawsn", x)
    return _strong(_dawsn(x))


# --- sine and cosine integrals ------------------------------------------------------------------------


def _cdiv(ar, ai, br, bi):
    den = br * br + bi * bi
    return (ar * br + ai * bi) / den, (ai * br - ar * bi) / den


def _e1_imag(x, depth: int = 30):
    """E_1(i x) for x >= 2 as (re, im), from the even continued fraction of E_1 evaluated backwards."""

    def body(i, c):
        tr, ti = c
        k = _fl(depth - i, x)
        return _cdiv(k * k, 0.0 * x, 2 * k + 1 - tr, x - ti)

    tr, ti = fori_loop(0, depth, body, (jnp.zeros_like(x), jnp.zeros_like(x)))
    fr, fi = _cdiv(1.0 + 0.0 * x, 0.0 * x, 1 - tr, x - ti)
    cs, sn = jnp.cos(x), jnp.sin(x)  # times e^{-ix}
    return fr * cs + fi * sn, fi * cs - fr * sn


def _sici_impl(x):
    ax = jnp.abs(x)
    small = ax <= 2
    xs = jnp.where(small & (ax > 0), ax, 1.0)
    x2 = xs * xs
    t = xs  # x^(2k+1) / (2k+1)! times (-1)^k
    si_s, ci_s = xs, jnp.zeros_like(xs)
    for k in range(1, 12):
        t = -t * x2 / ((2 * k) * (2 * k + 1))
        ci_s = ci_s + t * (2 * k + 1) / xs / (2 * k)
        si_s = si_s + t / (2 * k + 1)
    ci_s = ci_s + _EULER + jnp.log(xs)
    big = ~small & (ax < jnp.inf)
    xl = jnp.where(big, ax, 4.0)
    er, ei = _e1_imag(xl)
    si_l, ci_l = _PI / 2 + ei, -er
    si = jnp.where(small, si_s, jnp.where(big, si_l, _PI / 2))
    ci = jnp.where(small, ci_s, jnp.where(big, ci_l, 0.0))
    si = jnp.where(ax == 0, 0.0, si) * jnp.sign(x)
    ci = jnp.where(ax == 0, -jnp.inf, jnp.where((x == -jnp.inf) | jnp.isnan(x), jnp.nan, ci))
    si = jnp.where(jnp.isnan(x), jnp.nan, si)
    return si.astype(x.dtype), ci.astype(x.dtype)


_sici = custom_jvp(_sici_impl)
_sici.defjvps(lambda t, ans, x: (jnp.sinc(x / _PI) * t, jnp.cos(x) / x * t))


def sici(x: Any) -> tuple[Any, Any]:
    """Sine and cosine integrals (Si(x), Ci(x)); Ci(-x) is Ci(x) (the real part, as JAX)."""
    if _is_complex(x):
        raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
    (x,) = _promote_inexact("sici", x)
    si, ci = _sici(x)
    return _strong(si), _strong(ci)


# --- Fresnel integrals --------------------------------------------------------------------------------


def _half_pi_sq(x):
    """(cos, sin) of pi x^2 / 2 with x^2 split exactly (Dekker) and reduced mod 4, so large x keeps its phase."""
    split = 4097.0  # 2^12 + 1 splits a float32 significand into halves
    c = x * split
    hi = c - (c - x)
    lo = x - hi
    p = x * x
    e = ((hi * hi - p) + 2 * hi * lo) + lo * lo
    r = p - 4 * jnp.floor(p / 4)
    ang = (r + e) * (_PI / 2)
    return jnp.cos(ang), jnp.sin(ang)


def _fresnel_impl(x):
    ax = jnp.abs(x)
    small = ax <= 1.5
    xs = jnp.where(small, ax, 0.0)
    q = (_PI / 2) * xs * xs
    q2 = q * q
    tc = xs  # (-1)^k q^(2k) x / (2k)!
    c_s, s_s = xs, jnp.zeros_like(xs)
    ts = xs * q  # (-1)^k q^(2k+1) x / (2k+1)!
    s_s = ts / 3
    for k in range(1, 12):
        tc = -tc * q2 / ((2 * k - 1) * (2 * k))
        ts = -ts * q2 / ((2 * k) * (2 * k + 1))
        c_s = c_s + tc / (4 * k + 1)
        s_s = s_s + ts / (4 * k + 3)
    big = ~small & (ax < 36974.0)
    xl = jnp.where(big, ax, 2.0)
    a = math.sqrt(_PI) / 2 * xl  # z = a (1 - i)

    def body(i, c):
        tr, ti = c
        k = _fl(40 - i, x)
        return _cdiv(k / 2 + 0.0 * x, 0.0 * x, a + tr, ti - a)

    tr, ti = fori_loop(0, 40, body, (jnp.zeros_like(xl), jnp.zeros_like(xl)))
    kr, ki = _cdiv(1.0 + 0.0 * x, 0.0 * x, a + tr, ti - a)
    cs, sn = _half_pi_sq(xl)  # erfc(z) = e^{i pi x^2 / 2} K / sqrt(pi)
    er = (cs * kr - sn * ki) / math.sqrt(_PI)
    ei = (cs * ki + sn * kr) / math.sqrt(_PI)
    # C + i S = (1 + i) / 2 (1 - erfc)
    c_l = 0.5 * ((1 - er) - (-ei))
    s_l = 0.5 * ((1 - er) + (-ei))
    c = jnp.where(small, c_s, jnp.where(big, c_l, 0.5))
    s = jnp.where(small, s_s, jnp.where(big, s_l, 0.5))
    sign = jnp.sign(x)
    return (s * sign).astype(x.dtype), (c * sign).astype(x.dtype)


_fresnel = custom_jvp(_fresnel_impl)
_fresnel.defjvps(lambda t, ans, x: tuple(d * t for d in reversed(_half_pi_sq(x))))  # (sin, cos)(pi x^2 / 2) t


def fresnel(x: Any) -> tuple[Any, Any]:
    """Fresnel integrals (S(x), C(x)) = (int_0^x sin(pi t^2 / 2) dt, int_0^x cos(pi t^2 / 2) dt)."""
    _real_only("fresnel", x)
    (x,) = _promote_inexact("fresnel", x)
    s, c = _fresnel(x)
    return _strong(s), _strong(c)


# --- Spence's function ----------------------------------------------------------------------------------

# B_n / (n + 1)! for n = 0, 1, 2, 4, ..., 14: Li2(1 - y) = sum_n B_n u^(n+1) / (n+1)!, u = -log(y)
_SPENCE_COEF = [(1, 1.0), (2, -0.25)] + [
    (n + 1, float(b) / math.factorial(n + 1))
    for n, b in zip(
        range(2, 16, 2),
        (Fraction(1, 6), Fraction(-1, 30), Fraction(1, 42), Fraction(-1, 30), Fraction(5, 66), Fraction(-691, 2730)),
    )
]


def _spence_core(y):
    """spence(y) = Li2(1 - y) for y in [0.5, 2] by the Bernoulli series in log(y)."""
    u = -jnp.log(y)
    total = jnp.zeros_like(y)
    for power, coef in reversed(_SPENCE_COEF):
        total = total + coef * u**power
    return total


def spence(x: Any) -> Any:
    """Spence's function int_1^x log(t) / (1 - t) dt = Li2(1 - x), for x >= 0 (NaN for x < 0 and +inf)."""
    x = jnp.asarray(x)
    d = get_aval(x).dtype
    if d not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"x.dtype={d.name} is not supported, see docstring for supported types.")
    mid = (x >= 0.5) & (x <= 2)
    low = (x > 0) & (x < 0.5)
    high = (x > 2) & (x < jnp.inf)
    xm = jnp.where(mid, x, 1.0)
    xlo = jnp.where(low, x, 0.25)
    xhi = jnp.where(high, x, 4.0)
    v_mid = _spence_core(xm)
    # reflection: spence(x) = pi^2/6 - log(x) log(1 - x) - spence(1 - x)
    v_low = _PI**2 / 6 - jnp.log(xlo) * jnp.log1p(-xlo) - _spence_core(1 - xlo)
    # inversion, then reflection: spence(x) = -spence(1/x) - log(x)^2 / 2
    lx = jnp.log(xhi)
    v_high = -(_PI**2) / 6 - lx * jnp.log1p(-1 / xhi) + _spence_core(1 - 1 / xhi) - 0.5 * lx * lx
    out = jnp.where(mid, v_mid, jnp.where(low, v_low, v_high))
    out = jnp.where(x == 0, _PI**2 / 6, jnp.where(x == 1, 0.0, out))
    return _strong(jnp.where((x < 0) | (x == jnp.inf) | jnp.isnan(x), jnp.nan, out).astype(d))


# --- Owen's T function -----------------------------------------------------------------------------------


def _gauss_legendre_half(n: int) -> tuple[list, list]:
    """Positive nodes and weights of the n-point (n even) Gauss-Legendre rule on [-1, 1], by Newton's method."""
    nodes, weights = [], []
    for i in range(1, n // 2 + 1):
        t = math.cos(math.pi * (i - 0.25) / (n + 0.5))
        for _ in range(100):
            p0, p1 = 1.0, t
            for k in range(2, n + 1):
                p0, p1 = p1, ((2 * k - 1) * t * p1 - (k - 1) * p0) / k
            dp = n * (t * p1 - p0) / (t * t - 1)
            dt = p1 / dp
            t -= dt
            if abs(dt) < 1e-16:
                break
        nodes.append(t)
        weights.append(2 / ((1 - t * t) * dp * dp))
    return nodes, weights


_GL_NODES, _GL_WEIGHTS = _gauss_legendre_half(26)
# T(h, a) = (a / 2 pi) int_0^1 f(a s) ds ~ a sum_i w_i f(a s_i) over the 13 positive nodes (Patefield-Tandy T5)
_OWENS_PTS = [s * s for s in _GL_NODES]
_OWENS_WTS = [w / (2 * math.pi) for w in _GL_WEIGHTS]


def _owens_quad(h, a):
    h2, a2 = h * h, a * a
    total = jnp.zeros_like(h)
    for t, w in zip(_OWENS_PTS, _OWENS_WTS):
        r = 1 + a2 * t
        total = total + w * jnp.exp(-0.5 * h2 * r) / r
    return a * total


@custom_jvp
def _owens_t(h, a):
    h = jnp.abs(h)
    aa = jnp.abs(a)
    r2 = math.sqrt(2.0)
    inv = aa > 1
    ma = jnp.where(inv, 1 / jnp.where(inv, aa, 1.0), aa)
    mh = jnp.where(inv, aa * h, h)
    t = _owens_quad(mh, ma)
    t = jnp.where(mh == 0, jnp.arctan(ma) / (2 * math.pi), t)
    t = jnp.where(ma == 1, 0.125 * lax.erfc(-mh / r2) * lax.erfc(mh / r2), t)
    # |a| > 1: T(h, a) = (Phi(h) + Phi(a h)) / 2 - Phi(h) Phi(a h) - [h < 0] / 2 - T(a h, 1 / a), h >= 0 here
    eh, eah = lax.erfc(h / r2), lax.erfc(aa * h / r2)
    near = 0.25 - 0.25 * lax.erf(h / r2) * lax.erf(aa * h / r2) - t
    far = 0.25 * (eh + eah - eh * eah) - t
    t = jnp.where(inv, jnp.where(aa * h <= 0.67, near, far), t)
    t = jnp.sign(a) * t
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), jnp.nan, t)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    h, a = primals
    dh, da = tangents
    d_h = -jnp.exp(-0.5 * h * h) * lax.erf(a * h / math.sqrt(2.0)) / (2 * math.sqrt(2 * math.pi))
    d_a = jnp.exp(-0.5 * (a * a + 1) * h * h) / (2 * math.pi * (a * a + 1))
    return _owens_t(h, a), d_h * dh + d_a * da


def owens_t(h: Any, a: Any) -> Any:
    """Owen's T function (1 / 2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, by 13-point quadrature."""
    h, a = _promote_inexact("owens_t", h, a)
    return _strong(_owens_t(h, a))
