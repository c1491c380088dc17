"""jnp.pad (pyjax/numpy/_pad.py) against real JAX: every mode (constant, empty, edge, wrap, reflect and symmetric
with reflect_type even/odd, linear_ramp with end_values, maximum/minimum/mean/median with stat_length, a
callable), eagerly, under jit and under grad, and JAX's errors."""

from __future__ import annotations

import numpy as np
import pytest

from jax_compare import check, check_all, rand

X1 = np.array([1.0, 2.0, 4.0, 7.0], np.float32)
I1 = np.array([1, 2, 4, 7, 3], np.int32)
X2 = rand((3, 4))
I2 = np.arange(12, dtype=np.int32).reshape(3, 4)


def _custom(row, widths, axis, kwargs):  # JAX's documented example of a callable mode
    row = row.at[: widths[0]].set(kwargs.get("before", 0))
    return row.at[len(row) - widths[1] :].set(kwargs.get("after", 0) + axis)


CASES = [
    (X2, 1, dict(constant_values=5)),
    (X2, ((1, 0), (0, 2)), dict(constant_values=((1, 2), (3, 4)))),
    (X2, 1, dict(constant_values=(7, 8))),
    (I1, 1, dict(constant_values=2.7)),
    (X2, 1, dict(mode="empty")),
    (I2, (2, 1), dict(mode="edge")),
    (X1, (6, 9), dict(mode="wrap")),
    (I1, (7, 9), dict(mode="reflect")),
    (I1, (7, 9), dict(mode="symmetric")),
    (X1, (7, 9), dict(mode="reflect", reflect_type="odd")),
    (X1, (7, 9), dict(mode="symmetric", reflect_type="odd")),
    (I2, ((2, 3), (1, 5)), dict(mode="reflect", reflect_type="odd")),
    (np.array([3.0], np.float32), 2, dict(mode="reflect", reflect_type="odd")),
    (np.array([1 + 2j, 3 - 1j], np.complex64), 2, dict(mode="symmetric", reflect_type="odd")),
    (X1, (3, 2), dict(mode="linear_ramp")),
    (X1, (3, 0), dict(mode="linear_ramp", end_values=(5, -5))),
    (X2, ((2, 1), (1, 3)), dict(mode="linear_ramp", end_values=((1, 2), (3, 4)))),
    (I1, (3, 4), dict(mode="linear_ramp", end_values=(20, -3))),
    (X2, 2, dict(mode="maximum")),
    (X2, 2, dict(mode="minimum")),
    (X2, ((1, 2), (2, 1)), dict(mode="mean")),
    (X2, 2, dict(mode="median")),
    (np.array([1, 2, 3, 4], np.int32), 1, dict(mode="mean")),  # an integer statistic rounds half to even
    (np.array([1, 2, 5, 6], np.int32), 2, dict(mode="median")),
    (X2, 2, dict(mode="mean", stat_length=((1, 2), (3, 9)))),
    (I1, (2, 3), dict(mode="maximum", stat_length=(1, 3))),
    (I1, (2, 3), dict(mode="minimum", stat_length=(2,))),
    (X1, (2, 3), dict(mode="median", stat_length=(3, 2))),
    (np.array([2, 3, 4], np.int32), 2, dict(mode=_custom, before=-10, after=10)),
    (X2, ((1, 0), (0, 2)), dict(mode=_custom)),
    (np.float32(3), 2, dict(mode="edge")),
]


def test_modes_match_jax(backend):
    check_all(lambda jax, jnp, x, w, kw: jnp.pad(x, w, **kw), CASES)


def test_jit_and_grad_match_jax(backend):
    check(lambda jax, jnp, x, c: jax.jit(lambda x, c: jnp.pad(x, 2, constant_values=c))(x, c), X1, np.float32(3))
    check(lambda jax, jnp, x: jax.jit(lambda x: jnp.pad(x, 2, _custom, before=1.0, after=2.0))(x), X1)
    check(lambda jax, jnp, x: jax.vmap(lambda r: jnp.pad(r, 1, mode="mean"))(x), X2)
    for kw in (
        dict(mode="mean", stat_length=3),
        dict(mode="maximum"),
        dict(mode="symmetric", reflect_type="odd"),
        dict(mode="linear_ramp", end_values=2.0),
        dict(mode="median"),
    ):
        check(lambda jax, jnp, x: jax.grad(lambda x: (jnp.pad(x, (5, 2), **kw) ** 2).sum())(x), X1, rtol=1e-5)


@pytest.mark.parametrize(
    "w, kw",
    [
        (1, dict(mode="foo")),  # NotImplementedError
        (1, dict(mode="edge", constant_values=3)),  # a keyword the mode does not take
        (1, dict(mode="reflect", stat_length=3)),
        (-1, {}),  # negative width
        (1.5, {}),  # `pad_width` must be of integral type
        (True, {}),
        (((1, 2), (3,)), {}),  # ragged
        (((1, 2),) * 3, {}),  # too many pairs
        (1, dict(constant_values=(1, 2, 3))),
        (2, dict(mode="mean", stat_length=0)),
    ],
)
def test_errors_match_jax(w, kw):
    check(lambda jax, jnp, x: jnp.pad(x, w, **kw), X2)


def test_empty_axis_and_list_input():
    check(lambda jax, jnp: jnp.pad(jnp.zeros((0, 3)), 1, mode="wrap"))  # Cannot apply 'wrap' padding to empty axis
    check(lambda jax, jnp: jnp.pad(jnp.zeros((0, 3)), ((0, 0), (1, 1)), mode="edge"))
    check(lambda jax, jnp: jnp.pad([1, 2, 3], 1))  # JAX takes arrays and scalars only
