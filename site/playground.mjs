// The playground page: a gallery of examples, a CodeMirror editor, Run/Stop, streaming output and
// live figures. Python runs in a Web Worker (worker.mjs); the page only edits, draws and talks to it.
//
// Test hook: window.pyjaxSite = { examples(), run(name, device) }; run resolves to
// { ok, stdout, error, figures, ms }: stdout its printed lines, error the trimmed traceback (or null),
// figures the number of non-empty figures drawn, ms the time the code ran (device start-up excluded).
import { EditorView, basicSetup, keymap, Prec, StateEffect, StateField, Decoration, indentUnit, python } from "./vendor.js";
import { Figures } from "./figures.mjs";

const $ = (id) => document.getElementById(id);
const STORE = "pyjax-site:";
// Start-up stages (web/pyjax.mjs's onProgress): the bar's span for each, and its label.
const STAGES = {
  pyodide: [0, 45, "Starting Pyodide…"],
  wheel: [45, 75, "Fetching the pyjax wheel…"],
  import: [75, 95, "Installing and importing pyjax…"],
};
const STOP_GRACE_MS = 3000; // after this, Stop restarts Python instead of waiting for it

let catalog = { examples: [], data: [] };
let current = null; // {name, title, code}: what the editor holds
let worker = null;
let interrupt = null; // Int32Array on a SharedArrayBuffer: Pyodide's interrupt buffer
let ready = null; // a promise, resolved when Python is up
let running = null; // the run in flight: {resolve, stdout, name, t0, stopTimer}
let gpu = null; // what the worker saw of WebGPU
const figures = new Figures($("figures"));

// ---- editor ---------------------------------------------------------------------------------

const markError = StateEffect.define();
const errorLines = StateField.define({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(markError)) continue;
      deco = Decoration.none;
      if (e.value && e.value <= tr.state.doc.lines) {
        deco = Decoration.set([Decoration.line({ class: "cm-error-line" }).range(tr.state.doc.line(e.value).from)]);
      }
    }
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

let saveTimer = 0;
const editor = new EditorView({
  parent: $("editor"),
  extensions: [
    Prec.highest(keymap.of([{ key: "Mod-Enter", run: () => (runEditor(), true) }])),
    basicSetup,
    python(),
    indentUnit.of("    "),
    errorLines,
    EditorView.updateListener.of((u) => {
      if (!u.docChanged) return;
      clearTimeout(saveTimer);
      saveTimer = setTimeout(() => {
        saveEdits();
        if (location.hash && code() !== sharedCode) clearHash(); // the link no longer says what the editor holds
      }, 300);
    }),
  ],
});

const code = () => editor.state.doc.toString();
function setCode(text) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text }, effects: markError.of(null) });
}

function saveEdits() {
  if (!current) return;
  const original = catalog.examples.find((e) => e.name === current.name)?.code;
  if (code() === original) localStorage.removeItem(STORE + "code:" + current.name);
  else localStorage.setItem(STORE + "code:" + current.name, code());
  $("edited").hidden = original === undefined || code() === original;
}

let sharedCode = null; // the code of the share link in the address bar
function clearHash() {
  sharedCode = null;
  history.replaceState(null, "", location.pathname + location.search);
}

// ---- gallery --------------------------------------------------------------------------------

function showGallery() {
  const cards = catalog.examples.map((e) => {
    const b = document.createElement("button");
    b.className = "card";
    b.dataset.name = e.name;
    b.innerHTML = "<h3></h3><p></p>";
    b.querySelector("h3").textContent = e.title;
    b.querySelector("p").textContent = e.description;
    b.onclick = () => openExample(e.name);
    return b;
  });
  const bench = document.createElement("a");
  bench.className = "card bench-card";
  bench.href = "bench.html";
  bench.innerHTML = "<h3>pyjax vs jax-js</h3><p>The same workloads side by side in this browser, on wasm and webgpu, with the ratios as bars.</p>";
  $("gallery").replaceChildren(...cards, bench);
}

