"""pyjax on the wasm backend (wasmtime) vs numpy vs jax-js 0.1.25 (wasm backend, Node), side by side.

Usage:  python bench/wasm.py [--reps 5] [--skip-jaxjs] [--only matmul,chain,...] [--procs 5]
Needs:  pip install wasmtime numpy; for jax-js: `cd bench && npm install` (Node 20; dev-only).

Workloads: f32 matmul 256/512/1024/2048 (jitted), the fused elementwise chain
tanh(x*1.5+0.5)*exp(-x*x)+sin(x) on 2^20 f32 (jitted: one kernel), row sum / row max / column sum
of 1024x1024, sort of 10^6 f32, cholesky of a 512x512 SPD matrix. Every call runs to completion
(block_until_ready); first call (compile) and a warm-up call are not timed; medians of --reps.

Two tables: wall-clock milliseconds, and this process's CPU milliseconds (time.process_time; for
jax-js process.cpuUsage). On a machine shared with other jobs CPU time is the steadier measure of
the work itself; numpy's matmul runs on all cores (its CPU time sums them). Ratios > 1 mean pyjax
is faster. No assertions: this is a report.

--procs N runs each side in N fresh processes, pyjax and jax-js taking turns (a process's own
speed varies: code placement, the first seconds' clock); the tables then give the median of the
per-process medians and, in brackets, their lowest and highest.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import pyjax  # noqa: E402
import pyjax.numpy as jnp  # noqa: E402


def rand(n: int, seed: int) -> np.ndarray:
    """Same LCG as the jax-js script: values in [-0.5, 0.5)."""
    s = np.uint64(seed)
    out = np.empty(n, np.float32)
    # vectorized LCG would change the sequence; a plain numpy RNG keeps setup fast instead
    rng = np.random.RandomState(int(s))
    out[:] = rng.uniform(-0.5, 0.5, n)
    return out


def timeit(fn, reps: int) -> dict:
    fn()  # compile
    fn()  # warm
    wall, cpu = [], []
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        wall.append((time.perf_counter() - t0) * 1e3)
        cpu.append((time.process_time() - c0) * 1e3)
    return {"wall": statistics.median(wall), "cpu": statistics.median(cpu)}


def workloads(only: set | None):
    def want(name):
        return only is None or any(o in name for o in only)

    items = []
    for n in (256, 512, 1024, 2048):
        if want(f"matmul {n}"):
            items.append((f"matmul {n}", ("matmul", n)))
    for name, key in (
        ("chain 2^20", ("chain",)),
        ("row sum 1024x1024", ("rowsum",)),
        ("row max 1024x1024", ("rowmax",)),
        ("col sum 1024x1024", ("colsum",)),
        ("sort 10^6", ("sort",)),
        ("cholesky 512", ("cholesky",)),
    ):
        if want(name):
            items.append((name, key))
    return items


def run_pyjax(items, reps) -> dict:
    out = {}
    dev = pyjax.devices("wasm")[0]
    with pyjax.default_device(dev):
        for name, key in items:
            kind = key[0]
            if kind == "matmul":
                n = key[1]
                a, b = jnp.asarray(rand(n * n, 1).reshape(n, n)), jnp.asarray(rand(n * n, 2).reshape(n, n))
                f = pyjax.jit(lambda x, y: x @ y)
                out[name] = timeit(lambda: f(a, b).block_until_ready(), min(reps, 3) if n >= 2048 else reps)
            elif kind == "chain":
                x = jnp.asarray(rand(1 << 20, 3))
                f = pyjax.jit(lambda v: jnp.tanh(v * 1.5 + 0.5) * jnp.exp(-v * v) + jnp.sin(v))
                out[name] = timeit(lambda: f(x).block_until_ready(), reps)
            elif kind in ("rowsum", "rowmax", "colsum"):
                x = jnp.asarray(rand(1 << 20, 5).reshape(1024, 1024))
                fn = {
                    "rowsum": lambda v: jnp.sum(v, axis=1),
                    "rowmax": lambda v: jnp.max(v, axis=1),
                    "colsum": lambda v: jnp.sum(v, axis=0),
                }[kind]
                f = pyjax.jit(fn)
                out[name] = timeit(lambda: f(x).block_until_ready(), reps)
            elif kind == "sort":
                x = jnp.asarray(rand(10**6, 4))
                f = pyjax.jit(jnp.sort)
                out[name] = timeit(lambda: f(x).block_until_ready(), reps)
            elif kind == "cholesky":
                m = rand(512 * 512, 6).reshape(512, 512)
                spd = jnp.asarray(m @ m.T / 512 + np.eye(512, dtype=np.float32))
                f = pyjax.jit(jnp.linalg.cholesky)
                out[name] = timeit(lambda: f(spd).block_until_ready(), reps)
    return out


def run_numpy(items, reps) -> dict:
    out = {}
    for name, key in items:
        kind = key[0]
        if kind == "matmul":
            n = key[1]
            a, b = rand(n * n, 1).reshape(n, n), rand(n * n, 2).reshape(n, n)
            out[name] = timeit(lambda: a @ b, reps)
        elif kind == "chain":
            x = rand(1 << 20, 3)
            out[name] = timeit(lambda: np.tanh(x * 1.5 + 0.5) * np.exp(-x * x) + np.sin(x), reps)
        elif kind in ("rowsum", "rowmax", "colsum"):
            x = rand(1 << 20, 5).reshape(1024, 1024)
            fn = {"rowsum": lambda: x.sum(1), "rowmax": lambda: x.max(1), "colsum": lambda: x.sum(0)}[kind]
            out[name] = timeit(fn, reps)
        elif kind == "sort":
            x = rand(10**6, 4)
            out[name] = timeit(lambda: np.sort(x), reps)
        elif kind == "cholesky":
            m = rand(512 * 512, 6).reshape(512, 512)
            spd = m @ m.T / 512 + np.eye(512, dtype=np.float32)
            out[name] = timeit(lambda: np.linalg.cholesky(spd), reps)
    return out


def run_jaxjs(reps, only: str | None = None) -> dict:
    script = os.path.join(ROOT, "bench", "wasm_jaxjs.mjs")
    if not os.path.isdir(os.path.join(ROOT, "bench", "node_modules", "@jax-js")):
        return {"error": "jax-js not installed: run `npm install` in bench/"}
    try:
        p = subprocess.run(
            ["node", script, str(reps), *([only] if only else [])],
            capture_output=True,
            text=True,
            timeout=1800,
            cwd=os.path.join(ROOT, "bench"),
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": f"node failed: {e}"}
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-500:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def table(items, results: dict, metric: str) -> str:
    names = ["pyjax wasm", "numpy", "jax-js wasm"]
    lines = [f"| workload | {' | '.join(names)} | jax-js / pyjax | numpy / pyjax |", "|" + " --- |" * 6]
    for name, _ in items:
        vals = [
            results[k].get(name, {}).get(metric) if isinstance(results[k].get(name), dict) else None
            for k in ("pyjax", "numpy", "jaxjs")
        ]
        cells = [f"{v:.2f}" if v is not None else "-" for v in vals]
        for i, k in enumerate(("pyjax", "numpy", "jaxjs")):  # --procs: [lowest-highest] process median
            spread = (
                results[k].get(name, {}).get(metric + "_spread") if isinstance(results[k].get(name), dict) else None
            )
            if spread:
                cells[i] += f" [{spread[0]:.2f}-{spread[1]:.2f}]"
        p = vals[0]
        r1 = f"{vals[2] / p:.2f}x" if p and vals[2] else "-"
        r2 = f"{vals[1] / p:.2f}x" if p and vals[1] else "-"
        lines.append(f"| {name} | {' | '.join(cells)} | {r1} | {r2} |")
    return "\n".join(lines)


def _across(runs: list) -> dict:
    """Per workload: the median of the processes' medians, and their [lowest, highest]."""
    errors = [r for r in runs if "error" in r]
    if errors or not runs:
        return errors[0] if errors else {}
    out = {}
    for name in runs[0]:
        out[name] = {}
        for metric in ("wall", "cpu"):
            vals = [r[name][metric] for r in runs]
            out[name][metric] = statistics.median(vals)
            out[name][metric + "_spread"] = (min(vals), max(vals))
    return out


