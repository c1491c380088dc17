"""Differential fuzzing of the WGSL renderer: random IR kernels (mixed dtypes, movement ops,
masks, gathers, reductions, epilogues) run on the webgpu backend and on the cpu reference
evaluator, compared exactly for integers and bools and with a tolerance for floats.

Float data come from a small set of exactly representable values (plus NaN/inf in some
examples), so exact float ops give identical bits on both sides; only transcendental results
are compared with a tolerance, and nothing integer-valued is derived from them. Products are
not fuzzed together with inf/NaN data: shader compilers may fold inf * (provable zero) to 0.
"""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pyjax.backends.cpu import numpy_eval
from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, alu, cast, const, where
from pyjax.compiler.views import ShapeTracker
from pyjax.core import dtypes

pytest.importorskip("wgpu")

FLOATS = [dtypes.float32, dtypes.float16]
INTS = [dtypes.int32, dtypes.uint32, dtypes.int8, dtypes.uint8, dtypes.int16]
ALL = FLOATS + INTS + [dtypes.bool_]
EXACT_F = [-2.0, -1.5, -0.5, 0.0, 0.25, 1.0, 3.0, 7.0]


@pytest.fixture(scope="module")
def gpu():
    from pyjax.backends.webgpu import WebGPUBackend

    try:
        return WebGPUBackend()
    except Exception as e:  # no adapter here
        pytest.skip(f"no WebGPU adapter: {e}")


def run_gpu(be, k: Kernel, arrays: list) -> np.ndarray:
    slots = []
    for a in arrays:
        raw = np.ascontiguousarray(a).tobytes()
        s = be.malloc(len(raw))
        be.write(s, raw)
        slots.append(s)
    n = (k.out_size if k.reduce_op else math.prod(k.shape)) * k.out_dtype.itemsize
    out = be.malloc(n)
    be.dispatch(be.prepare_kernel(k), slots, [out])
    raw = be.read(out, n)
    for s in slots + [out]:
        be.free(s)
    return np.frombuffer(raw, dtype=np.dtype(k.out_dtype.name))


def run_cpu(k: Kernel, arrays: list) -> np.ndarray:
    return np.asarray(numpy_eval.run_kernel(k, [np.ascontiguousarray(a).reshape(-1) for a in arrays]))


def compare(got, want, exact: bool, what=""):
    assert got.shape == want.shape, what
    if want.dtype.kind in "iub" or exact:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        tol = 2e-3 if want.dtype == np.float16 else 2e-5
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol, equal_nan=True, err_msg=what
        )


def random_data(rng: random.Random, d, n: int, specials: bool) -> np.ndarray:
    if d.kind == "f":
        vals = EXACT_F + ([math.nan, math.inf, -math.inf] if specials else [])
        return np.array([rng.choice(vals) for _ in range(n)], dtype=np.dtype(d.name))
    if d.kind == "b":
        return np.array([rng.random() < 0.5 for _ in range(n)], dtype=bool)
    info = np.iinfo(np.dtype(d.name))
    pool = [0, 1, 2, 3, -1, -7, 100, info.min, info.max, 5, 31, 8]
    return np.array([int(np.clip(rng.choice(pool), info.min, info.max)) for _ in range(n)], dtype=np.dtype(d.name))


