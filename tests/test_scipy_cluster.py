"""jax.scipy.cluster.vq.vq against real JAX on every backend."""

from __future__ import annotations

import jax.scipy.cluster.vq as jvq
import numpy as np
import pytest

import pyjax.scipy.cluster.vq as pvq

F = np.float32


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


# ----------------------------------------------------------------------------- cluster.vq


def test_vq(backend):
    obs = np.array([[1.1, 2.1, 3.1], [5.9, 4.8, 6.2], [0.0, 0.0, 0.0], [2.6, 3.5, 4.4]], F)
    book = np.array([[1.0, 2.0, 3.0], [2.0, 3.0, 4.0], [3.0, 4.0, 5.0], [4.0, 5.0, 6.0]], F)
    for a, b in ((obs, book), (obs[:, 0], book[:, 1]), (np.array([1, 7, 3]), np.array([0, 4, 8]))):
        got, want = pvq.vq(a, b), jvq.vq(a, b)
        _close(got[0], want[0], 0)
        _close(got[1], want[1], 1e-5)
    with pytest.raises(ValueError, match="same rank"):
        pvq.vq(obs, book[0])
    with pytest.raises(ValueError, match="ndim"):
        pvq.vq(obs[None], book[None])
