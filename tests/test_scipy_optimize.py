"""jax.scipy.optimize.minimize (BFGS) against real JAX on every backend."""

from __future__ import annotations

import jax
import jax.numpy as jj
import jax.scipy.optimize as jopt
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj
import pyjax.scipy.optimize as popt

F = np.float32


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


# ----------------------------------------------------------------------------- optimize


def _rosen(m):
    return lambda x: m.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


_A = np.array([[3.0, 0.5, 0.0], [0.5, 2.0, 0.3], [0.0, 0.3, 1.0]], F)


_B = np.array([1.0, -2.0, 0.5], F)


def _quad(m):
    return lambda x, a, b: 0.5 * m.dot(x, m.dot(a, x)) - m.dot(b, x)


def _check_result(got, want, tol):
    assert type(got).__name__ == "OptimizeResults" and got._fields == want._fields
    for name in ("x", "fun", "jac", "hess_inv"):
        _close(getattr(got, name), getattr(want, name), tol)
    for name in ("success", "status", "nfev", "njev", "nit"):
        _close(getattr(got, name), getattr(want, name), 0)


def test_minimize_quadratic(backend):
    x0 = np.zeros(3, F)
    got = popt.minimize(_quad(pj), x0, (_A, _B), method="BFGS")
    want = jopt.minimize(_quad(jj), x0, (_A, _B), method="BFGS")
    _check_result(got, want, 1e-4)
    _close(got.x, np.linalg.solve(_A, _B), 1e-4)


def test_minimize_rosenbrock(backend):
    x0 = np.array([-1.2, 1.0], F)
    got = popt.minimize(_rosen(pj), x0, method="bfgs")
    want = jopt.minimize(_rosen(jj), x0, method="bfgs")
    _check_result(got, want, 2e-3)


def test_minimize_options_and_jit(backend):
    x0 = np.array([-1.0, 2.0, 0.5], F)
    opts = {"maxiter": 3, "gtol": 1e-6}
    got = pyjax.jit(lambda x: popt.minimize(_rosen(pj), x, method="BFGS", options=opts))(x0)
    want = jax.jit(lambda x: jopt.minimize(_rosen(jj), x, method="BFGS", options=opts))(x0)
    _check_result(got, want, 1e-4)
    assert int(got.status) == 1 and not bool(got.success)


def test_minimize_errors():
    with pytest.raises(ValueError, match="not recognized"):
        popt.minimize(_rosen(pj), np.zeros(2, F), method="nelder-mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        popt.minimize(_quad(pj), np.zeros(3, F), [_A, _B], method="BFGS")