function openExample(name, { original = false } = {}) {
  const e = catalog.examples.find((x) => x.name === name);
  if (!e) throw new Error(`no example named ${name}`);
  if (current) saveEdits();
  if (location.hash) clearHash();
  current = { name: e.name, title: e.title };
  const saved = original ? null : localStorage.getItem(STORE + "code:" + name);
  setCode(saved ?? e.code);
  if (original) localStorage.removeItem(STORE + "code:" + name);
  $("example-title").textContent = e.title;
  $("edited").hidden = saved === null;
  localStorage.setItem(STORE + "example", name);
  for (const c of $("gallery").children) c.classList.toggle("active", c.dataset.name === name);
}

$("revert").onclick = () => current && openExample(current.name, { original: true });

// ---- output ---------------------------------------------------------------------------------

function print(text, cls) {
  const out = $("output");
  const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
  const span = document.createElement("span");
  if (cls) span.className = cls;
  span.textContent = text + "\n";
  out.append(span);
  if (atEnd) out.scrollTop = out.scrollHeight;
}

function setStatus(text, cls = "") {
  $("status").textContent = text;
  $("status").className = cls;
}

/** Pyodide's traceback without its own and pyjax's frames: the frames in the user's file, and the error. */
export function trimTraceback(text, filename) {
  const out = [];
  let keep = true;
  let line = null;
  for (const l of text.replace(/\n+$/, "").split("\n")) {
    const m = /^ {2}File "([^"]+)", line (\d+)/.exec(l);
    if (m) {
      keep = m[1] === filename;
      if (keep) line = Number(m[2]);
    } else if (!l.startsWith("    ")) keep = true;
    if (keep) out.push(l);
  }
  return { text: out.join("\n"), line };
}

// ---- the worker -----------------------------------------------------------------------------

function startWorker() {
  const sab = self.crossOriginIsolated && typeof SharedArrayBuffer !== "undefined";
  interrupt = sab ? new Int32Array(new SharedArrayBuffer(4)) : null;
  worker = new Worker(new URL("./worker.mjs", import.meta.url), { type: "module" });
  $("startup").className = "";
  $("run").disabled = true;
  const t0 = performance.now();
  const tick = setInterval(() => {
    $("startup-text").dataset.elapsed = ((performance.now() - t0) / 1000).toFixed(1);
    $("startup-text").textContent = `${$("startup-text").dataset.label || "Starting…"} ${$("startup-text").dataset.elapsed} s`;
  }, 100);
  ready = new Promise((resolve, reject) => {
    worker.onmessage = (ev) => {
      const m = ev.data;
      if (m.type === "stage") {
        const [from, to, label] = STAGES[m.stage];
        $("startup-fill").style.width = from + ((to - from) * m.loaded) / (m.total || Infinity) + "%";
        const mb = (n) => (n / 1e6).toFixed(1);
        $("startup-text").dataset.label =
          m.stage === "wheel" && m.total ? `${label} ${mb(m.loaded)} / ${mb(m.total)} MB` : label;
      } else if (m.type === "ready") {
        clearInterval(tick);
        gpu = m.gpu;
        describeDevices();
        $("startup-fill").style.width = "100%";
        $("startup").className = "ready";
        const t = m.timings;
        setStatus(`ready: Pyodide ${(t.pyodideMs / 1000).toFixed(1)} s, import pyjax ${(t.importMs / 1000).toFixed(2)} s`);
        worker.onmessage = onMessage;
        $("run").disabled = false;
        resolve();
      } else if (m.type === "fatal") {
        clearInterval(tick);
        $("startup").className = "failed";
        $("startup-text").textContent = "Python failed to start: " + m.error;
        reject(new Error(m.error));
      } else if (m.type === "out" && m.stream === "stderr") print(m.text, "stderr"); // not Pyodide's "Loading…"
    };
  });
  worker.onerror = (e) => {
    $("startup").className = "failed";
    $("startup-text").textContent = `Python's worker failed: ${e.message || "could not load worker.mjs"}`;
  };
  worker.postMessage({ type: "init", interrupt });
}

