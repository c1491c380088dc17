"""Special functions of jax.lax, composed from lax primitives: igamma, igammac, igamma_grad_a,
random_gamma_grad, betainc, polygamma, zeta, bessel_i0e and bessel_i1e. pyjax.scipy.special's
functions of the same names (and random.gamma's reparameterization) run these after numpy-style
argument promotion.
"""

from __future__ import annotations

import math
from typing import Any

from pyjax.core import core, dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._util import _arr
from pyjax.lax.shapes import broadcast_shapes, broadcast_to

__all__ = [
    "igamma",
    "igammac",
    "igamma_grad_a",
    "random_gamma_grad",
    "betainc",
    "polygamma",
    "zeta",
    "bessel_i0e",
    "bessel_i1e",
]


def _where(c, x, y):
    """lax.select of operands of c's shape; a Python scalar takes the other operand's dtype."""
    if isinstance(x, (int, float)):
        x = lax.full_like(y, x)
    if isinstance(y, (int, float)):
        y = lax.full_like(x, y)
    return lax.select(c, x, y)


def _isnan(x):
    return lax.ne(x, x)


def _float_args(name: str, *xs) -> list:
    """JAX's lax rules for these functions: floating inputs of one dtype (weak scalars adapt),
    broadcast to one shape."""
    arrs = [x if isinstance(x, core.Tracer) else _arr(x) for x in xs]
    for a in arrs:
        if a.dtype.kind != "f":
            raise TypeError(f"{name} does not accept dtype {a.dtype.name}. Accepted dtypes are subtypes of floating.")
    strong = {a.dtype for a in arrs if not a.aval.weak_type}
    if len(strong) > 1:
        names = ", ".join(sorted(d.name for d in strong))
        raise TypeError(f"{name} requires arguments to have the same dtypes, got {names}.")
    d, _ = dtypes.promote([(a.dtype, a.aval.weak_type) for a in arrs])
    weak = all(a.aval.weak_type for a in arrs)  # all Python scalars: the result stays weak, as in JAX
    out = [lax._convert(a, d, weak) for a in arrs]
    shape = broadcast_shapes(*(get_aval(a).shape for a in out))
    return [broadcast_to(a, shape) for a in out]


def _keep_weak(out, *args):
    """out made weak-typed when every argument is (JAX's lax special functions keep Python scalars weak)."""
    if all(get_aval(a).weak_type for a in args) and not get_aval(out).weak_type:
        return lax._convert(out, get_aval(out).dtype, True)
    return out


# --- modified Bessel functions of orders 0 and 1 -------------------------------------------------


def _bessel_i_scaled(nu: int, x):
    """exp(-|x|) I_nu(|x|): power series for |x| <= 15, the large-argument asymptotic series beyond."""
    ax = lax.abs(x)
    small = lax.le(ax, 15)
    xs = _where(small, ax, 0.0)
    q = xs * xs / 4
    term = (xs / 2) ** nu / math.factorial(nu)
    total = term
    for k in range(1, 60):
        term = term * q / (k * (k + nu))
        total = total + term
    xl = _where(small, 15.0, ax)
    mu = 4.0 * nu * nu
    coef, series = lax.full_like(xl, 1), lax.full_like(xl, 1)
    for k in range(1, 14):
        coef = -coef * (mu - (2 * k - 1) ** 2) / (k * 8 * xl)
        series = series + coef
    return _where(small, total * lax.exp(-xs), series / lax.sqrt(2 * math.pi * xl))


# --- incomplete gamma and beta functions ------------------------------------------------------------

_ITERS = 256


def _tiny(x):
    return float(dtypes.finfo(get_aval(x).dtype).tiny) * 16


def _gammainc_pair(a, x):
    """(P, Q) regularized incomplete gammas for a > 0, x > 0: series when x < a + 1, else Lentz's fraction."""
    from pyjax.lax.control_flow import fori_loop

    series = x < a + 1
    xs = _where(series, x, a)  # each branch gets in-domain values, so neither makes NaNs
    xc = _where(series, a + 1, x)

    def s_step(n, c):
        term, total = c
        term = term * xs / (a + n)
        return term, total + term

    _, total = fori_loop(1, _ITERS, s_step, (1 / a, 1 / a))
    p_series = lax.exp(a * lax.log(xs) - xs - lax.lgamma(a)) * total
    tiny = _tiny(x)
    b0 = xc + 1 - a

    def cf_step(i, c):
        b, cc, d, h = c
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = _where(lax.abs(d) < tiny, tiny, d)
        cc = b + an / cc
        cc = _where(lax.abs(cc) < tiny, tiny, cc)
        d = 1 / d
        return b, cc, d, h * d * cc

    init = (b0, lax.full_like(b0, 1 / tiny), 1 / b0, 1 / b0)
    h = fori_loop(1, _ITERS, cf_step, init)[3]
    q_cf = lax.exp(a * lax.log(xc) - xc - lax.lgamma(a)) * h
    return _where(series, p_series, 1 - q_cf), _where(series, 1 - p_series, q_cf)


