"""`make bench`: pyjax's native rows next to their references in one run, and the README's table.

    python bench/run.py [--rounds 7] [--only fori,ode] [--no-readme] [--skip-jaxjs]

Each workload runs on pyjax's wasm backend (wasmtime, one thread) and on its references: JAX on
CPU (same process; XLA uses every core) and jax-js 0.1.25 on its wasm backend in Node (one
thread; needs `cd bench && npm install`). pyjax, JAX and jax-js take turns in rounds of the same number
of calls, who goes first alternating, so a busy machine slows both alike; times are medians of
the rounds, the ratio is the median over rounds of reference time / pyjax time (> 1: pyjax is
faster) with its range. jax-js runs in one Node process that takes its turns in the same rounds
on request. Every call runs to completion
(block_until_ready). The table replaces the one between the README's `bench:begin`/`bench:end`
markers, with the date and the machine. No assertions: this is a report.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
README = os.path.join(ROOT, "README.md")
BEGIN, END = "<!-- bench:begin (make bench writes this part) -->", "<!-- bench:end -->"


def rand(shape: tuple, seed: int) -> np.ndarray:
    """Uniform f32 in [-0.5, 0.5), the same for every library."""
    return np.random.RandomState(seed).uniform(-0.5, 0.5, shape).astype(np.float32)


def fori_small(lib, np_):
    """10k steps of a 16-element update in one jitted fori_loop: loop overhead, not arithmetic."""
    f = lib.jit(lambda x: lib.lax.fori_loop(0, 10_000, lambda i, c: c * 0.999 + np_.sin(c) * 0.001, x))
    x = np_.asarray(rand((16,), 0))
    return lambda: f(x).block_until_ready()


def ode_mlp(lib, np_):
    """odeint of a small MLP vector field (4-32-4, tanh) over t in [0, 50]: an adaptive solver's
    while loop of many small steps."""
    odeint = __import__(f"{lib.__name__}.experimental.ode", fromlist=["odeint"]).odeint
    w1, w2 = np_.asarray(rand((4, 32), 1)), np_.asarray(rand((32, 4), 2))

    def field(y, t, w1, w2):
        return np_.tanh(y @ w1) @ w2 - 0.1 * y

    f = lib.jit(lambda y0, w1, w2: odeint(field, y0, np_.linspace(0.0, 50.0, 11), w1, w2))
    y0 = np_.full((4,), 0.5, np.float32)
    return lambda: f(y0, w1, w2).block_until_ready()


def mlp_sgd_step(lib, np_) -> Callable:
    """The jitted SGD step (lr 0.1) of a relu MLP [w1, b1, w2, b2] with softmax cross-entropy on
    a batch of 128: step(params, x, onehot) -> (params, loss); bench/webgpu.py times it too."""

    def loss(p, xb, yb):
        h = np_.maximum(xb @ p[0] + p[1], 0.0)
        return -np_.sum(lib.nn.log_softmax(h @ p[2] + p[3]) * yb) / 128

    @lib.jit
    def step(p, xb, yb):
        val, g = lib.value_and_grad(loss)(p, xb, yb)
        return [pi - 0.1 * gi for pi, gi in zip(p, g, strict=True)], val

    return step


def mlp_step(lib, np_):
    """SGD step of a 784-256-10 relu MLP on a batch of 128 (softmax cross-entropy), jitted; one
    call is 10 steps, the last loss awaited (the table divides by 10)."""
    x, y = np_.asarray(rand((128, 784), 5)), np_.asarray(np.eye(10, dtype=np.float32)[np.arange(128) % 10])
    params = [np_.asarray(rand((784, 256), 6) * 0.1), np_.zeros(256), np_.asarray(rand((256, 10), 7) * 0.1)]
    params.append(np_.zeros(10))
    step = mlp_sgd_step(lib, np_)
    state = [params]

    def run():
        for _ in range(10):
            state[0], val = step(state[0], x, y)
        val.block_until_ready()

    return run


def jitted(fn: Callable, *arrays: np.ndarray) -> Callable:
    """Builder of a jitted call of fn(np_) on the given host arrays."""

    def build(lib, np_):
        f = lib.jit(fn(np_))
        args = [np_.asarray(a) for a in arrays]
        return lambda: f(*args).block_until_ready()

    return build


def eager_add(lib, np_):
    x = np_.arange(4.0)
    return lambda: (x + 1).block_until_ready()


# name -> (builder(lib, numpy module) -> call, per-call divisor, references, jax-js workload name).
WORKLOADS = {
    "jitted `fori_loop`, 10k steps on 16 f32": (fori_small, 1, ("JAX CPU",), None),
    "`odeint`, MLP vector field, t in [0, 50]": (ode_mlp, 1, ("JAX CPU",), None),
    "MLP train step (128, 784-256-10), jit": (mlp_step, 10, ("JAX CPU", "jax-js"), "mlp step"),
    "column sum f32 2048²": (
        jitted(lambda np_: lambda v: np_.sum(v, axis=0), rand((2048, 2048), 8)),
        1,
        ("JAX CPU", "jax-js"),
        "col sum 2048x2048",
    ),
    "full sum f32 2048²": (
        jitted(lambda np_: lambda v: np_.sum(v), rand((2048, 2048), 8)),
        1,
        ("JAX CPU", "jax-js"),
        "full sum 2048x2048",
    ),
    "matmul f32 1024², jit": (
        jitted(lambda np_: lambda a, b: a @ b, rand((1024, 1024), 1), rand((1024, 1024), 2)),
        1,
        ("jax-js", "JAX CPU"),
        "matmul 1024",
    ),
    "elementwise chain 2^20 f32, jit": (
        jitted(
            lambda np_: lambda v: np_.tanh(v * 1.5 + 0.5) * np_.exp(-v * v) + np_.sin(v),
            rand((1 << 20,), 3),
        ),
        1,
        ("jax-js", "JAX CPU"),
        "chain 2^20",
    ),
    "jitted call `a * 2 + 1`, 4 f32": (
        jitted(lambda np_: lambda a: a * 2.0 + 1.0, rand((4,), 4)),
        1,
        ("JAX CPU",),
        None,
    ),
    "eager `x + 1`, 4 f32": (eager_add, 1, ("JAX CPU",), None),
}


def local_timer(fn: Callable) -> Callable[[int], float]:
    """Seconds per call over n calls of fn in this process."""

    def timer(n: int) -> float:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        return (time.perf_counter() - t) / n

    return timer


class JaxJs:
    """jax-js in one Node process (bench/wasm_jaxjs.mjs --serve) that runs n calls of a workload
    on request, so that its rounds take turns with pyjax's."""

    def __init__(self) -> None:
        script = os.path.join(ROOT, "bench", "wasm_jaxjs.mjs")
        self.proc = subprocess.Popen(
            ["node", script, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
        )

    def timer(self, name: str) -> Callable[[int], float]:
        def run(n: int) -> float:
            self.proc.stdin.write(json.dumps({"name": name, "n": n}) + "\n")
            self.proc.stdin.flush()
            return sum(json.loads(self.proc.stdout.readline())["ms"]) * 1e-3 / n

        return run

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)

    @staticmethod
    def available() -> bool:
        return os.path.isdir(os.path.join(ROOT, "bench", "node_modules", "@jax-js"))


