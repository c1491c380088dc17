// The playground: edit a pyjax example, pick a backend, run it, see output and timings.
import { loadPyjax } from "./web/pyjax.mjs";

const EXAMPLES = {
  "grad + jit": `import pyjax as jax
import pyjax.numpy as jnp

def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

x = jnp.linspace(-1, 1, 64).reshape(16, 4)
y = jnp.sin(x.sum(axis=1, keepdims=True))
w = jnp.zeros((4, 1))
step = jax.jit(lambda w: w - 0.5 * jax.grad(loss)(w, x, y))
for i in range(50):
    w = step(w)
print("loss", float(loss(w, x, y)))
print("backend", jax.default_backend())`,
  "vmap + random": `import pyjax as jax
import pyjax.numpy as jnp
xs = jnp.arange(12.0).reshape(3, 4)
print(jax.vmap(lambda r: r / jnp.linalg.norm(r) if hasattr(jnp, "linalg") else r / jnp.sqrt((r*r).sum()))(xs))`,
  "control flow": `import pyjax as jax
from pyjax import lax
def fib(n):
    return lax.fori_loop(0, n, lambda i, ab: (ab[1], ab[0] + ab[1]), (0, 1))[0]
print(jax.jit(fib, static_argnums=0)(20))`,
};

const $ = (id) => document.getElementById(id);
const out = $("output");
let py = null;

function log(line) {
  out.textContent += line + "\n";
}

for (const name of Object.keys(EXAMPLES)) $("example").add(new Option(name, name));
$("example").onchange = () => ($("code").value = EXAMPLES[$("example").value]);
$("code").value = EXAMPLES[Object.keys(EXAMPLES)[0]];

async function boot() {
  $("status").textContent = "loading Pyodide and pyjax…";
  py = await loadPyjax({ stdout: log });
  $("status").textContent = `ready: Pyodide ${py.timings.pyodideMs.toFixed(0)} ms, import pyjax ${py.timings.importMs.toFixed(0)} ms`;
  $("run").disabled = false;
  $("run").textContent = "Run";
  window.__pyjaxReady = true;
}

$("run").onclick = async () => {
  out.textContent = "";
  const backend = $("backend").value;
  const t0 = performance.now();
  try {
    await py.run(`import pyjax\nawait pyjax.init_async(${JSON.stringify(backend)}) if hasattr(pyjax, "init_async") else pyjax.config.update("jax_platforms", ${JSON.stringify(backend)})`);
    const t1 = performance.now();
    await py.run($("code").value);
    const t2 = performance.now();
    log(`\n[${backend}] init ${(t1 - t0).toFixed(1)} ms, run ${(t2 - t1).toFixed(1)} ms`);
  } catch (e) {
    log(String(e));
  }
  window.__pyjaxDone = true;
};

boot().catch((e) => {
  $("status").textContent = "failed to load: " + e;
  window.__pyjaxError = String(e);
});
