"""pyjax.experimental.sparse against jax.experimental.sparse: the same program on both, BCOO/BCSR results
compared buffer by buffer (data, indices, indptr: values, dtypes) with their layout (shape, nse, n_batch,
n_dense, sorted/unique flags); dense results as arrays. Conversions and matmul on every backend."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import pyjax
import pyjax.numpy as pjnp
from pyjax.experimental import sparse as psparse
from tests.jax_compare import assert_close, to_lib

RNG = np.random.default_rng(0)


def _rand(shape, density=0.4):
    x = RNG.standard_normal(shape).astype(np.float32)
    return x * (RNG.random(shape) < density)


X2 = _rand((4, 5))
X3 = _rand((3, 4, 5))
XD = _rand((4, 3, 2))
V5 = RNG.standard_normal(5).astype(np.float32)
V4 = RNG.standard_normal(4).astype(np.float32)
M53 = RNG.standard_normal((5, 3)).astype(np.float32)
DUP = (np.float32([1, 2, 3, 0, 5]), np.int32([[0, 1], [2, 2], [0, 1], [1, 1], [3, 0]]))


def _plain(x, layout=True):
    """A sparse array as a tuple of its buffers and layout (comparable across the two libraries)."""
    if isinstance(x, (jsparse.JAXSparse, psparse.JAXSparse)):
        bufs = x.tree_flatten()[0]
        if not layout:
            return (type(x).__name__, tuple(x.shape), x.todense())
        if type(x).__name__ in ("COO", "CSR", "CSC"):
            return (type(x).__name__, tuple(x.shape), *bufs)
        meta = (type(x).__name__, tuple(x.shape), x.n_batch, x.n_dense)
        return (*meta, x.nse, bool(x.indices_sorted), bool(x.unique_indices), *bufs)
    if isinstance(x, tuple):
        return tuple(_plain(v, layout) for v in x)
    return x


def compare(f, *args, layout=True):
    """f(sparse, jnp, lax, *args) on JAX and on pyjax; layout=False compares sparse results densely."""
    jx = f(jsparse, jjnp, jax.lax, *to_lib(args, jjnp))
    pj = f(psparse, pjnp, pyjax.lax, *to_lib(args, pjnp))
    assert_close(_plain(pj, layout), _plain(jx, layout))


LAYOUTS = [((4, 5), 0, 0, None), ((3, 4, 5), 1, 0, None), ((4, 3, 2), 0, 1, 9), ((3, 4, 5), 2, 0, 4)]


@pytest.mark.parametrize("shape, n_batch, n_dense, nse", LAYOUTS)
def test_fromdense_todense_matmul(backend, shape, n_batch, n_dense, nse):
    x = {X2.shape: X2, X3.shape: X3, XD.shape: XD}[shape]
    compare(lambda sp, jnp, lax, x: sp.BCOO.fromdense(x, nse=nse, n_batch=n_batch, n_dense=n_dense), x)
    compare(lambda sp, jnp, lax, x: sp.BCOO.fromdense(x, n_batch=n_batch, n_dense=n_dense).todense(), x)
    if n_dense == 0:
        compare(lambda sp, jnp, lax, x, v: sp.BCOO.fromdense(x, n_batch=n_batch) @ v, x, V5)


def test_bcsr_and_grad_on_backends(backend):
    compare(lambda sp, jnp, lax, x: sp.BCSR.fromdense(x), X2)
    compare(lambda sp, jnp, lax, x, v: (sp.BCSR.fromdense(x) @ v, sp.BCSR.fromdense(x).todense()), X2, V5)
    compare(lambda sp, jnp, lax, x, v: sp.grad(lambda m: jnp.sum((m @ v) ** 2))(sp.BCOO.fromdense(x)), X2, V5)


# (name, f(sp, jnp, lax, *args), args, compare layouts)
OPS = [
    ("transpose", lambda sp, jnp, lax, x: sp.BCOO.fromdense(x).T, (X2,), True),
    ("transpose_batched", lambda sp, jnp, lax, x: sp.BCOO.fromdense(x, n_batch=1).transpose((0, 2, 1)), (X3,), True),
    ("sum_axes", lambda sp, jnp, lax, x: tuple(sp.BCOO.fromdense(x, n_batch=1).sum(a) for a in range(3)), (X3,), True),
    ("sum_all", lambda sp, jnp, lax, x: sp.BCOO.fromdense(x, n_dense=1).sum(), (XD,), True),
    (
        "reduce_sum",
        lambda sp, jnp, lax, x: sp.bcoo_reduce_sum(sp.BCOO.fromdense(x, n_dense=1), axes=(0, 2)),
        (XD,),
        True,
    ),
    (
        "neg_mul_div_pow",
        lambda sp, jnp, lax, x: (lambda m: (-m, m * 2, 3 * m, m / 2, m**2))(sp.BCOO.fromdense(x)),
        (X2,),
        True,
    ),
    (
        "mul_dense",
        lambda sp, jnp, lax, x, v: (sp.BCOO.fromdense(x) * x, sp.bcoo_multiply_dense(sp.BCOO.fromdense(x), v)),
        (X2, V5),
        True,
    ),
    ("mul_sparse", lambda sp, jnp, lax, x: sp.BCOO.fromdense(x) * sp.BCOO.fromdense(x), (X2,), False),
    (
        "add_sub",
        lambda sp, jnp, lax, x: (lambda m, n: (m + n, m - n, m + m))(sp.BCOO.fromdense(x), sp.BCOO.fromdense(x.T).T),
        (X2,),
        True,
    ),
    ("add_dense", lambda sp, jnp, lax, x: sp.BCOO.fromdense(x) + x, (X2,), True),
    (
        "matmul",
        lambda sp, jnp, lax, x, v, w, m: (sp.BCOO.fromdense(x) @ v, w @ sp.BCOO.fromdense(x), sp.BCOO.fromdense(x) @ m),
        (X2, V5, V4, M53),
        True,
    ),
    ("matmul_batched", lambda sp, jnp, lax, x, v: sp.BCOO.fromdense(x, n_batch=1) @ v, (X3, V5), True),
    ("sparse_sparse", lambda sp, jnp, lax, x: (sp.BCOO.fromdense(x) @ sp.BCOO.fromdense(x).T).todense(), (X2,), True),
    (
        "dot_general",
        lambda sp, jnp, lax, x, m: sp.bcoo_dot_general(
            sp.BCOO.fromdense(x, n_batch=1), m, dimension_numbers=(((2,), (1,)), ((0,), (0,)))
        ),
        (X3, RNG.standard_normal((3, 5, 2)).astype(np.float32)),
        True,
    ),
    (
        "dot_general_dense_dims",
        lambda sp, jnp, lax, x, m: sp.bcoo_dot_general(
            sp.BCOO.fromdense(x, n_dense=1), m, dimension_numbers=(((1,), (0,)), ((), ()))
        ),
        (XD, RNG.standard_normal((3, 2)).astype(np.float32)),
        True,
    ),
    (
        "dot_general_sampled",
        lambda sp, jnp, lax, x, m: sp.bcoo_dot_general_sampled(
            x, m, sp.BCOO.fromdense(x @ m).indices, dimension_numbers=(((1,), (0,)), ((), ()))
        ),
        (X2, M53),
        True,
    ),
    (
        "sparsify",
        lambda sp, jnp, lax, x, v: sp.sparsify(lambda m, v: 2 * jnp.dot(jnp.log1p(m.T), v[:4]) + 1)(
            sp.BCOO.fromdense(x), v
        ),
        (X2, V5),
        True,
    ),
    (
        "sparsify_sum",
        lambda sp, jnp, lax, x: sp.sparsify(lambda m: jnp.sum(jnp.abs(m) * 3, axis=1))(sp.BCOO.fromdense(x)),
        (X2,),
        True,
    ),
    (
        "sparsify_loops",
        lambda sp, jnp, lax, x, v: sp.sparsify(
            lambda m, v: (
                lax.fori_loop(0, 3, lambda i, c: m.T @ (m @ c) / 10 + c, v),
                lax.cond(v[0] > 0, lambda a: a * 2, lambda a: a * 3, m),
            )
        )(sp.BCOO.fromdense(x), v),
        (X2, V5),
        True,
    ),
    (
        "sparsify_todense",
        lambda sp, jnp, lax, x: sp.sparsify(lambda m: (sp.todense(m * 2) + 1, sp.todense(x)))(sp.BCOO.fromdense(x)),
        (X2,),
        True,
    ),
    (
        "gather_dynamic_slice",
        lambda sp, jnp, lax, x: (
            lambda m: (
                m[jnp.array([0, 2, -1])],
                m[jnp.array([[0], [3]]), jnp.array([1, 2])],
                m[:, jnp.array([4, 1])],
                lax_jit(sp)(lambda m, i: m[1:3, i])(m, 3),
            )
        )(sp.BCOO.fromdense(x, n_batch=1)),
        (X3,),
        False,
    ),
    (
        "legacy_coo_csr_csc",
        lambda sp, jnp, lax, x, v, w: tuple(
            (m, m.todense(), m @ v, m.T @ w, m @ x.T)
            for m in (
                sp.COO.fromdense(x),
                sp.CSR.fromdense(x, nse=12),
                sp.CSC.fromdense(x),
                sp.eye(4, 5, k=1, sparse_format="csr"),
            )
        ),
        (X2, V5, V4),
        True,
    ),
    (
        "complex",
        lambda sp, jnp, lax, x, v: (lambda m, n: (m * 2, m * (1 + 2j), -m, m + n, m * m, m @ v))(
            sp.BCOO.fromdense(x), sp.BCOO.fromdense(x.T).T
        ),
        (X2 * (1 - 0.5j), V5 + 1j),
        True,
    ),
    (
        "bcoo_gather",
        lambda sp, jnp, lax, x: (
            sp.bcoo_gather(
                sp.BCOO.fromdense(x),
                jnp.array([[2], [0], [3]]),
                lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)),
                (1, 5),
            ),
            sp.bcoo_gather(
                sp.BCOO.fromdense(x),
                jnp.array([[2, 1], [0, 3], [3, 3]]),
                lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0, 1), start_index_map=(0, 1)),
                (1, 1),
            ),
        ),
        (X2,),
        False,
    ),
    (
        "reshape",
        lambda sp, jnp, lax, x, y: (
            sp.BCOO.fromdense(x).reshape(2, 10),
            sp.BCOO.fromdense(y, n_batch=1).reshape(3, 20),
        ),
        (X3[0], X3),
        True,
    ),
    (
        "expand_dims",
        lambda sp, jnp, lax, x: sp.sparsify(lambda m: jnp.expand_dims(m, 0))(sp.BCOO.fromdense(x)),
        (X2,),
        False,
    ),
    (
        "getitem_slice",
        lambda sp, jnp, lax, x: (lambda m: (m[1], m[1:3, ::2], m[::-1]))(sp.BCOO.fromdense(x)),
        (X2,),
        True,
    ),
    (
        "concatenate",
        lambda sp, jnp, lax, x: tuple(
            sp.bcoo_concatenate([sp.BCOO.fromdense(x, n_batch=1)] * 2, dimension=d) for d in (0, 2)
        ),
        (X3,),
        True,
    ),
    (
        "broadcast_in_dim",
        lambda sp, jnp, lax, x: sp.bcoo_broadcast_in_dim(
            sp.BCOO.fromdense(x), shape=(2, 4, 5), broadcast_dimensions=(1, 2)
        ),
        (X2,),
        True,
    ),
    (
        "rev_squeeze_slice",
        lambda sp, jnp, lax, x: (
            lambda m: (
                sp.bcoo_rev(m, (0, 1)),
                sp.bcoo_squeeze(m[None], dimensions=(0,)),
                sp.bcoo_slice(m, start_indices=(1, 0), limit_indices=(4, 5), strides=(2, 2)),
            )
        )(sp.BCOO.fromdense(x)),
        (X2,),
        False,
    ),
    (
        "sort_sum_duplicates",
        lambda sp, jnp, lax, d, i: (
            lambda m: (
                m.sort_indices(),
                m.sum_duplicates(),
                m.sum_duplicates(remove_zeros=False),
                sp.bcoo_sum_duplicates(m, nse=6),
            )
        )(sp.BCOO((d, i), shape=(4, 3))),
        DUP,
        True,
    ),
    (
        "extract",
        lambda sp, jnp, lax, d, i, x: (lambda m: (sp.bcoo_extract(m, x), sp.bcoo_extract(m, x, assume_unique=False)))(
            sp.BCOO((d, i), shape=(4, 3))
        ),
        (*DUP, X2[:, :3] + 1),
        True,
    ),
    ("abs_duplicates", lambda sp, jnp, lax, d, i: abs(sp.BCOO((d, -i + 3), shape=(4, 4))), DUP, True),
    (
        "update_layout",
        lambda sp, jnp, lax, x: (
            sp.BCOO.fromdense(x, n_batch=2).update_layout(n_batch=0),
            sp.BCOO.fromdense(x, n_dense=1).update_layout(n_dense=0),
        ),
        (X3,),
        True,
    ),
    ("astype", lambda sp, jnp, lax, x: sp.BCOO.fromdense(x).astype("float16"), (X2,), True),
    ("eye_empty", lambda sp, jnp, lax: (sp.eye(4, 5, k=1), sp.eye(4, k=-2), sp.empty((3, 4), nse=2)), (), True),
    (
        "bcsr_batched",
        lambda sp, jnp, lax, x: (lambda m: (m, m.todense(), m.to_bcoo()))(sp.BCSR.fromdense(x, n_batch=1, nse=7)),
        (X3,),
        True,
    ),
    (
        "random_bcoo",
        lambda sp, jnp, lax: (
            sp.random_bcoo(jax.random.key(0) if sp is jsparse else pyjax.random.key(0), (5, 6), nse=0.3),
            sp.random_bcoo(
                jax.random.key(1) if sp is jsparse else pyjax.random.key(1),
                (2, 5, 6),
                nse=4,
                n_batch=1,
                sorted_indices=True,
            ),
        ),
        (),
        True,
    ),
]


@pytest.mark.parametrize("name, f, args, layout", OPS, ids=[o[0] for o in OPS])
def test_ops_match_jax(name, f, args, layout):
    compare(f, *args, layout=layout)


def test_transformations():
    """jit, vmap over BCOO batch dimensions, sparse.grad/value_and_grad/jacfwd/jacrev, grad through dense."""
    compare(
        lambda sp, jnp, lax, x, v: lax_jit(sp)(lambda m, v: (m @ v, m.todense(), m * 2))(sp.BCOO.fromdense(x), v),
        X2,
        V5,
    )
    compare(lambda sp, jnp, lax, x: lax_jit(sp)(lambda x: sp.BCOO.fromdense(x, nse=8))(x), X2)
    compare(
        lambda sp, jnp, lax, x, v: lax_vmap(sp)(lambda m: (m @ v, m.todense(), m * 2))(sp.BCOO.fromdense(x, n_batch=1)),
        X3,
        V5,
    )
    compare(lambda sp, jnp, lax, x: lax_vmap(sp)(lambda x: sp.BCOO.fromdense(x, nse=6))(x), X3)
    compare(
        lambda sp, jnp, lax, x: lax_vmap(sp)(lambda m: m * 2, in_axes=1, out_axes=1)(sp.BCOO.fromdense(x, n_batch=2)),
        X3,
    )
    compare(
        lambda sp, jnp, lax, x, v: (
            sp.grad(lambda m, v: jnp.sum((v @ m.T) ** 2), argnums=(0, 1))(sp.BCOO.fromdense(x), v),
            sp.value_and_grad(lambda m: (m.sum(0) ** 2).sum())(sp.BCOO.fromdense(x)),
            sp.jacfwd(lambda m: m @ v)(sp.BCOO.fromdense(x)),
            sp.jacrev(lambda m: m @ v)(sp.BCOO.fromdense(x)),
        ),
        X2,
        V5,
    )
    m = psparse.BCOO.fromdense(X2)
    assert_close(
        pyjax.grad(lambda v: pjnp.sum((m @ v) ** 2))(pjnp.asarray(V5)),
        jax.grad(lambda v: jjnp.sum((jsparse.BCOO.fromdense(X2) @ v) ** 2))(jjnp.asarray(V5)),
    )


def lax_jit(sp):
    return jax.jit if sp is jsparse else pyjax.jit


def lax_vmap(sp):
    return jax.vmap if sp is jsparse else pyjax.vmap


def test_repr_and_attributes():
    m, j = psparse.BCOO.fromdense(X3, n_batch=1), jsparse.BCOO.fromdense(X3, n_batch=1)
    assert repr(m) == repr(j)
    assert (m.ndim, m.size, str(m.dtype), len(m), m.nse) == (j.ndim, j.size, str(j.dtype), len(j), j.nse)
    assert repr(psparse.BCOO.fromdense(XD, n_dense=1)) == repr(jsparse.BCOO.fromdense(XD, n_dense=1))


@pytest.mark.parametrize(
    "f, error",
    [
        (lambda sp, jnp, m: m - jnp.ones((4, 5)), NotImplementedError),
        (lambda sp, jnp, m: jnp.ones((4, 5)) / m, NotImplementedError),
        (lambda sp, jnp, m: m**-1, NotImplementedError),
        (lambda sp, jnp, m: m.transpose((1, 0)) + m, TypeError),
        (
            lambda sp, jnp, m: sp.bcoo_transpose(
                sp.BCOO.fromdense(jnp.ones((2, 3))).update_layout(n_batch=1, on_inefficient=None), permutation=(1, 0)
            ),
            NotImplementedError,
        ),
        (lambda sp, jnp, m: m.update_layout(n_batch=1), jsparse.SparseEfficiencyError),
        (
            lambda sp, jnp, m: (jax if sp is jsparse else pyjax).jit(lambda x: sp.BCOO.fromdense(x))(jnp.ones(3)),
            jax.errors.ConcretizationTypeError,
        ),
        (lambda sp, jnp, m: sp.BCOO((jnp.ones(3), jnp.zeros((2, 2), "int32")), shape=(3, 3)), ValueError),
    ],
)
def test_errors_match_jax(f, error):
    perror = getattr(pyjax.errors, error.__name__, None) if error.__module__.startswith("jax") else error
    if error is jsparse.SparseEfficiencyError:
        perror = psparse.SparseEfficiencyError
    with pytest.raises(error):
        f(jsparse, jjnp, jsparse.BCOO.fromdense(X2))
    with pytest.raises(perror or error):
        f(psparse, pjnp, psparse.BCOO.fromdense(X2))
