"""jax.scipy.sparse.linalg: matrix-free iterative solvers (cg, bicgstab, gmres) on pytrees.

Each solver is a lax.while_loop wrapped in lax.custom_linear_solve, so gradients solve the
(transposed) system again instead of differentiating through the iterations, as in JAX.
Returns (x, info) with info None, like JAX.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from pyjax import lax
from pyjax import numpy as jnp
from pyjax.core.pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten

__all__ = ["bicgstab", "cg", "gmres"]


def _vdot_tree(a, b):
    return sum(jnp.vdot(x, y) for x, y in zip(tree_leaves(a), tree_leaves(b)))


def _add(a, b):
    return tree_map(lambda x, y: x + y, a, b)


def _sub(a, b):
    return tree_map(lambda x, y: x - y, a, b)


def _mul(s, a):
    return tree_map(lambda x: s * x, a)


def _identity(x):
    return x


def _normalize_matvec(f) -> Callable:
    """A callable matvec, or a 2-D array used as one (as JAX accepts both)."""
    if callable(f):
        return f
    a = jnp.asarray(f)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"linear operator must be a square matrix, but has shape: {a.shape}")
    return lambda x: jnp.dot(a, x, precision=lax.Precision.HIGHEST)


def _tolerance(b, tol, atol):
    bs = _vdot_tree(b, b)
    return jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))


def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
    atol2 = _tolerance(b, tol, atol)
    dtype = jnp.result_type(*tree_leaves(b))

    def cond_fun(value):
        _, r, gamma, _, k = value
        rs = gamma if M is _identity else _vdot_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value):
        x, r, gamma, p, k = value
        ap = A(p)
        alpha = gamma / _vdot_tree(p, ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, ap))
        z_ = M(r_)
        gamma_ = _vdot_tree(r_, z_).astype(dtype)
        p_ = _add(z_, _mul(gamma_ / gamma, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    z0 = M(r0)
    gamma0 = _vdot_tree(r0, z0).astype(dtype)
    x, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, z0, 0))
    return x


def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
    atol2 = _tolerance(b, tol, atol)

    def cond_fun(value):
        _, r, *_, k = value
        return (_vdot_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)  # k < 0: breakdown

    def body_fun(value):
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        pick = functools.partial(jnp.where, exit_early)
        x_ = tree_map(pick, _add(x, _mul(alpha_, phat)), _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_map(pick, s, _sub(s, _mul(omega_, t)))
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where(rho_ == 0, -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    one = jnp.ones((), jnp.result_type(*tree_leaves(b)))
    x, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, r0, one, one, one, r0, r0, 0))
    return x


def _flat(tree, dtype):
    """The leaves of tree as one vector of dtype (GMRES works on a single Krylov basis)."""
    return jnp.concatenate([jnp.ravel(x).astype(dtype) for x in tree_leaves(tree)])


def _unflat(v, like):
    """Vector v cut back into the leaves (shapes and dtypes) of the pytree like."""
    leaves, treedef = tree_flatten(like)
    out, i = [], 0
    for x in leaves:
        out.append(v[i : i + x.size].reshape(x.shape).astype(x.dtype))
        i += x.size
    return tree_unflatten(treedef, out)


def _gmres_solve(A, b, x0, *, maxiter, tol, atol, M, restart):
    """Restarted GMRES: each cycle builds an orthonormal Krylov basis of M A (Arnoldi, Gram-Schmidt
    done twice for stability), then takes the least-squares minimizer of the residual over it."""
    dtype = jnp.result_type(*tree_leaves(b))
    n = sum(x.size for x in tree_leaves(b))
    m = min(restart, n)
    op = lambda v: _flat(M(A(_unflat(v, b))), dtype)  # noqa: E731
    bv = _flat(b, dtype)
    thresh = jnp.maximum(tol * jnp.linalg.norm(bv), atol)

    def residual(x):
        return _flat(M(_sub(b, A(_unflat(x, b)))), dtype)

    def arnoldi(j, state):
        V, H = state
        w = op(V[j])
        live = (jnp.arange(m + 1) <= j)[:, None]
        h = jnp.zeros(m + 1, dtype)
        for _ in range(2):
            hj = jnp.where(live[:, 0], jnp.conj(V) @ w, 0)
            w = w - jnp.where(live, V, 0).T @ hj
            h = h + hj
        hn = jnp.linalg.norm(w)
        h = h.at[j + 1].set(hn.astype(dtype))
        V = V.at[j + 1].set(jnp.where(hn > 0, w / jnp.where(hn > 0, hn, 1).astype(dtype), 0))
        return V, H.at[:, j].set(h)

    def cycle(state):
        x, r, k = state
        beta = jnp.linalg.norm(r)
        v0 = r / jnp.where(beta > 0, beta, 1).astype(dtype)
        V = jnp.zeros((m + 1, n), dtype).at[0].set(v0)
        V, H = lax.fori_loop(0, m, arnoldi, (V, jnp.zeros((m + 1, m), dtype)))
        e1 = jnp.zeros(m + 1, dtype).at[0].set(beta.astype(dtype))
        y = jnp.linalg.lstsq(H, e1)[0]
        x = x + V[:m].T @ y
        return x, residual(x), k + 1

    x0v = _flat(x0, dtype)
    state = (x0v, residual(x0v), 0)
    x, *_ = lax.while_loop(lambda s: (jnp.linalg.norm(s[1]) > thresh) & (s[2] < maxiter), cycle, state)
    return _unflat(x, b)


def _isolve(solver, A, b, x0, *, tol, atol, maxiter, M, check_symmetric: bool):
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(math.prod(x.shape) for x in tree_leaves(b))
    A = _normalize_matvec(A)
    M = _identity if M is None else _normalize_matvec(M)
    solve = functools.partial(solver, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    x = lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=check_symmetric)
    return x, None


def cg(A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None, M=None):
    """Conjugate gradient for A x = b with A symmetric positive definite (a matrix or a matvec)."""
    return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=True)


def bicgstab(
    A: Any, b: Any, x0: Any = None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None, M=None
):
    """BiCGSTAB for A x = b with a general (non-symmetric) A (a matrix or a matvec)."""
    return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=False)


def gmres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    tol: float = 1e-5,
    atol: float = 0.0,
    restart: int = 20,
    maxiter: int | None = None,
    M=None,
    solve_method: str = "batched",
):
    """Restarted GMRES for A x = b with a general A (a matrix or a matvec); maxiter counts restarts."""
    if solve_method not in ("incremental", "batched"):
        raise ValueError(f"invalid solve_method {solve_method!r}, must be either 'incremental' or 'batched'")
    solver = functools.partial(_gmres_solve, restart=restart)
    return _isolve(solver, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=False)
