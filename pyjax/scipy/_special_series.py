"""Special functions defined by series: Bessel J_n, the confluent hypergeometric 1F1 and the Bernoulli
numbers. Composed from pyjax.numpy / lax ops; loaded on first use.
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
from pyjax.lax.control_flow import fori_loop, while_loop
from pyjax.scipy._special_integrals import _fl, _is_complex, _real_only, _strong
from pyjax.scipy.special import _promote_inexact

# --- Bessel functions of the first kind -----------------------------------------------------------------


def bessel_jn(z: Any, *, v: int, n_iter: int = 50) -> Any:
    """J_0(z), ..., J_v(z) stacked on a new leading axis, by Miller's backward recurrence from order n_iter.

    As JAX: the recurrence starts at order n_iter, so |z| much beyond n_iter is inaccurate. Unlike JAX (whose
    float32 recurrence overflows to NaN for small |z|), the running values are rescaled, and J(0) is exact.
    """
    v = int(v)
    n_iter = int(n_iter)
    if _is_complex(z):
        raise ValueError("complex input not supported.")
    (z,) = _promote_inexact("bessel_jn", z)
    zero = z == 0
    zs = jnp.where(zero, 1.0, z)
    big, shrink = 1e10, 1e-10

    def step(k, f0, f1, bs):
        f = 2.0 * (k + 1.0) * f1 / zs - f0
        if isinstance(k, int):
            bs = bs + 2.0 * f if k % 2 == 0 else bs
        else:
            bs = jnp.where(k % 2 == 0, bs + 2.0 * f, bs)
        scale = jnp.where(jnp.abs(f) > big, shrink, 1.0)
        return f1 * scale, f * scale, bs * scale, scale

    def body(i, c):
        f0, f1, bs = c
        k = _fl(n_iter - i, z)
        return step(k, f0, f1, bs)[:3]

    init = (jnp.zeros_like(zs), jnp.full_like(zs, 1e-16), jnp.zeros_like(zs))
    f0, f1, bs = fori_loop(0, n_iter - v, body, init)
    vals = []
    for k in range(v, -1, -1):
        f0, f1, bs, scale = step(k, f0, f1, bs)
        vals = [u * scale for u in vals] + [f1]
    j = jnp.stack(vals[::-1]) / (bs - vals[-1])
    exact0 = jnp.stack([jnp.where(zero, 1.0 if k == 0 else 0.0, 0.0) for k in range(v + 1)])
    return _strong(jnp.where(zero, exact0, j).astype(get_aval(z).dtype))


# --- confluent hypergeometric function 1F1 ------------------------------------------------------------------


def _hyp1f1_sum(a, b, x, weight: str = ""):
    """sum_k (a)_k / (b)_k x^k / k!, optionally weighted by d/da or d/db of log((a)_k / (b)_k).

    Each element stops adding terms once the next term is below eps relative to its sum (at most 250 terms).
    """
    dt = get_aval(x).dtype
    eps = float(dtypes.finfo(dt).eps)
    one = jnp.ones_like(x)
    term0 = a / b * x
    serie0 = jnp.zeros_like(x) if weight else one
    w0 = (1 / a) if weight == "a" else (-1 / b) if weight == "b" else one

    def cond(c):
        return (c[1] < 250) & jnp.any(c[4])

    def body(c):
        serie, k, term, w, active = c
        serie = jnp.where(active, serie + term * w, serie)
        if weight == "a":
            w = w + 1 / (a + k)
        elif weight == "b":
            w = w - 1 / (b + k)
        term = term * ((a + k) / (b + k) * x / (k + 1))
        active = active & (jnp.abs(term) > eps * jnp.abs(serie))
        return serie, k + 1, term, w, active

    active0 = (jnp.abs(term0) > eps * jnp.abs(serie0)) | (term0 != 0) & (serie0 == 0)
    init = (serie0, jnp.array(1.0, dt), term0, w0, active0)
    return while_loop(cond, body, init)[0]


def _hyp1f1_asym(a, b, x):
    """Large |x| (>= 100): the leading asymptotic series, in log space (x > 0) or after Kummer's transform (x < 0)."""
    pos = x > 0
    y = jnp.abs(x)
    p = jnp.where(pos, b - a, a)  # x > 0: (b - a)_k (1 - a)_k / k! / x^k; x < 0: (a)_k (a - b + 1)_k / k! / |x|^k
    q = jnp.where(pos, 1 - a, a - b + 1)
    term, total, active = jnp.ones_like(x), jnp.ones_like(x), jnp.ones_like(x) > 0
    for k in range(30):
        nxt = term * (p + k) * (q + k) / ((k + 1) * y)
        active = active & (jnp.abs(nxt) < jnp.abs(term))
        term = jnp.where(active, nxt, term)
        total = total + jnp.where(active, nxt, 0.0)
    g = jnp.where(pos, a, b - a)  # the gamma in the denominator
    expo = jnp.where(pos, x + (a - b) * jnp.log(y), -a * jnp.log(y))
    gs = jnp.where((g == jnp.floor(g)) & (g <= 0), 0.0, _gammasgn(g))
    return _gammasgn(b) * gs * jnp.exp(lax.lgamma(b) - lax.lgamma(g) + expo) * total


