"""lax control flow (cond, switch, while_loop, fori_loop, scan, map, associative_scan) against JAX:
values, dtypes, gradients, vmap, jit, nesting and error messages."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax import lax as plax
from tests.jax_compare import check

R = np.random.RandomState(0)
X4 = R.randn(4).astype(np.float32)
X34 = R.randn(3, 4).astype(np.float32)
W = (R.randn(4, 4) * 0.5).astype(np.float32)
XS = R.randn(5, 4).astype(np.float32)


def _err(fn, exc):
    """fn(jax, jnp) and fn(pyjax, pjnp) both raise exc; returns (pyjax message, JAX message)."""
    with pytest.raises(exc) as j:
        fn(jax, jax.numpy)
    with pytest.raises(exc) as p:
        fn(pyjax, pjnp)
    return str(p.value), str(j.value)


# --- cond / switch -------------------------------------------------------------------------------


@pytest.mark.parametrize("pred", [True, False, 0, 3, 1.5])
def test_cond_values(backend, pred):
    check(lambda jx, np_, x: jx.lax.cond(pred, lambda a: np_.sin(a) * 2, lambda a: a - 1.0, x), X4)


def test_cond_pytrees_and_operands(backend):
    def f(jx, np_, x, y):
        t = lambda a, b: {"s": a + b, "p": (a * b, np_.sum(a))}
        e = lambda a, b: {"s": a - b, "p": (a / 2, np_.max(b))}
        return jx.lax.cond(np_.sum(x) > 0, t, e, x, y), jx.lax.cond(np_.sum(x) < 0, t, e, x, y)

    check(f, X4, X34[0])


def test_cond_closure_and_weak_types(backend):
    check(lambda jx, np_, x: jx.lax.cond(True, lambda: x * 2, lambda: x), X4)
    check(lambda jx, np_: jx.lax.cond(True, lambda: 1.0, lambda: 2.0))
    check(lambda jx, np_: jx.lax.cond(False, lambda: 1.0, lambda: np_.float32(2)))
    check(lambda jx, np_: jx.lax.cond(True, lambda x: x, lambda x: x, 1.0))


@pytest.mark.parametrize("index", [-5, 0, 1, 2, 7])
def test_switch_clamps(backend, index):
    br = [lambda a: a + 1.0, lambda a: a * 3.0, lambda a: -a]
    check(lambda jx, np_, x: jx.lax.switch(index, br, x), X4)
    check(lambda jx, np_, x: jx.jit(lambda i, x: jx.lax.switch(i, br, x))(index, x), X4)


def test_cond_errors(backend):
    p, j = _err(lambda jx, np_: jx.lax.cond(True, lambda x: x, lambda x: x.astype(np_.int32), 1.0), TypeError)
    assert "cond branches must have equal output types" in p and "so the dtypes do not match" in p
    p, j = _err(lambda jx, np_: jx.lax.cond(True, lambda x: np_.zeros(3), lambda x: np_.zeros(4), 1.0), TypeError)
    assert "so the shapes do not match" in p and "float32[3]" in p and "float32[4]" in p
    p, j = _err(lambda jx, np_: jx.lax.cond(True, lambda x: (x, x), lambda x: x, 1.0), TypeError)
    assert "same pytree structure" in p
    p, j = _err(lambda jx, np_: jx.lax.cond(np_.array([True, False]), lambda x: x, lambda x: x, 1.0), TypeError)
    assert p.startswith("Pred must be a scalar")
    p, j = _err(lambda jx, np_: jx.lax.cond(True, 1, 2), TypeError)
    assert p == j
    p, j = _err(lambda jx, np_: jx.lax.switch(1.0, [lambda: 1, lambda: 2]), TypeError)
    assert p.startswith("Index type must be an integer")
    p, j = _err(lambda jx, np_: jx.lax.switch(0, []), ValueError)
    assert p == j
    p, j = _err(lambda jx, np_: jx.lax.switch(1, [lambda x: x, lambda x: x.astype(np_.int32)], 1.0), TypeError)
    assert "switch branches must have equal output types" in p


def test_cond_grad_jvp(backend):
    def g(jx, np_):
        return lambda x: jx.lax.cond(x > 0, lambda x: np_.sin(x) * x, lambda x: x**3, x)

    for v in (1.3, -2.0):
        check(lambda jx, np_: jx.grad(g(jx, np_))(v))
        check(lambda jx, np_: jx.jit(jx.grad(g(jx, np_)))(v))
        check(lambda jx, np_: jx.grad(jx.jit(g(jx, np_)))(v))
        check(lambda jx, np_: jx.jvp(g(jx, np_), (v,), (2.0,)))


def test_cond_grad_closure_and_multiple_operands(backend):
    def f(jx, np_, w, x):
        def loss(w, x):
            out = jx.lax.cond(np_.sum(x) > 0, lambda a: (a * w, np_.sum(a)), lambda a: (np_.exp(a) + w, a[0]), x)
            return np_.sum(out[0] ** 2) + out[1]

        return jx.grad(loss, argnums=(0, 1))(w, x)

    check(f, X4, X4)
    check(f, X4, -np.abs(X4))


def test_cond_switch_vmap(backend):
    br = [lambda a: a + 1.0, lambda a: 3.0 * a, lambda a: -a]

    def f(jx, np_, x):
        return jx.vmap(lambda v: jx.lax.cond(v > 0, lambda a: np_.sin(a), lambda a: a * 2, v))(x)

    check(f, X4)
    check(lambda jx, np_, x: jx.vmap(lambda v: jx.lax.cond(True, lambda a: a + 1, lambda a: a, v))(x), X4)
    check(lambda jx, np_, x: jx.vmap(lambda v: jx.lax.cond(v > 0, lambda: 1.0, lambda: 2.0))(x), X4)
    idx = np.array([0, 2, 1, 5], np.int32)
    check(lambda jx, np_, i, x: jx.vmap(lambda i, v: jx.lax.switch(i, br, v))(i, x), idx, X4)
    check(lambda jx, np_, x: jx.vmap(lambda v: jx.lax.switch(1, br, v))(x), X4)
    check(lambda jx, np_, x: jx.vmap(jx.grad(lambda v: jx.lax.cond(v > 0, np_.sin, np_.cos, v)))(x), X4)


# --- while_loop / fori_loop ----------------------------------------------------------------------


def test_while_values(backend):
    check(lambda jx, np_: jx.lax.while_loop(lambda c: c < 10, lambda c: c * 2, 1))
    check(lambda jx, np_: jx.lax.while_loop(lambda c: c < 3, lambda c: c + 1.0, 0))
    check(lambda jx, np_, x: jx.lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x), (0, x)), X4)
    check(
        lambda jx, np_, x: jx.jit(lambda x: jx.lax.while_loop(lambda c: np_.sum(c) < 100, lambda c: c * 2 + 1, x))(x),
        np.abs(X4),
    )


def test_while_errors(backend):
    p, _ = _err(lambda jx, np_: jx.lax.while_loop(lambda c: c < 3, lambda c: (c, c), 0), TypeError)
    assert "carry input and carry output must have the same pytree structure" in p
    p, j = _err(lambda jx, np_: jx.lax.while_loop(lambda c: np_.array([True, True]), lambda c: c, 0), TypeError)
    assert p == j
    p, j = _err(
        lambda jx, np_: jx.lax.while_loop(lambda c: c < 3, lambda c: c.astype(np_.int32), np_.float32(0)), TypeError
    )
    assert p == j


def test_while_jvp_vmap(backend):
    def w(jx, np_):
        return lambda x: jx.lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * x + 0.5), (0, x))[1]

    check(lambda jx, np_: jx.jvp(w(jx, np_), (1.5,), (1.0,)))
    check(lambda jx, np_, x: jx.vmap(w(jx, np_))(x), X4)
    check(lambda jx, np_, x: jx.jit(jx.vmap(jx.jacfwd(w(jx, np_))))(x), X4)

    def wb(jx, np_):  # batched predicate: run until every example is done
        return lambda n, x: jx.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 2.0 + x), (0, x))

    n = np.array([1, 3, 0, 5], np.int32)
    check(lambda jx, np_, n, x: jx.vmap(wb(jx, np_))(n, x), n, X4)
    check(lambda jx, np_, n, x: jx.vmap(wb(jx, np_), in_axes=(0, None))(n, x[0]), n, X4)


def test_fori_loop(backend):
    body = lambda i, c: c * 1.5 + i  # noqa: E731
    check(lambda jx, np_, x: jx.lax.fori_loop(0, 4, body, x), X4)
    check(lambda jx, np_, x: jx.lax.fori_loop(2, 2, body, x), X4)
    check(lambda jx, np_, x: jx.lax.fori_loop(0, np_.int32(3), body, x), X4)
    check(lambda jx, np_, x: jx.jit(lambda n, x: jx.lax.fori_loop(0, n, body, x))(3, x), X4)
    check(lambda jx, np_: jx.lax.fori_loop(0, 3, lambda i, c: c + i, 1))
    check(lambda jx, np_: jx.lax.fori_loop(np_.int16(0), 3, lambda i, c: c + i, 1))
    check(lambda jx, np_: jx.make_jaxpr(lambda x: jx.lax.fori_loop(0, 3, body, x))(1.0).eqns[0].primitive.name)
    check(lambda jx, np_: jx.make_jaxpr(lambda x, n: jx.lax.fori_loop(0, n, body, x))(1.0, 3).eqns[0].primitive.name)
    p, j = _err(lambda jx, np_: jx.lax.fori_loop(0, 3.0, body, 1.0), TypeError)
    assert p == j


def test_fori_loop_grad(backend):
    def h(jx, np_):
        return lambda x: np_.sum(jx.lax.fori_loop(0, 3, lambda i, c: np_.sin(c) * x + i, x))

    check(lambda jx, np_, x: jx.grad(h(jx, np_))(x), X4)
    check(lambda jx, np_, x: jx.jit(jx.grad(h(jx, np_)))(x), X4)
    check(lambda jx, np_, x: jx.grad(jx.jit(h(jx, np_)))(x), X4)
    check(lambda jx, np_, x: jx.vmap(jx.grad(h(jx, np_)))(x[None].repeat(2, 0) * np_.array([[1.0], [2.0]])), X4)

    def dyn(jx, np_, x):
        f = jx.jit(lambda x, n: jx.lax.fori_loop(0, n, lambda i, c: c * 2, x))
        return jx.grad(f)(x, 3)

    check(lambda jx, np_: jx.grad(lambda x, n: jx.lax.fori_loop(0, n, lambda i, c: c * 2, x))(1.0, 3))

    p, j = _err(lambda jx, np_: dyn(jx, np_, 1.0), ValueError)
    assert p == j
    assert p.startswith("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic")


# --- scan ----------------------------------------------------------------------------------------


def test_scan_values(backend):
    check(lambda jx, np_, xs: jx.lax.scan(lambda c, x: (c + x, c * 2), 0.0, xs), XS)
    check(lambda jx, np_, xs: jx.lax.scan(lambda c, x: (c + x, c * 2), 0.0, xs, reverse=True), XS)
    check(lambda jx, np_: jx.lax.scan(lambda c, x: (c * 2.0, c), np_.float32(1), None, length=4))
    check(lambda jx, np_: jx.lax.scan(lambda c, x: (c + 1.0, x), 0, np_.arange(3)))
    check(lambda jx, np_, xs: jx.lax.scan(lambda c, x: (c + 1, None), 0, xs), XS)
    check(lambda jx, np_, xs: jx.lax.scan(lambda c, x: (c + x, x), 0.0, xs[:0]), XS)

    def tree(jx, np_, xs, x34):
        def f(c, x):
            a, (b,) = c
            y = {"u": a * x["p"], "v": np_.sum(x["q"]) + b}
            return (a + x["p"], (b * 0.5,)), y

        return jx.lax.scan(f, (np_.zeros(4), (np_.float32(1.0),)), {"p": xs[:3], "q": x34})

    check(tree, XS, X34)


def test_scan_closures_and_jit(backend):
    def f(jx, np_, w, xs):
        return jx.lax.scan(lambda h, x: (np_.tanh(h @ w + x), h.sum()), np_.zeros(4, np_.float32), xs)

    check(f, W, XS)
    check(lambda jx, np_, w, xs: jx.jit(lambda w, xs: f(jx, np_, w, xs))(w, xs), W, XS)


def test_scan_errors(backend):
    p, j = _err(lambda jx, np_: jx.lax.scan(lambda c, x: (c, x), 0, np_.arange(3), length=4), ValueError)
    assert p == j
    p, j = _err(lambda jx, np_: jx.lax.scan(lambda c, x: (c, x), 0, None), ValueError)
    assert p == j
    p, j = _err(lambda jx, np_: jx.lax.scan(lambda c, x: (c, x), 0, [np_.arange(3), np_.arange(4)]), ValueError)
    assert p == j
    p, j = _err(lambda jx, np_: jx.lax.scan(lambda c, x: c, 0, np_.arange(3)), TypeError)
    assert p.startswith("scan body output must be a pair")
    p, j = _err(lambda jx, np_: jx.lax.scan(lambda c, x: ((c, c), x), 0, np_.arange(3)), TypeError)
    assert "scan body function carry input and carry output must have the same pytree structure" in p
    f = lambda jx, np_: jx.lax.scan(  # noqa: E731
        lambda c, x: ((c[0], c[1].astype(np_.int32)), c), (np_.float32(0), np_.float32(0)), None, length=2
    )
    p, j = _err(f, TypeError)
    assert p == j
    p, j = _err(lambda jx, np_: jx.lax.scan(lambda c, x: (np_.zeros(2), c), np_.float32(0), None, length=2), TypeError)
    assert p == j
    p, j = _err(lambda jx, np_: jx.lax.scan(1, 0, None, length=3), TypeError)
    assert p == j


def test_scan_grad_rnn(backend):
    def loss(jx, np_):
        def f(w, h0, xs):
            h, hs = jx.lax.scan(lambda h, x: (np_.tanh(h @ w + x), np_.sum(h**2)), h0, xs)
            return np_.sum(h) + np_.sum(hs)

        return f

    args = (W, X4, XS)
    check(lambda jx, np_, *a: jx.grad(loss(jx, np_), argnums=(0, 1, 2))(*a), *args)
    check(lambda jx, np_, *a: jx.jit(jx.grad(loss(jx, np_), argnums=(0, 1, 2)))(*a), *args)
    check(lambda jx, np_, *a: jx.grad(jx.jit(loss(jx, np_)), argnums=(0, 1, 2))(*a), *args)
    check(lambda jx, np_, *a: jx.jvp(lambda w: loss(jx, np_)(w, a[1], a[2]), (a[0],), (a[0] * 0 + 1,)), *args)


def test_scan_grad_cumprod_and_reverse(backend):
    def cp(jx, np_, rev):
        return lambda xs: np_.sum(jx.lax.scan(lambda c, x: (c * x, c * x), 1.0, xs, reverse=rev)[1])

    for rev in (False, True):
        check(lambda jx, np_, xs: jx.grad(cp(jx, np_, rev))(xs), X4)
        check(
            lambda jx, np_, xs: jx.jacrev(lambda xs: jx.lax.scan(lambda c, x: (c * x, c), 1.0, xs, reverse=rev)[1])(xs),
            X4,
        )


def test_scan_hessian(backend):
    def f(jx, np_):
        return lambda xs: jx.lax.scan(lambda c, x: (c * np_.sin(x) + x, None), 0.5, xs)[0]

    check(lambda jx, np_, xs: jx.hessian(f(jx, np_))(xs), X4, rtol=1e-4, atol=1e-5)
    check(lambda jx, np_, xs: jx.jacrev(jx.grad(f(jx, np_)))(xs), X4, rtol=1e-4, atol=1e-5)


def test_scan_vmap(backend):
    def f(jx, np_, w, h0, xs):
        return jx.lax.scan(lambda h, x: (np_.tanh(h @ w + x), h * 2), h0, xs)

    B = R.randn(2, 5, 4).astype(np.float32)
    H = R.randn(2, 4).astype(np.float32)
    check(lambda jx, np_, w, h, xs: jx.vmap(lambda xs: f(jx, np_, w, h[0], xs))(xs), W, H, B)
    check(lambda jx, np_, w, h, xs: jx.vmap(lambda h: f(jx, np_, w, h, xs[0]))(h), W, H, B)
    check(lambda jx, np_, w, h, xs: jx.vmap(lambda w: f(jx, np_, w, h[0], xs[0]))(np_.stack([w, w * 2])), W, H, B)
    check(
        lambda jx, np_, w, h, xs: jx.vmap(lambda xs: f(jx, np_, w, h[0], xs), in_axes=1, out_axes=1)(
            np_.moveaxis(xs, 0, 1)
        ),
        W,
        H,
        B,
    )
    check(lambda jx, np_, w, h, xs: jx.vmap(jx.grad(lambda h: np_.sum(f(jx, np_, w, h, xs[0])[1])))(h), W, H, B)


def test_nested_loops(backend):
    def f(jx, np_):
        def inner(c, x):
            return jx.lax.fori_loop(0, 3, lambda i, a: a * 0.9 + x, c), c

        def outer(xs):
            c, ys = jx.lax.scan(inner, np_.zeros(4), xs)
            d = jx.lax.cond(np_.sum(c) > 0, lambda: jx.lax.scan(lambda a, y: (a + y, None), c, ys)[0], lambda: c)
            return np_.sum(d**2)

        return outer

    check(lambda jx, np_, xs: f(jx, np_)(xs), XS)
    check(lambda jx, np_, xs: jx.grad(f(jx, np_))(xs), XS)
    check(lambda jx, np_, xs: jx.jit(jx.grad(f(jx, np_)))(xs), XS)
    check(lambda jx, np_, xs: jx.vmap(f(jx, np_))(np_.stack([xs, -xs])), XS)


def test_linearize_and_numpy_scalars(backend):
    def f(jx, np_, xs):
        y, fl = jx.linearize(lambda xs: jx.lax.scan(lambda c, x: (c * x, c), 1.0, xs), xs)
        return y, fl(xs * 0 + 1)

    check(f, X4)
    check(lambda jx, np_: jx.linearize(lambda x: jx.lax.cond(x > 0, lambda x: x * 2, lambda x: -x, x), 1.5)[1](1.0))
    check(lambda jx, np_: jx.lax.cond(np.True_, lambda: 1.0, lambda: 2.0))
    check(lambda jx, np_: jx.lax.switch(np.int32(1), [lambda: 1, lambda: 2]))


def test_jaxpr_primitive_names(backend):
    j = pyjax.make_jaxpr(lambda p, x: plax.cond(p, lambda x: pjnp.sin(x), lambda x: x, x))(True, 1.0)
    assert [e.primitive.name for e in j.eqns][-1] == "cond"
    j = pyjax.make_jaxpr(lambda x: plax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, x))(1.0)
    assert j.eqns[-1].primitive.name == "while"
    j = pyjax.make_jaxpr(lambda xs: plax.scan(lambda c, x: (c + x, c), 0.0, xs))(np.ones(3, np.float32))
    assert j.eqns[-1].primitive.name == "scan"
    assert "scan" in str(j)


# --- compiled loops (pyjax.runtime.plans): planned once, run by the backend without host trips ------


def _nested(jx, np_, w, xs, idx):
    """A reversed scan whose body runs a while loop with a data-dependent trip count, a switch, a
    transposed (view) constant and a gather with a traced index."""

    def body(c, x):
        def grow(s):
            k, v = s
            return k + 1, np_.tanh(v @ w.T) + x[idx[k % 3]]

        k, v = jx.lax.while_loop(lambda s: (s[0] < 6) & (np_.abs(s[1]).sum() < 3.0 + s[0]), grow, (0, c))
        v = jx.lax.switch(k % 3, [lambda a: a * 0.5, lambda a: a - 1.0, np_.sin], v)
        return v, (k, v.sum())

    return jx.lax.scan(body, xs[0] * 0.1, xs, reverse=True)


def test_compiled_loops_nested(backend, monkeypatch):
    from pyjax.runtime import control

    def host_loop(*args, **kw):
        raise AssertionError("ran as a host loop, not as one plan")

    for name in ("while", "scan", "cond"):  # every level must be planned (cond inside a body too)
        monkeypatch.setitem(control._RUNNERS, name, host_loop)
    idx = np.array([2, 0, 3], np.int32)
    check(lambda jx, np_, w, xs, i: jx.jit(lambda w, xs, i: _nested(jx, np_, w, xs, i))(w, xs, i), W, XS, idx)


def test_compiled_loop_wasm_driver(monkeypatch):
    """On wasm a planned loop is one call of a generated driver module: the Python walk never runs."""
    from pyjax.backends.base import Backend

    def walk(*args):
        raise AssertionError("walked in Python")

    monkeypatch.setattr(Backend, "_run_steps", walk)
    with pyjax.default_device(pyjax.devices("wasm")[0]):
        idx = np.array([1, 2, 0], np.int32)
        check(lambda jx, np_, w, xs, i: jx.jit(lambda w, xs, i: _nested(jx, np_, w, xs, i))(w, xs, i), W, XS, idx)


def test_compiled_loop_webgpu_replay(monkeypatch):
    """On webgpu a jitted program of kernels, copies and fixed-trip loops (a reversed scan with a
    fori_loop inside) is one recorded Replay per call: the Python walk never runs."""
    from pyjax.backends.base import Backend

    def walk(*args):
        raise AssertionError("walked in Python")

    monkeypatch.setattr(Backend, "_run_steps", walk)

    def f(jx, np_, w, xs):
        def body(c, x):
            c = jx.lax.fori_loop(0, 3, lambda i, v: np_.tanh(v @ w.T) + x * i, c)
            return c * 0.5, c.sum()

        g = jx.jit(lambda w, xs: jx.lax.scan(body, xs[0], xs, reverse=True))
        return g(w, xs), g(w * 0.5, xs + 1.0)  # the second call replays on other buffers

    with pyjax.default_device(pyjax.devices("webgpu")[0]):
        check(f, W, XS)


@pytest.mark.parametrize("limit", [0.5, 1.5, 4.5, 5.5, 37.5])
def test_while_loop_webgpu_speculative(monkeypatch, limit):
    """On webgpu a while loop runs several trips per read back of its predicate and keeps the
    state of the first trip whose predicate was false: 0, 1, 4, 5 and 37 trips (batches of 4, 8,
    16, ... trips) give JAX's results, with no Python walk."""
    from pyjax.backends.base import Backend

    def walk(*args):
        raise AssertionError("walked in Python")

    monkeypatch.setattr(Backend, "_run_steps", walk)

    def f(jx, np_, x, lim):
        def body(c):
            k, v, s = c
            return k + 1.0, np_.tanh(v @ W) + 0.1, s + v.sum()

        return jx.jit(lambda x, lim: jx.lax.while_loop(lambda c: c[0] < lim, body, (0.0, x, 0.0)))(x, lim)

    with pyjax.default_device(pyjax.devices("webgpu")[0]):
        check(f, XS[0], np.float32(limit))


