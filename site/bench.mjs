// pyjax vs jax-js side by side in this page: the workloads of bench/browser_pyjax.py and
// bench/browser_jaxjs.mjs (one definition each, shared with `python bench/browser.py`, which drives
// this page), run in turns on wasm and webgpu; each row shows both times and jax-js / pyjax as a bar.
//
// window.pyjaxBench = {
//   pair(device, names, rounds, wasmThreads, withJaxJs, warmMs)  -> {name: [[jaxjsMs, pyjaxMs], ...]}
//     (for LOOPS names the first time is pyjax's walked reference, not jax-js's)
//   run({devices, names, rounds, warmMs})  -> fills the table; resolves to the rows shown (names: a list,
//                                             or {device: list})
//   startup(), env()
// }
import { jaxJsWorkloads } from "./bench/browser_jaxjs.mjs";
import { loadPyjax } from "./web/pyjax.mjs";

export const WORKLOADS = {
  matmul1024: "f32 matmul 1024², jit",
  chain: "fused elementwise chain 2^20, jit",
  rowSum: "row sums of squares 1024², jit",
  mlpStep: "MLP train step (128, 784-256-10), jit",
  sort: "sort 10^6 f32",
};
const PER_CALL = { mlpStep: 10 }; // the MLP's call is 10 steps: times shown per step
// Workloads jax-js cannot run (it has no loops): their reference is pyjax's "<name>Walk" (the plan
// walked in Python) instead. `python bench/browser.py` shows them; the page's table does not.
export const LOOPS = {
  fori: "jitted fori_loop, 10k steps on 16 f32",
  ode: "odeint, MLP vector field, t in [0, 50]",
};

const med = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/**
 * One page, both libraries (or pyjax alone: withJaxJs false), workloads one after another. Both
 * warm up (>= 2 calls and warmMs, at most 5000: V8 tiers a wasm kernel up after enough calls, so a
 * cap of 50 calls left sub-millisecond kernels on baseline code), then `rounds` rounds in which each runs the same
 * number of calls back to back, who goes first alternating; a round gives one median per library.
 */
async function pair(device, names, rounds, wasmThreads = 0, withJaxJs = true, warmMs = 1500, onRow = null) {
  const jj = withJaxJs ? await jaxJsWorkloads(device) : null;
  const py = await pyjax(wasmThreads);
  await py.run(`DEVICE = ${JSON.stringify(device)}\n` + (await (await fetch("./bench/browser_pyjax.py")).text()));
  const out = {};
  for (const name of names) {
    const q = JSON.stringify(name);
    let tj = 0;
    if (jj && name in LOOPS) {
      tj = Number(await py.run(`await warm(${JSON.stringify(name + "Walk")}, ${warmMs / 1000})`));
    } else if (jj) {
      const t0 = performance.now();
      for (let i = 0; i < 5000 && (i < 2 || performance.now() - t0 < warmMs); i++) {
        const t = performance.now();
        await jj[name]();
        tj = performance.now() - t;
      }
    }
    const tp = Number(await py.run(`await warm(${q}, ${warmMs / 1000})`));
    // about 0.4 s per library per round, 1-100 calls; fewer rounds for calls of seconds
    const slow = Math.max(tj, tp);
    const calls = Math.max(1, Math.min(100, Math.round(400 / slow)));
    const nr = slow > 10000 ? 1 : slow > 1000 ? Math.min(rounds, 3) : rounds;
    const jaxJs = async () => {
      if (name in LOOPS) return Number(await py.run(`await timed(${JSON.stringify(name + "Walk")}, ${calls})`));
      const ts = [];
      for (let i = 0; i < calls; i++) {
        const t = performance.now();
        await jj[name]();
        ts.push(performance.now() - t);
      }
      return med(ts);
    };
    const rows = [];
    for (let r = 0; r < nr; r++) {
      let j = null;
      if (jj && r % 2 === 0) j = await jaxJs();
      const p = Number(await py.run(`await timed(${q}, ${calls})`));
      if (jj && r % 2 === 1) j = await jaxJs();
      rows.push([j, p]);
    }
    out[name] = rows;
    if (onRow) onRow(name, rows);
  }
  if (device === "wasm") out.threads = JSON.parse(await py.run("import json; json.dumps(wasm_threads())"));
  return out;
}

