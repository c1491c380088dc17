"""Schur decomposition (Householder reduction to Hessenberg form, then shifted QR iterations written
with lax loops) and rsf2csf: what jnp.linalg.eig/eigvals and lax.linalg.eig/schur run, so it sits with
numpy, below scipy; scipy.linalg exports schur and rsf2csf and builds hessenberg, qr_multiply, sqrtm,
funm and solve_sylvester on its helpers.

Composed from numpy/lax operations, so every backend runs it unchanged. The iterations use masks over
iotas instead of dynamic slices, so leading batch axes just work. Loaded on first use (it costs
`import pyjax` time in the browser).
"""

from __future__ import annotations

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax import linalg as lax_linalg
from pyjax.lax.control_flow import fori_loop, while_loop
from pyjax.numpy import _creation, _elementwise, _manipulation, _products, _promotion, _reductions
from pyjax.numpy._promotion import _aval, _inexact

__all__ = ["schur", "rsf2csf"]


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
    return _elementwise.conj(x) if _is_complex(x) else x


def _abs2(x):
    return _elementwise.real(x * _elementwise.conj(x)) if _is_complex(x) else x * x


def _reflector(x, k, rows, real_beta: bool):
    """(v, tau) with (I - tau v v^H)^H x = beta e_k, v[k] = 1, v zero above k (as LAPACK's xlarfg).

    With real_beta the result beta is real even when only x[k] is nonzero (a complex phase fix)."""
    alpha = _reductions.sum(_elementwise.where(rows == k, x, 0), axis=-1)
    tail = _reductions.sum(_elementwise.where(rows > k, _abs2(x), 0), axis=-1)
    norm = _elementwise.sqrt(_abs2(alpha) + tail)
    beta = _elementwise.where(_elementwise.real(alpha) >= 0, -norm, norm)
    noop = tail == 0
    if real_beta and _is_complex(x):
        noop = noop & (_elementwise.imag(alpha) == 0)
    tau = _elementwise.where(noop, 0, (beta - alpha) / _elementwise.where(noop, 1, beta))
    denom = _elementwise.where(noop, 1, alpha - beta)
    v = _elementwise.where(rows > k, x / denom[..., None], 0) + _elementwise.where(rows == k, 1, 0).astype(x.dtype)
    return v.astype(x.dtype), tau.astype(x.dtype)


def _reflect_left(a, v, tau):
    """H^H a with H = I - tau v v^H."""
    w = _reductions.sum(_conj(v)[..., :, None] * a, axis=-2)
    return a - (_conj(tau)[..., None, None] * v[..., :, None]) * w[..., None, :]


def _reflect_right(a, v, tau):
    """a H with H = I - tau v v^H."""
    w = _reductions.sum(a * v[..., None, :], axis=-1)
    return a - (tau[..., None, None] * w[..., :, None]) * _conj(v)[..., None, :]


def _eye_batch(shape, n, dtype):
    return _promotion.broadcast_to(_creation.eye(n, dtype=dtype), tuple(shape) + (n, n))


def _householder_qr(a, real_beta: bool = True):
    """(q, r) with a = q r, q square (m x m), r (m x n) upper triangular, for real or complex a."""
    m, n = a.shape[-2:]
    rows = lax.iota(dtypes.int32, m)
    cols = lax.iota(dtypes.int32, n)

    def step(j, carry):
        r, q = carry
        x = _reductions.sum(_elementwise.where(cols == j, r, 0), axis=-1)
        v, tau = _reflector(x, j, rows, real_beta)
        return _reflect_left(r, v, tau), _reflect_right(q, v, tau)

    q0 = _eye_batch(a.shape[:-2], m, a.dtype)
    k = min(m, n)
    r, q = fori_loop(0, k, step, (a, q0)) if k else (a, q0)
    return q, _manipulation.triu(r)


