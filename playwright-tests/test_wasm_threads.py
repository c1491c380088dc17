"""Multithreaded wasm kernels in the browser (shims/wasm.mjs + shims/wasm-worker.mjs).

A big matmul and a big elementwise chain run on pages loaded with `loadPyjax({wasmThreads: n})`
for n = 2 (main thread and Web Worker) and n = 1; the threaded results must equal the
single-threaded ones and numpy's, and the pool must really have run chunks on worker threads.
"""

from __future__ import annotations

import base64

import numpy as np
import pytest

from conftest import HARNESS, PyjaxPage

M, K, N = 515, 768, 640  # odd row count: chunk tails that are not whole 4-row tiles
E = (1 << 20) + 13  # elementwise length: a tail that is not a whole vector

PROGRAM = f"""
import asyncio, base64, json
import pyjax, pyjax.numpy as jnp
await pyjax.init_async("wasm")
a = (jnp.arange({M * K}, dtype=jnp.float32) % 97 / 97 - 0.5).reshape({M}, {K})
b = (jnp.arange({K * N}, dtype=jnp.float32) % 89 / 89 - 0.5).reshape({K}, {N})
x = jnp.arange({E}, dtype=jnp.float32) % 1013 / 250 - 2
mm = pyjax.jit(lambda p, q: p @ q)
chain = pyjax.jit(lambda v: jnp.tanh(v * 1.5 + 0.5) * jnp.exp(-v * v) + jnp.sin(v))
for _ in range(3):  # the pool's workers start (and receive the kernels) in the background
    c, y = mm(a, b), chain(x)
    await c.block_until_ready_async(); await y.block_until_ready_async()
    await asyncio.sleep(0.2)
host = pyjax.devices("wasm")[0].backend.host
# 1024 rows: one chunk per thread takes 512 rows, not a multiple of V8's 6-row tile
p2 = (jnp.arange(1024 * 96, dtype=jnp.float32) % 7).reshape(1024, 96)
q2 = (jnp.arange(96 * 128, dtype=jnp.float32) % 5).reshape(96, 128)
await p2.block_until_ready_async(); await q2.block_until_ready_async()
before = sum(host.thread_stats()["chunks"])
sq = mm(p2, q2)
await sq.block_until_ready_async()
mm_chunks = sum(host.thread_stats()["chunks"]) - before
enc = lambda raw: base64.b64encode(raw).decode()
mm_raw, chain_raw = await c._contiguous_bytes_async(), await y._contiguous_bytes_async()
json.dumps({{"mm": enc(mm_raw), "chain": enc(chain_raw), "stats": host.thread_stats(), "mm_chunks": mm_chunks}})
"""


def _pages_fixture(chromium, site_url, threads: int, worker: bool) -> PyjaxPage:
    import build as site_build

    html = HARNESS.replace("loadPyjax({ worker:", 'loadPyjax({ wasmThreads: Number(params.get("threads")), worker:')
    (site_build.OUT / "harness-threads.html").write_text(html)

    class Page(PyjaxPage):
        def __init__(self):
            self.page = chromium.new_page()
            self.errors = []
            self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
            self.page.on("pageerror", lambda e: self.errors.append(str(e)))
            self.page.goto(f"{site_url}/harness-threads.html?worker={int(worker)}&threads={threads}")
            self.page.wait_for_function("() => window.__ready || window.__error", timeout=180_000)
            err = self.page.evaluate("window.__error || null")
            if err:
                raise RuntimeError(f"pyjax failed to load in the page: {err}")

    return Page()


@pytest.fixture(scope="module")
def results(chromium, site_url):
    """threads/worker -> decoded outputs and stats."""
    out = {}
    for threads, worker in ((1, False), (2, False), (2, True)):
        p = _pages_fixture(chromium, site_url, threads, worker)
        try:
            r = p.run_json(PROGRAM, timeout=600)
            assert p.errors == [], p.errors
        finally:
            p.page.close()
        r["mm"] = np.frombuffer(base64.b64decode(r["mm"]), np.float32).reshape(M, N)
        r["chain"] = np.frombuffer(base64.b64decode(r["chain"]), np.float32)
        out[(threads, worker)] = r
    return out