def random_tracker(rng: random.Random, shape: tuple):
    """(base shape, tracker of `shape` reading a buffer of the base shape)."""
    nd = len(shape)
    perm = list(range(nd))
    rng.shuffle(perm)
    # broadcast: some axes become size 1 in the base
    bshape = [1 if rng.random() < 0.2 else s for s in shape]
    base = tuple(bshape[p] for p in perm)
    pads = [(rng.randint(0, 1), rng.randint(0, 1)) if rng.random() < 0.3 else (0, 0) for _ in range(nd)]
    # the base buffer is the (permuted) shape minus the padding, so the pad restores the size
    core = [max(1, b - lo - hi) if b > 1 else 1 for b, (lo, hi) in zip(base, [pads[p] for p in perm])]
    tr = ShapeTracker.contiguous(tuple(core))
    ppads = [pads[p] for p in perm]
    real_pads = tuple(
        (lo, b - c - lo) if b > 1 and b - c - lo >= 0 else (0, 0) for b, c, (lo, _) in zip(base, core, ppads)
    )
    tr = tr.pad(real_pads)
    full = tuple(c + lo + hi for c, (lo, hi) in zip(core, real_pads))
    if full != base:  # padding did not fit: plain contiguous base
        tr = ShapeTracker.contiguous(base)
        core = list(base)
    inv = [0] * nd
    for i, p in enumerate(perm):
        inv[p] = i
    tr = tr.permute(tuple(inv))
    if nd and rng.random() < 0.3:
        tr = tr.flip(tuple(a for a in range(nd) if rng.random() < 0.5))
    if tr.shape != shape:
        tr = tr.expand(shape)
    return tuple(core), tr


class Gen:
    def __init__(self, rng: random.Random, shape: tuple, n_inputs: int, specials: bool):
        self.rng = rng
        self.specials = specials
        self.shape = shape
        self.inputs = []
        self.leaves = []
        for i in range(n_inputs):
            d = rng.choice(ALL)
            base, tr = random_tracker(rng, shape)
            self.inputs.append(random_data(rng, d, math.prod(base), specials))
            self.leaves.append((ir.load(i, tr, d), True))

    def leaf(self):
        r = self.rng.random()
        if r < 0.15:
            d = self.rng.choice(ALL)
            v = (
                self.rng.choice(EXACT_F)
                if d.kind == "f"
                else (self.rng.random() < 0.5 if d.kind == "b" else self.rng.choice([0, 1, 3, 5]))
            )
            return const(v, d), True
        if r < 0.25 and self.shape:
            # never a bare int32 idx: the numpy reference evaluates idx as int64 (clz would differ)
            d = self.rng.choice([dtypes.int16, dtypes.float32])
            return cast(ir.idx(self.rng.randrange(len(self.shape))), d), True
        if r < 0.33 and self.shape:
            # gather from input 0 at a computed (wrapped) offset
            src = self.inputs[0]
            n = max(src.size, 1)
            off = alu(
                "mod",
                alu("add", alu("mul", ir.idx(0), const(3, dtypes.int32)), const(1, dtypes.int32)),
                const(n, dtypes.int32),
            )
            d = self.leaves[0][0].dtype
            return ir.gather(0, off, d), True
        return self.rng.choice(self.leaves)

    def to(self, x, exact, d):
        n, e = x
        if n.dtype is d:
            return n, e
        if n.dtype.kind == "f" and d.kind != "f" and not e:
            return const(1, d), True  # never derive integers from inexact floats
        return cast(n, d), e

    def expr(self, depth: int):
        if depth == 0:
            return self.leaf()
        rng = self.rng
        a = self.expr(depth - 1)
        kind = rng.random()
        d = a[0].dtype
        if kind < 0.15:
            return self.to(a, a[1], rng.choice(ALL))
        if kind < 0.3:
            ops = {
                "f": [
                    "neg",
                    "abs",
                    "floor",
                    "ceil",
                    "trunc",
                    "round_even",
                    "sign",
                    "exp",
                    "sin",
                    "tanh",
                    "sqrt",
                    "log1p",
                ],
                "i": ["neg", "abs", "not", "sign", "popcnt", "clz"],
                "u": ["not", "popcnt", "clz", "neg"],
                "b": ["not"],
            }[d.kind]
            op = rng.choice(ops)
            exact = a[1] and op not in ("exp", "sin", "tanh", "sqrt", "log1p")
            return alu(op, a[0]), exact
        b = self.to(self.expr(depth - 1), True, d)
        if kind < 0.4:
            c = self.expr(depth - 1)
            if c[0].dtype.kind == "f" and not c[1]:
                c = (const(True, dtypes.bool_), True)
            cond = c[0] if c[0].dtype.kind == "b" else alu("ne", c[0], const(0, c[0].dtype))
            return where(cond, a[0], b[0]), a[1] and b[1]
        if d.kind == "f":
            ops = ["add", "sub", "max", "min", "lt", "eq", "ge", "div", "rem", "atan2", "pow"]
            # Shader compilers fold inf*0 to 0 when they can prove a factor is zero (e.g. x * select(0, 1, c));
            # products are only fuzzed on finite data (a documented limitation).
            op = rng.choice(ops if self.specials else ops + ["mul"])
        elif d.kind == "b":
            op = rng.choice(["and", "or", "xor", "eq", "ne", "lt"])
        else:
            op = rng.choice(
                ["add", "sub", "mul", "max", "min", "and", "or", "xor", "div", "rem", "shl", "shr", "lt", "gt", "eq"]
            )
        exact = a[1] and b[1] and op not in ("div", "atan2", "pow")
        if op in ("lt", "eq", "ge", "gt") and d.kind == "f" and not exact:
            return (const(False, dtypes.bool_), True)
        return alu(op, a[0], b[0]), exact


