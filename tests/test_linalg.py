"""Linear algebra against real JAX: lax.linalg (cholesky, triangular_solve with every flag
combination, lu), jnp.linalg (solve, inv, det, slogdet, norms, products) and jax.scipy.linalg;
values, gradients (forward and reverse), jit, vmap, batches and error types."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
import pyjax.scipy.linalg as psl
from pyjax import lax as plax

from oracle import assert_close, check_grads, to_both

RNG = np.random.default_rng(1)
NEEDED_ROUTINES = ("sort", "cumulative", "cholesky", "triangular_solve", "lu")

_ROUTINE_PROBES = {
    "sort": lambda: plax.sort(pjnp.arange(3.0)),
    "cumulative": lambda: pjnp.cumsum(pjnp.arange(3.0)),
    "cholesky": lambda: plax.linalg.cholesky(pjnp.eye(2)),
    "triangular_solve": lambda: plax.linalg.triangular_solve(pjnp.eye(2), pjnp.eye(2)),
    "lu": lambda: plax.linalg.lu(pjnp.eye(2)),
}
_MISSING: dict = {}


@pytest.fixture
def backend(backend):
    """The shared backend fixture, skipping backends that lack a Routine these tests need."""
    if backend not in _MISSING:
        missing = []
        for name in NEEDED_ROUTINES:
            try:
                pyjax.block_until_ready(_ROUTINE_PROBES[name]())
            except NotImplementedError as e:
                if "routine" in str(e):
                    missing.append(name)
        _MISSING[backend] = missing
    if _MISSING[backend]:
        pytest.skip(f"the {backend} backend does not implement the routine(s) {', '.join(_MISSING[backend])} yet")
    return backend


TOL = dict(rtol=2e-4, atol=2e-5)


def _spd(*batch, n=4):
    a = RNG.standard_normal(batch + (n, n)).astype(np.float32)
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n, dtype=np.float32)).astype(np.float32)


def _well(*batch, n=4):
    return (RNG.standard_normal(batch + (n, n)) + 3 * np.eye(n)).astype(np.float32)


def _both(f_p, f_j, *args, **kw):
    p, j = to_both(*args)
    assert_close(f_p(*p), f_j(*j), **{**TOL, **kw})


# --- cholesky ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_cholesky_values_and_grads(backend, batch):
    a = _spd(*batch)
    _both(plax.linalg.cholesky, jax.lax.linalg.cholesky, a)
    _both(pjnp.linalg.cholesky, jnp.linalg.cholesky, a)
    _both(lambda x: pjnp.linalg.cholesky(x, upper=True), lambda x: jnp.linalg.cholesky(x, upper=True), a)
    check_grads(plax.linalg.cholesky, jax.lax.linalg.cholesky, (a,), **TOL)
    check_grads(
        lambda x: plax.linalg.cholesky(x, symmetrize_input=False),
        lambda x: jax.lax.linalg.cholesky(x, symmetrize_input=False),
        (a,),
        **TOL,
    )


def test_cholesky_not_positive_definite_gives_nan(backend):
    a = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
    p = np.asarray(pjnp.linalg.cholesky(pjnp.asarray(a)))
    j = np.asarray(jnp.linalg.cholesky(jnp.asarray(a)))
    assert np.isnan(p).any() and np.isnan(j).any()
    assert np.array_equal(np.isnan(p[np.tril_indices(2)]), np.isnan(j[np.tril_indices(2)]))


def test_cholesky_jit_vmap(backend):
    a = _spd(3)
    _both(pyjax.jit(pjnp.linalg.cholesky), jax.jit(jnp.linalg.cholesky), a)
    _both(pyjax.vmap(pjnp.linalg.cholesky), jax.vmap(jnp.linalg.cholesky), a)
    _both(pyjax.vmap(pjnp.linalg.cholesky, in_axes=2), jax.vmap(jnp.linalg.cholesky, in_axes=2), np.moveaxis(a, 0, 2))
    _both(
        pyjax.jit(pyjax.grad(lambda x: pjnp.sum(pjnp.linalg.cholesky(x) ** 2))),
        jax.jit(jax.grad(lambda x: jnp.sum(jnp.linalg.cholesky(x) ** 2))),
        a[0],
    )
    _both(
        pyjax.vmap(pyjax.grad(lambda x: pjnp.sum(pjnp.linalg.cholesky(x) ** 2))),
        jax.vmap(jax.grad(lambda x: jnp.sum(jnp.linalg.cholesky(x) ** 2))),
        a,
    )


def test_cholesky_errors():
    with pytest.raises(ValueError, match="square"):
        plax.linalg.cholesky(pjnp.ones((2, 3)), symmetrize_input=False)
    with pytest.raises(TypeError, match="rank at least 2"):
        plax.linalg.cholesky(pjnp.ones(3), symmetrize_input=False)
    # With symmetrization JAX fails on the transpose/add first: a TypeError as well.
    with pytest.raises(TypeError):
        pjnp.linalg.cholesky(pjnp.ones((2, 3)))
    with pytest.raises(TypeError):
        jnp.linalg.cholesky(jnp.ones((2, 3)))
    with pytest.raises(ValueError):
        jax.lax.linalg.cholesky(jnp.ones((2, 3)), symmetrize_input=False)


# --- triangular_solve -------------------------------------------------------------------------------

FLAGS = list(itertools.product([False, True], repeat=4))  # left_side, lower, transpose_a, unit_diagonal


def _tri_inputs(left_side, batch=(), m=4, n=3):
    a = RNG.standard_normal(batch + (m, m)).astype(np.float32)
    a = a + np.eye(m, dtype=np.float32) * 4  # well conditioned in both triangles
    b = RNG.standard_normal(batch + ((m, n) if left_side else (n, m))).astype(np.float32)
    return a, b


@pytest.mark.parametrize("left_side,lower,transpose_a,unit_diagonal", FLAGS)
def test_triangular_solve_all_flags(backend, left_side, lower, transpose_a, unit_diagonal):
    kw = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, unit_diagonal=unit_diagonal)
    a, b = _tri_inputs(left_side)

    def fp(x, y):
        return plax.linalg.triangular_solve(x, y, **kw)

    def fj(x, y):
        return jax.lax.linalg.triangular_solve(x, y, **kw)

    _both(fp, fj, a, b)
    check_grads(fp, fj, (a, b), argnums=(0, 1), **TOL)


@pytest.mark.parametrize("left_side,lower", list(itertools.product([False, True], repeat=2)))
def test_triangular_solve_batched_jit_vmap(backend, left_side, lower):
    kw = dict(left_side=left_side, lower=lower, transpose_a=True)
    a, b = _tri_inputs(left_side, batch=(2, 3))

    def fp(x, y):
        return plax.linalg.triangular_solve(x, y, **kw)

    def fj(x, y):
        return jax.lax.linalg.triangular_solve(x, y, **kw)

    _both(fp, fj, a, b)
    check_grads(fp, fj, (a, b), argnums=(0, 1), modes=("rev",), **TOL)
    _both(pyjax.jit(fp), jax.jit(fj), a, b)
    for in_axes in ((0, 0), (None, 0), (0, None), (1, 1), (None, 2)):
        aa = a[0] if in_axes[0] is None else np.moveaxis(a, 0, in_axes[0])
        bb = b[0] if in_axes[1] is None else np.moveaxis(b, 0, in_axes[1])
        _both(pyjax.vmap(fp, in_axes=in_axes), jax.vmap(fj, in_axes=in_axes), aa, bb)
    _both(
        pyjax.vmap(pyjax.grad(lambda x, y: pjnp.sum(fp(x, y) ** 2), argnums=(0, 1)), in_axes=(None, 0)),
        jax.vmap(jax.grad(lambda x, y: jnp.sum(fj(x, y) ** 2), argnums=(0, 1)), in_axes=(None, 0)),
        a[0],
        b,
    )


def test_triangular_solve_errors():
    with pytest.raises(ValueError, match="square"):
        plax.linalg.triangular_solve(pjnp.ones((2, 3)), pjnp.ones((2, 2)))
    with pytest.raises(ValueError, match="Incompatible shapes"):
        plax.linalg.triangular_solve(pjnp.ones((2, 2)), pjnp.ones((3, 3)))
    with pytest.raises(TypeError, match="batch dimensions"):
        plax.linalg.triangular_solve(pjnp.ones((2, 2)), pjnp.ones((3, 2, 2)))


# --- lu -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (3, 5, 5), (5, 3), (3, 5), (2, 4, 3)])
def test_lu_values(backend, shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    _both(plax.linalg.lu, jax.lax.linalg.lu, a)


def test_lu_pivoting_ties_and_singular(backend):
    for a in (
        np.array([[1.0, 2.0], [1.0, 3.0]], np.float32),
        np.zeros((3, 3), np.float32),
        np.array([[0.0, 1.0, 2.0], [0.0, 3.0, 4.0], [0.0, 0.0, 1.0]], np.float32),
    ):
        _both(plax.linalg.lu, jax.lax.linalg.lu, a)


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (5, 3), (3, 5)])
def test_lu_grads(backend, shape):
    a = RNG.standard_normal(shape).astype(np.float32)
    check_grads(lambda x: plax.linalg.lu(x)[0], lambda x: jax.lax.linalg.lu(x)[0], (a,), **TOL)


def test_lu_jit_vmap_and_pivots_to_permutation(backend):
    a = RNG.standard_normal((3, 4, 4)).astype(np.float32)
    _both(pyjax.jit(plax.linalg.lu), jax.jit(jax.lax.linalg.lu), a)
    _both(pyjax.vmap(plax.linalg.lu), jax.vmap(jax.lax.linalg.lu), a)
    _both(pyjax.vmap(plax.linalg.lu, in_axes=1), jax.vmap(jax.lax.linalg.lu, in_axes=1), a)
    piv = np.array([[2, 2, 3], [0, 1, 2]], np.int32)
    _both(
        lambda p: plax.linalg.lu_pivots_to_permutation(p, 5),
        lambda p: jax.lax.linalg.lu_pivots_to_permutation(p, 5),
        piv,
    )


# --- jnp.linalg solve / inv / det / slogdet ---------------------------------------------------------------


@pytest.mark.parametrize(
    "ashape,bshape",
    [
        ((4, 4), (4,)),
        ((4, 4), (4, 2)),
        ((3, 4, 4), (4,)),
        ((3, 4, 4), (3, 4, 2)),
        ((3, 4, 4), (4, 2)),
        ((4, 4), (2, 4, 1)),
    ],
)
def test_solve(backend, ashape, bshape):
    a = _well(*ashape[:-2])
    b = RNG.standard_normal(bshape).astype(np.float32)
    _both(pjnp.linalg.solve, jnp.linalg.solve, a, b)
    check_grads(pjnp.linalg.solve, jnp.linalg.solve, (a, b), argnums=(0, 1), **TOL)


def test_solve_errors_and_int_promotion(backend):
    with pytest.raises(ValueError):
        pjnp.linalg.solve(pjnp.ones((3, 2, 2)), pjnp.ones((3, 2)))
    with pytest.raises(ValueError):
        pjnp.linalg.solve(pjnp.ones((2, 3)), pjnp.ones(2))
    _both(pjnp.linalg.solve, jnp.linalg.solve, np.array([[2, 1], [1, 3]], np.int32), np.array([1, 2], np.int32))


@pytest.mark.parametrize("n", [1, 3, 5])
def test_inv_det_slogdet(backend, n):
    a = _well(2, n=n)
    _both(pjnp.linalg.inv, jnp.linalg.inv, a)
    _both(pjnp.linalg.det, jnp.linalg.det, a)
    _both(pjnp.linalg.slogdet, jnp.linalg.slogdet, a)
    neg = a.copy()
    neg[:, 0] *= -1
    _both(pjnp.linalg.slogdet, jnp.linalg.slogdet, neg)
    check_grads(pjnp.linalg.inv, jnp.linalg.inv, (a,), modes=("rev",), **TOL)
    check_grads(pjnp.linalg.det, jnp.linalg.det, (a,), rtol=1e-3, atol=1e-3)
    check_grads(lambda x: pjnp.linalg.slogdet(x)[1], lambda x: jnp.linalg.slogdet(x)[1], (a,), **TOL)


def test_det_slogdet_singular(backend):
    z = np.zeros((4, 4), np.float32)
    _both(pjnp.linalg.slogdet, jnp.linalg.slogdet, z)
    _both(pjnp.linalg.det, jnp.linalg.det, z)
    s = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    check_grads(pjnp.linalg.det, jnp.linalg.det, (s,))  # closed form 2x2 keeps the cofactor gradient


def test_linalg_jit_vmap(backend):
    a = _well(3)
    b = RNG.standard_normal((3, 4)).astype(np.float32)
    _both(pyjax.jit(pjnp.linalg.solve), jax.jit(jnp.linalg.solve), a, b[..., None])
    _both(pyjax.vmap(pjnp.linalg.solve), jax.vmap(jnp.linalg.solve), a, b)
    _both(pyjax.vmap(pjnp.linalg.solve, in_axes=(None, 0)), jax.vmap(jnp.linalg.solve, in_axes=(None, 0)), a[0], b)
    _both(pyjax.vmap(pjnp.linalg.det), jax.vmap(jnp.linalg.det), _well(3, n=5))
    _both(pyjax.jit(pjnp.linalg.inv), jax.jit(jnp.linalg.inv), a)
    _both(
        pyjax.jit(pyjax.grad(lambda x: pjnp.linalg.slogdet(x)[1])),
        jax.jit(jax.grad(lambda x: jnp.linalg.slogdet(x)[1])),
        a[0],
    )
    _both(
        pyjax.hessian(lambda x: pjnp.linalg.slogdet(x)[1]),
        jax.hessian(lambda x: jnp.linalg.slogdet(x)[1]),
        _well(n=3),
        rtol=2e-3,
        atol=2e-4,
    )


def test_linalg_shape_errors():
    with pytest.raises(ValueError, match="inv"):
        pjnp.linalg.inv(pjnp.ones((2, 3)))
    with pytest.raises(ValueError, match="det"):
        pjnp.linalg.det(pjnp.ones((2, 3)))
    with pytest.raises(ValueError):
        pjnp.linalg.slogdet(pjnp.ones(3))


# --- norms and products --------------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", [None, 1, 2, 3, 0, 0.5, np.inf, -np.inf, -1])
def test_vector_norm(backend, ord):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    for axis, keepdims in ((0, False), (-1, True)):
        if True:
            _both(
                lambda a: pjnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims),
                lambda a: jnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims),
                x,
            )
    _both(lambda a: pjnp.linalg.norm(a, ord=ord), lambda a: jnp.linalg.norm(a, ord=ord), x[0])


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf])
def test_matrix_norm(backend, ord):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    for axis, keepdims in (((1, 2), False), ((2, 0), True)):
        if True:
            _both(
                lambda a: pjnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims),
                lambda a: jnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims),
                x,
            )
    _both(lambda a: pjnp.linalg.norm(a, ord=ord), lambda a: jnp.linalg.norm(a, ord=ord), x[0])
    _both(
        lambda a: pjnp.linalg.matrix_norm(a, ord=ord or "fro"), lambda a: jnp.linalg.matrix_norm(a, ord=ord or "fro"), x
    )


def test_norm_misc(backend):
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    _both(pjnp.linalg.norm, jnp.linalg.norm, x)
    _both(lambda a: pjnp.linalg.norm(a, keepdims=True), lambda a: jnp.linalg.norm(a, keepdims=True), x)
    _both(lambda a: pjnp.linalg.vector_norm(a, ord=1), lambda a: jnp.linalg.vector_norm(a, ord=1), x)
    _both(lambda a: pjnp.linalg.vector_norm(a, axis=(0, 2)), lambda a: jnp.linalg.vector_norm(a, axis=(0, 2)), x)
    _both(pjnp.linalg.norm, jnp.linalg.norm, np.arange(5, dtype=np.int32))
    check_grads(pjnp.linalg.norm, jnp.linalg.norm, (x,))
    check_grads(
        lambda a: pjnp.linalg.norm(a, ord=1, axis=(1, 2)), lambda a: jnp.linalg.norm(a, ord=1, axis=(1, 2)), (x,)
    )
    pg = pyjax.grad(pjnp.linalg.norm)(pjnp.zeros(3))
    jg = jax.grad(jnp.linalg.norm)(jnp.zeros(3))
    assert_close(pg, jg)  # NaN at zero, like JAX
    with pytest.raises(ValueError, match="Invalid order"):
        pjnp.linalg.norm(pjnp.ones((2, 2)), 3)
    with pytest.raises(ValueError, match="vector norm"):
        pjnp.linalg.norm(pjnp.ones((2, 2)), "fro", axis=1)
    with pytest.raises(ValueError, match="Improper number of axes"):
        pjnp.linalg.norm(pjnp.ones((2, 2, 2)), "fro")
    _both(lambda a: pjnp.linalg.norm(a, 2), lambda a: jnp.linalg.norm(a, 2), np.ones((2, 2), np.float32))


def test_matrix_power_multi_dot(backend):
    a = _well(2, n=3) / 3
    for n in (0, 1, 2, 3, 7, -1, -2):
        _both(lambda x: pjnp.linalg.matrix_power(x, n), lambda x: jnp.linalg.matrix_power(x, n), a)
    _both(
        lambda x: pjnp.linalg.matrix_power(x, 5),
        lambda x: jnp.linalg.matrix_power(x, 5),
        np.array([[1, 1], [1, 0]], np.int32),
    )
    with pytest.raises(TypeError, match="integer"):
        pjnp.linalg.matrix_power(pjnp.eye(2), 1.5)
    mats = [RNG.standard_normal(s).astype(np.float32) for s in ((3,), (3, 10), (10, 2), (2, 6), (6,))]
    _both(lambda *m: pjnp.linalg.multi_dot(m), lambda *m: jnp.linalg.multi_dot(m), *mats)
    _both(lambda *m: pjnp.linalg.multi_dot(m), lambda *m: jnp.linalg.multi_dot(m), *mats[1:4])
    check_grads(lambda *m: pjnp.linalg.multi_dot(m), lambda *m: jnp.linalg.multi_dot(m), mats[1:4], argnums=(0, 1, 2))


def test_product_passthroughs(backend):
    x = RNG.standard_normal((2, 3, 3)).astype(np.float32)
    v = RNG.standard_normal(3).astype(np.float32)
    _both(pjnp.linalg.matmul, jnp.linalg.matmul, x, x)
    _both(lambda a, b: pjnp.linalg.tensordot(a, b, axes=1), lambda a, b: jnp.linalg.tensordot(a, b, axes=1), x, v)
    _both(pjnp.linalg.outer, jnp.linalg.outer, v, v[:2])
    _both(pjnp.linalg.vecdot, jnp.linalg.vecdot, x, v)
    _both(lambda a, b: pjnp.linalg.vecdot(a, b, axis=0), lambda a, b: jnp.linalg.vecdot(a, b, axis=0), x[0], x[1])
    _both(pjnp.vecdot, jnp.vecdot, x, v)
    _both(pjnp.linalg.matrix_transpose, jnp.linalg.matrix_transpose, x)
    _both(pjnp.linalg.trace, jnp.linalg.trace, x)
    _both(lambda a: pjnp.linalg.trace(a, offset=1), lambda a: jnp.linalg.trace(a, offset=1), x)
    _both(lambda a: pjnp.linalg.diagonal(a, offset=-1), lambda a: jnp.linalg.diagonal(a, offset=-1), x)
    _both(pjnp.linalg.cross, jnp.linalg.cross, x, x[::-1])
    _both(pjnp.linalg.tensorinv, jnp.linalg.tensorinv, _well(n=6).reshape(2, 3, 6))
    _both(
        pjnp.linalg.tensorsolve,
        jnp.linalg.tensorsolve,
        _well(n=6).reshape(2, 3, 6),
        RNG.standard_normal((2, 3)).astype(np.float32),
    )
    with pytest.raises(ValueError, match="one-dimensional"):
        pjnp.linalg.outer(pjnp.eye(2), pjnp.ones(2))


# --- jax.scipy.linalg -------------------------------------------------------------------------------------


@pytest.mark.parametrize("trans", [0, "T", 2])
@pytest.mark.parametrize("lower", [False, True])
def test_scipy_solve_triangular(backend, trans, lower):
    a, b = _tri_inputs(True, batch=(2,))
    for bb in (b, b[..., 0]):
        _both(
            lambda x, y: psl.solve_triangular(x, y, trans=trans, lower=lower),
            lambda x, y: jsl.solve_triangular(x, y, trans=trans, lower=lower),
            a,
            bb,
        )
    check_grads(
        lambda x, y: psl.solve_triangular(x, y, trans=trans, lower=lower, unit_diagonal=True),
        lambda x, y: jsl.solve_triangular(x, y, trans=trans, lower=lower, unit_diagonal=True),
        (a, b),
        argnums=(0, 1),
        modes=("rev",),
        **TOL,
    )
    with pytest.raises(ValueError, match="trans"):
        psl.solve_triangular(pjnp.eye(2), pjnp.ones(2), trans=3)


@pytest.mark.parametrize("lower", [False, True])
def test_scipy_cholesky_family(backend, lower):
    a = _spd(2)
    b = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    _both(lambda x: psl.cholesky(x, lower=lower), lambda x: jsl.cholesky(x, lower=lower), a)
    _both(lambda x: psl.cho_factor(x, lower=lower), lambda x: jsl.cho_factor(x, lower=lower), a)
    for bb in (b, b[..., 0]):
        _both(
            lambda x, y: psl.cho_solve(psl.cho_factor(x, lower=lower), y),
            lambda x, y: jsl.cho_solve(jsl.cho_factor(x, lower=lower), y),
            a,
            bb,
        )
    check_grads(
        lambda x, y: psl.cho_solve(psl.cho_factor(x, lower=lower), y),
        lambda x, y: jsl.cho_solve(jsl.cho_factor(x, lower=lower), y),
        (a, b),
        argnums=(0, 1),
        modes=("rev",),
        **TOL,
    )
    _both(lambda x, y: psl.solve(x, y, assume_a="pos"), lambda x, y: jsl.solve(x, y, assume_a="pos"), a, b)


def test_scipy_lu_family(backend):
    a = _well(2)
    b = RNG.standard_normal((2, 4, 3)).astype(np.float32)
    _both(psl.lu_factor, jsl.lu_factor, a)
    for trans in (0, 1):
        for bb in (b, b[..., 0]):
            _both(
                lambda x, y: psl.lu_solve(psl.lu_factor(x), y, trans=trans),
                lambda x, y: jsl.lu_solve(jsl.lu_factor(x), y, trans=trans),
                a,
                bb,
            )
    for shape in ((4, 4), (3, 5), (5, 3)):
        x = RNG.standard_normal(shape).astype(np.float32)
        _both(psl.lu, jsl.lu, x)
        _both(lambda y: psl.lu(y, permute_l=True), lambda y: jsl.lu(y, permute_l=True), x)
    _both(psl.solve, jsl.solve, a, b)
    _both(psl.det, jsl.det, a)
    _both(psl.inv, jsl.inv, a)
    check_grads(lambda x: psl.lu(x)[1], lambda x: jsl.lu(x)[1], (a[0],), **TOL)


# --- the pure-Python cpu path (no numpy, as under Pyodide offline) ------------------------------------------

_PURE_CASES = {
    "sort": "jax.lax.sort((jnp.array([2.0, -0.0, jnp.nan, 0.0, 1.0]), jnp.arange(5)), num_keys=1)",
    "argsort_desc": "jnp.argsort(jnp.array([[1.0, 0.0, 1.0], [3.0, 3.0, -1.0]]), axis=1, descending=True)",
    "top_k": "jax.lax.top_k(jnp.array([1.0, 5.0, 3.0, 5.0]), 3)",
    "sort_grad": "jax.grad(lambda x: jnp.sum(jnp.sort(x)[:2] * jnp.array([1.0, 2.0])))(jnp.array([3.0, 1.0, 2.0]))",
    "searchsorted": "jnp.searchsorted(jnp.array([1.0, 2.0, 2.0, 4.0]), jnp.array([2.0, 3.0, 5.0]), side='right')",
    "unique": "jnp.unique(jnp.array([3, 1, 3, 2]), size=4, return_counts=True, return_inverse=True)",
    "quantile": "jnp.quantile(jnp.array([[3.0, 1.0, 2.0], [0.5, 4.0, 9.0]]), 0.4, axis=1)",
    "cholesky": "jnp.linalg.cholesky(jnp.array([[4.0, 2.0], [2.0, 3.0]]))",
    "tri_solve": "[jax.lax.linalg.triangular_solve(jnp.array([[2.0, 1.0], [0.5, 3.0]]), jnp.array([[1.0, 2.0]]), "
    "left_side=ls, lower=lo, transpose_a=tr, unit_diagonal=ud) for ls in (False,) for lo in (False, True) "
    "for tr in (False, True) for ud in (False, True)]",
    "lu": "jax.lax.linalg.lu(jnp.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0], [5.0, 6.0, 2.0]]))",
    "lu_rect": "jax.lax.linalg.lu(jnp.array([[1.0, 2.0, 0.0], [3.0, 4.0, 1.0]]))",
    "solve": "jnp.linalg.solve(jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]), jnp.arange(3.0))",
    "solve_grad": "jax.grad(lambda a: jnp.sum(jnp.linalg.solve(a, jnp.ones(3))))"
    "(jnp.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]]))",
    "inv_det": "(lambda a: [jnp.linalg.inv(a), jnp.linalg.det(a), jnp.linalg.slogdet(a)])"
    "(jnp.array([[4.0, 1.0, 0.0, 1.0], [1.0, 3.0, 1.0, 0.0], [0.0, 1.0, 2.0, 0.0], [2.0, 0.0, 0.0, 5.0]]))",
    "chol_grad": "jax.grad(lambda a: jnp.sum(jnp.linalg.cholesky(a) ** 2))(jnp.array([[4.0, 2.0], [2.0, 3.0]]))",
    "einsum": "jnp.einsum('ij,jk,ii->k', jnp.arange(4.0).reshape(2, 2), jnp.ones((2, 3)), jnp.eye(2))",
}

_PURE_CHILD = """
import json, sys
for blocked in ("numpy", "ml_dtypes", "jax", "jaxlib", "scipy"):
    sys.modules[blocked] = None
