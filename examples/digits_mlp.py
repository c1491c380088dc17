"""Digit classifier: an MLP trained on 8x8 handwritten digits

scikit-learn's 1797 digits (shipped as examples/data/digits.safetensors) train a 64-64-10 network with
Adam, full batch, one jitted step; the loss and the test accuracy update live, then a grid of test digits
shows the predictions.
"""

import os

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import serialization, show
from pyjax.example_libraries import optimizers

HERE = os.path.dirname(os.path.abspath(__file__)) if "__file__" in globals() else "examples"
data = serialization.load_file(os.path.join(HERE, "data", "digits.safetensors"))
images = data["images"].astype(jnp.float32) / 16.0  # [1797, 64], pixels in [0, 1]
labels = data["labels"].astype(jnp.int32)
x_train, y_train, x_test, y_test = images[:1500], labels[:1500], images[1500:], labels[1500:]
print(f"{x_train.shape[0]} training and {x_test.shape[0]} test digits of {x_train.shape[1]} pixels")

k1, k2 = jax.random.split(jax.random.key(42))
params = {
    "w1": jax.random.normal(k1, (64, 64)) * 0.125,
    "b1": jnp.zeros(64),
    "w2": jax.random.normal(k2, (64, 10)) * 0.125,
    "b2": jnp.zeros(10),
}


def predict(p, x):
    return jnp.tanh(x @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def loss_fn(p, x, y):
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(predict(p, x)), y[:, None], axis=1))


@jax.jit
def accuracy(p, x, y):
    return jnp.mean(jnp.argmax(predict(p, x), axis=1) == y)


opt_init, opt_update, get_params = optimizers.adam(0.01)


@jax.jit
def train_step(i, state):
    loss, grads = jax.value_and_grad(loss_fn)(get_params(state), x_train, y_train)
    return opt_update(i, grads, state), loss


state = opt_init(params)
losses, accs, pending = [], [], []
for i in show.progress(range(150), desc="training"):
    state, loss = train_step(i, state)
    pending.append(loss)  # stays on the device: reading each step back would wait for the GPU each step
    if i % 10 == 9:
        losses += jnp.stack(pending).tolist()  # ten losses in one read
        pending = []
        show.line(losses, title="loss", label="train cross-entropy")
        accs.append(float(accuracy(get_params(state), x_test, y_test)))
        show.line(accs, x=list(range(10, i + 2, 10)), title="test accuracy", label="test")
        print(f"step {i + 1:3d}  loss {losses[-1]:.4f}  test accuracy {accs[-1]:.3f}")

params = get_params(state)
pred = jnp.argmax(predict(params, x_test), axis=1)
print(f"train accuracy {float(accuracy(params, x_train, y_train)):.3f}, test accuracy {accs[-1]:.3f}")
print("first 16 test digits:", y_test[:16].tolist())
print("predicted:           ", pred[:16].tolist())
grid = x_test[:32].reshape(4, 8, 8, 8).transpose(0, 2, 1, 3).reshape(32, 64)
show.image(grid, title="test digits (4 x 8 grid)")
confusion = jnp.zeros((10, 10), jnp.int32).at[y_test, pred].add(1)
show.heatmap(confusion, title="confusion matrix (rows: true digit, columns: predicted)")
