// The playground's Python: a module Web Worker running pyjax under Pyodide (the page stays responsive).
//
// Messages from the page: {type: "init", interrupt}  (an Int32Array on a SharedArrayBuffer, or null)
//                         {type: "run", code, device, name}
// to the page: {type: "stage", stage, loaded, total}  start-up progress from loadPyjax's onProgress
//              {type: "ready", timings, gpu}      gpu: what navigator.gpu offers here (see probeGPU)
//              {type: "out", stream, text}        one line of stdout or stderr, as it is printed
//              {type: "device", info}             the device the run got: {platform, adapter, fallback}
//              {type: "figure", json}             a pyjax.show figure spec (JSON text)
//              {type: "done", ok, error, errorType, ms}
import { loadPyjax } from "./web/pyjax.mjs";

const post = (m) => self.postMessage(m);
let py = null;
let interrupt = null;
let dataFiles = null; // examples' data files, written into Pyodide's file system before the first run
const HOME = "/home/pyodide/examples";

/** What WebGPU adapter this browser gives, and whether it is a software one (slower than wasm). */
async function probeGPU() {
  if (!self.navigator.gpu) return { available: false, reason: "this browser has no WebGPU (navigator.gpu)" };
  try {
    const adapter = await self.navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
    if (!adapter) return { available: false, reason: "the browser offers no WebGPU adapter" };
    const info = adapter.info || {};
    const name = [info.vendor, info.architecture, info.description].filter(Boolean).join(" ") || "unknown adapter";
    const software = Boolean(adapter.isFallbackAdapter) || /swiftshader|llvmpipe|lavapipe|software/i.test(name);
    return { available: true, name, software };
  } catch (e) {
    return { available: false, reason: String(e && e.message ? e.message : e) };
  }
}

// _site_run: one run of the user's code, with fresh variables (imported modules and compiled
// kernels stay loaded). Stop's KeyboardInterrupt comes back as its traceback text (raised out of
// the task, Pyodide's event loop would also log it to the console); other errors raise.
const SETUP = `
import json, traceback
import pyjax_site
from pyodide.code import eval_code_async
from pyjax import show
show.set_sink(lambda spec: pyjax_site.figure(json.dumps(spec)), interval=0.05)

async def _site_run(code, name, home):
    show.reset()
    variables = {"__name__": "__main__", "__file__": f"{home}/{name}.py"}
    try:
        await eval_code_async(code, variables, filename=f"{name}.py", return_mode="none")
    except KeyboardInterrupt as e:
        return "".join(traceback.format_exception(e))
    finally:
        show.flush()
`;

async function init(msg) {
  const line = (stream) => (text) => post({ type: "out", stream, text });
  const onProgress = (p) => post({ type: "stage", ...p });
  py = await loadPyjax({ stdout: line("stdout"), stderr: line("stderr"), onProgress });
  interrupt = msg.interrupt;
  if (interrupt) py.pyodide.setInterruptBuffer(interrupt);
  py.pyodide.registerJsModule("pyjax_site", { figure: (json) => post({ type: "figure", json }) });
  await py.pyodide.runPythonAsync(SETUP);
  post({ type: "ready", timings: py.timings, gpu: await probeGPU() });
}

const DEVICE = (platform) => `
import json, pyjax
from pyjax.runtime import device as _device
_dev = await pyjax.init_async(${JSON.stringify(platform)})
_info = {"platform": _dev.platform, "fallback": None, "adapter": None}
if ${JSON.stringify(platform)} != _dev.platform:
    _info["fallback"] = _device._unavailable.get(${JSON.stringify(platform)}, "unavailable")
if _dev.platform == "webgpu":
    from pyjax import hosts
    _info["adapter"] = getattr(hosts._webgpu_host, "adapter_info", None)
json.dumps(_info)
`;

async function writeDataFiles() {
  if (dataFiles) return;
  const index = await (await fetch(new URL("./examples.json", import.meta.url))).json();
  const FS = py.pyodide.FS;
  FS.mkdirTree(`${HOME}/data`);
  for (const rel of index.data) {
    const bytes = new Uint8Array(await (await fetch(new URL(`./examples/${rel}`, import.meta.url))).arrayBuffer());
    FS.writeFile(`${HOME}/${rel}`, bytes);
  }
  dataFiles = index.data;
}

async function run({ code, device, name }) {
  const pyodide = py.pyodide;
  if (interrupt) interrupt[0] = 0;
  const t0 = performance.now();
  const scratch = pyodide.globals.get("dict")();
  const runner = pyodide.globals.get("_site_run");
  let t1 = t0;
  try {
    await writeDataFiles();
    const info = JSON.parse(await pyodide.runPythonAsync(DEVICE(device), { globals: scratch }));
    post({ type: "device", info });
    pyodide.FS.chdir(HOME);
    t1 = performance.now();
    const stopped = await runner(code, name, HOME);
    const ms = performance.now() - t1;
    if (stopped) post({ type: "done", ok: false, error: stopped, errorType: "KeyboardInterrupt", ms });
    else post({ type: "done", ok: true, ms, totalMs: performance.now() - t0 });
  } catch (e) {
    const error = String(e && e.message ? e.message : e);
    post({ type: "done", ok: false, error, errorType: e && e.type, ms: performance.now() - t1 });
  } finally {
    if (interrupt) interrupt[0] = 0; // a Stop that came too late must not hit what runs next
    scratch.destroy();
    runner.destroy();
  }
}

self.onmessage = async (ev) => {
  const msg = ev.data;
  try {
    if (msg.type === "init") await init(msg);
    else if (msg.type === "run") await run(msg);
  } catch (e) {
    post({ type: "fatal", error: String(e && e.stack ? e.stack : e) });
  }
};
