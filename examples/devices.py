"""Sort, argsort, Cholesky and triangular solves on every device

Runs the same jitted programs on each device this pyjax has (the WebAssembly and WebGPU backends and
the pure-Python cpu reference), prints how long each takes, and checks that all devices agree.
"""

import time

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, show

devices = []
for platform in ("wasm", "webgpu", "cpu"):
    try:
        devices += jax.devices(platform)[:1]
    except RuntimeError:  # backend not available here (in the page, webgpu needs a GPU adapter)
        pass

n, m = 2000, 48
values = jax.random.normal(jax.random.key(0), (n,))
a = jax.random.normal(jax.random.key(1), (m, m))
spd = a @ a.T + m * jnp.eye(m)  # symmetric positive definite
rhs = jax.random.normal(jax.random.key(2), (m, 4))

programs = {
    "sort": jax.jit(jnp.sort),
    "argsort": jax.jit(jnp.argsort),
    "cholesky": jax.jit(jnp.linalg.cholesky),
    "triangular_solve": jax.jit(lambda l, b: lax.linalg.triangular_solve(l, b, left_side=True, lower=True)),
}


def run_all(device):
    """Each program's result and its time in ms (the second call: the first one compiles)."""
    v, s, b = (jax.device_put(x, device) for x in (values, spd, rhs))
    args = {"sort": (v,), "argsort": (v,), "cholesky": (s,)}
    results, times = {}, {}
    for name, fn in programs.items():
        if name == "triangular_solve":
            args[name] = (results["cholesky"], b)
        fn(*args[name]).block_until_ready()
        t0 = time.perf_counter()
        results[name] = fn(*args[name]).block_until_ready()
        times[name] = (time.perf_counter() - t0) * 1e3
    return results, times


reference = None
for device in devices:
    results, times = run_all(device)
    print(f"{device.platform:>6}: " + ", ".join(f"{k} {t:.2f} ms" for k, t in times.items()))
    show.line(
        list(times.values()), title="ms per call: sort, argsort, cholesky, triangular_solve", label=device.platform
    )
    if reference is None:
        reference = results
        l, x = results["cholesky"], results["triangular_solve"]
        print("sorted ascending:", bool(jnp.all(jnp.diff(results["sort"]) >= 0)))
        print("argsort sorts:", bool(jnp.all(values[results["argsort"]] == results["sort"])))
        print(f"max |L L^T - A| / max |A|: {float(jnp.abs(l @ l.T - spd).max() / jnp.abs(spd).max()):.1e}")
        print(f"max |L X - B|: {float(jnp.abs(l @ x - rhs).max()):.1e}")
    else:
        same = [k for k in programs if bool(jnp.allclose(results[k], reference[k], rtol=1e-4, atol=1e-4))]
        print(f"{device.platform} agrees with {devices[0].platform} on: {', '.join(same)}")
