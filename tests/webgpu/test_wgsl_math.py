"""WGSL helpers (pyjax/backends/webgpu/wgsl_math.py) run on lavapipe through WgpuHost and
compared with numpy/C99 (NaN semantics, special values) and JAX (integer division); the float functions are compiler/mathlib's, tested in
tests/test_math_decompositions.py."""

from __future__ import annotations

import asyncio
import re
import struct

import numpy as np
import pytest

from pyjax.backends.webgpu import wgsl_math as wm

_TYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.int32): "i32",
    np.dtype(np.uint32): "u32",
}


@pytest.fixture(scope="module")
def host():
    pytest.importorskip("wgpu")
    from pyjax.hosts.wgpu_host import HostError, WgpuHost

    try:
        return WgpuHost()
    except HostError as e:  # pragma: no cover - machines without an adapter
        pytest.skip(f"no WebGPU adapter: {e}")


def run(host, expr: str, inputs: list[np.ndarray], helpers: set[str], out=np.float32):
    """Evaluate the WGSL expression `expr` of a0, a1, ... elementwise on the GPU."""
    from pyjax.hosts.wgpu_host import Step

    n = inputs[0].size
    k = len(inputs)
    decls = "".join(
        f"@group(0) @binding({i}) var<storage, read> in{i}: array<{_TYPES[a.dtype]}>;\n" for i, a in enumerate(inputs)
    )
    loads = "".join(f"  let a{i} = in{i}[i];\n" for i in range(k))
    src = (
        wm.helpers_for(helpers)
        + decls
        + f"@group(0) @binding({k}) var<storage, read_write> out: array<{_TYPES[np.dtype(out)]}>;\n"
        + f"struct P {{ n: u32 }}\n@group(0) @binding({k + 1}) var<uniform> p: P;\n"
        + "@compute @workgroup_size(256)\n"
        + "fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,\n"
        + "        @builtin(local_invocation_index) li: u32) {\n"
        + "  let i = (w.x + w.y * nw.x) * 256u + li;\n  if (i >= p.n) { return; }\n"
        + loads
        + f"  out[i] = {expr};\n}}\n"
    )
    pipe = host.pipeline(src)
    bufs = []
    for a in inputs:
        b = host.create_buffer(a.nbytes)
        host.write(b, np.ascontiguousarray(a))
        bufs.append(b)
    bufs.append(host.create_buffer(4 * n))
    host.dispatch([Step(pipe, bufs, struct.pack("<I", n), -(-n // 256))])
    got = np.frombuffer(host.read(bufs[-1]), out).copy()
    for b in bufs:
        host.release_buffer(b)
    return got


def test_nan_propagating_min_max_and_comparisons(host):
    sp = np.array([np.nan, -np.inf, -1.5, -0.0, 0.0, 2.0, np.inf], np.float32)
    a, b = (v.ravel() for v in np.meshgrid(sp, sp))
    for name, want in [("fmax", np.maximum(a, b)), ("fmin", np.minimum(a, b))]:
        got = run(host, f"pj_{name}(a0, a1)", [a, b], {name})
        assert np.array_equal(np.isnan(got), np.isnan(want)), name
        ok = ~np.isnan(want)
        assert np.array_equal(got[ok], want[ok]), name  # -0 vs +0 order is unspecified
    ops = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
           "gt": np.greater, "ge": np.greater_equal}  # fmt: skip
    for name, op in ops.items():
        got = run(host, f"u32(pj_{name}(a0, a1))", [a, b], {name}, out=np.uint32)
        assert np.array_equal(got.astype(bool), op(a, b)), name
    checks = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}
    for name, op in checks.items():
        got = run(host, f"u32(pj_{name}(a0))", [sp], {name}, out=np.uint32)
        assert np.array_equal(got.astype(bool), op(sp)), name


def _int_operands(dtype):
    rng = np.random.default_rng(31)
    lo, hi = -(2**31), 2**31 - 1
    sp = np.array([0, 1, -1, 2, -2, 3, -3, 7, -7, lo, hi, lo + 1, 100, -100], np.int64)
    a, b = (v.ravel() for v in np.meshgrid(sp, sp))
    a = np.concatenate([a, rng.integers(lo, hi, 100000), rng.integers(-50, 50, 100000)])
    b = np.concatenate([b, rng.integers(lo, hi, 100000), rng.integers(-10, 10, 100000)])
    a, b = a.astype(np.int32), b.astype(np.int32)
    return (a, b) if dtype == np.int32 else (a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("dtype", [np.int32, np.uint32])
def test_integer_division_matches_jax(host, dtype):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    a, b = _int_operands(dtype)
    ja, jb = jnp.asarray(a), jnp.asarray(b)
    sfx = "i32" if dtype == np.int32 else "u32"
    cases = {
        "div": jax.lax.div,
        "rem": jax.lax.rem,
        "floordiv": jnp.floor_divide,
        "mod": jnp.remainder,
    }
    for base, fn in cases.items():
        name = f"{base}_{sfx}"
        got = run(host, f"pj_{name}(a0, a1)", [a, b], {name}, out=dtype)
        want = np.asarray(fn(ja, jb))
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, [(name, a[i], b[i], got[i], want[i]) for i in bad[:5]]


def test_integer_division_by_zero_is_jax_behaviour(host):
    """The values pinned here are what jax 0.10 gives on CPU (XLA semantics)."""
    a = np.array([7, -7, 0, -(2**31), -(2**31)], np.int32)
    b = np.array([0, 0, 0, 0, -1], np.int32)
    want = {
        "div_i32": [-1, -1, -1, -1, -(2**31)],
        "rem_i32": [7, -7, 0, -(2**31), 0],
        "floordiv_i32": [-2, -2, -1, -2, -(2**31)],
        "mod_i32": [0, 0, 0, 0, 0],
    }
    for name, w in want.items():
        got = run(host, f"pj_{name}(a0, a1)", [a, b], {name}, out=np.int32)
        assert got.tolist() == w, name


# ---- static checks: no GPU needed -------------------------------------------------------


def test_helpers_for_resolves_dependencies_in_order():
    src = wm.helpers_for({"fmax"})
    names = re.findall(r"^fn (pj_\w+)", src, re.MULTILINE)
    assert names[-1] == "pj_fmax" and "pj_isnan" in names
    assert len(names) == len(set(names))
    assert names.index("pj_isnan") < names.index("pj_fmax")
    assert wm.helpers_for(set()) == ""
    assert wm.fn_name("fmax") == "pj_fmax"
    with pytest.raises(KeyError):
        wm.helpers_for({"no_such_helper"})


@pytest.mark.parametrize("name", sorted(wm.HELPER_NAMES))
def test_every_helper_declares_what_it_calls(name):
    """Each helper's dependency closure defines every pj_ function it references."""
    src = wm.helpers_for({name})
    defined = set(re.findall(r"^fn (pj_\w+)", src, re.MULTILINE))
    called = set(re.findall(r"\b(pj_\w+)\s*\(", src))
    assert called <= defined, called - defined
    assert f"pj_{name}" in defined
    assert name in wm.SIGNATURES


def test_all_helpers_compile_together(host):
    src = wm.helpers_for(wm.HELPER_NAMES)
    src += (
        "@group(0) @binding(0) var<storage, read_write> o: array<f32>;\n"
        "@compute @workgroup_size(1) fn main() { o[0] = pj_fmax(o[1], o[3]); }\n"
    )
    host.pipeline(src)


def test_read_async_smoke(host):
    b = host.create_buffer(8)
    host.write(b, b"abcdefgh")
    assert asyncio.run(host.read_async(b)) == b"abcdefgh"
    host.release_buffer(b)
