"""Small training runs in libraries built on JAX (equinox, flax linen, flax nnx): an MLP, five SGD steps.

    python tests/ecosystem/models.py [--pyjax] [NAME ...]   prints {name: numbers, or the error} as JSON

With --pyjax, `jax` is aliased to pyjax first; tests/test_ecosystem.py and run.py --models compare the
two runs (losses, first gradients, outputs after training).
"""

from __future__ import annotations

import json
import sys
import traceback


def _data(jnp):
    x = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)
    y = jnp.arange(8.0).reshape(4, 2) / 8
    return x, y


def _flat(jax, tree) -> list:
    return [float(v) for leaf in jax.tree_util.tree_leaves(tree) for v in leaf.ravel().tolist()]


def equinox_mlp(jax) -> list:
    """eqx.nn.MLP trained with filter_value_and_grad under filter_jit."""
    import equinox as eqx
    import jax.numpy as jnp

    model = eqx.nn.MLP(in_size=3, out_size=2, width_size=8, depth=2, key=jax.random.PRNGKey(0))
    x, y = _data(jnp)

    @eqx.filter_jit
    def loss(m, x, y):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)

    @eqx.filter_jit
    def step(m, x, y):
        value, grads = eqx.filter_value_and_grad(loss)(m, x, y)
        return eqx.apply_updates(m, jax.tree_util.tree_map(lambda g: -0.1 * g, grads)), value

    out = _flat(jax, eqx.filter(eqx.filter_grad(loss)(model, x, y), eqx.is_array))
    for _ in range(5):
        model, value = step(model, x, y)
        out.append(float(value))
    return out + _flat(jax, jax.vmap(model)(x))


def flax_linen_mlp(jax) -> list:
    """A linen Dense/relu MLP: init, then jit(value_and_grad) steps on its params."""
    import jax.numpy as jnp
    from flax import linen as nn

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(2)(nn.relu(nn.Dense(8)(x)))

    model = MLP()
    x, y = _data(jnp)
    params = model.init(jax.random.PRNGKey(0), x)

    @jax.jit
    def step(p):
        value, grads = jax.value_and_grad(lambda q: jnp.mean((model.apply(q, x) - y) ** 2))(p)
        return jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, p, grads), value

    out = []
    for _ in range(5):
        params, value = step(params)
        out.append(float(value))
    return out + _flat(jax, model.apply(params, x))


def flax_nnx_mlp(jax) -> list:
    """An nnx Linear/relu MLP: nnx.value_and_grad steps under nnx.jit."""
    import jax.numpy as jnp
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(3, 8, rngs=rngs)
            self.l2 = nnx.Linear(8, 2, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.relu(self.l1(x)))

    model = MLP(nnx.Rngs(0))
    x, y = _data(jnp)

    @nnx.jit
    def step(m):
        value, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(m)
        params = nnx.state(m, nnx.Param)
        nnx.update(m, jax.tree_util.tree_map(lambda a, g: a - 0.1 * g, params, grads))
        return value

    out = [float(step(model)) for _ in range(5)]
    return out + _flat(jax, model(x))


def agree(got: list, want: list, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Same length, every number within float32 rounding of JAX's."""
    return len(got) == len(want) and all(abs(a - b) <= atol + rtol * abs(b) for a, b in zip(got, want))


MODELS = {"equinox_mlp": equinox_mlp, "flax_linen_mlp": flax_linen_mlp, "flax_nnx_mlp": flax_nnx_mlp}
PACKAGES = {"equinox_mlp": "equinox", "flax_linen_mlp": "flax", "flax_nnx_mlp": "flax"}


def run_all(jax, names: list | None = None) -> dict:
    """{name: numbers} per model; a model that raises gives its error's last line instead."""
    results = {}
    for name in names or list(MODELS):
        try:
            results[name] = MODELS[name](jax)
        except Exception as e:  # reported, compared by the caller
            line = traceback.format_exception_only(type(e), e)[-1].strip()
            results[name] = line[:300]
    return results


if __name__ == "__main__":
    if "--pyjax" in sys.argv:
        import pyjax

        pyjax.alias_jax()
    import jax

    print(json.dumps(run_all(jax, [a for a in sys.argv[1:] if not a.startswith("--")])))
