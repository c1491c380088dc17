"""The browser hosts (shims + pyjax/hosts/browser.py) on the page's WebAssembly and WebGPU."""

from __future__ import annotations


def test_wasm_host_runs_a_module(pyjax_page):
    out = pyjax_page.run_json("""
import json
from pyjax.backends.wasm.encoder import Module, I32, F32
from pyjax.hosts import wasm_host
host = wasm_host(pages=2)
m = Module(memory_min=1)
f = m.function("scale", params=(I32, I32, F32), results=(), export=True)
i = f.local(I32)
f.i32_const(0).local_set(i)
with f.loop():
    f.local_get(i).i32_const(4).i32_mul().local_get(0).i32_add()
    f.local_get(i).i32_const(4).i32_mul().local_get(0).i32_add().f32_load()
    f.local_get(2).f32_mul().f32_store()
    f.local_get(i).i32_const(1).i32_add().local_tee(i).local_get(1).i32_lt_s().br_if(0)
f.finish()
import struct
host.write(64, struct.pack("<4f", 1, 2, 3, 4))
inst = host.load(m.to_bytes())
inst.function("scale")(64, 4, 2.5)
json.dumps(list(struct.unpack("<4f", host.read(64, 16))))
""")
    assert out == [2.5, 5.0, 7.5, 10.0]


def test_webgpu_host_dispatch_and_read(pyjax_page):
    out = pyjax_page.run_json("""
import json, struct
from pyjax.hosts.browser import BrowserWebGPUHost
host = await BrowserWebGPUHost.create()
a = host.create_buffer(16); b = host.create_buffer(16)
host.write(a, struct.pack("<4f", 1, 2, 3, 4))
src = '''
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < 4u) { y[g.x] = x[g.x] * 2.0 + 1.0; }
}'''
p = host.pipeline(src, "main", [False, True], False)
host.dispatch([(p, [a, b], None, (1, 1, 1))])
data = await host.read_async(b, 16)
sync_data = host.read(b, 16)
json.dumps([list(struct.unpack("<4f", data)), data == sync_data, host.has_f16])
""")
    assert out == [[3.0, 5.0, 7.0, 9.0], True, False]


def test_wgsl_error_is_reported(pyjax_page):
    out = pyjax_page.run("""
from pyjax.hosts.browser import BrowserWebGPUHost
host = await BrowserWebGPUHost.create()
try:
    host.pipeline("fn main( {", "main", [True], False)
    msg = "no error"
except Exception as e:
    msg = type(e).__name__ + ": " + str(e)
msg
""")
    assert out.startswith("WGSLCompileError") and "fn main( {" in out


def test_start_up_progress(pyjax_page, pyjax_worker_page, site_url):
    """loadPyjax's onProgress, in the page and through the Worker: each stage in order from
    loaded 0 to loaded == total, the wheel counted in its own bytes."""
    import json
    import urllib.request

    index = json.loads(urllib.request.urlopen(f"{site_url}/wheels/index.json").read())
    wheel_bytes = len(urllib.request.urlopen(f"{site_url}/wheels/{index['pyjax']}").read())
    for page in (pyjax_page, pyjax_worker_page):
        events = page.progress()
        stages = [e["stage"] for e in events]
        assert stages == sorted(stages, key=["pyodide", "wheel", "import"].index), stages
        for stage in ("pyodide", "wheel", "import"):
            mine = [e for e in events if e["stage"] == stage]
            assert mine[0]["loaded"] == 0 and mine[-1]["loaded"] == mine[-1]["total"] > 0, (stage, mine)
            loaded = [e["loaded"] for e in mine]
            assert loaded == sorted(loaded), (stage, loaded)
        assert [e for e in events if e["stage"] == "wheel"][-1]["total"] == wheel_bytes


def test_jitted_loops_run_in_the_wasm_driver(pyjax_page):
    """A jitted fori_loop and a while loop with a cond inside run as one driver module linked
    to the kernels (BrowserWasmHost.link, as WasmtimeHost.link natively), with JAX's results."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    out = pyjax_page.run_json("""
import json
import pyjax, pyjax.numpy as jnp
wasm = pyjax.devices("wasm")[0]
host = wasm.backend.host
links = host.links
chunks = sum(host.thread_stats()["chunks"])
# the page is shared: an earlier test may have made webgpu the default device
with pyjax.default_device(wasm):
    x = jnp.arange(16, dtype=jnp.float32) / 16 - 0.5
    f = pyjax.jit(lambda x: pyjax.lax.fori_loop(0, 1000, lambda i, c: c * 0.999 + jnp.sin(c) * 0.001, x))
    def body(c):
        i, v = c
        return i + 1, pyjax.lax.cond(i % 2 == 0, lambda v: v * 1.5, lambda v: v - 1.0, v)
    g = pyjax.jit(lambda v: pyjax.lax.while_loop(lambda c: c[0] < 7, body, (0, v))[1])
    res = [f(x).tolist(), g(x).tolist()]
    # a kernel big enough to split over the worker threads, called from the driver
    big = jnp.arange(1 << 18, dtype=jnp.float32) % 1013 / 250 - 2
    h = pyjax.jit(lambda v: pyjax.lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * 0.5 + c, v))
    hb = h(big)
    res += [hb[::4099].tolist(), host.links - links, host.threads, sum(host.thread_stats()["chunks"]) - chunks]
