"""pyjax.numpy mgrid, ogrid, r_ and c_ (pyjax/numpy/_index_tricks.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import jax.numpy as jj
import numpy as np
import pytest

import pyjax.numpy as pj

CASES = {
    "mgrid": lambda L: [L.mgrid[0:3, 0:4], L.mgrid[0:1:5j]],
    "ogrid": lambda L: L.ogrid[0:3, 1:4],
    "r_": lambda L: [L.r_[1:4, 7, L.array([9, 9])], L.r_[0:1:3j, 2.0], L.r_["1", L.ones((2, 2)), L.zeros((2, 1))]],
    "c_": lambda L: L.c_[L.array([1, 2]), L.array([3, 4])],
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    got, want = CASES[name](pj), CASES[name](jj)
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want)
    tol = 1e-3 if name.startswith("polyfit") else 2e-5
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=tol, atol=tol)