def _inner_while(jx, np_, v, n):
    """n trips of a small matmul step (a while loop to nest)."""
    return jx.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, np_.tanh(c[1] @ W) + 0.1), (0, v))[1]


_NESTED_WHILE = {
    # a scan whose steps run 9..11 trips of a while loop (recorded 1, 2, .., then 16 trips)
    "scan": lambda jx, np_, x, xs: jx.lax.scan(
        lambda c, i: (_inner_while(jx, np_, c + xs[i % 5], 9 + i % 3), c.sum()), x, np_.arange(8)
    ),
    # a while loop of 6 trips around one of 1, 3, .., 11 trips
    "while": lambda jx, np_, x, xs: jx.lax.while_loop(
        lambda c: c[0] < 6, lambda c: (c[0] + 1, _inner_while(jx, np_, c[1], 2 * c[0] + 1)), (0, x)
    ),
    # two levels: a fori_loop around a while loop of 2 trips around one of 5 or 6
    "deep": lambda jx, np_, x, xs: jx.lax.fori_loop(
        0,
        3,
        lambda i, v: jx.lax.while_loop(
            lambda c: c[0] < 2, lambda c: (c[0] + 1, _inner_while(jx, np_, c[1], 5 + c[0])), (0, v)
        )[1],
        x,
    ),
    # 0..10 trips: most recorded trips would be wasted, so the scan is walked, a read per trip
    "varied": lambda jx, np_, x, xs: jx.lax.scan(
        lambda c, i: (_inner_while(jx, np_, c + xs[i % 5], (i * 3) % 11), c.sum()), x, np_.arange(8)
    ),
}


