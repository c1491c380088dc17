"""jax.numpy.linalg: factorizations and solves built on lax.linalg (cholesky, lu, triangular_solve)
plus norms and products composed from jnp. Every function takes leading batch axes and is
differentiable through the primitives' rules.

qr, eigh and svd come from lax.linalg's Householder / Jacobi compositions; pinv, lstsq,
matrix_rank, cond and the matrix 2-norm / nuclear norm build on svd. eig / eigvals need complex
dtypes, which pyjax does not have: they raise NotImplementedError.
"""

from __future__ import annotations

import functools
import operator
from typing import Any, NamedTuple

from pyjax.core import dtypes, hooks
from pyjax.lax import lax
from pyjax.lax import linalg as lax_linalg
from pyjax.numpy import _creation, _elementwise, _manipulation, _products, _promotion, _reductions
from pyjax.numpy._promotion import _aval, _is_array, _promote

_i32 = dtypes.int32

# JAX's check_arraylike error names most of these functions jnp.linalg.<name>; these few by their name
_PLAIN_NAMES = frozenset(("cond", "tensorinv", "tensorsolve"))


def _check(fn: str, *args) -> None:
    """JAX's check_arraylike TypeError for a list (or other non-array) among args, named as JAX names fn."""
    _promotion._check_arraylike(fn if fn in _PLAIN_NAMES else f"jnp.linalg.{fn}", *args)


def _arr(fn: str, a):
    if _is_array(a):
        return a
    _check(fn, a)
    return _promotion.asarray(a)


def _inexact(fn: str, *args):
    """The arrays args, checked (as JAX checks them, naming fn) and promoted to a floating dtype."""
    _check(fn, *args)
    return _promotion._inexact(fn, *args)


def _square(fn: str, a) -> None:
    s = _aval(a).shape
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Argument to {fn} must have shape [..., n, n], got {s}")


# --- factorizations and solves ------------------------------------------------------------------


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """Cholesky factor of each (Hermitian positive-definite) matrix: lower L, or U = L^H if upper.

    Matrices that are not positive definite give NaNs, as in JAX.
    """
    (a,) = _inexact("cholesky", a)
    L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
    return lax_linalg._H(L) if upper else L


def _solve_square(a, b):
    """Solve a x = b for square a (..., m, m) and b (..., m, k) through a's LU factors. Complex systems
    solve as the real system [[Re a, -Im a], [Im a, Re a]] [Re x; Im x] = [Re b; Im b], as the
    backends' triangular solves are real-only."""
    if _aval(a).dtype.kind == "c":
        ar, ai = lax.real(a), lax.imag(a)
        big = _manipulation.concatenate(
            [_manipulation.concatenate([ar, lax.neg(ai)], -1), _manipulation.concatenate([ai, ar], -1)], -2
        )
        x = _solve_square(big, _manipulation.concatenate([lax.real(b), lax.imag(b)], -2))
        m = _aval(a).shape[-1]
        return lax.complex(x[..., :m, :], x[..., m:, :])
    lu_mat, _, perm = lax_linalg.lu(a)
    return _lu_solve_matrix(lu_mat, perm, b)


def _lu_solve_matrix(lu_mat, perm, b):
    """Solve A x = b from A's packed LU factors (perm: row permutation); b (..., m, k)."""
    pb = lax_linalg.permute_rows(b, perm)
    y = lax_linalg.triangular_solve(lu_mat, pb, left_side=True, lower=True, unit_diagonal=True)
    return lax_linalg.triangular_solve(lu_mat, y, left_side=True, lower=False)


