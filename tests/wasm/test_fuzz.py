"""Fuzz test: random IR kernels (views, expression graphs, reductions) on wasm vs the cpu backend.

Hypothesis draws an iteration shape, inputs of several dtypes read through random views
(permutes, broadcasts, flips, slices, strides, pads, and reshapes that need multi-view index
math), a random expression graph over them (arithmetic, comparisons, selects, casts, iotas,
transcendentals, gathers) and optionally a reduction over trailing axes with an epilogue. The
wasm kernel must match the cpu backend's numpy evaluation.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("wasmtime")

from pyjax.backends.cpu import CpuBackend  # noqa: E402
from pyjax.backends.wasm import WasmBackend  # noqa: E402
from pyjax.compiler import ir  # noqa: E402
from pyjax.compiler.ir import Kernel  # noqa: E402
from pyjax.compiler.views import ShapeTracker  # noqa: E402
from pyjax.core import dtypes  # noqa: E402

D = dtypes
I32 = D.int32
DTYPES = [D.float32, D.float32, D.int32, D.bool_, D.float64, D.uint8, D.float16]
FUZZ = settings(
    max_examples=int(__import__("os").environ.get("PYJAX_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

_WASM: list = []
_CPU: list = []


def _backends():
    if not _WASM:
        _WASM.append(WasmBackend())
        _CPU.append(CpuBackend())
    return _CPU[0], _WASM[0]


@st.composite
def views(draw, shape):
    """A tracker of `shape` over a base buffer, and the base shape."""
    nd = len(shape)
    base, post = [], []
    for s in shape:
        kind = draw(st.sampled_from(["plain", "plain", "bcast", "flip", "slice", "stride", "pad"]))
        if kind == "bcast" or s == 1:
            base.append(1)
            kind = "bcast"
        elif kind == "slice":
            lo, hi = draw(st.integers(0, 3)), draw(st.integers(0, 3))
            base.append(s + lo + hi)
            post.append(("slice", lo))
            continue
        elif kind == "stride":
            step = draw(st.integers(2, 3))
            base.append(s * step)
            post.append(("stride", step))
            continue
        elif kind == "pad" and s > 2:
            lo = draw(st.integers(0, min(2, s - 2)))
            hi = draw(st.integers(0, s - 1 - lo - 1)) if s - 1 - lo - 1 > 0 else 0
            base.append(s - lo - hi)
            post.append(("pad", (lo, hi)))
            continue
        else:
            base.append(s)
            kind = "flip" if kind == "flip" else "plain"
        post.append((kind, None))
    perm = list(draw(st.permutations(range(nd)))) if nd > 1 else [0]
    stored = tuple(base[p] for p in perm)
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    tr = ShapeTracker.contiguous(stored).permute(tuple(inv))
    assert tr.shape == tuple(base)
    # per-axis movement
    bounds, steps, flips, pads = [], [], [], []
    for ax, ((kind, arg), s, b) in enumerate(zip(post, shape, base)):
        if kind == "slice":
            bounds.append((arg, arg + s))
        else:
            bounds.append((0, b))
        steps.append(arg if kind == "stride" else 1)
        if kind == "flip":
            flips.append(ax)
        pads.append(arg if kind == "pad" else (0, 0))
    tr = tr.shrink(tuple(bounds))
    for ax, step in enumerate(steps):
        if step != 1:
            tr = tr.stride(ax, step)
    if flips:
        tr = tr.flip(tuple(flips))
    tr = tr.pad(tuple(pads))
    tr = tr.expand(shape)
    if draw(st.booleans()) and nd >= 2 and math.prod(shape) > 1:
        # flatten and unflatten: a second view with div/mod index math when not contiguous
        tr = tr.reshape((math.prod(shape),)).reshape(shape)
    assert tr.shape == shape, (tr.shape, shape)
    return tr, stored


def _as(x: ir.Node, dt) -> ir.Node:
    return ir.cast(x, dt)


@st.composite
def expr(draw, leaves, dt, depth):
    """A random expression of dtype dt over the leaves (loads and iotas)."""
    if depth == 0 or draw(st.integers(0, 4)) == 0:
        choice = draw(st.integers(0, len(leaves)))
        if choice == len(leaves):
            v = draw(st.sampled_from([0.5, -1.5, 2.0, 3.0, 0.0])) if dt.kind == "f" else draw(st.integers(-3, 5))
            return ir.const(v if dt.kind != "b" else bool(v), dt)
        return _as(leaves[choice], dt)
    if dt.kind == "b":
        op = draw(st.sampled_from(["lt", "ne", "and", "or", "not"]))
        if op == "not":
            return ir.alu("not", draw(expr(leaves, dt, depth - 1)))
        if op in ("and", "or"):
            return ir.alu(op, draw(expr(leaves, dt, depth - 1)), draw(expr(leaves, dt, depth - 1)))
        sub = draw(st.sampled_from([D.float32, D.int32]))
        return ir.alu(op, draw(expr(leaves, sub, depth - 1)), draw(expr(leaves, sub, depth - 1)))
    ops = ["add", "sub", "mul", "max", "min", "neg", "abs", "where", "cast"]
    if dt.kind == "f":
        ops += ["exp", "sin", "tanh", "floor", "div", "log1p", "sqrt"]
    else:
        ops += ["div", "rem", "shl", "and", "xor"]
    op = draw(st.sampled_from(ops))
    a = draw(expr(leaves, dt, depth - 1))
    if op in ("neg", "abs", "floor"):
        return ir.alu(op, a)
    if op in ("exp", "tanh", "sin", "log1p", "sqrt"):
        # keep arguments in a tame range
        a = ir.alu("min", ir.alu("max", a, ir.const(-3.0, dt)), ir.const(3.0, dt))
        if op in ("log1p", "sqrt"):
            a = ir.alu("abs", a)
        return ir.alu(op, a)
    if op == "cast":
        other = draw(st.sampled_from([D.float32, D.int32, D.bool_]))
        return _as(draw(expr(leaves, other, depth - 1)), dt)
    if op == "where":
        c = draw(expr(leaves, D.bool_, depth - 1))
        return ir.where(c, a, draw(expr(leaves, dt, depth - 1)))
    b = draw(expr(leaves, dt, depth - 1))
    if op == "shl":
        b = ir.alu("and", b, ir.const(7, dt))
    return ir.alu(op, a, b)


@st.composite
def kernel_case(draw):
    nd = draw(st.integers(1, 3))
    shape = tuple(draw(st.sampled_from([1, 2, 3, 4, 5, 7, 8, 13, 17])) for _ in range(nd))
    n_in = draw(st.integers(1, 3))
    red = draw(st.booleans()) and nd >= 1
    nr = draw(st.integers(1, nd)) if red else 0
    nk = nd - nr
    leaves, in_dtypes, bases = [], [], []
    for i in range(n_in):
        dt = draw(st.sampled_from(DTYPES))
        tr, stored = draw(views(shape))
        leaves.append(ir.load(i, tr, dt))
        in_dtypes.append(dt)
        bases.append((stored, dt))
    with ir.shape_context(shape):
        leaves.append(ir.idx(draw(st.integers(0, nd - 1))))  # an iota
        if draw(st.booleans()):
            # a gather from input 0 at a computed (clamped) position
            n0 = math.prod(bases[0][0])
            pos = ir.alu(
                "mod", ir.alu("add", ir.idx(nd - 1), ir.const(draw(st.integers(0, 5)), I32)), ir.const(max(n0, 1), I32)
            )
            leaves.append(ir.gather(0, pos, in_dtypes[0]))
        work = draw(st.sampled_from([D.float32, D.int32, D.float32, D.bool_]))
        body = draw(expr(leaves, work, draw(st.integers(1, 4))))
    if not red:
        kernel = Kernel(shape, in_dtypes, body)
    else:
        op = draw(st.sampled_from(["and", "or"] if work.kind == "b" else ["sum", "max", "min", "argmax", "argmin"]))
        if op in ("argmax", "argmin") and nr != 1:
            op = "max"
        adt = I32 if op in ("argmax", "argmin") else body.dtype
        out_shape = shape[:nk]
        with ir.shape_context(out_shape):
            epi = ir.acc(adt)
            if draw(st.booleans()) and adt.kind != "b":
                tr = ShapeTracker.contiguous(out_shape or ())
                # an extra input read in the epilogue
                epi = ir.alu("add", epi, ir.cast(ir.load(len(in_dtypes), tr, D.float32), adt))
                in_dtypes = in_dtypes + [D.float32]
                bases.append((out_shape, D.float32))
        kernel = Kernel(shape, in_dtypes, epi, op, tuple(range(nk, nd)), body)
    seed = draw(st.integers(0, 2**31 - 1))
    return kernel, bases, seed


def _data(shape, dt, rng):
    n = math.prod(shape)
    if dt.kind == "f":
        return rng.uniform(-2.5, 2.5, n).astype(dt.name)
    if dt.kind == "b":
        return rng.randint(0, 2, n).astype(bool)
    info = np.iinfo(dt.name)
    return rng.randint(max(info.min, -9), min(info.max, 9) + 1, n).astype(dt.name)


def _run(backend, kernel, inputs):
    slots = []
    for a in inputs:
        s = backend.malloc(max(a.nbytes, 1))
        backend.write(s, a.tobytes())
        slots.append(s)
    od = np.dtype(kernel.out_dtype.name)
    nbytes = kernel.out_size * od.itemsize
    out = backend.malloc(max(nbytes, 1))
    backend.dispatch(backend.prepare_kernel(kernel), slots, [out])
    res = np.frombuffer(backend.read(out, nbytes), od).copy()
    for s in slots + [out]:
        backend.free(s)
    return res


@FUZZ
@given(kernel_case())
def test_random_kernels_match_cpu(case):
    kernel, bases, seed = case
    cpu, wasm = _backends()
    rng = np.random.RandomState(seed)
    inputs = [_data(shape, dt, rng) for shape, dt in bases]
    with np.errstate(all="ignore"):
        want = _run(cpu, kernel, inputs)
    got = _run(wasm, kernel, inputs)
    if want.dtype.kind == "f":
        scale = np.nanmax(np.abs(want[np.isfinite(want)]), initial=1.0)
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5 * scale, equal_nan=True, err_msg=repr(kernel))
    else:
        np.testing.assert_array_equal(got, want, err_msg=repr(kernel))


def test_simd_and_scalar_code_agree():
    """The same kernels compiled with and without SIMD give identical integer results."""
    shape = (3, 37)
    x = np.arange(111, dtype=np.int32).reshape(shape) * 7 - 300
    e = ir.alu(
        "xor", ir.alu("mul", ir.load(0, ShapeTracker.contiguous(shape), I32), ir.const(3, I32)), ir.const(5, I32)
    )
    k = Kernel(shape, [I32], e)
    a = _run(WasmBackend(simd=False), k, [x])
    b = _run(_backends()[1], k, [x])
    np.testing.assert_array_equal(a, b)