@pytest.mark.parametrize("kind", list(_NESTED_WHILE))
def test_nested_while_webgpu_on_device(monkeypatch, kind):
    """On webgpu a while loop nested in a loop is decided on the device (its dispatches indirect,
    zero workgroups past its end; more trips recorded when it needed them): JAX's results, no
    Python walk, and a call of dozens of inner trips submits at most 3 times (28-50 before: a
    read per trip). Trip counts that vary widely fall back to the walk."""
    from pyjax.backends.base import Backend

    walked = []
    walk = Backend._run_steps
    monkeypatch.setattr(Backend, "_run_steps", lambda *a: walked.append(1) or walk(*a))
    f = _NESTED_WHILE[kind]
    dev = pyjax.devices("webgpu")[0]
    with pyjax.default_device(dev):
        check(lambda jx, np_, x, xs: jx.jit(lambda x, xs: f(jx, np_, x, xs))(x, xs), X4, XS)
        g = pyjax.jit(lambda x, xs: f(pyjax, pjnp, x, xs))
        x, xs = pjnp.asarray(X4 * 0.5), pjnp.asarray(XS)
        pyjax.block_until_ready(g(x, xs))  # records more trips where the first were too few
        before = dev.backend.host.stats["submits"]
        walked.clear()
        pyjax.block_until_ready(g(x, xs))
        if kind == "varied":
            assert walked
        else:
            assert not walked and dev.backend.host.stats["submits"] - before <= 3


