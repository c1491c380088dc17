"""hessenberg, qr_multiply and eigh_tridiagonal of jax.scipy.linalg: decompositions beyond those of
jnp.linalg, built on the Householder helpers of the Schur iterations (numpy._schur) and lax.linalg.
Loaded on first use (it costs `import pyjax` time in the browser)."""

from __future__ import annotations

from pyjax import numpy as jnp
from pyjax.lax import linalg as lax_linalg
from pyjax.numpy._promotion import _inexact
from pyjax.numpy._schur import _conj, _hessenberg, _householder_qr, _is_complex, _square_input

__all__ = ["hessenberg", "qr_multiply", "eigh_tridiagonal"]


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Hessenberg form h of a (a = q h q^H, zero below the first subdiagonal); (h, q) with calc_q."""
    a = _square_input("hessenberg", a)
    if a.shape[-1] == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    h, q = _hessenberg(a)
    return (h, q) if calc_q else h


def qr_multiply(
    a,
    c,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
):
    """QR-decompose a and multiply Q with c: (Q @ c, R) for mode='left', (c @ Q, R) for 'right'
    (conj(Q) with conjugate=True); Q is the economic (m x min(m, n)) factor."""
    a, c = _inexact("qr_multiply", a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    if pivoting:
        raise NotImplementedError("qr_multiply: pivoting=True is not supported by pyjax")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(
            f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(a.shape)} so Q has {k} "
            f"columns, but c has {c.shape[-2]} rows (expected {k})."
        )
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(a.shape)} so Q has {m} rows, "
            f"but c has {c.shape[-1]} columns (expected {m})."
        )
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    if _is_complex(a):
        q, r = _householder_qr(a)
        q, r = q[..., :, :k], r[..., :k, :]
    else:
        q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = _conj(q)
    out = jnp.matmul(q, c) if mode == "left" else jnp.matmul(c, q)
    if onedim:
        out = jnp.ravel(out)
    return out, jnp.triu(r)


def eigh_tridiagonal(
    d,
    e,
    *,
    eigvals_only: bool = False,
    select: str = "a",
    select_range=None,
    tol: float | None = None,
    key=None,
):
    """Eigenvalues (ascending) and, unless eigvals_only, eigenvectors (columns) of the symmetric (or
    Hermitian) tridiagonal matrix with diagonal d and off-diagonal e."""
    d, e = jnp.asarray(d), jnp.asarray(e)
    if d.dtype != e.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got {d.dtype} and {e.dtype}")
    if d.dtype.kind not in "fc":
        raise TypeError(
            "Only float32 and float64 inputs are supported as inputs to jax.scipy.linalg.eigh_tridiagonal, "
            f"got {d.dtype} and {e.dtype}"
        )
    n = d.shape[0]
    if select == "a":
        lo, hi = 0, n
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        lo, hi = int(select_range[0]), int(select_range[1]) + 1
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    if n <= 1:
        w = jnp.real(d)
        return w if eigvals_only else (w, jnp.eye(n, dtype=d.dtype))
    alpha = jnp.real(d)
    cplx = d.dtype.kind == "c"
    beta = jnp.abs(e) if cplx else e
    t = jnp.diag(alpha) + jnp.diag(beta, 1) + jnp.diag(beta, -1)
    v, w = lax_linalg.eigh(t)
    w = w[lo:hi]
    if eigvals_only:
        return w
    v = v[:, lo:hi]
    if cplx:  # T = D T' D^H with D = diag(phases) and T' real: T's eigenvectors are D v'
        absb = jnp.abs(e)
        ph = jnp.where(absb > 0, absb / jnp.where(absb > 0, e, 1), 1).astype(d.dtype)
        dvec = jnp.cumprod(jnp.concatenate([jnp.ones((1,), d.dtype), ph]))
        v = dvec[:, None] * v.astype(d.dtype)
    return w, v
