"""jax.scipy.linalg: scipy-style triangular, Cholesky and LU solvers on top of lax.linalg.

Leading axes are batch axes; everything is differentiable. scipy's defaults differ from numpy's
(e.g. `cholesky` returns the upper factor unless lower=True); these follow scipy, like JAX.
"""

from __future__ import annotations

from pyjax.lax import lax
from pyjax.lax import linalg as lax_linalg
from pyjax.numpy import _core as jnp
from pyjax.numpy import linalg as jla
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
    is_vec = jnp._aval(b).ndim == jnp._aval(a).ndim - 1
    return (jnp.expand_dims(b, -1) if is_vec else b), is_vec


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
    """Cholesky factor: upper U (a = U^T U) by default, lower L with lower=True.

    Like scipy, only the triangle being factored is read (no symmetrization).
    """
    (a,) = jla._inexact("cholesky", a)
    L = lax_linalg.cholesky(a if lower else lax_linalg._T(a), symmetrize_input=False)
    return L if lower else lax_linalg._T(L)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower) for cho_solve; c is the clean triangular Cholesky factor."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve a x = b given cho_factor(a)."""
    c, lower = c_and_lower
    c, b = jla._inexact("cho_solve", c, b)
    bm, is_vec = _as_matrix_rhs(c, b)
    # a = L L^T (lower) or U^T U (upper): two triangular solves.
    y = lax_linalg.triangular_solve(c, bm, left_side=True, lower=lower, transpose_a=not lower)
    x = lax_linalg.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower)
    return x[..., 0] if is_vec else x


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): packed LU factors and LAPACK-style 0-based pivot rows."""
    (a,) = jla._inexact("lu_factor", a)
    lu_mat, piv, _ = lax_linalg.lu(a)
    return lu_mat, piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b: bool = False, check_finite: bool = True):
    """Solve a x = b (trans 0), a^T x = b (1) or a^H x = b (2) given lu_factor(a)."""
    lu_mat, piv = lu_and_piv
    transpose_a, _ = _trans_flags(trans)
    lu_mat, b = jla._inexact("lu_solve", lu_mat, b)
    m = jnp._aval(lu_mat).shape[-1]
    perm = lax_linalg.lu_pivots_to_permutation(piv, m)
    bm, is_vec = _as_matrix_rhs(lu_mat, b)
    batch = jnp._aval(lu_mat).shape[:-2]
    if jnp._aval(bm).shape[:-2] != batch:
        bm = jnp.broadcast_to(bm, batch + jnp._aval(bm).shape[-2:])
    if not transpose_a:
        x = jla._lu_solve_matrix(lu_mat, perm, bm)
    else:  # a = P^T L U, so a^T x = b  <=>  x = P^T L^-T U^-T b
        y = lax_linalg.triangular_solve(lu_mat, bm, left_side=True, lower=False, transpose_a=True)
        z = lax_linalg.triangular_solve(lu_mat, y, left_side=True, lower=True, transpose_a=True, unit_diagonal=True)
        x = lax_linalg.permute_rows(z, argsort(perm, axis=-1))
    return x[..., 0] if is_vec else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p @ l @ u, or (p @ l, u) when permute_l."""
    (a,) = jla._inexact("lu", a)
    lu_mat, _, perm = lax_linalg.lu(a)
    s = jnp._aval(a).shape
    m, n = s[-2:]
    k = min(m, n)
    dt = jnp._aval(a).dtype
    nd = len(s)
    l_part = lax_linalg._tril(lu_mat[..., :, :k], -1) + jnp.eye(m, k, dtype=dt)
    u_part = lax_linalg._triu(lu_mat[..., :k, :])
    # p[i, j] = 1 where perm[j] == i
    pmat = lax.convert_element_type(
        lax.eq(
            lax.broadcast_in_dim(perm, s[:-2] + (m, m), tuple(range(nd - 2)) + (nd - 1,)),
            lax.broadcasted_iota(jnp._aval(perm).dtype, s[:-2] + (m, m), nd - 2),
        ),
        dt,
    )
    if permute_l:
        return jnp.matmul(pmat, l_part), u_part
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
]
