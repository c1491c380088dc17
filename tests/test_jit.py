"""jit against JAX: values, static arguments, the trace cache (retrace only when shapes, dtypes, weak types or
static values change) and every composition with grad and vmap."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from jax_compare import check_jit as check

X = np.array([0.5, -1.25, 2.0], np.float32)
M = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5


def f_scalar(n, x):
    return n.sum(n.sin(x) * x**2 + n.exp(-x) / (1 + x * x))


def test_jit_values(backend):
    check(lambda j, n, x: j.jit(lambda v: f_scalar(n, v))(x), X)
    check(lambda j, n, m: j.jit(lambda a: (a @ a.T, n.max(a, axis=1), a.T[::-1]))(m), M)
    check(lambda j, n, m: j.jit(lambda d: {"s": d["a"] + d["b"][0]})({"a": m, "b": [m * 2]}), M)
    check(lambda j, n: j.jit(lambda a, b: a * b)(2.0, 3))  # weak Python scalars stay weak
    check(lambda j, n: j.jit(lambda a: a + 1)(n.int32(3)))
    check(lambda j, n, x: j.jit(lambda v: v.astype(n.int32) // 2)(x), X)
    check(lambda j, n, x: j.jit(lambda v: (v > 0, n.where(v > 0, v, 0.0)))(x), X)
    check(lambda j, n, x: j.jit(lambda v: n.float16(1.5) * v.astype(n.float16))(x), X)
    check(lambda j, n, x: j.jit(lambda v: v)(x), X)  # identity
    check(lambda j, n, x: j.jit(lambda v: (v, v))(x), X)
    check(lambda j, n, x: j.jit(lambda v: n.ones(3) * 2)(x), X)  # output independent of the input
    check(lambda j, n, x: j.jit(lambda v: None)(x), X)
    check(lambda j, n, x: j.jit(lambda v: ())(x), X)


def test_jit_closure_constants(backend):
    def run(j, n, x):
        c = n.arange(3.0)
        return j.jit(lambda v: v * c + n.sum(c))(x)

    check(run, X)


def test_static_argnums_and_argnames(backend):
    def f(n, x, k, mode="sum"):
        y = x**k
        return n.sum(y) if mode == "sum" else n.max(y)

    check(lambda j, n, x: j.jit(functools.partial(f, n), static_argnums=1)(x, 3), X)
    check(lambda j, n, x: j.jit(functools.partial(f, n), static_argnums=(1, 2))(x, 2, "max"), X)
    check(lambda j, n, x: j.jit(functools.partial(f, n), static_argnames="mode")(x, 2, mode="max"), X)
    check(lambda j, n, x: j.jit(functools.partial(f, n), static_argnames=("k", "mode"))(x, k=3, mode="max"), X)
    check(lambda j, n, x: j.jit(lambda v, k: v.reshape(k), static_argnums=1)(x, (3, 1)), X)
    check(lambda j, n, x: j.jit(lambda v, k: v * k, static_argnums=-1)(x, 2), X)


def _counted(fn):
    count = [0]

    def wrapper(*args, **kwargs):
        count[0] += 1  # a Python side effect: runs once per trace
        return fn(*args, **kwargs)

    return wrapper, count


def test_jit_cache(backend):
    f, count = _counted(lambda x, y: x * 2 + y)
    jf = pyjax.jit(f)
    x = pjnp.arange(3.0)
    jf(x, 1.0)
    jf(x, 2.0)
    jf(x + 1, 5.0)
    assert count[0] == 1  # same shapes/dtypes/weak types: one trace
    jf(x, x)  # y no longer a weak scalar
    assert count[0] == 2
    jf(x, pjnp.float32(1))  # strong f32 scalar != weak f32 scalar
    assert count[0] == 3
    jf(x, pjnp.float32(7))
    assert count[0] == 3
    jf(pjnp.arange(4.0), 1.0)  # new shape
    assert count[0] == 4
    jf(pjnp.arange(3), 1.0)  # new dtype
    assert count[0] == 5
    jf(pjnp.arange(3), 1)  # weak int scalar
    assert count[0] == 6
    jf(np.arange(3, dtype=np.float32), 1.0)  # numpy input with the same aval hits the cache
    assert count[0] == 6
    jf(x, y=2.0)  # keyword arguments
    assert count[0] in (6, 7)


def test_jit_cache_static(backend):
    f, count = _counted(lambda x, k, mode="a": x * k if mode == "a" else x - k)
    jf = pyjax.jit(f, static_argnums=1, static_argnames="mode")
    x = pjnp.arange(3.0)
    np.testing.assert_allclose(np.asarray(jf(x, 2)), [0, 2, 4])
    jf(x * 3, 2)
    assert count[0] == 1
    jf(x, 3)
    assert count[0] == 2
    np.testing.assert_allclose(np.asarray(jf(x, 3, mode="b")), [-3, -2, -1])
    assert count[0] == 3
    jf(x, 3, mode="b")
    assert count[0] == 3
    with pytest.raises((TypeError, ValueError)):
        jf(x, [1, 2])  # static arguments must be hashable


def test_jit_pytree_cache(backend):
    f, count = _counted(lambda d: d["a"] * d["b"])
    jf = pyjax.jit(f)
    jf({"a": pjnp.ones(2), "b": pjnp.ones(2)})
    jf({"a": pjnp.zeros(2), "b": pjnp.ones(2)})
    assert count[0] == 1
    jf({"a": pjnp.ones(2), "b": pjnp.ones(2), "c": 1.0})
    assert count[0] == 2


def test_jit_wrapped_attributes(backend):
    def my_fn(x):
        """Docs."""
        return x

    jf = pyjax.jit(my_fn)
    assert jf.__name__ == "my_fn" and jf.__doc__ == "Docs."
    lowered_text = str(pyjax.make_jaxpr(jf)(pjnp.ones(2)))
    assert "my_fn" in lowered_text or "jit" in lowered_text


def test_jit_decorator_forms(backend):
    @pyjax.jit
    def a(x):
        return x + 1

    @functools.partial(pyjax.jit, static_argnums=(1,))
    def b(x, n):
        return x * n

    assert a(pjnp.ones(2)).tolist() == [2.0, 2.0]
    assert b(pjnp.ones(2), 3).tolist() == [3.0, 3.0]


COMPOSITIONS = {
    "jit_grad": lambda j, n, x: j.jit(j.grad(lambda v: f_scalar(n, v)))(x),
    "grad_jit": lambda j, n, x: j.grad(j.jit(lambda v: f_scalar(n, v)))(x),
    "jit_grad_vmap": lambda j, n, x: j.jit(j.grad(lambda v: n.sum(j.vmap(lambda r: n.sin(r) * r)(v))))(x),
    "jit_vmap": lambda j, n, x: j.jit(j.vmap(lambda r: r * n.sum(r)))(n.stack([x, x * 2])),
    "vmap_jit": lambda j, n, x: j.vmap(j.jit(lambda r: r * n.sum(r)))(n.stack([x, x * 2])),
    "vmap_jit_in_axes": lambda j, n, x: j.vmap(j.jit(lambda a, b: a * b), in_axes=(None, 0))(x, n.stack([x, x])),
    "nested_jit": lambda j, n, x: j.jit(lambda v: j.jit(lambda u: n.cos(u) * 2)(v) + 1)(x),
    "grad_nested_jit": lambda j, n, x: j.grad(lambda v: n.sum(j.jit(lambda u: j.jit(n.tanh)(u) ** 2)(v)))(x),
    "grad_of_grad_jit": lambda j, n: j.grad(j.grad(j.jit(lambda v: v**3 * n.sin(v))))(0.7),
    "jit_grad_grad": lambda j, n: j.jit(j.grad(j.grad(lambda v: v**3 * n.sin(v))))(0.7),
    "vmap_grad_jit": lambda j, n, x: j.vmap(j.grad(j.jit(lambda v: n.sin(v) * v)))(x),
    "jacrev_jit": lambda j, n, x: j.jacrev(j.jit(lambda v: n.outer(v, n.sin(v))))(x),
    "jacfwd_jit": lambda j, n, x: j.jacfwd(j.jit(lambda v: n.sin(v) * v[0]))(x),
    "jit_jacrev": lambda j, n, x: j.jit(j.jacrev(lambda v: n.sin(v) * v[0]))(x),
    "hessian_jit": lambda j, n, x: j.hessian(j.jit(lambda v: f_scalar(n, v)))(x),
    "jvp_jit": lambda j, n, x: j.jvp(j.jit(lambda v: n.sin(v) * v), (x,), (n.ones_like(x),)),
    "vjp_jit": lambda j, n, x: j.vjp(j.jit(lambda v: n.sin(v) * v), x)[1](x),
    "linearize_jit": lambda j, n, x: j.linearize(j.jit(lambda v: n.exp(v) * v), x)[1](x),
    "value_and_grad_jit_aux": lambda j, n, x: j.value_and_grad(
        j.jit(lambda v: (n.sum(v**2), {"m": n.mean(v)})), has_aux=True
    )(x),
    "jit_static_grad": lambda j, n, x: j.grad(j.jit(lambda v, k: n.sum(v**k), static_argnums=1))(x, 3),
    "vmap_jit_static": lambda j, n, x: j.vmap(j.jit(lambda v, k: v * k, static_argnums=1), in_axes=(0, None))(x, 4),
    "jit_closure_grad": lambda j, n, x: j.grad(lambda w: j.jit(lambda v: n.sum(v * w))(x))(x),
}


@pytest.mark.parametrize("name", list(COMPOSITIONS))
def test_compositions(backend, name):
    fn = COMPOSITIONS[name]
    if name in ("grad_of_grad_jit", "jit_grad_grad"):
        check(fn, rtol=1e-5, atol=1e-6)
    else:
        check(fn, X, rtol=1e-5, atol=1e-6)


def test_grad_jit_retraces_once(backend):
    f, count = _counted(lambda v: pjnp.sum(pjnp.sin(v) * v))
    jf = pyjax.jit(f)
    g = pyjax.grad(jf)
    x = pjnp.arange(3.0)
    g(x)
    n1 = count[0]
    g(x + 1)
    g(x * 2)
    assert count[0] == n1  # grad of a jitted function reuses the traced jaxpr
    jf(x)
    jf(x + 1)
    assert count[0] <= n1 + 1


def test_vmap_jit_retraces_once(backend):
    f, count = _counted(lambda v: v * pjnp.sum(v))
    vf = pyjax.vmap(pyjax.jit(f))
    m = pjnp.ones((2, 3))
    vf(m)
    n1 = count[0]
    vf(m * 2)
    assert count[0] == n1


def test_jit_of_python_control_flow_on_static(backend):
    def f(x, flag):
        if flag:
            return x * 2
        return x - 1

    jf = pyjax.jit(f, static_argnames="flag")
    assert jf(pjnp.ones(2), flag=True).tolist() == [2.0, 2.0]
    assert jf(pjnp.ones(2), flag=False).tolist() == [0.0, 0.0]


def test_jit_returns_arrays_and_python_leaves(backend):
    check(lambda j, n, x: j.jit(lambda v: {"a": v, "b": (v[0], [v * 2])})(x), X)


def test_jit_donate_and_device_args_accepted(backend):
    jf = pyjax.jit(lambda x: x + 1, donate_argnums=0)
    assert jf(pjnp.ones(2)).tolist() == [2.0, 2.0]
    jf = pyjax.jit(lambda x: x + 1, inline=True)
    assert jf(pjnp.ones(2)).tolist() == [2.0, 2.0]


def test_jit_eval_shape_and_lower(backend):
    jf = pyjax.jit(lambda x: pjnp.outer(x, x))
    s = pyjax.eval_shape(jf, pjnp.ones(3))
    assert s.shape == (3, 3) and str(s.dtype) == "float32"


def test_slices_of_one_array_share_a_program(backend):
    """f(xs[i]) over many i: each slice is a view at another offset, which a program would fuse; after
    a few such variants pyjax copies views to plain buffers, so the loop compiles a bounded number of
    programs (it compiled one per i) and still gives JAX's values."""
    import jax as real_jax
    import jax.numpy as jjnp
    import numpy as np

    xs = np.linspace(-2, 2, 24 * 8, dtype=np.float32).reshape(24, 8)
    f = pyjax.jit(lambda x: pjnp.tanh(x * 2.0).sum())
    g = real_jax.jit(lambda x: jjnp.tanh(x * 2.0).sum())
    px, jx = pjnp.asarray(xs), jjnp.asarray(xs)
    got = [float(f(px[i])) for i in range(24)]
    want = [float(g(jx[i])) for i in range(24)]
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    jaxpr = next(iter(f.cache.values()))[0]
    programs = [k for k in jaxpr._cache if isinstance(k, tuple) and len(k) == 2 and isinstance(k[1], tuple)]
    assert len(programs) <= 5, f"{len(programs)} programs compiled for 24 slices"


