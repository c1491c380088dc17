"""Random samplers with histograms

`jax.random` draws from a counter-based PRNG (threefry): a key is split, never reused, and the same key
gives the same numbers on every device. Eight samplers, each with a histogram and its sample mean and
variance next to the exact values.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import show

N = 20000
keys = jax.random.split(jax.random.key(2024), 8)
samplers = [  # name, samples, exact mean, exact variance
    ("uniform(-1, 1)", jax.random.uniform(keys[0], (N,), minval=-1.0, maxval=1.0), 0.0, 1 / 3),
    ("normal", jax.random.normal(keys[1], (N,)), 0.0, 1.0),
    ("exponential", jax.random.exponential(keys[2], (N,)), 1.0, 1.0),
    ("gamma(3)", jax.random.gamma(keys[3], 3.0, (N,)), 3.0, 3.0),
    ("beta(2, 5)", jax.random.beta(keys[4], 2.0, 5.0, (N,)), 2 / 7, 10 / (49 * 8)),
    ("laplace", jax.random.laplace(keys[5], (N,)), 0.0, 2.0),
    ("poisson(4)", jax.random.poisson(keys[6], 4.0, (N,)).astype(jnp.float32), 4.0, 4.0),
    (
        "categorical(0.5, 0.3, 0.2)",
        jax.random.categorical(keys[7], jnp.log(jnp.array([0.5, 0.3, 0.2])), shape=(N,)).astype(jnp.float32),
        0.7,
        0.61,
    ),
]
for name, x, mean, var in samplers:
    print(
        f"{name:>27}: mean {float(x.mean()):+.4f} (exact {mean:+.4f}), variance {float(x.var()):.4f} (exact {var:.4f})"
    )
    show.hist(x, bins=40, title=name)

# The same key always gives the same numbers; split keys give independent streams.
key = jax.random.key(0)
k1, k2 = jax.random.split(key)
print("normal(key) twice equal:", bool(jnp.all(jax.random.normal(key, (3,)) == jax.random.normal(key, (3,)))))
print("first draws of two split keys:", [round(float(jax.random.uniform(k, ())), 6) for k in (k1, k2)])
print("raw key data:", jax.random.key_data(key).tolist())
