"""lax.linalg: the linear-algebra primitives `cholesky`, `triangular_solve` and `lu`, plus
`qr`, `eigh` and `svd` composed from other lax ops (no new primitives, so every backend runs them).

Each runs as a Routine (leading axes are batch axes). Their derivatives are written with the
primitives themselves: forward-mode rules are the textbook ones (Murray 2016 for Cholesky, the
P A = L U perturbation identity for LU); reverse-mode rules for `cholesky` and `lu` transpose the
forward rule with the tape, and `triangular_solve` has an explicit transpose that respects
left_side, lower, transpose_a and unit_diagonal (only the referenced triangle gets a cotangent).
"""

from __future__ import annotations

import builtins
import enum
from collections.abc import Callable
from typing import NamedTuple

from pyjax.core import dtypes, hooks
from pyjax.core.core import ShapedArray, get_aval
from pyjax.interpreters import ad, batching
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax
from pyjax.lax._util import _arr
from pyjax.lax.slicing import slice_in_dim
from pyjax.lax.sorting import sort

_i32 = dtypes.int32

# --- helpers on the last two axes ---------------------------------------------------------------


def _nd(x) -> int:
    return get_aval(x).ndim


def _T(x):
    """Swap the last two axes."""
    nd = _nd(x)
    perm = list(range(nd))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return lax.transpose(x, perm)


def _matmul(a, b):
    """Batched a @ b over identical leading batch axes."""
    nd = _nd(a)
    nb = nd - 2
    return lax.dot_general(a, b, (((nd - 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))))


def _tri_mask(shape, k: int, lower: bool):
    nd = len(shape)
    r = lax.broadcasted_iota(_i32, shape, nd - 2)
    c = lax.broadcasted_iota(_i32, shape, nd - 1)
    # lower: keep c <= r + k; upper: keep c >= r + k
    rk = lax.add(r, lax.full_like(r, k)) if k else r
    return lax.le(c, rk) if lower else lax.ge(c, rk)


def _tril(x, k: int = 0):
    a = get_aval(x)
    return lax.select(_tri_mask(a.shape, k, True), x, lax.full_like(x, 0))


def _triu(x, k: int = 0):
    a = get_aval(x)
    return lax.select(_tri_mask(a.shape, k, False), x, lax.full_like(x, 0))


def _eye_like(shape, dtype):
    nd = len(shape)
    r = lax.broadcasted_iota(_i32, shape, nd - 2)
    c = lax.broadcasted_iota(_i32, shape, nd - 1)
    return lax.convert_element_type(lax.eq(r, c), dtype)


def _diagonal(x):
    """The diagonal of each square matrix (last two axes), as a strided slice of the flattened matrix."""
    shape = get_aval(x).shape
    n, lead = shape[-1], shape[:-2]
    flat = lax.reshape(x, lead + (n * n,))
    return lax.slice(flat, (0,) * len(shape[:-1]), lead + (n * n,), (1,) * len(lead) + (n + 1,))


def _sum(x, axis: int, keepdims: bool = False):
    nd = _nd(x)
    out = lax.reduce_sum(x, (axis % nd,))
    return lax.expand_dims(out, (axis % nd,)) if keepdims else out


def _shape_str(s) -> str:
    return lax._shape_str(s)


def _check_float(fn: str, aval) -> None:
    if aval.dtype.kind != "f":
        raise TypeError(f"{fn} requires a floating-point input, got dtype {aval.dtype.name}")


# --- cholesky -----------------------------------------------------------------------------------

cholesky_p = lax._prim("cholesky")


@cholesky_p.def_abstract_eval
def _cholesky_abstract(x):
    if x.ndim < 2:
        raise TypeError(f"Input 0 to cholesky must have rank at least 2, but got shape={_shape_str(x.shape)}")
    if x.shape[-1] != x.shape[-2]:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {_shape_str(x.shape)}.")
    _check_float("cholesky", x)
    return ShapedArray(x.shape, x.dtype)


def _H(x):
    """The conjugate transpose of each matrix (the transpose for real ones)."""
    return lax.conj(_T(x)) if get_aval(x).dtype.kind == "c" else _T(x)


def _symmetrize(x):
    """(x + x^H) / 2: the Hermitian part."""
    return lax.div(lax.add(x, _H(x)), lax.full_like(x, 2))


def _interleave(x):
    """The real (..., 2m, 2n) image of complex x (..., m, n): entry a + ib becomes the 2x2 block
    [[a, -b], [b, a]] at rows 2i, 2i + 1 and columns 2j, 2j + 1. The map respects products and
    conjugate transposes (x^H maps to the transpose), and keeps a lower-triangular x with a real
    diagonal lower triangular, so real factorizations and solves give complex ones."""
    shape = get_aval(x).shape
    nd = len(shape)
    re, im = lax.real(x), lax.imag(x)
    e = lambda t: lax.expand_dims(t, (nd, nd + 1))  # noqa: E731  (..., m, n, 1, 1)
    blocks = lax.concatenate(
        [lax.concatenate([e(re), e(lax.neg(im))], nd + 1), lax.concatenate([e(im), e(re)], nd + 1)], nd
    )
    blocks = lax.transpose(blocks, tuple(range(nd - 2)) + (nd - 2, nd, nd - 1, nd + 1))
    return lax.reshape(blocks, shape[:-2] + (2 * shape[-2], 2 * shape[-1]))


def _deinterleave(y):
    """The complex (..., m, n) matrix whose _interleave image is y (read from its even columns)."""
    shape = get_aval(y).shape
    nd = len(shape)
    m, n = shape[-2] // 2, shape[-1] // 2
    y = lax.reshape(y, shape[:-2] + (m, 2, n, 2))
    y = slice_in_dim(y, 0, 1, axis=nd + 1)
    re, im = (lax.reshape(slice_in_dim(y, k, k + 1, axis=nd - 1), shape[:-2] + (m, n)) for k in (0, 1))
    return lax.complex(re, im)


def _cholesky_complex(x):
    """cholesky_p on complex matrices: the real Cholesky factor of the interleaved image of the
    Hermitian matrix (lower triangle read, diagonal taken real, as LAPACK's zpotrf) is the image of
    the complex factor, by uniqueness of the factor with a positive diagonal."""
    shape = get_aval(x).shape
    diag = _eye_like(shape, dtypes.bool_)
    x = lax.select(diag, lax.complex(lax.real(x), lax.full_like(lax.real(x), 0)), x)
    L = _deinterleave(cholesky_p.bind(_interleave(x)))
    return lax.select(diag, lax.complex(lax.real(L), lax.full_like(lax.real(L), 0)), L)


