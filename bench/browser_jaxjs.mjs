// jax-js 0.1.25 side of the side-by-side benchmark (site/bench.html, driven by bench/browser.py): the
// same workloads as bench/browser_pyjax.py, each an async function that runs one call to completion
// (blockUntilReady), set up once so that the page can alternate them with pyjax's.
import { numpy as np, nn, init, defaultDevice, jit, valueAndGrad, tree } from "@jax-js/jax";

function rand(n, seed) {
  let s = seed >>> 0;
  const a = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (s * 1664525 + 1013904223) >>> 0;
    a[i] = s / 4294967296 - 0.5;
  }
  return a;
}

export async function jaxJsWorkloads(device) {
  const devs = await init(device);
  if (!devs.includes(device)) throw new Error(`jax-js: device ${device} unavailable`);
  defaultDevice(device);
  const w = {};
  const n = 1024;
  const a = np.array(rand(n * n, 1)).reshape([n, n]);
  const b = np.array(rand(n * n, 2)).reshape([n, n]);
  const mm = jit((x, y) => np.matmul(x, y));
  w.matmul1024 = async () => { const c = mm(a.ref, b.ref); await c.blockUntilReady(); c.dispose(); };
  const rowSum = jit((m) => np.sum(m.ref.mul(m), 1));
  w.rowSum = async () => { const c = rowSum(a.ref); await c.blockUntilReady(); c.dispose(); };

  // MLP train step, batch 128, 784-256-10, relu, softmax cross-entropy, SGD(0.1), jitted; one
  // call is 10 steps with the loss awaited after the last (bench/browser.py divides by 10).
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
  w.mlpStep = async () => {
    for (let i = 0; i < 10; i++) {
      const [np_, l] = step(params, X.ref, Y.ref);
      params = np_;
      if (i === 9) await l.blockUntilReady();
      l.dispose();
    }
  };

  const x = np.array(rand(1 << 20, 3));
  const chain = jit((v) => np.tanh(v.ref.mul(1.5).add(0.5)).mul(np.exp(v.ref.mul(v.ref).neg())).add(np.sin(v)));
  w.chain = async () => { const c = chain(x.ref); await c.blockUntilReady(); c.dispose(); };

  const s = np.array(rand(1000000, 4));
  w.sort = async () => { const c = np.sort(s.ref); await c.blockUntilReady(); c.dispose(); };
  return w;
}
