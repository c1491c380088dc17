"""The pyjax wheel alone in a plain Pyodide page and in a user-started Web Worker (issue 13).

No project loader: the page imports pyodide.mjs, loads micropip's wheel (as it would from
Pyodide's CDN; here from web/pypi/, fetched by `make deps`), `await micropip.install(wheel)`
and imports pyjax, whose JavaScript comes from the wheel itself. Shared conformance cases run on
wasm and webgpu and are compared with JAX natively. Also: a page that is not cross-origin
isolated (one wasm thread), a page without navigator.gpu (one warning and wasm, or a clear
error), and code run with plain runPython (no JSPI): a sync WebGPU read raises an error saying
what to await.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from test_cases_browser import CASES_SRC, jax_result  # noqa: E402

from cases import compare  # noqa: E402

MICROPIP = ROOT / "web" / "pypi" / "micropip-0.11.1-py3-none-any.whl"

# A user's own code: boot Pyodide, install the wheel, first result. Shared by the page and the Worker.
BOOT = """import { loadPyodide } from "./pyodide/pyodide.mjs";

export async function boot(wheelURL, lines) {
  const pyodide = await loadPyodide({ stdout: (l) => lines.push(l), stderr: (l) => lines.push(l) });
  const t0 = performance.now();
  await pyodide.loadPackage(new URL("pypi/MICROPIP", location.href).href);
  await pyodide.pyimport("micropip").install(new URL(wheelURL, location.href).href);
  const first = await pyodide.runPythonAsync(`
import pyjax, pyjax.numpy as jnp
await pyjax.init_async("wasm")
float(jnp.sum(jnp.arange(10.0) * 2))`);
  return { pyodide, startup: { ms: performance.now() - t0, first } };
}

export async function run(pyodide, code, sync) {
  try {
    const r = sync ? pyodide.runPython(code) : await pyodide.runPythonAsync(code);
    return { ok: true, value: toPlain(pyodide, r) };
  } catch (e) {
    return { ok: false, error: String(e && e.message ? e.message : e) };
  }
}

