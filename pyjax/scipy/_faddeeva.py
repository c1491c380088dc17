"""The Faddeeva function wofz(z) = exp(-z^2) erfc(-iz), by Weideman's rational approximation.

Weideman (SIAM J. Numer. Anal. 31, 1994): in the upper half plane w(z) = 2 p(Z) / (L - iz)^2 +
1 / (sqrt(pi) (L - iz)) with Z = (L + iz) / (L - iz), p a polynomial of degree N - 1 whose
coefficients are a discrete Fourier transform of exp(-t^2) (L^2 + t^2) sampled at t = L tan(theta/2);
the lower half plane follows from w(-z) = 2 exp(-z^2) - w(z). The coefficients (N = 32, as JAX)
are computed once, in Python. Loaded on first use.
"""

from __future__ import annotations

import cmath
import functools
import math
from typing import Any

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.custom_derivatives import custom_jvp
from pyjax.lax import lax
from pyjax.numpy._promotion import _check_arraylike

_N = 32
_L = math.sqrt(_N / math.sqrt(2))


@functools.cache
def _coefficients() -> tuple:
    """p's coefficients, highest degree first."""
    m = 2 * _N
    samples = [0.0]
    for k in range(-m + 1, m):
        t = _L * math.tan(k * math.pi / m / 2)
        samples.append(math.exp(-t * t) * (_L * _L + t * t))
    size = 2 * m
    shifted = samples[m:] + samples[:m]
    coef = [
        sum(shifted[n] * cmath.exp(-2j * math.pi * j * n / size) for n in range(size)).real / size
        for j in range(1, _N + 1)
    ]
    return tuple(reversed(coef))


def _upper(z):
    """w(z) for Im z >= 0."""
    iz = lax.complex(-jnp.imag(z), jnp.real(z))
    denom = _L - iz
    zz = (_L + iz) / denom
    p = jnp.zeros_like(z)
    for c in _coefficients():
        p = p * zz + c
    return 2 * p / (denom * denom) + (1 / math.sqrt(math.pi)) / denom


@custom_jvp
def _wofz(z):
    upper = jnp.imag(z) >= 0
    zu = jnp.where(upper, z, -z)
    w = _upper(zu)
    return jnp.where(upper, w, 2 * jnp.exp(-z * z) - w)


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    w = _wofz(z)
    return w, (-2 * z * w + 2j / math.sqrt(math.pi)) * dz


def wofz(z: Any) -> Any:
    """The Faddeeva function exp(-z^2) erfc(-iz), complex-valued (real input is promoted to complex)."""
    _check_arraylike("wofz", z)
    z = jnp.asarray(z)
    d = get_aval(z).dtype
    cd = d if dtypes.is_complex(d) else dtypes.complex_dtype(d if dtypes.is_float(d) else dtypes.default_float())
    return _wofz(lax.convert_element_type(z, cd))