_SWITCHES = {
    "top": lambda jx, np_, x, xs: jx.lax.cond(x.sum() > 0, lambda v: np_.sin(v) @ W, lambda v: v * 2.0, x),
    "fori": lambda jx, np_, x, xs: jx.lax.fori_loop(
        0, 5, lambda i, v: jx.lax.switch(i % 3, [lambda u: u @ W, lambda u: np_.tanh(u), lambda u: u - 1.0], v), x
    ),
    "while": lambda jx, np_, x, xs: jx.lax.while_loop(
        lambda c: c[0] < 5,
        lambda c: (c[0] + 1, jx.lax.cond(c[1].sum() > 0, lambda u: u @ W - 0.5, lambda u: u + 1.0, c[1])),
        (0, x),
    )[1],
    "while_in_cond_in_scan": lambda jx, np_, x, xs: jx.lax.scan(
        lambda c, xi: (
            jx.lax.cond(xi.sum() < 0, lambda u: _inner_while(jx, np_, u, 3), lambda u: u * 0.5, c + xi),
            0.0,
        ),
        x,
        xs,
    )[0],
}


@pytest.mark.parametrize("kind", list(_SWITCHES))
def test_switch_webgpu_on_device(monkeypatch, kind):
    """On webgpu a cond inside a recording runs every branch under a flag set only for the branch
    its index picks (the others dispatch nothing): JAX's results with no Python walk and no read
    of the index (a read per cond before)."""
    from pyjax.backends.base import Backend

    def walk(*args):
        raise AssertionError("walked in Python")

    monkeypatch.setattr(Backend, "_run_steps", walk)
    f = _SWITCHES[kind]
    dev = pyjax.devices("webgpu")[0]
    with pyjax.default_device(dev):
        check(lambda jx, np_, x, xs: jx.jit(lambda x, xs: f(jx, np_, x, xs))(x, xs), X4, XS)
        check(lambda jx, np_, x, xs: jx.jit(lambda x, xs: f(jx, np_, x, xs))(x, xs), -X4, XS)
        g = pyjax.jit(lambda x, xs: f(pyjax, pjnp, x, xs))
        x, xs = pjnp.asarray(X4), pjnp.asarray(XS)
        pyjax.block_until_ready(g(x, xs))
        before = dev.backend.host.stats["submits"]
        pyjax.block_until_ready(g(x, xs))
        assert dev.backend.host.stats["submits"] - before <= (1 if kind in ("top", "fori") else 3)