def _reference():
    a = (np.arange(M * K, dtype=np.float32) % 97 / np.float32(97) - np.float32(0.5)).reshape(M, K)
    b = (np.arange(K * N, dtype=np.float32) % 89 / np.float32(89) - np.float32(0.5)).reshape(K, N)
    x = (np.arange(E, dtype=np.float32) % 1013 / np.float32(250) - np.float32(2)).astype(np.float64)
    return a.astype(np.float64) @ b.astype(np.float64), np.tanh(x * 1.5 + 0.5) * np.exp(-x * x) + np.sin(x)


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_threads_match_single_thread_and_numpy(results, worker):
    one, many = results[(1, False)], results[(2, worker)]
    mm_ref, chain_ref = _reference()
    np.testing.assert_allclose(many["mm"], mm_ref, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(many["mm"], one["mm"], rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(many["chain"], chain_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(many["chain"], one["chain"])


@pytest.mark.parametrize("worker", [False, True], ids=["page", "worker"])
def test_pool_ran_chunks_on_several_threads(results, worker):
    stats = results[(2, worker)]["stats"]
    assert stats["threads"] == 2 and stats["shared"] and stats["workers"] == 1, stats
    assert all(n > 0 for n in stats["chunks"]), stats
    assert results[(2, worker)]["mm_chunks"] >= 2, results[(2, worker)]["mm_chunks"]  # the product was split
    single = results[(1, False)]["stats"]
    assert single["threads"] == 1 and not single["shared"] and single["chunks"] == [0], single


def test_without_shared_array_buffer_runs_single_threaded(chromium, site_url):
    """No SharedArrayBuffer (as on a page without COOP/COEP): one thread, an unshared memory."""
    ctx = chromium.new_context()
    ctx.add_init_script("delete globalThis.SharedArrayBuffer;")
    p = PyjaxPage(ctx, site_url, worker=False)
    try:
        out = p.run_json("""
import json
import pyjax, pyjax.numpy as jnp
await pyjax.init_async("wasm")
a = jnp.arange(256 * 256, dtype=jnp.float32).reshape(256, 256) % 7
s = float(jnp.sum(a @ a))
json.dumps({"sum": s, "stats": pyjax.devices("wasm")[0].backend.host.thread_stats()})
""")
        a = np.arange(256 * 256, dtype=np.float64).reshape(256, 256) % 7
        assert out["sum"] == pytest.approx(float(np.sum(a @ a)), rel=1e-5)
        assert out["stats"]["threads"] == 1 and not out["stats"]["shared"], out
        assert p.errors == [], p.errors
    finally:
        ctx.close()


TRAP = """
import json, struct
import pyjax
from pyjax.backends.wasm.encoder import I32, Module
from pyjax.hosts.browser import WasmTrap
await pyjax.init_async("wasm")
host = pyjax.devices("wasm")[0].backend.host
m = Module(memory_min=1)
f = m.function("run", (I32, I32, I32), (), export=True)  # run(out, lo, hi): out[i] = i, traps at lo >= 1000
i = f.local(I32)
f.local_get(1).i32_const(1000).i32_ge_s()
with f.if_():
    f.unreachable()
f.local_get(1).local_set(i)
with f.block(), f.loop():
    f.local_get(i).local_get(2).i32_ge_s().br_if(1)
    f.local_get(i).i32_const(4).i32_mul().local_get(0).i32_add().local_get(i).i32_store()
    f.local_get(i).i32_const(1).i32_add().local_set(i).br(0)
f.finish()
run = host.split_function(host.load(m.to_bytes()), "run", lo_arg=1, min_rows=64).unchecked
out = pyjax.devices("wasm")[0].backend.malloc(4 * 4096)
chunks = sum(host.thread_stats()["chunks"])
try:
    run(out, 0, 4096)
    trapped = ""
except WasmTrap as e:
    trapped = str(e)
run(out, 0, 999)
vals = struct.unpack("<999i", host.read(out, 4 * 999))
json.dumps([trapped, vals == tuple(range(999)), sum(host.thread_stats()["chunks"]) - chunks])
"""


def test_trap_in_a_chunk_is_raised_and_the_pool_recovers(chromium, site_url):
    """A chunk that traps (on the caller or a worker) fails the call; the next call works."""
    p = _pages_fixture(chromium, site_url, 2, False)  # own page: a worker's trap logs an error
    try:
        trapped, ok, chunks = p.run_json(TRAP)
    finally:
        p.page.close()
    assert "unreachable" in trapped.lower() or "trapped" in trapped, trapped
    assert ok and chunks > 2, chunks
    assert all("pyjax wasm thread" in e for e in p.errors), p.errors