def _gammainc_core(a, x, upper: bool):
    """P (or Q if upper) with JAX's edge values; a and x of one dtype and shape."""
    inside = (a > 0) & (x > 0) & (x < math.inf)
    sa, sx = _where(inside, a, 1.0), _where(inside, x, 1.0)
    p, q = _gammainc_pair(sa, sx)
    val = q if upper else p
    one, zero = lax.full_like(val, 1), lax.full_like(val, 0)
    lower_edge = _where((a == 0) & (x > 0) | (x == math.inf) & (a >= 0), one, zero)
    edge = _where((a < 0) | (x < 0) | _isnan(a) | _isnan(x), math.nan, 1 - lower_edge if upper else lower_edge)
    return _where(inside, val, edge)


def _gamma_density(a, x):
    inside = (a > 0) & (x > 0)
    sa, sx = _where(inside, a, 1.0), _where(inside, x, 1.0)
    return _where(inside, lax.exp((sa - 1) * lax.log(sx) - sx - lax.lgamma(sa)), 0.0)


def _betaln(a, b):
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def _betacf(a, b, x):
    """Lentz's continued fraction for the incomplete beta function (converges for x < (a + 1) / (a + b + 2))."""
    from pyjax.lax.control_flow import fori_loop

    tiny = _tiny(x)
    qab, qap, qam = a + b, a + 1, a - 1

    def clamp(v):
        return _where(lax.abs(v) < tiny, tiny, v)

    d0 = 1 / clamp(1 - qab * x / qap)

    def step(m, c):
        cc, d, h = c
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1 / clamp(1 + aa * d)
        cc = clamp(1 + aa / cc)
        h = h * d * cc
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1 / clamp(1 + aa * d)
        cc = clamp(1 + aa / cc)
        return cc, d, h * d * cc

    return fori_loop(1, _ITERS, step, (lax.full_like(x, 1), d0, d0))[2]


def _betainc_core(a, b, x):
    inside = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    sa, sb, sx = _where(inside, a, 1.0), _where(inside, b, 1.0), _where(inside, x, 0.5)
    flip = sx > (sa + 1) / (sa + sb + 2)
    # Evaluate the fraction where it converges: at x directly, or at 1 - x with a and b swapped.
    fa, fb, fx = _where(flip, sb, sa), _where(flip, sa, sb), _where(flip, 1 - sx, sx)
    front = lax.exp(fa * lax.log(fx) + fb * lax.log1p(-fx) - _betaln(fa, fb)) / fa
    val = front * _betacf(fa, fb, fx)
    val = _where(flip, 1 - val, val)
    bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | _isnan(a) | _isnan(b) | _isnan(x)
    edge = _where((x >= 1) | (a == 0), lax.full_like(val, 1), lax.full_like(val, 0))
    return _where(inside, val, _where(bad, math.nan, edge))


def _beta_density(a, b, x):
    inside = (a > 0) & (b > 0) & (x > 0) & (x < 1)
    sa, sb, sx = _where(inside, a, 1.0), _where(inside, b, 1.0), _where(inside, x, 0.5)
    return _where(inside, lax.exp((sa - 1) * lax.log(sx) + (sb - 1) * lax.log1p(-sx) - _betaln(sa, sb)), 0.0)


_CUSTOM: dict = {}


