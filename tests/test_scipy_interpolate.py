"""jax.scipy.interpolate.RegularGridInterpolator against real JAX on every backend."""

from __future__ import annotations

import jax
import jax.scipy.interpolate as jinterp
import numpy as np
import pytest

import pyjax
import pyjax.scipy.interpolate as pinterp

F = np.float32


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


# ----------------------------------------------------------------------------- interpolate

_GX = np.array([0.0, 1.0, 2.5, 4.0], F)


_GY = np.array([-1.0, 0.0, 2.0], F)


_VALS = (np.arange(12.0, dtype=F).reshape(4, 3) ** 1.3).astype(F)


_XI = np.array([[0.5, -0.5], [2.4, 1.9], [4.0, 2.0], [-0.1, 0.0], [3.9, 2.1], [1.0, 0.0]], F)


@pytest.mark.parametrize("method", ["linear", "nearest"])
@pytest.mark.parametrize("fill", ["nan", None, 7.0])
def test_regular_grid_interpolator(backend, method, fill):
    kw = {} if fill == "nan" else {"fill_value": fill}
    got = pinterp.RegularGridInterpolator((_GX, _GY), _VALS, method=method, **kw)
    want = jinterp.RegularGridInterpolator((_GX, _GY), _VALS, method=method, **kw)
    _close(got(_XI), want(_XI), 1e-5)
    other = "nearest" if method == "linear" else "linear"
    _close(got(_XI, method=other), want(_XI, method=other), 1e-5)
    xs = (_XI[:, 0].reshape(2, 3), _XI[:, 1].reshape(2, 3))
    _close(got(xs), want(xs), 1e-5)


def test_regular_grid_interpolator_more(backend):
    vals = np.arange(24.0, dtype=F).reshape(4, 3, 2)  # trailing value axis
    got = pinterp.RegularGridInterpolator((_GX, _GY), vals)(_XI)
    _close(got, jinterp.RegularGridInterpolator((_GX, _GY), vals)(_XI), 1e-5)
    ivals = np.arange(4, dtype=np.int32) * 2  # integer values become float
    q = np.array([0.5, 3.0, 1.75], F)
    _close(pinterp.RegularGridInterpolator((_GX,), ivals)(q), jinterp.RegularGridInterpolator((_GX,), ivals)(q))
    f = pyjax.jit(lambda v, x: pinterp.RegularGridInterpolator((_GX, _GY), v)(x))
    _close(f(_VALS, _XI), jinterp.RegularGridInterpolator((_GX, _GY), _VALS)(_XI), 1e-5)
    g = pyjax.grad(lambda v: pinterp.RegularGridInterpolator((_GX, _GY), v, fill_value=None)(_XI).sum())(_VALS)
    gw = jax.grad(lambda v: jinterp.RegularGridInterpolator((_GX, _GY), v, fill_value=None)(_XI).sum())(_VALS)
    _close(g, gw, 1e-5)
    with pytest.raises(ValueError, match="not defined"):
        pinterp.RegularGridInterpolator((_GX, _GY), _VALS, method="cubic")
    with pytest.raises(NotImplementedError):
        pinterp.RegularGridInterpolator((_GX, _GY), _VALS, bounds_error=True)
    with pytest.raises(ValueError, match="point arrays"):
        pinterp.RegularGridInterpolator((_GX, _GY, _GY), _VALS)
    with pytest.raises(ValueError, match="dimension"):
        pinterp.RegularGridInterpolator((_GX, _GY), _VALS)(np.ones((2, 3), F))
