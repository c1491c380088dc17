"""jax.scipy.linalg additions against real JAX: pascal/invpascal/invhilbert/fiedler_companion/dft,
expm_frechet, hessenberg, qr_multiply, eigh_tridiagonal, schur/rsf2csf, sqrtm, funm, solve_sylvester.

Values JAX fixes are compared directly; Schur forms are unique only up to eigenvalue order and phases,
so those are checked through reconstruction, (quasi-)triangularity, unitarity and eigenvalues."""

from __future__ import annotations

import jax
import jax.numpy as jj
import jax.scipy.linalg as jsl
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj
import pyjax.scipy.linalg as psl
from tests.jax_compare import check

RNG = np.random.default_rng(11)
F = np.float32


def _mat(*shape):
    return RNG.standard_normal(shape).astype(F)


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


def _unitary(z, atol=3e-5):
    z = np.asarray(z)
    n = z.shape[-1]
    np.testing.assert_allclose(np.conj(np.swapaxes(z, -1, -2)) @ z, np.broadcast_to(np.eye(n), z.shape), atol=atol)


def _same_eigs(w, a):
    """w (..., n) are a's eigenvalues (compared through characteristic polynomials: no ordering needed)."""
    a = np.asarray(a, np.complex128).reshape((-1,) + np.shape(a)[-2:])
    w = np.asarray(w, np.complex128).reshape(len(a), -1)
    for wi, ai in zip(w, a):
        np.testing.assert_allclose(np.poly(wi), np.poly(ai), atol=2e-4)


@pytest.fixture
def cpu():
    """Tests of shapes, dtypes and errors run once, on the cpu reference backend (fast to start)."""
    with pyjax.default_device(pyjax.devices("cpu")[0]):
        yield


A4 = _mat(4, 4)
A3 = _mat(3, 3)


# --- builders ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name,args",
    [
        ("pascal", (5,)),
        ("pascal", (4, "lower")),
        ("pascal", (4, "upper")),
        ("pascal", (0,)),
        ("invpascal", (5,)),
        ("invpascal", (4, "lower")),
        ("invpascal", (4, "upper")),
        ("invhilbert", (1,)),
        ("invhilbert", (4,)),
        ("dft", (5,)),
        ("dft", (4, "sqrtn")),
        ("dft", (3, "n")),
    ],
)
def test_builders_match_jax(backend, name, args):
    _close(getattr(psl, name)(*args), getattr(jsl, name)(*args), tol=1e-5)


def test_builder_errors(cpu):
    for name in ("pascal", "invpascal"):
        with pytest.raises(ValueError):
            getattr(psl, name)(3, "diagonal")
    with pytest.raises(ValueError):
        psl.dft(3, "half")
    with pytest.raises(ValueError):
        psl.dft(3, dtype=np.float32)
    with pytest.raises(ValueError):
        psl.fiedler_companion(np.zeros((0,), F))
    _close(psl.dft(3, dtype=np.complex64), jsl.dft(3, dtype=np.complex64), 1e-6)


@pytest.mark.parametrize(
    "a",
    [
        np.array([1.0, -16.0, 86.0, -176.0, 105.0], F),
        _mat(2, 6),
    ],
)
def test_fiedler_companion(backend, a):
    _close(psl.fiedler_companion(a), jsl.fiedler_companion(a), 1e-6)


def test_fiedler_companion_small(cpu):
    for a in (np.array([2.0, 3.0], F), np.array([2.0], F)):
        _close(psl.fiedler_companion(a), jsl.fiedler_companion(a), 1e-6)


# --- expm_frechet --------------------------------------------------------------------------------


def test_expm_frechet(backend):
    a, e = _mat(2, 3, 3), _mat(2, 3, 3)
    got, want = psl.expm_frechet(a, e), jsl.expm_frechet(a, e)
    for g, w in zip(got, want):
        _close(g, w, 1e-4)
    _close(psl.expm_frechet(a, e, compute_expm=False), want[1], 1e-4)


