"""Shared test cases: small JAX programs run natively (tests/test_cases.py, every backend) and
inside Pyodide in Chromium (playwright-tests/test_cases_browser.py, wasm and webgpu), always
compared with real JAX running natively.

Each case is source code defining `run(jax, jnp, lax)`; it builds its inputs itself without
numpy (the browser has none) and returns a pytree of arrays. `encode` turns the result into
JSON that crosses from the page back to pytest.
"""

from __future__ import annotations

import json
import math

CASES: dict[str, str] = {}


def case(name: str, src: str) -> None:
    CASES[name] = src


case(
    "elementwise",
    """
def run(jax, jnp, lax):
    x = jnp.linspace(-3.0, 3.0, 24).reshape(4, 6)
    return [jnp.tanh(x * 1.5 + 0.5) * jnp.exp(-x * x) + jnp.sin(x), jnp.abs(x) ** 0.5, jnp.log1p(x * x),
            jnp.maximum(x, 0.25), jnp.where(x > 0, x, -2 * x), jnp.clip(x, -1, 1), x // 0.7, x % 0.7]
""",
)
case(
    "integer_ops",
    """
def run(jax, jnp, lax):
    a = jnp.arange(-12, 12, dtype=jnp.int32)
    b = jnp.array([3, -5, 7, 2] * 6, dtype=jnp.int32)
    return [a // b, a % b, a * b + 7, a << 2, a >> 1, a & b, a | b, a ^ b, -a, jnp.abs(a), a.astype(jnp.float32) / 4]
""",
)
case(
    "comparisons_and_logic",
    """
def run(jax, jnp, lax):
    x = jnp.array([0.0, -0.0, 1.5, float("nan"), float("inf"), -2.0])
    return [x < 1, x == 0, x != x, jnp.isnan(x), jnp.isfinite(x), jnp.logical_and(x > -1, x < 2),
            jnp.maximum(x, 1.0), jnp.minimum(x, 1.0)]
""",
)
case(
    "reductions",
    """
def run(jax, jnp, lax):
    x = jnp.arange(60.0).reshape(3, 4, 5) / 7.0 - 3.0
    b = x > 0
    return [x.sum(), x.sum(axis=1), x.mean(axis=(0, 2)), x.max(axis=2, keepdims=True), x.min(axis=0),
            x.prod(axis=2), x.var(axis=1), x.std(), x.argmax(axis=1), x.argmin(axis=2), b.any(axis=2), b.all(axis=0),
            jnp.cumsum(x, axis=1), jnp.cumprod(x[:, :, :3] / 3, axis=2)]
""",
)
case(
    "bool_reductions_identity",
    """
def run(jax, jnp, lax):
    f = jnp.zeros((3, 4), dtype=bool)
    t = jnp.ones((3, 4), dtype=bool)
    return [f.any(), f.max(axis=1), t.all(axis=0), t.min()]
""",
)
case(
    "shapes",
    """
def run(jax, jnp, lax):
    x = jnp.arange(24.0).reshape(2, 3, 4)
    return [x.T, x.reshape(6, 4), jnp.moveaxis(x, 0, -1), jnp.swapaxes(x, 1, 2), jnp.expand_dims(x, 1),
            jnp.concatenate([x, x * 2], axis=2), jnp.stack([x, -x], axis=1), jnp.tile(x[0], (2, 1)),
            jnp.repeat(x[1], 2, axis=0), jnp.pad(x, ((0, 0), (1, 2), (0, 1))), jnp.flip(x, (0, 2)),
            jnp.roll(x, 2, axis=2), jnp.tril(x[0]), jnp.triu(x[1], 1), x[1, ::-1, 1:3], x[..., None, 2]]
""",
)
case(
    "matmul",
    """
def run(jax, jnp, lax):
    a = jnp.linspace(-1.0, 1.0, 48).reshape(6, 8)
    b = jnp.cos(jnp.arange(40.0)).reshape(8, 5)
    c = jnp.arange(2 * 6 * 8.0).reshape(2, 6, 8) / 50
    return [a @ b, jnp.dot(a[0], b), c @ b, jnp.tensordot(a, b, 1), jnp.outer(a[0], b[:, 0]), jnp.inner(a, a)]
""",
)
case(
    "grad_mlp",
    """
def run(jax, jnp, lax):
    x = jnp.linspace(-1.0, 1.0, 32).reshape(8, 4)
    w1 = jnp.sin(jnp.arange(24.0)).reshape(4, 6) * 0.5
    w2 = jnp.cos(jnp.arange(6.0)).reshape(6, 1)
    def loss(params):
        w1, w2 = params
        h = jnp.tanh(x @ w1)
        return jnp.mean((h @ w2 - 0.3) ** 2)
    return [loss((w1, w2)), jax.grad(loss)((w1, w2))]
""",
)
case(
    "jit_train_steps",
    """
def run(jax, jnp, lax):
    x = jnp.linspace(-2.0, 2.0, 40).reshape(20, 2)
    y = jnp.sin(x[:, :1]) + x[:, 1:] ** 2
    def loss(p):
        return jnp.mean((jnp.tanh(x @ p["w"] + p["b"]) @ p["v"] - y) ** 2)
    @jax.jit
    def step(p):
        l, g = jax.value_and_grad(loss)(p)
        return jax.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), l
    p = {"w": jnp.ones((2, 8)) * 0.3, "b": jnp.zeros(8), "v": jnp.ones((8, 1)) * 0.1}
    losses = []
    for _ in range(20):
        p, l = step(p)
        losses.append(l)
    return [jnp.stack(losses), p]
""",
)
case(
    "vmap_jacobians",
    """
def run(jax, jnp, lax):
    def f(x):
        return jnp.sin(x) * jnp.sum(x ** 2)
    x = jnp.array([0.3, -1.2, 2.0])
    xs = jnp.linspace(-1.0, 1.0, 12).reshape(4, 3)
    return [jax.vmap(f)(xs), jax.jacfwd(f)(x), jax.jacrev(f)(x), jax.hessian(lambda x: jnp.sum(jnp.sin(x) * x))(x),
            jax.vmap(jax.grad(lambda x: jnp.sum(f(x))))(xs), jax.jvp(f, (x,), (jnp.ones(3),))]
""",
)
case(
    "vmap_axes",
    """
def run(jax, jnp, lax):
    a = jnp.arange(12.0).reshape(3, 4)
    b = jnp.arange(4.0)
    f = jax.vmap(lambda u, v: u * v + jnp.sum(u), in_axes=(1, None), out_axes=1)
    g = jax.vmap(jax.vmap(lambda u, v: jnp.dot(u, v), in_axes=(0, None)), in_axes=(0, None))
    return [f(a, b[:3]), g(a.reshape(3, 4, 1), b[:1])]
""",
)
case(
    "softmax_logsumexp",
    """
def run(jax, jnp, lax):
    x = jnp.linspace(-5.0, 5.0, 30).reshape(3, 10)
    def softmax(z):
        e = jnp.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    return [softmax(x), jax.jit(softmax)(x * 3), jax.grad(lambda z: jnp.sum(softmax(z)[:, 0] ** 2))(x)]
""",
)
case(
    "dtypes_promotion",
    """
def run(jax, jnp, lax):
    i = jnp.arange(5, dtype=jnp.int32)
    u = jnp.arange(5, dtype=jnp.uint32)
    f = jnp.arange(5, dtype=jnp.float32)
    h = jnp.arange(5, dtype=jnp.float16)
    return [i + 1.5, i * 2, u + 3, f + h, h * 2, h + 1.0, i + u, (i > 2).astype(jnp.float32), jnp.float32(2) * i]
""",
)
case(
    "indexing_basic",
    """
def run(jax, jnp, lax):
    x = jnp.arange(30.0).reshape(5, 6)
    return [x[2], x[:, 3], x[1:4, ::2], x[::-1], x[-1, -2], x[None, 1, :, None]]
""",
)
case(
    "jit_static_and_nested",
    """
def run(jax, jnp, lax):
    from functools import partial
    @partial(jax.jit, static_argnums=1)
    def power(x, n):
        for _ in range(n):
            x = x * 1.1
        return x
    inner = jax.jit(lambda x: jnp.sin(x) + 1)
    outer = jax.jit(lambda x: inner(x) * inner(x * 2))
    x = jnp.linspace(0.0, 1.0, 5)
    return [power(x, 3), outer(x), jax.grad(lambda x: jnp.sum(outer(x)))(x)]
""",
)