def solve(a, b):
    """Solve a @ x = b; b is a vector (..., m) only if it is 1-D, else a batch of matrices (..., m, k)."""
    a, b = _inexact("solve", a, b)
    _square("solve", a)
    sa, sb = _aval(a).shape, _aval(b).shape
    m = sa[-1]
    if len(sb) == 1:
        if sb[0] != m:
            raise ValueError(
                f"solve: inconsistent size for core dimension 'm': {sb[0]} vs {m} on vectorized "
                f"function with signature '(m,m),(m)->(m)'"
            )
        bm = _promotion.broadcast_to(_manipulation.reshape(b, (m, 1)), sa[:-2] + (m, 1))
        return _manipulation.reshape(_solve_square(a, bm), sa[:-1])
    if len(sb) < 2 or sb[-2] != m:
        raise ValueError(
            f"Invalid shapes for solve: {sa}, {sb}. Prior to JAX v0.5.0, this would have been treated "
            f"as a batched 1-dimensional solve. To recover this behavior, use "
            f"solve(a, b[..., None]).squeeze(-1)."
        )
    batch = _promotion.broadcast_shapes(sa[:-2], sb[:-2])
    a = _promotion.broadcast_to(a, batch + sa[-2:]) if sa[:-2] != batch else a
    b = _promotion.broadcast_to(b, batch + sb[-2:]) if sb[:-2] != batch else b
    return _solve_square(a, b)


def inv(a):
    """Inverse of each square matrix (infs/NaNs for singular ones, as with LAPACK)."""
    (a,) = _inexact("inv", a)
    _square("inv", a)
    s = _aval(a).shape
    eye = lax_linalg._eye_like(s, _aval(a).dtype)
    return _solve_square(a, eye)


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _lu_diag_parity(a):
    lu_mat, piv, _ = lax_linalg.lu(a)
    diag = _manipulation.diagonal(lu_mat, axis1=-2, axis2=-1)
    k = _aval(piv).shape[-1]
    swaps = lax.ne(piv, lax.broadcasted_iota(_i32, _aval(piv).shape, _aval(piv).ndim - 1))
    nswap = lax.reduce_sum(lax.convert_element_type(swaps, _i32), (_aval(piv).ndim - 1,))
    odd = lax.eq(lax.rem(nswap, lax.full_like(nswap, 2)), lax.full_like(nswap, 1)) if k else None
    return diag, odd


def slogdet(a, *, method: str | None = None):
    """(sign, log|det|) of each square matrix, from its LU factors; singular: (0, -inf)."""
    if method not in (None, "lu"):
        raise ValueError(f"Unknown slogdet method '{method}'. Supported methods are 'lu' (default).")
    (a,) = _inexact("slogdet", a)
    _square("slogdet", a)
    diag, odd = _lu_diag_parity(a)
    last = _aval(diag).ndim - 1
    sign = lax.reduce_prod(lax.sign(diag), (last,))
    logabs = lax.reduce_sum(lax.log(lax.abs(diag)), (last,))
    if odd is not None:
        sign = lax.select(odd, lax.neg(sign), sign)
    return SlogdetResult(sign, logabs)


def det(a):
    """Determinant of each square matrix (closed forms for 2x2 and 3x3, LU otherwise)."""
    (a,) = _inexact("det", a)
    _square("det()", a)
    n = _aval(a).shape[-1]

    def e(i, j):
        return a[..., i, j]

    if n == 2:
        return e(0, 0) * e(1, 1) - e(0, 1) * e(1, 0)
    if n == 3:
        return (
            e(0, 0) * e(1, 1) * e(2, 2)
            + e(0, 1) * e(1, 2) * e(2, 0)
            + e(0, 2) * e(1, 0) * e(2, 1)
            - e(0, 2) * e(1, 1) * e(2, 0)
            - e(0, 0) * e(1, 2) * e(2, 1)
            - e(0, 1) * e(1, 0) * e(2, 2)
        )
    diag, odd = _lu_diag_parity(a)
    d = lax.reduce_prod(diag, (_aval(diag).ndim - 1,))
    return d if odd is None else lax.select(odd, lax.neg(d), d)


