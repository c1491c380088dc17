"""pyjax.experimental.ode: odeint, an adaptive Dormand-Prince (RK45) solver for dy/dt = func(y, t, *args),
with reverse-mode gradients from the adjoint ODE solved backwards in time (as jax.experimental.ode does).

Each interval between output times is integrated with steps truncated to land on its end, so results need
no dense-output interpolation; they agree with JAX's to within the requested tolerances.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pyjax.numpy as jnp
from pyjax import lax
from pyjax.api import closure_convert, vjp
from pyjax.core.pytree import tree_flatten, tree_map
from pyjax.custom_derivatives import custom_vjp
from pyjax.flatten_util import ravel_pytree

__all__ = ["odeint"]

# Dormand & Prince (1980) RK5(4)7M tableau: nodes, stage weights, 5th-order weights, their difference with
# the embedded 4th-order weights (the local error estimate).
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
_B5 = _A[6] + (0.0,)
_B4 = (5179 / 57600, 0.0, 7571 / 16695, 393 / 640, -92097 / 339200, 187 / 2100, 1 / 40)
_E = tuple(b5 - b4 for b5, b4 in zip(_B5, _B4))


def _combine(coeffs, ks):
    out = None
    for c, k in zip(coeffs, ks):
        if c:
            out = c * k if out is None else out + c * k
    return out


def _dopri_step(f, y, t, h, k1):
    """One RK45 step: (5th-order solution, error estimate, f at the new point (first-same-as-last))."""
    ks = [k1]
    for i in range(1, 7):
        ks.append(f(y + h * _combine(_A[i], ks), t + _C[i] * h))
    return y + h * _combine(_B5, ks), h * _combine(_E, ks), ks[6]


def _err_ratio(err, y0, y1, rtol, atol):
    scale = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean((err / scale) ** 2))


def _initial_step(f0, y0, rtol, atol):
    # Hairer, Norsett & Wanner's first guess: 1% of |y| / |y'| in the error norm
    scale = atol + rtol * jnp.abs(y0)
    d0 = jnp.sqrt(jnp.mean((y0 / scale) ** 2))
    d1 = jnp.sqrt(jnp.mean((f0 / scale) ** 2))
    return jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)


def _interval(f, y, fy, h, t_start, t_end, rtol, atol, mxstep, hmax):
    """Adaptive steps from t_start to exactly t_end: (y, f(y), next step size) there."""

    def cond(s):
        _, _, t, h, n = s
        return (t < t_end) & (n < mxstep) & (h > 0)  # a NaN or underflowed step size ends a diverging solve

    def body(s):
        y, fy, t, h, n = s
        left = t_end - t
        hs = jnp.minimum(jnp.minimum(h, left), hmax)
        y1, err, f1 = _dopri_step(f, y, t, hs, fy)
        ratio = _err_ratio(err, y, y1, rtol, atol)
        ok = ratio <= 1.0
        factor = jnp.where(jnp.isfinite(ratio), jnp.clip(0.9 * jnp.maximum(ratio, 1e-10) ** -0.2, 0.2, 10.0), 0.2)
        t1 = jnp.where(hs >= left, t_end, t + hs)  # land exactly on the output time
        return jnp.where(ok, y1, y), jnp.where(ok, f1, fy), jnp.where(ok, t1, t), hs * factor, n + 1

    y, fy, _, h, _ = lax.while_loop(cond, body, (y, fy, t_start, h, 0))
    return y, fy, h


def _integrate(f, y0, ts, rtol, atol, mxstep, hmax):
    """Flat-vector solve: y at each of ts (ts[0] is the initial time), shape (len(ts), y0.size)."""
    f0 = f(y0, ts[0])
    h0 = jnp.minimum(_initial_step(f0, y0, rtol, atol), hmax)

    def step(carry, t_pair):
        y, fy, h = _interval(f, *carry, *t_pair, rtol, atol, mxstep, hmax)
        return (y, fy, h), y

    _, ys = lax.scan(step, (y0, f0, h0), (ts[:-1], ts[1:]))
    return jnp.concatenate([y0[None], ys])


def odeint(
    func: Callable,
    y0: Any,
    t: Any,
    *args: Any,
    rtol: float = 1.4e-8,
    atol: float = 1.4e-8,
    mxstep=jnp.inf,
    hmax=jnp.inf,
) -> Any:
    """Solve dy/dt = func(y, t, *args) from y(t[0]) = y0; the solution at each time in t (a pytree like y0
    whose leaves gain a leading axis of len(t)). t must be increasing; args are differentiable."""
    for a in tree_flatten(args)[0]:
        if not (hasattr(a, "dtype") or isinstance(a, (int, float, complex, bool))):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {a}. Close over "
                "non-array values (functions, strings) in func instead."
            )
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint(converted, rtol, atol, mxstep, hmax, y0, jnp.asarray(t), *args, *consts)


def _flat_func(func, unravel, args):
    def f(y, t):
        return ravel_pytree(func(unravel(y), t, *args))[0]

    return f


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    flat, unravel = ravel_pytree(y0)
    ys = _integrate(_flat_func(func, unravel, args), flat, ts, rtol, atol, mxstep, hmax)
    return lax.map(unravel, ys)


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, res, g):
    """Adjoint method: a(t) = dL/dy(t) solves da/dt = -a df/dy backwards from t[-1], picking up each
    output's cotangent on the way; the args' cotangents integrate a df/dargs along with it."""
    ys, ts, args = res
    y_at = lambda i: tree_map(lambda y: y[i], ys)  # noqa: E731
    g_at = lambda i: tree_map(lambda c: c[i], g)  # noqa: E731
    aug0, unravel_aug = ravel_pytree((y_at(-1), g_at(-1), tree_map(jnp.zeros_like, args)))

    def aug_dynamics(aug, s):  # in reversed time s = -t
        y, a, _ = unravel_aug(aug)
        dy, pullback = vjp(lambda y, *args: func(y, -s, *args), y, *args)
        a_dy, *a_dargs = pullback(a)
        return ravel_pytree((tree_map(jnp.negative, dy), a_dy, tuple(a_dargs)))[0]

    def f_dot(c, i):  # c . func(y(t_i), t_i): the cotangent of an output time
        return jnp.vdot(ravel_pytree(c)[0], ravel_pytree(func(y_at(i), ts[i], *args))[0])

    def body(aug, i):
        back = _integrate(aug_dynamics, aug, jnp.stack([-ts[i], -ts[i - 1]]), rtol, atol, mxstep, hmax)[1]
        y, a, args_ct = unravel_aug(back)
        a = tree_map(jnp.add, a, g_at(i - 1))
        return ravel_pytree((y, a, args_ct))[0], f_dot(g_at(i), i)

    aug, t_cts = lax.scan(body, aug0, jnp.arange(ts.shape[0] - 1, 0, -1))
    _, a0, args_ct = unravel_aug(aug)
    ts_ct = jnp.concatenate([-f_dot(a0, 0)[None], t_cts[::-1]]).astype(ts.dtype)
    return (a0, ts_ct, *args_ct)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)
