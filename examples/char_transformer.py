"""A character-level transformer trained on the Zen of Python

A one-layer, two-head causal transformer (embeddings, attention, MLP, layer norms: 14.6k parameters)
learns to continue the Zen of Python (examples/data/zen.txt) one character at a time. Samples print as it
trains; the attention maps of both heads are drawn as heatmaps.
"""

import math
import os

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import show
from pyjax.example_libraries import optimizers

HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "examples"
with open(os.path.join(HERE, "data", "zen.txt")) as f:
    text = f.read()
chars = sorted(set(text))
ids = jnp.array([chars.index(c) for c in text], dtype=jnp.int32)
V, T, D, HEADS = len(chars), 24, 32, 2  # vocabulary, context, width, attention heads
print(f"{len(text)} characters, {V} distinct")


def init(key):
    k = jax.random.split(key, 6)
    scale = 1.0 / math.sqrt(D)
    return {
        "embed": jax.random.normal(k[0], (V, D)) * 0.3,
        "pos": jax.random.normal(k[1], (T, D)) * 0.1,
        "qkv": jax.random.normal(k[2], (D, 3 * D)) * scale,
        "proj": jax.random.normal(k[3], (D, D)) * scale,
        "mlp_in": jax.random.normal(k[4], (D, 4 * D)) * scale,
        "mlp_out": jax.random.normal(k[5], (4 * D, D)) * scale * 0.5,
        "ln1": jnp.ones(D),
        "ln2": jnp.ones(D),
        "ln3": jnp.ones(D),
    }


def layer_norm(x, gain):
    x = x - x.mean(-1, keepdims=True)
    return gain * x / jnp.sqrt((x * x).mean(-1, keepdims=True) + 1e-5)


def forward(p, tokens):
    """Logits [b, t, V] for b sequences of t <= T tokens, and the attention weights [b, HEADS, t, t]."""
    b, t = tokens.shape
    x = p["embed"][tokens] + p["pos"][:t]
    q, k, v = jnp.split(layer_norm(x, p["ln1"]) @ p["qkv"], 3, axis=-1)
    q, k, v = (a.reshape(b, t, HEADS, D // HEADS).transpose(0, 2, 1, 3) for a in (q, k, v))
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D // HEADS)
    causal = jnp.tril(jnp.ones((t, t), dtype=bool))
    attention = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    x = x + (attention @ v).transpose(0, 2, 1, 3).reshape(b, t, D) @ p["proj"]
    x = x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["mlp_in"]) @ p["mlp_out"]
    return layer_norm(x, p["ln3"]) @ p["embed"].T, attention


def loss_fn(p, windows):
    logp = jax.nn.log_softmax(forward(p, windows[:, :-1])[0])  # predict each next character
    return -jnp.mean(jnp.take_along_axis(logp, windows[:, 1:, None], axis=-1))


opt_init, opt_update, get_params = optimizers.adam(0.01)


@jax.jit
def train_step(i, state):
    starts = jax.random.randint(jax.random.fold_in(jax.random.key(1), i), (16,), 0, ids.size - T - 1)
    windows = jax.vmap(lambda s: jax.lax.dynamic_slice(ids, (s,), (T + 1,)))(starts)
    loss, grads = jax.value_and_grad(loss_fn)(get_params(state), windows)
    return opt_update(i, grads, state), loss


@jax.jit
def next_char(p, window):
    return jnp.argmax(forward(p, window[None])[0][0, -1])


def sample(p, prompt, n=60):
    """Greedy continuation of prompt (the last T characters are the context)."""
    out = [chars.index(c) for c in prompt]
    for _ in range(n):
        window = jnp.array((out[-T:] if len(out) >= T else [chars.index(" ")] * (T - len(out)) + out), jnp.int32)
        out.append(int(next_char(p, window)))
    return "".join(chars[i] for i in out)


params = init(jax.random.key(0))
print("parameters:", sum(leaf.size for leaf in jax.tree_util.tree_leaves(params)))
state, losses, pending = opt_init(params), [], []
for i in show.progress(range(240), desc="training"):
    state, loss = train_step(i, state)
    pending.append(loss)  # stays on the device: reading each step back would wait for the GPU each step
    if i % 10 == 9:
        losses += jnp.stack(pending).tolist()  # ten losses in one read
        pending = []
        show.line(losses, title="training loss (nats per character)", label="cross-entropy")
    if i % 80 == 79:
        print(f"step {i + 1}: loss {sum(losses[-20:]) / 20:.3f}")
        print(f"sample: {sample(get_params(state), 'Beautiful is ')!r}")

params = get_params(state)
window = "Simple is better than complex.\nC"[-T:]
attention = forward(params, jnp.array([[chars.index(c) for c in window]], jnp.int32))[1][0]
for h in range(HEADS):
    show.heatmap(attention[h], title=f"attention of head {h} (row: position, column: attended)")
print(
    "most attended offset per head on the last character:",
    [int(T - 1 - jnp.argmax(attention[h, -1])) for h in range(HEADS)],
)
