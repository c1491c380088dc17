"""The function jax.vjp returns is a pytree (pyjax.api.VJP, JAX's api.VJP): its leaves are the residuals of the
backward pass, so it can be passed to (and returned from) jitted and vmapped functions and called there."""

from __future__ import annotations

import numpy as np

from jax_compare import check

X = np.array([0.0, 1.0, 2.0], np.float32)


def test_vjp_function_through_jit_and_vmap(backend):
    def run(jax, jnp, x):
        _, f = jax.vjp(lambda x: jnp.sin(x) * x, x)
        call = jax.jit(lambda f, c: f(c))
        zeroed = jax.tree_util.tree_map(lambda r: r * 0, f)  # new residuals, same backward pass
        batched = jax.vmap(lambda f, c: f(c), in_axes=(None, 0))(f, jnp.stack([x, 2 * x]))
        return f(jnp.ones(3)), call(f, jnp.ones(3)), call(f, x), zeroed(jnp.ones(3)), batched

    check(run, X, rtol=1e-5, atol=1e-6)


def test_vjp_function_structures(backend):
    def run(jax, jnp, x):
        _, f = jax.vjp(lambda d: d["a"] @ d["b"], {"a": jnp.ones((2, 3)), "b": x.reshape(3, 1) * jnp.ones((3, 2))})
        _, g = jax.vjp(lambda x, n: (x * n, n), x, jnp.int32(3))  # an integer input and output: float0
        _, h, aux = jax.vjp(lambda x: (jnp.tanh(x), 5), x, has_aux=True)
        returned = jax.jit(lambda x: jax.vjp(jnp.exp, x)[1])(x)  # a VJP out of jit
        return (
            jax.jit(lambda f: f(jnp.eye(2)))(f),
            jax.jit(lambda g: g((jnp.ones(3), np.zeros((), jax.dtypes.float0)))[0])(g),
            jax.jit(lambda h: h(jnp.ones(3)))(h),
            aux,
            returned(jnp.ones(3)),
            jax.jit(lambda f: f(jnp.ones(3)))(returned),
        )

    check(run, X, rtol=1e-5, atol=1e-6)


def test_vjp_function_leaves_and_errors():
    import pyjax
    import pyjax.numpy as jnp

    _, f = pyjax.vjp(lambda x: jnp.sin(x) * x, jnp.asarray(X))
    leaves = pyjax.tree_util.tree_leaves(f)
    assert leaves and all(isinstance(r, pyjax.Array) for r in leaves)
    assert pyjax.tree_util.tree_structure(f) == pyjax.tree_util.tree_structure(f)  # staged once
    check(lambda jax, jnp, x: jax.jit(lambda f: f(jnp.ones(4)))(jax.vjp(jnp.sin, x)[1]), X)  # wrong shape
    check(lambda jax, jnp, x: jax.jit(lambda f: f([jnp.ones(3)]))(jax.vjp(jnp.sin, x)[1]), X)  # wrong structure
    # grad through a jitted call of a VJP
    check(lambda jax, jnp: jax.grad(lambda x: jax.jit(lambda f: f(1.0)[0])(jax.vjp(jnp.sin, x)[1]))(0.5))