def _hessenberg(a):
    """(h, q) with a = q h q^H, h upper Hessenberg (real subdiagonal, as LAPACK's xgehrd)."""
    n = a.shape[-1]
    rows = lax.iota(dtypes.int32, n)

    def step(j, carry):
        h, q = carry
        x = _reductions.sum(_elementwise.where(rows == j, h, 0), axis=-1)  # column j
        v, tau = _reflector(x, j + 1, rows, True)
        h = _reflect_right(_reflect_left(h, v, tau), v, tau)
        return h, _reflect_right(q, v, tau)

    q0 = _eye_batch(a.shape[:-2], n, a.dtype)
    h, q = fori_loop(0, n - 2, step, (a, q0)) if n > 2 else (a, q0)
    return _manipulation.triu(h, -1), q


def _square_input(fn: str, a):
    (a,) = _inexact(fn, a)
    s = _aval(a).shape
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Argument to {fn} must have shape [..., n, n], got {s}")
    return a


# --- Schur decomposition -------------------------------------------------------------------------


def _at(x, i, j):
    """x[..., i, j] for traced (batched) indices, by masking."""
    n = x.shape[-1]
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    i = _promotion.asarray(i)[..., None, None]
    j = _promotion.asarray(j)[..., None, None]
    return _reductions.sum(_elementwise.where((r == i) & (c == j), x, 0), axis=(-2, -1))


def _rotate(t, i, g11, g12, g21, g22, rows: bool):
    """Apply the 2x2 matrix g to rows (g @ t) or columns (t @ g) i and i+1 of t (batched i, g)."""
    n = t.shape[-1]
    ax = -2 if rows else -1
    idx = lax.broadcasted_iota(dtypes.int32, (n, n), 0 if rows else 1)
    i = _promotion.asarray(i)[..., None, None]
    g11, g12, g21, g22 = (_promotion.asarray(g)[..., None, None] for g in (g11, g12, g21, g22))
    xi = _reductions.sum(_elementwise.where(idx == i, t, 0), axis=ax, keepdims=True)
    xj = _reductions.sum(_elementwise.where(idx == i + 1, t, 0), axis=ax, keepdims=True)
    if rows:
        ni, nj = g11 * xi + g12 * xj, g21 * xi + g22 * xj
    else:
        ni, nj = xi * g11 + xj * g21, xi * g12 + xj * g22
    return _elementwise.where(idx == i, ni, _elementwise.where(idx == i + 1, nj, t)).astype(t.dtype)


def _real_eps(x) -> float:
    dt = _aval(x).dtype
    return float(dtypes.finfo(dtypes.float64 if dt.itemsize == (16 if dt.kind == "c" else 8) else dtypes.float32).eps)


def _clean_subdiag(h, floor):
    """h with negligible subdiagonal entries set to exactly zero; also (..., n-1) subdiagonal."""
    n = h.shape[-1]
    eps = _real_eps(h)
    s = _manipulation.diagonal(h, offset=-1, axis1=-2, axis2=-1)
    dg = _elementwise.abs(_manipulation.diagonal(h, axis1=-2, axis2=-1))
    scale = dg[..., :-1] + dg[..., 1:]
    small = (_elementwise.abs(s) <= eps * scale) | (_elementwise.abs(s) <= floor[..., None])
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    small_full = _manipulation.concatenate([small, _creation.zeros(small.shape[:-1] + (1,), bool)], axis=-1)[
        ..., None, :
    ]
    h = _elementwise.where(((r == c + 1) & small_full) | (r > c + 1), _creation.zeros((), h.dtype), h)
    return h, _elementwise.where(small, _creation.zeros((), s.dtype), s)


def _active(s, real: bool):
    """Which subdiagonal positions still need QR steps: nonzero ones (complex), or nonzero ones inside an
    unreduced block larger than 2 x 2 (real: 2 x 2 blocks are final)."""
    nz = s != 0
    if not real:
        return nz
    f = _creation.zeros(nz.shape[:-1] + (1,), bool)
    prev = _manipulation.concatenate([f, nz[..., :-1]], axis=-1)
    nxt = _manipulation.concatenate([nz[..., 1:], f], axis=-1)
    return nz & (prev | nxt)


