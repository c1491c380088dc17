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


def _index_messages(name: str) -> list:
    lib, np_, checkify = _LIBS[name]
    lax, ic = lib.lax, checkify.index_checks
    x, m = np_.arange(3.0), np_.arange(12.0).reshape(3, 4)

    def err(f, *args, errors=ic):
        return checkify.checkify(f, errors=errors)(*args)[0]

    results = [
        err(lambda x, i: x[i], x, 5),
        err(lambda x, i: x[i], x, -5),  # normalized to -2 first, as JAX
        err(lambda x, i: x[i], x, 1),
        err(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), x, 2),
        err(lambda x, i: lax.dynamic_update_slice(x, np_.ones(2), (i,)), x, 2),
        err(lambda x, i: x.at[i].set(1.0), x, 5),
        err(lambda x, i: x.at[i].add(1.0), x, np_.array([1, 7, 9])),
        err(lambda x, i: np_.take(x, i), x, 5),
        err(lambda x, i, j: x[i, j], m, 1, 7),
        err(lambda x, i: x[i], m, np_.array([0, 4, 1])),
        err(lambda x, i, j: x[i, j], m, np_.array([0, 1]), np_.array([2, 6])),
        err(lib.jit(lambda x, i: x[i]), x, 4),
        err(lambda x, i: x[i], x, 5, errors=checkify.all_checks),
        err(lambda x, i: x[i], x, 5, errors=checkify.user_checks),
        lib.jit(checkify.checkify(lambda x, i: x[i], errors=ic))(x, 4)[0],
        lib.vmap(checkify.checkify(lambda x, i: x[i], errors=ic), in_axes=(None, 0))(x, np_.array([0, 4, 1]))[0],
    ]
    return [e.get() for e in results]


def test_index_checks_match_jax(backend):
    assert _index_messages("pyjax") == _index_messages("jax")


def _control_flow_messages(name: str) -> list:
    lib, np_, checkify = _LIBS[name]
    lax = lib.lax
    x = np_.arange(3.0)

    def chk(pred, v):
        checkify.check(pred, "bad value {}", v)

    def err(f, *args, errors=checkify.user_checks):
        return checkify.checkify(f, errors=errors)(*args)[0]

    def branchy(x):
        return lax.cond(x[0] > 0, lambda y: (chk(np_.all(y < 1), y.sum()), y)[1], lambda y: y + 1, x)

    def looped(x):  # two checks; the later one in program order fails first in time
        body = lambda c: (chk(c[0] < 3, c[0]), chk(c[0] < 2, c[0] * 10), (c[0] + 1, c[1]))[2]  # noqa: E731
        return lax.while_loop(lambda c: c[0] < 5, body, (0, x))

    def scanned(x):
        return lax.scan(lambda c, y: (chk(y < 1.5, y), chk(y < 0.5, y * 100), (c + y, c * y))[2], 0.0, x)

    def cond_fun_checked(x):
        return lax.while_loop(lambda c: (chk(c[0] < 2, c[0]), c[0] < 5)[1], lambda c: (c[0] + 1, c[1] * 2), (0, x))

    both = lambda x: lax.cond(  # noqa: E731
        x[0] > 0, lambda y: (chk(False, np_.array(1)), y)[1], lambda y: (chk(False, np_.array(2)), y)[1], x
    )
    results = [
        err(branchy, x + 1),
        err(branchy, x - 1),
        err(both, x - 1),
        err(lambda x, i: lax.switch(i, [lambda y: y, np_.log, lambda y: y], x), x - 1, 1, errors=checkify.float_checks),
        err(looped, x),
        err(cond_fun_checked, x),
        err(lambda x, n: lax.fori_loop(0, n, lambda i, c: c + x[i], 0.0), x, 5, errors=checkify.index_checks),
        err(lambda x: lax.fori_loop(0, 5, lambda i, c: c + x[i], 0.0), x, errors=checkify.index_checks),
        err(scanned, x),
        err(lambda x: lax.scan(lambda c, y: (c + np_.log(y), None), 0.0, x), x - 1, errors=checkify.nan_checks),
        err(
            lambda x: lax.scan(lambda c, y: (c + 10 // y, None), 0, x), np_.array([1, 2, 0]), errors=checkify.div_checks
        ),
        err(lambda x: (chk(x[0] > 10, x[0]), chk(x[1] > 10, x[1]))[0], x),  # only the first failure is kept
        lib.jit(checkify.checkify(scanned))(x)[0],
        lib.vmap(checkify.checkify(lambda x: lax.cond(x > 0, lambda y: (chk(y < 1, y), y)[1], lambda y: y, x)))(
            np_.array([0.5, 2.0, -1.0, 3.0])
        )[0],
        lib.vmap(checkify.checkify(scanned))(np_.array([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0], [3.0, 0.0, 0.0]]))[0],
    ]
    return [e.get() for e in results]


def test_control_flow_checks_match_jax(backend):
    assert _control_flow_messages("pyjax") == _control_flow_messages("jax")


@pytest.mark.parametrize("name", ["pyjax", "jax"])
def test_check_argument_errors(name):
    _, np_, checkify = _LIBS[name]
    with pytest.raises(TypeError, match="scalar pred"):
        checkify.check(np_.array([True, False]), "m")
    with pytest.raises(TypeError, match="scalar pred"):
        checkify.check(np_.array(1), "m")
    with pytest.raises(TypeError, match="need to be PyTrees of arrays"):
        checkify.check(True, "m {}", 3)


def test_debug_check_and_init_error_as_jax():
    for ck in (jcheckify, pcheckify):

        def f(x):
            ck.debug_check(x > 0, "neg {x}", x=x)
            return x * 2

        neg = jjnp.float32(-1.0) if ck is jcheckify else jnp.float32(-1.0)
        assert float(f(neg)) == -2.0  # dropped outside checkify
        with pytest.raises(TypeError):
            f(-1.0)  # a Python float is no format argument, even outside checkify
        err, out = ck.checkify(f)(neg)
        assert err.get() is not None and "neg -1.0" in err.get() and float(out) == -2.0
        assert ck.checkify(f)(-neg)[0].get() is None
        assert ck.init_error.get() is None
