"""pyjax.numpy window functions bartlett, blackman, hamming, hanning, kaiser (pyjax/numpy/_windows.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import jax.numpy as jj
import numpy as np
import pytest

import pyjax.numpy as pj

CASES = {
    "bartlett": lambda L: [L.bartlett(m) for m in (0, 1, 5, 8)],
    "blackman": lambda L: [L.blackman(m) for m in (0, 1, 5, 8)],
    "hamming": lambda L: [L.hamming(m) for m in (1, 6)],
    "hanning": lambda L: [L.hanning(m) for m in (1, 7)],
    "kaiser": lambda L: L.kaiser(7, 4.0),
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
