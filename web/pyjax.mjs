// Boots Pyodide (self-hosted from the npm `pyodide` package), installs the locally built pyjax
// wheel and returns an object to run Python. `loadPyjax({worker: true})` does the same inside a
// module Web Worker and returns a proxy with the same methods, so long computations do not block
// the page. A convenience only: the wheel loads its own JavaScript (pyjax/hosts/shims/) when a
// browser backend starts, so a plain Pyodide page needs nothing of this file.

const here = new URL(".", import.meta.url);

/**
 * @param {object} opts
 * @param {string} [opts.indexURL]  Pyodide files (default: ../pyodide/ beside web/, as laid out by `make site`)
 * @param {string} [opts.wheelURL]  the pyjax wheel (default: ./wheels/pyjax-latest.whl next to the page)
 * @param {boolean} [opts.worker]   run in a module Web Worker
 * @param {function} [opts.stdout]  receives printed lines
 * @param {number} [opts.wasmThreads]  threads for wasm kernels (default min(hardwareConcurrency, 8)
 *   where the page is cross-origin isolated, else 1; 1 turns threads off). Python's
 *   PYJAX_WASM_THREADS environment variable, read when the wasm device starts, overrides it.
 * @param {function} [opts.onProgress]  start-up progress, called with {stage, loaded, total}: stage
 *   "pyodide" (starting Pyodide), "wheel" (downloading the pyjax wheel; loaded and total in bytes,
 *   total 0 where the server sends no length), "import" (installing and importing pyjax). Each
 *   stage reports loaded = 0 first and loaded = total (1 for the stages counted in steps) last.
 */
export async function loadPyjax(opts = {}) {
  if (opts.worker) return loadInWorker(opts);
  const indexURL = opts.indexURL || new URL("../pyodide/", here).href;
  const wheelURL = opts.wheelURL || (await defaultWheel(new URL("../wheels/", here)));
  const progress = opts.onProgress || (() => {});
  progress({ stage: "pyodide", loaded: 0, total: 1 });
  const { loadPyodide } = await import(new URL("pyodide.mjs", indexURL).href);
  const t0 = performance.now();
  const pyodide = await loadPyodide({ indexURL, stdout: opts.stdout, stderr: opts.stderr || opts.stdout });
  const tPyodide = performance.now() - t0;
  progress({ stage: "pyodide", loaded: 1, total: 1 });
  const wheel = await download(wheelURL, (loaded, total) => progress({ stage: "wheel", loaded, total }));
  const t1 = performance.now();
  progress({ stage: "import", loaded: 0, total: 1 });
  // Unpacks the wheel into site-packages, imports pyjax and evaluates the wheel's own shims (the
  // same path as in any page); the wasm pool's workers then start while the caller goes on (see
  // pyjax/hosts/shims/wasm.js).
  const sitePackages = pyodide.runPython("import sysconfig\nsysconfig.get_path('purelib')");
  pyodide.unpackArchive(wheel, "wheel", { extractDir: sitePackages });
  const shims = await pyodide.runPythonAsync(
    "import importlib\nimportlib.invalidate_caches()\nimport pyjax\nfrom pyjax.hosts.browser import js_shims\njs_shims()",
  );
  if (opts.wasmThreads !== undefined) shims.WasmManager.defaultThreads = opts.wasmThreads;
  shims.prestartWorkers();
  const tImport = performance.now() - t1;
  progress({ stage: "import", loaded: 1, total: 1 });
  return {
    pyodide,
    timings: { pyodideMs: tPyodide, importMs: tImport },
    /** Run Python (top-level await allowed); resolves to the value of the last expression. */
    async run(code) {
      const r = await pyodide.runPythonAsync(code);
      return r && typeof r.toJs === "function" ? r.toJs({ dict_converter: Object.fromEntries }) : r;
    },
  };
}

/** The bytes at url, reporting (loaded, total) as they arrive (total 0 when the length is unknown). */
async function download(url, report) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot fetch ${url}: HTTP ${response.status}`);
  const total = Number(response.headers.get("Content-Length")) || 0;
  const chunks = [];
  let loaded = 0;
  report(0, total);
  for (const reader = response.body.getReader(); ; ) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    report(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  report(loaded, total || loaded);
  return bytes;
}

/** The wheel named by wheels/index.json (written by site/build.py). */
async function defaultWheel(dir) {
  const index = await (await fetch(new URL("index.json", dir))).json();
  return new URL(index.pyjax, dir).href;
}

async function loadInWorker(opts) {
  const worker = new Worker(new URL("pyjax-worker.mjs", import.meta.url), { type: "module" });
  let next = 0;
  const waiting = new Map();
  worker.onmessage = (ev) => {
    const { id, ok, value, error, line, progress } = ev.data;
    if (line !== undefined) {
      if (opts.stdout) opts.stdout(line);
      return;
    }
    if (progress !== undefined) {
      if (opts.onProgress) opts.onProgress(progress);
      return;
    }
    const w = waiting.get(id);
    waiting.delete(id);
    ok ? w.resolve(value) : w.reject(new Error(error));
  };
  const call = (kind, payload) =>
    new Promise((resolve, reject) => {
      const id = next++;
      waiting.set(id, { resolve, reject });
      worker.postMessage({ id, kind, payload });
    });
  const { stdout, stderr, onProgress, worker: _w, ...plain } = opts;
  const timings = await call("init", plain);
  return { worker, timings, run: (code) => call("run", code) };
}
