"""pyjax.numpy isin and the set operations union1d, intersect1d, setdiff1d, setxor1d (pyjax/numpy/_setops.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from jax_compare import assert_case_matches, check

XI = np.arange(20, dtype=np.int32).reshape(4, 5) % 7


# --- membership, counting, histograms ---------------------------------------------------------------


def test_isin(backend):
    check(lambda lib, np_, x: np_.isin(x, np_.array([1, 3, 6])), XI)
    check(lambda lib, np_, x: np_.isin(x, np_.array([[1.0, 3.5]]), invert=True), XI)
    check(lambda lib, np_, x: np_.isin(x, np_.array([], dtype=np_.int32)), XI)
    check(lambda lib, np_, x: np_.isin(x[0, 0], x), XI)
    check(lambda lib, np_, x: lib.jit(lambda a, b: np_.isin(a, b))(x, x[1:2, :2]), XI)


A = np.array([1, 2, 3, 3, 5])


B = np.array([3, 1, 7])


CASES = {
    "union1d": lambda L: [L.union1d(A, B), L.union1d(A, B, size=7, fill_value=0)],
    "intersect1d": lambda L: [L.intersect1d(A, B), L.intersect1d(A, B, size=4)],
    "intersect1d_idx": lambda L: L.intersect1d(A, B, return_indices=True),
    "setdiff1d": lambda L: L.setdiff1d(A, B),
    "setxor1d": lambda L: L.setxor1d(A, B),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name])


@pytest.mark.parametrize("fn", ["setdiff1d", "intersect1d"])
@pytest.mark.parametrize(
    "kw", [dict(size=4), dict(size=1), dict(size=3, fill_value=-1), dict(size=4, assume_unique=True)]
)
def test_setops_with_size_under_jit(fn, kw):
    """setdiff1d / intersect1d with a static size work under jit and pad as JAX (setdiff1d with 0)."""
    import jax

    import pyjax

    def run(lib):
        x, y = lib.numpy.array([5, 2, 3, 2, 8]), lib.numpy.array([3, 2, 7])
        if kw.get("assume_unique"):
            x = lib.numpy.array([5, 2, 3, 8])
        f = getattr(lib.numpy, fn)
        return [np.asarray(f(x, y, **kw)), np.asarray(lib.jit(lambda x, y: f(x, y, **kw))(x, y))]

    for a, b in zip(run(pyjax), run(jax)):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