def _schur_iterate(h, z, real: bool):
    """Shifted QR iterations on Hessenberg h until it is (quasi-)triangular; z accumulates the rotations.

    Complex: Wilkinson single shifts. Real: explicit Francis double shifts (the QR of h^2 - s h + t I),
    keeping the arithmetic real. Each step works on the whole matrix; the shift comes from the bottom of
    the lowest unreduced block, and finished (batch) matrices are left alone."""
    n = h.shape[-1]
    floor = (_real_eps(h) ** 2) * _elementwise.sqrt(_reductions.sum(_abs2(h), axis=(-2, -1)))
    pos = lax.iota(dtypes.int32, n - 1)
    eye = _creation.eye(n, dtype=h.dtype)

    def status(h):
        h, s = _clean_subdiag(h, floor)
        act = _active(s, real)
        return h, s, act, ~_reductions.any(act, axis=-1)

    def body(carry):
        h, z, it, _ = carry
        h, s, act, done = status(h)
        hi = _reductions.max(_elementwise.where(act, pos, 0), axis=-1)
        a, b, c, d = _at(h, hi, hi), _at(h, hi, hi + 1), _at(h, hi + 1, hi), _at(h, hi + 1, hi + 1)
        exceptional = (it % 11) == 10
        if real:
            sh, t = a + d, a * d - b * c
            w = _elementwise.abs(c) + _elementwise.abs(_at(h, hi, hi - 1))
            sh = _elementwise.where(exceptional, 1.5 * w, sh)
            t = _elementwise.where(exceptional, w * w, t)
            m = _products.matmul(h, h) - sh[..., None, None] * h + t[..., None, None] * eye
            q, _ = lax_linalg.qr(m)
        else:
            p = (a - d) / 2
            disc = _elementwise.sqrt(p * p + b * c)
            l1, l2 = (a + d) / 2 + disc, (a + d) / 2 - disc
            mu = _elementwise.where(_elementwise.abs(l1 - d) < _elementwise.abs(l2 - d), l1, l2)
            mu = _elementwise.where(exceptional, d + 0.75 * _elementwise.abs(c), mu)
            q, _ = _householder_qr(h - mu[..., None, None] * eye, real_beta=False)
        hn = _products.matmul(_products.matmul(_conj(_manipulation.swapaxes(q, -1, -2)), h), q)
        keep = done[..., None, None]
        h = _elementwise.where(keep, h, hn)
        z = _elementwise.where(keep, z, _products.matmul(z, q))
        h, _, _, done = status(h)
        return h, z, it + 1, _reductions.all(done)

    h, _, _, done = status(h)
    max_it = 30 * n
    h, z, _, _ = while_loop(
        lambda c: (c[2] < max_it) & ~c[3], body, (h, z, _creation.zeros((), dtypes.int32), _reductions.all(done))
    )
    h, _ = _clean_subdiag(h, floor)
    return h, z


