"""jnp.linalg.eig / eigvals (general matrices, through scipy.linalg's Schur decomposition), jnp.roots and
jnp.poly of a matrix, against real JAX on every backend. Eigenvalues come in no set order: each JAX
eigenvalue is matched to the nearest pyjax one; eigenvectors (unit norm, largest component real, as
LAPACK's) are compared where the eigenvalue is simple, and A v = w v is checked everywhere."""

from __future__ import annotations

import jax.numpy as jj
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj


def _matrices():
    rng = np.random.default_rng(0)
    rot = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    sym = rng.standard_normal((5, 5))
    return {
        "random4": rng.standard_normal((4, 4)),
        "random7": rng.standard_normal((7, 7)),
        "rotation": rot,
        "symmetric": sym + sym.T,
        "batched": rng.standard_normal((2, 3, 3)),
        "complex": rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4)),
        "triangular": np.triu(rng.standard_normal((4, 4))),
        "one": np.array([[3.0]]),
        "int": np.array([[2, 1], [1, 3]]),
    }


MATS = _matrices()


def _match(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Indices into got (last axis) of the eigenvalue nearest each of want's."""
    return np.argmin(np.abs(got[..., None, :] - want[..., :, None]), axis=-1)


@pytest.mark.parametrize("name", sorted(MATS))
def test_eig_matches_jax(backend, name):
    a = MATS[name]
    if a.dtype.kind == "f":
        a = a.astype(np.float32)
    elif a.dtype.kind == "c":
        a = a.astype(np.complex64)
    w, v = pj.linalg.eig(a)
    jw, jv = jj.linalg.eig(a)
    w, v, jw, jv = (np.asarray(x) for x in (w, v, jw, jv))
    assert w.dtype == jw.dtype == np.complex64 and v.dtype == jv.dtype and v.shape == jv.shape
    idx = _match(w, jw)
    w_m = np.take_along_axis(w, idx, -1)
    v_m = np.take_along_axis(v, idx[..., None, :], -1)
    scale = max(1.0, np.abs(jw).max())
    np.testing.assert_allclose(w_m, jw, atol=2e-5 * scale)
    np.testing.assert_allclose(np.sort_complex(np.asarray(pj.linalg.eigvals(a))), np.sort_complex(w), atol=1e-5 * scale)
    af = a.astype(np.complex128)
    resid = np.abs(af @ v - v * w[..., None, :]).max()
    assert resid < 2e-5 * scale * a.shape[-1], resid
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, atol=1e-5)
    gaps = np.abs(jw[..., :, None] - jw[..., None, :]) + np.eye(jw.shape[-1]) * 1e9
    simple = gaps.min(-1) > 1e-2 * scale
    big = np.take_along_axis(jv, np.argmax(np.abs(jv), -2)[..., None, :], -2)[..., 0, :]
    assert np.abs(big.imag).max() < 1e-5  # JAX's convention, which pyjax follows
    # the largest component is real in both, but its sign is LAPACK's choice: align signs first
    sign = np.sign(np.real(np.sum(np.conj(jv) * v_m, axis=-2, keepdims=True)))
    np.testing.assert_allclose(
        np.where(simple[..., None, :], v_m * sign, 0), np.where(simple[..., None, :], jv, 0), atol=2e-4
    )


def test_eig_under_jit_and_errors(backend):
    a = MATS["random4"].astype(np.float32)
    w = pyjax.jit(pj.linalg.eigvals)(a)
    np.testing.assert_allclose(np.sort_complex(np.asarray(w)), np.sort_complex(np.linalg.eigvals(a)), atol=1e-4)
    for bad, err in ((np.ones((2, 3), np.float32), ValueError), (np.ones(3, np.float32), TypeError)):
        with pytest.raises(err):
            pj.linalg.eig(bad)
        with pytest.raises(err):
            jj.linalg.eig(bad)


@pytest.mark.parametrize(
    "p", [[1.0, -6, 11, -6], [1, 0, 1], [0.0, 0, 1, 3], [2.0, 3, 0], [5.0], [0.0, 0.0], [1.0, 2, 3, 4, 5, 6]]
)
def test_roots(backend, p):
    p = np.asarray(p)
    got, want = np.asarray(pj.roots(p)), np.asarray(jj.roots(p))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(np.sort_complex(got), np.sort_complex(want), atol=1e-4)
    with pytest.raises(ValueError, match="rank-1"):
        pj.roots(np.ones((2, 2)))


def test_poly_of_matrix(backend):
    for a in (MATS["rotation"].astype(np.float32), MATS["random4"].astype(np.float32)):
        got, want = np.asarray(pj.poly(a)), np.asarray(jj.poly(a))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, atol=1e-4)


def test_lax_linalg_eig_schur_products(backend):
    import jax.lax.linalg as jl

    import pyjax.lax.linalg as pl

    a = MATS["random4"].astype(np.float32)
    out = pl.eig(a)
    assert len(out) == 3 and len(pl.eig(a, compute_left_eigenvectors=False)) == 2
    assert len(pl.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)) == 1
    w, vl, vr = (np.asarray(x) for x in out)
    jw, jvl, _ = (np.asarray(x) for x in jl.eig(a))
    idx = _match(w, jw)
    vl_m = vl[:, idx]
    sign = np.sign(np.real(np.sum(np.conj(jvl) * vl_m, axis=0, keepdims=True)))
    np.testing.assert_allclose(vl_m * sign, jvl, atol=2e-4)  # left eigenvectors: JAX's, up to sign
    np.testing.assert_allclose(np.conj(vl).T @ a, w[:, None] * np.conj(vl).T, atol=1e-4)
    t, z = (np.asarray(x) for x in pl.schur(a))
    assert t.dtype == np.float32 and np.abs(np.tril(t, -2)).max() == 0
    np.testing.assert_allclose(z @ t @ z.T, a, atol=1e-4)
    for sym in (False, True):
        np.testing.assert_allclose(
            pl.symmetric_product(a, a, alpha=2.0, beta=0.5, symmetrize_output=sym),
            jl.symmetric_product(a, a, alpha=2.0, beta=0.5, symmetrize_output=sym),
            rtol=1e-5,
            atol=1e-6,  # an entry near 0 comes from cancelling terms near 3: a float32 ulp there
        )
    r = np.linalg.cholesky(a @ a.T + np.eye(4, dtype=np.float32)).T
    u = np.array([1.0, -2.0, 0.5, 3.0], np.float32)
    np.testing.assert_allclose(pl.cholesky_update(r, u), jl.cholesky_update(r, u), rtol=1e-4, atol=1e-4)
