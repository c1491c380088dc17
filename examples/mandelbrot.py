"""Mandelbrot set, zooming in

Each frame iterates z -> z^2 + c on a 120x180 grid of points inside one jitted `lax.fori_loop`, counting
the steps before each point escapes, and draws the counts as an image; six frames zoom into the
seahorse valley at -0.7435 + 0.1314i.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, show

H, W, STEPS = 120, 180, 100


@jax.jit
def escape_counts(center_re, center_im, scale):
    re = center_re + scale * jnp.linspace(-1.5, 1.5, W)[None, :]
    im = center_im + scale * jnp.linspace(-1.0, 1.0, H)[:, None]
    c_re, c_im = jnp.broadcast_to(re, (H, W)), jnp.broadcast_to(im, (H, W))

    def body(i, state):
        z_re, z_im, count = state
        inside = z_re * z_re + z_im * z_im <= 4.0
        z_re, z_im = z_re * z_re - z_im * z_im + c_re, 2.0 * z_re * z_im + c_im
        return z_re, z_im, count + inside

    zero = jnp.zeros((H, W))
    return lax.fori_loop(0, STEPS, body, (zero, zero, jnp.zeros((H, W), jnp.int32)))[2]


for frame in range(6):
    scale = 1.2 * 0.4**frame
    counts = escape_counts(-0.7435, 0.1314, scale)
    inside = int(jnp.sum(counts == STEPS))
    print(f"frame {frame}: scale {scale:.4f}, {inside} of {H * W} points inside, mean count {float(counts.mean()):.2f}")
    show.image(jnp.sqrt(counts / STEPS), title="Mandelbrot set")
