"""lax.linalg.qdwh: the polar decomposition x = u h by the QR-based dynamically weighted Halley iteration
(Nakatsukasa, Bai and Gygi, SIAM J. Matrix Anal. Appl. 31(5), 2010), with JAX's schedule of weights,
stopping rule and outputs (u, h, num_iters, is_converged), so num_iters agrees with JAX's (up to one step
where the condition number nears 1/eps and rounding in the QR steps decides). Real matrices only, as
pyjax's qr and cholesky are.

The weights (a, b, c) of each step depend only on the bound l of the smallest singular value, so they
are computed in Python before tracing; steps with c > 100 use the QR form (stable for ill-conditioned
iterates), later ones the cheaper Cholesky form, then plain Halley steps (3, 1, 3) run until the
iterate moves less than (5 eps)^(1/3). linalg.py passes its qr, cholesky and triangular_solve in as
`fx` (this module sits below linalg, which defines lax.linalg.qdwh).
"""

from __future__ import annotations

import operator

from pyjax.core import dtypes
from pyjax.core.core import Tracer, get_aval
from pyjax.lax import lax
from pyjax.lax.control_flow import while_loop

_CHOLESKY_CUTOFF = 100


def _t(x):
    """The transpose of a matrix."""
    return lax.transpose(x, (1, 0))


def _eye(n: int, dt):
    return lax.convert_element_type(
        lax.eq(lax.broadcasted_iota(dtypes.int32, (n, n), 0), lax.broadcasted_iota(dtypes.int32, (n, n), 1)), dt
    )


def _scalar(v, dt):
    return lax.full((), v, dt)


def weights(eps: float, max_iterations: int) -> list[tuple[float, float, float]]:
    """The dynamic weights (a, b, c), one per step, while the lower bound l is below 1 - 5 eps."""
    out, l, tol = [], eps, 5 * eps
    while l + tol < 1 and len(out) < max_iterations:
        l2 = l * l
        d = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        s = (1 + d) ** 0.5
        a = s + (2 - d + 2 * (2 - l2) / (l2 * s)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        out.append((a, b, c))
    return out


def _qr_step(u, params, fx):
    """u <- e u + w q1 q2^T, with [s u; I] = [q1; q2] r; params (w, s, e) = ((a - e)/sqrt(c), sqrt(c), b/c)."""
    m, n = get_aval(u).shape
    dt = get_aval(u).dtype
    w, s, e = (_scalar(v, dt) for v in params)
    q, _ = fx.qr(lax.concatenate([lax.mul(u, s), _eye(n, dt)], 0), full_matrices=False)
    q1, q2 = lax.slice(q, (0, 0), (m, n)), lax.slice(q, (m, 0), (m + n, n))
    return lax.add(lax.mul(e, u), lax.mul(w, lax.dot(q1, _t(q2))))


def _cholesky_step(u, params, fx):
    """u <- e u + w u (c u^T u + I)^-1 through a Cholesky factor; params (w, c, e) = (a - b/c, c, b/c)."""
    n = get_aval(u).shape[1]
    dt = get_aval(u).dtype
    w, c, e = (_scalar(v, dt) for v in params)
    low = fx.cholesky(lax.add(lax.mul(c, lax.dot(_t(u), u)), _eye(n, dt)), symmetrize_input=False)
    y = fx.triangular_solve(low, _t(u), left_side=True, lower=True)
    z = fx.triangular_solve(low, y, left_side=True, lower=True, transpose_a=True, conjugate_a=True)
    return lax.add(lax.mul(e, u), lax.mul(w, _t(z)))


def _fro(x):
    return lax.sqrt(lax.reduce_sum(lax.mul(x, x), (0, 1)))


def _iterate(x, max_iterations: int, eps, fx):
    dt = get_aval(x).dtype
    if eps is None:
        eps = float(dtypes.finfo(dt).eps)
    ax = lax.abs(x)
    one_norm = lax.reduce_max(lax.reduce_sum(ax, (0,)), (0,))
    inf_norm = lax.reduce_max(lax.reduce_sum(ax, (1,)), (0,))
    scale = lax.mul(lax.rsqrt(one_norm), lax.rsqrt(inf_norm))
    scale = lax.select(lax.eq(one_norm, _scalar(0, dt)), _scalar(1, dt), scale)
    u = lax.mul(x, lax.convert_element_type(scale, dt))
    tol_norm = _scalar((5 * eps) ** (1 / 3), dt)

    def moved(new, old):
        return lax.gt(_fro(lax.sub(new, old)), tol_norm)

    not_converged = lax.full((), True, dtypes.bool_)
    steps = weights(eps, max_iterations)
    for a, b, c in steps:
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            u = _qr_step(u, ((a - e) / c**0.5, c**0.5, e), fx)
        else:
            prev, u = u, _cholesky_step(u, (a - e, c, e), fx)
            not_converged = moved(u, prev)

    def body(state):
        k, u, _ = state
        new = _cholesky_step(u, (3 - 1 / 3, 3.0, 1 / 3), fx)  # Halley's weights, where l has reached 1
        return lax.add(k, lax._convert(1, dtypes.int32, True)), new, moved(new, u)

    def cond(state):
        k, _, nc = state
        return lax.bitwise_and(nc, lax.lt(k, lax.full((), max_iterations, dtypes.int32)))

    k0 = lax._convert(len(steps), dtypes.int32, True)
    num_iters, u, not_converged = while_loop(cond, body, (k0, u, not_converged))
    u = lax.sub(lax.mul(_scalar(1.5, dt), u), lax.mul(_scalar(0.5, dt), lax.dot(u, lax.dot(_t(u), u))))
    h = lax.dot(_t(u), x)
    h = lax.mul(lax.add(h, _t(h)), _scalar(0.5, dt))
    return u, h, num_iters, lax.bitwise_not(not_converged)


def qdwh(x, fx, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
    """(u, h, num_iters, is_converged) of the polar decomposition x = u h of an M x N (M >= N) matrix;
    fx holds the factorizations (qr, cholesky, triangular_solve)."""
    av = get_aval(x)
    if len(av.shape) != 2:
        raise ValueError(f"qdwh requires a matrix, got shape {av.shape}")
    m_full, n_full = av.shape
    if av.dtype.kind != "f":
        raise TypeError(
            f"qdwh: pyjax supports real floating-point matrices (its qr and cholesky are real), got {av.dtype.name}"
        )
    if m_full < n_full:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    max_iterations = 10 if max_iterations is None else operator.index(max_iterations)
    if dynamic_shape is None:
        return _iterate(x, max_iterations, eps, fx)
    if any(isinstance(d, Tracer) for d in dynamic_shape):
        raise NotImplementedError("qdwh: pyjax needs a concrete dynamic_shape (Python ints)")
    m, n = (operator.index(d) for d in dynamic_shape)
    u, h, k, ok = _iterate(lax.slice(x, (0, 0), (m, n)), max_iterations, eps, fx)
    zero = lax.full((), 0, av.dtype)
    u = lax.pad(u, zero, ((0, m_full - m, 0), (0, n_full - n, 0)))
    h = lax.pad(h, zero, ((0, n_full - n, 0), (0, n_full - n, 0)))
    return u, h, k, ok
