"""pyjax.experimental.checkify against JAX's: user checks, NaN and division checks, eagerly, under jit
(outside and inside), vmap, grad, check_error; the same messages and error classes."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import pytest
from jax.experimental import checkify as jcheckify

import pyjax
import pyjax.numpy as jnp
from pyjax.experimental import checkify as pcheckify

_LIBS = {"pyjax": (pyjax, jnp, pcheckify), "jax": (jax, jjnp, jcheckify)}


def _messages(name: str) -> list:
    lib, np_, checkify = _LIBS[name]

    def f(x):
        checkify.check(np_.all(x > 0), "x must be positive, got {}", x)
        return np_.log(x)

    def g(x):
        checkify.check(x.sum() < 10, "sum {s} too big", s=x.sum())
        return x * 2

    cf = checkify.checkify(f)
    bad = np_.array([-1.0, 2.0])
    results = [
        cf(np_.array([1.0, 2.0]))[0],
        cf(bad)[0],
        lib.jit(cf)(bad)[0],
        checkify.checkify(lib.jit(f))(np_.array([3.0, -2.0]))[0],
        lib.vmap(cf)(np_.array([[1.0], [-1.0], [-2.0]]))[0],
        checkify.checkify(lambda x: g(f(x)))(np_.array([20.0]))[0],
        checkify.checkify(lambda x: np_.sin(x) * np_.log(x), errors=checkify.float_checks)(np_.array(-1.0))[0],
        checkify.checkify(lambda x: np_.sin(x) * np_.log(x), errors=checkify.float_checks)(np_.array(1.0))[0],
        lib.jit(checkify.checkify(lambda x, y: x // y, errors=checkify.div_checks))(np_.array(3), np_.array(0))[0],
        checkify.checkify(lambda x, y: x // y, errors=checkify.div_checks)(np_.array(3), np_.array(1))[0],
        checkify.checkify(lambda x: g(x), errors=checkify.nan_checks)(np_.array([20.0]))[0],  # user checks off
    ]

    def carried(x):
        checkify.check_error(cf(x)[0])
        return x

    results.append(checkify.checkify(carried)(np_.array([-5.0]))[0])
    return [e.get() for e in results]


def test_checkify_messages_match_jax(backend):
    assert _messages("pyjax") == _messages("jax")


@pytest.mark.parametrize("name", ["pyjax", "jax"])
def test_checkify_errors(name, backend):
    lib, np_, checkify = _LIBS[name]
    with pytest.raises(checkify.JaxRuntimeError, match="eager 3"):
        checkify.check(np_.array(False), "eager {a}", a=np_.array(3))
    checkify.check(True, "passes")

    def f(x):
        checkify.check(np_.all(x > 0), "x must be positive")
        return x

    with pytest.raises(ValueError, match="not functionalized"):
        lib.jit(f)(np_.ones(2))
    err, out = checkify.checkify(f)(np_.array([-1.0]))
    with pytest.raises(checkify.JaxRuntimeError, match="x must be positive"):
        err.throw()
    assert isinstance(checkify.JaxRuntimeError("x"), ValueError)
    assert checkify.all_checks == checkify.user_checks | checkify.automatic_checks
    grads = lib.grad(lambda x: checkify.checkify(f)(x)[1].sum() ** 2)(np_.array([1.0, 2.0]))
    assert grads.tolist() == [6.0, 6.0]