def test_expm_frechet_grad_and_errors(cpu):
    a, e = A3 * 0.5, _mat(3, 3)
    g = pyjax.grad(lambda x: pj.sum(psl.expm_frechet(x, e, compute_expm=False) ** 2))(a)
    w = jax.grad(lambda x: jj.sum(jsl.expm_frechet(x, e, compute_expm=False) ** 2))(a)
    _close(g, w, 2e-4)
    with pytest.raises(ValueError):
        psl.expm_frechet(np.ones((2, 3), F), np.ones((2, 3), F))
    with pytest.raises(ValueError):
        psl.expm_frechet(np.ones((2, 2), F), np.ones((3, 3), F))


# --- hessenberg / qr_multiply --------------------------------------------------------------------


def test_hessenberg_matches_jax(backend):
    h, q = psl.hessenberg(A4, calc_q=True)
    hw, qw = jsl.hessenberg(A4, calc_q=True)
    _close(h, hw, 2e-5)
    _close(q, qw, 2e-5)
    _close(psl.hessenberg(A3), jsl.hessenberg(A3), 2e-5)


def test_hessenberg_batched_complex_and_empty(cpu):
    a = _mat(2, 4, 4) + 1j * _mat(2, 4, 4)
    h, q = psl.hessenberg(a.astype(np.complex64), calc_q=True)
    h, q = np.asarray(h), np.asarray(q)
    assert np.all(np.tril(h, -2) == 0)
    _unitary(q)
    np.testing.assert_allclose(q @ h @ np.conj(np.swapaxes(q, -1, -2)), a, atol=3e-5)
    hw = np.asarray(jsl.hessenberg(a.astype(np.complex64)))
    np.testing.assert_allclose(np.abs(h), np.abs(hw), atol=3e-5)  # same up to LAPACK's phases
    assert psl.hessenberg(np.zeros((0, 0), F)).shape == (0, 0)


@pytest.mark.parametrize(
    "ashape,cshape,mode",
    [((5, 3), (3, 2), "left"), ((5, 3), (2, 5), "right"), ((3, 4), (3,), "left"), ((4, 4), (4,), "right")],
)
def test_qr_multiply(backend, ashape, cshape, mode):
    a, c = _mat(*ashape), _mat(*cshape)
    for g, w in zip(psl.qr_multiply(a, c, mode=mode), jsl.qr_multiply(a, c, mode=mode)):
        _close(g, w, 2e-5)


def test_qr_multiply_batched_complex_conjugate_and_errors(cpu):
    a = _mat(2, 4, 3)
    c = _mat(5, 4)
    for g, w in zip(psl.qr_multiply(a, c), jsl.qr_multiply(a, c)):
        _close(g, w, 2e-5)
    ac = (_mat(4, 3) + 1j * _mat(4, 3)).astype(np.complex64)
    cc = (_mat(3, 2) + 1j * _mat(3, 2)).astype(np.complex64)
    for conj in (False, True):
        for g, w in zip(
            psl.qr_multiply(ac, cc, mode="left", conjugate=conj), jsl.qr_multiply(ac, cc, mode="left", conjugate=conj)
        ):
            _close(g, w, 3e-5)
    with pytest.raises(ValueError):
        psl.qr_multiply(a, c, mode="middle")
    with pytest.raises(ValueError):
        psl.qr_multiply(_mat(4, 3), _mat(4, 2), mode="left")
    with pytest.raises(ValueError):
        psl.qr_multiply(_mat(4, 3), _mat(2, 3), mode="right")


# --- eigh_tridiagonal ----------------------------------------------------------------------------


