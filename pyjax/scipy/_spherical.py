"""Spherical harmonics sph_harm_y(n, m, theta, phi) = N P_n^|m|(cos theta) e^{i |m| phi} (conjugated
with sign (-1)^m for m < 0), with the Condon-Shortley phase, as scipy and JAX.

The orthonormalized associated Legendre functions are built for every order m <= n_max at once
(arrays over m): the sectoral ones P_m^m by their one-step product, the rest by the three-term
recurrence in degree. As JAX: n_max must be static, degrees above it are clipped to it, and each
harmonic j reads point j of theta (clipped to the last one). Loaded on first use.
"""

from __future__ import annotations

import math
from typing import Any

from pyjax import numpy as jnp
from pyjax.core.core import Tracer
from pyjax.errors import ConcretizationTypeError
from pyjax.scipy.special import _promote_inexact


def _legendre_table(n_max: int, x):
    """Orthonormal P_l^m(x) (with 1/sqrt(4 pi) and the Condon-Shortley phase), shape (l, m) + x.shape."""
    size = n_max + 1
    s = jnp.sqrt(jnp.maximum(1 - x * x, 0))
    sect = [jnp.full_like(x, 1 / math.sqrt(4 * math.pi))]
    for m in range(1, size):
        sect.append(-math.sqrt((2 * m + 1) / (2 * m)) * s * sect[-1])
    sect = jnp.stack(sect)  # (m, ...)
    ms = jnp.arange(size).reshape((size,) + (1,) * x.ndim)
    rows, prev2, prev = [], jnp.zeros_like(sect), jnp.zeros_like(sect)
    for ell in range(size):
        a = [math.sqrt((4 * ell * ell - 1) / (ell * ell - m * m)) if m < ell else 0.0 for m in range(size)]
        b = [
            math.sqrt(((ell - 1) ** 2 - m * m) / (4 * (ell - 1) ** 2 - 1)) if m < ell - 1 else 0.0 for m in range(size)
        ]
        a = jnp.asarray(a, x.dtype).reshape(ms.shape)
        b = jnp.asarray(b, x.dtype).reshape(ms.shape)
        cur = jnp.where(ms == ell, sect, jnp.where(ms < ell, a * (x * prev - b * prev2), 0.0))
        rows.append(cur)
        prev2, prev = prev, cur
    return jnp.stack(rows)


def sph_harm_y(n: Any, m: Any, theta: Any, phi: Any, diff_n: int | None = None, n_max: int | None = None) -> Any:
    """Spherical harmonics of degree n and order m at colatitude theta and longitude phi (complex)."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    if jnp.ndim(theta) == 0:
        theta = jnp.reshape(jnp.asarray(theta), (1,))
    if n_max is None:
        if isinstance(n, Tracer):
            raise ConcretizationTypeError(
                "The `n_max` argument of `jnp.scipy.special.sph_harm` must be statically specified to use "
                "`sph_harm` within JAX transformations."
            )
        n_max = int(jnp.max(jnp.asarray(n)))
    if isinstance(n_max, Tracer):
        raise ConcretizationTypeError("The `n_max` argument of `jnp.scipy.special.sph_harm` must be static.")
    n_max = int(n_max)
    n, m = jnp.asarray(n), jnp.asarray(m)
    theta, phi = _promote_inexact("sph_harm_y", theta, phi)
    table = _legendre_table(n_max, jnp.cos(theta))  # (l, m, points)
    count = n.shape[0]
    am = jnp.abs(m)
    pts = jnp.minimum(jnp.arange(count), theta.shape[0] - 1)
    p = table[jnp.clip(n, 0, n_max), jnp.clip(am, 0, n_max), pts]
    angle = am * phi
    y = jnp.asarray(p * jnp.cos(angle)) + 1j * jnp.asarray(p * jnp.sin(angle))
    return jnp.where(m < 0, jnp.where(am % 2 == 0, 1.0, -1.0) * jnp.conj(y), y)
