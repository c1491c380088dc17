"""pyjax.numpy diff, ediff1d, gradient, trapezoid and unwrap (pyjax/numpy/_differences.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from jax_compare import check, grad_check, rand

R = dict(rtol=2e-5, atol=2e-5)


X = rand((4, 5), 1)


XI = np.arange(20, dtype=np.int32).reshape(4, 5) % 7


# --- differences and integrals ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(n=2),
        dict(axis=0),
        dict(n=0),
        dict(prepend=1.0),
        dict(append=[[1.0], [2.0], [3.0], [4.0]]),
        dict(n=3, axis=0, prepend=0.5, append=2.0),
        dict(n=-1),
        dict(axis=2),
    ],
)
def test_diff(backend, kw):
    check(lambda lib, np_, x: np_.diff(x, **kw), X, **R)
    if ("n" not in kw or kw["n"] >= 0) and not isinstance(kw.get("append"), list):
        if kw.get("axis", 0) != 2:
            grad_check(lambda lib, x: lib.numpy.diff(x, **kw), X)


def test_diff_dtypes(backend):
    check(lambda lib, np_, x: np_.diff(x), XI)
    check(lambda lib, np_, x: np_.diff(x > 3, axis=0), XI)
    check(lambda lib, np_, x: np_.diff(x[0, 0]), XI)
    check(lambda lib, np_, x: np_.ediff1d(x), XI)
    check(lambda lib, np_, x: np_.ediff1d(x, to_begin=-1, to_end=[7, 8]), XI)
    check(lambda lib, np_, x: np_.ediff1d(x, to_end=np_.array([0.5])), X, **R)


@pytest.mark.parametrize(
    "args,kw",
    [
        ((), {}),
        ((2.0,), {}),
        ((0.5, 2.0), {}),
        ((), dict(axis=1)),
        ((), dict(axis=(0,))),
        (("coords",), dict(axis=1)),
        ((), dict(axis=())),
        ((), dict(edge_order=2)),
    ],
)
def test_gradient(backend, args, kw):
    coords = np.array([0.0, 0.5, 1.5, 3.0, 3.2], np.float32)
    args = tuple(coords if a == "coords" else a for a in args)
    check(lambda lib, np_, x, *a: np_.gradient(x, *a, **kw), X, *args, **R)
    check(lambda lib, np_, x: np_.gradient(x[0]), XI, **R)
    if "edge_order" not in kw and kw.get("axis") != ():
        grad_check(
            lambda lib, x: (
                lib.numpy.stack(lib.numpy.gradient(x, *args, **kw))
                if not isinstance(lib.numpy.gradient(x, *args, **kw), lib.Array)
                else lib.numpy.gradient(x, *args, **kw)
            ),
            X,
        )


def test_trapezoid_unwrap(backend):
    xs = np.cumsum(np.abs(rand((5,), 3))).astype(np.float32)
    check(lambda lib, np_, y: np_.trapezoid(y), X, **R)
    check(lambda lib, np_, y: np_.trapezoid(y, dx=0.3, axis=0), X, **R)
    check(lambda lib, np_, y, x: np_.trapezoid(y, x), X, xs, **R)
    check(lambda lib, np_, y, x: np_.trapezoid(y, np_.broadcast_to(x, y.shape)), X, xs, **R)
    check(lambda lib, np_, y: np_.trapezoid(y), XI, **R)
    grad_check(lambda lib, y, x: lib.numpy.trapezoid(y, x), X, xs, argnums=(0, 1))
    ph = np.cumsum(rand((3, 12), 4) * 2.5, axis=1).astype(np.float32)
    check(lambda lib, np_, p: np_.unwrap(p), ph, **R)
    check(lambda lib, np_, p: np_.unwrap(p, axis=0), ph, **R)
    check(lambda lib, np_, p: np_.unwrap(p, discont=4.0, period=5.0), ph, **R)
    check(lambda lib, np_, p: np_.unwrap(p), (ph * 3).astype(np.int32), **R)
    grad_check(lambda lib, p: lib.numpy.unwrap(p), ph)


@pytest.mark.parametrize("dtype", ["int32", "int8", "uint8", "bool", "float32"])
def test_unwrap_integer_period(backend, dtype):
    """p and period promote together (issue 16): integer p and period stay integer, half a period is
    period // 2; the default period 2*pi makes the result float."""
    x = np.array([[0, 5, 9, 14, 2, 7], [3, 1, 12, 4, 0, 9]]).astype(dtype)
    check(lambda lib, np_, p: np_.unwrap(p, period=10), x)
    check(lambda lib, np_, p: np_.unwrap(p, period=7, discont=4), x)
    check(lambda lib, np_, p: np_.unwrap(p, period=6, axis=0), x)
    check(lambda lib, np_, p: np_.unwrap(p, period=np_.int32(8)), x)
    check(lambda lib, np_, p: np_.unwrap(p, period=10.0), x)
    check(lambda lib, np_, p: np_.unwrap(p), x, **R)


def test_unwrap_rejects_complex():
    check(lambda lib, np_, p: np_.unwrap(p.astype(np_.complex64)), np.arange(4.0, dtype=np.float32))
