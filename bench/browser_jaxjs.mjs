// jax-js 0.1.25 side of bench/browser.py: the same workloads as the pyjax side, run to
// completion (blockUntilReady / data()), medians of several timed runs after a warm-up.
import { numpy as np, nn, init, defaultDevice, jit, valueAndGrad, tree } from "@jax-js/jax";

const now = () => performance.now();
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

async function timeit(fn, reps, warm = 2, warmMs = 1500) {
  // compile and warm up: `warm` calls and at least warmMs (at most 50 calls), as the pyjax side
  const t0 = now();
  for (let w = 0; w < 50 && (w < warm || now() - t0 < warmMs); w++) await fn();
  const ts = [];
  for (let r = 0; r < reps; r++) {
    const t = now();
    await fn();
    ts.push(now() - t);
  }
  return median(ts);
}

export async function runJaxJs(device, reps = 5) {
  const devs = await init(device);
  if (!devs.includes(device)) return { error: `jax-js: device ${device} unavailable` };
  defaultDevice(device);
  const out = {};
  const n = 1024;
  const a = np.array(rand(n * n, 1)).reshape([n, n]);
  const b = np.array(rand(n * n, 2)).reshape([n, n]);
  const mm = jit((x, y) => np.matmul(x, y));
  out.matmul1024 = await timeit(async () => { const c = mm(a.ref, b.ref); await c.blockUntilReady(); c.dispose(); }, reps);

  const x = np.array(rand(1 << 20, 3));
  const chain = jit((v) => np.tanh(v.ref.mul(1.5).add(0.5)).mul(np.exp(v.ref.mul(v.ref).neg())).add(np.sin(v)));
  out.chain = await timeit(async () => { const c = chain(x.ref); await c.blockUntilReady(); c.dispose(); }, reps);

  const s = np.array(rand(1000000, 4));
  out.sort = await timeit(async () => { const c = np.sort(s.ref); await c.blockUntilReady(); c.dispose(); }, ...(device === "webgpu" ? [1, 1] : [reps, 2]));

  // MLP train step, batch 128, 784-256-10, relu, softmax cross-entropy, SGD(0.1), jitted.
  const X = np.array(rand(128 * 784, 5)).reshape([128, 784]);
  const labels = new Float32Array(128 * 10);
  for (let i = 0; i < 128; i++) labels[i * 10 + (i % 10)] = 1;
  const Y = np.array(labels).reshape([128, 10]);
  let params = [np.array(rand(784 * 256, 6)).reshape([784, 256]).mul(0.05), np.zeros([256]),
                np.array(rand(256 * 10, 7)).reshape([256, 10]).mul(0.05), np.zeros([10])];
  const loss = (p, xb, yb) => {
    const [w1, b1, w2, b2] = p;
    const h = nn.relu(np.matmul(xb, w1).add(b1));
    const logits = np.matmul(h, w2).add(b2);
    return nn.logSoftmax(logits).mul(yb).sum().neg().div(128);
  };
  const step = jit((p, xb, yb) => {
    const [l, g] = valueAndGrad(loss)(tree.ref(p), xb, yb);
    return [tree.map((pi, gi) => pi.sub(gi.mul(0.1)), p, g), l];
  });
  const runSteps = async (k) => {
    for (let i = 0; i < k; i++) {
      const [np_, l] = step(params, X.ref, Y.ref);
      params = np_;
      if (i === k - 1) await l.blockUntilReady();
      l.dispose();
    }
  };
  await runSteps(3);
  const ts = [];
  for (let r = 0; r < reps; r++) {
    const t = now();
    await runSteps(10);
    ts.push((now() - t) / 10);
  }
  out.mlpStep = median(ts);
  return out;
}

/** The chain workload alone, set up once: an async function running one call (bench/browser.py's
 * interleaved comparison alternates it with pyjax's in one page). */
export async function jaxJsChain(device) {
  await init(device);
  defaultDevice(device);
  const x = np.array(rand(1 << 20, 3));
  const chain = jit((v) => np.tanh(v.ref.mul(1.5).add(0.5)).mul(np.exp(v.ref.mul(v.ref).neg())).add(np.sin(v)));
  return async () => { const c = chain(x.ref); await c.blockUntilReady(); c.dispose(); };
}
