"""Complex (Hermitian) cholesky, triangular_solve and eigh (lax.linalg, jnp.linalg, jax.scipy.linalg) against
real JAX, with their derivatives: the backends are real-only, so cholesky and triangular_solve run on the
interleaved real image of the complex matrix and eigh is a complex Jacobi iteration (pyjax/lax/linalg.py).

Eigenvectors are unique only up to a phase, so they are compared through phase-invariant quantities
(reconstruction, |v|, and gradients of functions of |v|)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from jax_compare import check

RS = np.random.RandomState(0)
_A = (RS.randn(2, 3, 3) + 1j * RS.randn(2, 3, 3)).astype(np.complex64)
H = (_A @ np.conj(np.swapaxes(_A, -1, -2)) + 3 * np.eye(3)).astype(np.complex64)  # Hermitian positive definite
B = (RS.randn(2, 3, 2) + 1j * RS.randn(2, 3, 2)).astype(np.complex64)
TOL = dict(rtol=2e-4, atol=2e-4)


def test_cholesky(backend):
    check(lambda jax, jnp, h: jnp.linalg.cholesky(h), H, **TOL)
    check(lambda jax, jnp, h: jnp.linalg.cholesky(h[0], upper=True), H, **TOL)
    check(lambda jax, jnp, h: jax.scipy.linalg.cholesky(h[0]), H, **TOL)
    check(lambda jax, jnp, h: jax.scipy.linalg.cholesky(h[0], lower=True), H, **TOL)
    check(lambda jax, jnp, h, b: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(h[1]), b[1]), H, B, **TOL)
    check(lambda jax, jnp, h: jax.vmap(jnp.linalg.cholesky)(h), H, **TOL)


def test_cholesky_derivatives(backend):
    check(lambda jax, jnp, h: jax.grad(lambda a: jnp.abs(jnp.linalg.cholesky(a)).sum())(h[0]), H, **TOL)
    check(lambda jax, jnp, h: jax.grad(lambda a: jnp.linalg.cholesky(a).real.sum())(h[1]), H, **TOL)
    e = np.eye(3, dtype=np.complex64) + 0.5j * np.triu(np.ones((3, 3)), 1).astype(np.complex64)
    check(lambda jax, jnp, h, t: jax.jvp(jnp.linalg.cholesky, (h[0],), (t + t.conj().T,))[1], H, e, **TOL)


def test_triangular_solve_all_flags():
    a = (RS.randn(3, 3) + 1j * RS.randn(3, 3) + 3 * np.eye(3)).astype(np.complex64)
    flags = list(itertools.product([True, False], repeat=5))

    def run(jax, jnp, a, b, bt):
        return [
            jax.lax.linalg.triangular_solve(
                a, b if ls else bt, left_side=ls, lower=lo, transpose_a=ta, conjugate_a=ca, unit_diagonal=ud
            )
            for ls, lo, ta, ca, ud in flags
        ]

    check(run, a, B[0], B[0].T, **TOL)
    check(lambda jax, jnp, a, b: jax.lax.linalg.triangular_solve(a.real, b, left_side=True), a, B[0])  # dtypes differ


def test_triangular_solve_derivatives(backend):
    a = (RS.randn(3, 3) + 1j * RS.randn(3, 3) + 3 * np.eye(3)).astype(np.complex64)

    def f(jax, jnp, a, b):
        def loss(a, b):
            x = jax.lax.linalg.triangular_solve(a, b, left_side=True, lower=True, transpose_a=True, conjugate_a=True)
            return jnp.abs(x).sum()

        return jax.grad(loss, argnums=(0, 1))(a, b)

    check(f, a, B[0], **TOL)


def _phase_free(jax, jnp, w, v):
    return w, jnp.abs(v), (v * w[..., None, :]) @ jnp.conj(jnp.swapaxes(v, -1, -2))


def test_eigh(backend):
    check(lambda jax, jnp, h: _phase_free(jax, jnp, *jnp.linalg.eigh(h)), H, **TOL)
    check(lambda jax, jnp, h: jax.scipy.linalg.eigh(h[1], eigvals_only=True), H, **TOL)


def test_eigh_one_triangle_and_degenerate(backend):
    # lax's symmetrize_input=False reads one triangle and the diagonal's real part
    skew = H[0] + np.triu(np.full((3, 3), 5 - 2j), 1).astype(np.complex64) + 1j * np.eye(3, dtype=np.complex64)
    check(lambda jax, jnp, h: jax.lax.linalg.eigh(h, symmetrize_input=False)[1], skew, **TOL)
    check(lambda jax, jnp, h: jnp.linalg.eigvalsh(h, UPLO="U", symmetrize_input=False), skew, **TOL)
    check(lambda jax, jnp: jnp.linalg.eigh(jnp.eye(4, dtype=jnp.complex64))[0])


def test_eigh_derivatives(backend):
    check(lambda jax, jnp, h: jax.grad(lambda a: jnp.linalg.eigvalsh(a)[0])(h[0]), H, **TOL)
    check(lambda jax, jnp, h: jax.grad(lambda a: jnp.abs(jnp.linalg.eigh(a)[1]).sum())(h[0]), H, **TOL)
    e = np.eye(3, dtype=np.complex64)
    check(lambda jax, jnp, h, t: jax.jvp(jnp.linalg.eigvalsh, (h[1],), (t,))[1], H, e, **TOL)


@pytest.mark.parametrize("fn", ["cholesky", "eigh"])
def test_first_complex_value_from_numpy(fn):
    """A lax op whose first complex operand ever is a numpy array is rewritten too (the runtime learns
    of complex values only when it converts it); run in a fresh interpreter."""
    import subprocess
    import sys

    code = (
        "import numpy as np, pyjax\n"
        f"out = pyjax.lax.linalg.{fn}(np.eye(2, dtype=np.complex64))\n"
        "print(np.asarray(out[-1] if isinstance(out, (list, tuple)) else out).dtype)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]


def test_built_on_them(backend):
    """Hermitian svd / pinv (through eigh) and lu_solve's trans=2 (a^H x = b) conjugate as JAX."""
    check(lambda jax, jnp, h: jnp.linalg.pinv(h[0], hermitian=True), H, **TOL)
    check(
        lambda jax, jnp, h: (lambda u, s, vh: (u * s[..., None, :]) @ vh)(*jnp.linalg.svd(h, hermitian=True)), H, **TOL
    )
    check(
        lambda jax, jnp, h, b: jax.scipy.linalg.lu_solve(jax.scipy.linalg.lu_factor(h[0]), b[0], trans=2), H, B, **TOL
    )
    check(lambda jax, jnp, h, b: jax.scipy.linalg.solve(h[1], b[1], assume_a="pos"), H, B, **TOL)
