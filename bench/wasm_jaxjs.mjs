// jax-js 0.1.25 on its wasm backend in Node, the jax-js side of bench/wasm.py.
// Usage: node bench/wasm_jaxjs.mjs [reps] [only]   (after `npm install` in bench/; `only`: comma-separated
// substrings of workload names, as bench/wasm.py's --only)
// Prints one JSON object: workload -> {wall, cpu} median milliseconds per call, every call run
// to completion (blockUntilReady), after a compile call and a warm-up of at least 1.5 s. `cpu` is this
// process's CPU time (process.cpuUsage), which is steadier than wall time on a busy machine.
import { numpy as np, init, defaultDevice, jit, lax } from "@jax-js/jax";

const reps = Number(process.argv[2] || 5);
const only = process.argv[3] ? process.argv[3].split(",") : null;
const want = (name) => !only || only.some((o) => name.includes(o));
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

function rand(n, seed) {
  let s = seed >>> 0;
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    a[i] = s / 4294967296 - 0.5;
  }
  return a;
}

async function timeit(fn, n = reps) {
  // compile, then warm up for 2 calls and at least 1.5 s (at most 50 calls): V8 runs new wasm
  // code as baseline (Liftoff) code until the optimized code of a background compile arrives
  const t = performance.now();
  for (let w = 0; w < 50 && (w < 3 || performance.now() - t < 1500); w++) await fn();
  const wall = [], cpu = [];
  for (let r = 0; r < n; r++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await fn();
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

const devs = await init("wasm");
if (!devs.includes("wasm")) {
  console.log(JSON.stringify({ error: "jax-js wasm backend unavailable" }));
  process.exit(0);
}
defaultDevice("wasm");
const out = {};

for (const n of [256, 512, 1024, 2048]) {
  if (!want(`matmul ${n}`)) continue;
  const a = np.array(rand(n * n, 1)).reshape([n, n]);
  const b = np.array(rand(n * n, 2)).reshape([n, n]);
  const mm = jit((x, y) => np.matmul(x, y));
  out[`matmul ${n}`] = await timeit(async () => {
    const c = mm(a.ref, b.ref);
    await c.blockUntilReady();
    c.dispose();
  }, n >= 2048 ? Math.min(reps, 3) : reps);
}

const x = np.array(rand(1 << 20, 3));
const chain = jit((v) => np.tanh(v.ref.mul(1.5).add(0.5)).mul(np.exp(v.ref.mul(v.ref).neg())).add(np.sin(v)));
if (want("chain 2^20")) out["chain 2^20"] = await timeit(async () => {
  const c = chain(x.ref);
  await c.blockUntilReady();
  c.dispose();
});

const r = np.array(rand(1024 * 1024, 5)).reshape([1024, 1024]);
const rowsum = jit((v) => np.sum(v, 1));
if (want("row sum 1024x1024")) out["row sum 1024x1024"] = await timeit(async () => {
  const c = rowsum(r.ref);
  await c.blockUntilReady();
  c.dispose();
});
const rowmax = jit((v) => np.max(v, 1));
if (want("row max 1024x1024")) out["row max 1024x1024"] = await timeit(async () => {
  const c = rowmax(r.ref);
  await c.blockUntilReady();
  c.dispose();
});
const colsum = jit((v) => np.sum(v, 0));
if (want("col sum 1024x1024")) out["col sum 1024x1024"] = await timeit(async () => {
  const c = colsum(r.ref);
  await c.blockUntilReady();
  c.dispose();
});

const s = np.array(rand(1000000, 4));
if (want("sort 10^6")) out["sort 10^6"] = await timeit(async () => {
  const c = np.sort(s.ref);
  await c.blockUntilReady();
  c.dispose();
});

// SPD 512x512 matrix: m m^T / 512 + I
const m = np.array(rand(512 * 512, 6)).reshape([512, 512]);
const spd = jit((v) => np.matmul(v.ref, np.transpose(v)).div(512).add(np.eye(512)))(m.ref);
await spd.blockUntilReady();
const chol = jit((v) => lax.linalg.cholesky(v));
if (want("cholesky 512")) out["cholesky 512"] = await timeit(async () => {
  const c = chol(spd.ref);
  await c.blockUntilReady();
  c.dispose();
});

console.log(JSON.stringify(out));