function onMessage(ev) {
  const m = ev.data;
  if (m.type === "out") {
    print(m.text, m.stream === "stderr" ? "stderr" : "");
    if (running && m.stream === "stdout") running.stdout.push(m.text);
  } else if (m.type === "figure") figures.update(m.json);
  else if (m.type === "device") showDevice(m.info);
  else if (m.type === "done") finishRun(m);
  else if (m.type === "fatal") finishRun({ ok: false, error: m.error, ms: 0 });
}

// ---- devices --------------------------------------------------------------------------------

function describeDevices() {
  const opt = $("device").querySelector('option[value="webgpu"]');
  if (!gpu.available) {
    opt.textContent = "webgpu (unavailable)";
    opt.title = gpu.reason;
  } else if (gpu.software) {
    opt.textContent = "webgpu (software: slower)";
    opt.title = gpu.name;
  } else {
    opt.textContent = "webgpu (GPU)";
    opt.title = gpu.name;
  }
  const asked = new URLSearchParams(location.hash.slice(1)).get("device") || localStorage.getItem(STORE + "device");
  const fallback = gpu.available && !gpu.software ? "webgpu" : "wasm";
  $("device").value = [...$("device").options].some((o) => o.value === asked) ? asked : fallback;
  const threads = self.crossOriginIsolated ? `${Math.min(navigator.hardwareConcurrency || 1, 8)} threads` : "1 thread: the page is not cross-origin isolated";
  const why = !gpu.available
    ? `WebGPU: ${gpu.reason}, so the default is wasm.`
    : gpu.software
      ? `WebGPU here is a software adapter (${gpu.name}), slower than wasm, so the default is wasm.`
      : `WebGPU adapter: ${gpu.name}.`;
  $("device-info").textContent = `wasm: ${threads}. ${why}`;
}

let deviceText = "";
let platform = "";
function showDevice(info) {
  platform = info.platform;
  let text = `running on ${info.platform}`;
  if (info.adapter) text += ` (${info.adapter.device}${info.adapter.fallback ? ", software fallback adapter" : ""})`;
  if (info.fallback) {
    text = `asked for ${$("device").value}, fell back to ${info.platform}: ${info.fallback}`;
    print(text, "note");
  }
  deviceText = text;
  setStatus(text, "running");
}

$("device").onchange = () => localStorage.setItem(STORE + "device", $("device").value);

// ---- running --------------------------------------------------------------------------------

async function runCode(text, device, name) {
  await ready;
  if (running) throw new Error("a run is already in progress");
  $("output").replaceChildren();
  figures.clear();
  editor.dispatch({ effects: markError.of(null) });
  $("run").disabled = true;
  $("stop").disabled = false;
  setStatus(`starting ${device}…`, "running");
  deviceText = `starting ${device}…`;
  platform = device;
  return new Promise((resolve) => {
    const t0 = performance.now();
    const tick = setInterval(() => setStatus(`${deviceText} · ${((performance.now() - t0) / 1000).toFixed(1)} s`, "running"), 250);
    running = { resolve, stdout: [], name, t0, tick };
    worker.postMessage({ type: "run", code: text, device, name });
  });
}

function finishRun(m) {
  const r = running;
  if (!r) return;
  running = null;
  clearTimeout(r.stopTimer);
  clearInterval(r.tick);
  figures.flush();
  $("run").disabled = false;
  $("stop").disabled = true;
  let error = null;
  if (!m.ok) {
    const filename = `${r.name}.py`;
    const { text, line } = trimTraceback(m.error, filename);
    error = text;
    if (m.errorType === "KeyboardInterrupt") print(`Stopped${line ? ` at line ${line}` : ""}.`, "note");
    else print(text, "error");
    if (/No module named '(matplotlib|pyplot)/.test(text)) {
      print("matplotlib is not loaded in this playground: draw with `from pyjax import show` (show.line, show.scatter, show.image, show.heatmap, show.hist; see the examples).", "note");
    }
    if (line) {
      editor.dispatch({ effects: [markError.of(line), EditorView.scrollIntoView(editor.state.doc.line(line).from, { y: "center" })] });
    }
  }
  const secs = (m.ms / 1000).toFixed(2);
  setStatus(m.ok ? `done in ${secs} s on ${platform}` : m.errorType === "KeyboardInterrupt" ? `stopped after ${secs} s` : `failed after ${secs} s`);
  r.resolve({ ok: m.ok, stdout: r.stdout.join("\n"), error, figures: figures.count(), ms: m.ms, stopped: m.errorType === "KeyboardInterrupt" });
}

