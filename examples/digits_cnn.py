"""A small CNN on the 8x8 digits with lax.conv

Sixteen 3x3 convolution filters (`lax.conv_general_dilated`, NHWC), average pooling
(`lax.reduce_window`) and a dense layer, trained with Adam on mini-batches of the shipped
scikit-learn digits; the learned filters and one digit's feature maps are drawn at the end.
"""

import os

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, serialization, show
from pyjax.example_libraries import optimizers

HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "examples"
data = serialization.load_file(os.path.join(HERE, "data", "digits.safetensors"))
images = (data["images"].astype(jnp.float32) / 16.0).reshape(-1, 8, 8, 1)  # NHWC
labels = data["labels"].astype(jnp.int32)
x_train, y_train, x_test, y_test = images[:1500], labels[:1500], images[1500:], labels[1500:]
BATCH = 250


def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def pool(x):  # 2x2 average pooling
    return lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0


def features(p, x):
    h = jax.nn.relu(conv(x, p["c1"]) + p["b1"])  # [n, 8, 8, 16]
    return h, pool(h).reshape(x.shape[0], -1)  # [n, 4 * 4 * 16]


def predict(p, x):
    return features(p, x)[1] @ p["w"] + p["b"]


keys = jax.random.split(jax.random.key(1), 2)
params = {
    "c1": jax.random.normal(keys[0], (3, 3, 1, 16)) * 0.4,
    "b1": jnp.zeros(16),
    "w": jax.random.normal(keys[1], (256, 10)) * 0.1,
    "b": jnp.zeros(10),
}
print("parameters:", sum(leaf.size for leaf in jax.tree_util.tree_leaves(params)))


def loss_fn(p, x, y):
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(predict(p, x)), y[:, None], axis=1))


opt_init, opt_update, get_params = optimizers.adam(0.01)


@jax.jit
def train_step(i, state, start):
    x = lax.dynamic_slice_in_dim(x_train, start, BATCH)  # slicing inside jit: one program for every batch
    y = lax.dynamic_slice_in_dim(y_train, start, BATCH)
    loss, grads = jax.value_and_grad(loss_fn)(get_params(state), x, y)
    return opt_update(i, grads, state), loss


@jax.jit
def accuracy(p, x, y):
    return jnp.mean(jnp.argmax(predict(p, x), axis=1) == y)


state, losses, pending = opt_init(params), [], []
for i in show.progress(range(120), desc="training"):
    state, loss = train_step(i, state, (i * BATCH) % 1500)
    pending.append(loss)  # stays on the device: reading each step back would wait for the GPU each step
    if i % 10 == 9:
        losses += jnp.stack(pending).tolist()  # ten losses in one read
        pending = []
        show.line(losses, title="CNN loss", label="mini-batch cross-entropy")
    if i % 20 == 19:
        acc = float(accuracy(get_params(state), x_test, y_test))
        print(f"step {i + 1:3d}  loss {losses[-1]:.4f}  test accuracy {acc:.3f}")

params = get_params(state)
print(f"final test accuracy {float(accuracy(params, x_test, y_test)):.3f}")
filters = jnp.pad(params["c1"][:, :, 0, :], ((0, 1), (0, 1), (0, 0)))  # [4, 4, 16]: 3x3 filters and a gap
show.heatmap(filters.reshape(4, 4, 2, 8).transpose(2, 0, 3, 1).reshape(8, 32), title="the 16 learned filters")
maps = features(params, x_test[:1])[0][0]  # [8, 8, 16]
maps = maps.reshape(8, 8, 2, 8).transpose(2, 0, 3, 1).reshape(16, 64)
show.image(maps / jnp.maximum(maps.max(), 1e-6), title=f"feature maps of a test digit {int(y_test[0])}")
