"""jax.ops segment reductions and jnp.interp against real JAX on every backend: values, dtypes,
dropped (negative and too large) ids, empty segments, gradients, jit, and bad-input errors."""

from __future__ import annotations

import numpy as np
import pytest

import pyjax
from tests.jax_compare import check

SEGMENT_OPS = ["segment_sum", "segment_prod", "segment_max", "segment_min"]
DATA = np.arange(1.0, 13.0, dtype=np.float32).reshape(4, 3) * np.float32([1, -1, 0.5])
IDS = np.array([0, 2, 2, -1], np.int32)


@pytest.mark.parametrize("name", SEGMENT_OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_segment_ops(backend, name, dtype):
    data = DATA.astype(dtype)
    check(lambda jx, jnp, d, i: getattr(jx.ops, name)(d, i, 4), data, IDS)  # segment 1, 3: empty
    check(lambda jx, jnp, d, i: getattr(jx.ops, name)(d, i, 2), data, np.array([0, 1, 5, 1]))  # 5 dropped
    check(lambda jx, jnp, d: getattr(jx.ops, name)(d, np.array([1, 0, 3, 1])), data[:, 0])  # num_segments from ids
    check(lambda jx, jnp, d, i: jx.jit(lambda a, b: getattr(jx.ops, name)(a, b, 3))(d, i), data, IDS)


@pytest.mark.parametrize("name", SEGMENT_OPS)
def test_segment_grads(backend, name):
    def f(jx, jnp, d):
        return jx.grad(lambda x: jnp.sum(getattr(jx.ops, name)(x, IDS, 3) * jnp.arange(1.0, 4.0)[:, None]))(d)

    check(f, DATA)


def test_segment_errors():
    for args in [(DATA, IDS.astype(np.float32), 3), (DATA, IDS[:3], 3)]:
        with pytest.raises((TypeError, ValueError), match="segment_sum"):
            pyjax.ops.segment_sum(*args)
    with pytest.raises(pyjax.errors.ConcretizationTypeError):
        pyjax.jit(lambda d, i: pyjax.ops.segment_sum(d, i))(DATA, IDS)


INTERP = [
    ((np.float32([0.5, 1.5, -1, 3, 2]), np.float32([0, 1, 2]), np.float32([0, 10, 5])), {}),
    (
        (np.float32([[0.5, 1.5], [2.5, 0]]), np.float32([0, 1, 1, 2]), np.float32([0, 10, 4, 5])),
        {"left": -1.0, "right": 7},
    ),
    ((np.float32([-170, 10, 190, 350]), np.float32([-180, -90, 0, 90]), np.float32([4, 2, 0, 1])), {"period": 360}),
    ((np.arange(4), np.arange(3), np.arange(3)), {}),  # integers interpolate in the default float
    ((np.float32(0.25), np.float32([0, 1]), np.float32([1, 3])), {}),
    ((np.float32(1.0), np.ones((2, 2), np.float32), np.ones((2, 2), np.float32)), {}),  # ValueError
    ((np.float32(1.0), np.ones(3, np.float32), np.ones(2, np.float32)), {}),  # ValueError
]


@pytest.mark.parametrize("case", range(len(INTERP)))
def test_interp(backend, case):
    args, kw = INTERP[case]
    check(lambda jx, jnp, *a: jnp.interp(*a, **kw), *args)


def test_interp_grad(backend):
    xp, fp = np.float32([0, 1, 3]), np.float32([1, -2, 4])
    check(lambda jx, jnp, x: jx.grad(lambda v: jnp.sum(jnp.interp(v, xp, fp) ** 2))(x), np.float32([0.2, 1.5, 2.9]))