// pyjax loads once per page and thread setting (Pyodide is big); the workloads file re-runs per device.
const loaded = new Map();
function pyjax(wasmThreads) {
  if (!loaded.has(wasmThreads)) loaded.set(wasmThreads, loadPyjax(wasmThreads ? { wasmThreads } : {}));
  return loaded.get(wasmThreads);
}

// ---- the page ---------------------------------------------------------------------------------

const $ = (id) => document.getElementById(id);

function row(device, name) {
  const id = `row-${device}-${name}`;
  let tr = $(id);
  if (!tr) {
    tr = document.createElement("tr");
    tr.id = id;
    tr.innerHTML =
      '<td class="name"></td><td class="dev"></td><td class="t py">…</td><td class="t jj">…</td>' +
      '<td class="ratio"><div class="ratio-bar"><span class="one"></span><span class="fill"></span></div><span class="x"></span></td>';
    tr.querySelector(".name").textContent = WORKLOADS[name];
    tr.querySelector(".dev").textContent = device;
    $("rows").append(tr);
  }
  return tr;
}

/** Both times (per step for the MLP) and the ratio jax-js / pyjax as a bar on a log scale (1x in the middle). */
function show(device, name, rounds) {
  const per = PER_CALL[name] || 1;
  const ms = (x) => `${(x / per).toFixed(x / per < 10 ? 2 : 1)} ms`;
  const ratio = med(rounds.map(([j, p]) => j / p));
  const tr = row(device, name);
  tr.querySelector(".py").textContent = ms(med(rounds.map(([, p]) => p)));
  tr.querySelector(".jj").textContent = ms(med(rounds.map(([j]) => j)));
  const fill = tr.querySelector(".fill");
  const half = Math.min(1, Math.abs(Math.log10(ratio)) / 2); // 100x fills one side
  fill.style.width = `${half * 50}%`;
  fill.style.left = ratio >= 1 ? "50%" : `${50 - half * 50}%`;
  fill.className = `fill ${ratio >= 1 ? "faster" : "slower"}`;
  tr.querySelector(".x").textContent =
    ratio >= 1 ? `pyjax ${ratio.toFixed(2)}× faster` : `jax-js ${(1 / ratio).toFixed(2)}× faster`;
  tr.dataset.ratio = String(ratio);
}

async function run({ devices = ["wasm", "webgpu"], names = Object.keys(WORKLOADS), rounds = 5, warmMs = 1500 } = {}) {
  $("run").disabled = true;
  $("rows").replaceChildren();
  const shown = [];
  try {
    for (const device of devices) {
      const list = Array.isArray(names) ? names : names[device]; // or per device: {wasm: [...], ...}
      for (const name of list) row(device, name);
      $("status").textContent = `${device}: pyjax and jax-js taking turns…`;
      await pair(device, list, rounds, 0, true, warmMs, (name, rounds) => {
        show(device, name, rounds);
        shown.push({ device, name, rounds });
      });
    }
    $("status").textContent = "done";
  } catch (e) {
    $("status").textContent = `failed: ${e && e.message ? e.message : e}`;
    throw e;
  } finally {
    $("run").disabled = false;
  }
  return shown;
}

async function startup() {
  const t0 = performance.now();
  const py = await loadPyjax();
  return { total: performance.now() - t0, ...py.timings };
}

const env = () => ({ cores: navigator.hardwareConcurrency, isolated: crossOriginIsolated });

window.pyjaxBench = { pair, run, startup, env };

if ($("run")) {
  $("run").onclick = () => {
    const devices = [...document.querySelectorAll("input[name=device]:checked")].map((c) => c.value);
    run({ devices, rounds: Number($("rounds").value) || 5 }).catch(() => {});
  };
  $("run").disabled = false;
}
