"""jnp.add, jnp.multiply, ... are jnp.ufunc objects as in JAX: reduce, accumulate, outer, at, against JAX."""

from __future__ import annotations

import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax.numpy as jnp
from tests.jax_compare import check

NAMES = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2", "logical_and"]
NAMES += ["logical_or", "logical_xor", "maximum", "minimum", "multiply", "subtract"]


def test_ufunc_objects():
    for name in NAMES + ["negative"]:
        p, j = getattr(jnp, name), getattr(jjnp, name)
        assert isinstance(p, jnp.ufunc)
        assert (p.identity, p.nin, p.nout, p.__name__, repr(p)) == (j.identity, j.nin, j.nout, j.__name__, repr(j))


@pytest.mark.parametrize("name", NAMES)
def test_ufunc_methods(name, backend):
    x = np.arange(1, 7, dtype=np.int32 if name.startswith(("bitwise", "logical")) else np.float32).reshape(2, 3)

    def methods(lib, np_, a):
        u = getattr(np_, name)
        return [
            u.reduce(a),
            u.reduce(a, axis=1, keepdims=True),
            u.reduce(a, axis=None),
            u.accumulate(a, axis=1),
            u.outer(a[0], a[1]),
            u.at(a[0], np.array([0, 0, 2]), a[1], inplace=False),
            u(a, 2),
        ]

    check(methods, x)


def test_ufunc_at_and_errors(backend):
    check(lambda lib, np_, a: np_.negative.at(a, np.array([0, 0, 1]), inplace=False), np.ones((3, 2), np.float32))
    check(lambda lib, np_, a: np_.add.at(a, 0, 1.0), np.zeros(3, np.float32))  # inplace=True: NotImplementedError
    check(lambda lib, np_, a: np_.multiply.reduce(a, axis=0, initial=2.0), np.ones((2, 3), np.float32))
    check(lambda lib, np_, a: np_.add.reduce(a), np.ones(3, np.int8))
    check(lambda lib, np_, a: np_.negative.reduce(a), np.ones(3, np.float32))  # a unary ufunc: ValueError


X3 = np.array([0.5, -1.0, 2.0], np.float32)


def test_frompyfunc(backend):
    def run(jx, jnp, x):
        f = jnp.frompyfunc(lambda a, b: a * b + 1.0, 2, 1)
        return f(x, 2.0), f.outer(x, x[:2]), f.reduce(x), f.accumulate(x), f.reduce(jnp.stack([x, x]), axis=1)

    check(run, X3)