def test_eigh_tridiagonal(backend):
    d, e = _mat(5), _mat(4)
    _close(psl.eigh_tridiagonal(d, e, eigvals_only=True), jsl.eigh_tridiagonal(d, e, eigvals_only=True), 2e-5)
    _close(
        psl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
        jsl.eigh_tridiagonal(d, e, eigvals_only=True, select="i", select_range=(1, 3)),
        2e-5,
    )
    w, v = psl.eigh_tridiagonal(d, e)
    ww, vw = jsl.eigh_tridiagonal(d, e)
    _close(w, ww, 2e-5)
    t = np.diag(d) + np.diag(e, 1) + np.diag(e, -1)
    v = np.asarray(v)
    assert v.shape == np.asarray(vw).shape
    np.testing.assert_allclose(t @ v, v * np.asarray(w), atol=5e-5)
    _unitary(v)


def test_eigh_tridiagonal_complex_small_and_errors(cpu):
    d = _mat(4).astype(np.complex64)
    e = (_mat(3) + 1j * _mat(3)).astype(np.complex64)
    w, v = psl.eigh_tridiagonal(d, e)
    _close(w, jsl.eigh_tridiagonal(d, e, eigvals_only=True), 3e-5)
    t = np.diag(d) + np.diag(e, 1) + np.diag(np.conj(e), -1)
    v = np.asarray(v)
    assert v.dtype == np.complex64
    np.testing.assert_allclose(t @ v, v * np.asarray(w), atol=5e-5)
    _close(psl.eigh_tridiagonal(np.array([2.0], F), np.zeros((0,), F), eigvals_only=True), np.array([2.0], F))
    with pytest.raises(TypeError):
        psl.eigh_tridiagonal(_mat(3), _mat(2).astype(np.float16))
    with pytest.raises(TypeError):
        psl.eigh_tridiagonal(np.arange(3), np.arange(2))
    with pytest.raises(NotImplementedError):
        psl.eigh_tridiagonal(_mat(3), _mat(2), select="v", select_range=(0.0, 1.0))
    with pytest.raises(ValueError):
        psl.eigh_tridiagonal(_mat(3), _mat(2), select="i")
    with pytest.raises(ValueError):
        psl.eigh_tridiagonal(_mat(3), _mat(2), select="x")


# --- schur / rsf2csf -----------------------------------------------------------------------------


def _check_schur(a, t, z, real: bool):
    a, t, z = np.asarray(a), np.asarray(t), np.asarray(z)
    assert t.shape == a.shape and z.shape == a.shape
    _unitary(z)
    np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=5e-5)
    if not real:
        assert np.all(np.tril(t, -1) == 0)
        _same_eigs(np.diagonal(t, axis1=-2, axis2=-1), a)
        return
    assert np.all(np.tril(t, -2) == 0)
    sub = np.diagonal(t, offset=-1, axis1=-2, axis2=-1)
    assert not np.any((sub[..., 1:] != 0) & (sub[..., :-1] != 0))  # 2 x 2 blocks never overlap
    for idx in np.ndindex(sub.shape):
        if sub[idx] != 0:  # standard form: equal diagonal, complex pair
            *b, i = idx
            blk = t[tuple(b)][i : i + 2, i : i + 2]
            np.testing.assert_allclose(blk[0, 0], blk[1, 1], atol=1e-5)
            assert blk[0, 1] * blk[1, 0] < 0


@pytest.mark.parametrize("output", ["real", "complex"])
def test_schur(backend, output):
    t, z = psl.schur(A4, output=output)
    tw, _ = jsl.schur(A4, output=output)
    assert np.asarray(t).dtype == np.asarray(tw).dtype
    _check_schur(A4, t, z, output == "real")


def test_schur_batched_special_and_errors(cpu):
    rot = np.array([[0.0, -1.0], [1.0, 0.0]], F)  # eigenvalues +-i
    sym = A3 + A3.T
    perm = np.roll(np.eye(4, dtype=F), 1, axis=0)
    for a in (np.stack([A3, sym]), rot, perm, np.array([[2.0]], F), np.triu(A4)):
        _check_schur(a, *psl.schur(a), real=True)
    ac = (A3 + 1j * _mat(3, 3)).astype(np.complex64)
    _check_schur(ac, *psl.schur(ac), real=False)
    with pytest.raises(ValueError):
        psl.schur(A3, output="quasi")
    with pytest.raises(ValueError):
        psl.schur(_mat(2, 3))


