"""pyjax.scipy.special: special functions with JAX's values and derivatives.

logit, xlogy, xlog1py and entr carry JAX's custom JVPs (finite gradients where the naive formula
would give NaN, e.g. xlogy at x == 0); logsumexp subtracts a stop-gradient max for stability.
"""

from __future__ import annotations

import math
from typing import Any

from pyjax import nn
from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.core.core import Tracer, get_aval
from pyjax.custom_derivatives import custom_jvp
from pyjax.lax import lax
from pyjax.lax import special as lax_special
from pyjax.lax.special import (  # the implementations, written with lax ops
    _bessel_i_scaled,
    _polygamma,
    _zeta,
)
from pyjax.nn import logsumexp
from pyjax.numpy._promotion import _promote_inexact

__all__ = [
    "erf",
    "erfc",
    "erfinv",
    "logit",
    "expit",
    "logsumexp",
    "gammaln",
    "digamma",
    "xlogy",
    "xlog1py",
    "entr",
    "softmax",
    "log_softmax",
    "ndtr",
    "ndtri",
    "log_ndtr",
    "betaln",
    "multigammaln",
    "gammasgn",
    "gamma",
    "loggamma",
    "factorial",
    "beta",
    "poch",
    "comb",
    "kl_div",
    "rel_entr",
    "boxcox",
    "boxcox1p",
    "erfcx",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "gammainc",
    "gammaincc",
    "betainc",
    "zeta",
    "polygamma",
]


def _c(x, v):
    return lax.full_like(x, v)


def _unary(name: str, op, doc: str):
    """scipy.special.`name`: the lax elementwise `op` on x promoted to an inexact dtype."""

    def f(x: Any) -> Any:
        (x,) = _promote_inexact(name, x)
        return op(x)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


erf = _unary("erf", lax.erf, "The error function.")
erfc = _unary("erfc", lax.erfc, "The complementary error function 1 - erf(x).")
erfinv = _unary("erfinv", lax.erf_inv, "The inverse error function.")
gammaln = _unary("gammaln", lax.lgamma, "log|Gamma(x)|.")
digamma = _unary("digamma", lax.digamma, "The logarithmic derivative of Gamma.")


def betaln(a: Any, b: Any) -> Any:
    """log|B(a, b)| = gammaln(a) + gammaln(b) - gammaln(a + b)."""
    a, b = _promote_inexact("betaln", a, b)
    return lax.lgamma(a) + lax.lgamma(b) - lax.lgamma(a + b)


def multigammaln(a: Any, d: int) -> Any:
    """The multivariate log-gamma function of dimension d."""
    d = int(d)
    (a,) = _promote_inexact("multigammaln", a)
    constant = 0.25 * d * (d - 1) * math.log(math.pi)
    terms = [lax.lgamma(a - 0.5 * i) for i in range(d)]
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return lax.convert_element_type(total + _c(a, constant), a.dtype)  # never weak, as in JAX


@custom_jvp
def logit(x: Any) -> Any:
    """log(x / (1 - x))."""
    (x,) = _promote_inexact("logit", x, complex_ok=True)
    return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


def expit(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    (x,) = _promote_inexact("expit", x, complex_ok=True)
    if x.dtype.kind == "c":
        return lax.div(_c(x, 1), lax.add(_c(x, 1), lax.exp(lax.neg(x))))
    return lax.logistic(x)


def _x_times_log(name: str, log, shift: float, doc: str):
    """xlogy/xlog1py: x * log(y) with `log` (log or log1p, that is log(shift + y)), 0 where x == 0
    unless y is NaN; its derivative in y is x / (shift + y)."""

    def f(x: Any, y: Any) -> Any:
        x, y = _promote_inexact(name, x, y, complex_ok=True)
        return jnp.where((x != 0.0) | jnp.isnan(y), lax.mul(x, log(y)), jnp.zeros_like(x))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    f = custom_jvp(f)

    def jvp(primals, tangents):
        x, y = primals
        x_dot, y_dot = tangents
        result = f(x, y)
        return result, (x_dot * log(jnp.asarray(y, result.dtype)) + y_dot * x / (shift + y)).astype(result.dtype)

    f.defjvp(jvp)
    return f


xlogy = _x_times_log("xlogy", lax.log, 0, "x * log(y), defined as 0 where x == 0 (unless y is NaN).")
xlog1py = _x_times_log("xlog1py", lax.log1p, 1, "x * log1p(y), defined as 0 where x == 0 (unless y is NaN).")


@custom_jvp
def _xlogx(x):
    return xlogy(x, x)


_xlogx.defjvp(lambda primals, tangents: (_xlogx(primals[0]), tangents[0] * (lax.log(primals[0]) + 1)))


def entr(x: Any) -> Any:
    """-x log x for x > 0, 0 at x == 0, -inf for x < 0."""
    (x,) = _promote_inexact("entr", x)
    return lax.select(lax.lt(x, _c(x, 0)), lax.full_like(x, -math.inf), lax.neg(_xlogx(x)))


def softmax(x: Any, axis: Any = None) -> Any:
    """exp(x) / sum(exp(x)) over axis (all axes by default, as scipy)."""
    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, axis: Any = None) -> Any:
    """x - logsumexp(x) over axis (all axes by default, as scipy)."""
    return nn.log_softmax(x, axis=axis)


