"""pyjax without numpy (as under Pyodide offline): a subprocess with numpy (and jax) blocked runs
arithmetic, grad, jit, vmap, reductions, printing and tolist on each test backend (the cpu one
through its pure-Python path); the parent computes the same with real JAX and compares values,
dtypes and printed text.

The pure-Python printer is also compared with JAX's printing directly (numpy present) on many
shapes, dtypes and magnitudes, since it is the only printer in the browser.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax.runtime import printing

from conftest import TEST_BACKENDS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Each case is an expression over `jax` and `jnp` evaluated once with pyjax (no numpy) and once
# with JAX; the result is a pytree of arrays (compared as values + dtypes) or a string.
CASES = {
    "arith": "(lambda x: [x * 2 + 1, x / 3 - x**2, -x, abs(x - 2.5), 1.5 - x])(jnp.arange(6.0).reshape(2, 3))",
    "int_arith": "(lambda i: [i * 3 // 2, i % 3, i - 7, i << 1, i & 5, -i // 2])(jnp.arange(7))",
    "abstract_types": "str([jnp.issubdtype(jnp.int8, jnp.integer), jnp.issubdtype(jnp.float32, jnp.integer), "
    "issubclass(jnp.zeros(2, jnp.int8).dtype.type, jnp.integer), issubclass(jnp.zeros(2).dtype.type, jnp.inexact)])",
    "int8_wrap": "jnp.array([100, 120, -128], jnp.int8) + jnp.array([100, 10, -1], jnp.int8)",
    "uint8": "jnp.array([250, 3], jnp.uint8) + 10",
    "compare": "[jnp.arange(5) > 2, jnp.arange(5.0) == 3, jnp.where(jnp.arange(4) % 2 == 0, 1.5, -1.0)]",
    "unary": "(lambda x: [jnp.exp(x), jnp.log1p(x), jnp.sin(x), jnp.tanh(x - 1), jnp.sqrt(x)])(jnp.linspace(0, 2, 5))",
    "cast": "[jnp.arange(5.0).astype(jnp.int32), jnp.array([1.7, -1.7]).astype(jnp.int32), "
    "jnp.arange(3).astype(jnp.float16) / 3, jnp.arange(3).astype(bool)]",
    "weak": "[jnp.arange(3, dtype=jnp.int8) + 1, jnp.arange(3, dtype=jnp.float16) * 2.5, jnp.float32(2) + 1]",
    "grad": "jax.grad(lambda x: jnp.sum(jnp.sin(x) * x))(jnp.arange(3.0))",
    "value_and_grad": "jax.value_and_grad(lambda w, x: jnp.mean(jnp.tanh(x @ w) ** 2))"
    "(jnp.arange(6.0).reshape(3, 2) / 10, jnp.arange(12.0).reshape(4, 3) / 7)",
    "jit": "jax.jit(lambda a, b: jnp.tanh(a @ b).sum(axis=0))"
    "(jnp.arange(6.0).reshape(2, 3) / 5, jnp.arange(6.0).reshape(3, 2) / 5)",
    "jit_grad": "jax.jit(jax.grad(lambda x: jnp.sum(jnp.exp(-x * x))))(jnp.linspace(-1, 1, 4))",
    "vmap": "[jax.vmap(lambda r: r.max())(jnp.arange(6.0).reshape(2, 3)), "
    "jax.vmap(jnp.dot, in_axes=(0, None))(jnp.ones((3, 2)), jnp.arange(2.0))]",
    "reductions": "(lambda x: [jnp.sum(x), jnp.mean(x, axis=0), jnp.max(x, axis=1), jnp.argmax(x, axis=1), "
    "jnp.prod(x + 1), jnp.min(x), jnp.var(x), jnp.std(x, axis=1), jnp.cumsum(x, axis=1), "
    "jnp.all(x > -1), jnp.any(x > 4)])(jnp.array([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]]))",
    "int_reductions": "[jnp.sum(jnp.arange(10)), jnp.argmin(jnp.array([3, 1, 2])), jnp.max(jnp.arange(4, dtype=jnp.uint8))]",
    "shapes": "(lambda x: [x.T, x.reshape(3, 2), x[:, 1], x[::-1], jnp.concatenate([x, x]), jnp.stack([x, x], 1)])"
    "(jnp.arange(6).reshape(2, 3))",
    "repr_float": "repr(jnp.arange(6.0).reshape(2, 3) * 0.1428)",
    "repr_weak": "repr(jnp.array(3.5))",
    "repr_bool": "repr(jnp.arange(3) > 1)",
    "repr_int8": "repr(jnp.array(3, jnp.int8))",
    "subbyte": "[jnp.array([7, -8, 3], jnp.int4) + jnp.array([1, -1, 7], jnp.int4), jnp.array([9, 2], jnp.uint4) * 3, "
    "jnp.array([1.5, -6, 7, 0.3], jnp.float4_e2m1fn) * 2, jnp.array([0.3, 1e30], jnp.float8_e8m0fnu) * 4]",
    "repr_subbyte": "repr([jnp.array([5, -1], jnp.int4), jnp.array([-2.5, 0.5], jnp.float4_e2m1fn), "
    "jnp.array([[1e30, 0.25], [3, 1]], jnp.float8_e8m0fnu), jnp.array([0.1, -300], jnp.float8_e4m3fn)])",
    "repr_empty": "repr(jnp.ones((2, 0)))",
    "repr_sci": "repr(jnp.array([1e10, -1e-10, 3.0, jnp.nan, -jnp.inf]))",
    "repr_3d": "repr(jnp.arange(24).reshape(2, 3, 4))",
    "repr_long": "repr(jnp.arange(30.0) * 0.1428)",
    "repr_summary": "repr(jnp.arange(2000).reshape(40, 50))",
    "str_2d": "str(jnp.arange(6.0).reshape(2, 3))",
    "str_scalar": "' | '.join([str(jnp.array(1.0)), str(jnp.array(1e7)), str(jnp.array(-0.0)), str(jnp.array(True))])",
    "str_mixed": "str(jnp.array([0.0, 1.3817732, 0.07700372]))",
    "tolist": "repr(jnp.arange(6.0).reshape(3, 2).tolist())",
    "tolist_int_bool": "repr([jnp.arange(4).tolist(), (jnp.arange(3) > 0).tolist(), jnp.array(2.5).tolist()])",
    "scalars": "repr([float(jnp.sum(jnp.arange(4.0))), int(jnp.arange(5)[3]), jnp.arange(3.0)[1].item(), "
    "bool(jnp.array(1) > 0)])",
}

_CHILD = textwrap.dedent(
    """
    import json, sys
    for blocked in ("numpy", "ml_dtypes", "jax", "jaxlib", "scipy"):
        sys.modules[blocked] = None  # any import of these now raises ImportError
    sys.path.insert(0, ROOT)
    import pyjax as jax
    import pyjax.numpy as jnp

    def enc(v):
        if isinstance(v, str):
            return {"str": v}
        leaves, _ = jax.tree_util.tree_flatten(v)
        return {"leaves": [{"value": l.tolist(), "dtype": l.dtype.name, "shape": list(l.shape),
                            "weak": bool(l.weak_type)} for l in leaves]}

    out = {"platform": jax.default_backend(),
           "uses_numpy": getattr(jax.devices()[0].backend, "use_numpy", False)}
    for name, src in CASES.items():
        try:
            out[name] = enc(eval(src))
        except Exception as e:
            out[name] = {"error": f"{type(e).__name__}: {e}"}
    print("RESULT" + json.dumps(out))
    """
)


@pytest.fixture(scope="module", params=TEST_BACKENDS)
def child_results(request) -> dict:
    """Results of every case from a numpy-free child process whose default platform is the param."""
    code = f"ROOT = {ROOT!r}\nCASES = {CASES!r}\n" + _CHILD
    env = dict(os.environ, PYJAX_PLATFORMS=request.param)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, f"child failed:\n{proc.stdout}\n{proc.stderr}"
    line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))
    return json.loads(line[len("RESULT") :])


def test_child_really_has_no_numpy(child_results):
    assert child_results["uses_numpy"] is False, "the backend used numpy although it was blocked"


def _jax_value(src: str):
    return eval(src, {"jax": jax, "jnp": jnp})


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(child_results, name):
    got = child_results[name]
    assert "error" not in got, f"{name}: pyjax without numpy raised {got['error']}"
    expected = _jax_value(CASES[name])
    if isinstance(expected, str):
        assert got["str"] == expected
        return
    leaves = jax.tree_util.tree_leaves(expected)
    assert len(got["leaves"]) == len(leaves)
    for g, e in zip(got["leaves"], leaves):
        assert g["dtype"] == e.dtype.name
        assert tuple(g["shape"]) == e.shape
        assert g["weak"] == e.weak_type, f"weak_type of {g}"
        ev = np.asarray(e)
        gv = np.asarray(g["value"], dtype=ev.dtype if ev.dtype.kind in "biu" else np.float64).reshape(ev.shape)
        if ev.dtype.kind in "biu":
            np.testing.assert_array_equal(gv, ev)
        else:
            tol = {"float16": 2e-3}.get(ev.dtype.name, 2e-6)
            np.testing.assert_allclose(gv, ev.astype(np.float64), rtol=tol, atol=tol)


# --- the pure-Python printer against JAX's printing (numpy present) ------------------------------


def _print_cases():
    rng = np.random.default_rng(0)
    out = []
    shapes = [(), (1,), (3,), (2, 3), (2, 3, 4), (30,), (7, 11), (2000,), (40, 50), (3, 1, 2), (11, 3, 40), (1001,)]
    for dt in ["float32", "float16", "int32", "uint8", "int8", "bool"]:
        for shape in shapes:
            for scale in [1.0, 1e-6, 1e9, 1000.0]:
                if dt == "bool":
                    v = rng.random(shape) > 0.5
                elif dt[0] in "iu":
                    v = (rng.standard_normal(shape) * scale * 100).astype(np.int64)
                    v = v % 256 if dt == "uint8" else (v % 128 - 60 if dt == "int8" else v % 100000)
                else:
                    v = rng.standard_normal(shape) * scale
                    if v.size > 4 and scale == 1.0:
                        v.flat[1], v.flat[2] = np.nan, -np.inf
                    if v.size > 5 and scale == 1000.0:
                        v = np.round(v)
                        v.flat[3] = -0.0
                with np.errstate(over="ignore"):
                    out.append(v.astype(dt))
    specials = [
        np.array([0.1, 0.2, 0.3], np.float32),
        np.array([1.2345678e-5, 0.3], np.float32),
        np.array([np.nan, 1.5], np.float32),
        np.array([np.inf, 1e10], np.float32),
        np.array([np.nan, np.nan], np.float32),
        np.array([-0.0, 0.0], np.float32),
        np.array(-0.0, np.float32),
        np.array([0.00012345678, 0.5], np.float32),
        np.array([999999.0, 1.0], np.float32),
        np.array([1e6, 1.0], np.float32),
        np.array([3.4028235e38, -1.0], np.float32),
        np.array([1e-45, 1.0], np.float32),
        np.array(1e7, np.float32),
        np.array(123456.7, np.float32),
        np.array(1e-4, np.float32),
        np.array(65504.0, np.float16),
        np.array([[1e-5] * 20] * 3, np.float32),
        np.arange(1001 * 2, dtype=np.int32).reshape(2, 1001) - 1000,
        np.array([-(2**31), 2**31 - 1], np.int32),
    ]
    return out + specials


@pytest.mark.parametrize("fn", [repr, str])
def test_pure_python_printer_matches_jax(fn, monkeypatch):
    cases = _print_cases()
    mismatches = []
    for v in cases:
        expected = fn(jnp.asarray(v))
        p = pjnp.asarray(v)
        monkeypatch.setattr(printing, "np", None)
        got = fn(p)
        monkeypatch.setattr(printing, "np", np)
        if got != expected:
            mismatches.append(f"{v.dtype}{v.shape}:\njax:   {expected}\npyjax: {got}")
        assert fn(p) == expected, "numpy printing path"
    assert not mismatches, f"{len(mismatches)} of {len(cases)} differ; first:\n" + "\n".join(mismatches[:3])


def test_printing_of_weak_and_traced_values():
    assert repr(pjnp.array(3.5)) == repr(jnp.array(3.5))
    assert repr(pjnp.arange(3) + 1.0) == repr(jnp.arange(3) + 1.0)
    assert repr(pyjax.jit(lambda x: x * 2)(pjnp.arange(3.0))) == repr(jax.jit(lambda x: x * 2)(jnp.arange(3.0)))