def test_rsf2csf(backend):
    tr, zr = (np.asarray(x) for x in jsl.schur(A4))
    t, z = psl.rsf2csf(tr, zr)
    tw, _ = jsl.rsf2csf(tr, zr)
    assert np.asarray(t).dtype == np.asarray(tw).dtype
    _check_schur(A4, t, z, real=False)


def test_rsf2csf_batched_and_errors(cpu):
    a = _mat(2, 4, 4)
    tr, zr = psl.schur(a)
    _check_schur(a, *psl.rsf2csf(tr, zr), real=False)
    with pytest.raises(ValueError):
        psl.rsf2csf(_mat(2, 3), _mat(2, 3))
    with pytest.raises(ValueError):
        psl.rsf2csf(_mat(3, 3), _mat(2, 2))


# --- sqrtm / funm / solve_sylvester --------------------------------------------------------------


def test_sqrtm(backend):
    spd = A3 @ A3.T + np.eye(3, dtype=F)
    _close(psl.sqrtm(spd), jsl.sqrtm(spd), 1e-4)
    _close(psl.sqrtm(A4), jsl.sqrtm(A4), 1e-4)


def test_sqrtm_singular_and_errors(cpu):
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 2.0], [3.0, 2.0, 1.0]], F)
    _close(psl.sqrtm(a), jsl.sqrtm(a), 1e-4)
    z = np.zeros((2, 2), F)
    _close(psl.sqrtm(z), jsl.sqrtm(z), 0)
    with pytest.raises(NotImplementedError):
        psl.sqrtm(a, blocksize=2)


def test_funm(backend):
    _close(psl.funm(A4, pj.sin), jsl.funm(A4, jj.sin), 1e-4)


def test_funm_disp_and_errors(cpu):
    f, err = psl.funm(A3, pj.exp, disp=False)
    fw, errw = jsl.funm(A3, jj.exp, disp=False)
    _close(f, fw, 1e-4)
    _close(err, errw, 1e-5)
    _close(psl.funm(A3, lambda x: x * x), jsl.funm(A3, lambda x: x * x), 1e-4)
    with pytest.raises(ValueError):
        psl.funm(_mat(2, 3), pj.exp)


def test_solve_sylvester(backend):
    a, b, c = A4, _mat(3, 3), _mat(4, 3)
    _close(psl.solve_sylvester(a, b, c), jsl.solve_sylvester(a, b, c), 1e-4)


