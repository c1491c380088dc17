"""QR, eigh and SVD (lax.linalg and jnp.linalg) and what builds on them (pinv, lstsq, matrix_rank,
cond, svdvals, eigvalsh, matrix 2-/nuclear norms) against real JAX.

Decompositions are unique only up to signs (and order for ties), so factors are checked through
reconstructions and orthogonality, values through sign-invariant quantities, and derivatives
through sign-invariant functions of the factors; conventions JAX fixes (eigenvalues ascending,
singular values descending, output shapes per mode) are compared exactly."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax import lax as plax

from oracle import assert_close, check_grads, to_both

RNG = np.random.default_rng(7)
TOL = dict(rtol=2e-4, atol=2e-5)


def _mat(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _sym(*batch, n=4):
    a = _mat(*batch, n, n)
    return a + np.swapaxes(a, -1, -2)


def _np(x):
    return np.asarray(x)


def _orthonormal_cols(q, atol=2e-5):
    q = _np(q)
    k = q.shape[-1]
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(k), q.shape[:-2] + (k, k)), atol=atol)


# --- qr ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3), (1, 1)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_modes_shapes_and_reconstruction(backend, shape, mode):
    a = _mat(*shape)
    p, j = pjnp.linalg.qr(a, mode=mode), jnp.linalg.qr(a, mode=mode)
    if mode == "r":
        assert p.shape == j.shape and p.dtype == j.dtype
        np.testing.assert_allclose(np.abs(_np(p)), np.abs(_np(j)), **TOL)
        return
    assert type(p).__name__ == "QRResult"
    assert (p.Q.shape, p.R.shape) == (j.Q.shape, j.R.shape)
    q, r = _np(p.Q), _np(p.R)
    np.testing.assert_allclose(q @ r, a, **TOL)
    _orthonormal_cols(q)
    np.testing.assert_array_equal(np.tril(r, -1) if r.ndim == 2 else r - np.triu(r), 0)
    # Householder with LAPACK's sign choice: the same factors as JAX for generic inputs.
    assert_close(p, j, **TOL)


def test_qr_lax_and_grads(backend):
    a = _mat(5, 3)
    q, r = plax.linalg.qr(a, full_matrices=False)
    assert_close((q, r), jax.lax.linalg.qr(a, full_matrices=False), **TOL)
    assert plax.linalg.qr(a)[0].shape == (5, 5)
    check_grads(lambda x: tuple(pjnp.linalg.qr(x)), lambda x: tuple(jnp.linalg.qr(x)), (a,), **TOL)
    sq = _mat(3, 3) + 3 * np.eye(3, dtype=np.float32)
    check_grads(
        lambda x: tuple(pjnp.linalg.qr(x, mode="complete")),
        lambda x: tuple(jnp.linalg.qr(x, mode="complete")),
        (sq,),
        **TOL,
    )


def test_qr_triangular_input_is_unchanged(backend):
    r0 = np.triu(_mat(3, 3)) + 2 * np.eye(3, dtype=np.float32)
    q, r = pjnp.linalg.qr(r0)
    assert_close((q, r), jnp.linalg.qr(r0), **TOL)


def test_qr_errors(backend):
    with pytest.raises(ValueError, match="mode"):
        pjnp.linalg.qr(_mat(2, 2), mode="bogus")
    with pytest.raises(ValueError):
        pjnp.linalg.qr(_mat(3))


# --- eigh ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("batch,n", [((), 1), ((), 2), ((), 5), ((3,), 4), ((2, 2), 3)])
def test_eigh_values_vectors(backend, batch, n):
    a = _sym(*batch, n=n)
    w, v = pjnp.linalg.eigh(a)
    jw, jv = jnp.linalg.eigh(a)
    assert (w.shape, v.shape, w.dtype) == (jw.shape, jv.shape, jw.dtype)
    assert_close(w, jw, **TOL)
    v = _np(v)
    np.testing.assert_allclose(v @ (_np(w)[..., :, None] * np.swapaxes(v, -1, -2)), a, **TOL)
    _orthonormal_cols(v)
    assert_close(pjnp.linalg.eigvalsh(a), jnp.linalg.eigvalsh(a), **TOL)
    lv, lw = plax.linalg.eigh(a)
    assert_close(lw, jax.lax.linalg.eigh(a)[1], **TOL)


def test_eigh_degenerate_and_uplo(backend):
    w, v = pjnp.linalg.eigh(np.eye(4, dtype=np.float32))
    assert_close(w, jnp.ones(4), **TOL)
    _orthonormal_cols(v)
    a = _mat(4, 4)  # only one triangle is read with symmetrize_input=False
    for uplo in ("L", "U"):
        assert_close(
            pjnp.linalg.eigh(a, UPLO=uplo, symmetrize_input=False).eigenvalues,
            jnp.linalg.eigh(a, UPLO=uplo, symmetrize_input=False).eigenvalues,
            **TOL,
        )
    with pytest.raises(ValueError):
        pjnp.linalg.eigh(_mat(3, 4))


def test_eigh_grads_jit_vmap(backend):
    a = _sym(n=4)
    c = _mat(4, 4)

    def f(lib):
        def g(x):
            w, v = lib.linalg.eigh(x)
            return lib.sum(w * w) + lib.sum((v * v) * c)  # sign-invariant

        return g

    check_grads(f(pjnp), f(jnp), (a,), **TOL)
    check_grads(lambda x: pjnp.linalg.eigvalsh(x), lambda x: jnp.linalg.eigvalsh(x), (a,), **TOL)
    b = _sym(3, n=4)
    assert_close(pyjax.vmap(pjnp.linalg.eigvalsh)(b), jax.vmap(jnp.linalg.eigvalsh)(b), **TOL)
    assert_close(pyjax.jit(pjnp.linalg.eigvalsh)(a), jnp.linalg.eigvalsh(a), **TOL)


# --- svd ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 4), (1, 3)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_shapes_and_reconstruction(backend, shape, full_matrices):
    a = _mat(*shape)
    u, s, vh = pjnp.linalg.svd(a, full_matrices=full_matrices)
    ju, js, jvh = jnp.linalg.svd(a, full_matrices=full_matrices)
    assert (u.shape, s.shape, vh.shape) == (ju.shape, js.shape, jvh.shape)
    assert_close(s, js, **TOL)
    k = s.shape[-1]
    u, s, vh = _np(u), _np(s), _np(vh)
    np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, **TOL)
    _orthonormal_cols(u)
    _orthonormal_cols(np.swapaxes(vh, -1, -2))
    assert_close(pjnp.linalg.svd(a, compute_uv=False), js, **TOL)
    assert_close(pjnp.linalg.svdvals(a), js, **TOL)


def test_svd_rank_deficient_and_hermitian(backend):
    a = _mat(5, 2) @ _mat(2, 4)  # rank 2
    u, s, vh = pjnp.linalg.svd(a)
    assert_close(s, jnp.linalg.svd(a, compute_uv=False), rtol=2e-4, atol=2e-4)
    _orthonormal_cols(u)
    np.testing.assert_allclose((_np(u)[:, :4] * _np(s)) @ _np(vh), a, rtol=2e-4, atol=1e-4)
    h = _sym(n=4)
    hu, hs, hvh = pjnp.linalg.svd(h, hermitian=True)
    assert_close(hs, jnp.linalg.svd(h, hermitian=True)[1], **TOL)
    np.testing.assert_allclose((_np(hu) * _np(hs)) @ _np(hvh), h, **TOL)


def test_svd_grads_and_lax(backend):
    a = _mat(5, 3)

    def f(lib):
        def g(x):
            u, s, vh = lib.linalg.svd(x, full_matrices=False)
            wu = lib.reshape(lib.arange(u.size, dtype="float32"), u.shape)
            wv = lib.reshape(lib.arange(vh.size, dtype="float32"), vh.shape)
            return lib.sum(s * s * s) + lib.sum((u * u) * wu) + lib.sum(vh * vh * wv)

        return g

    check_grads(f(pjnp), f(jnp), (a,), **TOL)
    check_grads(f(pjnp), f(jnp), (a.T.copy(),), modes=("rev",), **TOL)
    check_grads(lambda x: pjnp.linalg.svdvals(x), lambda x: jnp.linalg.svdvals(x), (a,), **TOL)
    assert_close(plax.linalg.svd(a, compute_uv=False), jax.lax.linalg.svd(a, compute_uv=False), **TOL)
    b = _mat(2, 4, 3)
    assert_close(pyjax.vmap(pjnp.linalg.svdvals)(b), jax.vmap(jnp.linalg.svdvals)(b), **TOL)


# --- built on svd -------------------------------------------------------------------------------------


def test_pinv_lstsq_rank_cond_norms(backend):
    a = _mat(5, 3)
    low = _mat(4, 2) @ _mat(2, 4)
    _both = lambda pf, jf, *xs, **kw: assert_close(pf(*to_both(*xs)[0]), jf(*to_both(*xs)[1]), **{**TOL, **kw})  # noqa: E731
    _both(pjnp.linalg.pinv, jnp.linalg.pinv, a)
    _both(pjnp.linalg.pinv, jnp.linalg.pinv, low, atol=1e-4)
    check_grads(pjnp.linalg.pinv, jnp.linalg.pinv, (a,), **TOL)
    b = _mat(5)
    _both(pjnp.linalg.lstsq, jnp.linalg.lstsq, a, b)
    _both(pjnp.linalg.lstsq, jnp.linalg.lstsq, a, _mat(5, 2))
    for m in (a, low, np.zeros((3, 3), np.float32), _mat(2, 3, 3)):
        _both(pjnp.linalg.matrix_rank, jnp.linalg.matrix_rank, m)
    sq = _mat(4, 4) + 2 * np.eye(4, dtype=np.float32)
    for p in (None, 2, -2, 1, "fro", np.inf):
        _both(lambda x, p=p: pjnp.linalg.cond(x, p), lambda x, p=p: jnp.linalg.cond(x, p), sq, rtol=1e-3)
    for ordr in (2, -2, "nuc"):
        _both(lambda x, o=ordr: pjnp.linalg.norm(x, ord=o), lambda x, o=ordr: jnp.linalg.norm(x, ord=o), a)
        _both(
            lambda x, o=ordr: pjnp.linalg.matrix_norm(x, ord=o, keepdims=True),
            lambda x, o=ordr: jnp.linalg.matrix_norm(x, ord=o, keepdims=True),
            _mat(2, 3, 4),
        )
    with pytest.raises(ValueError, match="cond"):
        pjnp.linalg.cond(_mat(3))


def test_random_orthogonal_and_mvn_methods(backend):
    q = pyjax.random.orthogonal(pyjax.random.key(0), 4)
    _orthonormal_cols(q)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
    for method in ("svd", "eigh"):
        x = pyjax.random.multivariate_normal(pyjax.random.key(1), np.zeros(2, np.float32), cov, (4000,), method=method)
        np.testing.assert_allclose(np.cov(_np(x).T), cov, atol=0.15)


def test_tridiagonal_solve(backend):
    dl, du = _mat(2, 5), _mat(2, 5)
    d = _mat(2, 5) + 4
    b = _mat(2, 5, 3)
    assert_close(plax.linalg.tridiagonal_solve(dl, d, du, b), jax.lax.linalg.tridiagonal_solve(dl, d, du, b), **TOL)
    check_grads(
        lambda d, b: plax.linalg.tridiagonal_solve(dl, d, du, b),
        lambda d, b: jax.lax.linalg.tridiagonal_solve(dl, d, du, b),
        (d, b),
        argnums=(0, 1),
        **TOL,
    )


def test_algorithm_enums_as_jax_on_cpu():
    """The enums' members and values are JAX's; each choice works or fails as JAX on CPU does."""
    pl, jl = plax.linalg, jax.lax.linalg
    x = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    for name, fn, kw, values in (
        ("EighImplementation", "eigh", "implementation", 1),
        ("SvdAlgorithm", "svd", "algorithm", 1),
        ("EigImplementation", "eig", "implementation", 0),
    ):
        penum, jenum = getattr(pl, name), getattr(jl, name)
        assert [(m.name, m.value) for m in penum] == [(m.name, m.value) for m in jenum]
        for pm, jm in zip(penum, jenum):
            try:
                want = getattr(jl, fn)(x, **{kw: jm})
            except Exception as e:  # noqa: BLE001  (the error type is what is compared)
                with pytest.raises(type(e)):
                    getattr(pl, fn)(x, **{kw: pm})
            else:
                got = getattr(pl, fn)(x, **{kw: pm})
                np.testing.assert_allclose(np.asarray(got[values]), np.asarray(want[values]), rtol=1e-5)


def _same_all(got, want, tol=1e-4):
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_householder_routines_lapack_storage(backend):
    """householder_product/ormqr read xGEQRF's reflectors; hessenberg/tridiagonal write LAPACK's storage."""
    pl, jl = plax.linalg, jax.lax.linalg
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    h, taus = jnp.linalg.qr(a, mode="raw")
    h, taus = np.asarray(h).T.copy(), np.asarray(taus)
    _same_all([pl.householder_product(h, taus[:2])], [jl.householder_product(h, taus[:2])])
    c = rng.standard_normal((2, 5)).astype(np.float32)
    _same_all([pl.ormqr(h, taus, c, left=False, transpose=True)], [jl.ormqr(h, taus, c, left=False, transpose=True)])
    x = rng.standard_normal((2, 3, 3)).astype(np.float32)
    _same_all(pl.hessenberg(x), jl.hessenberg(x))
    s = (x + 1j * x[::-1]).astype(np.complex64)
    s = s + np.conj(np.swapaxes(s, -1, -2))
    _same_all(pl.tridiagonal(s), jl.tridiagonal(s))
    _same_all(pyjax.jit(lambda m: pl.tridiagonal(m, lower=False))(s.real), jl.tridiagonal(s.real, lower=False))
    with pytest.raises(ValueError, match="at least as many rows"):
        pl.householder_product(h.T, taus)


def test_qdwh_polar_matches_jax(backend):
    # JAX's weights and stopping rule: the same iteration counts where the condition number is far from
    # 1/eps (near it, rounding of the QR steps can move the count by one)
    from tests.jax_compare import check_all

    scaled = _mat(7, 5) * np.float32([1, 0.1, 0.01, 0.001, 1])
    padded = np.zeros((6, 5), np.float32)
    padded[:5, :3] = _mat(5, 3)
    cases = [(_mat(5, 3), {}), (scaled, {}), (_mat(4, 4), {"max_iterations": 2})]
    cases += [(padded, {"dynamic_shape": (5, 3)}), (np.zeros((3, 2), np.float32), {})]
    check_all(lambda j, n, x, kw: j.lax.linalg.qdwh(x, **kw), cases, rtol=1e-4, atol=2e-5)
    with pytest.raises(ValueError, match="M >= N"):
        plax.linalg.qdwh(_mat(2, 3))