function runEditor() {
  if (running || $("run").disabled) return;
  runCode(code(), $("device").value, current ? current.name : "main");
}

function stop() {
  if (!running) return;
  deviceText = "stopping…";
  setStatus(deviceText, "running");
  if (interrupt) interrupt[0] = 2; // SIGINT: Python raises KeyboardInterrupt at its next check
  running.stopTimer = setTimeout(restartPython, interrupt ? STOP_GRACE_MS : 0);
}

function restartPython() {
  worker.terminate();
  const why = interrupt ? `Python did not stop within ${STOP_GRACE_MS / 1000} s` : "This page is not cross-origin isolated (no SharedArrayBuffer to interrupt Python)";
  print(`${why}, so Python was restarted: variables and compiled kernels are gone.`, "note");
  finishRun({ ok: false, error: "KeyboardInterrupt", errorType: "KeyboardInterrupt", ms: performance.now() - running.t0 });
  startWorker();
}

$("run").onclick = runEditor;
$("stop").onclick = stop;

// ---- share links ----------------------------------------------------------------------------

const b64url = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const unb64url = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));

async function pack(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return b64url(Uint8Array.from(s, (c) => c.charCodeAt(0)));
}

async function unpack(s) {
  const stream = new Blob([unb64url(s)]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return await new Response(stream).text();
}

async function share() {
  const text = code();
  const hash = new URLSearchParams({ device: $("device").value, code: await pack(text) });
  history.replaceState(null, "", "#" + hash);
  sharedCode = text;
  try {
    await navigator.clipboard.writeText(location.href);
    setStatus("link copied to the clipboard");
  } catch {
    setStatus("link in the address bar: copy it from there");
  }
}
$("share").onclick = share;

async function openSharedLink() {
  const params = new URLSearchParams(location.hash.slice(1));
  if (!params.get("code")) return false;
  let text;
  try {
    text = await unpack(params.get("code"));
  } catch {
    print("This share link is damaged: its code could not be read.", "error");
    return false;
  }
  if (current) saveEdits();
  sharedCode = text;
  openScratch(text);
  const device = params.get("device");
  if ([...$("device").options].some((o) => o.value === device)) $("device").value = device;
  print("Shared code loaded. Read it, then press Run to run it.", "note");
  return true;
}

/** Code that is no example of the gallery (from a share link): kept in local storage as "shared". */
function openScratch(text) {
  setCode(text);
  localStorage.setItem(STORE + "code:shared", text);
  localStorage.setItem(STORE + "example", "shared");
  current = { name: "shared", title: "Shared code" };
  $("example-title").textContent = "Shared code";
  for (const c of $("gallery").children) c.classList.remove("active");
  $("edited").hidden = true;
}

// ---- start ----------------------------------------------------------------------------------

window.pyjaxSite = {
  examples: () => catalog.examples.map(({ name, title, description }) => ({ name, title, description })),
  async run(name, device = "wasm") {
    await ready;
    openExample(name, { original: true });
    $("device").value = device;
    return runCode(code(), device, name);
  },
  stop,
  ready: () => ready,
  code,
  setCode,
};

// A share link pasted into this tab's address bar changes only the hash: open it the same way.
window.addEventListener("hashchange", () => {
  if (!running) openSharedLink();
});

async function main() {
  startWorker();
  catalog = await (await fetch("examples.json")).json();
  showGallery();
  if (!(await openSharedLink())) {
    const last = localStorage.getItem(STORE + "example");
    const scratch = localStorage.getItem(STORE + "code:shared");
    if (last === "shared" && scratch !== null) return openScratch(scratch);
    const first = catalog.examples.find((e) => e.name === last) || catalog.examples.find((e) => e.name === "quickstart") || catalog.examples[0];
    if (first) openExample(first.name);
  }
}

main().catch((e) => print("The playground failed to start: " + e, "error"));
