"""pyjax side of the side-by-side benchmark (site/bench.html, driven by bench/browser.py), run inside
Pyodide: the same workloads as browser_jaxjs.mjs.

The page defines DEVICE before running this file. It leaves WORKLOADS: name -> async function
running one call to completion (the MLP's call is 10 steps), and `timed(name, n)`, the median
ms of n calls, so that the page can alternate them with jax-js's.
"""

import functools
import time

import pyjax
import pyjax.numpy as jnp
from pyjax.backends.base import Backend
from pyjax.experimental.ode import odeint

await pyjax.init_async(DEVICE)  # noqa: F704, F821  (top-level await under runPythonAsync)


def rand(n, seed):
    s = seed & 0xFFFFFFFF
    out = []
    for _ in range(n):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        out.append(s / 4294967296 - 0.5)
    return out


def rand_array(shape, seed):
    # Build on the device from a small seed vector so the benchmark does not time Python lists.
    n = 1
    for d in shape:
        n *= d
    base = jnp.asarray(rand(min(n, 4096), seed), dtype=jnp.float32)
    reps = -(-n // base.shape[0])
    return jnp.tile(base, reps)[:n].reshape(shape) * 1.0


a, b = rand_array((1024, 1024), 1), rand_array((1024, 1024), 2)
mm = pyjax.jit(lambda x, y: x @ y)
x = rand_array((1 << 20,), 3)
chain = pyjax.jit(lambda v: jnp.tanh(v * 1.5 + 0.5) * jnp.exp(-v * v) + jnp.sin(v))
row_sum = pyjax.jit(lambda m: jnp.sum(m * m, axis=1))
s = rand_array((1000000,), 4)
X = rand_array((128, 784), 5)
Y = jnp.eye(10)[jnp.arange(128) % 10]
params = [rand_array((784, 256), 6) * 0.1, jnp.zeros(256), rand_array((256, 10), 7) * 0.1, jnp.zeros(10)]


def loss(p, xb, yb):
    h = jnp.maximum(xb @ p[0] + p[1], 0.0)
    logits = h @ p[2] + p[3]
    return -jnp.sum(pyjax.nn.log_softmax(logits) * yb) / 128


@pyjax.jit
def step(p, xb, yb):
    l, g = pyjax.value_and_grad(loss)(p, xb, yb)
    return [pi - 0.1 * gi for pi, gi in zip(p, g)], l


# bench/run.py's loop rows: 10k small steps of a jitted fori_loop; odeint of a small MLP field
fori = pyjax.jit(lambda v: pyjax.lax.fori_loop(0, 10_000, lambda i, c: c * 0.999 + jnp.sin(c) * 0.001, v))
x16 = rand_array((16,), 0)
w1, w2 = rand_array((4, 32), 1), rand_array((32, 4), 2)


def field(y, t, w1, w2):
    return jnp.tanh(y @ w1) @ w2 - 0.1 * y


ode = pyjax.jit(lambda y0, w1, w2: odeint(field, y0, jnp.linspace(0.0, 50.0, 11), w1, w2))
y0 = jnp.full((4,), 0.5, jnp.float32)


async def run_fori():
    await fori(x16).block_until_ready_async()


async def run_ode():
    await ode(y0, w1, w2).block_until_ready_async()


def walked(run):
    """run with the backend's plans walked in Python (a host crossing per kernel, loops back in
    Python every trip: the browser before its wasm host linked driver modules); the reference of
    rows jax-js cannot run (it has no loops)."""

    async def go():
        backend = pyjax.devices(DEVICE)[0].backend  # noqa: F821
        backend.run_plan = functools.partial(Backend.run_plan, backend)
        try:
            await run()
        finally:
            del backend.run_plan

    return go


async def run_mlp():
    global params
    for _ in range(10):
        params, l = step(params, X, Y)
    await l.block_until_ready_async()


async def run_mm():
    await mm(a, b).block_until_ready_async()


async def run_chain():
    await chain(x).block_until_ready_async()


async def run_row_sum():
    await row_sum(a).block_until_ready_async()


async def run_sort():
    await jnp.sort(s).block_until_ready_async()


WORKLOADS = {
    "matmul1024": run_mm,
    "mlpStep": run_mlp,
    "chain": run_chain,
    "rowSum": run_row_sum,
    "sort": run_sort,
    "fori": run_fori,
    "ode": run_ode,
    "foriWalk": walked(run_fori),
    "odeWalk": walked(run_ode),
}


async def timed(name, n):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        await WORKLOADS[name]()
        ts.append((time.perf_counter() - t) * 1e3)
    return sorted(ts)[n // 2]


def wasm_threads():
    host = pyjax.devices("wasm")[0].backend.host
    return {"threads": host.threads, "chunks": host.thread_stats()["chunks"]}


async def warm(name, sec):
    """Warm-up as the jax-js side: at least 2 calls and `sec` seconds, at most 5000 calls; returns
    the last call's ms. V8 runs a new wasm kernel as baseline (Liftoff) code until its optimized
    code arrives from a background compile, about ten calls of a 30 ms kernel here."""
    t0, i, last = time.perf_counter(), 0, 0.0
    while i < 5000 and (i < 2 or time.perf_counter() - t0 < sec):
        t = time.perf_counter()
        await WORKLOADS[name]()
        last, i = (time.perf_counter() - t) * 1e3, i + 1
    return last
