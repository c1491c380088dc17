"""Playwright fixtures: build the site once, serve it with COOP/COEP, drive Debian's Chromium.

`page_runner` gives a function run(code, worker=False) that runs Python inside Pyodide in the
page (or in a module Web Worker) and returns the JSON-decoded value of the last expression.
WebGPU is Dawn on SwiftShader here (`--enable-unsafe-webgpu`); no network beyond localhost.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "site"))

import build as site_build  # noqa: E402
import serve as site_serve  # noqa: E402

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--disable-dev-shm-usage",
    "--enable-unsafe-webgpu",
]

HARNESS = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<script type="module">
import { loadPyjax } from "./web/pyjax.mjs";
const params = new URLSearchParams(location.search);
window.__lines = [];
window.__progress = [];
const onProgress = (p) => window.__progress.push(p);
loadPyjax({ worker: params.get("worker") === "1", stdout: (l) => window.__lines.push(l), onProgress })
  .then((py) => { window.__py = py; window.__ready = true; })
  .catch((e) => { window.__error = String(e); });
window.__run = async (code) => {
  try { const v = await window.__py.run(code); return { ok: true, value: v === undefined ? null : v }; }
  catch (e) { return { ok: false, error: String(e && e.message ? e.message : e) }; }
};
</script></body></html>"""


@pytest.fixture(scope="session")
def site_url(tmp_path_factory):
    site_build.OUT = tmp_path_factory.mktemp("site") / "_build"  # not site/_build: `make serve` may serve it
    out = site_build.main()
    (out / "harness.html").write_text(HARNESS)
    httpd = site_serve.start(out)
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


class PyjaxPage:
    """One page with Pyodide + pyjax loaded; collects console errors."""

    def __init__(self, browser, site_url: str, worker: bool):
        self.page = browser.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(f"{site_url}/harness.html?worker={'1' if worker else '0'}")
        self.page.wait_for_function("() => window.__ready || window.__error", timeout=180_000)
        err = self.page.evaluate("window.__error || null")
        if err:
            raise RuntimeError(f"pyjax failed to load in the page: {err}")

    def run(self, code: str, timeout: float = 300.0):
        """Run Python in Pyodide; returns the value of the last expression (JSON-able)."""
        self.page.set_default_timeout(timeout * 1000)
        res = self.page.evaluate("(code) => window.__run(code)", code)
        if not res["ok"]:
            raise RuntimeError(res["error"])
        return res["value"]

    def run_json(self, code: str, timeout: float = 300.0):
        """Run code whose last expression is a JSON string; decode it."""
        return json.loads(self.run(code, timeout))

    def stdout(self) -> list[str]:
        return self.page.evaluate("window.__lines")

    def progress(self) -> list[dict]:
        """What loadPyjax's onProgress reported during start-up, in order."""
        return self.page.evaluate("window.__progress")


@pytest.fixture(scope="session")
def pyjax_page(chromium, site_url):
    p = PyjaxPage(chromium, site_url, worker=False)
    yield p
    p.page.close()


@pytest.fixture(scope="session")
def pyjax_worker_page(chromium, site_url):
    p = PyjaxPage(chromium, site_url, worker=True)
    yield p
    p.page.close()
