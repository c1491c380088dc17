"""Hessenberg and Schur decompositions of jax.scipy.linalg (Householder reductions and shifted QR
iterations written with lax loops) and what builds on Schur: rsf2csf, sqrtm, funm, solve_sylvester;
plus qr_multiply and eigh_tridiagonal.

Everything is composed from pyjax.numpy / lax operations, so every backend runs it unchanged. The
iterations use masks over iotas instead of dynamic slices, so leading batch axes just work. Loaded on
first use (it costs `import pyjax` time in the browser). It sits with numpy, below scipy, because
jnp.linalg.eig/eigvals and lax.linalg.eig/schur run its Schur iterations; scipy.linalg exports its
public functions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax import linalg as lax_linalg
from pyjax.lax.control_flow import fori_loop, while_loop
from pyjax.numpy import linalg as jla
from pyjax.numpy._promotion import _aval

__all__ = ["hessenberg", "qr_multiply", "eigh_tridiagonal", "schur", "rsf2csf", "sqrtm", "funm", "solve_sylvester"]


def _jnp():
    import pyjax.numpy as jnp

    return jnp


_JITTED: dict = {}


def _jitted(f, like, static=None):
    """f under jit, built once per device (that of `like`, else the default: traced constants live on
    one device); the loops then run as one cached program instead of op by op."""
    from pyjax.runtime.device import default_device

    key = (f, getattr(like, "_device", None) or default_device())
    if key not in _JITTED:
        from pyjax.api import jit

        _JITTED[key] = jit(f, static_argnums=static)
    return _JITTED[key]


# --- Householder helpers (real and complex; LAPACK's sign conventions) ---------------------------


def _is_complex(x) -> bool:
    return _aval(x).dtype.kind == "c"


def _conj(x):
    return _jnp().conj(x) if _is_complex(x) else x


def _abs2(x):
    jnp = _jnp()
    return jnp.real(x * jnp.conj(x)) if _is_complex(x) else x * x


def _reflector(x, k, rows, real_beta: bool):
    """(v, tau) with (I - tau v v^H)^H x = beta e_k, v[k] = 1, v zero above k (as LAPACK's xlarfg).

    With real_beta the result beta is real even when only x[k] is nonzero (a complex phase fix)."""
    jnp = _jnp()
    alpha = jnp.sum(jnp.where(rows == k, x, 0), axis=-1)
    tail = jnp.sum(jnp.where(rows > k, _abs2(x), 0), axis=-1)
    norm = jnp.sqrt(_abs2(alpha) + tail)
    beta = jnp.where(jnp.real(alpha) >= 0, -norm, norm)
    noop = tail == 0
    if real_beta and _is_complex(x):
        noop = noop & (jnp.imag(alpha) == 0)
    tau = jnp.where(noop, 0, (beta - alpha) / jnp.where(noop, 1, beta))
    denom = jnp.where(noop, 1, alpha - beta)
    v = jnp.where(rows > k, x / denom[..., None], 0) + jnp.where(rows == k, 1, 0).astype(x.dtype)
    return v.astype(x.dtype), tau.astype(x.dtype)


def _reflect_left(a, v, tau):
    """H^H a with H = I - tau v v^H."""
    jnp = _jnp()
    w = jnp.sum(_conj(v)[..., :, None] * a, axis=-2)
    return a - (_conj(tau)[..., None, None] * v[..., :, None]) * w[..., None, :]


def _reflect_right(a, v, tau):
    """a H with H = I - tau v v^H."""
    jnp = _jnp()
    w = jnp.sum(a * v[..., None, :], axis=-1)
    return a - (tau[..., None, None] * w[..., :, None]) * _conj(v)[..., None, :]


def _eye_batch(shape, n, dtype):
    jnp = _jnp()
    return jnp.broadcast_to(jnp.eye(n, dtype=dtype), tuple(shape) + (n, n))


def _householder_qr(a, real_beta: bool = True):
    """(q, r) with a = q r, q square (m x m), r (m x n) upper triangular, for real or complex a."""
    jnp = _jnp()
    m, n = a.shape[-2:]
    rows = lax.iota(dtypes.int32, m)
    cols = lax.iota(dtypes.int32, n)

    def step(j, carry):
        r, q = carry
        x = jnp.sum(jnp.where(cols == j, r, 0), axis=-1)
        v, tau = _reflector(x, j, rows, real_beta)
        return _reflect_left(r, v, tau), _reflect_right(q, v, tau)

    q0 = _eye_batch(a.shape[:-2], m, a.dtype)
    k = min(m, n)
    r, q = fori_loop(0, k, step, (a, q0)) if k else (a, q0)
    return q, jnp.triu(r)


def _hessenberg(a):
    """(h, q) with a = q h q^H, h upper Hessenberg (real subdiagonal, as LAPACK's xgehrd)."""
    jnp = _jnp()
    n = a.shape[-1]
    rows = lax.iota(dtypes.int32, n)

    def step(j, carry):
        h, q = carry
        x = jnp.sum(jnp.where(rows == j, h, 0), axis=-1)  # column j
        v, tau = _reflector(x, j + 1, rows, True)
        h = _reflect_right(_reflect_left(h, v, tau), v, tau)
        return h, _reflect_right(q, v, tau)

    q0 = _eye_batch(a.shape[:-2], n, a.dtype)
    h, q = fori_loop(0, n - 2, step, (a, q0)) if n > 2 else (a, q0)
    return jnp.triu(h, -1), q


def _square_input(fn: str, a):
    (a,) = jla._inexact(fn, a)
    s = _aval(a).shape
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Argument to {fn} must have shape [..., n, n], got {s}")
    return a


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Hessenberg form h of a (a = q h q^H, zero below the first subdiagonal); (h, q) with calc_q."""
    jnp = _jnp()
    a = _square_input("hessenberg", a)
    if a.shape[-1] == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    h, q = _hessenberg(a)
    return (h, q) if calc_q else h


# --- qr_multiply ---------------------------------------------------------------------------------


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
    jnp = _jnp()
    a, c = jla._inexact("qr_multiply", a, c)
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


# --- eigh_tridiagonal ----------------------------------------------------------------------------


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
    jnp = _jnp()
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


# --- Schur decomposition -------------------------------------------------------------------------


def _at(x, i, j):
    """x[..., i, j] for traced (batched) indices, by masking."""
    jnp = _jnp()
    n = x.shape[-1]
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    i = jnp.asarray(i)[..., None, None]
    j = jnp.asarray(j)[..., None, None]
    return jnp.sum(jnp.where((r == i) & (c == j), x, 0), axis=(-2, -1))


def _rotate(t, i, g11, g12, g21, g22, rows: bool):
    """Apply the 2x2 matrix g to rows (g @ t) or columns (t @ g) i and i+1 of t (batched i, g)."""
    jnp = _jnp()
    n = t.shape[-1]
    ax = -2 if rows else -1
    idx = lax.broadcasted_iota(dtypes.int32, (n, n), 0 if rows else 1)
    i = jnp.asarray(i)[..., None, None]
    g11, g12, g21, g22 = (jnp.asarray(g)[..., None, None] for g in (g11, g12, g21, g22))
    xi = jnp.sum(jnp.where(idx == i, t, 0), axis=ax, keepdims=True)
    xj = jnp.sum(jnp.where(idx == i + 1, t, 0), axis=ax, keepdims=True)
    if rows:
        ni, nj = g11 * xi + g12 * xj, g21 * xi + g22 * xj
    else:
        ni, nj = xi * g11 + xj * g21, xi * g12 + xj * g22
    return jnp.where(idx == i, ni, jnp.where(idx == i + 1, nj, t)).astype(t.dtype)


def _real_eps(x) -> float:
    dt = _aval(x).dtype
    return float(dtypes.finfo(dtypes.float64 if dt.itemsize == (16 if dt.kind == "c" else 8) else dtypes.float32).eps)


def _clean_subdiag(h, floor):
    """h with negligible subdiagonal entries set to exactly zero; also (..., n-1) subdiagonal."""
    jnp = _jnp()
    n = h.shape[-1]
    eps = _real_eps(h)
    s = jnp.diagonal(h, offset=-1, axis1=-2, axis2=-1)
    dg = jnp.abs(jnp.diagonal(h, axis1=-2, axis2=-1))
    scale = dg[..., :-1] + dg[..., 1:]
    small = (jnp.abs(s) <= eps * scale) | (jnp.abs(s) <= floor[..., None])
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    small_full = jnp.concatenate([small, jnp.zeros(small.shape[:-1] + (1,), bool)], axis=-1)[..., None, :]
    h = jnp.where(((r == c + 1) & small_full) | (r > c + 1), jnp.zeros((), h.dtype), h)
    return h, jnp.where(small, jnp.zeros((), s.dtype), s)


def _active(s, real: bool):
    """Which subdiagonal positions still need QR steps: nonzero ones (complex), or nonzero ones inside an
    unreduced block larger than 2 x 2 (real: 2 x 2 blocks are final)."""
    jnp = _jnp()
    nz = s != 0
    if not real:
        return nz
    f = jnp.zeros(nz.shape[:-1] + (1,), bool)
    prev = jnp.concatenate([f, nz[..., :-1]], axis=-1)
    nxt = jnp.concatenate([nz[..., 1:], f], axis=-1)
    return nz & (prev | nxt)


def _schur_iterate(h, z, real: bool):
    """Shifted QR iterations on Hessenberg h until it is (quasi-)triangular; z accumulates the rotations.

    Complex: Wilkinson single shifts. Real: explicit Francis double shifts (the QR of h^2 - s h + t I),
    keeping the arithmetic real. Each step works on the whole matrix; the shift comes from the bottom of
    the lowest unreduced block, and finished (batch) matrices are left alone."""
    jnp = _jnp()
    n = h.shape[-1]
    floor = (_real_eps(h) ** 2) * jnp.sqrt(jnp.sum(_abs2(h), axis=(-2, -1)))
    pos = lax.iota(dtypes.int32, n - 1)
    eye = jnp.eye(n, dtype=h.dtype)

    def status(h):
        h, s = _clean_subdiag(h, floor)
        act = _active(s, real)
        return h, s, act, ~jnp.any(act, axis=-1)

    def body(carry):
        h, z, it, _ = carry
        h, s, act, done = status(h)
        hi = jnp.max(jnp.where(act, pos, 0), axis=-1)
        a, b, c, d = _at(h, hi, hi), _at(h, hi, hi + 1), _at(h, hi + 1, hi), _at(h, hi + 1, hi + 1)
        exceptional = (it % 11) == 10
        if real:
            sh, t = a + d, a * d - b * c
            w = jnp.abs(c) + jnp.abs(_at(h, hi, hi - 1))
            sh = jnp.where(exceptional, 1.5 * w, sh)
            t = jnp.where(exceptional, w * w, t)
            m = jnp.matmul(h, h) - sh[..., None, None] * h + t[..., None, None] * eye
            q, _ = lax_linalg.qr(m)
        else:
            p = (a - d) / 2
            disc = jnp.sqrt(p * p + b * c)
            l1, l2 = (a + d) / 2 + disc, (a + d) / 2 - disc
            mu = jnp.where(jnp.abs(l1 - d) < jnp.abs(l2 - d), l1, l2)
            mu = jnp.where(exceptional, d + 0.75 * jnp.abs(c), mu)
            q, _ = _householder_qr(h - mu[..., None, None] * eye, real_beta=False)
        hn = jnp.matmul(jnp.matmul(_conj(jnp.swapaxes(q, -1, -2)), h), q)
        keep = done[..., None, None]
        h = jnp.where(keep, h, hn)
        z = jnp.where(keep, z, jnp.matmul(z, q))
        h, _, _, done = status(h)
        return h, z, it + 1, jnp.all(done)

    h, _, _, done = status(h)
    max_it = 30 * n
    h, z, _, _ = while_loop(lambda c: (c[2] < max_it) & ~c[3], body, (h, z, jnp.zeros((), dtypes.int32), jnp.all(done)))
    h, _ = _clean_subdiag(h, floor)
    return h, z


def _standardize_blocks(t, z):
    """Rotate each 2 x 2 diagonal block of a real quasi-triangular t into LAPACK's standard form: split
    into triangular when its eigenvalues are real, else equal diagonal entries (b c < 0)."""
    jnp = _jnp()
    n = t.shape[-1]

    def step(i, carry):
        t, z = carry
        c = _at(t, i + 1, i)
        block = c != 0
        a, b, d = _at(t, i, i), _at(t, i, i + 1), _at(t, i + 1, i + 1)
        p = (a - d) / 2
        disc = p * p + b * c
        sq = jnp.sqrt(jnp.maximum(disc, 0))
        x1 = p + jnp.where(p >= 0, sq, -sq)  # lambda - d for the eigenvalue further from d
        nr = jnp.sqrt(x1 * x1 + c * c)
        nr = jnp.where(nr > 0, nr, 1)
        th = 0.5 * jnp.arctan2(-(a - d), b + c)
        realev = disc >= 0
        cs = jnp.where(realev, x1 / nr, jnp.cos(th))
        sn = jnp.where(realev, c / nr, jnp.sin(th))
        cs = jnp.where(block, cs, 1).astype(t.dtype)
        sn = jnp.where(block, sn, 0).astype(t.dtype)
        t = _rotate(t, i, cs, sn, -sn, cs, rows=True)  # G^T t with G = [[cs, -sn], [sn, cs]]
        t = _rotate(t, i, cs, -sn, sn, cs, rows=False)
        z = _rotate(z, i, cs, -sn, sn, cs, rows=False)
        r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
        col = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
        ii = i
        split = (block & realev)[..., None, None]
        t = jnp.where(split & (r == ii + 1) & (col == ii), jnp.zeros((), t.dtype), t)
        mean = ((_at(t, i, i) + _at(t, i + 1, i + 1)) / 2)[..., None, None]
        eq = (block & ~realev)[..., None, None] & (r == col) & ((r == ii) | (r == ii + 1))
        return jnp.where(eq, mean, t), z

    return fori_loop(0, n - 1, step, (t, z))


def schur(a, output: str = "real"):
    """Schur decomposition a = z t z^H: t upper triangular ('complex') or quasi-triangular with 2 x 2 blocks
    for complex eigenvalue pairs ('real', for real a); z unitary."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got output={output!r}.")
    a = _square_input("schur", a)
    if output == "complex" and not _is_complex(a):
        a = a.astype(dtypes.complex128 if a.dtype.itemsize == 8 else dtypes.complex64)
    n = a.shape[-1]
    if n <= 1:
        return a, _eye_batch(a.shape[:-2], n, a.dtype)
    return _jitted(_schur_impl, a, (1,))(a, not _is_complex(a))


def _schur_impl(a, real: bool):
    jnp = _jnp()
    h, z = _hessenberg(a)
    t, z = _schur_iterate(h, z, real)
    if real:
        t, z = _standardize_blocks(t, z)
        return jnp.triu(t, -1), z
    return jnp.triu(t), z


def rsf2csf(T, Z, check_finite: bool = True):
    """Convert a real Schur form (T, Z) to the complex one: Givens rotations split each 2 x 2 block."""
    jnp = _jnp()
    T, Z = jnp.asarray(T), jnp.asarray(Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
    T, Z = jla._inexact("rsf2csf", T, Z)
    cdt = T.dtype if T.dtype.kind == "c" else (dtypes.complex128 if T.dtype.itemsize == 8 else dtypes.complex64)
    batch = jnp.broadcast_shapes(T.shape[:-2], Z.shape[:-2])
    T = jnp.broadcast_to(T.astype(cdt), batch + T.shape[-2:])
    Z = jnp.broadcast_to(Z.astype(cdt), batch + Z.shape[-2:])
    if T.shape[-1] <= 1:
        return T, Z
    return _jitted(_rsf2csf_impl, T)(T, Z)


def _rsf2csf_impl(T, Z):
    jnp = _jnp()
    n = T.shape[-1]
    cdt = T.dtype
    eps = _real_eps(T)
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    col = lax.broadcasted_iota(dtypes.int32, (n, n), 1)

    def step(k, carry):
        T, Z = carry
        m = n - k
        a, b, c, d = _at(T, m - 1, m - 1), _at(T, m - 1, m), _at(T, m, m - 1), _at(T, m, m)
        split = jnp.abs(c) > eps * (jnp.abs(a) + jnp.abs(d))
        p = (a - d) / 2
        mu = p + jnp.sqrt(p * p + b * c)  # an eigenvalue of the block, minus d
        rr = jnp.sqrt(_abs2(mu) + _abs2(c))
        rr = jnp.where(split & (rr > 0), rr, 1)
        cs = jnp.where(split, mu / rr, 1).astype(cdt)
        sn = jnp.where(split, c / rr, 0).astype(cdt)
        cc = jnp.conj(cs)
        T = _rotate(T, m - 1, cc, sn, -sn, cs, rows=True)  # G T
        T = _rotate(T, m - 1, cs, -jnp.conj(sn), jnp.conj(sn), cc, rows=False)  # T G^H
        Z = _rotate(Z, m - 1, cs, -jnp.conj(sn), jnp.conj(sn), cc, rows=False)
        T = jnp.where((r == m) & (col == m - 1), jnp.zeros((), cdt), T)
        return T, Z

    return fori_loop(1, n, step, (T, Z))


# --- functions of matrices through the Schur form ------------------------------------------------


def _superdiag_masks(n):
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    return c - r


def _sqrtm_triu(t):
    """Upper-triangular square root of upper-triangular t (Bjorck-Hammarling), one superdiagonal at a time."""
    jnp = _jnp()
    n = t.shape[-1]
    dg = jnp.sqrt(jnp.diagonal(t, axis1=-2, axis2=-1))
    off = _superdiag_masks(n)
    u = jnp.where(off == 0, dg[..., None, :], jnp.zeros((), t.dtype))
    den = dg[..., :, None] + dg[..., None, :]

    def step(k, u):
        # with diagonal k still zero, (u @ u)[i, i + k] is exactly sum_{i < l < i + k} u[i, l] u[l, i + k]
        rhs = t - jnp.matmul(u, u)
        val = jnp.where(rhs == 0, jnp.zeros((), t.dtype), rhs / jnp.where(den == 0, 1, den))
        return jnp.where(off == k, val, u)

    return fori_loop(1, n, step, u) if n > 1 else u


def sqrtm(A, blocksize: int = 1):
    """Principal matrix square root (complex), via the complex Schur form."""
    jnp = _jnp()
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    t, z = schur(A, output="complex")
    u = _jitted(_sqrtm_triu, t)(t)
    return jnp.matmul(jnp.matmul(z, u), jnp.conj(jnp.swapaxes(z, -1, -2)))


def funm(A, func: Callable, disp: bool = True):
    """f(A) for a scalar function f, by the Schur-Parlett recurrence (complex result); (f(A), error
    estimate) when disp is False."""
    jnp = _jnp()
    A = jnp.asarray(A)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise ValueError("expected square array_like input")
    t, z = schur(A)
    t, z = rsf2csf(t, z)
    n = t.shape[-1]
    dg = jnp.diagonal(t)
    f = jnp.diag(jnp.asarray(func(dg)).astype(t.dtype))
    off = _superdiag_masks(n)
    den = dg[None, :] - dg[:, None]  # t[j, j] - t[i, i]
    minden = jnp.abs(t[0, 0]) if n else jnp.zeros((), jnp.real(t).dtype)
    upper = off > 0
    minden = jnp.minimum(minden, jnp.min(jnp.where(upper, jnp.abs(den), jnp.inf))) if n > 1 else minden

    def step(k, f):
        # with diagonal k still zero, (t f - f t)[i, j] is the Parlett numerator for j = i + k
        s = jnp.matmul(t, f) - jnp.matmul(f, t)
        return jnp.where(off == k, jnp.where(den != 0, s / jnp.where(den != 0, den, 1), s), f)

    f = fori_loop(1, n, step, f) if n > 1 else f
    f = jnp.matmul(jnp.matmul(z, f), jnp.conj(z.T))
    if disp:
        return f
    tol = _real_eps(f)
    minden = jnp.where(minden == 0, tol, minden)
    err = jnp.where(
        jnp.any(jnp.isinf(f)),
        jnp.inf,
        jnp.minimum(1, jnp.maximum(tol, (tol / minden) * jla.norm(jnp.triu(t, 1), 1))),
    )
    return f, err


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """Solve A X + X B = C (Bartels-Stewart through complex Schur forms); all NaN when some eigenvalue
    sum of A and B is within tol of zero (the equation is then singular)."""
    jnp = _jnp()
    A, B, C = jla._inexact("solve_sylvester", A, B, C)
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\nB: {B.shape}\nC: {C.shape}")
    if method not in ("schur", "eigen"):
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".')
    batch = jnp.broadcast_shapes(A.shape[:-2], B.shape[:-2], C.shape[:-2])
    A, B, C = (jnp.broadcast_to(x, batch + x.shape[-2:]) for x in (A, B, C))
    r, u = schur(A, output="complex")
    s, v = schur(B, output="complex")
    x, lam = _jitted(_sylvester_impl, r)(r, u, s, v, C)
    if C.dtype.kind != "c":
        x = jnp.real(x)
    bad = jnp.any(lam < tol, axis=(-2, -1))[..., None, None]
    return jnp.where(bad, jnp.full((), math.nan, x.dtype), x)


def _sylvester_impl(r, u, s, v, C):
    """(x, |eigenvalue sums|) for A X + X B = C given the complex Schur forms A = u r u^H, B = v s v^H."""
    jnp = _jnp()
    m, n = C.shape[-2:]
    H = lambda x: jnp.conj(jnp.swapaxes(x, -1, -2))  # noqa: E731
    f = jnp.matmul(jnp.matmul(H(u), C.astype(r.dtype)), v)
    eye = jnp.eye(m, dtype=r.dtype)
    cols = lax.iota(dtypes.int32, n)
    sdiag = jnp.diagonal(s, axis1=-2, axis2=-1)

    def step(j, y):
        # R y_j + sum_{k <= j} y_k S[k, j] = f_j, with the columns k < j known (the others still zero)
        col_s = jnp.sum(jnp.where(cols == j, s, 0), axis=-1)  # s[..., :, j]
        fj = jnp.sum(jnp.where(cols == j, f, 0), axis=-1)
        rhs = fj - jnp.matmul(y, col_s[..., :, None])[..., 0]
        sjj = jnp.sum(jnp.where(cols == j, sdiag, 0), axis=-1)
        yj = jla.solve(r + sjj[..., None, None] * eye, rhs[..., :, None])
        return jnp.where(cols == j, yj, y)

    y = fori_loop(0, n, step, jnp.zeros(f.shape, f.dtype)) if n else f
    x = jnp.matmul(jnp.matmul(u, y), H(v))
    lam = jnp.diagonal(r, axis1=-2, axis2=-1)[..., :, None] + sdiag[..., None, :]
    return x, jnp.abs(lam)