cholesky_p.complex_rule = _cholesky_complex


def cholesky(x, *, symmetrize_input: bool = True):
    """Lower Cholesky factor L (x = L L^H) of each matrix in x; NaNs where x is not positive definite."""
    x = lax._as_array(x)
    a = get_aval(x)
    if symmetrize_input:
        if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
            # JAX's symmetrization fails first, with a TypeError from its transpose/add.
            raise TypeError(f"cholesky: symmetrize_input needs square matrices, got shape {_shape_str(a.shape)}")
        x = _symmetrize(x)
    return cholesky_p.bind(x)


def _cholesky_tangent(L, t):
    # dL = L Phi(L^-1 dA L^-T), Phi: lower triangle with the diagonal halved.
    tmp = triangular_solve(L, t, left_side=False, lower=True, transpose_a=True)
    inner = triangular_solve(L, tmp, left_side=True, lower=True)
    shape = get_aval(inner).shape
    half = lax.select(
        _tri_mask(shape, -1, True),
        lax.full_like(inner, 1),
        lax.select(_eye_like(shape, dtypes.bool_), lax.full_like(inner, 0.5), lax.full_like(inner, 0)),
    )
    return _matmul(L, lax.mul(inner, half))


def _cholesky_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    L = cholesky_p.bind(x)
    return L, _cholesky_tangent(L, ad.instantiate(t))


ad.jvp_rules[cholesky_p] = _cholesky_jvp
batching.batch_rules[cholesky_p] = lambda size, vals, dims: (cholesky_p.bind(batching.moveaxis(vals[0], dims[0], 0)), 0)

# --- triangular_solve ---------------------------------------------------------------------------

triangular_solve_p = lax._prim("triangular_solve")


@triangular_solve_p.def_abstract_eval
def _tri_solve_abstract(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    if a.ndim < 2:
        raise TypeError(f"Input 0 to triangular_solve must have rank at least 2, but got shape={_shape_str(a.shape)}")
    if b.ndim < 2:
        raise TypeError(f"Input 1 to triangular_solve must have rank at least 2, but got shape={_shape_str(b.shape)}")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"The first input to triangular_solve must be a square matrix. Got shape {_shape_str(a.shape)}."
        )
    if a.ndim != b.ndim:
        raise TypeError(
            f"All inputs to triangular_solve must have the same number of batch dimensions, but got "
            f"{[a.ndim - 2, b.ndim - 2]} batch dimensions for the inputs."
        )
    m = a.shape[-1]
    common = b.shape[-2] if left_side else b.shape[-1]
    if a.shape[:-2] != b.shape[:-2] or common != m:
        raise ValueError(
            f"Incompatible shapes for arguments to triangular_solve: {_shape_str(a.shape)} and {_shape_str(b.shape)}."
        )
    if a.dtype is not b.dtype:
        raise TypeError(
            f"triangular_solve requires both inputs to have the same dtype, got {a.dtype.name} and {b.dtype.name}"
        )
    if a.dtype.kind not in "fc":
        _check_float("triangular_solve", a)
    return ShapedArray(b.shape, b.dtype)


def triangular_solve(
    a,
    b,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
):
    """Solve op(a) x = b (left_side) or x op(a) = b with a triangular; op transposes if transpose_a.

    Only the `lower` (or upper) triangle of a is read; with unit_diagonal its diagonal is taken as 1.
    """
    a, b = lax._as_array(a), lax._as_array(b)
    return triangular_solve_p.bind(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=bool(conjugate_a),
        unit_diagonal=bool(unit_diagonal),
    )


def _mask_a(g, lower: bool, unit_diagonal: bool):
    """Keep only the entries of a that triangular_solve reads."""
    shape = get_aval(g).shape
    keep = (
        _tri_mask(shape, -1 if unit_diagonal else 0, True)
        if lower
        else _tri_mask(shape, 1 if unit_diagonal else 0, False)
    )
    return lax.select(keep, g, lax.full_like(g, 0))


def _tri_solve_jvp(primals, tangents, **params):
    a, b = primals
    ta, tb = tangents
    x = triangular_solve_p.bind(a, b, **params)
    if type(ta) is Zero and type(tb) is Zero:
        return x, Zero(get_aval(x))
    rhs = None if type(tb) is Zero else tb
    if type(ta) is not Zero:
        g = _mask_a(ta, params["lower"], params["unit_diagonal"])
        op_g = _T(g) if params["transpose_a"] else g
        corr = _matmul(op_g, x) if params["left_side"] else _matmul(x, op_g)
        rhs = lax.neg(corr) if rhs is None else lax.sub(rhs, corr)
    return x, triangular_solve_p.bind(a, rhs, **params)


def _tri_solve_transpose(ct, a, b, **params):
    """triangular_solve is linear in b (its jvp applies it to b's tangent; a is then a constant)."""
    return [None, triangular_solve_p.bind(a, ct, **dict(params, transpose_a=not params["transpose_a"]))]


def _tri_solve_batch(size, vals, dims, **params):
    a, b = vals
    ad_, bd = dims
    if ad_ is None:
        # Fold the vmapped axis of b into its free axis: one solve against the shared a.
        nd = _nd(b)
        if params["left_side"]:  # b: (..., m, n) -> (..., m, n * size)
            bm = batching.moveaxis(b, bd, nd - 1)
            sh = get_aval(bm).shape
            x = triangular_solve_p.bind(a, lax.reshape(bm, sh[:-2] + (sh[-2] * sh[-1],)), **params)
            return lax.reshape(x, sh), nd - 1
        bm = batching.moveaxis(b, bd, nd - 3)  # b: (..., n, m) -> (..., size * n, m)
        sh = get_aval(bm).shape
        x = triangular_solve_p.bind(a, lax.reshape(bm, sh[:-3] + (sh[-3] * sh[-2], sh[-1])), **params)
        return lax.reshape(x, sh), nd - 3
    a = batching.move_to(a, ad_, 0, size)
    b = batching.move_to(b, bd, 0, size)
    return triangular_solve_p.bind(a, b, **params), 0


