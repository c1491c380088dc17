"""pyjax.numpy matvec and vecmat (pyjax/numpy/_products.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import jax.numpy as jj
import numpy as np
import pytest

import pyjax.numpy as pj

CASES = {
    "matvec": lambda L: L.matvec(L.ones((2, 3, 4)), L.arange(4.0)),
    "vecmat": lambda L: L.vecmat(L.arange(3.0), L.ones((2, 3, 4))),
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
