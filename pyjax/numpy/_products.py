"""Matrix-vector products of the array API: matvec and vecmat (the other products are in _core)."""

from __future__ import annotations

from pyjax.numpy import _core as jnp

__all__ = ["matvec", "vecmat"]


def matvec(x1, x2, /):
    """Batched matrix-vector product: x1 (..., m, n) with x2 (..., n) -> (..., m)."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec requires x1.ndim >= 2 and x2.ndim >= 1, got {x1.ndim=}, {x2.ndim=}")
    return jnp.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    """Batched vector-matrix product: x1 (..., m) with x2 (..., m, n) -> (..., n)."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat requires x1.ndim >= 1 and x2.ndim >= 2, got {x1.ndim=}, {x2.ndim=}")
    return jnp.matmul(x1[..., None, :], x2)[..., 0, :]
