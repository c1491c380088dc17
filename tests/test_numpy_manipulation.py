"""pyjax.numpy array editing: append, insert, delete, resize, block, trim_zeros, fill_diagonal, unstack, rollaxis,
put, place (pyjax/numpy/_manipulation.py), and the errors of the topic modules against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import math

import jax.numpy as jj
import numpy as np
import pytest

import pyjax.numpy as pj

from jax_compare import assert_case_matches, check, grad_check, rand

R = dict(rtol=2e-5, atol=2e-5)


X = rand((4, 5), 1)


XI = np.arange(20, dtype=np.int32).reshape(4, 5) % 7


# --- array editing ---------------------------------------------------------------------------------------


def test_append_resize_block(backend):
    check(lambda lib, np_, x: np_.append(x, 1.0), X, **R)
    check(lambda lib, np_, x: np_.append(x, x[:1], axis=0), X, **R)
    check(lambda lib, np_, x: np_.append(x, np_.array([1, 2]).astype(np_.int32)), XI)
    check(lambda lib, np_, x: np_.append(x, x[:1], axis=1), X)
    for shape in ((3, 7), 11, (2, 2), (0,), (2, 0, 3)):
        check(lambda lib, np_, x: np_.resize(x, shape), X)
    check(lambda lib, np_, x: np_.resize(x, (-1, 2)), X)
    check(lambda lib, np_, x: np_.block([[x, x[:, :2]], [x[:2], x[:2, :2]]]), X)
    check(lambda lib, np_, x: np_.block([x[0], x[1], 1.0]), X)
    check(lambda lib, np_, x: np_.block([[x[0]], [x[1]]]), X)
    check(lambda lib, np_, x: np_.block(x), X)
    check(lambda lib, np_, x: np_.block([[[x]]]), X)
    check(lambda lib, np_, x: np_.block([[x], x]), X)
    check(lambda lib, np_, x: np_.block([]), X)
    check(lambda lib, np_, x: np_.block((x, x)), X)
    grad_check(lambda lib, x: lib.numpy.block([[x, x], [x * 2, x]]), X)


@pytest.mark.parametrize("obj", [2, -1, 5, [1, 3], [3, 1, 1], [0], slice(1, 4, 2), np.array([4, 0]), 6, [7]])
@pytest.mark.parametrize("axis", [None, 1])
def test_insert(backend, obj, axis):
    check(lambda lib, np_, x: np_.insert(x, obj, 9.5, axis=axis), X, **R)
    check(lambda lib, np_, x: np_.insert(x, obj, np_.array([7, 8], np_.int32)[:1], axis=axis), XI)
    if axis == 1 and not isinstance(obj, (slice, np.ndarray)):
        n = 1 if isinstance(obj, int) else len(obj)
        check(
            lambda lib, np_, x: np_.insert(
                x, obj, np_.arange(4.0 * n).reshape(4, n) if not isinstance(obj, int) else np_.arange(4.0), axis=axis
            ),
            X,
            **R,
        )


def test_insert_values_and_grad(backend):
    check(lambda lib, np_, x: np_.insert(x, 1, np_.arange(3.0)[:, None], axis=1), X)
    check(lambda lib, np_, x: np_.insert(x, [1], np_.arange(2.0)[:, None], axis=1), X[:2])
    check(lambda lib, np_, x: np_.insert(x, 2, [[1.0], [2.0]], axis=0), X)
    grad_check(
        lambda lib, x, v: lib.numpy.insert(x, lib.numpy.asarray([1, 3]), v, axis=0), X, np.float32(2.0), argnums=(0, 1)
    )


@pytest.mark.parametrize(
    "obj",
    [
        2,
        -1,
        [1, 3],
        [3, 1, 1],
        slice(1, 4, 2),
        slice(None),
        np.array([4, 0]),
        9,
        np.array([True, False, True, False, False]),
        [],
    ],
)
@pytest.mark.parametrize("axis", [None, 1])
def test_delete(backend, obj, axis):
    check(lambda lib, np_, x: np_.delete(x, obj, axis=axis), X, **R)
    if isinstance(obj, int) and obj != 9:
        grad_check(lambda lib, x: lib.numpy.delete(x, obj, axis=axis), X)


def test_trim_zeros_fill_diagonal(backend):
    z = np.array([0, 0, 1, 2, 0, 3, 0], np.int32)
    for trim in ("fb", "f", "b", "FB"):
        check(lambda lib, np_, x: np_.trim_zeros(x, trim), z)
    check(lambda lib, np_, x: np_.trim_zeros(x * 0), z)
    check(lambda lib, np_, x: np_.trim_zeros(x.astype(np_.float32)), z)
    m = np.zeros((4, 5), np.float32)
    m[1:3, 1:4] = 1.0
    check(lambda lib, np_, x: np_.trim_zeros(x), m)
    check(lambda lib, np_, x: np_.trim_zeros(x, axis=0), m)
    check(lambda lib, np_, x: np_.trim_zeros(x, "b", axis=-1), m)
    for shape, wrap in (((4, 4), False), ((7, 3), False), ((7, 3), True), ((3, 5), False), ((3, 3, 3), False)):
        a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
        check(lambda lib, np_, x: np_.fill_diagonal(x, -1.0, wrap=wrap, inplace=False), a)
        check(lambda lib, np_, x: np_.fill_diagonal(x, np_.array([-1.0, -2.0]), wrap=wrap, inplace=False), a)
    check(lambda lib, np_, x: np_.fill_diagonal(x, 1.0), X)
    check(lambda lib, np_, x: np_.fill_diagonal(x[0], 1.0, inplace=False), X)
    grad_check(lambda lib, x, v: lib.numpy.fill_diagonal(x, v, inplace=False), X, np.float32(3.0), argnums=(0, 1))


def test_errors(backend):
    check(lambda lib, np_, x: np_.vander(x), X)
    check(lambda lib, np_, x: np_.vander(x[0], -1), X)
    check(lambda lib, np_, x: np_.fill_diagonal(x.reshape(2, 2, 5), 1.0, inplace=False), X)
    check(lambda lib, np_, x: np_.polyder(x[0], -1), X)
    check(lambda lib, np_, x: np_.gradient(x[:1], axis=0), X)
    check(lambda lib, np_, x: np_.bincount(x), XI)
    check(lambda lib, np_, x: np_.insert(x, 5, 1, axis=0), XI)
    check(lambda lib, np_, x: np_.delete(x, 4, axis=0), XI)
    check(lambda lib, np_, x: np_.convolve(x, x), X)
    check(lambda lib, np_, x: np_.trim_zeros(x[0, 0]), X)


CASES = {
    "unstack": lambda L: L.unstack(L.arange(6).reshape(2, 3), axis=1),
    "rollaxis": lambda L: [L.rollaxis(L.ones((2, 3, 4, 5)), 3, 1), L.rollaxis(L.ones((2, 3, 4, 5)), 1, 4)],
    "put": lambda L: L.put(L.zeros(5), L.array([0, 2, 4]), L.array([1.0, 2.0]), inplace=False),
    "place": lambda L: L.place(L.zeros(5), L.array([1, 0, 1, 1, 0], bool), L.array([7.0, 8.0]), inplace=False),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name])


def test_helpers_and_errors(backend):
    assert pj.s_[1:2, ::3] == jj.s_[1:2, ::3] and pj.index_exp[3] == jj.index_exp[3]
    assert pj.iterable([1]) and not pj.iterable(3)
    for k in ("real floating", "integral", ("bool", "signed integer"), "numeric"):
        for d in ("float32", "int32", "uint32", "bool"):
            assert pj.isdtype(getattr(pj, d), k) == jj.isdtype(getattr(jj, d), k)
    assert pj.array_str(pj.arange(3)) == "[0 1 2]"
    with pytest.raises(ValueError, match="in-place"):
        pj.put(pj.zeros(3), 0, 1.0)
    with pytest.raises(ValueError, match="in-place"):
        pj.place(pj.zeros(3), pj.ones(3, bool), 1.0)
    with pytest.raises(ValueError):
        pj.unstack(pj.float32(1))


@pytest.mark.parametrize(
    "reps, length, axis",
    [
        ([0, 3, 0, 5, 1], 9, None),
        ([2, 1, 0, 1, 2], 4, None),
        ([1, 1, 1, 1, 1], 8, None),
        (2, 7, None),
        ([1, 2], 5, 0),
        ([3, 0, 1, 2, 1], 6, 1),
    ],
)
def test_repeat_traced_repeats_static_length(reps, length, axis):
    """jit(jnp.repeat) with traced repeats and total_repeat_length: cut or padded with the last element."""
    import jax

    import pyjax

    def run(lib):
        x = lib.numpy.arange(10).reshape(2, 5) if axis is not None else lib.numpy.array([4, 3, 7, 5, 1])
        f = lib.jit(lambda x, r: lib.numpy.repeat(x, r, axis=axis, total_repeat_length=length))
        return np.asarray(f(x, lib.numpy.asarray(reps)))

    np.testing.assert_array_equal(run(pyjax), run(jax))


@pytest.mark.parametrize("ind, axis", [([1, 4, 8], None), ([-1, 2], None), ([0, 3], 1), ([], None)])
def test_delete_traced_unique_indices(ind, axis):
    """jit(jnp.delete, assume_unique_indices=True) with traced positions (negative ones wrap), as JAX."""
    import jax

    import pyjax

    def run(lib):
        x = lib.numpy.arange(10.0)
        x = x.reshape(2, 5) if axis is not None else x
        f = lib.jit(lambda x, i: lib.numpy.delete(x, i, axis=axis, assume_unique_indices=True))
        return np.asarray(f(x, lib.numpy.asarray(ind, dtype=lib.numpy.int32)))

    np.testing.assert_array_equal(run(pyjax), run(jax))
