"""Quickstart: grad, jit, vmap and pytrees

The four ideas of JAX in one page: differentiate a Python function with `grad`, compile it with `jit`,
batch it with `vmap`, and do all three on nested dicts and lists of arrays (pytrees).
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import show


# grad: the derivative of a Python function, itself a Python function.
def f(x):
    return jnp.sin(x) * x**2


df = jax.grad(f)
print("f(1.5) =", f(1.5), " f'(1.5) =", df(1.5), " f''(1.5) =", jax.grad(df)(1.5))
xs = jnp.linspace(-3.0, 3.0, 61)
show.line(jax.vmap(f)(xs), x=xs, title="f and its derivative", label="f(x) = x^2 sin x")
show.line(jax.vmap(df)(xs), x=xs, title="f and its derivative", label="f'(x)")


# jit: trace once, compile to one fused program, reuse it for every call with the same shapes.
@jax.jit
def softplus_sum(x):
    return jnp.sum(jnp.log1p(jnp.exp(x)))


print("softplus_sum(xs) =", softplus_sum(xs))
print("same without jit:", jnp.sum(jnp.log1p(jnp.exp(xs))))

# vmap: write the function for one example, run it on a batch.
w = jnp.arange(6.0).reshape(3, 2)
batch = jnp.arange(12.0).reshape(4, 3)
print("vmap(x @ w) over 4 rows:", jax.vmap(lambda x: x @ w)(batch).tolist())
print("per-example gradients:", jax.vmap(jax.grad(lambda x: jnp.sum((x @ w) ** 2)))(batch)[0].tolist())

# pytrees: nested containers of arrays go through grad, jit and vmap unchanged.
params = {"w": jnp.ones((3, 2)), "b": [jnp.zeros(2), 0.5]}


def model(p, x):
    return jnp.tanh(x @ p["w"] + p["b"][0]) * p["b"][1]


grads = jax.grad(lambda p: jnp.mean(model(p, batch) ** 2))(params)
print("gradient tree:", jax.tree_util.tree_structure(grads))
print("leaf shapes:", [leaf.shape for leaf in jax.tree_util.tree_leaves(grads)])
print("gradient of b[1]:", grads["b"][1])
total = jax.tree_util.tree_reduce(lambda a, b: a + jnp.sum(b), params, 0.0)
print("sum of all parameters:", total)
