"""Inference with weights trained natively, shipped as safetensors

examples/data/digits_mlp.safetensors holds an MLP trained on the digits outside the page
(examples/data/build.py); `pyjax.serialization.load_file` reads it (pure Python, no numpy) and a jitted
forward pass classifies the 297 digits it never saw. `save` writes safetensors bytes back.
"""

import os

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import serialization, show

HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "examples"
params = serialization.load_file(os.path.join(HERE, "data", "digits_mlp.safetensors"))
for name, w in sorted(params.items()):
    print(f"{name}: {w.dtype} {w.shape}")

data = serialization.load_file(os.path.join(HERE, "data", "digits.safetensors"))
x = data["images"][1500:].astype(jnp.float32) / 16.0  # the digits the model was not trained on
y = data["labels"][1500:].astype(jnp.int32)


@jax.jit
def classify(p, x):
    probs = jax.nn.softmax(jax.nn.relu(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"])
    return jnp.argmax(probs, axis=1), probs


pred, probs = classify(params, x)
print(f"test accuracy {float(jnp.mean(pred == y)):.3f} on {y.size} digits")
print(f"mean confidence {float(probs.max(axis=1).mean()):.3f}")
wrong = jnp.nonzero(pred != y, size=8, fill_value=0)[0]
print("misclassified (true -> predicted):", [f"{int(y[i])}->{int(pred[i])}" for i in wrong.tolist()])
show.image(x[:40].reshape(4, 10, 8, 8).transpose(0, 2, 1, 3).reshape(32, 80), title="test digits")
show.heatmap(probs[:40], title="class probabilities of those digits (rows) for 0-9 (columns)")
show.image(x[wrong].reshape(1, 8, 8, 8).transpose(0, 2, 1, 3).reshape(8, 64), title="misclassified digits")

half = serialization.load(serialization.save({k: v.astype(jnp.float16) for k, v in params.items()}))
print("saved as float16 and reloaded:", {k: str(v.dtype) for k, v in sorted(half.items())})
half_pred, _ = classify({k: v.astype(jnp.float32) for k, v in half.items()}, x)
print(f"float16 weights agree with float32 on {int(jnp.sum(half_pred == pred))} of {y.size} digits")