def matrix_power(a, n: int):
    """a raised to the integer power n (n < 0 inverts first), by repeated squaring."""
    a = _arr("matrix_power", a)
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"exponent must be an integer, got {n}") from None
    s = _aval(a).shape
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"Argument to matrix_power must have shape [..., n, n], got {s}.")
    if n == 0:
        return _promotion.broadcast_to(_creation.eye(s[-1], dtype=_aval(a).dtype), s)
    if n < 0:
        a, n = inv(a), -n
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else _products.matmul(result, base)
        n >>= 1
        if n:
            base = _products.matmul(base, base)
    return result


def multi_dot(arrays, *, precision=None):
    """Chained matrix product, multiplied in the cheapest order; 1-D ends act as row/column vectors."""
    _check("multi_dot", *arrays)
    arrs = [_arr("multi_dot", x) for x in arrays]
    if len(arrs) < 2:
        raise ValueError(f"multi_dot requires at least two arrays, got {len(arrs)}")
    first_vec, last_vec = _aval(arrs[0]).ndim == 1, _aval(arrs[-1]).ndim == 1
    if first_vec:
        arrs[0] = _manipulation.reshape(arrs[0], (1, -1))
    if last_vec:
        arrs[-1] = _manipulation.reshape(arrs[-1], (-1, 1))
    for i, x in enumerate(arrs):
        if _aval(x).ndim != 2:
            raise ValueError(
                f"multi_dot: array {i} has {_aval(x).ndim} dimensions; only the first and last "
                f"may be 1-D, the others must be 2-D"
            )
    dims = [_aval(arrs[0]).shape[0]] + [_aval(x).shape[1] for x in arrs]
    n = len(arrs)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            best = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if best is None or c < best:
                    best, split[i][j] = c, k
            cost[i][j] = best

    def build(i, j):
        if i == j:
            return arrs[i]
        k = split[i][j]
        return _products.matmul(build(i, k), build(k + 1, j))

    out = build(0, n - 1)
    if first_vec and last_vec:
        return _manipulation.reshape(out, ())
    if first_vec:
        return _manipulation.reshape(out, (_aval(out).shape[-1],))
    if last_vec:
        return _manipulation.reshape(out, (_aval(out).shape[0],))
    return out


# --- norms ------------------------------------------------------------------------------------------


def _max_norm(x, axis, keepdims=False):
    """The largest of non-negative values: 0 for none, as JAX (the smallest of none stays an error)."""
    return _reductions.max(x, axis=axis, keepdims=keepdims, initial=0.0)


def _vector_norm(x, ord, axes, keepdims):
    ax = _elementwise.absolute(x)
    if ord is None or ord == 2:
        return _elementwise.sqrt(_reductions.sum(x * x, axis=axes, keepdims=keepdims))
    if isinstance(ord, str):
        raise ValueError(f"Invalid order '{ord}' for vector norm.")
    if ord == float("inf"):
        return _max_norm(ax, axis=axes, keepdims=keepdims)
    if ord == -float("inf"):
        return _reductions.min(ax, axis=axes, keepdims=keepdims)
    if ord == 0:
        return _reductions.sum(
            lax.convert_element_type(lax.ne(x, lax.full_like(x, 0)), _aval(x).dtype), axis=axes, keepdims=keepdims
        )
    if ord == 1:
        return _reductions.sum(ax, axis=axes, keepdims=keepdims)
    p = _promotion.asarray(ord, dtype=_aval(x).dtype)
    return _elementwise.power(
        _reductions.sum(_elementwise.power(ax, p), axis=axes, keepdims=keepdims), _elementwise.reciprocal(p)
    )


