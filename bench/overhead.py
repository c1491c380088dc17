"""Dispatch overhead of pyjax vs JAX on this machine: eager op, jitted call, import time.

    python bench/overhead.py [--backend cpu] [--number 2000] [--repeat 7] [--cpu-time]

Prints microseconds per call side by side with the ratio pyjax/JAX (lower is better for
pyjax). Tiny arrays make this a measure of Python-side overhead, not of kernels. Timings are
the best of `--repeat` rounds of `--number` calls each, with results awaited every call
(block_until_ready); rounds alternate between pyjax and JAX so a busy machine slows both
alike, and `--cpu-time` counts process CPU time instead of wall time. `import` is the median
over fresh interpreters. No asserts: this is a report, not a test.
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


CLOCK = time.perf_counter  # --cpu-time switches to time.process_time (robust on a busy machine)


def time_round(fn: Callable[[], object], number: int) -> float:
    """Seconds per call over one round of `number` calls."""
    t0 = CLOCK()
    for _ in range(number):
        fn()
    return (CLOCK() - t0) / number


def best_interleaved(pairs: dict, number: int, repeat: int) -> dict:
    """Best round per (pyjax, JAX) callable; rounds alternate between the two libraries so that
    a busy machine slows both alike."""
    for fp, fj in pairs.values():  # warm-up: trace, compile, caches
        for _ in range(min(number, 50)):
            fp()
            fj()
    best = {name: [float("inf"), float("inf")] for name in pairs}
    for _ in range(repeat):
        for name, (fp, fj) in pairs.items():
            best[name][0] = min(best[name][0], time_round(fp, number))
            best[name][1] = min(best[name][1], time_round(fj, number))
    return best


def import_time(module: str, runs: int, env: dict | None = None) -> float:
    """Median seconds to import `module` in a fresh interpreter (interpreter start excluded)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    times = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def workloads(backend: str) -> dict:
    """name -> (pyjax callable, JAX callable), each awaiting its result."""
    import jax
    import jax.numpy as jnp

    import pyjax
    import pyjax.numpy as pjnp

    pyjax.config.update("jax_platforms", backend)
    jax.config.update("jax_platforms", "cpu")
    out = {}
    for lib, np_ in ((pyjax, pjnp), (jax, jnp)):
        x = np_.arange(4.0)
        w = np_.ones((4, 4))
        f = lib.jit(lambda a: a * 2.0 + 1.0)
        g = lib.jit(lambda a, b, np_=np_: np_.sum(np_.tanh(a @ b)))
        calls = {
            "eager x + 1": lambda x=x: (x + 1).block_until_ready(),
            "eager sum(sin(x) * x)": lambda x=x, np_=np_: np_.sum(np_.sin(x) * x).block_until_ready(),
            "jit call a * 2 + 1": lambda f=f, x=x: f(x).block_until_ready(),
            "jit call sum(tanh(a @ b))": lambda g=g, w=w: g(w, w).block_until_ready(),
        }
        for name, fn in calls.items():
            out.setdefault(name, []).append(fn)
    return {name: tuple(fns) for name, fns in out.items()}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", help="pyjax platform to measure (cpu, wasm, webgpu)")
    ap.add_argument("--number", type=int, default=2000, help="calls per timing round")
    ap.add_argument("--repeat", type=int, default=7, help="timing rounds (the best one counts)")
    ap.add_argument("--import-runs", type=int, default=5, help="fresh interpreters per import timing")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with process CPU time instead of wall time (other processes' load does not count)",
    )
    args = ap.parse_args(argv)
    global CLOCK
    if args.cpu_time:
        CLOCK = time.process_time

    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    imports = {
        "import": (import_time("pyjax", args.import_runs, env), import_time("jax", args.import_runs, env)),
    }
    best = best_interleaved(workloads(args.backend), args.number, args.repeat)

    import jax

    print(
        f"pyjax ({args.backend} backend) vs JAX {jax.__version__} (cpu); Python {sys.version.split()[0]}; "
        f"{os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}; "
        f"{'process CPU' if args.cpu_time else 'wall'} time per call, best of {args.repeat} rounds"
    )
    print(f"{'measure':<28}{'pyjax':>12}{'JAX':>12}{'ratio':>9}")
    for name, (p, j) in best.items():
        print(f"{name:<28}{p * 1e6:>10.1f}us{j * 1e6:>10.1f}us{p / j:>8.2f}x")
    for name, (pt, jt) in imports.items():
        print(f"{name:<28}{pt * 1e3:>10.1f}ms{jt * 1e3:>10.1f}ms{pt / jt:>8.2f}x")


if __name__ == "__main__":
    main()
