"""pyjax side of bench/browser.py, run inside Pyodide: the same workloads as browser_jaxjs.mjs.

The page defines DEVICE and REPS before running this file; the last expression is the result.
"""

import json
import time

import pyjax
import pyjax.numpy as jnp

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


async def timeit(fn, reps, warm=2, warm_s=1.5):
    # Warm up for `warm` calls and at least `warm_s` seconds (at most 50 calls): V8 runs a new
    # wasm kernel as baseline (Liftoff) code until its optimized code arrives from a background
    # compile, about ten calls of a 30 ms kernel here. Both libraries get the same warm-up.
    t0 = time.perf_counter()
    for w in range(50):
        if w >= warm and time.perf_counter() - t0 >= warm_s:
            break
        await fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        await fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return sorted(ts)[len(ts) // 2]


out = {}
if DEVICE == "wasm":  # noqa: F821
    out["threads"] = pyjax.devices("wasm")[0].backend.host.threads
a, b = rand_array((1024, 1024), 1), rand_array((1024, 1024), 2)
mm = pyjax.jit(lambda x, y: x @ y)


async def run_mm():
    await mm(a, b).block_until_ready_async()


out["matmul1024"] = await timeit(run_mm, REPS)  # noqa: F704, F821
x = rand_array((1 << 20,), 3)
chain = pyjax.jit(lambda v: jnp.tanh(v * 1.5 + 0.5) * jnp.exp(-v * v) + jnp.sin(v))


async def run_chain():
    await chain(x).block_until_ready_async()


out["chain"] = await timeit(run_chain, REPS)  # noqa: F704, F821
s = rand_array((1000000,), 4)


async def run_sort():
    await jnp.sort(s).block_until_ready_async()


out["sort"] = await timeit(run_sort, *((1, 1) if DEVICE == "webgpu" else (REPS, 2)))  # noqa: F704, F821
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


for _ in range(3):
    params, l = step(params, X, Y)
await l.block_until_ready_async()  # noqa: F704
ts = []
for _ in range(REPS):  # noqa: F821
    t = time.perf_counter()
    for _ in range(10):
        params, l = step(params, X, Y)
    await l.block_until_ready_async()  # noqa: F704
    ts.append((time.perf_counter() - t) * 100)
out["mlpStep"] = sorted(ts)[len(ts) // 2]
if DEVICE == "wasm":  # noqa: F821
    out["chunks"] = pyjax.devices("wasm")[0].backend.host.thread_stats()["chunks"]
json.dumps(out)