def _with_jvp(name: str):
    """The custom_jvp of an incomplete function (built on first use: custom_derivatives sits above lax's
    import): analytic derivative in x, forward-mode autodiff of the core in the parameters."""
    if name not in _CUSTOM:
        from pyjax.api import jvp
        from pyjax.custom_derivatives import custom_jvp

        core_fn, dx_fn, n_params = {
            "gammainc": (lambda a, x: _gammainc_core(a, x, False), _gamma_density, 1),
            "gammaincc": (lambda a, x: _gammainc_core(a, x, True), lambda a, x: -_gamma_density(a, x), 1),
            "betainc": (_betainc_core, _beta_density, 2),
        }[name]
        f = custom_jvp(core_fn)

        @f.defjvp
        def _jvp(primals, tangents):
            params, x = primals[:n_params], primals[n_params]
            out, dparams = jvp(lambda *ps: core_fn(*ps, x), tuple(params), tuple(tangents[:n_params]))
            return out, dparams + tangents[n_params] * dx_fn(*primals)

        _CUSTOM[name] = f
    return _CUSTOM[name]


def _gammainc(a, x):
    return _with_jvp("gammainc")(a, x)


def _gammaincc(a, x):
    return _with_jvp("gammaincc")(a, x)


def _betainc(a, b, x):
    return _with_jvp("betainc")(a, b, x)


def _gamma_sample_grad(a, z):
    """dz/da of a Gamma(a) sample z at fixed CDF value (implicit reparameterization): -dP/da / density."""
    from pyjax.api import jvp

    _, dp_da = jvp(lambda a_: _gammainc_core(a_, z, False), (a,), (lax.full_like(a, 1),))
    return -dp_da / _gamma_density(a, z)


# --- zeta and polygamma -------------------------------------------------------------------------------

_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798, -174611 / 330)


def _zeta(s, q):
    """Hurwitz zeta sum_k (k + q) ** -s by Euler-Maclaurin summation; s and q of one dtype and shape."""
    n = 12
    total = lax.full_like(q, 0)
    for k in range(n):
        total = total + (q + k) ** (-s)
    qn = q + n
    total = total + qn ** (1 - s) / (s - 1) + qn ** (-s) / 2
    rising = s  # s (s + 1) ... (s + 2j - 2)
    power = qn ** (-s - 1)
    for j, b2j in enumerate(_BERNOULLI, start=1):
        total = total + b2j / math.factorial(2 * j) * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power / (qn * qn)
    return _where(s == 1, math.inf, _where(s < 1, math.nan, total))


def _polygamma(nf, x):
    """polygamma on floating arguments of one dtype and shape (lax.polygamma takes a float order)."""
    sign = _where(nf % 2 == 0, lax.full_like(x, -1), lax.full_like(x, 1))
    safe_n = _where(nf == 0, 1.0, nf)
    val = sign * lax.exp(lax.lgamma(safe_n + 1)) * _zeta(safe_n + 1, x)
    out = _where(nf == 0, lax.digamma(x), val)
    out = _where(lax.floor(nf) == nf, out, float("nan"))  # a non-integer order is NaN, as in JAX
    return _keep_weak(lax.convert_element_type(out, get_aval(x).dtype), nf, x)


# --- special functions ------------------------------------------------------------------------


def igamma(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function P(a, x)."""
    a, x = _float_args("igamma", a, x)
    return _keep_weak(_gammainc(a, x), a, x)


def igammac(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    a, x = _float_args("igammac", a, x)
    return _keep_weak(_gammaincc(a, x), a, x)


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da, the derivative of the regularized lower incomplete gamma in a."""
    from pyjax.api import jvp

    a, x = _float_args("igamma_grad_a", a, x)
    return jvp(lambda a_: _gammainc_core(a_, x, False), (a,), (lax.full_like(a, 1),))[1]


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d(sample)/da of a Gamma(a, 1) sample x at fixed CDF value (implicit reparameterization)."""
    return _gamma_sample_grad(*_float_args("random_gamma_grad", a, x))


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function I_x(a, b)."""
    a, b, x = _float_args("betainc", a, b, x)
    return _keep_weak(_betainc(a, b, x), a, b, x)


def polygamma(m: Any, x: Any) -> Any:
    """The m-th derivative of the digamma function at x."""
    return _polygamma(*_float_args("polygamma", m, x))


def zeta(x: Any, q: Any) -> Any:
    """Hurwitz zeta function zeta(x, q)."""
    return _zeta(*_float_args("zeta", x, q))


def bessel_i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0: exp(-|x|) I0(x)."""
    return _bessel_i_scaled(0, *_float_args("bessel_i0e", x))


def bessel_i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1: exp(-|x|) I1(x)."""
    (x,) = _float_args("bessel_i1e", x)
    return lax.sign(x) * _bessel_i_scaled(1, x)
