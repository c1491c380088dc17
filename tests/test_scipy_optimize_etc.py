"""jax.scipy.optimize (BFGS minimize), ndimage.map_coordinates, interpolate.RegularGridInterpolator,
cluster.vq.vq and spatial.transform (Rotation, Slerp) against real JAX, on every backend."""

from __future__ import annotations

import jax
import jax.numpy as jj
import jax.scipy.cluster.vq as jvq
import jax.scipy.interpolate as jinterp
import jax.scipy.ndimage as jnd
import jax.scipy.optimize as jopt
import jax.scipy.spatial.transform as jtr
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj
import pyjax.scipy.cluster.vq as pvq
import pyjax.scipy.interpolate as pinterp
import pyjax.scipy.ndimage as pnd
import pyjax.scipy.optimize as popt
import pyjax.scipy.spatial.transform as ptr

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


# ----------------------------------------------------------------------------- spatial.transform

_EUL = np.array([[0.3, -1.2, 2.0], [1.0, 0.2, -0.4], [0.0, 0.0, 0.0], [2.5, 1.1, 0.1]], F)
_QUAT = np.array([[0.1, -0.4, 0.7, 0.5], [0.0, 0.0, 0.0, -1.0], [0.6, 0.2, -0.1, -0.3]], F)


@pytest.mark.parametrize("seq", ["xyz", "ZXY", "zxz", "XYX", "yzx"])
def test_rotation_euler(backend, seq):
    got, want = ptr.Rotation.from_euler(seq, _EUL), jtr.Rotation.from_euler(seq, _EUL)
    _close(got.as_quat(), want.as_quat(), 1e-5)
    for out_seq in ("xyz", "ZYZ", "zyx"):
        _close(got.as_euler(out_seq), want.as_euler(out_seq), 2e-4)
    _close(got.as_euler("xyz", degrees=True), want.as_euler("xyz", degrees=True), 2e-2)
    _close(
        ptr.Rotation.from_euler(seq[:2], _EUL[0, :2] * 50, degrees=True).as_quat(),
        jtr.Rotation.from_euler(seq[:2], _EUL[0, :2] * 50, degrees=True).as_quat(),
        1e-5,
    )
    _close(ptr.Rotation.from_euler(seq[0], 0.7).as_quat(), jtr.Rotation.from_euler(seq[0], 0.7).as_quat(), 1e-6)


def test_rotation_conversions(backend):
    got, want = ptr.Rotation.from_quat(_QUAT), jtr.Rotation.from_quat(_QUAT)
    _close(got.as_quat(), want.as_quat(), 1e-6)
    _close(got.as_quat(canonical=True, scalar_first=True), want.as_quat(canonical=True, scalar_first=True), 1e-6)
    m, mw = got.as_matrix(), want.as_matrix()
    _close(m, mw, 1e-5)
    _close(ptr.Rotation.from_matrix(m).as_quat(), jtr.Rotation.from_matrix(mw).as_quat(), 1e-5)
    for deg in (False, True):
        rv, rvw = got.as_rotvec(degrees=deg), want.as_rotvec(degrees=deg)
        _close(rv, rvw, 1e-3 if deg else 1e-5)
        _close(
            ptr.Rotation.from_rotvec(rv, degrees=deg).as_quat(), jtr.Rotation.from_rotvec(rvw, degrees=deg).as_quat()
        )
    _close(
        ptr.Rotation.from_rotvec(np.array([1e-4, 0, 0], F)).as_quat(),
        jtr.Rotation.from_rotvec(np.array([1e-4, 0, 0], F)).as_quat(),
    )
    _close(got.as_mrp(), want.as_mrp(), 1e-5)
    _close(ptr.Rotation.from_mrp(got.as_mrp()).as_quat(), jtr.Rotation.from_mrp(want.as_mrp()).as_quat(), 1e-5)
    _close(got.magnitude(), want.magnitude(), 1e-5)
    _close(got.inv().as_quat(), want.inv().as_quat(), 1e-6)
    _close(got[1].as_quat(), want[1].as_quat(), 1e-6)
    assert len(got) == 3 and got[0].single and not got.single
    _close(ptr.Rotation.identity().as_matrix(), jtr.Rotation.identity().as_matrix(), 0)
    with pytest.raises(TypeError):
        len(got[0])


def test_rotation_compose_apply(backend):
    a, b = ptr.Rotation.from_quat(_QUAT), ptr.Rotation.from_euler("xyz", _EUL[:3])
    aw, bw = jtr.Rotation.from_quat(_QUAT), jtr.Rotation.from_euler("xyz", _EUL[:3])
    _close((a * b).as_quat(), (aw * bw).as_quat(), 1e-5)
    _close((a[0] * b).as_quat(), (aw[0] * bw).as_quat(), 1e-5)
    v = np.array([[1.0, 2.0, 3.0], [-0.5, 0.0, 4.0], [0.0, 1.0, 0.0]], F)
    for inv in (False, True):
        _close(a.apply(v, inverse=inv), aw.apply(v, inverse=inv), 1e-5)
        _close(a[2].apply(v, inverse=inv), aw[2].apply(v, inverse=inv), 1e-5)
        _close(a.apply(v[0], inverse=inv), aw.apply(v[0], inverse=inv), 1e-5)
    g = pyjax.grad(lambda q: ptr.Rotation.from_quat(q).apply(v[0]).sum())(_QUAT[0])
    gw = jax.grad(lambda q: jtr.Rotation.from_quat(q).apply(v[0]).sum())(_QUAT[0])
    _close(g, gw, 1e-5)
    _close(ptr.Rotation.concatenate([a, b]).as_quat(), jtr.Rotation.concatenate([aw, bw]).as_quat(), 1e-6)
    _close(a.mean().as_quat(canonical=True), aw.mean().as_quat(canonical=True), 1e-4)


def test_slerp(backend):
    rots = np.array([[90, 0, 0], [0, 45, 0], [0, 0, -30]], F)
    times = np.array([0.0, 1.0, 3.0], F)
    got = ptr.Slerp.init(times, ptr.Rotation.from_euler("zxy", rots, degrees=True))
    want = jtr.Slerp.init(times, jtr.Rotation.from_euler("zxy", rots, degrees=True))
    t = np.array([0.0, 0.5, 1.0, 1.5, 2.9, 3.0], F)
    _close(got(t).as_quat(), want(t).as_quat(), 1e-5)
    _close(got(1.25).as_quat(), want(1.25).as_quat(), 1e-5)
    with pytest.raises(ValueError, match="at least 2"):
        ptr.Slerp.init(times[:1], ptr.Rotation.from_euler("z", rots[:1, 0]))
    with pytest.raises(TypeError):
        ptr.Slerp.init(times, rots)
