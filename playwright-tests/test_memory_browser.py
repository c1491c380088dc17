"""Long-running loops in the browser keep GPU memory and Pyodide's FFI bookkeeping flat; a page
without WebGPU falls back to wasm; the async API works."""

from __future__ import annotations

import math

import pytest

from conftest import PyjaxPage

STEPS = 10_000

LOOP = """
import gc, json, pyjax, pyjax.numpy as jnp, pyodide_js
from pyjax.hosts import browser
pyodide_js._module.enable_pyproxy_allocation_tracing()
dev = await pyjax.init_async({backend!r})

@pyjax.jit
def step(w, x):
    return w - 0.01 * jnp.tanh(x @ w) + 0.001

def snapshot():
    gc.collect()
    s = browser.proxy_counts()
    host = dev.backend.host
    if {backend!r} == "webgpu":
        s.update(host.memory_stats())
        s["dispatches"] = host.stats["dispatches"]
    else:
        s["pages"] = host.pages
    s["arrays"] = dev.backend.live_buffers()
    return s

x = jnp.ones((16, 16)) * 0.1
w = jnp.zeros((16, 4))
for _ in range(500):  # warm up: compile, fill the buffer pool and the dispatch queue
    w = step(w, x)
await w.block_until_ready_async()
before = snapshot()
for _ in range({steps}):
    w = step(w, x)
await w.block_until_ready_async()
after = snapshot()
json.dumps([str(dev), before, after, await w.tolist_async()])
"""


@pytest.mark.parametrize("backend", ["wasm", "webgpu"])
def test_long_jit_loop_is_flat(pyjax_page, backend):
    dev, before, after, w = pyjax_page.run_json(LOOP.format(backend=backend, steps=STEPS), timeout=600)
    assert dev == f"{backend}:0"
    fixed_point = math.atanh(0.1) / 1.6  # where 0.01 * tanh(1.6 w) == 0.001: the loop really ran
    assert all(abs(v - fixed_point) < 1e-3 for row in w for v in row), w
    assert after["js_refs"] <= before["js_refs"], (before, after)
    assert after["pyproxies"] <= before["pyproxies"], (before, after)
    assert after["arrays"] <= before["arrays"], (before, after)
    if backend == "webgpu":
        assert after["dispatches"] - before["dispatches"] >= STEPS
        assert after["live"] <= before["live"], (before, after)
        assert after["totalBytes"] <= before["totalBytes"], (before, after)
    else:
        assert after["pages"] == before["pages"], (before, after)


NO_WEBGPU = {
    "no navigator.gpu": ("delete Navigator.prototype.gpu;", "navigator.gpu is missing"),
    "no adapter": ("GPU.prototype.requestAdapter = async () => null;", "no adapter"),
}


@pytest.fixture(scope="module", params=sorted(NO_WEBGPU))
def no_webgpu_page(request, chromium, site_url):
    """A page as in a browser without WebGPU (no navigator.gpu) or without an adapter."""
    script, reason = NO_WEBGPU[request.param]
    ctx = chromium.new_context()
    ctx.add_init_script(script)
    p = PyjaxPage(ctx, site_url, worker=False)
    p.reason = reason
    yield p
    ctx.close()


def test_no_webgpu_falls_back_to_wasm(no_webgpu_page):
    got = no_webgpu_page.run_json("""
import json, warnings, pyjax, pyjax.numpy as jnp
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dev = await pyjax.init_async("webgpu")
try:
    pyjax.devices("webgpu")
    err = None
except RuntimeError as e:
    err = str(e)
json.dumps([str(dev), pyjax.default_backend(), [str(w.message) for w in caught], err,
            float(jnp.sum(jnp.arange(5.0)))])
""")
    dev, default, warned, err, total = got
    assert (dev, default, total) == ("wasm:0", "wasm", 10.0)
    assert len(warned) == 1 and "WebGPU is unavailable" in warned[0] and "\n" not in warned[0]
    assert err is not None and "webgpu" in err and no_webgpu_page.reason in err, err


def test_async_api(pyjax_page):
    got = pyjax_page.run_json("""
import json, pyjax, pyjax.numpy as jnp
await pyjax.init_async("webgpu")
x = jnp.arange(6.0).reshape(2, 3) * 2
y = await x.block_until_ready_async()
json.dumps([y is x, await x.tolist_async(), await pyjax.device_get_async({"a": x[0], "b": 3}),
            str(x.device) if hasattr(x, "device") else None])
""")
    same, lst, tree, dev = got
    assert same and lst == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    assert tree == {"a": [0.0, 2.0, 4.0], "b": 3}
    assert dev in (None, "webgpu:0")


def test_sync_read_without_jspi_explains(pyjax_page):
    """Outside runPythonAsync the browser cannot block on the GPU: the error says what to do."""
    pyjax_page.run("import pyjax, pyjax.numpy as jnp\nawait pyjax.init_async('webgpu')\n_x = jnp.ones(3) * 2")
    msg = pyjax_page.page.evaluate("""() => {
      try { window.__py.pyodide.runPython("float(_x.sum())"); return "no error"; }
      catch (e) { return String(e.message); }
    }""")
    assert "runPythonAsync" in msg and "block_until_ready_async" in msg, msg


LOST = """
import json, pyjax, pyjax.numpy as jnp
dev = await pyjax.init_async("webgpu")
x = jnp.arange(1024.0) * 2
await x.block_until_ready_async()
dev.backend.host.mgr.device.destroy()  # what a GPU reset or driver crash does to the page
out = []
async def run_async():
    await (x + 1).block_until_ready_async()
def run_sync():
    return float((x * 3).sum())
for f in (run_async, run_sync):
    try:
        r = f()
        if r is not None and hasattr(r, "__await__"):
            await r
        out.append("no error")
    except Exception as e:
        out.append(f"{type(e).__name__}: {e}")
with pyjax.default_device(pyjax.devices("wasm")[0]):
    out.append(float(jnp.arange(4.0).sum()))
dev2 = await pyjax.init_async("webgpu")  # a new device
out.append([dev2.backend is not dev.backend, float(jnp.arange(5.0).sum())])
json.dumps(out)
"""


def test_lost_gpu_device_is_reported(chromium, site_url):
    """A lost device raises a clear error on the next use (async and sync), not a hang; wasm still
    works and init_async gives a new GPU device."""
    page = PyjaxPage(chromium, site_url, worker=False)
    try:
        errs_async, errs_sync, wasm_sum, (fresh, gpu_sum) = page.run_json(LOST, timeout=120)
    finally:
        page.page.close()
    for e in (errs_async, errs_sync):
        assert e.startswith("DeviceLostError") and "lost" in e and "init_async" in e, e
    assert wasm_sum == 6.0
    assert fresh and gpu_sum == 10.0
