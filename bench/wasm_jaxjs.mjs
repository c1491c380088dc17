// jax-js 0.1.25 on its wasm backend in Node, the jax-js side of bench/wasm.py and bench/run.py.
// Usage: node bench/wasm_jaxjs.mjs [reps] [only]   (after `npm install` in bench/; `only`: comma-separated
// substrings of workload names, as bench/wasm.py's --only)
// Prints one JSON object: workload -> {wall, cpu} median milliseconds per call, every call run
// to completion (blockUntilReady), after a compile call and a warm-up of at least 1.5 s. `cpu` is this
// process's CPU time (process.cpuUsage), which is steadier than wall time on a busy machine.
//        node bench/wasm_jaxjs.mjs --serve
// reads lines `{"name": ..., "n": ...}` on stdin and answers each with one line {"ms": [...]}: the
// milliseconds of each of n calls (a first request per workload is its warm-up), so that bench/run.py
// can take turns with pyjax in rounds.
import { createInterface } from "node:readline";
import { numpy as np, nn, init, defaultDevice, jit, lax, valueAndGrad, tree } from "@jax-js/jax";

const serve = process.argv[2] === "--serve";
const reps = serve ? 0 : Number(process.argv[2] || 5);
const only = !serve && process.argv[3] ? process.argv[3].split(",") : null;
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

// name -> setup() returning an async function that runs one call to completion; set up lazily.
const call = (f, ...args) => async () => {
  const c = f(...args.map((a) => a.ref));
  await c.blockUntilReady();
  c.dispose();
};
const square = (n, seed) => np.array(rand(n * n, seed)).reshape([n, n]);
const WORKLOADS = {};
for (const n of [256, 512, 1024, 2048]) {
  WORKLOADS[`matmul ${n}`] = () => call(jit((x, y) => np.matmul(x, y)), square(n, 1), square(n, 2));
}
WORKLOADS["chain 2^20"] = () =>
  call(jit((v) => np.tanh(v.ref.mul(1.5).add(0.5)).mul(np.exp(v.ref.mul(v.ref).neg())).add(np.sin(v))),
       np.array(rand(1 << 20, 3)));
WORKLOADS["row sum 1024x1024"] = () => call(jit((v) => np.sum(v, 1)), square(1024, 5));
WORKLOADS["row max 1024x1024"] = () => call(jit((v) => np.max(v, 1)), square(1024, 5));
WORKLOADS["col sum 1024x1024"] = () => call(jit((v) => np.sum(v, 0)), square(1024, 5));
WORKLOADS["col sum 2048x2048"] = () => call(jit((v) => np.sum(v, 0)), square(2048, 8));
WORKLOADS["full sum 2048x2048"] = () => call(jit((v) => np.sum(v)), square(2048, 8));
WORKLOADS["sort 10^6"] = () => call((v) => np.sort(v), np.array(rand(1000000, 4)));
WORKLOADS["cholesky 512"] = () => {
  // SPD 512x512 matrix: m m^T / 512 + I
  const spd = jit((v) => np.matmul(v.ref, np.transpose(v)).div(512).add(np.eye(512)))(square(512, 6));
  return call(jit((v) => lax.linalg.cholesky(v)), spd);
};
// MLP train step as bench/run.py's (128, 784-256-10, relu, softmax cross-entropy, SGD 0.1): one
// call is 10 steps with the last loss awaited.
WORKLOADS["mlp step"] = () => {
  const X = np.array(rand(128 * 784, 5)).reshape([128, 784]);
  const labels = new Float32Array(128 * 10);
  for (let i = 0; i < 128; i++) labels[i * 10 + (i % 10)] = 1;
  const Y = np.array(labels).reshape([128, 10]);
  let params = [np.array(rand(784 * 256, 6)).reshape([784, 256]).mul(0.1), np.zeros([256]),
                np.array(rand(256 * 10, 7)).reshape([256, 10]).mul(0.1), np.zeros([10])];
  const loss = (p, xb, yb) => {
    const [w1, b1, w2, b2] = p;
    const h = nn.relu(np.matmul(xb, w1).add(b1));
    return nn.logSoftmax(np.matmul(h, w2).add(b2)).mul(yb).sum().neg().div(128);
  };
  const step = jit((p, xb, yb) => {
    const [l, g] = valueAndGrad(loss)(tree.ref(p), xb, yb);
    return [tree.map((pi, gi) => pi.sub(gi.mul(0.1)), p, g), l];
  });
  return async () => {
    for (let i = 0; i < 10; i++) {
      const [np_, l] = step(params, X.ref, Y.ref);
      params = np_;
      if (i === 9) await l.blockUntilReady();
      l.dispose();
    }
  };
};

if (serve) {
  const ready = {};
  for await (const line of createInterface({ input: process.stdin })) {
    const { name, n } = JSON.parse(line);
    ready[name] ??= WORKLOADS[name]();
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      await ready[name]();
      ms.push(performance.now() - t0);
    }
    console.log(JSON.stringify({ ms }));
  }
} else {
  const out = {};
  for (const [name, setup] of Object.entries(WORKLOADS)) {
    if (want(name)) out[name] = await timeit(setup(), name === "matmul 2048" ? Math.min(reps, 3) : reps);
  }
  console.log(JSON.stringify(out));
}