def _check_ndtr_dtype(x, name: str):
    x = x if isinstance(x, Tracer) else jnp.asarray(x)
    d = get_aval(x).dtype
    if d not in (dtypes.float32, dtypes.float64):
        raise TypeError(f"x.dtype={d.name} is not supported, see docstring for supported types.")
    return x


def ndtr(x: Any) -> Any:
    """The standard normal CDF, accurate in both tails (erf near 0, erfc in the tails)."""
    x = _check_ndtr_dtype(x, "ndtr")
    half_sqrt_2 = _c(x, 0.5 * math.sqrt(2.0))
    w = x * half_sqrt_2
    z = lax.abs(w)
    y = lax.select(
        lax.lt(z, half_sqrt_2),
        _c(x, 1.0) + lax.erf(w),
        lax.select(lax.gt(w, _c(x, 0.0)), _c(x, 2.0) - lax.erfc(z), lax.erfc(z)),
    )
    return _c(x, 0.5) * y


def ndtri(p: Any) -> Any:
    """The inverse of ndtr: sqrt(2) * erfinv(2p - 1), refined by one Newton step on ndtr."""
    p = _check_ndtr_dtype(p, "ndtri")
    x = _c(p, math.sqrt(2.0)) * lax.erf_inv(_c(p, 2.0) * p - _c(p, 1.0))
    # one Newton step on ndtr(x) = p recovers accuracy lost in 2p - 1 for small p
    finite = jnp.isfinite(x)
    xs = jnp.where(finite, x, 0.0)
    pdf = jnp.exp(_c(p, -0.5) * xs * xs) * _c(p, 1.0 / math.sqrt(2.0 * math.pi))
    step = (ndtr(xs) - p) / pdf
    refined = xs - jnp.where(pdf > 0, step, 0.0)
    out = jnp.where(finite, refined, x)
    out = jnp.where(p == 0.0, -math.inf, jnp.where(p == 1.0, math.inf, out))
    return lax.convert_element_type(jnp.where((p < 0) | (p > 1), math.nan, out), p.dtype)  # never weak, as in JAX


def log_ndtr(x: Any) -> Any:
    """log of the standard normal CDF, stable in both tails (asymptotic series far left)."""
    x = _check_ndtr_dtype(x, "log_ndtr")
    f32 = get_aval(x).dtype is dtypes.float32
    lower, upper = (-10.0, 5.0) if f32 else (-20.0, 8.0)
    # each branch sees a clamped input (select, not clip) so unused branches have finite gradients
    zero = jnp.zeros_like(x)
    xr = jnp.where(x > upper, x, zero + upper)
    right = jnp.log1p(-ndtr(-xr))
    xm = jnp.where(x > upper, zero + upper, jnp.where(x > lower, x, zero + lower))
    middle = jnp.log(ndtr(xm))
    xl = jnp.where(x > lower, zero + lower, x)
    x2 = xl * xl
    inv = 1.0 / x2
    series = 1.0 - inv + 3.0 * inv * inv - 15.0 * inv * inv * inv
    left = -0.5 * x2 - jnp.log(-xl) - 0.5 * math.log(2 * math.pi) + jnp.log(series)
    return jnp.where(x > upper, right, jnp.where(x > lower, middle, left))


