"""Linear and logistic regression with a live loss curve

Fit a line to noisy points by gradient descent, then separate two clouds of points with logistic
regression; both training loops are one jitted step each, and the loss curves update as they train.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import show

kx, kn, ka, kb = jax.random.split(jax.random.key(0), 4)

# --- linear regression: y = 2x - 1 plus noise --------------------------------------------------
x = jax.random.uniform(kx, (100,), minval=-1.0, maxval=1.0)
y = 2.0 * x - 1.0 + 0.1 * jax.random.normal(kn, (100,))


def mse(params, x, y):
    w, b = params
    return jnp.mean((w * x + b - y) ** 2)


@jax.jit
def sgd_step(params, x, y):
    loss, grads = jax.value_and_grad(mse)(params, x, y)
    return [p - 0.3 * g for p, g in zip(params, grads)], loss


params = [jnp.array(0.0), jnp.array(0.0)]
losses = []
for _ in range(60):
    params, loss = sgd_step(params, x, y)
    losses.append(float(loss))
    show.line(losses, title="linear regression: loss", label="mse")
w, b = params
print(f"linear: w = {float(w):.4f}, b = {float(b):.4f}, final loss = {losses[-1]:.6f}")
show.scatter(x, y, title="linear regression: fit", label="data")
grid = jnp.linspace(-1.0, 1.0, 2)
show.line(w * grid + b, x=grid, title="linear regression: fit", label="w x + b")

# --- logistic regression: two Gaussian clouds in the plane -------------------------------------
n = 200
labels = jnp.arange(n) % 2  # 0, 1, 0, 1, ...
centers = jnp.where(labels[:, None] == 1, jnp.array([1.0, 1.0]), jnp.array([-1.0, -0.5]))
points = centers + 0.8 * jax.random.normal(ka, (n, 2))


def bce(params, pts, lbl):
    logits = pts @ params["w"] + params["b"]
    return jnp.mean(jax.nn.softplus(logits) - lbl * logits)  # binary cross-entropy from logits


@jax.jit
def logistic_step(params, pts, lbl):
    loss, grads = jax.value_and_grad(bce)(params, pts, lbl)
    return jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, grads), loss


params = {"w": jnp.zeros(2), "b": jnp.array(0.0)}
losses = []
for _ in range(100):
    params, loss = logistic_step(params, points, labels)
    losses.append(float(loss))
    show.line(losses, title="logistic regression: loss", label="cross-entropy")
accuracy = jnp.mean(((points @ params["w"] + params["b"]) > 0) == (labels == 1))
w0, w1 = params["w"].tolist()
print(f"logistic: w = ({w0:.4f}, {w1:.4f}), b = {float(params['b']):.4f}")
print(f"logistic: final loss = {losses[-1]:.6f}, accuracy = {float(accuracy):.3f}")
for c in (0, 1):
    show.scatter(
        points[labels == c, 0], points[labels == c, 1], title="logistic regression: classes", label=f"class {c}"
    )
