"""pyjax.scipy.special: special functions with JAX's values and derivatives.

logit, xlogy, xlog1py and entr carry JAX's custom JVPs (finite gradients where the naive formula
would give NaN, e.g. xlogy at x == 0); logsumexp subtracts a stop-gradient max for stability.
"""

from __future__ import annotations

import math
from typing import Any

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.core.core import Tracer, get_aval
from pyjax.custom_derivatives import custom_jvp
from pyjax.lax import lax

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
]


def _promote_inexact(name: str, *args) -> list:
    """promote_args_inexact: a common dtype for args, made floating if it is integer or bool."""
    arrs = []
    for a in args:
        if isinstance(a, Tracer):
            arrs.append(a)
            continue
        try:
            arrs.append(jnp.asarray(a))
        except TypeError:
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)}.") from None
    d, weak = dtypes.promote([(get_aval(a).dtype, get_aval(a).weak_type) for a in arrs])
    if d.kind != "f":
        d = dtypes.default_float()
    out = [lax._convert(a, d, weak) if get_aval(a).dtype is not d or get_aval(a).weak_type != weak else a for a in arrs]
    if len(out) > 1:
        out = list(jnp.broadcast_arrays(*out))
    return out


def _c(x, v):
    return lax.full_like(x, v)


def erf(x: Any) -> Any:
    """The error function."""
    (x,) = _promote_inexact("erf", x)
    return lax.erf(x)


def erfc(x: Any) -> Any:
    """The complementary error function 1 - erf(x)."""
    (x,) = _promote_inexact("erfc", x)
    return lax.erfc(x)


def erfinv(x: Any) -> Any:
    """The inverse error function."""
    (x,) = _promote_inexact("erfinv", x)
    return lax.erf_inv(x)


def gammaln(x: Any) -> Any:
    """log|Gamma(x)|."""
    (x,) = _promote_inexact("gammaln", x)
    return lax.lgamma(x)


def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma."""
    (x,) = _promote_inexact("digamma", x)
    return lax.digamma(x)


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
    return total + _c(a, constant)


@custom_jvp
def logit(x: Any) -> Any:
    """log(x / (1 - x))."""
    (x,) = _promote_inexact("logit", x)
    return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


def expit(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    (x,) = _promote_inexact("expit", x)
    return lax.logistic(x)


def _reduction_axes(ndim: int, axis) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    return tuple(sorted(out))


def logsumexp(
    a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False, where: Any = None
) -> Any:
    """log(sum(b * exp(a))) along axis, stable for large a; optionally returns the sign too."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = _promote_inexact("logsumexp", a, b)
        a = jnp.where(b != 0, a, -math.inf)
    else:
        (a,) = _promote_inexact("logsumexp", a)
    dims = _reduction_axes(a.ndim, axis)
    amax = jnp.max(a, axis=dims, keepdims=keepdims, where=where, initial=-math.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, jnp.broadcast_to(amax_dims, a.shape)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    sign = lax.sign(sumexp)
    sumexp = lax.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax)
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, lax.full_like(out, math.nan), out)
    return out


@custom_jvp
def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), defined as 0 where x == 0 (unless y is NaN)."""
    x, y = _promote_inexact("xlogy", x, y)
    x_ok = x != 0.0
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log(y)), jnp.zeros_like(x))


def _xlogy_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    result = xlogy(x, y)
    return result, (x_dot * lax.log(jnp.asarray(y, result.dtype)) + y_dot * x / y).astype(result.dtype)


xlogy.defjvp(_xlogy_jvp)


@custom_jvp
def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), defined as 0 where x == 0 (unless y is NaN)."""
    x, y = _promote_inexact("xlog1py", x, y)
    x_ok = x != 0.0
    return jnp.where(x_ok | jnp.isnan(y), lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


def _xlog1py_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    result = xlog1py(x, y)
    return result, (x_dot * lax.log1p(jnp.asarray(y, result.dtype)) + y_dot * x / (1 + y)).astype(result.dtype)


xlog1py.defjvp(_xlog1py_jvp)


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
    from pyjax import nn

    return nn.softmax(x, axis=axis)


def log_softmax(x: Any, axis: Any = None) -> Any:
    """x - logsumexp(x) over axis (all axes by default, as scipy)."""
    from pyjax import nn

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
    return jnp.where((p < 0) | (p > 1), math.nan, out)


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