def test_solve_sylvester_complex_batched_singular_and_errors(cpu):
    rng = np.random.default_rng(5)  # fixed draws (the shared RNG's depend on test order under xdist)
    a = (rng.standard_normal((2, 3, 3)) + 3 * np.eye(3)).astype(F)  # eigenvalue sums kept away from 0
    b = rng.standard_normal((2, 2, 2)).astype(F)
    c = (rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))).astype(np.complex64)
    _close(psl.solve_sylvester(a, b, c), jsl.solve_sylvester(a, b, c), 1e-4)
    x = np.asarray(psl.solve_sylvester(a, b, c))
    np.testing.assert_allclose(a @ x + x @ b, np.broadcast_to(c, x.shape), atol=1e-4)
    eye = np.eye(2, dtype=F)
    _close(psl.solve_sylvester(eye, -eye, eye), jsl.solve_sylvester(eye, -eye, eye))  # singular: NaN
    with pytest.raises(ValueError):
        psl.solve_sylvester(A3, A3, _mat(2, 3))
    with pytest.raises(ValueError):
        psl.solve_sylvester(A3, A3, A3, method="lu")


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp: (
            jx.scipy.linalg.hilbert(3),
            jx.scipy.linalg.hadamard(4),
            jx.scipy.linalg.hadamard(2, jnp.float32),
        ),
        lambda jx, jnp: jx.scipy.linalg.hadamard(3),
        lambda jx, jnp: (jx.scipy.linalg.helmert(4), jx.scipy.linalg.helmert(3, full=True)),
        lambda jx, jnp: (
            jx.scipy.linalg.circulant(jnp.array([1.0, 2, 3])),
            jx.scipy.linalg.circulant(jnp.arange(6).reshape(2, 3)),
        ),
        lambda jx, jnp: jx.scipy.linalg.companion(jnp.array([2.0, 2, 3, 4])),
        lambda jx, jnp: (
            jx.scipy.linalg.hankel(jnp.array([1, 2, 3]), jnp.array([3, 4, 5, 6])),
            jx.scipy.linalg.hankel(jnp.array([1.0, 2])),
        ),
        lambda jx, jnp: jx.scipy.linalg.leslie(jnp.array([0.1, 2.0, 1.0]), jnp.array([0.2, 0.8])),
        lambda jx, jnp: jx.scipy.linalg.fiedler(jnp.array([1.0, 4, 2])),
        lambda jx, jnp: [
            jx.scipy.linalg.convolution_matrix(jnp.array([1.0, 2, 3]), n, m)
            for n in (2, 4, 5)
            for m in ("full", "same", "valid")
        ],
        lambda jx, jnp: [jx.scipy.linalg.convolution_matrix(jnp.arange(5.0), 2, m) for m in ("full", "same", "valid")],
    ],
)
def test_scipy_linalg_builders(backend, fn):
    check(fn)


def test_toeplitz_hermitian_and_batched(backend):
    """r defaults to conj(c) (Hermitian for complex c), leading axes of c and r are batch axes, as JAX."""
    c = np.array([1, 2 + 1j, 1 + 2j], np.complex64)
    check(lambda jx, jnp, c: jx.scipy.linalg.toeplitz(c), c)
    check(lambda jx, jnp: jx.scipy.linalg.toeplitz(jnp.array([[1, 2, 3], [4, 5, 6]]), jnp.array([9.0, 8.0])))
    check(lambda jx, jnp: jx.scipy.linalg.toeplitz(jnp.array([1, 2]), jnp.array([[1, 2, 3], [3, 4, 5]])))
    check(lambda jx, jnp: (jx.scipy.linalg.toeplitz(jnp.array(5)), jx.scipy.linalg.toeplitz(jnp.zeros((2, 0)))))
    check(lambda jx, jnp: jx.grad(lambda c: jx.scipy.linalg.toeplitz(c).sum())(jnp.arange(3.0)))
    check(lambda jx, jnp: jx.scipy.linalg.toeplitz([1, 2]))  # arrays only


def test_scipy_linalg(backend):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)).astype(F)
    b = rng.standard_normal((5, 3)).astype(F)
    for A in (a, 3 * a, np.stack([a, 0.1 * a])):
        _close(psl.expm(A), jsl.expm(A), 1e-4)
    _close(psl.block_diag(a[:2, :3], F(2.0), b[0]), jsl.block_diag(a[:2, :3], F(2.0), b[0]))
    _close(psl.toeplitz(b[:, 0]), jsl.toeplitz(b[:, 0]))
    _close(psl.toeplitz(b[:, 0], b[:3, 1]), jsl.toeplitz(b[:, 0], b[:3, 1]))
    _close(psl.eigh(a, eigvals_only=True), jsl.eigh(a, eigvals_only=True), 1e-4)
    _close(psl.svd(b, compute_uv=False), jsl.svd(b, compute_uv=False), 1e-4)
    for mode in ("full", "economic", "r"):
        got, want = psl.qr(b, mode=mode), jsl.qr(b, mode=mode)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, 1e-4)
    u, p = psl.polar(a)
    ju, jp = jsl.polar(a)
    _close(u, ju, 1e-4)
    _close(p, jp, 1e-4)
