"""pyjax under Pyodide vs jax-js 0.1.25 in the same headless Chromium, on wasm and webgpu.

Prints one table of median milliseconds with ratios (jax-js time / pyjax time: > 1 means pyjax
is faster), plus Pyodide + pyjax start-up time and the wheel size. On wasm both libraries use
their worker threads (the page is cross-origin isolated); pyjax also runs with one thread
(`loadPyjax({wasmThreads: 1})`) for reference, and the thread counts are printed. No assertions:
this is a measurement. Usage: python bench/browser.py [--devices wasm,webgpu] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "site"))
sys.path.insert(0, str(ROOT / "playwright-tests"))

PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "@jax-js/jax": "./jaxjs/index.js" } }</script></head><body>
<script type="module">
import { runJaxJs, jaxJsChain } from "./bench/browser_jaxjs.mjs";
import { loadPyjax } from "./web/pyjax.mjs";
window.__jaxjs = (device, reps) => runJaxJs(device, reps).then((r) => JSON.stringify(r), (e) => JSON.stringify({error: String(e)}));
window.__pyjax = async (device, reps, wasmThreads) => {
  try {
    if (!window.__py) window.__py = await loadPyjax(wasmThreads ? { wasmThreads } : {});
    const src = await (await fetch("./bench/browser_pyjax.py")).text();
    return await window.__py.run(`DEVICE = ${JSON.stringify(device)}\\nREPS = ${reps}\\n` + src);
  } catch (e) { return JSON.stringify({error: String(e)}); }
};
window.__startup = async () => {
  const t0 = performance.now();
  const py = await loadPyjax();
  return JSON.stringify({ total: performance.now() - t0, ...py.timings });
};
window.__pair = async (device, rounds, src) => {
  // Chain only, both libraries in this page, alternating rounds of 7 calls: load on a shared
  // machine drifts over minutes, so separate pages can see different machines.
  const jj = await jaxJsChain(device);
  const py = await loadPyjax({});
  await py.run(`DEVICE = ${JSON.stringify(device)}\n` + src);
  const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  for (let t0 = performance.now(); performance.now() - t0 < 2000; ) await jj();
  await py.run("await warm(2.0)");
  const out = [];
  for (let r = 0; r < rounds; r++) {
    const ts = [];
    for (let i = 0; i < 7; i++) { const t = performance.now(); await jj(); ts.push(performance.now() - t); }
    out.push([med(ts), Number(await py.run("await median_of(7)"))]);
  }
  return JSON.stringify(out);
};
window.__env = () => JSON.stringify({ cores: navigator.hardwareConcurrency, isolated: crossOriginIsolated });
window.__ready = true;
</script></body></html>"""

# pyjax's side of the interleaved chain comparison (the same chain and data as the workloads).
PAIR_PY = """
import time, pyjax, pyjax.numpy as jnp
await pyjax.init_async(DEVICE)
s, seq = 3, []
for _ in range(4096):
    s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
    seq.append(s / 4294967296 - 0.5)
x = jnp.tile(jnp.asarray(seq, dtype=jnp.float32), 256) * 1.0
chain = pyjax.jit(lambda v: jnp.tanh(v * 1.5 + 0.5) * jnp.exp(-v * v) + jnp.sin(v))
async def warm(sec):
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < sec:
        await chain(x).block_until_ready_async()
async def median_of(n):
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        await chain(x).block_until_ready_async()
        ts.append((time.perf_counter() - t) * 1e3)
    return sorted(ts)[n // 2]
"""

ROWS = [
    ("matmul1024", "f32 matmul 1024², jit"),
    ("mlpStep", "MLP train step (128, 784-256-10), jit"),
    ("chain", "fused elementwise chain 2^20, jit"),
    ("sort", "sort 10^6 f32"),
]


def _busy(n: int) -> float:
    t = time.perf_counter()
    s = 0
    for i in range(n):
        s += i
    return time.perf_counter() - t


