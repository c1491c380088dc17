"""Compiled control flow vs JAX CPU: a jitted fori_loop of many small steps, an odeint program
(a small MLP vector field over a long horizon, Lagrangian-NN-like) and a tiny jitted call.

    python bench/loops.py [--backend wasm] [--repeat 5] [--steps 10000] [--cpu-time] [--only NAME]

Each row prints pyjax, JAX (cpu) and the ratio, medians over `--repeat` interleaved rounds
(pyjax and JAX alternate so a busy machine slows both alike; `--cpu-time` counts process CPU
time instead of wall time). PYJAX_PLANS=0 runs the same rows step by step (loops on the host),
for a before/after. A report, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def workloads(lib, steps: int) -> dict:
    """name -> (fn, args) for one library (pyjax or jax): the same programs in both."""
    jnp, lax = lib.numpy, lib.lax
    from importlib import import_module

    odeint = import_module(lib.__name__ + ".experimental.ode").odeint

    @lib.jit
    def fori(x):
        return lax.fori_loop(0, steps, lambda i, c: c * 0.999 + 0.001 * jnp.sin(c), x)

    k = jnp.arange(64.0, dtype=jnp.float32).reshape(8, 8) / 64.0
    w1, w2 = jnp.sin(k) * 0.5, jnp.cos(k) * 0.5

    def field(y, t, w1, w2):  # a 2-layer tanh MLP vector field, as in a Lagrangian NN
        return jnp.tanh(y @ w1) @ w2 - 0.1 * y

    @lib.jit
    def ode(y0):
        ts = jnp.linspace(0.0, 20.0, 200)
        return odeint(field, y0, ts, w1, w2, rtol=1e-5, atol=1e-5)[-1]

    @lib.jit
    def tiny(x):
        return x * 2.0 + 1.0

    x8 = jnp.ones((8,), jnp.float32) * 0.5
    return {"fori_loop 10k": (fori, (x8,)), "odeint MLP": (ode, (x8,)), "tiny jit": (tiny, (x8,))}


CLOCK = time.perf_counter


def run_once(fn, args, number: int) -> float:
    t0 = CLOCK()
    for _ in range(number):
        out = fn(*args)
    out.block_until_ready()
    return (CLOCK() - t0) / number


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="wasm")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--steps", type=int, default=10000)
    ap.add_argument("--only", default="")
    ap.add_argument("--cpu-time", action="store_true")
    args = ap.parse_args()
    if args.cpu_time:
        global CLOCK
        CLOCK = time.process_time
    import jax
    import numpy as np

    import pyjax

    pyjax.config.update("jax_platforms", args.backend)
    jax.config.update("jax_platforms", "cpu")
    mine, ref = workloads(pyjax, args.steps), workloads(jax, args.steps)
    for name in mine:
        if args.only and args.only not in name:
            continue
        (fp, ap_), (fj, aj) = mine[name], ref[name]
        np.testing.assert_allclose(np.asarray(fp(*ap_)), np.asarray(fj(*aj)), rtol=2e-3, atol=2e-3)
        number = 200 if name == "tiny jit" else 1
        tp, tj = [], []
        run_once(fp, ap_, number), run_once(fj, aj, number)
        for _ in range(args.repeat):
            tp.append(run_once(fp, ap_, number))
            tj.append(run_once(fj, aj, number))
        mp, mj = statistics.median(tp), statistics.median(tj)
        spread = f"{min(tp) * 1e3:.3f}-{max(tp) * 1e3:.3f}"
        print(
            f"{name:16s} pyjax {mp * 1e3:9.3f} ms [{spread}]  jax {mj * 1e3:8.3f} ms  ratio {mp / mj:8.1f}x", flush=True
        )


if __name__ == "__main__":
    main()
