"""lax.linalg: the linear-algebra primitives `cholesky`, `triangular_solve` and `lu`.

Each runs as a Routine (leading axes are batch axes). Their derivatives are written with the
primitives themselves: forward-mode rules are the textbook ones (Murray 2016 for Cholesky, the
P A = L U perturbation identity for LU); reverse-mode rules for `cholesky` and `lu` transpose the
forward rule with the tape, and `triangular_solve` has an explicit transpose that respects
left_side, lower, transpose_a and unit_diagonal (only the referenced triangle gets a cotangent).
"""

from __future__ import annotations

import builtins

from pyjax.core import dtypes
from pyjax.core.core import ShapedArray, get_aval
from pyjax.interpreters import ad, batching
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax
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


def _shape_str(s) -> str:
    return lax._shape_str(s)


def _check_float(fn: str, aval) -> None:
    if aval.dtype.kind != "f":
        raise TypeError(f"{fn} requires a floating-point input, got dtype {aval.dtype.name}")


def _transpose_via_tape(tangent_fn, x):
    """backward(ct) for a rule whose tangent map t -> tangent_fn(t) is linear in t."""

    def backward(ct):
        _, f_vjp, _ = ad.vjp_flat(lambda t: ([tangent_fn(t)], None), [lax.full_like(x, 0)])
        return f_vjp([ad.instantiate(ct)])

    return backward


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


def _symmetrize(x):
    return lax.div(lax.add(x, _T(x)), lax.full_like(x, 2))


def cholesky(x, *, symmetrize_input: bool = True):
    """Lower Cholesky factor L (x = L L^T) of each matrix in x; NaNs where x is not positive definite."""
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


def _cholesky_vjp(primals, needs):
    (x,) = primals
    L = cholesky_p.bind(x)
    return L, _transpose_via_tape(lambda t: _cholesky_tangent(L, t), x)


ad.jvp_rules[cholesky_p] = _cholesky_jvp
ad.vjp_rules[cholesky_p] = _cholesky_vjp
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


def _tri_solve_vjp(primals, needs, **params):
    a, b = primals
    x = triangular_solve_p.bind(a, b, **params)

    def backward(ct):
        if type(ct) is Zero:
            return [None, None]
        p2 = dict(params, transpose_a=not params["transpose_a"])
        ct_b = triangular_solve_p.bind(a, ct, **p2)
        ct_a = None
        if needs[0]:
            op = _matmul(ct_b, _T(x)) if params["left_side"] else _matmul(_T(x), ct_b)
            op = lax.neg(op)
            if params["transpose_a"]:
                op = _T(op)
            ct_a = _mask_a(op, params["lower"], params["unit_diagonal"])
        return [ct_a, ct_b if needs[1] else None]

    return x, backward


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


ad.jvp_rules[triangular_solve_p] = _tri_solve_jvp
ad.vjp_rules[triangular_solve_p] = _tri_solve_vjp
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
    """LU decomposition with partial pivoting: (lu, pivots, permutation) with x[perm] = L @ U.

    lu packs the unit-lower L (below the diagonal) and U; pivots are LAPACK-style row swaps (0-based).
    """
    return tuple(lu_p.bind(lax._as_array(x)))


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


def _lu_vjp(primals, needs):
    (x,) = primals
    lu_mat, piv, perm = lu_p.bind(x)
    inner = _transpose_via_tape(lambda t: _lu_tangent(lu_mat, perm, t), x)

    def backward(cts):
        return inner(cts[0]) if type(cts[0]) is not Zero else [None]

    backward.multiple_results = True
    return [lu_mat, piv, perm], backward


ad.jvp_rules[lu_p] = _lu_jvp
ad.vjp_rules[lu_p] = _lu_vjp
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


__all__ = [
    "cholesky",
    "triangular_solve",
    "lu",
    "lu_pivots_to_permutation",
    "cholesky_p",
    "triangular_solve_p",
    "lu_p",
    "permute_rows",
]