def _matrix_norm(x, ord, axes, keepdims):
    r, c = axes
    if ord is None or ord == "fro":
        return _elementwise.sqrt(_reductions.sum(x * x, axis=axes, keepdims=keepdims))
    if ord in ("nuc", 2, -2):
        y = _manipulation.moveaxis(x, (r, c), (-2, -1))
        sv = svd(y, compute_uv=False)
        out = (
            _reductions.sum(sv, axis=-1) if ord == "nuc" else (_max_norm if ord == 2 else _reductions.min)(sv, axis=-1)
        )
        return _manipulation.expand_dims(out, tuple(sorted((r, c)))) if keepdims else out
    ax = _elementwise.absolute(x)
    if ord in (1, -1):
        s = _reductions.sum(ax, axis=r, keepdims=True)
        red = _max_norm if ord == 1 else _reductions.min
        out = red(s, axis=c, keepdims=True)
    elif ord in (float("inf"), -float("inf")):
        s = _reductions.sum(ax, axis=c, keepdims=True)
        red = _max_norm if ord > 0 else _reductions.min
        out = red(s, axis=r, keepdims=True)
    else:
        raise ValueError(f"Invalid order '{ord}' for matrix norm.")
    return out if keepdims else _manipulation.squeeze(out, axis=(r, c))


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Vector norm (one axis or a 1-D input) or matrix norm (two axes or a 2-D input)."""
    (x,) = _inexact("norm", x)
    nd = _aval(x).ndim
    if _aval(x).dtype.kind == "c":
        n_axes = nd if axis is None else (len(axis) if isinstance(axis, (tuple, list)) else 1)
        if n_axes == 1 or ord in (None, "fro", 1, -1, float("inf"), -float("inf")):
            x = _elementwise.abs(x)  # these norms only see magnitudes
    if axis is None:
        if ord is None:
            out = _elementwise.sqrt(_reductions.sum(x * x))
            return _manipulation.reshape(out, (1,) * nd) if keepdims else out
        axes = tuple(range(nd))
    elif isinstance(axis, (tuple, list)):
        axes = tuple(operator.index(a) for a in axis)
    else:
        axes = (operator.index(axis),)
    for a in axes:
        if not -nd <= a < nd:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
    axes = tuple(a % nd for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes, keepdims)
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise ValueError("Duplicate axes given.")
        return _matrix_norm(x, ord, axes, keepdims)
    raise ValueError(
        f"Improper number of axes for norm: axis={axis if axis is not None else axes}. Pass one axis "
        f"to compute a vector-norm, or two axes to compute a matrix-norm."
    )


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """Vector norm over `axis` (None: all elements), array-API style."""
    (x,) = _inexact("vector_norm", x)
    if _aval(x).dtype.kind == "c":
        x = _elementwise.abs(x)  # vector norms only see magnitudes (and are real)
    nd = _aval(x).ndim
    if axis is None:
        out = _vector_norm(_manipulation.ravel(x), ord, (0,), False)
        return _manipulation.reshape(out, (1,) * nd) if keepdims else out
    axes = _reductions._reduce_axes("vector_norm", x, axis)
    return _vector_norm(x, ord, axes, keepdims)


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """Matrix norm over the last two axes, array-API style."""
    _check("matrix_norm", x)
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


# --- products and views on the last axes ----------------------------------------------------------


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """Matrix product with broadcasting batch axes (same as jnp.matmul)."""
    _check("matmul", x1, x2)
    return _products.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None):
    """Tensor contraction over `axes` (same as jnp.tensordot)."""
    _check("tensordot", x1, x2)
    return _products.tensordot(x1, x2, axes, precision=precision, preferred_element_type=preferred_element_type)


def outer(x1, x2, /):
    """Outer product of two 1-D arrays."""
    _check("outer", x1, x2)
    x1, x2 = _arr("outer", x1), _arr("outer", x2)
    n1, n2 = _aval(x1).ndim, _aval(x2).ndim
    if n1 != 1 or n2 != 1:
        raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={n1} x2.ndim={n2}")
    return _products.outer(x1, x2)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Dot product of vectors along `axis`, broadcasting the other axes."""
    _check("vecdot", x1, x2)
    return _vecdot(x1, x2, axis, preferred_element_type)


