"""jax.scipy.linalg: scipy-style triangular, Cholesky and LU solvers on top of lax.linalg, plus
qr / eigh / svd / polar (from lax.linalg's compositions), expm and a few matrix builders.

Leading axes are batch axes; everything is differentiable. scipy's defaults differ from numpy's
(e.g. `cholesky` returns the upper factor unless lower=True); these follow scipy, like JAX.
"""

from __future__ import annotations

import math

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax import linalg as lax_linalg
from pyjax.lax.control_flow import fori_loop
from pyjax.numpy import _creation, _elementwise, _manipulation, _products, _reductions
from pyjax.numpy import linalg as jla
from pyjax.numpy._promotion import _aval, _check_arraylike, asarray, broadcast_to
from pyjax.numpy._sorting import argsort


def _trans_flags(trans) -> tuple[bool, bool]:
    if trans in (0, "N"):
        return False, False
    if trans in (1, "T"):
        return True, False
    if trans in (2, "C"):
        return True, True
    raise ValueError(f"Invalid 'trans' value {trans}")


def _as_matrix_rhs(a, b):
    """(b as (..., m, k), whether b was a vector): b is a vector when it has one axis fewer than a."""
    is_vec = _aval(b).ndim == _aval(a).ndim - 1
    return (_manipulation.expand_dims(b, -1) if is_vec else b), is_vec


def solve_triangular(
    a,
    b,
    trans=0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug=None,
    check_finite: bool = True,
):
    """Solve op(a) x = b for triangular a (op per trans: 0/'N' none, 1/'T' transpose, 2/'C' adjoint)."""
    transpose_a, conjugate_a = _trans_flags(trans)
    a, b = jla._inexact("solve_triangular", a, b)
    bm, is_vec = _as_matrix_rhs(a, b)
    out = lax_linalg.triangular_solve(
        a,
        bm,
        left_side=True,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return out[..., 0] if is_vec else out


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Cholesky factor: upper U (a = U^H U) by default, lower L with lower=True.

    Like scipy, only the triangle being factored is read (no symmetrization).
    """
    (a,) = jla._inexact("cholesky", a)
    L = lax_linalg.cholesky(a if lower else lax_linalg._H(a), symmetrize_input=False)
    return L if lower else lax_linalg._H(L)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower) for cho_solve; c is the clean triangular Cholesky factor."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve a x = b given cho_factor(a)."""
    c, lower = c_and_lower
    c, b = jla._inexact("cho_solve", c, b)
    bm, is_vec = _as_matrix_rhs(c, b)
    # a = L L^H (lower) or U^H U (upper): two triangular solves.
    y = lax_linalg.triangular_solve(c, bm, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)
    return x[..., 0] if is_vec else x


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): packed LU factors and LAPACK-style 0-based pivot rows."""
    (a,) = jla._inexact("lu_factor", a)
    lu_mat, piv, _ = lax_linalg.lu(a)
    return lu_mat, piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """Solve a x = b (trans 0), a^T x = b (1) or a^H x = b (2) given lu_factor(a)."""
    lu_mat, piv = lu_and_piv
    transpose_a, conjugate_a = _trans_flags(trans)
    lu_mat, b = jla._inexact("lu_solve", lu_mat, b)
    m = _aval(lu_mat).shape[-1]
    perm = lax_linalg.lu_pivots_to_permutation(piv, m)
    bm, is_vec = _as_matrix_rhs(lu_mat, b)
    batch = _aval(lu_mat).shape[:-2]
    if _aval(bm).shape[:-2] != batch:
        bm = broadcast_to(bm, batch + _aval(bm).shape[-2:])
    if not transpose_a:
        x = jla._lu_solve_matrix(lu_mat, perm, bm)
    else:  # a = P^T L U, so a^T x = b  <=>  x = P^T L^-T U^-T b (a^H likewise, conjugated)
        y = lax_linalg.triangular_solve(
            lu_mat, bm, left_side=True, lower=False, transpose_a=True, conjugate_a=conjugate_a
        )
        z = lax_linalg.triangular_solve(
            lu_mat, y, left_side=True, lower=True, transpose_a=True, conjugate_a=conjugate_a, unit_diagonal=True
        )
        x = lax_linalg.permute_rows(z, argsort(perm, axis=-1))
    return x[..., 0] if is_vec else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) when permute_l."""
    (a,) = jla._inexact("lu", a)
    lu_mat, _, perm = lax_linalg.lu(a)
    s = _aval(a).shape
    m, n = s[-2:]
    k = min(m, n)
    dt = _aval(a).dtype
    nd = len(s)
    l_part = lax_linalg._tril(lu_mat[..., :, :k], -1) + _creation.eye(m, k, dtype=dt)
    u_part = lax_linalg._triu(lu_mat[..., :k, :])
    # p[i, j] = 1 where perm[j] == i
    pmat = lax.convert_element_type(
        lax.eq(
            lax.broadcast_in_dim(perm, s[:-2] + (m, m), tuple(range(nd - 2)) + (nd - 1,)),
            lax.broadcasted_iota(_aval(perm).dtype, s[:-2] + (m, m), nd - 2),
        ),
        dt,
    )
    if permute_l:
        return _products.matmul(pmat, l_part), u_part
    return pmat, l_part, u_part


