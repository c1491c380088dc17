"""Special functions of jax.lax, composed from existing primitives: igamma, igammac, igamma_grad_a,
random_gamma_grad, betainc, polygamma, zeta, bessel_i0e and bessel_i1e (on pyjax.scipy.special's
implementations).
"""

from __future__ import annotations

from typing import Any

from pyjax.core import core
from pyjax.lax import lax
from pyjax.lax._lazy_numpy import _jnp

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


def _special():
    from pyjax.scipy import special

    return special


def _float_args(name: str, *xs) -> list:
    """JAX's lax rules for these functions: floating inputs of one dtype (weak scalars adapt)."""
    jnp = _jnp()
    arrs = [x if isinstance(x, core.Tracer) else jnp.asarray(x) for x in xs]
    for a in arrs:
        if a.dtype.kind != "f":
            raise TypeError(f"{name} does not accept dtype {a.dtype.name}. Accepted dtypes are subtypes of floating.")
    strong = {a.dtype for a in arrs if not a.aval.weak_type}
    if len(strong) > 1:
        names = ", ".join(sorted(d.name for d in strong))
        raise TypeError(f"{name} requires arguments to have the same dtypes, got {names}.")
    d = jnp.result_type(*arrs)
    weak = all(a.aval.weak_type for a in arrs)  # all Python scalars: the result stays weak, as in JAX
    return [lax._convert(a, d, weak) for a in arrs]


# --- special functions ------------------------------------------------------------------------


def igamma(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function P(a, x)."""
    return _special().gammainc(*_float_args("igamma", a, x))


def igammac(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _special().gammaincc(*_float_args("igammac", a, x))


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da, the derivative of the regularized lower incomplete gamma in a."""
    from pyjax.api import jvp

    a, x = _float_args("igamma_grad_a", a, x)
    core_fn = _special()._gammainc_core
    return jvp(lambda a_: core_fn(a_, x, False), (a,), (_jnp().ones_like(a),))[1]


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d(sample)/da of a Gamma(a, 1) sample x at fixed CDF value (implicit reparameterization)."""
    from pyjax import random

    a, x = _float_args("random_gamma_grad", a, x)
    return random._gamma_sample_grad(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function I_x(a, b)."""
    return _special().betainc(*_float_args("betainc", a, b, x))


def polygamma(m: Any, x: Any) -> Any:
    """The m-th derivative of the digamma function at x."""
    return _special()._polygamma(*_float_args("polygamma", m, x))


def zeta(x: Any, q: Any) -> Any:
    """Hurwitz zeta function zeta(x, q)."""
    return _special().zeta(*_float_args("zeta", x, q))


def bessel_i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0: exp(-|x|) I0(x)."""
    return _special().i0e(*_float_args("bessel_i0e", x))


def bessel_i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1: exp(-|x|) I1(x)."""
    return _special().i1e(*_float_args("bessel_i1e", x))
