"""pyjax.numpy vectorize, apply_along_axis, apply_over_axes and piecewise (pyjax/numpy/_functional.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import numpy as np

from tests.jax_compare import check, grad_check, rand

R = dict(rtol=2e-5, atol=2e-5)


X = rand((4, 5), 1)


# --- functional helpers -----------------------------------------------------------------------------


def test_apply_along_over_axes(backend):
    x3 = rand((3, 4, 5), 10)
    for axis in (0, 1, 2, -1):
        check(lambda lib, np_, a: np_.apply_along_axis(np_.sum, axis, a), x3, **R)
        check(lambda lib, np_, a: np_.apply_along_axis(lambda v: v[::-1] * 2, axis, a), x3, **R)
        check(lambda lib, np_, a: np_.apply_along_axis(lambda v, s: np_.outer(v, v) * s, axis, a, 2.0), x3, **R)
    grad_check(lambda lib, a: lib.numpy.apply_along_axis(lambda v: lib.numpy.cumsum(v) ** 2, 1, a), x3)
    check(lambda lib, np_, a: np_.apply_over_axes(np_.sum, a, [0, 2]), x3, **R)
    check(lambda lib, np_, a: np_.apply_over_axes(lambda v, ax: np_.mean(v, ax, keepdims=True), a, (1,)), x3, **R)


def test_vectorize(backend):
    def f(a, b):
        return a * 2 + b

    check(lambda lib, np_, a, b: np_.vectorize(f)(a, b), X, X[0], **R)
    check(lambda lib, np_, a: np_.vectorize(lambda u: u if u.ndim == 0 else u[0])(a), X)
    check(lambda lib, np_, a, b: np_.vectorize(np_.dot, signature="(n),(n)->()")(a, b), X, X[1], **R)
    check(lambda lib, np_, a: np_.vectorize(lambda v: (v.sum(), v * 2), signature="(n)->(),(n)")(a), X, **R)
    check(lambda lib, np_, a: np_.vectorize(lambda u, p: u**p, excluded={1})(a, 2), X, **R)
    check(lambda lib, np_, a: np_.vectorize(lambda u, p=1: u**p, excluded={"p"})(a, p=3), X, **R)
    check(lambda lib, np_, a: np_.vectorize(lambda m: m @ m.T, signature="(m,n)->(m,m)")(a.reshape(2, 2, 5)), X, **R)
    check(lambda lib, np_, a, b: np_.vectorize(np_.dot, signature="(n),(n)->()")(a, b), X, X[:, :3])
    check(lambda lib, np_, a: np_.vectorize(f, signature="(n)->()")(a, a), X)
    check(lambda lib, np_, a: np_.vectorize(f, signature="bad")(a, a), X)
    grad_check(lambda lib, a: lib.numpy.vectorize(lambda u: lib.numpy.sin(u) * u)(a), X)


def test_piecewise(backend):
    x = np.linspace(-2, 2, 9).astype(np.float32)
    check(lambda lib, np_, a: np_.piecewise(a, [a < 0, a >= 0], [lambda v: -v, lambda v: v**2]), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a, [a < -1, a > 1], [0.0, 1.0, lambda v: v * 3]), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a, [a < 0, a < 1], [1, 2]), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a, a > 0, [lambda v, k: v * k], 3.0), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a.astype(np_.int32), [a > 0], [lambda v: v * 2, 7]), x)
    check(lambda lib, np_, a: np_.piecewise(a, [a < 0, a > 0], [1.0]), x)
    grad_check(lambda lib, a: lib.numpy.piecewise(a, [a < 0], [lambda v: v**3, lambda v: lib.numpy.sin(v)]), x)


X3 = np.array([0.5, -1.0, 2.0], np.float32)


def test_vectorize_signature_and_excluded(backend):
    check(
        lambda jx, jnp, a: jnp.vectorize(lambda m, v: m @ v, signature="(n,m),(m)->(n)")(a.reshape(1, 3, 1) * a, a), X3
    )
    check(lambda jx, jnp, a: jnp.vectorize(lambda v, p: v**p, excluded={1})(a, 2), X3)
