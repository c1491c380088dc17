"""Native demo: train a tiny MLP on y = sin(x) with jit + grad, printing the loss as it falls.

    python examples/demo.py [--steps 500] [--backend cpu]

The same code runs on real JAX: replace the two pyjax imports by `import jax` and
`import jax.numpy as jnp`. `make serve` runs this until the browser playground lands.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pyjax as jax  # noqa: E402
import pyjax.numpy as jnp  # noqa: E402


def init_params(sizes: list[int]) -> list[dict]:
    """Deterministic small weights (no PRNG needed): a scaled cosine pattern per layer."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        k = jnp.arange(n_in * n_out, dtype=jnp.float32).reshape(n_in, n_out)
        w = jnp.cos(k * 1.618) * (1.0 / math.sqrt(n_in))
        params.append({"w": w, "b": jnp.zeros(n_out)})
    return params


def mlp(params: list[dict], x):
    """tanh hidden layers, linear output."""
    for layer in params[:-1]:
        x = jnp.tanh(x @ layer["w"] + layer["b"])
    last = params[-1]
    return x @ last["w"] + last["b"]


def loss_fn(params, x, y):
    return jnp.mean((mlp(params, x) - y) ** 2)


@jax.jit
def train_step(params, x, y, lr):
    """One SGD step; returns the new parameters and the loss before the step."""
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    new = jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads)
    return new, loss


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="pyjax demo: a tiny MLP learns sin(x)")
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--backend", default=None, help="cpu (default), wasm or webgpu when available")
    args = ap.parse_args(argv)
    if os.environ.get("PORT"):
        print(f"(PORT={os.environ['PORT']} is ignored: the browser playground is not part of this demo)")

    device = jax.devices(args.backend)[0] if args.backend else jax.devices()[0]
    with jax.default_device(device):
        x = jnp.linspace(-math.pi, math.pi, 64).reshape(64, 1)
        y = jnp.sin(x)
        params = init_params([1, 16, 16, 1])
        print(f"pyjax {jax.__version__} on {device}: fitting sin(x) with a 1-16-16-1 MLP")
        t0 = time.perf_counter()
        for step in range(args.steps + 1):
            params, loss = train_step(params, x, y, args.lr)
            if step % max(1, args.steps // 10) == 0:
                print(f"step {step:5d}  loss {float(loss):.6f}")
        dt = time.perf_counter() - t0
        pred = mlp(params, jnp.array([[0.5], [1.5]]))
        print(f"{args.steps + 1} jitted steps in {dt:.2f}s ({dt / (args.steps + 1) * 1e3:.2f} ms/step)")
        print(
            f"sin(0.5) = {math.sin(0.5):.4f}, model: {float(pred[0, 0]):.4f}; "
            f"sin(1.5) = {math.sin(1.5):.4f}, model: {float(pred[1, 0]):.4f}"
        )


if __name__ == "__main__":
    main()
