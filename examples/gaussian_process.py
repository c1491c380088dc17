"""Gaussian-process regression with uncertainty bands

Fit a GP with an RBF kernel to 20 noisy samples of sin(3x): the length scale, signal and noise levels are
learned by gradient ascent on the log marginal likelihood (Cholesky factor, triangular solves, `grad`),
and the posterior mean is drawn with a two-standard-deviation band.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import show
from pyjax.scipy.linalg import cho_solve, solve_triangular

kx, kn = jax.random.split(jax.random.key(3))
x = jnp.sort(jax.random.uniform(kx, (20,), minval=-2.0, maxval=2.0))
y = jnp.sin(3.0 * x) + 0.1 * jax.random.normal(kn, (20,))
grid = jnp.linspace(-2.5, 2.5, 101)


def rbf(a, b, log_length, log_signal):
    d = (a[:, None] - b[None, :]) / jnp.exp(log_length)
    return jnp.exp(2.0 * log_signal - 0.5 * d * d)


def log_marginal_likelihood(h):
    k = rbf(x, x, h["log_length"], h["log_signal"]) + (jnp.exp(2.0 * h["log_noise"]) + 1e-6) * jnp.eye(x.size)
    chol = jnp.linalg.cholesky(k)
    alpha = cho_solve((chol, True), y)
    return -0.5 * y @ alpha - jnp.sum(jnp.log(jnp.diag(chol))) - 0.5 * x.size * jnp.log(2.0 * jnp.pi)


def posterior(h):
    k = rbf(x, x, h["log_length"], h["log_signal"]) + (jnp.exp(2.0 * h["log_noise"]) + 1e-6) * jnp.eye(x.size)
    chol = jnp.linalg.cholesky(k)
    k_star = rbf(grid, x, h["log_length"], h["log_signal"])
    mean = k_star @ cho_solve((chol, True), y)
    v = solve_triangular(chol, k_star.T, lower=True)
    var = jnp.exp(2.0 * h["log_signal"]) - jnp.sum(v * v, axis=0)
    return mean, jnp.sqrt(jnp.maximum(var, 1e-12))


@jax.jit
def ascent_step(h):
    value, g = jax.value_and_grad(log_marginal_likelihood)(h)
    return jax.tree_util.tree_map(lambda p, d: p + 0.02 * d, h, g), value


h = {"log_length": jnp.array(0.0), "log_signal": jnp.array(0.0), "log_noise": jnp.array(-1.0)}
history = []
for i in range(150):
    h, value = ascent_step(h)
    history.append(float(value))
    show.line(history, title="log marginal likelihood", label="during gradient ascent")
    if i % 50 == 0 or i == 149:
        mean, std = posterior(h)
        show.band(grid, mean - 2 * std, mean + 2 * std, title="GP posterior", label="mean +- 2 std")
        show.line(mean, x=grid, title="GP posterior", label="posterior mean")
        show.scatter(x, y, title="GP posterior", label="data")
print(f"log marginal likelihood: {history[0]:.4f} -> {history[-1]:.4f}")
print(", ".join(f"{k[4:]} {float(jnp.exp(v)):.4f}" for k, v in sorted(h.items())))
mean, std = posterior(h)
print(f"at x = 0: mean {float(mean[50]):.4f} +- {float(2 * std[50]):.4f} (sin(0) = 0)")
print(f"at x = 2.5 (beyond the data): mean {float(mean[-1]):.4f} +- {float(2 * std[-1]):.4f}")