def random_kernel(seed: int):
    rng = random.Random(seed)
    nd = rng.randint(0, 3)
    shape = tuple(rng.randint(1, 6) for _ in range(nd))
    if rng.random() < 0.15 and nd:
        shape = shape[:-1] + (rng.choice([33, 67, 130]),)
    g = Gen(rng, shape, rng.randint(1, 3), specials=rng.random() < 0.3)
    with ir.shape_context(shape):
        body, exact = g.expr(rng.randint(1, 4))
    in_dtypes = [n.dtype for n, _ in g.leaves]
    if nd >= 1 and rng.random() < 0.45:
        nr = rng.randint(1, nd)
        axes = tuple(range(nd - nr, nd))
        d = body.dtype
        op = rng.choice(["sum", "max", "min", "argmax", "argmin"] + (["prod"] if d.kind != "f" else []))
        if d.kind == "b" and op in ("sum", "prod"):
            op = "or"
        if op in ("argmax", "argmin") and nr != 1:
            op = "max"
        if op in ("argmax", "argmin") and not exact and d.kind == "f":
            op = "max"
        if op == "sum" and d.kind == "f" and not exact:
            exact = False
        acc_d = dtypes.int32 if op in ("argmax", "argmin") else d
        out_shape = shape[: nd - nr]
        # epilogue: acc combined with a load over the output shape
        epi = ir.acc(acc_d)
        if rng.random() < 0.5 and out_shape:
            base = rng.choice(range(len(g.inputs)))
            src = g.inputs[base]
            tr = ShapeTracker.contiguous((src.size,)).shrink(((0, 1),)).reshape((1,) * len(out_shape)).expand(out_shape)
            ld = ir.load(base, tr, in_dtypes[base])
            with ir.shape_context(out_shape):
                epi = alu("add", epi, cast(ld, acc_d)) if acc_d.kind != "b" else alu("or", epi, cast(ld, acc_d))
        k = Kernel(shape, in_dtypes, epi, op, axes, body)
        inexact = not exact or (op in ("sum", "prod") and d.kind == "f")
        return k, g.inputs, not inexact
    return Kernel(shape, in_dtypes, body), g.inputs, exact


@settings(
    max_examples=int(__import__("os").environ.get("PYJAX_FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.integers(0, 2**32 - 1))
def test_random_kernels_match_cpu(gpu, seed):
    k, arrays, exact = random_kernel(seed)
    want = run_cpu(k, arrays)
    got = run_gpu(gpu, k, arrays)
    compare(got, want.reshape(got.shape), exact and k.out_dtype.kind != "f" or exact, what=repr(k))
