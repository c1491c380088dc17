"""pyjax under Pyodide vs jax-js 0.1.25 in the same headless Chromium, on wasm and webgpu.

Runs the site's benchmark page (site/bench.html + bench.mjs, which `make serve` also shows with its
ratio bars) headless and prints its results as a table. Both libraries run in one page and take turns: for each workload, both warm up, then several
rounds in which each library runs the same number of calls back to back (who goes first
alternates); a round gives one median per library. This shared machine's speed drifts by up to 2x
over minutes, so only calls close in time are compared: the ratio printed is the median over rounds
of jax-js time / pyjax time (> 1 means pyjax is faster), with its range. On wasm both libraries
use their worker threads (the page is cross-origin isolated); pyjax also runs alone with one
thread (`loadPyjax({wasmThreads: 1})`) for reference. Also printed: Pyodide + pyjax start-up time
and the wheel size. No assertions: this is a measurement.
Usage: python bench/browser.py [--devices wasm,webgpu] [--rounds 8] [--only matmul1024,chain]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "site"))
sys.path.insert(0, str(ROOT / "playwright-tests"))

ROWS = [
    ("matmul1024", "f32 matmul 1024², jit"),
    ("mlpStep", "MLP train step (128, 784-256-10), jit"),
    ("chain", "fused elementwise chain 2^20, jit"),
    ("rowSum", "row sums of squares 1024², jit"),
    ("sort", "sort 10^6 f32"),
]
# rows jax-js cannot run (it has no loops), wasm only: the reference column is pyjax with its
# plans walked in Python (a crossing per kernel, back in Python every trip), as the browser ran
# them before BrowserWasmHost linked driver modules. Natively (bench/run.py, README) JAX CPU
# takes about 270 us for fori and pyjax-wasmtime is 1.2x JAX on odeint.
LOOP_ROWS = [
    ("fori", "jitted fori_loop, 10k steps on 16 f32 (ref: walked plan)"),
    ("ode", "odeint, MLP vector field, t in [0, 50] (ref: walked plan)"),
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


def _open(browser, url: str):
    page = browser.new_page()
    page.set_default_timeout(3_600_000)
    page.goto(url)
    page.wait_for_function("() => window.pyjaxBench")
    return page


def _pair(browser, url: str, dev: str, names: list, rounds: int, threads: int, with_jaxjs: bool) -> dict:
    page = _open(browser, url)
    try:
        return page.evaluate("(a) => window.pyjaxBench.pair(...a)", [dev, names, rounds, threads, with_jaxjs])
    finally:
        page.close()


def _median(xs: list) -> float:
    return sorted(xs)[len(xs) // 2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--devices", default="wasm,webgpu")
    ap.add_argument(
        "--rounds", type=int, default=8, help="alternating rounds per workload (fewer for calls of seconds)"
    )
    ap.add_argument("--only", default="", help="comma-separated workloads (default: all)")
    args = ap.parse_args()
    devs = args.devices.split(",")
    names = args.only.split(",") if args.only else [k for k, _ in ROWS + LOOP_ROWS]
    loops = {k for k, _ in LOOP_ROWS}

    from playwright.sync_api import sync_playwright

    import build as site_build
    import serve as site_serve
    from conftest import CHROMIUM_ARGS

    out = site_build.main()
    wheel = next((out / "wheels").glob("*.whl"))
    httpd = site_serve.start(out)
    url = f"http://127.0.0.1:{httpd.server_address[1]}/bench.html"
    results: dict = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        page = _open(browser, url)
        startup = page.evaluate("() => window.pyjaxBench.startup()")
        env = page.evaluate("() => window.pyjaxBench.env()")
        page.close()
        for dev in devs:
            print(f"{dev}: pyjax and jax-js taking turns in one page ...", file=sys.stderr, flush=True)
            dev_names = names if dev == "wasm" else [n for n in names if n not in loops]
            results[dev] = _pair(browser, url, dev, dev_names, args.rounds, 0, True)
            if dev == "wasm":
                print("wasm: pyjax with one thread ...", file=sys.stderr, flush=True)
                results["wasm1"] = _pair(browser, url, dev, dev_names, min(args.rounds, 3), 1, False)
        browser.close()
    httpd.shutdown()

    print(
        f"Chromium headless; pyjax wheel {wheel.stat().st_size / 1024:.0f} KiB; start-up: Pyodide "
        f"{startup['pyodideMs']:.0f} ms + import pyjax {startup['importMs']:.0f} ms (total {startup['total']:.0f} ms)"
    )
    if "wasm" in devs:
        print(f"CPU check after the runs: two busy processes got {cpu_check():.2f} cores")
        w, w1 = results["wasm"]["threads"], results["wasm1"]["threads"]
        print(
            f"wasm threads ({env['cores']} cores, crossOriginIsolated={env['isolated']}): pyjax "
            f"{w['threads']} (kernel chunks run per thread: {w['chunks']}; the 1-thread page: "
            f"{w1['threads']}); jax-js sizes its worker pool to navigator.hardwareConcurrency "
            f"({env['cores']}) when SharedArrayBuffer is available"
        )
    header = "| workload |"
    for d in devs:
        header += f" pyjax {d} |" + (" pyjax wasm 1 thread |" if d == "wasm" else "") + f" jax-js {d} | ratio [range] |"
    print(header)
    print("|" + " --- |" * (1 + 3 * len(devs) + ("wasm" in devs)))
    for key, label in ROWS + LOOP_ROWS:
        if key not in names:
            continue
        per = 10 if key == "mlpStep" else 1  # the MLP's call is 10 steps
        line = f"| {label} |"
        for dev in devs:
            if key not in results[dev]:
                line += " |" * (4 if dev == "wasm" else 3)
                continue
            rows = results[dev][key]
            ratios = sorted(j / p for j, p in rows)
            line += f" {_median([p for _, p in rows]) / per:.1f} ms |"
            if dev == "wasm":
                line += f" {_median([p for _, p in results['wasm1'][key]]) / per:.1f} ms |"
            line += f" {_median([j for j, _ in rows]) / per:.1f} ms |"
            line += f" {_median(ratios):.2f}× [{ratios[0]:.2f}–{ratios[-1]:.2f}, {len(rows)} rounds] |"
        print(line)


if __name__ == "__main__":
    main()