// The value of the last expression as plain data that postMessage can clone (a Worker's answer):
// Python objects with no JS equivalent (e.g. a pyjax Device) become their repr.
function toPlain(pyodide, r) {
  if (!(r instanceof pyodide.ffi.PyProxy)) return r ?? null;
  const v = r.toJs();
  const value = v instanceof pyodide.ffi.PyProxy ? String(r) : v;
  r.destroy();
  return value;
}
""".replace("MICROPIP", MICROPIP.name)

WORKER = """import { boot, run } from "./plain-boot.mjs";
const lines = [];
let booted = null;
self.onmessage = async ({ data }) => {
  if (data.kind === "boot") {
    try {
      booted = await boot(data.wheel, lines);
      self.postMessage({ kind: "ready", startup: booted.startup });
    } catch (e) {
      self.postMessage({ kind: "ready", error: String(e) });
    }
  } else {
    const result = await run(booted.pyodide, data.code, data.sync);
    try {
      self.postMessage({ kind: "result", id: data.id, ...result });
    } catch (e) {  // a value postMessage cannot clone: answer with the error, never leave the page waiting
      self.postMessage({ kind: "result", id: data.id, ok: false, error: `cannot send the result: ${e}` });
    }
  }
};
"""

PAGE = """<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,"></head><body>
<script type="module">
import { boot, run } from "./plain-boot.mjs";
const params = new URLSearchParams(location.search);
window.__lines = [];
const done = (startup, error) => { window.__startup = startup; window.__error = error; window.__ready = true; };
if (params.get("worker") === "1") {
  const worker = new Worker("./plain-worker.mjs", { type: "module" });
  const waiting = new Map();
  let next = 0;
  worker.onmessage = ({ data }) => {
    if (data.kind === "ready") done(data.startup, data.error);
    else { waiting.get(data.id)(data); waiting.delete(data.id); }
  };
  worker.postMessage({ kind: "boot", wheel: params.get("wheel") });
  window.__run = (code, sync) => new Promise((resolve) => {
    waiting.set(next, resolve);
    worker.postMessage({ kind: "run", id: next++, code, sync });
  });
} else {
  boot(params.get("wheel"), window.__lines)
    .then((b) => { window.__run = (code, sync) => run(b.pyodide, code, sync); done(b.startup); })
    .catch((e) => done(null, String(e)));
}
</script></body></html>"""

CASE_NAMES = ["elementwise", "reductions", "matmul", "grad_mlp", "jit_train_steps", "vmap_axes", "dtypes_promotion"]


class PlainPage:
    """A plain Pyodide page (or its Worker) with the wheel installed by micropip."""

    def __init__(self, browser, url: str, wheel: str, worker: bool = False, init_script: str | None = None):
        self.page = browser.new_page()
        self.worker = worker
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        if init_script:
            self.page.add_init_script(init_script)
        self.page.goto(f"{url}/plain.html?worker={int(worker)}&wheel=wheels/{wheel}")
        self.page.wait_for_function("() => window.__ready", timeout=180_000)
        err = self.page.evaluate("window.__error || null")
        if err:
            raise RuntimeError(f"pyjax failed to load in the plain page: {err}")
        self.startup = self.page.evaluate("window.__startup")

    def run(self, code: str, sync: bool = False, timeout: float = 120.0):
        """Run code; a run that does not answer within `timeout` seconds fails (a hang is a bug)."""
        res = self.page.evaluate(
            """([code, sync, ms]) => Promise.race([window.__run(code, sync), new Promise((resolve) =>
                 setTimeout(() => resolve({ ok: false, error: `no answer within ${ms / 1000} s (hangs)` }), ms))])""",
            [code, sync, timeout * 1000],
        )
        if not res["ok"]:
            raise RuntimeError(res["error"])
        return res["value"]

    def run_json(self, code: str, sync: bool = False):
        return json.loads(self.run(code, sync))


@pytest.fixture(scope="module")
def plain_site(site_url):
    import build as site_build

    if not MICROPIP.exists():
        pytest.fail(f"{MICROPIP} is missing: run `make deps` (it downloads micropip from PyPI)")
    out = site_build.OUT
    (out / "pypi").mkdir(exist_ok=True)
    shutil.copy2(MICROPIP, out / "pypi" / MICROPIP.name)
    (out / "plain-boot.mjs").write_text(BOOT)
    (out / "plain-worker.mjs").write_text(WORKER)
    (out / "plain.html").write_text(PAGE)
    return site_url, json.loads((out / "wheels" / "index.json").read_text())["pyjax"]


@pytest.fixture(scope="module", params=[False, True], ids=["page", "worker"])
def plain(request, chromium, plain_site):
    url, wheel = plain_site
    p = PlainPage(chromium, url, wheel, worker=request.param)
    print(
        f"\nstart-up ({'worker' if request.param else 'page'}): Pyodide ready -> first result {p.startup['ms']:.0f} ms"
    )
    yield p
    p.page.close()


def _cases_program(backend: str, names: list[str]) -> str:
    return (
        CASES_SRC
        + f"""
import json, pyjax, pyjax.numpy as _jnp
from pyjax import lax as _lax
await pyjax.init_async({backend!r})
json.dumps({{"backend": pyjax.default_backend(),
  "cases": {{n: json.loads(encode(run_case(CASES[n], pyjax, _jnp, _lax), pyjax.tree_util)) for n in {names!r}}}}})
"""
    )


@pytest.mark.parametrize("backend", ["wasm", "webgpu"])
def test_cases_match_jax(plain, backend):
    assert plain.startup["first"] == 90.0
    got = plain.run_json(_cases_program(backend, CASE_NAMES))
    assert got["backend"] == backend
    for name in CASE_NAMES:
        compare(got["cases"][name], jax_result(name), f"{name}@{backend}")


THREADS = """
import asyncio, json, js, pyjax, pyjax.numpy as jnp
await pyjax.init_async("wasm")
host = pyjax.devices("wasm")[0].backend.host
started = host.thread_stats()
mm = pyjax.jit(lambda p, q: p @ q)
a = (jnp.arange(512 * 128, dtype=jnp.float32) % 7).reshape(512, 128)
for _ in range(3):  # a late worker claims no chunks of a call; give it a few
    c = mm(a, a.T)
    await c.block_until_ready_async()
    await asyncio.sleep(0.1)
json.dumps({"started": started, "after": host.thread_stats(), "sum": int(c.astype(jnp.int32).sum()),
            "cores": int(js.navigator.hardwareConcurrency), "isolated": bool(js.crossOriginIsolated)})
