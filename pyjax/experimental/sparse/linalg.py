"""pyjax.experimental.sparse.linalg: spsolve, the solution of a CSR-stored linear system (densified and
solved by LU: pyjax has no sparse factorization)."""

from __future__ import annotations

import pyjax.numpy as jnp
from pyjax.experimental.sparse.bcsr import BCSR

__all__ = ["spsolve"]


def spsolve(data, indices, indptr, b, tol=1e-6, reorder=1):
    """x with A @ x == b for the square CSR matrix A = (data, indices, indptr)."""
    b = jnp.asarray(b)
    n = b.shape[0]
    a = BCSR((data, indices, indptr), shape=(n, n)).todense()
    return jnp.linalg.solve(a, b)