def _standardize_blocks(t, z):
    """Rotate each 2 x 2 diagonal block of a real quasi-triangular t into LAPACK's standard form: split
    into triangular when its eigenvalues are real, else equal diagonal entries (b c < 0)."""
    n = t.shape[-1]

    def step(i, carry):
        t, z = carry
        c = _at(t, i + 1, i)
        block = c != 0
        a, b, d = _at(t, i, i), _at(t, i, i + 1), _at(t, i + 1, i + 1)
        p = (a - d) / 2
        disc = p * p + b * c
        sq = _elementwise.sqrt(_elementwise.maximum(disc, 0))
        x1 = p + _elementwise.where(p >= 0, sq, -sq)  # lambda - d for the eigenvalue further from d
        nr = _elementwise.sqrt(x1 * x1 + c * c)
        nr = _elementwise.where(nr > 0, nr, 1)
        th = 0.5 * _elementwise.arctan2(-(a - d), b + c)
        realev = disc >= 0
        cs = _elementwise.where(realev, x1 / nr, _elementwise.cos(th))
        sn = _elementwise.where(realev, c / nr, _elementwise.sin(th))
        cs = _elementwise.where(block, cs, 1).astype(t.dtype)
        sn = _elementwise.where(block, sn, 0).astype(t.dtype)
        t = _rotate(t, i, cs, sn, -sn, cs, rows=True)  # G^T t with G = [[cs, -sn], [sn, cs]]
        t = _rotate(t, i, cs, -sn, sn, cs, rows=False)
        z = _rotate(z, i, cs, -sn, sn, cs, rows=False)
        r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
        col = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
        ii = i
        split = (block & realev)[..., None, None]
        t = _elementwise.where(split & (r == ii + 1) & (col == ii), _creation.zeros((), t.dtype), t)
        mean = ((_at(t, i, i) + _at(t, i + 1, i + 1)) / 2)[..., None, None]
        eq = (block & ~realev)[..., None, None] & (r == col) & ((r == ii) | (r == ii + 1))
        return _elementwise.where(eq, mean, t), z

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
    h, z = _hessenberg(a)
    t, z = _schur_iterate(h, z, real)
    if real:
        t, z = _standardize_blocks(t, z)
        return _manipulation.triu(t, -1), z
    return _manipulation.triu(t), z


def rsf2csf(T, Z, check_finite: bool = True):
    """Convert a real Schur form (T, Z) to the complex one: Givens rotations split each 2 x 2 block."""
    T, Z = _promotion.asarray(T), _promotion.asarray(Z)
    if T.ndim < 2 or T.shape[-1] != T.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z.ndim < 2 or Z.shape[-1] != Z.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T.shape[-1] != Z.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z.shape} vs. T: {T.shape}")
    T, Z = _inexact("rsf2csf", T, Z)
    cdt = T.dtype if T.dtype.kind == "c" else (dtypes.complex128 if T.dtype.itemsize == 8 else dtypes.complex64)
    batch = _promotion.broadcast_shapes(T.shape[:-2], Z.shape[:-2])
    T = _promotion.broadcast_to(T.astype(cdt), batch + T.shape[-2:])
    Z = _promotion.broadcast_to(Z.astype(cdt), batch + Z.shape[-2:])
    if T.shape[-1] <= 1:
        return T, Z
    return _jitted(_rsf2csf_impl, T)(T, Z)


def _rsf2csf_impl(T, Z):
    n = T.shape[-1]
    cdt = T.dtype
    eps = _real_eps(T)
    r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    col = lax.broadcasted_iota(dtypes.int32, (n, n), 1)

    def step(k, carry):
        T, Z = carry
        m = n - k
        a, b, c, d = _at(T, m - 1, m - 1), _at(T, m - 1, m), _at(T, m, m - 1), _at(T, m, m)
        split = _elementwise.abs(c) > eps * (_elementwise.abs(a) + _elementwise.abs(d))
        p = (a - d) / 2
        mu = p + _elementwise.sqrt(p * p + b * c)  # an eigenvalue of the block, minus d
        rr = _elementwise.sqrt(_abs2(mu) + _abs2(c))
        rr = _elementwise.where(split & (rr > 0), rr, 1)
        cs = _elementwise.where(split, mu / rr, 1).astype(cdt)
        sn = _elementwise.where(split, c / rr, 0).astype(cdt)
        cc = _elementwise.conj(cs)
        T = _rotate(T, m - 1, cc, sn, -sn, cs, rows=True)  # G T
        T = _rotate(T, m - 1, cs, -_elementwise.conj(sn), _elementwise.conj(sn), cc, rows=False)  # T G^H
        Z = _rotate(Z, m - 1, cs, -_elementwise.conj(sn), _elementwise.conj(sn), cc, rows=False)
        T = _elementwise.where((r == m) & (col == m - 1), _creation.zeros((), cdt), T)
        return T, Z

    return fori_loop(1, n, step, (T, Z))