def cpu_check(n: int = 3_000_000) -> float:
    """How many cores two busy processes get right now (2.0 on an idle two-core machine)."""
    import multiprocessing

    one = _busy(n)
    with multiprocessing.Pool(2) as pool:
        t = time.perf_counter()
        pool.map(_busy, [n, n])
        two = time.perf_counter() - t
    return 2 * one / two


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="wasm,webgpu")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--pair-rounds", type=int, default=8, help="interleaved chain rounds per device (0: none)")
    args = ap.parse_args()

    from playwright.sync_api import sync_playwright

    import build as site_build
    import serve as site_serve
    from conftest import CHROMIUM_ARGS

    out = site_build.main()
    shutil.copytree(ROOT / "web" / "node_modules" / "@jax-js" / "jax" / "dist", out / "jaxjs")
    (out / "bench").mkdir()
    for f in ("browser_jaxjs.mjs", "browser_pyjax.py"):
        shutil.copy2(ROOT / "bench" / f, out / "bench" / f)
    (out / "bench.html").write_text(PAGE)
    wheel = next((out / "wheels").glob("*.whl"))
    httpd = site_serve.start(out)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/bench.html"
    results: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.set_default_timeout(1_800_000)
        page.goto(url)
        page.wait_for_function("() => window.__ready")
        startup = json.loads(page.evaluate("() => window.__startup()"))
        env = json.loads(page.evaluate("() => window.__env()"))
        for dev in args.devices.split(","):
            for lib in ("pyjax", "jaxjs") + (("pyjax1",) if dev == "wasm" else ()):
                print(f"running {lib} on {dev} ...", file=sys.stderr, flush=True)
                fresh = browser.new_page()
                fresh.set_default_timeout(1_800_000)
                fresh.goto(url)
                fresh.wait_for_function("() => window.__ready")
                call = (
                    f"window.__pyjax('{dev}', {args.reps}, 1)"
                    if lib == "pyjax1"
                    else f"window.__{lib}('{dev}', {args.reps})"
                )
                results[(lib, dev)] = json.loads(fresh.evaluate(f"() => {call}"))
                fresh.close()
        pairs = {}
        for dev in args.devices.split(",") if args.pair_rounds else ():
            print(f"interleaved chain on {dev} ...", file=sys.stderr, flush=True)
            fresh = browser.new_page()
            fresh.set_default_timeout(1_800_000)
            fresh.goto(url)
            fresh.wait_for_function("() => window.__ready")
            pairs[dev] = json.loads(fresh.evaluate("(a) => window.__pair(...a)", [dev, args.pair_rounds, PAIR_PY]))
            fresh.close()
        browser.close()
    httpd.shutdown()

    print(
        f"Chromium headless; pyjax wheel {wheel.stat().st_size / 1024:.0f} KiB; start-up: Pyodide "
        f"{startup['pyodideMs']:.0f} ms + import pyjax {startup['importMs']:.0f} ms (total {startup['total']:.0f} ms)"
    )
    devs = args.devices.split(",")
    if "wasm" in devs:
        print(f"CPU check after the runs: two busy processes got {cpu_check():.2f} cores")
        w, w1 = results[("pyjax", "wasm")], results[("pyjax1", "wasm")]
        print(
            f"wasm threads ({env['cores']} cores, crossOriginIsolated={env['isolated']}): pyjax "
            f"{w.get('threads', '?')} (kernel chunks run per thread: {w.get('chunks', '?')}; the 1-thread column: "
            f"{w1.get('threads', '?')}); jax-js sizes its worker "
            f"pool to navigator.hardwareConcurrency ({env['cores']}) when SharedArrayBuffer is available"
        )
    header = "| workload |"
    for d in devs:
        header += f" pyjax {d} |" + (" pyjax wasm 1 thread |" if d == "wasm" else "") + f" jax-js {d} | ratio |"
    print(header)
    print("|" + " --- |" * (1 + 3 * len(devs) + ("wasm" in devs)))
    fmt = lambda v, r: f"{v:.1f} ms" if isinstance(v, (int, float)) else (r.get("error", "—")[:40])  # noqa: E731
    for key, label in ROWS:
        line = f"| {label} |"
        for dev in devs:
            a, b = results[("pyjax", dev)], results[("jaxjs", dev)]
            pa, pb = a.get(key), b.get(key)
            ratio = f"{pb / pa:.2f}×" if isinstance(pa, (int, float)) and isinstance(pb, (int, float)) else "—"
            line += f" {fmt(pa, a)} |"
            if dev == "wasm":
                one = results[("pyjax1", dev)]
                line += f" {fmt(one.get(key), one)} |"
            line += f" {fmt(pb, b)} | {ratio} |"
        print(line)
    for dev, rounds in pairs.items():
        ratios = sorted(jj / py for jj, py in rounds)
        print(
            f"interleaved chain, {dev}, one page, {len(rounds)} alternating rounds of 7 calls (jax-js/pyjax ms): "
            + ", ".join(f"{jj:.1f}/{py:.1f}" for jj, py in rounds)
            + f"; median ratio {ratios[len(ratios) // 2]:.2f}×"
        )


if __name__ == "__main__":
    main()