# --- running and encoding ---------------------------------------------------------------------

case(
    "grads_at_kinks",
    """
def run(jax, jnp, lax):
    x = jnp.array([-1.0, 0.0, 2.0])
    g = lambda f: jax.vmap(jax.grad(f))(x)
    return [g(jnp.abs), g(jax.nn.relu), g(lambda v: jnp.maximum(v, 0.0)), g(lambda v: v ** 0.0),
            g(lambda v: v ** 2.0), g(lambda v: v ** 0), g(jnp.sqrt), g(lambda v: jnp.where(v > 0, v, 0.0)),
            jax.grad(jnp.max)(jnp.array([1.0, 3.0, 3.0])), g(jnp.sign), g(lambda v: jnp.clip(v, 0.0, 2.0)),
            g(lambda v: jnp.fmax(v, 0.0)), g(lambda v: jnp.fmin(v, 2.0)), g(lambda y: jnp.power(0.0, y)),
            # running extremes with ties: JAX's tree of max/min shares the tangent
            jax.grad(lambda v: jnp.sum(lax.cummax(v) * jnp.arange(7.0)))(jnp.array([1.0, 3, 3, 0, 3, 5, 5])),
            jax.grad(lambda v: jnp.sum(lax.cummin(v, reverse=True) * jnp.arange(7.0)))(jnp.array([1.0, 3, 3, 0, 0, 5, 0]))]
""",
)