sys.path.insert(0, ROOT)
import pyjax as jax
import pyjax.numpy as jnp
import pyjax.lax.linalg

out = {"numpy": jax.devices()[0].backend.use_numpy}
for name, src in CASES.items():
    try:
        leaves = jax.tree_util.tree_leaves(eval(src))
        out[name] = [{"value": l.tolist(), "dtype": l.dtype.name} for l in leaves]
    except Exception as e:
        out[name] = {"error": f"{type(e).__name__}: {e}"}
print("RESULT" + json.dumps(out))
"""


def test_pure_python_backend_matches_jax():
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = f"ROOT = {root!r}\nCASES = {_PURE_CASES!r}\n" + _PURE_CHILD
    env = dict(os.environ, PYJAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))[6:])
    assert got.pop("numpy") is False
    for name, src in _PURE_CASES.items():
        g = got[name]
        assert "error" not in g, f"{name}: {g}"
        expected = jax.tree_util.tree_leaves(eval(src, {"jax": jax, "jnp": jnp}))
        assert len(g) == len(expected), name
        for leaf, e in zip(g, expected):
            assert leaf["dtype"] == e.dtype.name, name
            np.testing.assert_allclose(
                np.asarray(leaf["value"], np.float64),
                np.asarray(e, np.float64),
                rtol=1e-4,
                atol=1e-5,
                equal_nan=True,
                err_msg=name,
            )


def test_multi_output_containers_as_jax():
    """lax functions with several outputs return JAX's container (a list for top_k, lu, schur; a tuple for
    qr, eigh, svd): code that concatenates or compares the result sees the same type."""
    a = np.array([[4.0, 1.0], [1.0, 3.0]], np.float32)
    fns = {
        "top_k": lambda lax, x: lax.top_k(x, 1),
        "lu": lambda lax, x: lax.linalg.lu(x),
        "lu_complex": lambda lax, x: lax.linalg.lu(x.astype(np.complex64)),
        "schur": lambda lax, x: lax.linalg.schur(x),
        "schur_no_vectors": lambda lax, x: lax.linalg.schur(x, compute_schur_vectors=False),
        "qr": lambda lax, x: lax.linalg.qr(x),
        "eigh": lambda lax, x: lax.linalg.eigh(x),
        "svd": lambda lax, x: lax.linalg.svd(x),
        "sort_key_val": lambda lax, x: lax.sort_key_val(x, x),
    }
    for name, fn in fns.items():
        got, want = fn(plax, pjnp.asarray(a)), fn(jax.lax, jnp.asarray(a))
        assert (type(got), len(got)) == (type(want), len(want)), name