json.dumps(res)
""")
    x = jnp.arange(16, dtype=jnp.float32) / 16 - 0.5
    want_f = jax.lax.fori_loop(0, 1000, lambda i, c: c * 0.999 + jnp.sin(c) * 0.001, x)

    def body(c):
        i, v = c
        return i + 1, jax.lax.cond(i % 2 == 0, lambda v: v * 1.5, lambda v: v - 1.0, v)

    want_g = jax.lax.while_loop(lambda c: c[0] < 7, body, (0, x))[1]
    big = jnp.arange(1 << 18, dtype=jnp.float32) % 1013 / 250 - 2
    want_h = jax.lax.fori_loop(0, 5, lambda i, c: jnp.sin(c) * 0.5 + c, big)[::4099]
    np.testing.assert_allclose(out[0], want_f, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1], want_g, rtol=1e-6)
    np.testing.assert_allclose(out[2], want_h, rtol=1e-5, atol=1e-6)
    assert out[3] == 3  # one driver per jitted program
    assert out[4] == 2 and out[5] >= 10  # the page is cross-origin isolated: 5 split calls, 2+ chunks each


def test_swiftshader_cold_paths_split(pyjax_page):
    """On SwiftShader a big elementwise kernel with sin runs without the big-argument reduction
    and reruns whole through an indirect dispatch where an element needs it (Dawn validates the
    scratch word as storage, then as indirect counts): JAX's results either way."""
    import jax.numpy as jnp
    import numpy as np

    out = pyjax_page.run_json("""
import json
import pyjax, pyjax.numpy as jnp
await pyjax.init_async("webgpu")
dev = pyjax.devices("webgpu")[0]
split_before = sum("tv[0] = nwg.x" in t for t in dev.backend._pipes)  # the page is shared with other tests
f = pyjax.jit(lambda v: jnp.sin(v) * 2.0)
x = pyjax.device_put(jnp.linspace(-6.0, 6.0, 1 << 15), dev)
y = pyjax.device_put(jnp.linspace(-6.0, 6.0, 1 << 15).at[5].set(1e20).at[-7].set(-3e7), dev)
a, b = await f(x).tolist_async(), await f(y).tolist_async()
split = sum("tv[0] = nwg.x" in t for t in dev.backend._pipes) - split_before
json.dumps(a[::97] + b[:8] + b[-8:] + [dev.backend.caps.cpu_adapter, split])
""")
    x = jnp.linspace(-6.0, 6.0, 1 << 15)
    y = x.at[5].set(1e20).at[-7].set(-3e7)
    a, b = np.asarray(jnp.sin(x) * 2.0), np.asarray(jnp.sin(y) * 2.0)
    want = list(a[::97]) + list(b[:8]) + list(b[-8:])
    assert out[-2:] == [True, 1]  # SwiftShader's plans, the kernel without its cold path compiled
    np.testing.assert_allclose(out[:-2], want, rtol=2e-6, atol=2e-6)


def test_jitted_program_replays_a_recording(pyjax_page):
    """A jitted program on webgpu (a fori_loop of matmuls, tanh and a mean: 19 dispatches) is
    recorded by the browser host at its first call and replayed after, as WgpuHost does
    natively: per call one queue entry (a Replay of its handles) instead of one per dispatch,
    bind groups remade only for the buffers that changed (the output), a few FFI crossings;
    JAX's results. Counted against the same calls with the plan walked in Python."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    out = pyjax_page.run_json("""
import functools, json
import pyjax, pyjax.numpy as jnp
from pyjax.backends.base import Backend
await pyjax.init_async("webgpu")
dev = pyjax.devices("webgpu")[0]
b, h = dev.backend, dev.backend.host
js = h.mgr.stats


class Crossings:  # counts the host's calls into the shim
    def __init__(self, mgr):
        self.mgr, self.n = mgr, 0

    def __getattr__(self, name):
        self.n += 1
        return getattr(self.mgr, name)


def counts(f, x, calls=5):
    ys = [f(x) for _ in range(calls)]
    b.flush()
    h.mgr = c = Crossings(h.mgr)
    s = (b.stats["steps"], js.replays, js.dispatches, js.bindGroups, len(h._recorded))
    ys = [f(x) for _ in range(calls)]
    b.flush()
    h.mgr = c.mgr
    e = (b.stats["steps"], js.replays, js.dispatches, js.bindGroups, len(h._recorded))
    return [c.n] + [y - z for y, z in zip(e, s)], ys[-1]


with pyjax.default_device(dev):
    x = jnp.linspace(-2, 2, 4096, dtype=jnp.float32).reshape(64, 64)
    f = pyjax.jit(lambda v: pyjax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c @ v * 0.05) * 0.5 + c.mean(axis=0), v))
    replayed, y = counts(f, x)
    b.run_plan = functools.partial(Backend.run_plan, b)
    try:
        walked, _ = counts(pyjax.jit(lambda v: f(v)), x)
    finally:
        del b.run_plan
    res = [replayed, walked, (await y.tolist_async())[::7]]
json.dumps(res)
""")
    replayed, walked, got = out
    x = jnp.linspace(-2, 2, 4096, dtype=jnp.float32).reshape(64, 64)
    want = jax.lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c @ x * 0.05) * 0.5 + c.mean(axis=0), x)
    np.testing.assert_allclose(got, np.asarray(want)[::7], rtol=2e-5, atol=2e-5)
    crossings, entries, replays, dispatches, bind_groups, recordings = replayed
    assert (entries, replays, recordings) == (5, 5, 0), replayed  # one Replay per call, no new recording
    assert dispatches == walked[3] >= 5 * 10 and walked[1] == dispatches  # walked: an entry per dispatch
    assert bind_groups <= 5 * 2 and walked[4] == dispatches  # replayed: the output's group (and the loop's)
    assert crossings <= min(walked[0], 5 * 2), (replayed, walked)  # the submit and few more per call