def test_loop_with_callback_runs_on_host(backend):
    """A body with a host step (a callback) is not planned: the host loop still calls back every trip."""

    def f(jx, np_, xs):
        seen = []

        def body(c, x):
            jx.debug.callback(lambda v: seen.append(float(v)), c)
            return c + x.sum(), c

        out = jx.jit(lambda xs: jx.lax.scan(body, 0.0, xs))(xs)
        jx.block_until_ready(out)
        return out, np_.array(seen, np_.float32)

    check(f, XS)


# --- map / associative_scan ----------------------------------------------------------------------


@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 5, 8])
def test_map(backend, batch_size):
    check(lambda jx, np_, xs: jx.lax.map(lambda x: (np_.sin(x) * 2, np_.sum(x)), xs, batch_size=batch_size), XS)


@pytest.mark.parametrize("n,reverse", [(1, False), (2, True), (5, False), (8, True)])
def test_associative_scan(backend, n, reverse):
    xs = XS[:n] if n <= 5 else np.concatenate([XS, XS[:3]])
    check(lambda jx, np_, x: jx.lax.associative_scan(jx.lax.add, x, reverse=reverse), xs)
    check(lambda jx, np_, x: jx.lax.associative_scan(np_.maximum, x, reverse=reverse, axis=1), xs)

    def affine(a, b):  # composition of x -> a0 * x + a1
        return (a[0] * b[0], b[0] * a[1] + b[1])

    check(lambda jx, np_, x: jx.lax.associative_scan(affine, (x, x * 0.5 + 1), reverse=reverse), xs)
    check(lambda jx, np_, x: jx.grad(lambda x: np_.sum(jx.lax.associative_scan(jx.lax.mul, x)))(x), xs)


