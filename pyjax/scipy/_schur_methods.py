"""What jax.scipy.linalg computes through the Schur form: the matrix functions sqrtm and funm (Schur-Parlett)
and solve_sylvester (Bartels-Stewart). Loaded on first use (it costs `import pyjax` time in the browser)."""

from __future__ import annotations

import math
from collections.abc import Callable

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax.control_flow import fori_loop
from pyjax.numpy import linalg as jla
from pyjax.numpy._promotion import _inexact
from pyjax.numpy._schur import _jitted, _real_eps, rsf2csf, schur

__all__ = ["sqrtm", "funm", "solve_sylvester"]


def _superdiag_masks(n):
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    return c - r


def _sqrtm_triu(t):
    """Upper-triangular square root of upper-triangular t (Bjorck-Hammarling), one superdiagonal at a time."""
    n = t.shape[-1]
    dg = jnp.sqrt(jnp.diagonal(t, axis1=-2, axis2=-1))
    off = _superdiag_masks(n)
    u = jnp.where(off == 0, dg[..., None, :], jnp.zeros((), t.dtype))
    den = dg[..., :, None] + dg[..., None, :]

    def step(k, u):
        # with diagonal k still zero, (u @ u)[i, i + k] is exactly sum_{i < l < i + k} u[i, l] u[l, i + k]
        rhs = t - jnp.matmul(u, u)
        val = jnp.where(rhs == 0, jnp.zeros((), t.dtype), rhs / jnp.where(den == 0, 1, den))
        return jnp.where(off == k, val, u)

    return fori_loop(1, n, step, u) if n > 1 else u


def sqrtm(A, blocksize: int = 1):
    """Principal matrix square root (complex), via the complex Schur form."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    t, z = schur(A, output="complex")
    u = _jitted(_sqrtm_triu, t)(t)
    return jnp.matmul(jnp.matmul(z, u), jnp.conj(jnp.swapaxes(z, -1, -2)))


def funm(A, func: Callable, disp: bool = True):
    """f(A) for a scalar function f, by the Schur-Parlett recurrence (complex result); (f(A), error
    estimate) when disp is False."""
    A = jnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(A)
    t, z = rsf2csf(t, z)
    n = t.shape[-1]
    dg = jnp.diagonal(t)
    f = jnp.diag(jnp.asarray(func(dg)).astype(t.dtype))
    off = _superdiag_masks(n)
    den = dg[None, :] - dg[:, None]  # t[j, j] - t[i, i]
    minden = jnp.abs(t[0, 0]) if n else jnp.zeros((), jnp.real(t).dtype)
    upper = off > 0
    minden = jnp.minimum(minden, jnp.min(jnp.where(upper, jnp.abs(den), jnp.inf))) if n > 1 else minden

    def step(k, f):
        # with diagonal k still zero, (t f - f t)[i, j] is the Parlett numerator for j = i + k
        s = jnp.matmul(t, f) - jnp.matmul(f, t)
        return jnp.where(off == k, jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s), f)

    f = fori_loop(1, n, step, f) if n > 1 else f
    f = jnp.matmul(jnp.matmul(z, f), jnp.conj(z.T))
    if disp:
        return f
    tol = _real_eps(f)
    minden = jnp.where(minden == 0, tol, minden)
    err = jnp.where(
        jnp.any(jnp.isinf(f)),
        jnp.inf,
        jnp.minimum(1, jnp.maximum(tol, (tol / minden) * jla.norm(jnp.triu(t, 1), 1))),
    )
    return f, err


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """Solve A X + X B = C (Bartels-Stewart through complex Schur forms); all NaN when some eigenvalue
    sum of A and B is within tol of zero (the equation is then singular)."""
    A, B, C = _inexact("solve_sylvester", A, B, C)
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\nB: {B.shape}\nC: {C.shape}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".')
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2])
    A, B, C = (jnp.broadcast_to(x, batch + x.shape[-2:]) for x in (A, B, C))
    r, u = schur(A, output="complex")
    s, v = schur(B, output="complex")
    x, lam = _jitted(_sylvester_impl, r)(r, u, s, v, C)
    if C.dtype.kind != "c":
        x = jnp.real(x)
    bad = jnp.any(lam < tol, axis=(-2, -1))[..., None, None]
    return jnp.where(bad, jnp.full((), math.nan, x.dtype), x)


def _sylvester_impl(r, u, s, v, C):
    """(x, |eigenvalue sums|) for A X + X B = C given the complex Schur forms A = u r u^H, B = v s v^H."""
    m, n = C.shape[-2:]
    H = lambda x: jnp.conj(jnp.swapaxes(x, -1, -2))  # noqa: E731
    f = jnp.matmul(jnp.matmul(H(u), C.astype(r.dtype)), v)
    eye = jnp.eye(m, dtype=r.dtype)
    cols = lax.iota(dtypes.int32, n)
    sdiag = jnp.diagonal(s, axis1=-2, axis2=-1)

    def step(j, y):
        # R y_j + sum_{k <= j} y_k S[k, j] = f_j, with the columns k < j known (the others still zero)
        col_s = jnp.sum(jnp.where(cols == j, s, 0), axis=-1)  # s[..., :, j]
        fj = jnp.sum(jnp.where(cols == j, f, 0), axis=-1)
        rhs = fj - jnp.matmul(y, col_s[..., :, None])[..., 0]
        sjj = jnp.sum(jnp.where(cols == j, sdiag, 0), axis=-1)
        yj = jla.solve(r + sjj[..., None, None] * eye, rhs[..., :, None])
        return jnp.where(cols == j, yj, y)

    y = fori_loop(0, n, step, jnp.zeros(f.shape, f.dtype)) if n else f
    x = jnp.matmul(jnp.matmul(u, y), H(v))
    lam = jnp.diagonal(r, axis1=-2, axis2=-1)[..., :, None] + sdiag[..., None, :]
    return x, jnp.abs(lam)
