"""optax's optimizers (the list optax's alias_test checks, plus lbfgs) run for a few steps on one problem.

    python tests/ecosystem/optimizers.py [--pyjax] [NAME ...]   prints {name: final parameters} as JSON

With --pyjax, `jax` is aliased to pyjax first; tests/test_ecosystem.py compares the two runs.
"""

from __future__ import annotations

import json
import sys

# (name, keyword arguments): optax's own alias_test list
OPTIMIZERS = [
    ("adabelief", {"learning_rate": 1e-2}),
    ("adadelta", {"learning_rate": 0.1}),
    ("adadelta", {}),
    ("adafactor", {"learning_rate": 5e-3}),
    ("adafactor", {}),
    ("adagrad", {"learning_rate": 1.0}),
    ("adam", {"learning_rate": 1e-1}),
    ("adamax", {"learning_rate": 1e-1}),
    ("adamaxw", {"learning_rate": 1e-1}),
    ("adamw", {"learning_rate": 1e-1}),
    ("adan", {"learning_rate": 1e-1}),
    ("amsgrad", {"learning_rate": 1e-1}),
    ("fromage", {"learning_rate": 5e-3}),
    ("lamb", {"learning_rate": 1e-3}),
    ("lars", {"learning_rate": 1.0}),
    ("lion", {"learning_rate": 1e-2, "weight_decay": 1e-4}),
    ("nadam", {"learning_rate": 1e-2}),
    ("nadamw", {"learning_rate": 1e-2}),
    ("noisy_sgd", {"learning_rate": 1e-3, "eta": 1e-4, "key": 0}),
    ("novograd", {"learning_rate": 1e-3}),
    ("optimistic_adam", {"learning_rate": 2e-3}),
    ("optimistic_adam_v2", {"learning_rate": 2e-3}),
    ("optimistic_gradient_descent", {"learning_rate": 2e-3, "alpha": 0.7, "beta": 0.1}),
    ("polyak_sgd", {"max_learning_rate": 1.0}),
    ("radam", {"learning_rate": 5e-3}),
    ("rmsprop", {"learning_rate": 5e-3}),
    ("rmsprop", {"learning_rate": 5e-3, "momentum": 0.9}),
    ("rprop", {"learning_rate": 1e-1}),
    ("sgd", {"learning_rate": 1e-3, "momentum": 0.9}),
    ("sign_sgd", {"learning_rate": 1e-1}),
    ("signum", {"learning_rate": 1e-2}),
    ("sm3", {"learning_rate": 1.0}),
    ("yogi", {"learning_rate": 1e-1}),
    ("lbfgs", {}),
]
STEPS = 5


def run_all(jax, optax, names=()) -> dict:
    """{index_name: final parameters as floats (or the error)} for the optimizers named (all if none)."""
    jnp = jax.numpy

    def loss(p):
        w, b = p["w"], p["b"]
        return jnp.sum((w[1:] - w[:-1] ** 2) ** 2 * 10.0 + (1.0 - w[:-1]) ** 2) + jnp.sum(jnp.tanh(b) ** 2)

    results = {}
    for i, (name, kwargs) in enumerate(OPTIMIZERS):
        if names and name not in names:
            continue
        key = f"{i:02d}_{name}"
        try:
            opt = getattr(optax, name)(**kwargs)
            params = {"w": jnp.array([-1.0, 0.5, 1.5, 0.2]), "b": jnp.array([[0.3, -0.7], [1.1, 0.0]])}
            state = opt.init(params)

            @jax.jit
            def step(params, state):
                value, grad = jax.value_and_grad(loss)(params)
                if name == "polyak_sgd":
                    updates, state = opt.update(grad, state, params, value=value)
                elif name == "lbfgs":
                    updates, state = opt.update(grad, state, params, value=value, grad=grad, value_fn=loss)
                else:
                    updates, state = opt.update(grad, state, params)
                return optax.apply_updates(params, updates), state

            for _ in range(STEPS):
                params, state = step(params, state)
            results[key] = [float(v) for leaf in jax.tree_util.tree_leaves(params) for v in leaf.ravel().tolist()]
        except Exception as e:  # reported, compared as a failure
            results[key] = f"{type(e).__name__}: {e}"[:300]
    return results


if __name__ == "__main__":
    if "--pyjax" in sys.argv:
        import pyjax

        pyjax.alias_jax()
    import jax
    import optax

    print(json.dumps(run_all(jax, optax, [a for a in sys.argv[1:] if not a.startswith("--")])))
