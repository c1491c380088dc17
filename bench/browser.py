"""pyjax under Pyodide vs jax-js 0.1.25 in the same headless Chromium, on wasm and webgpu.

Prints one table of median milliseconds with ratios (jax-js time / pyjax time: > 1 means pyjax
is faster), plus Pyodide + pyjax start-up time and the wheel size. No assertions: this is a
measurement. Usage: python bench/browser.py [--devices wasm,webgpu] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "site"))
sys.path.insert(0, str(ROOT / "playwright-tests"))

PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">{ "imports": { "@jax-js/jax": "./jaxjs/index.js" } }</script></head><body>
<script type="module">
import { runJaxJs } from "./bench/browser_jaxjs.mjs";
import { loadPyjax } from "./web/pyjax.mjs";
window.__jaxjs = (device, reps) => runJaxJs(device, reps).then((r) => JSON.stringify(r), (e) => JSON.stringify({error: String(e)}));
window.__pyjax = async (device, reps) => {
  try {
    if (!window.__py) window.__py = await loadPyjax();
    const src = await (await fetch("./bench/browser_pyjax.py")).text();
    return await window.__py.run(`DEVICE = ${JSON.stringify(device)}\\nREPS = ${reps}\\n` + src);
  } catch (e) { return JSON.stringify({error: String(e)}); }
};
window.__startup = async () => {
  const t0 = performance.now();
  const py = await loadPyjax();
  return JSON.stringify({ total: performance.now() - t0, ...py.timings });
};
window.__ready = true;
</script></body></html>"""

ROWS = [
    ("matmul1024", "f32 matmul 1024², jit"),
    ("mlpStep", "MLP train step (128, 784-256-10), jit"),
    ("chain", "fused elementwise chain 2^20, jit"),
    ("sort", "sort 10^6 f32"),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="wasm,webgpu")
    ap.add_argument("--reps", type=int, default=5)
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
        for dev in args.devices.split(","):
            for lib in ("pyjax", "jaxjs"):
                fresh = browser.new_page()
                fresh.set_default_timeout(1_800_000)
                fresh.goto(url)
                fresh.wait_for_function("() => window.__ready")
                results[(lib, dev)] = json.loads(fresh.evaluate(f"() => window.__{lib}('{dev}', {args.reps})"))
                fresh.close()
        browser.close()
    httpd.shutdown()

    print(
        f"Chromium headless; pyjax wheel {wheel.stat().st_size / 1024:.0f} KiB; start-up: Pyodide "
        f"{startup['pyodideMs']:.0f} ms + import pyjax {startup['importMs']:.0f} ms (total {startup['total']:.0f} ms)"
    )
    header = "| workload |" + "".join(f" pyjax {d} | jax-js {d} | ratio |" for d in args.devices.split(","))
    print(header)
    print("|" + " --- |" * (1 + 3 * len(args.devices.split(","))))
    for key, label in ROWS:
        line = f"| {label} |"
        for dev in args.devices.split(","):
            a, b = results[("pyjax", dev)], results[("jaxjs", dev)]
            pa, pb = a.get(key), b.get(key)
            ratio = f"{pb / pa:.2f}×" if isinstance(pa, (int, float)) and isinstance(pb, (int, float)) else "—"
            fmt = lambda v, r: f"{v:.1f} ms" if isinstance(v, (int, float)) else (r.get("error", "—")[:40])  # noqa: E731
            line += f" {fmt(pa, a)} | {fmt(pb, b)} | {ratio} |"
        print(line)


if __name__ == "__main__":
    main()