def _numpy_vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Dot product of vectors along `axis`, broadcasting the other axes (jnp.vecdot)."""
    _promotion._check_arraylike("jnp.vecdot", x1, x2)
    return _vecdot(x1, x2, axis, preferred_element_type)


_numpy_vecdot.__name__ = _numpy_vecdot.__qualname__ = "vecdot"


def _vecdot(x1, x2, axis, preferred_element_type):
    x1, x2 = _arr("vecdot", x1), _arr("vecdot", x2)
    n1, n2 = _aval(x1).shape, _aval(x2).shape
    ax1 = axis if axis < 0 else axis - len(n1)
    ax2 = axis if axis < 0 else axis - len(n2)
    if not (-len(n1) <= ax1 < 0 and -len(n2) <= ax2 < 0) or n1[ax1] != n2[ax2]:
        raise ValueError(f"vecdot: axes must have the same size along axis={axis}, got shapes {n1} and {n2}")
    x1, x2 = _promote("vecdot", x1, x2)
    x1 = _elementwise.conj(x1)  # the array API's vecdot conjugates the first argument
    return _reductions.sum(_elementwise.multiply(x1, x2), axis=axis, dtype=preferred_element_type)


def matrix_transpose(x, /):
    """Swap the last two axes."""
    _check("matrix_transpose", x)
    return _manipulation.matrix_transpose(x)


def trace(x, /, *, offset: int = 0, dtype=None):
    """Sum of the diagonal of the last two axes."""
    return _manipulation.trace(_arr("trace", x), offset=offset, axis1=-2, axis2=-1, dtype=dtype)


def diagonal(x, /, *, offset: int = 0):
    """Diagonal of the last two axes."""
    return _manipulation.diagonal(_arr("diagonal", x), offset=offset, axis1=-2, axis2=-1)


def cross(x1, x2, /, *, axis: int = -1):
    """Cross product of 3-vectors along `axis`."""
    _check("outer", x1, x2)  # JAX's name for cross in this error, word for word
    x1, x2 = _arr("cross", x1), _arr("cross", x2)
    if _aval(x1).shape[axis] != 3 or _aval(x2).shape[axis] != 3:
        raise ValueError(
            f"Both input arrays must be (arrays of) 3-dimensional vectors, but they have "
            f"shape[{axis}]={_aval(x1).shape[axis]} and {_aval(x2).shape[axis]}"
        )
    return _products.cross(x1, x2, axis=axis)


def tensorinv(a, ind: int = 2):
    """Inverse of a tensor for tensordot with `ind` leading axes."""
    a = _arr("tensorinv", a)
    s = _aval(a).shape
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer, got {ind}")
    rows, cols = 1, 1
    for d in s[:ind]:
        rows *= d
    for d in s[ind:]:
        cols *= d
    if rows != cols:
        raise ValueError(
            f"tensorinv is only possible when the product of the first {ind} dimensions equals that "
            f"of the remaining dimensions. got {s=}"
        )
    return _manipulation.reshape(inv(_manipulation.reshape(a, (rows, cols))), s[ind:] + s[:ind])


def tensorsolve(a, b, axes=None):
    """Solve tensordot(a, x, x.ndim) = b for x."""
    _check("tensorsolve", a, b)
    a, b = _arr("tensorsolve", a), _arr("tensorsolve", b)
    nd = _aval(a).ndim
    if axes is not None:
        axes = [operator.index(x) % nd for x in axes]
        rest = [i for i in range(nd) if i not in axes]
        a = _manipulation.transpose(a, rest + axes)
    bs = _aval(b).shape
    xs = _aval(a).shape[len(bs) :]
    rows, cols = 1, 1
    for d in bs:
        rows *= d
    for d in xs:
        cols *= d
    if rows != cols:
        raise ValueError(f"tensorsolve: incompatible shapes {_aval(a).shape} and {bs}")
    return _manipulation.reshape(solve(_manipulation.reshape(a, (rows, cols)), _manipulation.ravel(b)), xs)


# --- decompositions built on lax.linalg.qr / eigh / svd -------------------------------------------


class QRResult(NamedTuple):
    Q: object
    R: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def qr(a, mode: str = "reduced"):
    """QR decomposition; mode 'reduced' (Q: m x k), 'complete' (Q: m x m) or 'r' (R only)."""
    (a,) = _inexact("qr", a)
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    if mode == "raw":
        raise NotImplementedError("jnp.linalg.qr: mode='raw' is not supported by pyjax")
    q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


def _uplo_lower(UPLO) -> bool:
    if UPLO is None or UPLO == "L":
        return True
    if UPLO == "U":
        return False
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")


def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices."""
    (a,) = _inexact("eigh", a)
    lower = _uplo_lower(UPLO)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO: str | None = "L", *, symmetrize_input: bool = True):
    """Eigenvalues (ascending) of symmetric matrices."""
    _check("eigvalsh", a)
    return eigh(a, UPLO, symmetrize_input).eigenvalues


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False, subset_by_index=None):
    """Singular value decomposition (U, S, Vh) with S descending, or S alone if not compute_uv."""
    (a,) = _inexact("svd", a)
    if hermitian:
        w, v = eigh(a)
        s = _elementwise.abs(w)
        nd = _aval(s).ndim
        idx = lax.broadcasted_iota(_i32, _aval(s).shape, nd - 1)
        s, idx, sign = lax_linalg.sort((s, idx, _elementwise.sign(w)), dimension=nd - 1, num_keys=1)
        s, idx, sign = (lax.rev(t, (nd - 1,)) for t in (s, idx, sign))
        if subset_by_index is not None:
            lo, hi = subset_by_index
            s, idx, sign = s[..., lo:hi], idx[..., lo:hi], sign[..., lo:hi]
        if not compute_uv:
            return s
        u = lax_linalg._permute_columns(v, idx)
        return SVDResult(u, s, lax_linalg._H(u * sign[..., None, :]))
    out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index)
    return SVDResult(*out) if compute_uv else out


