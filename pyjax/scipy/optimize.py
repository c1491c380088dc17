"""jax.scipy.optimize: `minimize` with method 'BFGS' (inverse-Hessian BFGS, Nocedal & Wright alg. 6.1)
driven by a strong-Wolfe line search with zoom (alg. 3.5/3.6), all inside lax.while_loop so it jits.

The step selection, counters and status codes follow JAX's implementation so iterates agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pyjax import lax
from pyjax import numpy as jnp
from pyjax.api import value_and_grad

__all__ = ["OptimizeResults", "minimize"]

_HI = lax.Precision.HIGHEST


def _dot(a, b):
    return jnp.dot(a, b, precision=_HI)


def _is_wide(dtype) -> bool:
    """Whether dtype is a 64-bit float (the line search uses looser floors below 64 bits)."""
    return jnp.dtype(dtype).itemsize * 8 >= 64 and jnp.dtype(dtype).kind == "f"


class OptimizeResults(NamedTuple):
    """Result of `minimize`: status 0 converged, 1 max iterations, 3 zoom failed, 5 line-search maxiter."""

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


# ----------------------------------------------------------------------------- line search


def _cubic_step(a, fa, ga, b, fb, c, fc):
    """Minimiser of the cubic through (a, fa) with slope ga at a and through (b, fb), (c, fc)."""
    db, dc = b - a, c - a
    rb, rc = fb - fa - ga * db, fc - fa - ga * dc
    den = (db * dc) ** 2 * (db - dc)
    p3 = (dc**2 * rb - db**2 * rc) / den
    p2 = (-(dc**3) * rb + db**3 * rc) / den
    return a + (-p2 + jnp.sqrt(p2 * p2 - 3.0 * p3 * ga)) / (3.0 * p3)


def _quad_step(a, fa, ga, b, fb):
    """Minimiser of the parabola through (a, fa) with slope ga at a and through (b, fb)."""
    db = b - a
    curv = (fb - fa - ga * db) / (db**2)
    return a - ga / (2.0 * curv)


def _pick(cond, new: dict, old: NamedTuple) -> dict:
    return {k: jnp.where(cond, v, getattr(old, k)) for k, v in new.items()}


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(phi_fn, armijo_broken, curvature_ok, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi, g0, skip):
    """Shrink the bracket [a_lo, a_hi] with cubic / quadratic / bisection trial steps until strong Wolfe."""
    init = _Zoom(
        done=False,
        failed=False,
        j=0,
        a_lo=a_lo,
        phi_lo=phi_lo,
        dphi_lo=dphi_lo,
        a_hi=a_hi,
        phi_hi=phi_hi,
        dphi_hi=dphi_hi,
        a_rec=(a_lo + a_hi) / 2.0,
        phi_rec=(phi_lo + phi_hi) / 2.0,
        a_star=1.0,
        phi_star=phi_lo,
        dphi_star=dphi_lo,
        g_star=g0,
        nfev=0,
        ngev=0,
    )

    def body(s: _Zoom) -> _Zoom:
        width = s.a_hi - s.a_lo
        lo, hi = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        floor = 1e-10 if _is_wide(width.dtype) else 1e-5
        s = s._replace(failed=s.failed | (width <= floor))
        a_cub = _cubic_step(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
        use_cub = (s.j > 0) & (a_cub > lo + 0.2 * width) & (a_cub < hi - 0.2 * width)
        a_quad = _quad_step(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cub & (a_quad > lo + 0.1 * width) & (a_quad < hi - 0.1 * width)
        a_j = jnp.where(use_cub, a_cub, s.a_rec)
        a_j = jnp.where(use_quad, a_quad, a_j)
        a_j = jnp.where(~use_cub & ~use_quad, (s.a_lo + s.a_hi) / 2.0, a_j)
        phi_j, dphi_j, g_j = phi_fn(a_j)
        phi_j = phi_j.astype(jnp.result_type(s.phi_lo))
        dphi_j = dphi_j.astype(jnp.result_type(s.dphi_lo))
        g_j = g_j.astype(jnp.result_type(s.g_star))
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

        to_hi = armijo_broken(a_j, phi_j) | (phi_j >= s.phi_lo)
        to_star = curvature_ok(dphi_j) & ~to_hi
        flip = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & ~to_hi & ~to_star
        to_lo = ~to_hi & ~to_star

        s = s._replace(**_pick(to_hi, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s.a_hi, phi_rec=s.phi_hi), s))
        s = s._replace(
            done=to_star | s.done,
            **_pick(to_star, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), s),
        )
        s = s._replace(
            **_pick(flip, dict(a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo, a_rec=s.a_hi, phi_rec=s.phi_hi), s)
        )
        s = s._replace(**_pick(to_lo & ~flip, dict(a_rec=s.a_lo, phi_rec=s.phi_lo), s))
        s = s._replace(**_pick(to_lo, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s))
        j = s.j + 1
        return s._replace(j=j, failed=s.failed | (j >= 30))

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, init)


class _LS(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_prev: Any
    phi_prev: Any
    dphi_prev: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class _LSResults(NamedTuple):
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def _line_search(f, xk, pk, old_fval, old_old_fval, gfk, c1: float = 1e-4, c2: float = 0.9, maxiter: int = 20):
    """Step length along pk meeting the strong Wolfe conditions (doubling, then zoom)."""
    xk, pk = jnp.asarray(xk), jnp.asarray(pk)
    dt = jnp.result_type(xk, pk)
    if not jnp.issubdtype(dt, jnp.inexact):
        dt = jnp.result_type(dt, 1.0)
    xk, pk = xk.astype(dt), pk.astype(dt)

    def phi_fn(t):
        t = jnp.array(t, dtype=pk.dtype)
        val, g = value_and_grad(f)(xk + t * pk)
        return val, jnp.real(_dot(g, pk)), g

    phi0 = old_fval
    dphi0 = jnp.real(_dot(gfk, pk))
    guess = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
    first = jnp.where(guess > 1, 1.0, guess)

    def armijo_broken(a, phi):
        return phi > phi0 + c1 * a * dphi0

    def curvature_ok(dphi):
        return jnp.abs(dphi) <= -c2 * dphi0

    init = _LS(
        done=jnp.array(False),
        failed=jnp.array(False),
        i=1,
        a_prev=0.0,
        phi_prev=phi0,
        dphi_prev=dphi0,
        nfev=0,
        ngev=0,
        a_star=0.0,
        phi_star=phi0,
        dphi_star=dphi0,
        g_star=gfk,
    )

    def body(s: _LS) -> _LS:
        a_i = jnp.where(s.i == 1, first, s.a_prev * 2.0)
        phi_i, dphi_i, g_i = phi_fn(a_i)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        bracket_fwd = armijo_broken(a_i, phi_i) | ((phi_i >= s.phi_prev) & (s.i > 1))
        accept = curvature_ok(dphi_i) & ~bracket_fwd
        bracket_back = (dphi_i >= 0.0) & ~bracket_fwd & ~accept
        z1 = _zoom(
            phi_fn,
            armijo_broken,
            curvature_ok,
            s.a_prev,
            s.phi_prev,
            s.dphi_prev,
            a_i,
            phi_i,
            dphi_i,
            gfk,
            ~bracket_fwd,
        )
        z2 = _zoom(
            phi_fn,
            armijo_broken,
            curvature_ok,
            a_i,
            phi_i,
            dphi_i,
            s.a_prev,
            s.phi_prev,
            s.dphi_prev,
            gfk,
            ~bracket_back,
        )
        s = s._replace(nfev=s.nfev + z1.nfev + z2.nfev, ngev=s.ngev + z1.ngev + z2.ngev)
        keys = ("a_star", "phi_star", "dphi_star", "g_star")
        s = s._replace(
            done=bracket_fwd | s.done,
            failed=(bracket_fwd & z1.failed) | s.failed,
            **_pick(bracket_fwd, {k: getattr(z1, k) for k in keys}, s),
        )
        s = s._replace(
            done=accept | s.done,
            **_pick(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i), s),
        )
        s = s._replace(
            done=bracket_back | s.done,
            failed=(bracket_back & z2.failed) | s.failed,
            **_pick(bracket_back, {k: getattr(z2, k) for k in keys}, s),
        )
        return s._replace(i=s.i + 1, a_prev=a_i, phi_prev=phi_i, dphi_prev=dphi_i)

    s = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, init)
    status = jnp.where(s.failed, jnp.array(1), jnp.where(s.i > maxiter, jnp.array(3), jnp.array(0)))
    alpha = jnp.asarray(s.a_star)
    if not _is_wide(alpha.dtype):  # keep tiny steps from stalling in low precision
        alpha = jnp.where(jnp.abs(alpha) < 1e-8, jnp.sign(alpha) * 1e-8, alpha)
    return _LSResults(
        failed=s.failed | ~s.done,
        nit=s.i - 1,
        nfev=s.nfev,
        ngev=s.ngev,
        k=s.i,
        a_k=alpha,
        f_k=s.phi_star,
        g_k=s.g_star,
        status=status,
    )


# ----------------------------------------------------------------------------- BFGS


class _BFGS(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    ls_status: Any


def _minimize_bfgs(
    fun: Callable,
    x0,
    maxiter: int | None = None,
    norm: float = math.inf,
    gtol: float = 1e-5,
    line_search_maxiter: int = 10,
) -> tuple[_BFGS, Any]:
    """Run BFGS from x0; returns the final state and the status code."""
    x0 = jnp.asarray(x0)
    if maxiter is None:
        maxiter = int(x0.size) * 200
    d = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    init = _BFGS(
        converged=jnp.linalg.norm(g0, ord=norm) < gtol,
        failed=False,
        k=0,
        nfev=1,
        ngev=1,
        x_k=x0,
        f_k=f0,
        g_k=g0,
        H_k=jnp.eye(d, dtype=x0.dtype),
        old_old_fval=f0 + jnp.linalg.norm(g0) / 2,
        ls_status=0,
    )

    def body(s: _BFGS) -> _BFGS:
        p = -_dot(s.H_k, s.g_k)
        ls = _line_search(fun, s.x_k, p, s.f_k, s.old_old_fval, s.g_k, maxiter=line_search_maxiter)
        step = ls.a_k * p
        y = ls.g_k - s.g_k
        rho = jnp.reciprocal(_dot(y, step))
        w = jnp.eye(d, dtype=rho.dtype) - rho * (step[:, None] * y[None, :])
        h_new = jnp.matmul(jnp.matmul(w, s.H_k, precision=_HI), w.T, precision=_HI)
        h_new = h_new + rho * step[:, None] * step[None, :]
        return _BFGS(
            converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol,
            failed=ls.failed,
            k=s.k + 1,
            nfev=s.nfev + ls.nfev,
            ngev=s.ngev + ls.ngev,
            x_k=s.x_k + step,
            f_k=ls.f_k,
            g_k=ls.g_k,
            H_k=jnp.where(jnp.isfinite(rho), h_new, s.H_k),
            old_old_fval=s.f_k,
            ls_status=ls.status,
        )

    s = lax.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, init)
    status = jnp.where(s.converged, 0, jnp.where(s.k == maxiter, 1, jnp.where(s.failed, 2 + s.ls_status, -1)))
    return s, status


def minimize(
    fun: Callable,
    x0,
    args: tuple = (),
    *,
    method: str,
    tol: float | None = None,
    options: Mapping[str, Any] | None = None,
) -> OptimizeResults:
    """Minimise fun(x, *args) over a 1-D x from x0; method must be 'BFGS' (options: maxiter, norm, gtol,
    line_search_maxiter). `tol` is accepted and unused, as in JAX."""
    options = {} if options is None else options
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

    def objective(x):
        return fun(x, *args)

    if method.lower() == "bfgs":
        s, status = _minimize_bfgs(objective, x0, **options)
        return OptimizeResults(
            x=s.x_k,
            success=s.converged & jnp.logical_not(s.failed),
            status=status,
            fun=s.f_k,
            jac=s.g_k,
            hess_inv=s.H_k,
            nfev=s.nfev,
            njev=s.ngev,
            nit=s.k,
        )
    raise ValueError(f"Method {method} not recognized")
