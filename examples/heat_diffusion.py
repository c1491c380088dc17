"""Heat diffusion on a plate

An explicit finite-difference solver for the heat equation on a 64x64 plate whose edges are held at 0:
a hot square and a hot ring spread and fade; each frame runs 40 jitted steps under `lax.fori_loop` and
redraws the temperature as a heatmap.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, show

N, ALPHA = 64, 0.2  # grid size; diffusion number alpha = k dt / dx^2 (stable below 0.25)

ii, jj = jnp.meshgrid(jnp.arange(N), jnp.arange(N), indexing="ij")
square = (ii >= 12) & (ii < 24) & (jj >= 12) & (jj < 24)
radius = jnp.sqrt((ii - 40.0) ** 2 + (jj - 38.0) ** 2)
ring = (radius > 8) & (radius < 12)
temperature = jnp.where(square, 100.0, 0.0) + jnp.where(ring, 50.0, 0.0)


def step(t):
    """One explicit Euler step: t += alpha * laplacian(t) inside, edges stay at 0."""
    lap = t[:-2, 1:-1] + t[2:, 1:-1] + t[1:-1, :-2] + t[1:-1, 2:] - 4.0 * t[1:-1, 1:-1]
    return jnp.pad(t[1:-1, 1:-1] + ALPHA * lap, 1)


@jax.jit
def advance(t):
    return lax.fori_loop(0, 40, lambda i, t: step(t), t)


print(f"frame  0: total heat {float(temperature.sum()):.1f}, max {float(temperature.max()):.3f}")
show.heatmap(temperature, title="temperature")
totals = [float(temperature.sum())]
for frame in range(1, 16):
    temperature = advance(temperature)
    totals.append(float(temperature.sum()))
    show.heatmap(temperature, title="temperature")
    show.line(totals, title="total heat (leaks out through the cold edges)", label="sum of temperatures")
    if frame % 5 == 0:
        print(f"frame {frame:2d}: total heat {totals[-1]:.1f}, max {float(temperature.max()):.3f}")
center = temperature[18, 18], temperature[40, 38], temperature[40, 48]
print("temperature at the square's center, the ring's center and on the ring:", [round(float(c), 3) for c in center])
