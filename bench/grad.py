"""Reverse-mode cost: grad/hessian of small workloads, eager and under jit, on one backend.

    python bench/grad.py [--backend cpu] [--repeat 7] [--cpu-time]

Prints milliseconds per call (best of `--repeat` rounds, results awaited each call). Run it
on two trees (e.g. before/after a change to pyjax/interpreters/ad.py) to compare; the machine's
speed drifts, so compare runs made close in time. No asserts: this is a report, not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def workloads() -> dict:
    import pyjax as jax
    import pyjax.numpy as jnp
    from pyjax.experimental.ode import odeint

    k = jax.random.PRNGKey(0)
    ws = [
        jax.random.normal(jax.random.fold_in(k, i), s) * 0.1 for i, s in enumerate([(64, 128), (128, 128), (128, 10)])
    ]
    xb = jax.random.normal(k, (32, 64))
    yb = jax.nn.one_hot(jnp.arange(32) % 10, 10)

    def mlp_loss(ws, x, y):
        for w in ws[:-1]:
            x = jnp.tanh(x @ w)
        return -jnp.mean(jnp.sum(jax.nn.log_softmax(x @ ws[-1]) * y, -1))

    big = jnp.linspace(-2.0, 2.0, 100_000)

    def scan_loss(w):
        def step(c, _):
            c = jnp.sin(c * w) + 0.1 * c
            return c, c

        _, ys = jax.lax.scan(step, jnp.ones(16), None, length=50)
        return jnp.sum(ys**2)

    def ode_loss(w):
        ys = odeint(lambda y, t, w: -w * y + jnp.sin(t), jnp.ones(4), jnp.linspace(0.0, 1.0, 5), w)
        return jnp.sum(ys)

    def small(x):
        return jnp.sum(jnp.sin(x) * jnp.exp(x) ** 2 + jnp.tanh(x[::-1]))

    g_mlp = jax.grad(mlp_loss)
    j_mlp = jax.jit(g_mlp)
    return {
        "grad mlp eager": lambda: g_mlp(ws, xb, yb),
        "grad mlp jit": lambda: j_mlp(ws, xb, yb),
        "grad sum(tanh(x)**2) 1e5": lambda: jax.grad(lambda x: jnp.sum(jnp.tanh(x) ** 2))(big),
        "grad scan(50)": lambda: jax.grad(scan_loss)(jnp.full(16, 0.5)),
        "grad odeint": lambda: jax.grad(ode_loss)(0.7),
        "hessian small(8)": lambda: jax.hessian(small)(jnp.linspace(0.0, 1.0, 8)),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--cpu-time", action="store_true")
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    import pyjax as jax

    jax.config.update("jax_platforms", args.backend)
    clock = time.process_time if args.cpu_time else time.perf_counter
    for name, fn in workloads().items():
        if args.only and args.only not in name:
            continue
        jax.block_until_ready(fn())  # warm up (compiles, caches)
        best = float("inf")
        for _ in range(args.repeat):
            t0 = clock()
            jax.block_until_ready(fn())
            best = min(best, clock() - t0)
        print(f"{name:28s} {best * 1e3:9.2f} ms", flush=True)


if __name__ == "__main__":
    main()