# --- gamma-function relatives -----------------------------------------------------------------------


def gammasgn(x: Any) -> Any:
    """Sign of Gamma(x): NaN at non-positive integers (and NaN), -1 on odd stretches of x < 0."""
    (x,) = _promote_inexact("gammasgn", x)
    odd = jnp.floor(-x) % 2 == 0
    neg = jnp.where(odd, -1.0, 1.0).astype(x.dtype)
    bad = (x <= 0) & (x == jnp.floor(x)) & (x != 0)
    return jnp.where(jnp.isnan(x) | bad, jnp.nan, jnp.where(x >= 0, 1.0, neg)).astype(x.dtype)


def gamma(x: Any) -> Any:
    """The gamma function, gammasgn(x) * exp(gammaln(x))."""
    (x,) = _promote_inexact("gamma", x, complex_ok=True)
    if x.dtype.kind == "c":
        raise NotImplementedError("gamma: complex arguments are not supported by pyjax")
    return gammasgn(x) * jnp.exp(lax.lgamma(x))


def loggamma(x: Any) -> Any:
    """log(Gamma(x)) for real x: gammaln where Gamma(x) > 0, NaN elsewhere (as JAX for real input)."""
    (x,) = _promote_inexact("loggamma", x)
    return jnp.where(x > 0, lax.lgamma(x), jnp.nan)


def factorial(n: Any, exact: bool = False) -> Any:
    """n! = Gamma(n + 1) for n >= 0, and 0 for n < 0."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _promote_inexact("factorial", n)
    return jnp.where(n < 0, 0.0, jnp.exp(lax.lgamma(n + 1))).astype(n.dtype)


def beta(a: Any, b: Any) -> Any:
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b), with its sign."""
    a, b = _promote_inexact("beta", a, b)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * jnp.exp(betaln(a, b))


def poch(z: Any, m: Any) -> Any:
    """The Pochhammer symbol Gamma(z + m) / Gamma(z)."""
    z, m = _promote_inexact("poch", z, m)
    sign = gammasgn(z + m) * gammasgn(z)
    return jnp.where(m == 0, 1.0, sign * jnp.exp(lax.lgamma(z + m) - lax.lgamma(z))).astype(z.dtype)


def comb(N: Any, k: Any, *, repetition: bool = False) -> Any:
    """Binomial coefficient N choose k (0 outside 0 <= k <= N); with repetition, (N + k - 1) choose k."""
    N, k = _promote_inexact("comb", N, k)
    if repetition:
        N = N + k - 1
    val = jnp.exp(lax.lgamma(N + 1) - lax.lgamma(k + 1) - lax.lgamma(N - k + 1))
    return jnp.where((k < 0) | (k > N) | (N < 0), 0.0, val).astype(N.dtype)


def kl_div(p: Any, q: Any) -> Any:
    """Elementwise p log(p / q) - p + q (q where p == 0, inf outside the domain)."""
    p, q = _promote_inexact("kl_div", p, q)
    inside = (p > 0) & (q > 0)
    sp, sq = jnp.where(inside, p, 1), jnp.where(inside, q, 1)
    val = sp * jnp.log(sp / sq) - sp + sq
    return jnp.where(inside, val, jnp.where((p == 0) & (q >= 0), q, jnp.inf))


def rel_entr(p: Any, q: Any) -> Any:
    """Elementwise p log(p / q) (0 where p == 0, inf outside the domain)."""
    p, q = _promote_inexact("rel_entr", p, q)
    inside = (p > 0) & (q > 0)
    sp, sq = jnp.where(inside, p, 1), jnp.where(inside, q, 1)
    return jnp.where(inside, sp * jnp.log(sp / sq), jnp.where((p == 0) & (q >= 0), 0.0, jnp.inf))


def boxcox(x: Any, lmbda: Any) -> Any:
    """Box-Cox transform: (x ** lmbda - 1) / lmbda, log(x) at lmbda == 0."""
    x, lmbda = _promote_inexact("boxcox", x, lmbda)
    safe = jnp.where(lmbda == 0, 1, lmbda)
    return jnp.where(lmbda == 0, jnp.log(x), jnp.expm1(safe * jnp.log(x)) / safe)


