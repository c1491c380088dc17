"""Build the gallery's data files (committed; rerun after changing this script): `python examples/data/build.py`.

- digits.safetensors: scikit-learn's 8x8 handwritten digits (1797 images, pixels 0-16) as uint8 `images`
  [1797, 64] and `labels` [1797], written with the `safetensors` package (the reference writer).
- zen.txt: the Zen of Python (from the standard library's `this` module), the char-transformer's corpus.
- digits_mlp.safetensors: an MLP trained natively with pyjax on the first 1500 digits and saved with
  pyjax.serialization; examples/pretrained_digits.py runs it for inference on the other 297.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = 1500  # images [0, TRAIN) train the models, the rest test them


def build_digits(path: str) -> None:
    import numpy as np
    from safetensors.numpy import save_file
    from sklearn.datasets import load_digits

    d = load_digits()
    images = d.data.astype(np.uint8)  # integers 0..16
    labels = d.target.astype(np.uint8)
    save_file({"images": images, "labels": labels}, path, metadata={"source": "sklearn.datasets.load_digits"})


def build_zen(path: str) -> None:
    with contextlib.redirect_stdout(io.StringIO()):  # importing `this` prints the Zen
        import this  # noqa: F401

    with open(path, "w") as f:
        f.write(codecs.decode(sys.modules["this"].s, "rot13") + "\n")


def build_pretrained(path: str, steps: int = 400) -> None:
    """Train a 64-32-10 MLP with Adam on the training digits (full batch) and save its weights."""
    import pyjax as jax
    import pyjax.numpy as jnp
    from pyjax import serialization
    from pyjax.example_libraries import optimizers

    data = serialization.load_file(os.path.join(HERE, "digits.safetensors"))
    x = data["images"][:TRAIN].astype(jnp.float32) / 16.0
    y = data["labels"][:TRAIN].astype(jnp.int32)
    k1, k2 = jax.random.split(jax.random.key(0))
    params = {
        "w1": jax.random.normal(k1, (64, 32)) * 0.2,
        "b1": jnp.zeros(32),
        "w2": jax.random.normal(k2, (32, 10)) * 0.2,
        "b2": jnp.zeros(10),
    }

    def loss(p):
        logits = jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(logits), y[:, None], axis=1))

    init, update, get_params = optimizers.adam(0.01)

    @jax.jit
    def step(i, state):
        value, grads = jax.value_and_grad(loss)(get_params(state))
        return update(i, grads, state), value

    state = init(params)
    for i in range(steps):
        state, value = step(i, state)
    print(f"digits_mlp: training loss {float(value):.4f} after {steps} Adam steps")
    serialization.save_file(get_params(state), path, metadata={"model": "mlp 64-32-10 relu", "train": f"0:{TRAIN}"})


if __name__ == "__main__":
    build_digits(os.path.join(HERE, "digits.safetensors"))
    build_zen(os.path.join(HERE, "zen.txt"))
    build_pretrained(os.path.join(HERE, "digits_mlp.safetensors"))
    for name in sorted(os.listdir(HERE)):
        print(f"{name}: {os.path.getsize(os.path.join(HERE, name))} bytes")