def svdvals(x, /):
    """Singular values, descending."""
    _check("svdvals", x)
    return svd(x, compute_uv=False)


def _pinv_impl(a, rtol, hermitian):
    m, n = _aval(a).shape[-2:]
    if rtol is None:
        rtol = 10.0 * max(m, n) * float(dtypes.finfo(_aval(a).dtype).eps)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    rtol = _promotion.asarray(rtol, dtype=_aval(s).dtype)
    cutoff = _manipulation.expand_dims(rtol, -1) * s[..., 0:1]
    s = _elementwise.where(s > cutoff, s, float("inf"))
    return _products.matmul(lax_linalg._H(vh), lax_linalg._H(u) / s[..., :, None])


def _pinv_jvp(rtol, hermitian, primals, tangents):
    (a,), (da,) = primals, tangents
    p = _pinv_cj(a, rtol, hermitian)
    m, n = _aval(a).shape[-2:]
    T = lax_linalg._H  # the conjugate transpose
    dp = -_products.matmul(p, _products.matmul(da, p))
    dp = dp + _products.matmul(
        _products.matmul(p, T(p)), _products.matmul(T(da), _creation.eye(m, dtype=a.dtype) - _products.matmul(a, p))
    )
    dp = dp + _products.matmul(
        _products.matmul(_creation.eye(n, dtype=a.dtype) - _products.matmul(p, a), T(da)), _products.matmul(T(p), p)
    )
    return p, dp


@functools.cache
def _pinv_custom():
    """pinv with its own JVP rule (built on first use: custom_derivatives imports jnp)."""
    from pyjax.custom_derivatives import custom_jvp

    f = custom_jvp(_pinv_impl, nondiff_argnums=(1, 2))
    f.defjvp(_pinv_jvp)
    return f


def _pinv_cj(a, rtol, hermitian):
    return _pinv_custom()(a, rtol, hermitian)


