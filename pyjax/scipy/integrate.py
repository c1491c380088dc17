"""pyjax.scipy.integrate: jax.scipy.integrate (trapezoidal integration of samples)."""

from __future__ import annotations

import pyjax.numpy as jnp

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx: float = 1.0, axis: int = -1):
    """Integrate y along axis with the trapezoidal rule (sample points x, or uniform spacing dx)."""
    return jnp.trapezoid(y, x, dx, axis)
