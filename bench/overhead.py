"""Dispatch overhead of pyjax vs JAX on this machine: eager op, jitted call, import time.

    python bench/overhead.py [--backend cpu] [--number 2000] [--repeat 7]

Prints microseconds per call side by side with the ratio pyjax/JAX (lower is better for
pyjax). Tiny arrays make this a measure of Python-side overhead, not of kernels. Timings are
the best of `--repeat` rounds of `--number` calls each, with results awaited every call
(block_until_ready). No asserts: this is a report, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def best_per_call(fn: Callable[[], object], number: int, repeat: int) -> float:
    """Seconds per call: the best round of `number` calls (after a warm-up round)."""
    for _ in range(min(number, 50)):
        fn()
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - t0) / number)
    return min(rounds)


def import_time(module: str, runs: int, env: dict | None = None) -> float:
    """Median seconds to import `module` in a fresh interpreter (interpreter start excluded)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def bench_pyjax(backend: str, number: int, repeat: int) -> dict:
    import pyjax
    import pyjax.numpy as jnp

    with pyjax.default_device(pyjax.devices(backend)[0]):
        x = jnp.arange(4.0)
        f = pyjax.jit(lambda a: a * 2.0 + 1.0)
        g = pyjax.jit(lambda a, b: jnp.sum(jnp.tanh(a @ b)))
        w = jnp.ones((4, 4))
        return {
            "eager x + 1": best_per_call(lambda: (x + 1).block_until_ready(), number, repeat),
            "eager sum(sin(x) * x)": best_per_call(lambda: jnp.sum(jnp.sin(x) * x).block_until_ready(), number, repeat),
            "jit call a * 2 + 1": best_per_call(lambda: f(x).block_until_ready(), number, repeat),
            "jit call sum(tanh(a @ b))": best_per_call(lambda: g(w, w).block_until_ready(), number, repeat),
        }


def bench_jax(number: int, repeat: int) -> dict:
    import jax
    import jax.numpy as jnp

    cpu = jax.devices("cpu")[0]
    with jax.default_device(cpu):
        x = jnp.arange(4.0)
        f = jax.jit(lambda a: a * 2.0 + 1.0)
        g = jax.jit(lambda a, b: jnp.sum(jnp.tanh(a @ b)))
        w = jnp.ones((4, 4))
        return {
            "eager x + 1": best_per_call(lambda: (x + 1).block_until_ready(), number, repeat),
            "eager sum(sin(x) * x)": best_per_call(lambda: jnp.sum(jnp.sin(x) * x).block_until_ready(), number, repeat),
            "jit call a * 2 + 1": best_per_call(lambda: f(x).block_until_ready(), number, repeat),
            "jit call sum(tanh(a @ b))": best_per_call(lambda: g(w, w).block_until_ready(), number, repeat),
        }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", help="pyjax platform to measure (cpu, wasm, webgpu)")
    ap.add_argument("--number", type=int, default=2000, help="calls per timing round")
    ap.add_argument("--repeat", type=int, default=7, help="timing rounds (the best one counts)")
    ap.add_argument("--import-runs", type=int, default=5, help="fresh interpreters per import timing")
    args = ap.parse_args(argv)

    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    imports = {
        "import": (import_time("pyjax", args.import_runs, env), import_time("jax", args.import_runs, env)),
    }
    p = bench_pyjax(args.backend, args.number, args.repeat)
    j = bench_jax(args.number, args.repeat)

    import jax

    print(f"pyjax ({args.backend} backend) vs JAX {jax.__version__} (cpu); Python {sys.version.split()[0]}")
    print(f"{'measure':<28}{'pyjax':>12}{'JAX':>12}{'ratio':>9}")
    for name in p:
        print(f"{name:<28}{p[name] * 1e6:>10.1f}us{j[name] * 1e6:>10.1f}us{p[name] / j[name]:>8.2f}x")
    for name, (pt, jt) in imports.items():
        print(f"{name:<28}{pt * 1e3:>10.1f}ms{jt * 1e3:>10.1f}ms{pt / jt:>8.2f}x")


if __name__ == "__main__":
    main()