def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """Moore-Penrose pseudo-inverse via the SVD; singular values <= rtol * max are dropped."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    (a,) = _inexact("pinv", a)
    s = _aval(a).shape
    if len(s) < 2:
        raise ValueError(f"Argument to pinv must have rank at least 2, got shape={s}")
    if s[-1] == 0 or s[-2] == 0:
        return _creation.zeros(s[:-2] + (s[-1], s[-2]), _aval(a).dtype)
    return _pinv_cj(a, rtol, hermitian)


def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """Number of singular values above rtol * max(singular value) (default rtol: max(m, n) * eps)."""
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    (M,) = _inexact("matrix_rank", M)
    if _aval(M).ndim < 2:
        return _reductions.any(M != 0).astype(_i32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        eps = float(dtypes.finfo(_aval(S).dtype).eps)
        rtol = _reductions.max(S, axis=-1) * (max(_aval(M).shape[-2:]) * eps)
    rtol = _promotion.asarray(rtol)
    return _reductions.sum(S > _manipulation.expand_dims(rtol, rtol.ndim), axis=-1)


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least-squares solution of a x = b via the SVD: (x, residuals, rank, singular values)."""
    a, b = _inexact("lstsq", a, b)
    if _aval(a).shape[0] != _aval(b).shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_vec = _aval(b).ndim == 1
    if b_vec:
        b = b[:, None]
    if _aval(a).ndim != 2:
        raise TypeError(f"{_aval(a).ndim}-dimensional array given. Array must be two-dimensional")
    if _aval(b).ndim != 2:
        raise TypeError(f"{_aval(b).ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = _aval(a).shape
    dt = _aval(a).dtype
    eps = float(dtypes.finfo(dt).eps)
    if m == 0 or n == 0:
        s = _creation.zeros((0,), dt)
        rank = _promotion.asarray(0, dtype=_i32)
        x = _creation.zeros((n,) + _aval(b).shape[1:], dt)
    else:
        rcond = eps * max(n, m) if rcond is None else _elementwise.where(_promotion.asarray(rcond) < 0, eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= _promotion.asarray(rcond, dtype=dt) * s[0])
        rank = _reductions.sum(mask)
        s_inv = _elementwise.where(mask, 1 / _elementwise.where(mask, s, 1), 0)[:, None]
        x = _products.matmul(lax_linalg._T(vt), s_inv * _products.matmul(lax_linalg._T(u), b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = _promotion.asarray([], dtype=dt)
    else:
        resid = _reductions.sum(_elementwise.square(b - _products.matmul(a, x)), axis=0)
    if b_vec:
        x = _manipulation.ravel(x)
    return x, resid, rank, s


def cond(x, p=None):
    """Condition number: ratio of extreme singular values (p None/2/-2) or norm(x, p) * norm(inv(x), p)."""
    (x,) = _inexact("cond", x)
    s = _aval(x).shape
    if len(s) < 2:
        raise ValueError(f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={s}")
    if s[-1] == 0 or s[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={s}")
    if p is None or p == 2:
        sv = svdvals(x)
        return sv[..., 0] / sv[..., -1]
    if p == -2:
        sv = svdvals(x)
        r = sv[..., -1] / sv[..., 0]
    else:
        if s[-1] != s[-2]:
            raise ValueError(f"jnp.linalg.cond: for p={p}, array must be square; got arr.shape={s}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv(x), ord=p, axis=(-2, -1))
    return _elementwise.where(
        _elementwise.isnan(r) & ~_reductions.any(_elementwise.isnan(x), axis=(-2, -1)), float("inf"), r
    )


class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


def _complex_schur(fn: str, a):
    """a = z t z^H with t upper triangular (complex), from scipy.linalg's Schur decomposition (real
    input: the real Schur form, LAPACK's path, then its 2 x 2 blocks split)."""
    from pyjax.numpy import _schur as sl  # the QR iterations, loaded on first use

    _promotion._check_arraylike(fn, a)
    (a,) = _promotion._inexact(fn, a)
    if a.ndim < 2:
        raise TypeError(f"{fn}: input must have rank at least 2, but got shape={a.shape}")
    _square(fn, a)
    if a.dtype.kind == "c":
        return sl.schur(a, "complex")
    return sl.rsf2csf(*sl.schur(a, "real"))


def eigvals(a):
    """Eigenvalues (complex, in no particular order) of general square matrices."""
    t, _ = _complex_schur("jnp.linalg.eigvals", a)
    return _manipulation.diagonal(t, axis1=-2, axis2=-1)


def eig(a):
    """Eigenvalues and right eigenvectors (columns, unit norm, largest component real) of general square
    matrices. Forward and reverse-mode derivatives are not supported."""
    t, z = _complex_schur("jnp.linalg.eig", a)
    w = _manipulation.diagonal(t, axis1=-2, axis2=-1)
    n = t.shape[-1]
    # Eigenvectors of the triangular t by back substitution: column k has v[k] = 1, zeros below, and
    # v[i] = -(t[i, i+1:] @ v[i+1:]) / (t[i, i] - w[k]) above; equal eigenvalues get a tiny divisor.
    tiny = _reductions.max(_elementwise.abs(t), axis=(-2, -1), keepdims=True) * dtypes.finfo(w.dtype).eps
    col = lax.broadcasted_iota(_i32, (n,), 0)
    v = _promotion.broadcast_to(_creation.eye(n, dtype=t.dtype), t.shape)
    for i in range(n - 2, -1, -1):
        num = -_products.matmul(t[..., i : i + 1, i + 1 :], v[..., i + 1 :, :])[..., 0, :]
        den = t[..., i, i : i + 1] - w
        den = _elementwise.where(_elementwise.abs(den) < tiny[..., 0], tiny[..., 0].astype(den.dtype), den)
        v = v.at[..., i, :].set(_elementwise.where(col > i, num / den, v[..., i, :]))
    return EigResult(w, _normalize_eigenvectors(_products.matmul(z, v)))


def _normalize_eigenvectors(v):
    """Columns scaled to unit norm with their largest component real (LAPACK's geev convention)."""
    v = v / norm(v, axis=-2, keepdims=True)
    at_max = (
        lax.broadcasted_iota(_i32, v.shape, v.ndim - 2)
        == _reductions.argmax(_elementwise.abs(v), axis=-2)[..., None, :]
    )
    big = _reductions.sum(_elementwise.where(at_max, v, 0), axis=-2, keepdims=True)
    return v * (_elementwise.conj(big) / _elementwise.abs(big))


def _lax_eig(x, left: bool, right: bool) -> list:
    """lax.linalg.eig's [w, vl, vr] (those asked for): the rows of vr^-1 are left eigenvectors
    (biorthogonal to vr), up to scale."""
    w, vr = eig(x)
    out = [w]
    if left:
        out.append(_normalize_eigenvectors(_elementwise.conj(_manipulation.swapaxes(inv(vr), -1, -2))))
    if right:
        out.append(vr)
    return out


def _lax_schur(a, output: str):
    from pyjax.numpy import _schur  # loads on first use

    return _schur.schur(a, output)


hooks.register(eig=_lax_eig, schur=_lax_schur)  # what lax.linalg.eig/schur run (core/hooks.py)

__all__ = [
    "EigResult",
    "cholesky",
    "solve",
    "inv",
    "det",
    "slogdet",
    "SlogdetResult",
    "matrix_power",
    "multi_dot",
    "norm",
    "vector_norm",
    "matrix_norm",
    "matmul",
    "tensordot",
    "outer",
    "vecdot",
    "matrix_transpose",
    "trace",
    "diagonal",
    "cross",
    "tensorinv",
    "tensorsolve",
    "qr",
    "QRResult",
    "eigh",
    "EighResult",
    "eigvalsh",
    "svd",
    "SVDResult",
    "svdvals",
    "pinv",
    "matrix_rank",
    "lstsq",
    "cond",
    "eig",
    "eigvals",
]