# --- Python control flow on traced values -----------------------------------------------------------


def test_python_control_flow_on_tracer_raises(backend):
    def f(x):
        if x > 0:
            return x
        return -x

    with pytest.raises(TypeError) as info:
        pyjax.jit(f)(1.0)
    assert "lax.cond" in str(info.value) and "jnp.where" in str(info.value)
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(f)(1.0)


# --- without numpy (Pyodide offline): the pure-Python cpu path runs the host loops too --------------

_NO_NUMPY_CASES = {
    "scan": "jax.lax.scan(lambda c, x: (c * 0.5 + x, c.sum()), jnp.zeros(2), jnp.arange(6.0).reshape(3, 2))",
    "grad_scan": "jax.jit(jax.grad(lambda xs: jax.lax.scan(lambda c, x: (c * x, c), 1.0, xs)[0]))"
    "(jnp.arange(1.0, 5.0))",
    "cond": "jax.vmap(lambda v: jax.lax.cond(v > 1, jnp.sin, jnp.cos, v))(jnp.arange(4.0))",
    "while": "jax.lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5), (0, jnp.ones(2)))",
}


def test_control_flow_without_numpy():
    import json
    import os
    import subprocess
    import sys
    import textwrap

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    child = textwrap.dedent(
        """
        import json, sys
        for blocked in ("numpy", "ml_dtypes", "jax", "jaxlib", "scipy"):
            sys.modules[blocked] = None
        sys.path.insert(0, ROOT)
        import pyjax as jax
        import pyjax.numpy as jnp
        out = {"numpy": jax.devices()[0].backend.use_numpy}
        for name, src in CASES.items():
            leaves = jax.tree_util.tree_leaves(eval(src))
            out[name] = [[l.tolist(), l.dtype.name] for l in leaves]
        print("RESULT" + json.dumps(out))
        """
    )
    code = f"ROOT = {root!r}\nCASES = {_NO_NUMPY_CASES!r}\n" + child
    env = dict(os.environ, PYJAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))[len("RESULT") :])
    assert got.pop("numpy") is False
    for name, src in _NO_NUMPY_CASES.items():
        want = jax.tree_util.tree_leaves(eval(src, {"jax": jax, "jnp": jax.numpy}))
        assert len(want) == len(got[name]), name
        for (val, dt), w in zip(got[name], want):
            assert dt == str(w.dtype), name
            np.testing.assert_allclose(
                np.asarray(val, dtype=np.float64), np.asarray(w, dtype=np.float64), rtol=2e-5, atol=1e-6, err_msg=name
            )


def test_platform_dependent(backend):
    out = pyjax.lax.platform_dependent(2.0, default=lambda x: x + 1, tpu=lambda x: x, **{backend: lambda x: x * 10})
    assert float(out) == 20.0
    assert float(pyjax.lax.platform_dependent(2.0, default=lambda x: x + 1, tpu=lambda x: x)) == 3.0


rng = np.random.default_rng(7)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


TOL = dict(rtol=1e-4, atol=1e-4)


# --- composite and small types ------------------------------------------------------------------


def test_composite(backend):
    def f(jx, jnp, x):
        tan = jx.lax.composite(lambda x, *, scale=1.0: jx.lax.sin(x) / jx.lax.cos(x) * scale, name="my.tangent")
        return tan(x), tan(x, scale=2.0), jx.jit(tan)(x)

    check(f, _r(5), **TOL)
    comp = pyjax.lax.composite(lambda x: x + 1, name="my.inc", version=2)
    assert comp.composite_name == "my.inc" and comp.composite_version == 2
    # JAX has no JVP rule for composites; pyjax differentiates the decomposition
    assert float(pyjax.grad(lambda x: comp(x) * x)(2.0)) == 5.0