def _gammasgn(x):
    odd = jnp.floor(-x) % 2 == 0
    return jnp.where((x >= 0) | ~odd, 1.0, -1.0)


def _hyp1f1_impl(a, b, x):
    # x < 0 (a not a non-positive integer) alternates and cancels badly; Kummer's transform e^x 1F1(b - a; b; -x) sums positive
    # terms instead (JAX sums the alternating series, so it is inaccurate there, e.g. below x = -5).
    poly = (a <= 0) & (a == jnp.floor(a))  # a terminating series: its terms share one sign for x < 0
    near = (jnp.abs(x) < 100) & ~((x <= -80) & ~poly)
    xn = jnp.where(near, x, 0.0)
    kummer = (xn < 0) & ~poly
    series = _hyp1f1_sum(jnp.where(kummer, b - a, a), b, jnp.where(kummer, -xn, xn))
    series = jnp.where(kummer, jnp.exp(xn) * series, series)
    xf = jnp.where(near, 100.0, x)
    val = jnp.where(near, series, _hyp1f1_asym(a, b, xf))
    val = jnp.where(a == 0, 1.0, jnp.where(a == b, jnp.exp(x), jnp.where(b == 0, jnp.inf, val)))
    return val.astype(get_aval(x).dtype)


@custom_jvp
def _hyp1f1(a, b, x):
    return _hyp1f1_impl(a, b, x)


_hyp1f1.defjvps(
    lambda g, ans, a, b, x: g * _hyp1f1_sum(a, b, x, "a"),
    lambda g, ans, a, b, x: g * _hyp1f1_sum(a, b, x, "b"),
    lambda g, ans, a, b, x: g * a / b * _hyp1f1(a + 1, b + 1, x),
)


def hyp1f1(a: Any, b: Any, x: Any) -> Any:
    """Confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k! (1 at a == b == 0, as JAX).

    For |x| >= 100 the leading asymptotic series is used in log space; JAX's float32 overflows there (inf / NaN).
    """
    _real_only("hyp1f1", a, b, x)
    a, b, x = _promote_inexact("hyp1f1", a, b, x)
    return _strong(_hyp1f1(a, b, x))


# --- Gauss hypergeometric function 2F1 ------------------------------------------------------------------


def _is_nonpos_int(v, tol):
    return (v <= 0) & (jnp.abs(v - jnp.round(v)) < tol)


def _hyp2f1_sum(a, b, c, x, weight: str = ""):
    """sum_k (a)_k (b)_k / (c)_k x^k / k!, optionally weighted by d/da, d/db or d/dc of the term's log.

    A non-positive integer a or b makes a polynomial, summed to its last term; otherwise each element stops
    once the next term is below eps relative to its sum (at most 250 terms, as JAX).
    """
    dt = get_aval(x).dtype
    eps = float(dtypes.finfo(dt).eps)
    tol = 50 * eps
    ia, ib = _is_nonpos_int(a, tol), _is_nonpos_int(b, tol)
    a, b = jnp.where(ia, jnp.round(a), a), jnp.where(ib, jnp.round(b), b)
    last = jnp.where(ia & ib, -jnp.maximum(a, b), jnp.where(ia, -a, jnp.where(ib, -b, 249.0)))
    poly = ia | ib
    zero = jnp.zeros_like(x)

    def cond(st):
        return jnp.any(st[5])

    def body(st):
        serie, k, term, wsum, dser, active = st
        serie = jnp.where(active, serie + term, serie)
        dser = jnp.where(active, dser + term * wsum, dser)
        if weight == "a":
            wsum = wsum + 1 / (a + k - 1)
        elif weight == "b":
            wsum = wsum + 1 / (b + k - 1)
        elif weight == "c":
            wsum = wsum - 1 / (c + k - 1)
        term = term * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)
        active = active & (k + 1 <= last + 1) & (poly | (jnp.abs(term) > eps * jnp.abs(serie)))
        return serie, k + 1, term, wsum, dser, active

    init = (zero, jnp.ones_like(x), jnp.ones_like(x), zero, zero, jnp.ones_like(x) > 0)
    out = while_loop(cond, body, init)
    return out[4] if weight else out[0]