"""


def _expected_sum():
    import numpy as np

    a = (np.arange(512 * 128, dtype=np.float32) % 7).reshape(512, 128)
    return int((a @ a.T).astype(np.int64).sum())


def test_wasm_threads_without_configuration(plain):
    """Cross-origin isolated: min(hardwareConcurrency, 8) threads, all up once init_async returns."""
    r = plain.run_json(THREADS)
    assert r["isolated"] is True
    threads = min(r["cores"], 8)
    assert r["started"]["threads"] == threads and r["started"]["up"] == threads - 1 == r["started"]["workers"]
    if threads > 1:
        assert sum(r["after"]["chunks"][1:]) > 0  # the blob-started workers really ran chunks
    assert r["sum"] == _expected_sum()


def test_no_console_errors(plain):
    assert plain.errors == []


@pytest.fixture(scope="module")
def unisolated_url(plain_site):
    import build as site_build
    import serve as site_serve

    httpd = site_serve.start(site_build.OUT, isolated=False)
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_page_not_cross_origin_isolated_runs_one_thread(chromium, plain_site, unisolated_url):
    p = PlainPage(chromium, unisolated_url, plain_site[1])
    try:
        r = p.run_json(THREADS)
        assert r["isolated"] is False
        assert (r["after"]["threads"], r["after"]["shared"], r["after"]["workers"]) == (1, False, 0)
        assert r["sum"] == _expected_sum()
        got = p.run_json(_cases_program("wasm", ["grad_mlp"]))
        compare(got["cases"]["grad_mlp"], jax_result("grad_mlp"), "grad_mlp@wasm/unisolated")
        assert p.errors == []
    finally:
        p.page.close()


NO_GPU = "delete Navigator.prototype.gpu;"


def test_without_navigator_gpu(chromium, plain_site):
    """webgpu asked for where the browser has none: a clear error, or wasm with one warning; no hang."""
    p = PlainPage(chromium, plain_site[0], plain_site[1], init_script=NO_GPU)
    try:
        sync_error = p.run(
            """
import pyjax
try:
    pyjax.devices("webgpu")
    msg = "no error"
except RuntimeError as e:
    msg = str(e)
msg
""",
            sync=True,
        )
        assert "Backend 'webgpu' failed to initialize" in sync_error and "navigator.gpu" in sync_error
        r = p.run_json(
            CASES_SRC
            + """
import json, warnings, pyjax, pyjax.numpy as jnp
from pyjax import lax
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    first = await pyjax.init_async("webgpu")
    second = await pyjax.init_async("webgpu")
try:
    pyjax.devices("webgpu")
    error = "no error"
except RuntimeError as e:
    error = str(e)
json.dumps({"devices": [first.platform, second.platform, pyjax.default_backend()], "error": error,
            "warnings": [str(w.message) for w in caught],
            "case": json.loads(encode(run_case(CASES["grad_mlp"], pyjax, jnp, lax), pyjax.tree_util))})
"""
        )
        assert r["devices"] == ["wasm", "wasm", "wasm"]
        assert len(r["warnings"]) == 1 and "WebGPU is unavailable" in r["warnings"][0], r["warnings"]
        assert "navigator.gpu" in r["error"]
        compare(r["case"], jax_result("grad_mlp"), "grad_mlp@wasm/no-gpu")
    finally:
        p.page.close()


def test_sync_webgpu_read_without_jspi_says_what_to_await(plain):
    """runPython cannot block on the GPU: kernels still run, a sync read raises, an await reads."""
    # The value is a Device, which a Worker cannot post: the harness answers with its repr (it used to
    # answer nothing, and this test hung in the Worker for that reason alone).
    assert "webgpu" in plain.run('import pyjax\nawait pyjax.init_async("webgpu")').lower()
    msg = plain.run(
        """
import pyjax, pyjax.numpy as jnp
with pyjax.default_device(pyjax.devices("wasm")[0]):
    on_wasm = float(jnp.sum(jnp.arange(10.0)))  # wasm needs no waiting
y = jnp.sin(jnp.arange(4.0)) * 2  # webgpu: compiled and dispatched without waiting
try:
    float(y.sum())
    msg = "no error"
except RuntimeError as e:
    msg = str(e)
f"{on_wasm} {msg}"
""",
        sync=True,
    )
    assert msg.startswith("45.0 ") and "has to wait for the browser" in msg and "cannot block" in msg
    assert "runPythonAsync" in msg and "await x.tolist_async()" in msg
    got = plain.run("import json\njson.dumps(await y.tolist_async())")
    import math

    assert json.loads(got) == pytest.approx([2 * math.sin(i) for i in range(4)], rel=1e-5)