def run_case(src: str, jax, jnp, lax):
    ns: dict = {}
    exec(src, ns)  # noqa: S102 - case sources are this file's own constants
    return ns["run"](jax, jnp, lax)


def _leaf_to_json(x) -> dict:
    shape = tuple(getattr(x, "shape", ()))
    dtype = str(getattr(x, "dtype", type(x).__name__))
    if hasattr(x, "tolist"):
        data = x.tolist()
    else:
        data = x
    return {"shape": list(shape), "dtype": dtype, "data": _flat(data)}


def _flat(v) -> list:
    if isinstance(v, list):
        out = []
        for e in v:
            out.extend(_flat(e))
        return out
    return [v]


def encode(result, tree_util) -> str:
    """JSON of the result's leaves (shape, dtype, flat values); NaN/inf written as JSON extensions."""
    leaves = tree_util.tree_leaves(result)
    return json.dumps([_leaf_to_json(x) for x in leaves])


def compare(got: list, want: list, name: str) -> None:
    """Compare encoded pyjax leaves with encoded JAX leaves (shape, dtype, values)."""
    assert len(got) == len(want), f"{name}: {len(got)} leaves vs JAX {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        where = f"{name}[leaf {k}]"
        assert g["shape"] == w["shape"], f"{where}: shape {g['shape']} vs JAX {w['shape']}"
        assert g["dtype"] == w["dtype"], f"{where}: dtype {g['dtype']} vs JAX {w['dtype']}"
        tol = {"float16": 2e-3, "bfloat16": 2e-2, "float32": 2e-5, "float64": 1e-12}.get(w["dtype"], 0)
        for i, (a, b) in enumerate(zip(g["data"], w["data"])):
            if isinstance(b, float) and (math.isnan(b) or math.isinf(b)):
                assert (math.isnan(b) and math.isnan(a)) or a == b, f"{where}[{i}]: {a} vs JAX {b}"
                continue
            if tol:
                assert abs(a - b) <= tol * (1 + abs(b)) * 10, f"{where}[{i}]: {a} vs JAX {b}"
            else:
                assert a == b, f"{where}[{i}]: {a} vs JAX {b}"