def _hyp2f1_impl(a, b, c, x):
    eps = float(dtypes.finfo(get_aval(x).dtype).eps) * 50
    d, s = c - a - b, 1 - x
    d_int = jnp.abs(d - jnp.round(d)) < eps
    inf = jnp.full_like(x, jnp.inf)
    # The cases in JAX's order: trivial, poles and x > 1 (inf), Euler's transform for c - a - b <= -1, the
    # closed forms at b == c, a == c and x == 1 (Gauss's sum), and the power series.
    euler = (d <= -1) & ~(~d_int & (s < 0))
    xs = jnp.where(euler | (x >= 1), jnp.where(x >= 1, 0.0, x), x)
    euler_val = s**d * _hyp2f1_sum(c - a, c - b, c, xs)
    gauss = lax.lgamma(c) + lax.lgamma(d) - lax.lgamma(c - a) - lax.lgamma(c - b)
    gauss_sign = _gammasgn(c) * _gammasgn(d) * _gammasgn(c - a) * _gammasgn(c - b)
    out = jnp.where(x == 1, gauss_sign * jnp.exp(gauss), jnp.where(x > 1, inf, _hyp2f1_sum(a, b, c, xs)))
    out = jnp.where((x < 1) & (a == c), s ** (-b), out)
    out = jnp.where((x < 1) & (b == c), s ** (-a), out)
    out = jnp.where((d <= 0) & (x == 1), inf, out)
    out = jnp.where(euler, euler_val, out)
    out = jnp.where((c == 0) | ((c < 0) & (c % 1 == 0)), inf, out)
    out = jnp.where((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 1.0, out)
    return out.astype(get_aval(x).dtype)


@custom_jvp
def _hyp2f1(a, b, c, x):
    return _hyp2f1_impl(a, b, c, x)


_hyp2f1.defjvps(
    lambda g, ans, a, b, c, x: g * _hyp2f1_sum(a, b, c, x, "a"),
    lambda g, ans, a, b, c, x: g * _hyp2f1_sum(a, b, c, x, "b"),
    lambda g, ans, a, b, c, x: g * _hyp2f1_sum(a, b, c, x, "c"),
    lambda g, ans, a, b, c, x: g * a * b / c * _hyp2f1(a + 1, b + 1, c + 1, x),
)


def hyp2f1(a: Any, b: Any, c: Any, x: Any) -> Any:
    """Gauss hypergeometric function 2F1(a, b; c; x) for real arguments, with JAX's cases and limits:
    inf for x > 1 and at poles of c, Gauss's sum at x == 1, Euler's transform when c - a - b <= -1, and the
    power series (a polynomial for non-positive integer a or b; at most 250 terms, so slow near x == 1)."""
    a, b, c, x = _promote_inexact("hyp2f1", a, b, c, x)
    return _strong(_hyp2f1(a, b, c, x))


# --- Bernoulli numbers -------------------------------------------------------------------------------------

_BERNOULLI_EXACT: list = [Fraction(1)]


def _bernoulli_exact(n: int) -> list:
    """B_0..B_n as exact fractions (B_1 = -1/2), by sum_{k<=m} C(m+1, k) B_k = 0."""
    bs = _BERNOULLI_EXACT
    while len(bs) <= n:
        m = len(bs)
        if m > 1 and m % 2 == 1:
            bs.append(Fraction(0))
            continue
        acc, c = Fraction(0), 1
        for k in range(m):
            acc += c * bs[k]
            c = c * (m + 1 - k) // (k + 1)
        bs.append(-acc / (m + 1))
    return bs[: n + 1]


def _to_float(f: Fraction) -> float:
    try:
        return float(f)
    except OverflowError:
        return math.inf if f > 0 else -math.inf


def bernoulli(n: int) -> Any:
    """The first n + 1 Bernoulli numbers B_0..B_n (B_1 = -1/2), exact and rounded to the default float dtype."""
    try:
        n = int(n.__index__())
    except AttributeError:
        raise TypeError(f"Argument n of bernoulli must be an integer, got {type(n)}") from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    vals = [_to_float(b) for b in _bernoulli_exact(n)]
    return jnp.asarray(vals, dtype=dtypes.default_float())
