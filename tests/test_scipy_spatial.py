"""jax.scipy.spatial.transform (Rotation, Slerp) against real JAX on every backend."""

from __future__ import annotations

import jax
import jax.scipy.spatial.transform as jtr
import numpy as np
import pytest

import pyjax
import pyjax.scipy.spatial.transform as ptr

F = np.float32


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


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