def rounds_of(timers: list, rounds: int, target_s: float, warm_s: float = 1.5) -> list:
    """Per timer, seconds per call in each of `rounds` rounds of about target_s (at least one
    call), the timers taking turns, who goes first alternating; after a warm-up of at least 2
    calls and warm_s seconds each (V8 and wasmtime tier up, caches fill)."""
    counts = []
    for timer in timers:
        k, t = 0, time.perf_counter()
        while k < 2 or (time.perf_counter() - t < warm_s and k < 2000):
            timer(1)
            k += 1
        counts.append(max(1, int(target_s * k / (time.perf_counter() - t))))
    out = [[] for _ in timers]
    for r in range(rounds):
        for i in list(range(len(timers)))[:: 1 if r % 2 == 0 else -1]:
            out[i].append(timers[i](counts[i]))
    return out


def fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"
    return f"{s * 1e6:.3g} µs"


def fmt_ratio(ratios: list) -> str:
    """Median ratio with its range; below 0.5 also how many times slower pyjax is."""
    med = statistics.median(ratios)
    text = f"{med:.2g}× [{min(ratios):.2g}–{max(ratios):.2g}]"
    return text + (f" (pyjax {1 / med:,.0f}× slower)" if med < 0.5 else "")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(line.split(":", 1)[1].strip() for line in fh if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    import jax

    try:  # a machine without Node still gets its table (the jax-js column is then absent)
        node = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip() or "no node"
    except OSError:
        node = "no node"
    return (
        f"{cpu}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; Python {platform.python_version()}, "
        f"wasmtime {importlib.metadata.version('wasmtime')}, JAX {jax.__version__}, "
        f"Node {node}"
    )


def write_readme(text: str) -> None:
    with open(README) as fh:
        doc = fh.read()
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"README.md has no {BEGIN} ... {END} markers")
    new = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: f"{BEGIN}\n{text}\n{END}", doc, flags=re.S)
    with open(README, "w") as fh:
        fh.write(new)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--round-s", type=float, default=0.3, help="seconds of pyjax calls per round (about)")
    ap.add_argument("--only", default="", help="comma-separated substrings of workload names")
    ap.add_argument("--skip-jaxjs", action="store_true")
    ap.add_argument("--no-readme", action="store_true", help="print the table, leave README.md alone")
    args = ap.parse_args(argv)
    only = [o for o in args.only.split(",") if o]
    chosen = {k: v for k, v in WORKLOADS.items() if not only or any(o in k for o in only)}

    import jax
    import jax.numpy as jnp

    import pyjax
    import pyjax.numpy as pjnp

    jax.config.update("jax_platforms", "cpu")
    pyjax.config.update("jax_platforms", "wasm")
    jaxjs = JaxJs() if JaxJs.available() and not args.skip_jaxjs else None
    started = time.perf_counter()
    lines = [
        "| workload | pyjax wasm | reference | reference time | ratio [range] |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, (build, div, refs, js_name) in chosen.items():
        timers = {"pyjax": local_timer(build(pyjax, pjnp)), "JAX CPU": local_timer(build(jax, jnp))}
        if jaxjs and js_name:
            timers["jax-js"] = jaxjs.timer(js_name)
        times = dict(zip(timers, rounds_of(list(timers.values()), args.rounds, args.round_s), strict=True))
        times = {k: [t / div for t in v] for k, v in times.items()}
        tp = times["pyjax"]
        print(name + ": " + ", ".join(f"{k} {fmt_time(statistics.median(v))}" for k, v in times.items()), flush=True)
        for ref in refs:
            if ref in times:
                ratios = [r / q for r, q in zip(times[ref], tp, strict=True)]
                ref_t = fmt_time(statistics.median(times[ref]))
                lines.append(f"| {name} | {fmt_time(statistics.median(tp))} | {ref} | {ref_t} | {fmt_ratio(ratios)} |")
    if jaxjs:
        jaxjs.close()
    elapsed = time.perf_counter() - started
    head = (
        f"Generated by `make bench` ({os.path.basename(__file__)}, {elapsed / 60:.1f} min) on "
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; {machine()}. "
        f"Wall time per call, medians of {args.rounds} rounds; ratio = reference / pyjax (> 1: pyjax faster)."
    )
    text = head + "\n\n" + "\n".join(lines)
    print("\n" + text)
    if not args.no_readme and not only:
        write_readme(text)
        print("README.md updated")


if __name__ == "__main__":
    main()