def test_program_plan_outputs_and_reused_buffers(backend):
    """A jitted program runs as one plan (pyjax.runtime.plans): intermediates of one size share
    buffers once dead; outputs are an input passed through, views of intermediates, a cond's and
    a loop's results, and one intermediate returned twice. Called twice: the planned buffers are
    reused across calls without leaking one call's values into the next."""
    w = (np.arange(16, dtype=np.float32).reshape(4, 4) - 7.5) / 16

    def f(j, n, x, w):
        a = n.sin(x @ w)
        b = n.cos(a @ w)
        c = n.tanh(b @ w)
        e = n.exp(c @ w) * 0.5
        d = (a + b + c + e) @ w
        k = j.lax.cond(d.sum() > 0, lambda: d * 2, lambda: d - 1)
        loop = j.lax.fori_loop(0, 3, lambda i, v: n.tanh(v @ w), c)
        return x, d.T, k, loop, e, e

    jf = {}

    def run(j, n, x, w):
        g = jf.setdefault(j, j.jit(lambda x, w: f(j, n, x, w)))
        return g(x, w), g(x * 2, w)

    check(run, M, w)


def test_numpy_scalars_given_to_lax_under_jit(backend):
    """np.float32(...) and numpy-array operands of lax ops inside jit become literals of their dtype and
    captured constants (both raised 'array literal without an input slot')."""
    x = np.arange(4.0, dtype=np.float32)
    ints = np.arange(4, dtype=np.int32)

    def f(lib, np_, a):
        padded = lib.lax.pad(a, np.float32(-1), [(1, 0, 0)])
        return lib.jit(
            lambda a: (
                lib.lax.add(a, np.float32(2)),
                padded,
                lib.lax.pad(a, np.float32(-1), [(0, 1, 1)]),
                lib.lax.pad(ints, np.int32(0), [(1, 0, 0)]),
                lib.lax.mul(a, np.full(4, 3.0, np.float32)),
            )
        )(a)

    check(f, x)


def test_program_traced_on_one_device_runs_on_another():
    """jit(f) is shared per f, so a program traced while wasm was the default (its constants on wasm)
    may run on cpu arguments: the captured constants move with it (this raised 'a captured constant
    lives on another device')."""
    table = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    def f(x):
        return x @ pjnp.asarray(table) + pjnp.array([1.0, 2.0, 3.0], pjnp.float32)

    x = np.ones((4, 2), np.float32)
    want = x @ table + np.array([1, 2, 3], np.float32)
    for device in ("wasm", "cpu", "wasm"):
        with pyjax.default_device(pyjax.devices(device)[0]):
            out = pyjax.jit(f)(pjnp.asarray(x))
            assert out.devices() == {pyjax.devices(device)[0]}
            np.testing.assert_allclose(np.asarray(out), want)
