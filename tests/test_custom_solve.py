"""lax.custom_linear_solve, lax.custom_root and jax.scipy.sparse.linalg (cg, bicgstab): values, implicit
gradients (jvp, grad, through closed-over operators), jit and vmap, and bad inputs, against real JAX."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
from tests.jax_compare import check

R = np.random.RandomState(1)
_M = R.randn(4, 4).astype(np.float32)
SPD = (_M @ _M.T + 4 * np.eye(4)).astype(np.float32)
NONSYM = (SPD + np.triu(_M)).astype(np.float32)
B = R.randn(4).astype(np.float32)
B2 = R.randn(2, 4).astype(np.float32)


def _spsolve(jx):
    return jx.scipy.sparse.linalg


SOLVER_CASES = {
    "cg_matrix": lambda jx, jnp, a, b: _spsolve(jx).cg(a, b)[0],
    "cg_matvec": lambda jx, jnp, a, b: _spsolve(jx).cg(lambda x: a @ x, b)[0],
    "cg_x0_maxiter": lambda jx, jnp, a, b: _spsolve(jx).cg(a, b, x0=b, maxiter=2)[0],
    "cg_precond": lambda jx, jnp, a, b: _spsolve(jx).cg(a, b, M=lambda x: x / jnp.diag(a))[0],
    "cg_info": lambda jx, jnp, a, b: _spsolve(jx).cg(a, b)[1] is None,
    "cg_pytree": lambda jx, jnp, a, b: _spsolve(jx).cg(
        lambda t: {"u": a @ t["u"], "v": 3.0 * t["v"]}, {"u": b, "v": b[:2]}
    )[0],
    "cg_grad_matrix_and_b": lambda jx, jnp, a, b: jx.grad(
        lambda a_, b_: jnp.sum(_spsolve(jx).cg(lambda x: a_ @ x, b_)[0] ** 2), argnums=(0, 1)
    )(a, b),
    "cg_grad_maxiter": lambda jx, jnp, a, b: jx.grad(
        lambda b_: jnp.sum(jnp.sin(_spsolve(jx).cg(a, b_, maxiter=2)[0])), argnums=0
    )(b),
    "cg_jvp": lambda jx, jnp, a, b: jx.jvp(lambda b_: _spsolve(jx).cg(a, b_)[0], (b,), (jnp.ones_like(b),)),
    "cg_jvp_matrix": lambda jx, jnp, a, b: jx.jvp(lambda a_: _spsolve(jx).cg(a_, b)[0], (a,), (a * 0.1,)),
    "cg_jit": lambda jx, jnp, a, b: jx.jit(lambda a_, b_: _spsolve(jx).cg(a_, b_)[0])(a, b),
    "cg_vmap": lambda jx, jnp, a, b: jx.vmap(lambda b_: _spsolve(jx).cg(a, b_)[0])(jnp.stack([b, 2 * b + 1])),
    "cg_jit_grad": lambda jx, jnp, a, b: jx.jit(jx.grad(lambda a_: _spsolve(jx).cg(a_, b)[0].sum()))(a),
}


@pytest.mark.parametrize("name", sorted(SOLVER_CASES))
def test_cg(backend, name):
    check(SOLVER_CASES[name], SPD, B, rtol=2e-4, atol=2e-5)


BICG_CASES = {
    "value": lambda jx, jnp, a, b: _spsolve(jx).bicgstab(a, b)[0],
    "matvec": lambda jx, jnp, a, b: _spsolve(jx).bicgstab(lambda x: a @ x, b, tol=1e-6)[0],
    "grad": lambda jx, jnp, a, b: jx.grad(
        lambda a_, b_: jnp.sum(_spsolve(jx).bicgstab(a_, b_)[0] * jnp.arange(4.0)), argnums=(0, 1)
    )(a, b),
    "jit_vmap": lambda jx, jnp, a, b: jx.jit(jx.vmap(lambda b_: _spsolve(jx).bicgstab(a, b_)[0]))(
        jnp.stack([b, b - 1])
    ),
}


@pytest.mark.parametrize("name", sorted(BICG_CASES))
def test_bicgstab(backend, name):
    check(BICG_CASES[name], NONSYM, B, rtol=2e-4, atol=2e-5)


def _direct(jnp, a):
    return lambda matvec, b: jnp.linalg.solve(a, b)


def _direct_t(jnp, a):
    return lambda vecmat, b: jnp.linalg.solve(a.T, b)


LINEAR_CASES = {
    "value": lambda jx, jnp, a, b: jx.lax.custom_linear_solve(lambda x: a @ x, b, _direct(jnp, a), _direct_t(jnp, a)),
    "grad_b": lambda jx, jnp, a, b: jx.grad(
        lambda b_: jnp.sum(jx.lax.custom_linear_solve(lambda x: a @ x, b_, _direct(jnp, a), _direct_t(jnp, a)) ** 3)
    )(b),
    "grad_closed_over_matrix": lambda jx, jnp, a, b: jx.grad(
        lambda a_: jnp.sum(
            jnp.cos(jx.lax.custom_linear_solve(lambda x: a_ @ x, b, _direct(jnp, a_), _direct_t(jnp, a_)))
        )
    )(a),
    "symmetric": lambda jx, jnp, a, b: jx.grad(
        lambda a_, b_: jnp.sum(jx.lax.custom_linear_solve(lambda x: a_ @ x, b_, _direct(jnp, a_), symmetric=True)),
        argnums=(0, 1),
    )(a @ a.T, b),
    "jvp": lambda jx, jnp, a, b: jx.jvp(
        lambda a_, b_: jx.lax.custom_linear_solve(lambda x: a_ @ x, b_, _direct(jnp, a_), _direct_t(jnp, a_)),
        (a, b),
        (a * 0.5, b),
    ),
    "transpose_solve_is_used": lambda jx, jnp, a, b: jx.grad(  # a deliberately wrong transpose_solve shows
        lambda b_: jnp.sum(jx.lax.custom_linear_solve(lambda x: a @ x, b_, _direct(jnp, a), _direct(jnp, a)))
    )(b),
    "vmap_jit": lambda jx, jnp, a, b: jx.jit(
        jx.vmap(lambda b_: jx.lax.custom_linear_solve(lambda x: a @ x, b_, _direct(jnp, a), _direct_t(jnp, a)))
    )(jnp.stack([b, -b])),
    "missing_transpose_solve": lambda jx, jnp, a, b: jx.grad(
        lambda b_: jnp.sum(jx.lax.custom_linear_solve(lambda x: a @ x, b_, _direct(jnp, a)))
    )(b),
    "bad_solve_shape": lambda jx, jnp, a, b: jx.lax.custom_linear_solve(
        lambda x: a @ x, b, lambda mv, b_: b_[:2], _direct_t(jnp, a)
    ),
}


@pytest.mark.parametrize("name", sorted(LINEAR_CASES))
def test_custom_linear_solve(backend, name):
    check(LINEAR_CASES[name], NONSYM, B, rtol=1e-4, atol=1e-5)


def _newton_sqrt(jx, jnp, a):
    def f(x):
        return x * x - a

    def solve(f_, x0):
        return jx.lax.while_loop(lambda x: jnp.abs(f_(x)) > 1e-6, lambda x: x - f_(x) / (2 * x), x0)

    return jx.lax.custom_root(f, jnp.ones_like(a), solve, lambda g, y: y / g(1.0))


def _vector_root(jx, jnp, a, b):
    """Root of x -> a @ x + 0.1 x^3 - b by a fixed number of Newton steps; tangent solve with the Jacobian."""

    def f(x):
        return a @ x + 0.1 * x**3 - b

    def solve(f_, x0):
        return jx.lax.fori_loop(0, 20, lambda i, x: x - jnp.linalg.solve(jx.jacfwd(f_)(x), f_(x)), x0)

    def tangent_solve(g, y):
        return jnp.linalg.solve(jx.jacfwd(g)(y), y)

    return jx.lax.custom_root(f, jnp.zeros_like(b), solve, tangent_solve)


ROOT_CASES = {
    "value": lambda jx, jnp, a, b: _newton_sqrt(jx, jnp, jnp.abs(b) + 1.0),
    "grad": lambda jx, jnp, a, b: jx.grad(lambda s: jnp.sum(_newton_sqrt(jx, jnp, s)))(jnp.abs(b) + 1.0),
    "jvp": lambda jx, jnp, a, b: jx.jvp(lambda s: _newton_sqrt(jx, jnp, s), (jnp.abs(b) + 1.0,), (b,)),
    "jit_vmap_grad": lambda jx, jnp, a, b: jx.jit(jx.vmap(jx.grad(lambda s: _newton_sqrt(jx, jnp, s))))(
        jnp.abs(b) + 1.0
    ),
    "vector": lambda jx, jnp, a, b: _vector_root(jx, jnp, a, b),
    "vector_grad": lambda jx, jnp, a, b: jx.grad(
        lambda a_, b_: jnp.sum(jnp.sin(_vector_root(jx, jnp, a_, b_))), argnums=(0, 1)
    )(a, b),
}


@pytest.mark.parametrize("name", sorted(ROOT_CASES))
def test_custom_root(backend, name):
    check(ROOT_CASES[name], SPD, B, rtol=2e-4, atol=2e-5)


def test_cg_bad_operator():
    for jx in (jax, pyjax):
        with pytest.raises(ValueError):
            jx.scipy.sparse.linalg.cg(np.ones((3, 2), np.float32), np.ones(3, np.float32))


def test_custom_root_bad_solve_output():
    # JAX accepts a solver whose output does not match the initial guess; pyjax rejects it early
    with pytest.raises(ValueError, match="solve"):
        pyjax.lax.custom_root(lambda x: x - 1.0, pyjax.numpy.ones(4), lambda f, x0: x0[:2], lambda g, y: y)
