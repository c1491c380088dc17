"""lax.ragged_dot / ragged_dot_general (pyjax/lax/ragged.py) against real JAX on every backend: values,
dtypes, gradients, vmap and JAX's errors.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
from tests.jax_compare import check

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


TOL = dict(rtol=1e-4, atol=1e-4)


# --- ragged_dot ---------------------------------------------------------------------------------

LHS, RHS = _r(10, 4), _r(3, 4, 5)


GS = np.array([3, 2, 4], np.int32)  # sums to 9 < 10: the last row is zero


def test_ragged_dot_values_and_grads(backend):
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), LHS, RHS, GS, **TOL)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), LHS, RHS, np.array([0, 10, 0], np.int32), **TOL)
    check(
        lambda jx, jnp, a, b, g: jx.grad(lambda a, b: jnp.sum(jnp.sin(jx.lax.ragged_dot(a, b, g))), (0, 1))(a, b),
        LHS,
        RHS,
        GS,
        **TOL,
    )
    check(
        lambda jx, jnp, a, b, g: jx.jit(jx.lax.ragged_dot)(a, b, g),
        LHS,
        RHS,
        np.array([1, 5, 4], np.int32),
        **TOL,
    )


def test_ragged_dot_dtypes(backend):
    i = rng.integers(-3, 4, (6, 3)).astype(np.int32)
    w = rng.integers(-3, 4, (2, 3, 2)).astype(np.int32)
    g = np.array([4, 2], np.int32)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), i, w, g)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a.astype(jnp.bfloat16), b, g), _r(6, 3), _r(2, 3, 2), g)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g, preferred_element_type=jnp.float32), i, w, g)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g.astype(jnp.uint8)), _r(6, 3), _r(2, 3, 2), g, **TOL)


@pytest.mark.parametrize(
    "args",
    [
        (_r(4, 3), _r(2, 3, 5), np.array([2.0, 2.0], np.float32)),  # float group sizes
        (_r(4, 3), _r(2, 2, 5), np.array([2, 2], np.int32)),  # contracting mismatch
        (_r(4, 3), _r(3, 3, 5), np.array([2, 2], np.int32)),  # group count mismatch
        (_r(4, 3), _r(2, 3, 5), np.array(2, np.int32)),  # scalar group sizes
        (_r(4, 3), _r(2, 3, 5), np.array([[2, 2]], np.int32)),  # wrong group sizes shape
    ],
)
def test_ragged_dot_errors(args):
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), *args)


def _dn(jx, *a):
    return jx.lax.RaggedDotDimensionNumbers(*a)


def test_ragged_dot_general_modes(backend):
    # non-contracting ragged dim with a batch dim: [b, m, k] x [g, b, k, n], group sizes [b, g] or [g]
    a, b = _r(2, 6, 3), _r(3, 2, 3, 4)
    for g in (np.array([[1, 2, 3], [3, 3, 0]], np.int32), np.array([1, 2, 3], np.int32)):
        check(
            lambda jx, jnp, a, b, g: jx.lax.ragged_dot_general(a, b, g, _dn(jx, (([2], [2]), ([0], [1])), [1], [0])),
            a,
            b,
            g,
            **TOL,
        )
    # contracting ragged dim: one partial product per group, stacked in front
    x, y, g = _r(6, 9), _r(9, 7), np.array([2, 3, 3], np.int32)
    f2 = lambda jx, jnp, x, y, g: jx.lax.ragged_dot_general(x, y, g, _dn(jx, (([1], [0]), ([], [])), [1], []))  # noqa: E731
    check(f2, x, y, g, **TOL)
    # JAX has no gradient in this mode; pyjax's against JAX's of the same thing written with masks
    got = pyjax.grad(lambda x, y: pyjax.numpy.sum(f2(pyjax, None, x, y, g) ** 2), (0, 1))(x, y)

    def masked(x, y):
        ends = np.cumsum(g)
        k = np.arange(9)
        parts = [(x * ((k >= e - n) & (k < e))) @ y for e, n in zip(ends, g)]
        return jax.numpy.sum(jax.numpy.stack(parts) ** 2)

    want = jax.grad(masked, (0, 1))(x, y)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-3)
    # batch ragged dim: plain dot_general
    a, b = _r(5, 2, 3), _r(5, 3, 2)
    check(
        lambda jx, jnp, a, b, g: jx.lax.ragged_dot_general(a, b, g, _dn(jx, (([2], [1]), ([0], [0])), [0], [])),
        a,
        b,
        np.array([1, 2], np.int32),
        **TOL,
    )


@pytest.mark.parametrize(
    "dn",
    [
        ((([1], [1]), ([], [])), [0, 1], [0]),
        ((([1], [1]), ([], [])), [0], [0, 1]),
        ((([1], [1]), ([], [])), [], [0]),
        ((([1], [1]), ([], [])), [1], [0]),
        ((([1], [1]), ([], [])), [0], [1]),
    ],
)
def test_ragged_dot_general_errors(dn):
    check(
        lambda jx, jnp, a, b, g: jx.lax.ragged_dot_general(a, b, g, _dn(jx, *dn)),
        _r(4, 3),
        _r(2, 3, 5),
        np.array([2, 2], np.int32),
    )


def test_ragged_dot_vmap(backend):
    a, b, g = _r(3, 6, 2), _r(3, 2, 2, 4), np.array([[2, 4], [6, 0], [1, 1]], np.int32)
    check(lambda jx, jnp, a, b, g: jx.vmap(jx.lax.ragged_dot)(a, b, g), a, b, g, **TOL)
    # JAX's vmap supports only batched rhs; pyjax's also an unbatched one
    out = pyjax.vmap(pyjax.lax.ragged_dot, (0, None, 0))(a, b[0], g)
    want = np.stack([np.asarray(jax.lax.ragged_dot(a[i], b[0], g[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(out), want, **TOL)


def test_ragged_dot_dimension_numbers_type():
    d = pyjax.lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    j = jax.lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    assert repr(d) == repr(j)
    assert d == pyjax.lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    assert hash(d) == hash(pyjax.lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,)))