def warm_up(seconds: float) -> None:
    """Keep the CPU busy with wasm matmuls for a while, so timings reflect the steady state."""
    with pyjax.default_device(pyjax.devices("wasm")[0]):
        a = jnp.asarray(rand(512 * 512, 9).reshape(512, 512))
        f = pyjax.jit(lambda x: x @ x)
        t_end = time.perf_counter() + seconds
        while time.perf_counter() < t_end:
            f(a).block_until_ready()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--skip-jaxjs", action="store_true")
    ap.add_argument("--only", default=None, help="comma-separated substrings of workload names")
    ap.add_argument(
        "--warmup",
        type=float,
        default=8.0,
        help="seconds of wasm work before timing (measured: the first seconds of a process run "
        "the same kernels up to 1.6x slower on some machines)",
    )
    ap.add_argument("--procs", type=int, default=1, help="fresh processes per side, taking turns (see above)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)  # one pyjax process: JSON out
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    items = workloads(only)
    if args.child:
        warm_up(args.warmup)
        print(json.dumps(run_pyjax(items, args.reps)))
        return
    if args.procs > 1:
        results = {"pyjax": [], "jaxjs": []}
        for _ in range(args.procs):
            cmd = [sys.executable, os.path.abspath(__file__), "--child", "--reps", str(args.reps)]
            cmd += ["--warmup", str(args.warmup)] + (["--only", args.only] if args.only else [])
            results["pyjax"].append(json.loads(subprocess.check_output(cmd, text=True).strip().splitlines()[-1]))
            if not args.skip_jaxjs:
                results["jaxjs"].append(run_jaxjs(args.reps, args.only))
        results = {k: _across(v) for k, v in results.items()}
        results["numpy"] = run_numpy(items, args.reps)
    else:
        warm_up(args.warmup)
        results = {"pyjax": run_pyjax(items, args.reps), "numpy": run_numpy(items, args.reps)}
        results["jaxjs"] = {} if args.skip_jaxjs else run_jaxjs(args.reps, args.only)
    if "error" in results["jaxjs"]:
        print("jax-js:", results["jaxjs"]["error"])
        results["jaxjs"] = {}
    if args.procs > 1:
        print(f"{args.procs} processes per side, taking turns")
    be = pyjax.devices("wasm")[0].backend
    print(
        f"pyjax wasm backend: host {type(be.host).__name__}, relaxed SIMD {be.relaxed_simd}; "
        f"load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs"
    )
    print("\nwall-clock ms (median)\n" + table(items, results, "wall"))
    print("\nprocess CPU ms (median)\n" + table(items, results, "cpu"))


if __name__ == "__main__":
    main()