def boxcox1p(x: Any, lmbda: Any) -> Any:
    """Box-Cox transform of 1 + x."""
    x, lmbda = _promote_inexact("boxcox1p", x, lmbda)
    safe = jnp.where(lmbda == 0, 1, lmbda)
    return jnp.where(lmbda == 0, jnp.log1p(x), jnp.expm1(safe * jnp.log1p(x)) / safe)


def erfcx(x: Any) -> Any:
    """Scaled complementary error function exp(x ** 2) erfc(x) (asymptotic series for x >= 6)."""
    (x,) = _promote_inexact("erfcx", x, complex_ok=True)
    if x.dtype.kind == "c":
        raise NotImplementedError("erfcx: complex arguments are not supported by pyjax")
    big = x >= 6
    xb = jnp.where(big, x, 6.0)
    inv2x2 = 1 / (2 * xb * xb)
    term, total = jnp.ones_like(xb), jnp.ones_like(xb)
    for k in range(1, 12):
        term = -term * (2 * k - 1) * inv2x2
        total = total + term
    xs = jnp.where(big, 0.0, x)
    return jnp.where(big, total / (xb * math.sqrt(math.pi)), jnp.exp(xs * xs) * lax.erfc(xs))


# --- modified Bessel functions of orders 0 and 1 -------------------------------------------------


def i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0, exp(-|x|) I0(x)."""
    (x,) = _promote_inexact("i0e", x)
    return _bessel_i_scaled(0, x)


def i0(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 0."""
    (x,) = _promote_inexact("i0", x)
    return jnp.exp(jnp.abs(x)) * _bessel_i_scaled(0, x)


def i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1, exp(-|x|) I1(x) (odd in x)."""
    (x,) = _promote_inexact("i1e", x)
    return jnp.sign(x) * _bessel_i_scaled(1, x)


def i1(x: Any) -> Any:
    """Modified Bessel function of the first kind, order 1."""
    (x,) = _promote_inexact("i1", x)
    return jnp.sign(x) * jnp.exp(jnp.abs(x)) * _bessel_i_scaled(1, x)


# --- incomplete gamma and beta functions ------------------------------------------------------------


def gammainc(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function P(a, x)."""
    return lax_special.igamma(*_promote_inexact("gammainc", a, x))  # lax's, on arguments promoted to floating


def gammaincc(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return lax_special.igammac(*_promote_inexact("gammaincc", a, x))  # lax's, on arguments promoted to floating


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function I_x(a, b)."""
    return lax_special.betainc(*_promote_inexact("betainc", a, b, x))  # lax's, on arguments promoted to floating


# --- zeta and polygamma -------------------------------------------------------------------------------


def zeta(x: Any, q: Any = None) -> Any:
    """Hurwitz zeta function sum_k (k + q) ** -x (Riemann zeta when q is None), by Euler-Maclaurin summation."""
    if q is None:
        q = 1.0
    return _zeta(*_promote_inexact("zeta", x, q))


def polygamma(n: Any, x: Any) -> Any:
    """The n-th derivative of digamma: (-1) ** (n + 1) n! zeta(n + 1, x) for n >= 1, digamma for n == 0."""
    n_dtype = get_aval(n).dtype if isinstance(n, Tracer) else jnp.asarray(n).dtype
    if n_dtype.kind not in "iu":
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype.name}.")
    return _polygamma(*_promote_inexact("polygamma", n, x))


# --- functions defined by integrals or series, loaded on first use ----------------------------------------

_LAZY = {n: "_special_integrals" for n in ("dawsn", "exp1", "expi", "expn", "fresnel", "owens_t", "sici", "spence")}
_LAZY.update({n: "_special_series" for n in ("bernoulli", "bessel_jn", "hyp1f1", "hyp2f1")})
_LAZY["wofz"] = "_faddeeva"
_LAZY["sph_harm_y"] = "_spherical"
__all__ += sorted(_LAZY)


def __getattr__(name: str):
    """The functions of _special_integrals / _special_series load on first use (they cost `import pyjax`
    time in the browser)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"pyjax.scipy.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'pyjax.scipy.special' has no attribute {name!r}")