def solve(
    a,
    b,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
):
    """Solve a x = b; assume_a='pos' uses Cholesky, 'sym'/'her'/'gen' use LU."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"Expected assume_a to be one of 'gen', 'sym', 'her', 'pos'; got {assume_a!r}")
    a, b = jla._inexact("solve", a, b)
    if assume_a != "pos":
        bm, is_vec = _as_matrix_rhs(a, b)
        x = jla.solve(a, bm)
        return x[..., 0] if is_vec else x
    return cho_solve(cho_factor(a, lower=lower), b)


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """Determinant of each square matrix."""
    return jla.det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """Inverse of each square matrix."""
    return jla.inv(a)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False, check_finite: bool = True):
    """QR decomposition, scipy-style: mode 'full' (q: m x m), 'economic' (q: m x k) or 'r' ((r,) only)."""
    if mode not in ("full", "economic", "r", "raw"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if mode == "raw" or pivoting:
        raise NotImplementedError("jax.scipy.linalg.qr: mode='raw' and pivoting=True are not supported by pyjax")
    (a,) = jla._inexact("qr", a)
    q, r = lax_linalg.qr(a, full_matrices=mode != "economic")
    return (r,) if mode == "r" else (q, r)


def eigh(
    a,
    b=None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals=None,
    type: int = 1,
    check_finite: bool = True,
):
    """Eigenvalues (ascending) and eigenvectors of a symmetric matrix (symmetrized first, as JAX does)."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    (a,) = jla._inexact("eigh", a)
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def svd(
    a,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
):
    """Singular value decomposition (u, s, vh), s descending; s alone if not compute_uv."""
    (a,) = jla._inexact("svd", a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def polar(a, side: str = "right", *, method: str = "qdwh", eps=None, max_iterations=None):
    """Polar decomposition (u, p): a = u p (side='right') or p u (side='left'), from the SVD."""
    if side not in ("right", "left"):
        raise ValueError(f"side={side!r} must be 'right' or 'left'")
    (a,) = jla._inexact("polar", a)
    u, s, vh = lax_linalg.svd(a, full_matrices=False)
    unitary = _products.matmul(u, vh)
    if side == "right":
        p = _products.matmul(lax_linalg._T(vh) * s[..., None, :], vh)
    else:
        p = _products.matmul(u * s[..., None, :], lax_linalg._T(u))
    return unitary, p


_PADE13 = (
    64764752532480000.0,
    32382376266240000.0,
    7771770303897600.0,
    1187353796428800.0,
    129060195264000.0,
    10559470521600.0,
    670442572800.0,
    33522128640.0,
    1323241920.0,
    40840800.0,
    960960.0,
    16380.0,
    182.0,
    1.0,
)
_THETA13 = 5.371920351148152


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """Matrix exponential by scaling and squaring with a degree-13 Pade approximant (Higham 2005)."""

    (A,) = jla._inexact("expm", A)
    jla._square("expm", A)
    n = _aval(A).shape[-1]
    dt = _aval(A).dtype
    norm1 = _reductions.max(_reductions.sum(_elementwise.abs(A), axis=-2), axis=-1, initial=0.0)  # 0 for a 0x0 matrix
    scale = _elementwise.maximum(0.0, _elementwise.ceil(_elementwise.log2(norm1 / _THETA13)))
    scale = _elementwise.where(_elementwise.isfinite(scale), scale, max_squarings + 1.0)
    x = A / _elementwise.exp2(scale)[..., None, None].astype(dt)
    b = _PADE13
    eye = _creation.eye(n, dtype=dt)
    x2 = _products.matmul(x, x)
    x4 = _products.matmul(x2, x2)
    x6 = _products.matmul(x4, x2)
    u = _products.matmul(
        x, _products.matmul(x6, b[13] * x6 + b[11] * x4 + b[9] * x2) + b[7] * x6 + b[5] * x4 + b[3] * x2 + b[1] * eye
    )
    v = _products.matmul(x6, b[12] * x6 + b[10] * x4 + b[8] * x2) + b[6] * x6 + b[4] * x4 + b[2] * x2 + b[0] * eye
    r = jla.solve(v - u, v + u)
    steps = scale[..., None, None]
    r = fori_loop(0, max_squarings, lambda i, r: _elementwise.where(i < steps, _products.matmul(r, r), r), r)
    return _elementwise.where(steps > max_squarings, float("nan"), r)


def block_diag(*arrs):
    """Block-diagonal matrix from 0-, 1- or 2-D blocks (lower-rank blocks become rows)."""
    import pyjax.numpy as jnp

    if not arrs:
        return jnp.zeros((1, 0))
    blocks = [jnp.asarray(a) for a in arrs]
    blocks = [jnp.reshape(b, (1,) * (2 - b.ndim) + b.shape) if b.ndim < 2 else b for b in blocks]
    if any(b.ndim != 2 for b in blocks):
        raise ValueError("Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions")
    dt = jnp.result_type(*blocks)
    cols = sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        rows.append(jnp.pad(b.astype(dt), ((0, 0), (start, cols - start - b.shape[1]))))
        start += b.shape[1]
    return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """Toeplitz matrices with first column c (..., m) and first row r (..., n): entry (i, j) is c[i - j]
    below the diagonal and r[j - i] above it (r[0] is ignored); r defaults to conj(c), so a complex c
    with a real c[0] gives a Hermitian matrix. Leading axes of c and r broadcast: a batch of matrices."""
    import pyjax.numpy as jnp

    _check_arraylike("toeplitz", c, *(() if r is None else (r,)))
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.conj(c) if r is None else jnp.atleast_1d(jnp.asarray(r))
    dt = jnp.result_type(c, r)
    m, n = c.shape[-1], r.shape[-1]
    batch = jnp.broadcast_shapes(c.shape[:-1], r.shape[:-1])
    if m == 0 or n == 0:
        return jnp.zeros(batch + (m, n), dt)
    diff = lax.broadcasted_iota(jnp.int32, (m, n), 0) - lax.broadcasted_iota(jnp.int32, (m, n), 1)
    from_c = jnp.take(c.astype(dt), jnp.clip(diff, 0, m - 1), axis=-1)
    from_r = jnp.take(r.astype(dt), jnp.clip(-diff, 0, n - 1), axis=-1)
    return jnp.broadcast_to(jnp.where(diff >= 0, from_c, from_r), batch + (m, n))


__all__ = [
    "solve_triangular",
    "cholesky",
    "cho_factor",
    "cho_solve",
    "lu_factor",
    "lu_solve",
    "lu",
    "solve",
    "det",
    "inv",
    "qr",
    "eigh",
    "svd",
    "polar",
    "expm",
    "block_diag",
    "toeplitz",
]


# --- special matrix builders (scipy.linalg's) ---------------------------------------------------


def _vector(name: str, x):
    import pyjax.numpy as jnp

    x = jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{name}: input must be one-dimensional, got shape {x.shape}")
    return x


def hilbert(n: int):
    """The n x n Hilbert matrix H[i, j] = 1 / (i + j + 1)."""
    import pyjax.numpy as jnp

    i = jnp.arange(n, dtype=jnp.float32 if n else None)
    return 1.0 / (i[:, None] + i[None, :] + 1.0)


def hadamard(n: int, dtype=int):
    """The n x n Hadamard matrix (Sylvester's construction); n must be a power of 2."""
    import pyjax.numpy as jnp

    if n < 1 or n & (n - 1):
        raise ValueError("n must be an positive a power of 2 integer")
    h = jnp.ones((1, 1), dtype=dtype)
    while h.shape[0] < n:
        h = jnp.block([[h, h], [h, -h]])
    return h


def helmert(n: int, full: bool = False):
    """The Helmert matrix of order n (without its first row unless full)."""
    import pyjax.numpy as jnp

    k = jnp.arange(1, n, dtype=jnp.float32)[:, None]
    j = jnp.arange(n, dtype=jnp.float32)[None, :]
    rows = jnp.where(j < k, 1.0, jnp.where(j == k, -k, 0.0)) / jnp.sqrt(k * (k + 1))
    if full:
        return jnp.concatenate([jnp.full((1, n), 1.0 / jnp.sqrt(jnp.float32(n))), rows], axis=0)
    return rows


def circulant(c):
    """The circulant matrix whose first column is c (batched over leading axes of c)."""
    import pyjax.numpy as jnp

    c = jnp.asarray(c)
    n = c.shape[-1]
    idx = (jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n
    return c[..., idx]


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest degree first)."""
    import pyjax.numpy as jnp

    a = _vector("companion", a)
    if a.shape[0] < 2:
        raise ValueError("The length of `a` must be at least 2.")
    n = a.shape[0] - 1
    first = -a[1:] / a[0]
    return jnp.concatenate([first[None, :], jnp.eye(n - 1, n, dtype=first.dtype)], axis=0)


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (r defaults to zeros); r[0] is ignored."""
    import pyjax.numpy as jnp

    c = jnp.ravel(jnp.asarray(c))
    r = jnp.zeros_like(c) if r is None else jnp.ravel(jnp.asarray(r))
    vals = jnp.concatenate([c, r[1:].astype(jnp.result_type(c, r))])
    m, n = c.shape[0], r.shape[0]
    return vals[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def leslie(f, s):
    """The Leslie matrix from fecundity coefficients f (length n) and survival coefficients s (n - 1)."""
    import pyjax.numpy as jnp

    f, s = _vector("leslie", f), _vector("leslie", s)
    if f.shape[0] != s.shape[0] + 1:
        raise ValueError("Incorrect lengths for f and s. The length of s must be one less than the length of f.")
    dt = jnp.result_type(f, s)
    n = s.shape[0]
    below = jnp.concatenate([jnp.diag(s).astype(dt), jnp.zeros((n, 1), dt)], axis=1)
    return jnp.concatenate([f[None, :].astype(dt), below], axis=0)


def fiedler(a):
    """The symmetric Fiedler matrix F[i, j] = |a[i] - a[j]|."""
    import pyjax.numpy as jnp

    a = _vector("fiedler", a)
    return jnp.abs(a[:, None] - a[None, :])


def convolution_matrix(a, n: int, mode: str = "full"):
    """The matrix A with A @ v == jnp.convolve(a, v, mode) for v of length n."""
    import pyjax.numpy as jnp

    a = _vector("convolution_matrix", a)
    if n <= 0:
        raise ValueError("n must be a positive integer")
    m = a.shape[0]
    if mode == "full":
        rows, off = m + n - 1, 0
    elif mode == "same":
        rows, off = max(m, n), (min(m, n) - 1) // 2
    elif mode == "valid":
        rows, off = max(m, n) - min(m, n) + 1, min(m, n) - 1
    else:
        raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r}")
    k = jnp.arange(rows)[:, None] + off - jnp.arange(n)[None, :]
    return jnp.where((k >= 0) & (k < m), a[jnp.clip(k, 0, m - 1)], jnp.zeros((), a.dtype))


__all__ += ["hilbert", "hadamard", "helmert", "circulant", "companion", "hankel", "leslie", "fiedler"]
__all__ += ["convolution_matrix"]

# --- more matrix builders (closed forms) and expm_frechet ------------------------------------------


def _binom(n: int, k: int) -> int:
    return math.comb(n, k) if 0 <= k <= n else 0


def _check_kind(kind):
    kind = "symmetric" if kind is None else kind
    valid = ["symmetric", "lower", "upper"]
    if kind not in valid:
        raise ValueError(f"Expected kind to be one of: {valid}; got {kind}")
    return kind


def _from_rows(rows: list[list[int]], n: int, dtype):
    return asarray([[float(v) for v in r] for r in rows], dtype=dtype) if n else _creation.zeros((0, 0), dtype)


def pascal(n: int, kind: str | None = None):
    """The n x n Pascal matrix (binomial coefficients), 'symmetric' (default), 'lower' or 'upper'; float32."""
    kind = _check_kind(kind)
    if kind == "symmetric":
        rows = [[_binom(i + j, i) for j in range(n)] for i in range(n)]
    else:
        rows = [[_binom(i, j) for j in range(n)] for i in range(n)]
        if kind == "upper":
            rows = [list(r) for r in zip(*rows)]
    return _from_rows(rows, n, dtypes.float32)


def invpascal(n: int, kind: str | None = None):
    """Inverse of pascal(n, kind), from the closed form (-1)^(i-j) C(i, j) of the lower factor's inverse."""
    kind = _check_kind(kind)
    low = [[(-1) ** (i - j) * _binom(i, j) for j in range(n)] for i in range(n)]
    if kind == "lower":
        rows = low
    elif kind == "upper":
        rows = [list(r) for r in zip(*low)]
    else:  # P = L L^T, so P^-1 = L^-T L^-1
        rows = [[sum(low[k][i] * low[k][j] for k in range(n)) for j in range(n)] for i in range(n)]
    return _from_rows(rows, n, dtypes.default_float())


def invhilbert(n: int):
    """Inverse of the n x n Hilbert matrix from its closed form (exact integers, then rounded to float)."""
    rows = [
        [
            (-1) ** (i + j) * (i + j + 1) * _binom(n + i, n - j - 1) * _binom(n + j, n - i - 1) * _binom(i + j, i) ** 2
            for j in range(n)
        ]
        for i in range(n)
    ]
    return _from_rows(rows, n, dtypes.default_float())


def fiedler_companion(a):
    """Fiedler's pentadiagonal companion matrix of the polynomial a (highest degree first, batched over
    leading axes); its eigenvalues are the polynomial's roots."""
    (a,) = jla._inexact("fiedler_companion", a)
    a = _manipulation.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError(
            f"fiedler_companion requires the last axis of 'a' to have nonzero length, but got an array of shape {a.shape}."
        )
    n = a.shape[-1] - 1
    batch = a.shape[:-1]
    if n == 0:
        return _creation.zeros(batch + (0, 0), a.dtype)
    a = a / a[..., :1]
    if n == 1:
        return -a[..., 1:, None]
    i = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    j = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    even = i % 2 == 0
    # which coefficient (negated) sits at each cell; index 0 marks "none"
    coef = _elementwise.where((i == 0) & (j == 0), 1, 0)
    coef = _elementwise.where(even & (j == i + 1), i + 2, coef)
    coef = _elementwise.where(even & (i >= 2) & (j == i - 1), i + 1, coef)
    ones = ((i == 1) & (j == 0)) | (even & (j == i + 2)) | (~even & (i >= 3) & (j == i - 2))
    vals = -a[..., _elementwise.clip(coef, 0, n)]
    return _elementwise.where(
        ones, _creation.ones((), a.dtype), _elementwise.where(coef > 0, vals, _creation.zeros((), a.dtype))
    )


def dft(n: int, scale: str | None = None, *, dtype=None):
    """The n x n discrete Fourier transform matrix W[i, j] = exp(-2 pi i ij / n), optionally scaled by
    1/sqrt(n) ('sqrtn') or 1/n ('n')."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    dt = dtypes.complex64 if dtype is None else dtypes.dtype(dtype)
    if dt.kind != "c":
        raise ValueError(f"dtype must be a complex floating-point type; got {dt}.")
    real = dtypes.float64 if dt.itemsize == 16 else dtypes.float32
    i = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
    j = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
    # (i * j) mod n keeps the angle small, so large n loses no accuracy
    ang = ((i * j) % max(n, 1)).astype(real) * (-2.0 * math.pi / max(n, 1))
    w = lax.complex(_elementwise.cos(ang), _elementwise.sin(ang)).astype(dt)
    if scale == "sqrtn":
        w = w / math.sqrt(n)
    elif scale == "n":
        w = w / n
    return w


# --- expm_frechet -------------------------------------------------------------------------------


def expm_frechet(A, E, *, method: str | None = None, compute_expm: bool = True):
    """Frechet derivative of expm at A in direction E (the jvp of expm); (expm(A), L(A, E)) by default."""
    from pyjax.api import jvp

    A, E = asarray(A), asarray(E)
    if A.ndim < 2 or A.shape[-2] != A.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A.shape}")
    if E.ndim < 2 or E.shape[-2] != E.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E.shape}")
    if A.shape != E.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={A.shape} E.shape={E.shape}")
    A, E = jla._inexact("expm_frechet", A, E)
    expm_a, frechet = jvp(lambda x: expm(x, upper_triangular=False, max_squarings=16), (A,), (E,))
    return (expm_a, frechet) if compute_expm else frechet


__all__ += ["pascal", "invpascal", "invhilbert", "fiedler_companion", "dft", "expm_frechet"]

_LAZY = frozenset(("schur", "rsf2csf"))  # numpy._schur
_LAZY_DECOMPOSITIONS = frozenset(("eigh_tridiagonal", "hessenberg", "qr_multiply"))
_LAZY_SCHUR_METHODS = frozenset(("funm", "solve_sylvester", "sqrtm"))


def __getattr__(name: str):
    """The Schur-based functions load on first use (they cost `import pyjax` time in the browser)."""
    if name in _LAZY:
        from pyjax.numpy import _schur as module
    elif name in _LAZY_DECOMPOSITIONS:
        from pyjax.scipy import _decompositions as module
    elif name in _LAZY_SCHUR_METHODS:
        from pyjax.scipy import _schur_methods as module
    else:
        raise AttributeError(f"module 'pyjax.scipy.linalg' has no attribute {name!r}")
    return getattr(module, name)


__all__ += sorted(_LAZY | _LAZY_DECOMPOSITIONS | _LAZY_SCHUR_METHODS)