def _tri_solve_complex(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """triangular_solve_p on complex operands, as a real solve on interleaved images (_interleave).

    op(a) is formed explicitly and scaled to a unit diagonal (rows of op(a) and b divided by its
    diagonal), whose image is then unit-triangular; a right-side solve x op(a) = b is the left-side
    solve op(a)^T x^T = b^T."""
    _tri_solve_abstract(
        get_aval(a),
        get_aval(b),
        left_side=left_side,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )  # JAX's shape and dtype errors
    shape = get_aval(a).shape
    a = _mask_a(a, lower, unit_diagonal)
    if transpose_a:
        a, lower = _T(a), not lower
    if conjugate_a:
        a = lax.conj(a)
    if not left_side:
        a, lower, b = _T(a), not lower, _T(b)
    if not unit_diagonal:
        diag = _diagonal(a)
        a = lax.div(a, lax.expand_dims(diag, (len(shape) - 1,)))
        b = lax.div(b, lax.expand_dims(diag, (len(shape) - 1,)))
    bs = get_aval(b).shape
    b_img = lax.reshape(
        lax.concatenate(
            [lax.expand_dims(lax.real(b), (len(bs) - 1,)), lax.expand_dims(lax.imag(b), (len(bs) - 1,))], len(bs) - 1
        ),
        bs[:-2] + (2 * bs[-2], bs[-1]),
    )
    x = triangular_solve_p.bind(
        _interleave(a), b_img, left_side=True, lower=lower, transpose_a=False, conjugate_a=False, unit_diagonal=True
    )
    x = lax.reshape(x, bs[:-2] + (bs[-2], 2, bs[-1]))
    nd = len(bs)
    x = lax.complex(*(lax.reshape(slice_in_dim(x, k, k + 1, axis=nd - 1), bs) for k in (0, 1)))
    return x if left_side else _T(x)


triangular_solve_p.complex_rule = _tri_solve_complex
ad.jvp_rules[triangular_solve_p] = _tri_solve_jvp
ad.transpose_rules[triangular_solve_p] = _tri_solve_transpose
batching.batch_rules[triangular_solve_p] = _tri_solve_batch

# --- lu -------------------------------------------------------------------------------------------

lu_p = lax._prim("lu", multi=True)


@lu_p.def_abstract_eval
def _lu_abstract(x):
    if x.ndim < 2:
        raise TypeError(f"Input 0 to lu must have rank at least 2, but got shape={_shape_str(x.shape)}")
    _check_float("lu", x)
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    return [
        ShapedArray(x.shape, x.dtype),
        ShapedArray(batch + (builtins.min(m, n),), _i32),
        ShapedArray(batch + (m,), _i32),
    ]


def lu(x):
    """LU decomposition with partial pivoting: [lu, pivots, permutation] (a list, as JAX) with x[perm] = L @ U.

    lu packs the unit-lower L (below the diagonal) and U; pivots are LAPACK-style row swaps (0-based).
    """
    x = lax._as_array(x)
    if get_aval(x).dtype.kind == "c" and get_aval(x).ndim >= 2:
        return list(_lu_complex(x))
    return list(lu_p.bind(x))


def _lu_complex(x):
    """lu for complex matrices, composed from lax ops (the backends' lu routines are real-only): one
    elimination step per column, the pivot row chosen by |x| and swapped in with selects."""
    a = get_aval(x)
    nd, (m, n), batch = a.ndim, a.shape[-2:], a.shape[:-2]
    bdims = tuple(range(nd - 2))
    rows = lax.broadcasted_iota(_i32, a.shape, nd - 2)
    cols = lax.broadcasted_iota(_i32, a.shape, nd - 1)
    vrows = lax.broadcasted_iota(_i32, batch + (m,), nd - 2)
    perm, zero, vz, pivots = vrows, lax.full_like(x, 0), lax.full_like(vrows, 0), []

    def pick(mask, v, z):  # the one row (or entry) of v where mask holds, over the row axis
        return lax.reduce_sum(lax.select(mask, v, z), (nd - 2,))

    def full(v):  # a slice of x broadcast back to x's shape
        return lax.broadcast_in_dim(v, a.shape, tuple(range(nd)))

    for j in range(builtins.min(m, n)):
        jj = lax.full((), j, _i32)
        mag = lax.abs(slice_in_dim(slice_in_dim(x, j, j + 1, axis=nd - 1), j, m, axis=nd - 2))
        p = lax.add(lax.argmax(mag, nd - 2, _i32), lax.full(batch + (1,), j, _i32))  # (..., 1)
        pivots.append(p)
        is_p = lax.eq(rows, lax.broadcast_in_dim(p, a.shape, bdims + (nd - 1,)))
        is_j = lax.eq(rows, lax.broadcast_in_dim(jj, a.shape, ()))
        row_p, row_j = (lax.broadcast_in_dim(pick(mk, x, zero), a.shape, bdims + (nd - 1,)) for mk in (is_p, is_j))
        x = lax.select(is_j, row_p, lax.select(is_p, row_j, x))
        vis_p = lax.eq(vrows, lax.broadcast_in_dim(p, get_aval(vrows).shape, bdims + (nd - 2,)))
        vis_j = lax.eq(vrows, lax.broadcast_in_dim(jj, get_aval(vrows).shape, ()))
        perm_p, perm_j = (
            lax.broadcast_in_dim(pick(mk, perm, vz), get_aval(vrows).shape, bdims) for mk in (vis_p, vis_j)
        )
        perm = lax.select(vis_j, perm_p, lax.select(vis_p, perm_j, perm))
        piv = full(slice_in_dim(slice_in_dim(x, j, j + 1, axis=nd - 1), j, j + 1, axis=nd - 2))
        colj, rowj = full(slice_in_dim(x, j, j + 1, axis=nd - 1)), full(slice_in_dim(x, j, j + 1, axis=nd - 2))
        nonzero = lax.ne(piv, zero)  # a zero pivot means a zero column below it: nothing to eliminate
        l = lax.select(nonzero, lax.div(colj, lax.select(nonzero, piv, lax.full_like(piv, 1))), colj)  # noqa: E741
        below = lax.gt(rows, lax.broadcast_in_dim(jj, a.shape, ()))
        right = lax.gt(cols, lax.broadcast_in_dim(jj, a.shape, ()))
        x = lax.select(lax.bitwise_and(below, right), lax.sub(x, lax.mul(l, rowj)), x)
        x = lax.select(
            lax.bitwise_and(below, lax.bitwise_not(right)),
            lax.select(lax.eq(cols, lax.broadcast_in_dim(jj, a.shape, ())), l, x),
            x,
        )
    piv_arr = lax.concatenate(pivots, nd - 2) if pivots else lax.full(batch + (0,), 0, _i32)
    return x, piv_arr, perm


def permute_rows(x, perm):
    """x[..., perm, :] for a permutation `perm` of shape x.shape[:-1] (one sort; no gather)."""
    a = get_aval(x)
    nd = a.ndim
    inv = sort((perm, lax.broadcasted_iota(_i32, get_aval(perm).shape, nd - 2)), dimension=nd - 2)[1]
    key = lax.broadcast_in_dim(inv, a.shape, tuple(range(nd - 1)))
    return sort((key, x), dimension=nd - 2, num_keys=1)[1]


def _lu_factors(lu_mat):
    """Square unit-lower l (m, m) and upper u (n, n) with l[:, :k] u[:k, :] the factorization."""
    a = get_aval(lu_mat)
    m, n = a.shape[-2:]
    k = builtins.min(m, n)
    nd = a.ndim
    batch = a.shape[:-2]
    zero = lax.full((), 0, a.dtype)
    lpart = _tril(lax.slice(lu_mat, (0,) * nd, batch + (m, k)), -1)
    l_full = lax.pad(lpart, zero, [(0, 0, 0)] * (nd - 1) + [(0, m - k, 0)])
    l_full = lax.add(l_full, _eye_like(batch + (m, m), a.dtype))
    upart = _triu(lax.slice(lu_mat, (0,) * nd, batch + (k, n)))
    u_full = lax.pad(upart, zero, [(0, 0, 0)] * (nd - 2) + [(0, n - k, 0), (0, 0, 0)])
    if n > k:
        r = lax.broadcasted_iota(_i32, batch + (n, n), nd - 2)
        c = lax.broadcasted_iota(_i32, batch + (n, n), nd - 1)
        extra = lax.bitwise_and(lax.eq(r, c), lax.ge(r, lax.full_like(r, k)))
        u_full = lax.add(u_full, lax.convert_element_type(extra, a.dtype))
    return l_full, u_full


def _lu_tangent(lu_mat, perm, t):
    l_full, u_full = _lu_factors(lu_mat)
    pt = permute_rows(t, perm)
    la = triangular_solve(l_full, pt, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u_full, la, left_side=False, lower=False)
    return lax.add(_matmul(l_full, _tril(lau, -1)), _matmul(_triu(lau), u_full))


def _lu_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    lu_mat, piv, perm = lu_p.bind(x)
    dlu = _lu_tangent(lu_mat, perm, ad.instantiate(t))
    return [lu_mat, piv, perm], [dlu, Zero(get_aval(piv)), Zero(get_aval(perm))]


ad.jvp_rules[lu_p] = _lu_jvp
batching.batch_rules[lu_p] = lambda size, vals, dims: (lu_p.bind(batching.moveaxis(vals[0], dims[0], 0)), [0, 0, 0])


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation produced by applying LAPACK-style row swaps `pivots` to range(permutation_size)."""
    p = lax._as_array(pivots)
    a = get_aval(p)
    k = a.shape[-1]
    if permutation_size < k:
        raise ValueError(
            f"Output permutation size {permutation_size} has to exceed the trailing dimension of "
            f"the pivots. Got pivots shape {a.shape}"
        )
    # Apply swap i <-> pivots[i] with one-hot selects (k small sequential steps, fused elementwise).
    shape = a.shape[:-1] + (permutation_size,)
    nd = len(shape)
    perm = lax.broadcasted_iota(_i32, shape, nd - 1)
    pos = lax.broadcasted_iota(_i32, shape, nd - 1)
    for i in range(k):
        pi = lax.broadcast_in_dim(
            lax.slice(p, (0,) * (nd - 1) + (i,), a.shape[:-1] + (i + 1,)), shape, tuple(range(nd))
        )
        pi = lax.convert_element_type(pi, _i32)
        at_i = lax.eq(pos, lax.full_like(pos, i))
        at_p = lax.eq(pos, pi)
        vi = lax.reduce_sum(lax.select(at_i, perm, lax.full_like(perm, 0)), (nd - 1,))
        vp = lax.reduce_sum(lax.select(at_p, perm, lax.full_like(perm, 0)), (nd - 1,))
        vi = lax.broadcast_in_dim(vi, shape, tuple(range(nd - 1)))
        vp = lax.broadcast_in_dim(vp, shape, tuple(range(nd - 1)))
        perm = lax.select(at_i, vp, lax.select(at_p, vi, perm))
    return perm


# --- qr, eigh, svd: compositions of lax ops ---------------------------------------------------------
#
# QR applies Householder reflections in a fori_loop. eigh is cyclic two-sided Jacobi and svd is
# one-sided (Hestenes) Jacobi, both in round-robin order: each round rotates n/2 disjoint index
# pairs (i, h + i) at once with elementwise ops on the two halves of the matrix, then a fixed
# permutation brings the next pairing into place; n - 1 rounds (a sweep) visit every pair once and
# restore the order. Sweeps repeat until the off-diagonal part is negligible. Derivatives come
# from custom_jvp rules (the textbook formulas JAX uses), not from differentiating the loops.

_MAX_SWEEPS = 30


def _check_matrix(fn: str, x, square: bool = False, complex_ok: bool = False):
    """x as a floating (or, if complex_ok, complex) array of rank >= 2 (square if asked), else the error
    JAX raises."""
    x = lax._as_array(x)
    a = get_aval(x)
    if a.ndim < 2:
        raise ValueError(f"Argument to {fn} must have rank at least 2, got shape={_shape_str(a.shape)}")
    if square and a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Argument to {fn} must be a batch of square matrices, got shape={_shape_str(a.shape)}")
    if not (complex_ok and a.dtype.kind == "c"):
        _check_float(fn, a)
    return x


def _householder_qr(x, full_matrices: bool):
    """(q, r) with x = q r by Householder reflections (LAPACK's sign choice: r_jj = -sign(x_jj)|col|)."""
    shape = get_aval(x).shape
    m, n = shape[-2:]
    nd = len(shape)
    k = builtins.min(m, n)
    rows = lax.broadcasted_iota(_i32, shape[:-2] + (m,), nd - 2)
    cols = lax.broadcasted_iota(_i32, shape, nd - 1)
    q0 = _eye_like(shape[:-2] + (m, m), get_aval(x).dtype)

    def step(j, carry):
        r, q = carry
        j = lax.convert_element_type(j, _i32)
        col = _sum(lax.select(lax.eq(cols, j), r, lax.full_like(r, 0)), -1)
        zero = lax.full_like(col, 0)
        alpha = _sum(lax.select(lax.eq(rows, j), col, zero), -1, keepdims=True)
        tail = _sum(lax.select(lax.gt(rows, j), col * col, zero), -1, keepdims=True)
        norm = lax.sqrt(alpha * alpha + tail)
        beta = lax.select(lax.lt(alpha, 0), norm, -norm)
        v = lax.select(lax.ge(rows, j), col, zero) - lax.select(lax.eq(rows, j), lax.add(zero, beta), zero)
        vv = _sum(v * v, -1, keepdims=True)
        # No reflection when the column is already zero below the diagonal (as LAPACK's dlarfg).
        scale = lax.select(
            lax.gt(tail, 0), 2 / lax.select(lax.gt(vv, 0), vv, lax.full_like(vv, 1)), lax.full_like(vv, 0)
        )
        vs = v * scale
        r = r - lax.expand_dims(vs, (nd - 1,)) * lax.expand_dims(_sum(lax.expand_dims(v, (nd - 1,)) * r, -2), (nd - 2,))
        q = q - lax.expand_dims(_sum(q * lax.expand_dims(v, (nd - 2,)), -1), (nd - 1,)) * lax.expand_dims(vs, (nd - 2,))
        return r, q

    from pyjax.lax.control_flow import fori_loop

    r, q = fori_loop(0, k, step, (x, q0)) if k else (x, q0)
    r = _triu(r)
    if not full_matrices:
        q, r = q[..., :, :k], r[..., :k, :]
    return q, r


def _rotation(app, aqq, apq):
    """(c, s) of the Jacobi rotation [[c, s], [-s, c]] that zeroes apq in [[app, apq], [apq, aqq]] (all real)."""
    d = (aqq - app) / 2
    den = lax.abs(d) + lax.sqrt(d * d + apq * apq)
    pos = lax.gt(den, 0)
    zero = lax.full_like(den, 0)
    t = lax.select(pos, lax.select(lax.lt(d, 0), -apq, apq) / lax.select(pos, den, lax.full_like(den, 1)), zero)
    c = 1 / lax.sqrt(1 + t * t)
    return c, t * c


def _rotate_columns(x, c, s, phase=None):
    """x @ J where J rotates each column pair (i, h + i) by (c[i], s[i]), the second column of each pair
    first multiplied by phase[i] (a unit complex number) when given."""
    h = get_aval(c).shape[-1]
    top, bot = x[..., :h], x[..., h:]
    c, s = c[..., None, :], s[..., None, :]
    if phase is not None:
        bot = bot * phase[..., None, :]
        c, s = (lax.convert_element_type(t, get_aval(x).dtype) for t in (c, s))
    return lax.concatenate([c * top - s * bot, s * top + c * bot], _nd(x) - 1)


def _next_pairing(x, axis: int):
    """Round-robin step on an axis of even length 2h: slot 0 stays, the other slots rotate by one."""
    size = get_aval(x).shape[axis]
    h = size // 2
    if h < 2:
        return x
    runs = [(0, 1), (h, h + 1), (1, h - 1), (h + 1, size), (h - 1, h)]
    pieces = [slice_in_dim(x, a, b, axis=axis) for a, b in runs if b > a]
    return lax.concatenate(pieces, axis % get_aval(x).ndim)


def _sort_columns(keys, *mats):
    """keys sorted ascending along the last axis, and each mat with its columns permuted alike."""
    nd = _nd(keys)
    iota = lax.broadcasted_iota(_i32, get_aval(keys).shape, nd - 1)
    sorted_keys, perm = sort((keys, iota), dimension=nd - 1, num_keys=1)
    return sorted_keys, [_permute_columns(m, perm) for m in mats]


def _permute_columns(m, perm):
    """m[..., :, perm] as a product with a one-hot matrix (exact; no gather needed)."""
    iota = lax.broadcasted_iota(_i32, get_aval(perm).shape, _nd(perm) - 1)
    nd = _nd(perm)
    onehot = lax.eq(lax.expand_dims(iota, (nd,)), lax.expand_dims(perm, (nd - 1,)))
    return _matmul(m, lax.convert_element_type(onehot, get_aval(m).dtype))


def _pad_even(x, axes):
    """x with one zero row/column appended on each of `axes` when the matrix size is odd."""
    n = get_aval(x).shape[-1]
    if n % 2 == 0:
        return x
    cfg = [(0, 0, 0)] * _nd(x)
    for ax in axes:
        cfg[ax] = (0, 1, 0)
    return lax.pad(x, lax.full((), 0, get_aval(x).dtype), cfg)


def _sweeps(body, carry, converged):
    """Run body (one sweep) until converged(carry) or _MAX_SWEEPS; carry[-1] counts sweeps."""
    from pyjax.lax.control_flow import while_loop

    return while_loop(lambda c: (c[-1] == 0) | ((c[-1] < _MAX_SWEEPS) & ~converged(c)), body, carry)


def _jacobi_eigh(a):
    """(w, v) with a = v diag(w) v^H for symmetric or Hermitian a, w ascending (real).

    Parallel cyclic Jacobi: each round rotates n/2 disjoint index pairs (p, q), then the pairing moves on
    (round-robin). For a Hermitian matrix the pair's column q is first multiplied by the phase that makes
    a_pq real, then the real rotation applies."""
    n = get_aval(a).shape[-1]
    cplx = get_aval(a).dtype.kind == "c"
    nd = _nd(a)
    a = _pad_even(a, (nd - 2, nd - 1))
    big_n = get_aval(a).shape[-1]
    v = _eye_like(get_aval(a).shape, get_aval(a).dtype)
    offdiag = lax.ne(
        lax.broadcasted_iota(_i32, get_aval(a).shape, nd - 2), lax.broadcasted_iota(_i32, get_aval(a).shape, nd - 1)
    )
    eps = float(dtypes.finfo(dtypes.real_dtype(get_aval(a).dtype)).eps)
    both = (nd - 2, nd - 1)

    def one_round(_, c):
        a, v = c
        d = _diagonal(a)
        h = big_n // 2
        apq, phase, phase_c = _diagonal(a[..., :h, h:]), None, None
        if cplx:
            d = lax.real(d)
            mag = lax.abs(apq)
            nonzero = lax.gt(mag, lax.full_like(mag, 0))
            safe = lax.select(nonzero, mag, lax.full_like(mag, 1))
            # conj(a_pq) / |a_pq|: a_pq times it is |a_pq|
            phase = lax.select(
                nonzero,
                lax.div(lax.conj(apq), lax.convert_element_type(safe, get_aval(a).dtype)),
                lax.full_like(apq, 1),
            )
            phase_c, apq = lax.conj(phase), mag
        cs, sn = _rotation(d[..., :h], d[..., h:], apq)
        a = _rotate_columns(a, cs, sn, phase)
        a = _T(_rotate_columns(_T(a), cs, sn, phase_c))  # rows by J^H
        a = _next_pairing(_next_pairing(a, -1), -2)
        return a, _next_pairing(_rotate_columns(v, cs, sn, phase), -1)

    def sweep(c):
        from pyjax.lax.control_flow import fori_loop

        a, v, it = c
        a, v = fori_loop(0, big_n - 1, one_round, (a, v)) if big_n > 1 else (a, v)
        return a, v, it + 1

    def converged(c):
        a = c[0]
        sq = lax.add(lax.mul(lax.real(a), lax.real(a)), lax.mul(lax.imag(a), lax.imag(a))) if cplx else a * a
        off = lax.reduce_sum(lax.select(offdiag, sq, lax.full_like(sq, 0)), both)
        ok = lax.le(off, (eps * eps) * lax.reduce_sum(sq, both))
        return lax.reduce_and(ok, tuple(range(nd - 2)))

    a, v, _ = _sweeps(sweep, (a, v, lax.full((), 0, _i32)), converged)
    w = _diagonal(a)[..., :n]
    w = lax.real(w) if cplx else w
    w, (v,) = _sort_columns(w, v[..., :n, :n])
    return w, v


def _jacobi_svd(x, full_matrices: bool, compute_uv: bool):
    """(u, s, vh) of x with m >= n by one-sided Jacobi; u from a QR of the orthogonalized columns."""
    m, n = get_aval(x).shape[-2:]
    nd = _nd(x)
    dt = get_aval(x).dtype
    w = _pad_even(x, (nd - 1,))
    big_n = get_aval(w).shape[-1]
    v = _eye_like(get_aval(w).shape[:-2] + (big_n, big_n), dt)
    tol = float(dtypes.finfo(get_aval(x).dtype).eps) * builtins.max(m, 8)

    def one_round(_, c):
        w, v, worst = c
        h = big_n // 2
        top, bot = w[..., :h], w[..., h:]
        alpha, beta = _sum(top * top, -2), _sum(bot * bot, -2)
        gamma = _sum(top * bot, -2)
        ab = alpha * beta
        pos = lax.gt(ab, 0)
        rel = lax.select(
            pos, lax.abs(gamma) / lax.sqrt(lax.select(pos, ab, lax.full_like(ab, 1))), lax.full_like(ab, 0)
        )
        cs, sn = _rotation(alpha, beta, gamma)
        w = _next_pairing(_rotate_columns(w, cs, sn), -1)
        v = _next_pairing(_rotate_columns(v, cs, sn), -1)
        return w, v, lax.max(worst, lax.reduce_max(rel, tuple(range(nd - 1))))

    def sweep(c):
        from pyjax.lax.control_flow import fori_loop

        w, v, _, it = c
        init = (w, v, lax.full((), 0, dt))
        w, v, worst = fori_loop(0, big_n - 1, one_round, init) if big_n > 1 else init
        return w, v, worst, it + 1

    w, v, _, _ = _sweeps(sweep, (w, v, lax.full((), 0, dt), lax.full((), 0, _i32)), lambda c: c[2] <= tol)
    w, v = w[..., :n], v[..., :n, :n]
    s = lax.sqrt(_sum(w * w, -2))
    neg_s, (w, v) = _sort_columns(-s, w, v)
    s = -neg_s
    if not compute_uv:
        return s
    q, r = _householder_qr(w, full_matrices)
    d = _diagonal(r[..., :n, :])
    sign = lax.select(lax.lt(d, 0), lax.full_like(d, -1), lax.full_like(d, 1))
    u = q[..., :, :n] * lax.expand_dims(sign, (nd - 2,))
    if full_matrices and m > n:
        u = lax.concatenate([u, q[..., :, n:]], nd - 1)
    return u, s, _T(v)


def _svd_any(x, full_matrices: bool, compute_uv: bool):
    m, n = get_aval(x).shape[-2:]
    if m >= n:
        return _jacobi_svd(x, full_matrices, compute_uv)
    out = _jacobi_svd(_T(x), full_matrices, compute_uv)
    if not compute_uv:
        return out
    u, s, vh = out
    return _T(vh), s, _T(u)


# --- derivative rules ------------------------------------------------------------------------------


def _safe_reciprocal_offdiag(diffs):
    """1 / diffs off the diagonal, 0 on it."""
    eye = _eye_like(get_aval(diffs).shape, get_aval(diffs).dtype)
    return 1 / (diffs + eye) - eye


def _qr_jvp(full_matrices, primals, tangents):
    (x,), (dx,) = primals, tangents
    q, r = _qr_custom(x, full_matrices)
    m, n = get_aval(x).shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative")
    dx = ad.instantiate(dx)
    dx_rinv = triangular_solve(r, dx)  # dx r^-1 (right side, upper)
    qt_dx_rinv = _matmul(_T(q), dx_rinv)
    low = _tril(qt_dx_rinv, -1)
    omega = low - _T(low)
    dq = _matmul(q, omega - qt_dx_rinv) + dx_rinv
    dr = _matmul(qt_dx_rinv - omega, r)
    return (q, r), (dq, dr)


def _eigh_jvp(primals, tangents):
    (a,), (da,) = primals, tangents
    w, v = _eigh_custom(a)
    vt_da_v = _matmul(_H(v), _matmul(ad.instantiate(da), v))
    f = _safe_reciprocal_offdiag(w[..., None, :] - w[..., :, None])
    if get_aval(v).dtype.kind == "c":
        f = lax.convert_element_type(f, get_aval(v).dtype)
    dv = _matmul(v, f * vt_da_v)
    dw = _diagonal(vt_da_v)
    return (w, v), (lax.real(dw) if get_aval(dw).dtype.kind == "c" else dw, dv)


def _svd_jvp(full_matrices, compute_uv, primals, tangents):
    (x,), (dx,) = primals, tangents
    dx = ad.instantiate(dx)
    if compute_uv and full_matrices:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    u, s, vh = _svd_custom(x, False, True)
    v = _T(vh)
    ds_mat = _matmul(_T(u), _matmul(dx, v))
    ds = _diagonal(ds_mat)
    if not compute_uv:
        return s, ds
    s_row = s[..., None, :]
    f = _safe_reciprocal_offdiag((s_row + _T(s_row)) * (s_row - _T(s_row)))
    dss = ds_mat * s_row
    sds = _T(s_row) * ds_mat
    du = _matmul(u, f * (dss + _T(dss)))
    dv = _matmul(v, f * (sds + _T(sds)))
    m, n = get_aval(x).shape[-2:]
    zero = lax.eq(s_row, 0)
    s_inv = lax.select(zero, lax.full_like(s_row, 0), 1 / lax.select(zero, lax.full_like(s_row, 1), s_row))
    if m > n:
        dxv = _matmul(dx, v)
        du = du + (dxv - _matmul(u, _matmul(_T(u), dxv))) * s_inv
    if n > m:
        dxu = _matmul(_T(dx), u)
        dv = dv + (dxu - _matmul(v, _matmul(_T(v), dxu))) * s_inv
    return (u, s, vh), (du, ds, _T(dv))


_CUSTOM: dict = {}


def _custom(name: str):
    """The custom_jvp-wrapped, jitted decomposition `name` (built on first use to avoid import cycles)."""
    if name not in _CUSTOM:
        from pyjax.api import jit
        from pyjax.custom_derivatives import custom_jvp

        if name == "qr":
            f = custom_jvp(lambda x, full: _householder_qr(x, full), nondiff_argnums=(1,))
            f.defjvp(_qr_jvp)
            _CUSTOM[name] = jit(f, static_argnums=(1,))
        elif name == "eigh":
            f = custom_jvp(_jacobi_eigh)
            f.defjvp(_eigh_jvp)
            _CUSTOM[name] = jit(f)
        else:
            f = custom_jvp(lambda x, full, uv: _svd_any(x, full, uv), nondiff_argnums=(1, 2))
            f.defjvp(_svd_jvp)
            _CUSTOM[name] = jit(f, static_argnums=(1, 2))
    return _CUSTOM[name]


def _qr_custom(x, full_matrices):
    return _custom("qr")(x, full_matrices)


def _eigh_custom(a):
    return _custom("eigh")(a)


def _svd_custom(x, full_matrices, compute_uv):
    return _custom("svd")(x, full_matrices, compute_uv)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """Solve the tridiagonal systems (sub-diagonal dl, diagonal d, super-diagonal du) A x = b.

    dl, d, du: (..., m) with dl[..., 0] and du[..., m - 1] ignored; b: (..., m, n). The Thomas
    algorithm (no pivoting), as two lax.scan passes over the m axis.
    """
    from pyjax.lax.control_flow import scan

    dl, d, du, b = (lax._as_array(v) for v in (dl, d, du, b))
    sd, sb = get_aval(d).shape, get_aval(b).shape
    if len(sb) < 2 or sb[:-1] != sd or get_aval(dl).shape != sd or get_aval(du).shape != sd:
        raise ValueError(
            f"tridiagonal_solve: dl, d and du must have shape (..., m) and b (..., m, n); got "
            f"{get_aval(dl).shape}, {sd}, {get_aval(du).shape} and {sb}"
        )
    for v in (dl, d, du, b):
        _check_float("tridiagonal_solve", get_aval(v))
    m = sd[-1]
    if m == 0:
        return b
    # Scan over m: move it to the front (coefficients (m, ...), right-hand sides (m, ..., n)).
    dl_m, d_m, du_m = (lax.moveaxis_lax(v, -1, 0) for v in (dl, d, du))
    b_m = lax.moveaxis_lax(b, -2, 0)

    def forward(carry, xs):
        c_prev, y_prev = carry
        lo, di, up, bi = xs
        denom = di - lo * c_prev
        c = up / denom
        y = (bi - lo[..., None] * y_prev) / denom[..., None]
        return (c, y), (c, y)

    zero_c = lax.full_like(d_m[0], 0)
    zero_y = lax.full_like(b_m[0], 0)
    lo = lax.concatenate([lax.full_like(dl_m[:1], 0), dl_m[1:]], 0)
    _, (c, y) = scan(forward, (zero_c, zero_y), (lo, d_m, du_m, b_m))

    def backward(x_next, xs):
        ci, yi = xs
        x = yi - ci[..., None] * x_next
        return x, x

    _, x = scan(backward, zero_y, (c, y), reverse=True)
    return lax.moveaxis_lax(x, 0, -2)


# --- algorithm choices (JAX's enums; the CPU platform's support, as JAX on CPU) ---------------------


class EighImplementation(enum.Enum):
    """Which symmetric eigensolver eigh uses; the CPU platform has QR only."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which SVD algorithm svd uses; Jacobi and polar are not on the CPU platform."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


class EigImplementation(enum.Enum):
    """Which general eigensolver eig uses; the CPU platform has LAPACK only."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


_EIGH_UNSUPPORTED = {
    EighImplementation.JACOBI: "Jacobi implementation is not supported on CPU",
    EighImplementation.QDWH: "QDWH implementation is only supported on TPU",
}
_SVD_SUPPORTED = (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.QR, SvdAlgorithm.DIVIDE_AND_CONQUER)


# --- public API --------------------------------------------------------------------------------------


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """QR decomposition (q, r) of each matrix in x; q is (m, m) with full_matrices, else (m, k)."""
    if pivoting:
        raise NotImplementedError("qr: pivoting=True is not supported by pyjax")
    x = _check_matrix("qr", x)
    return _qr_custom(x, bool(full_matrices))


def eigh(
    x,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index=None,
    implementation=None,
):
    """Eigendecomposition (v, w) of symmetric or Hermitian matrices: x = v diag(w) v^H, w ascending (real).

    With symmetrize_input=False only the `lower` (or upper) triangle is read, as in LAPACK (and the
    imaginary part of the diagonal is ignored).
    """
    if implementation in _EIGH_UNSUPPORTED:
        raise NotImplementedError(_EIGH_UNSUPPORTED[implementation])
    x = _check_matrix("eigh", x, square=True, complex_ok=True)
    if symmetrize_input:
        x = _symmetrize(x)
    else:
        t = _tril(x, -1) if lower else _triu(x, 1)
        d = lax.select(_eye_like(get_aval(x).shape, dtypes.bool_), x, lax.full_like(x, 0))
        if get_aval(x).dtype.kind == "c":
            d = lax.complex(lax.real(d), lax.full_like(lax.real(d), 0))
        x = lax.add(lax.add(t, d), _H(t))
    w, v = _eigh_custom(x)
    if subset_by_index is not None:
        lo, hi = subset_by_index
        w, v = w[..., lo:hi], v[..., lo:hi]
    return v, w


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None, algorithm=None):
    """Singular value decomposition: (u, s, vh) with x = u diag(s) vh and s descending, or s alone."""
    if algorithm not in _SVD_SUPPORTED:
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    x = _check_matrix("svd", x)
    out = _svd_custom(x, bool(full_matrices), bool(compute_uv))
    if subset_by_index is not None:
        lo, hi = subset_by_index
        if not compute_uv:
            return out[..., lo:hi]
        u, s, vh = out
        return u[..., lo:hi], s[..., lo:hi], vh[..., lo:hi, :]
    return out


# --- general eigenproblems and small products -------------------------------------------------------
#
# The Schur QR iterations behind eig and schur are written with numpy ops (pyjax.numpy._schur, used by
# jnp.linalg.eig); pyjax.numpy.linalg lends them to lax through core/hooks.py, so lax imports neither.


def eig(
    x,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation=None,
    use_magma=None,
):
    """[w, vl, vr] (those asked for) of general square matrices: eigenvalues, left and right
    eigenvectors (unit-norm columns, largest component real; vl[:, k]^H x = w[k] vl[:, k]^H)."""
    if implementation not in (None, EigImplementation.LAPACK):
        raise ValueError("Only the lapack implementation is supported on CPU.")
    x = _check_matrix("eig", x, square=True)
    return hooks.op("eig")(x, bool(compute_left_eigenvectors), bool(compute_right_eigenvectors))


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False, select_callable=None):
    """[t, vs] (as JAX, a list; [t] without vectors): x = vs t vs^H, t quasi-triangular (real x) or triangular."""
    if sort_eig_vals or select_callable is not None:
        raise NotImplementedError(
            "lax.linalg.schur: sorting eigenvalues (sort_eig_vals, select_callable) is not supported by pyjax"
        )
    x = _check_matrix("schur", x, square=True)
    t, vs = hooks.op("schur")(x, "complex" if get_aval(x).dtype.kind == "c" else "real")
    return [t, vs] if compute_schur_vectors else [t]


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0, symmetrize_output: bool = False):
    """alpha * a a^T + beta * c (symmetrized from its lower triangle if asked)."""
    out = alpha * _matmul(a_matrix, _T(a_matrix)) + beta * _arr(c_matrix)
    return _tril(out) + _T(_tril(out, -1)) if symmetrize_output else out


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of r^T r + w w^T, given the upper factor r."""
    w = w_vector[..., :, None]
    return _T(cholesky(lax.add(_matmul(_T(r_matrix), r_matrix), _matmul(w, _T(w)))))


from pyjax.lax import polar as _polar  # noqa: E402
from pyjax.lax.decomposed import make_table as _make_table  # noqa: E402
from pyjax.lax.householder import hessenberg, householder_product, ormqr, tridiagonal  # noqa: E402


def qdwh(x, *, is_hermitian: bool = False, max_iterations=None, eps=None, dynamic_shape=None):
    """(u, h, num_iters, is_converged): the polar decomposition x = u h (M >= N) by QDWH (lax/polar.py)."""
    fx = _Factorizations(qr, cholesky, triangular_solve)
    x = lax._as_array(x)
    return _polar.qdwh(
        x, fx, is_hermitian=is_hermitian, max_iterations=max_iterations, eps=eps, dynamic_shape=dynamic_shape
    )


class _Factorizations(NamedTuple):
    qr: Callable
    cholesky: Callable
    triangular_solve: Callable


def _svd_p_meaning(x, *, full_matrices, compute_uv, subset_by_index=None, algorithm=None):
    out = svd(
        x, full_matrices=full_matrices, compute_uv=compute_uv, subset_by_index=subset_by_index, algorithm=algorithm
    )
    return [out[1], out[0], out[2]] if compute_uv else [out]  # JAX's svd_p gives s first


def _eigh_p_meaning(x, *, lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None):
    return eigh(
        x,
        lower=lower,
        symmetrize_input=False,
        sort_eigenvalues=sort_eigenvalues,
        subset_by_index=subset_by_index,
        implementation=algorithm,
    )


def _eig_p_meaning(x, *, compute_left_eigenvectors=True, compute_right_eigenvectors=True, **_):
    return eig(
        x, compute_left_eigenvectors=compute_left_eigenvectors, compute_right_eigenvectors=compute_right_eigenvectors
    )


# JAX's linalg primitives that pyjax composes (lax/decomposed.py): name -> (meaning, multiple results)
_LINALG_PRIMITIVES = _make_table(
    {
        "eigh": (_eigh_p_meaning, True),
        "svd": (_svd_p_meaning, True),
        "qr": (lambda x, pivoting=False, full_matrices=True, use_magma=None: qr(x, full_matrices=full_matrices), True),
        "eig": (_eig_p_meaning, True),
        "schur": (schur, True),
        "hessenberg": (hessenberg, True),
        "tridiagonal": (tridiagonal, True),
        "householder_product": (householder_product, False),
        "ormqr": (ormqr, False),
        "lu_pivots_to_permutation": (lu_pivots_to_permutation, False),
        "tridiagonal_solve": (tridiagonal_solve, False),
        "symmetric_product": (symmetric_product, False),
        "cholesky_update": (cholesky_update, False),
    }
)
globals().update(_LINALG_PRIMITIVES)

__all__ = [
    *_LINALG_PRIMITIVES,
    "hessenberg",
    "householder_product",
    "ormqr",
    "tridiagonal",
    "EighImplementation",
    "SvdAlgorithm",
    "EigImplementation",
    "eig",
    "schur",
    "symmetric_product",
    "cholesky_update",
    "cholesky",
    "triangular_solve",
    "qr",
    "qdwh",
    "eigh",
    "svd",
    "tridiagonal_solve",
    "lu",
    "lu_pivots_to_permutation",
    "cholesky_p",
    "triangular_solve_p",
    "lu_p",
    "permute_rows",
]
