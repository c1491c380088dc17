"""jax.scipy.ndimage.map_coordinates against real JAX on every backend: values, gradients, errors."""

from __future__ import annotations

import jax
import jax.numpy as jj
import jax.scipy.ndimage as jnd
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj
import pyjax.scipy.ndimage as pnd

F = np.float32


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


# ----------------------------------------------------------------------------- ndimage

_IMG = np.arange(12.0, dtype=F).reshape(3, 4) ** 1.5


_COORDS = [
    np.array([-1.3, -0.5, 0.0, 0.4, 1.5, 2.2, 2.6, 3.7], F),
    np.array([0.2, -2.1, 3.0, 3.4, 1.5, 4.6, 0.0, 7.5], F),
]


@pytest.mark.parametrize("mode", ["constant", "nearest", "wrap", "mirror", "reflect"])
@pytest.mark.parametrize("order", [0, 1])
def test_map_coordinates(backend, mode, order):
    got = pnd.map_coordinates(_IMG, _COORDS, order, mode=mode, cval=-1.5)
    _close(got, jnd.map_coordinates(_IMG, _COORDS, order, mode=mode, cval=-1.5), 1e-5)
    ints = np.arange(7, dtype=np.int32) * 3
    c = [np.array([-0.6, 0.5, 1.5, 2.49, 5.5, 6.7], F)]
    _close(pnd.map_coordinates(ints, c, order, mode=mode), jnd.map_coordinates(ints, c, order, mode=mode), 0)


def test_map_coordinates_grad_and_errors(backend):
    def f(m, nd):
        return lambda img, c: m.sum(nd.map_coordinates(img, [c, c * 0.5], 1, mode="reflect") ** 2)

    c = np.array([0.3, 1.7, 2.2], F)
    got = pyjax.grad(f(pj, pnd), argnums=(0, 1))(_IMG, c)
    want = jax.grad(f(jj, jnd), argnums=(0, 1))(_IMG, c)
    for g, w in zip(got, want):
        _close(g, w, 1e-4)
    with pytest.raises(ValueError, match="input.ndim"):
        pnd.map_coordinates(_IMG, [c], 1)
    with pytest.raises(NotImplementedError, match="mode"):
        pnd.map_coordinates(_IMG, [c, c], 1, mode="grid-wrap")
    with pytest.raises(NotImplementedError, match="order"):
        pnd.map_coordinates(_IMG, [c, c], 3)
