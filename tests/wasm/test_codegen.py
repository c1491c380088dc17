"""Wasm kernel codegen vs the cpu backend (numpy_eval), op by op and dtype by dtype.

Every ALU op of the IR runs through both backends on the same inputs, including special values
(NaN, +-inf, -0, integer extremes, zero divisors, big shifts), in shapes that take the scalar,
SIMD-with-tail and strided paths. Also casts, bitcasts, reductions in every layout, gathers,
masked (padded) views, the tiled matmul with fused epilogues, traps and out-of-memory.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("wasmtime")

from pyjax.backends.cpu import CpuBackend  # noqa: E402
from pyjax.backends.wasm import WasmBackend, matmul  # noqa: E402
from pyjax.compiler import ir  # noqa: E402
from pyjax.compiler.ir import Kernel  # noqa: E402
from pyjax.compiler.views import ShapeTracker  # noqa: E402
from pyjax.core import dtypes  # noqa: E402

D = dtypes
FLOATS = [D.float32, D.float64, D.float16]
INTS = [D.int8, D.int16, D.int32, D.uint8, D.uint16, D.uint32]
INT64 = [D.int64, D.uint64]
ALL = FLOATS + INTS + [D.bool_]


@pytest.fixture(scope="module")
def wasm():
    return WasmBackend()


# every tile a backend may use: each engine's table entry and every autotune candidate
_ALL_TILES = sorted(set(matmul.TILES.values()).union(*matmul.CANDIDATES.values()), key=str)


@pytest.fixture(
    scope="module", params=_ALL_TILES, ids=["x".join(map(str, (t[0], 4 * t[1], *t[2:]))) for t in _ALL_TILES]
)
def wasm_tiled(request):
    """A wasm backend generating matmuls with each register tile (MR rows x 4*NV columns)."""
    b = WasmBackend()
    b.matmul_tile = request.param
    return b


@pytest.fixture(scope="module")
def cpu():
    return CpuBackend()


def run(backend, kernel: Kernel, inputs: list) -> np.ndarray:
    slots = []
    for a in inputs:
        a = np.ascontiguousarray(a)
        s = backend.malloc(max(a.nbytes, 1))
        backend.write(s, a.tobytes())
        slots.append(s)
    od = np.dtype(kernel.out_dtype.name)
    nbytes = kernel.out_size * od.itemsize
    out = backend.malloc(max(nbytes, 1))
    backend.dispatch(backend.prepare_kernel(kernel), slots, [out])
    res = np.frombuffer(backend.read(out, nbytes), od).reshape(kernel.out_shape).copy()
    for s in slots + [out]:
        backend.free(s)
    return res


def compare(cpu, wasm, kernel, inputs, rtol=0.0, atol=0.0, signed_zeros=True):
    want = run(cpu, kernel, inputs)
    got = run(wasm, kernel, inputs)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True, err_msg=repr(kernel)
        )
        # signs of zeros and infinities agree too
        both_zero = (want == 0) & (got == 0)
        if rtol == 0 and atol == 0 and signed_zeros:
            np.testing.assert_array_equal(np.signbit(got[both_zero]), np.signbit(want[both_zero]))
    else:
        np.testing.assert_array_equal(got, want, err_msg=repr(kernel))


def ld(i, shape, dt, tracker=None):
    return ir.load(i, tracker or ShapeTracker.contiguous(shape), dt)


def values(dt, n, seed=0):
    """n values of dtype dt, specials first."""
    rng = np.random.RandomState(seed)
    npd = np.dtype(dt.name)
    if dt.kind == "f":
        special = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -0.5,
            2.5,
            -2.5,
            3.0,
            1e-3,
            100.0,
            -100.0,
            np.inf,
            -np.inf,
            np.nan,
            1e30,
            -1e30,
            1e-40,
            0.49999997,
            7.0,
        ]
        rnd = rng.randn(n) * np.exp(rng.uniform(-4, 4, n))
        v = np.concatenate([special, rnd])[:n]
        with np.errstate(over="ignore"):
            return v.astype(npd)
    if dt.kind == "b":
        return rng.randint(0, 2, n).astype(bool)
    info = np.iinfo(npd)
    special = [0, 1, -1, 2, -2, 3, 7, 8, 31, 32, 33, 63, 64, info.max, info.min, info.max - 1, info.min + 1, 5, -7]
    special = [s for s in special if info.min <= s <= info.max]
    rnd = rng.randint(max(info.min, -(2**31)), min(info.max, 2**31 - 1), n, dtype=np.int64)
    return np.concatenate([np.array(special, dtype=npd), rnd.astype(npd)])[:n]


SHAPES = [(37,), (3, 13), (2,)]  # SIMD + tail, rows, too short to vectorize

UNARY_FLOAT = sorted(
    "neg abs sign floor ceil round_even round_away trunc exp exp2 log log2 log1p expm1 sin cos tan asin acos atan "
    "sinh cosh tanh asinh acosh atanh sqrt rsqrt cbrt erf erfc erf_inv lgamma digamma logistic isnan isinf "
    "isfinite reciprocal".split()
)
EXACT = set("neg abs sign floor ceil round_even round_away trunc isnan isinf isfinite sqrt".split())
LOOSE_F64 = {
    "lgamma": 1e-12,
    "digamma": 1e-12,
    "erf_inv": 1e-12,
    "exp2": 1e-14,
    "log2": 1e-15,
    "cbrt": 1e-15,
    "pow": 1e-13,
}


def _tol(op, dt):
    if op in EXACT:
        return 0.0, 0.0
    if dt.name == "float64":
        return LOOSE_F64.get(op, 4e-15), 1e-300
    if dt.name == "float16":
        return 1e-3, 1e-7
    return (3e-6 if op not in ("lgamma", "digamma") else 1e-5), 1e-37


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("op", UNARY_FLOAT)
def test_unary_float(cpu, wasm, op, dt):
    for shape in SHAPES:
        n = math.prod(shape)
        x = values(dt, n).reshape(shape)
        k = Kernel(shape, [dt], ir.alu(op, ld(0, shape, dt)))
        rtol, atol = _tol(op, dt)
        if op in ("lgamma", "digamma"):
            atol = max(atol, 1e-6 if dt.name != "float64" else 1e-12)
        # numpy's sign(-0.0) is +0.0, so its round_away(-0.0) is +0.0; JAX (and wasm) give -0.0
        compare(cpu, wasm, k, [x], rtol, atol, signed_zeros=op != "round_away")


@pytest.mark.parametrize("dt", INTS + INT64 + [D.bool_], ids=lambda d: d.name)
@pytest.mark.parametrize("op", ["neg", "abs", "sign", "not", "popcnt", "clz"])
def test_unary_int(cpu, wasm, op, dt):
    if dt.kind == "b" and op != "not":
        pytest.skip("bool supports only not")
    for shape in SHAPES:
        x = values(dt, math.prod(shape)).reshape(shape)
        k = Kernel(shape, [dt], ir.alu(op, ld(0, shape, dt)))
        if op == "popcnt":  # JAX counts the bits of the two's complement (numpy those of |x|)
            want = np.bitwise_count(x.view(f"u{x.dtype.itemsize}")).astype(x.dtype)
            np.testing.assert_array_equal(run(wasm, k, [x]), want)
        else:
            compare(cpu, wasm, k, [x])


BINARY_FLOAT = [
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "pow",
    "max",
    "min",
    "atan2",
    "nextafter",
    "lt",
    "le",
    "gt",
    "ge",
    "eq",
    "ne",
]


@pytest.mark.parametrize("dt", FLOATS, ids=lambda d: d.name)
@pytest.mark.parametrize("op", BINARY_FLOAT)
def test_binary_float(cpu, wasm, op, dt):
    n = 20 * 20
    a = np.repeat(values(dt, 20), 20)
    b = np.tile(values(dt, 20, seed=1), 20)
    extra_a, extra_b = values(dt, 200, seed=2), values(dt, 200, seed=3)
    a, b = np.concatenate([a, extra_a]), np.concatenate([b, extra_b])
    if op == "nextafter" and dt.name == "float16":
        pytest.skip("numpy's float16 nextafter differs in subnormal handling")
    shape = (a.size,)
    k = Kernel(shape, [dt, dt], ir.alu(op, ld(0, shape, dt), ld(1, shape, dt)))
    exact = op in ("add", "sub", "mul", "div", "rem", "max", "min", "nextafter", "lt", "le", "gt", "ge", "eq", "ne")
    rtol, atol = (0.0, 0.0) if exact else _tol(op, dt)
    if dt.name == "float16" and op in ("div",):
        rtol, atol = 1e-3, 0
    assert n
    # max/min of +-0: numpy returns its first operand, JAX (and wasm) +0.0 for max and -0.0 for min
    compare(cpu, wasm, k, [a, b], rtol, atol, signed_zeros=op not in ("max", "min"))


BINARY_INT = [
    "add",
    "sub",
    "mul",
    "div",
    "rem",
    "max",
    "min",
    "and",
    "or",
    "xor",
    "shl",
    "shr",
    "lt",
    "le",
    "gt",
    "ge",
    "eq",
    "ne",
]


@pytest.mark.parametrize("dt", INTS + INT64, ids=lambda d: d.name)
@pytest.mark.parametrize("op", BINARY_INT + ["pow"])
def test_binary_int(cpu, wasm, op, dt):
    a = np.repeat(values(dt, 19), 19)
    b = np.tile(values(dt, 19, seed=1), 19)
    if op == "pow":
        b = np.abs(b.astype(np.int64) % 9).astype(a.dtype)
    shape = (a.size,)
    k = Kernel(shape, [dt, dt], ir.alu(op, ld(0, shape, dt), ld(1, shape, dt)))
    with np.errstate(all="ignore"):
        compare(cpu, wasm, k, [a, b])


@pytest.mark.parametrize("op", ["and", "or", "xor", "eq", "ne", "lt", "gt", "add", "mul", "max", "min"])
def test_binary_bool(cpu, wasm, op):
    a = np.array([0, 0, 1, 1] * 5, bool)
    b = np.array([0, 1, 0, 1] * 5, bool)
    shape = (20,)
    k = Kernel(shape, [D.bool_, D.bool_], ir.alu(op, ld(0, shape, D.bool_), ld(1, shape, D.bool_)))
    want_np = {"add": np.logical_or, "mul": np.logical_and, "max": np.logical_or, "min": np.logical_and}
    if op in want_np:
        np.testing.assert_array_equal(run(wasm, k, [a, b]), want_np[op](a, b))
    else:
        compare(cpu, wasm, k, [a, b])


@pytest.mark.parametrize("op", ["idiv", "mod"])
def test_index_floor_div(cpu, wasm, op):
    a = np.arange(-50, 50, dtype=np.int32)
    for d in (1, 3, 7, 64):
        b = np.full(100, d, np.int32)
        k = Kernel((100,), [D.int32, D.int32], ir.node(op, D.int32, (ld(0, (100,), D.int32), ld(1, (100,), D.int32))))
        compare(cpu, wasm, k, [a, b])


@pytest.mark.parametrize("src", ALL + INT64, ids=lambda d: d.name)
@pytest.mark.parametrize("dst", ALL + INT64, ids=lambda d: d.name)
def test_cast(cpu, wasm, src, dst):
    x = values(src, 41)
    if src.kind == "f" and dst.itemsize == 8 and dst.kind in "iu":
        x = x[np.abs(x) < 2.0**62]  # numpy's saturation at the int64 limits overflows
    shape = x.shape
    k = Kernel(shape, [src], ir.cast(ld(0, shape, src), dst))
    with np.errstate(all="ignore"):
        compare(cpu, wasm, k, [x])


SAME_SIZE = [
    (D.float32, D.int32),
    (D.float32, D.uint32),
    (D.int32, D.float32),
    (D.uint32, D.float32),
    (D.int32, D.uint32),
    (D.float64, D.int64),
    (D.int64, D.float64),
    (D.float16, D.int16),
    (D.float16, D.uint16),
    (D.uint16, D.float16),
    (D.int8, D.uint8),
    (D.uint8, D.int8),
]


@pytest.mark.parametrize("src,dst", SAME_SIZE, ids=lambda p: getattr(p, "name", str(p)))
def test_bitcast(cpu, wasm, src, dst):
    x = values(src, 41)
    if src.kind == "f":
        x = x[~np.isnan(x)]  # NaN payloads may differ
    shape = x.shape
    compare(cpu, wasm, Kernel(shape, [src], ir.bitcast(ld(0, shape, src), dst)), [x])


def test_where_and_iota(cpu, wasm):
    shape = (5, 11)
    x = values(D.float32, 55).reshape(shape)
    with ir.shape_context(shape):
        cond = ir.alu("lt", ir.idx(1), ir.idx(0) * 2)
        e = ir.where(cond, ld(0, shape, D.float32), ir.cast(ir.idx(1), D.float32))
    compare(cpu, wasm, Kernel(shape, [D.float32], e), [x])


def _cold_kernel(shape, bcast=False):
    """Two cold wheres on one condition (|x| > 4096) whose true sides share a subexpression with
    each other and with the false side, plus a plain use of that subexpression after them."""
    tr = ShapeTracker.contiguous((shape[0], 1)).expand(shape) if bcast else None
    with ir.shape_context(shape):
        x = ld(0, shape, D.float32, tr)
        ax = ir.alu("abs", x)
        big = ir.alu("gt", ax, ir.const(4096.0, D.float32))
        shared = ir.alu("mul", ax, ir.const(0.5, D.float32))
        deep = ir.alu("sqrt", ir.alu("add", shared, ir.const(1.0, D.float32)))

        def cold(a, b):
            return ir.node("where", D.float32, (big, a, b), "cold")

        r = cold(ir.alu("add", deep, shared), ir.alu("sub", x, shared))
        q = cold(ir.alu("mul", deep, ir.const(3.0, D.float32)), ir.alu("neg", shared))
        e = ir.alu("add", ir.alu("mul", r, q), shared)
    return Kernel(shape, [D.float32], e)


@pytest.mark.parametrize("lanes", ["none", "some", "tail", "all"])
@pytest.mark.parametrize("shape", [(2, 37), (3,)], ids=str)
def test_cold_where_branches(cpu, wasm, lanes, shape):
    """A cold `where` (mathlib's `rarely`) runs its true side in an `if`: exact on SIMD vectors
    where no lane, some lanes or all take it, on the scalar tail and on a broadcast condition."""
    n = math.prod(shape)
    x = np.linspace(-3000.0, 3000.0, n).astype(np.float32)
    big = {"none": [], "some": list(range(1, n, 9)), "tail": [n - 1], "all": list(range(n))}[lanes]
    x[big] = np.float32(1e5) * np.sign(x[big] + 0.5)
    compare(cpu, wasm, _cold_kernel(shape), [x.reshape(shape)])
    rows = x.reshape(shape)[..., :1] if len(shape) == 2 else x[:1]
    if len(shape) == 2:
        compare(cpu, wasm, _cold_kernel(shape, bcast=True), [np.ascontiguousarray(rows)])


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
def test_trig_mixed_big_lanes(cpu, wasm, op):
    """float32 sin/cos/tan with the big-argument reduction in an `if`: vectors with no, one and
    all lanes beyond 4096 (and a big scalar tail) match the cpu backend's select."""
    x = np.linspace(-4000.0, 4000.0, 43).astype(np.float32)
    x[[5, 12, 13, 14, 15, 42]] = [1e5, 7e8, -3e30, 5000.0, 1e20, 2e9]
    with ir.shape_context((43,)):
        k = Kernel((43,), [D.float32], ir.alu(op, ld(0, (43,), D.float32)))
    compare(cpu, wasm, k, [x], *_tol(op, D.float32))


# --- views -------------------------------------------------------------------------------------------


def _tracker_cases():
    base = ShapeTracker.contiguous((6, 8))
    yield "T", base.permute((1, 0)), (6, 8)
    yield "slice_step", base.shrink(((1, 5), (0, 8))).stride(1, 2), (6, 8)
    yield "flip", base.flip((1,)), (6, 8)
    yield "pad", base.pad(((1, 2), (3, 1))), (6, 8)
    yield "bcast", ShapeTracker.contiguous((1, 8)).expand((6, 8)), (1, 8)
    yield "bcast_col", ShapeTracker.contiguous((6, 1)).expand((6, 8)), (6, 1)
    yield "reshape_T", base.permute((1, 0)).reshape((4, 12)), (6, 8)
    yield "pad_T", base.permute((1, 0)).pad(((0, 1), (2, 0))), (6, 8)


@pytest.mark.parametrize("case", list(_tracker_cases()), ids=lambda c: c[0])
@pytest.mark.parametrize("dt", [D.float32, D.int32, D.bool_, D.float16, D.float64, D.uint8], ids=lambda d: d.name)
def test_views(cpu, wasm, case, dt):
    _, tr, base_shape = case
    x = values(dt, math.prod(base_shape), seed=5).reshape(base_shape)
    shape = tr.shape
    e = ir.load(0, tr, dt)
    if dt.kind == "f":
        e = ir.alu("mul", e, ir.const(2.0, dt))
    compare(cpu, wasm, Kernel(shape, [dt], e), [x])


def test_gather(cpu, wasm):
    shape = (7, 9)
    x = values(D.float32, 50)
    idx = np.random.RandomState(0).randint(-3, 60, shape).astype(np.int32)
    g = ir.gather(0, ld(1, shape, D.int32), D.float32)
    compare(cpu, wasm, Kernel(shape, [D.float32, D.int32], ir.alu("add", g, ir.const(1.0, D.float32))), [x, idx])


# --- reductions ---------------------------------------------------------------------------------------

RED_SHAPES = [
    ((6, 37), (1,)),
    ((37, 6), (0,)),
    ((4, 5, 9), (1, 2)),
    ((3, 4, 5), (0, 2)),
    ((50,), (0,)),
    ((3, 2), (1,)),
    ((2, 3, 16), (0,)),
]


def _reduction_kernel(shape, axes, dt, op, transform=None):
    """Reduce a contiguous input of `shape` over `axes` as lowering would (reduced axes moved last)."""
    kept = [i for i in range(len(shape)) if i not in axes]
    perm = kept + list(axes)
    tr = ShapeTracker.contiguous(shape).permute(tuple(perm))
    full = tr.shape
    body = ir.load(0, tr, dt)
    if transform is not None:
        body = transform(body)
    adt = dtypes.int32 if op in ("argmax", "argmin") else body.dtype
    red_axes = tuple(range(len(kept), len(full)))
    epi = ir.acc(adt)
    return Kernel(full, [dt], epi, op, red_axes, body)


@pytest.mark.parametrize("shape,axes", RED_SHAPES, ids=str)
@pytest.mark.parametrize("op", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dt", [D.float32, D.float64, D.int32, D.uint32, D.int8], ids=lambda d: d.name)
def test_reductions(cpu, wasm, shape, axes, op, dt):
    x = values(dt, math.prod(shape), seed=3).reshape(shape)
    if dt.kind == "f":
        x = np.where(np.isfinite(x), np.clip(x, -3, 3), 1.5).astype(x.dtype)
        if op == "max":
            x.reshape(-1)[5] = np.nan  # NaN propagates
    k = _reduction_kernel(shape, axes, dt, op)
    rtol = {"float32": 2e-5, "float64": 1e-12}.get(dt.name, 0)
    with np.errstate(all="ignore"):
        compare(cpu, wasm, k, [x], rtol, 1e-6 if dt.kind == "f" else 0)


@pytest.mark.parametrize("shape,axes", RED_SHAPES, ids=str)
@pytest.mark.parametrize("op", ["and", "or"])
def test_bool_reductions(cpu, wasm, shape, axes, op):
    x = values(D.bool_, math.prod(shape), seed=4).reshape(shape)
    x.reshape(-1)[: x.size // 2] = op == "and"
    compare(cpu, wasm, _reduction_kernel(shape, axes, D.bool_, op), [x])


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("dt", [D.float32, D.int32, D.bool_, D.float16], ids=lambda d: d.name)
def test_arg_reductions(cpu, wasm, op, dt):
    for shape, axes in [((6, 37), (1,)), ((37, 6), (0,)), ((40,), (0,))]:
        x = values(dt, math.prod(shape), seed=7).reshape(shape)
        if dt.kind == "f":
            x.reshape(-1)[[3, 30]] = np.nan
            x.reshape(-1)[[4, 10]] = x.reshape(-1)[[10, 4]]
        compare(cpu, wasm, _reduction_kernel(shape, axes, dt, op), [x])


def test_reduction_epilogue_and_body_fusion(cpu, wasm):
    shape = (9, 33)
    x = values(D.float32, math.prod(shape)).reshape(shape)
    x = np.where(np.isfinite(x), np.clip(x, -3, 3), 0.5).astype(np.float32)
    b = values(D.float32, 9, seed=2)
    b = np.where(np.isfinite(b), b, 0).astype(np.float32)
    body = ir.alu("exp", ld(0, shape, D.float32))
    with ir.shape_context((9,)):
        epi = ir.alu("log", ir.alu("add", ir.acc(D.float32), ir.alu("abs", ld(1, (9,), D.float32))))
    k = Kernel(shape, [D.float32, D.float32], epi, "sum", (1,), body)
    compare(cpu, wasm, k, [x, b], 1e-5, 1e-6)


def test_full_reduction_of_half(cpu, wasm):
    x = np.linspace(-1, 1, 301).astype(np.float16)
    body = ir.cast(ld(0, (301,), D.float16), D.float32)
    k = Kernel((301,), [D.float16], ir.cast(ir.acc(D.float32), D.float16), "sum", (0,), body)
    compare(cpu, wasm, k, [x], 1e-3, 1e-3)


# --- matmul ---------------------------------------------------------------------------------------------


def _matmul_kernel(b, m, k, n, epilogue=None, a_t=False, dt=D.float32):
    """out[b, i, j] = sum_k A[b, i, k] * B[b, k, j] in dot_general's lowering layout (B, M, N, K)."""
    full = (b, m, n, k)
    ta = ShapeTracker.contiguous((b, k, m) if a_t else (b, m, k))
    if a_t:
        ta = ta.permute((0, 2, 1))
    ta = ta.reshape((b, m, 1, k)).expand(full)
    tb = ShapeTracker.contiguous((b, k, n)).permute((0, 2, 1)).reshape((b, 1, n, k)).expand(full)
    body = ir.alu("mul", ir.load(0, ta, dt), ir.load(1, tb, dt))
    acc = ir.acc(dt)
    epi = acc if epilogue is None else epilogue(acc)
    return Kernel(full, [dt, dt] + ([D.float32] if epilogue else []), epi, "sum", (3,), body)


@pytest.mark.parametrize(
    "b,m,k,n",
    [(1, 8, 8, 16), (1, 13, 7, 21), (2, 5, 33, 9), (1, 1, 5, 3), (1, 64, 300, 40), (3, 9, 16, 64), (1, 33, 600, 17)],
)
@pytest.mark.parametrize("a_t", [False, True])
def test_matmul(cpu, wasm_tiled, b, m, k, n, a_t):
    rng = np.random.RandomState(0)
    A = rng.randn(b, k, m).astype(np.float32) if a_t else rng.randn(b, m, k).astype(np.float32)
    B = rng.randn(b, k, n).astype(np.float32)
    kern = _matmul_kernel(b, m, k, n, a_t=a_t)
    compare(cpu, wasm_tiled, kern, [A, B], 1e-5, 1e-5 * math.sqrt(k))


@pytest.mark.parametrize("tile", [(4, 3), (3, 3, "bcast")], ids=["4x12", "3x12-bcast"])
@pytest.mark.parametrize("a_t", [False, True])
def test_matmul_panels_stay_in_their_scratch(tile, a_t, monkeypatch):
    """Two full panels of 120 columns (10 strips of 12 for NV = 3) with the output allocated right
    after the kernel's scratch: padding a panel to whole strips once overran the scratch by 8
    columns, so the second panel's packing overwrote the first rows of the output."""
    monkeypatch.setattr(matmul, "_ENV_PANEL", 128 * 1024)  # 120-column panels for K = 256
    wasm_tiled = WasmBackend()
    wasm_tiled.matmul_tile = tile
    m, k, n = 8, 256, 240
    rng = np.random.RandomState(2)
    A, B = rng.randn(1, k, m) if a_t else rng.randn(1, m, k), rng.randn(1, k, n)
    A, B = A.astype(np.float32), B.astype(np.float32)
    exe = wasm_tiled.prepare_kernel(_matmul_kernel(1, m, k, n, a_t=a_t))  # scratch first, then the output
    slots = [wasm_tiled.malloc(x.nbytes) for x in (A, B)]
    for s, x in zip(slots, (A, B), strict=True):
        wasm_tiled.write(s, x.tobytes())
    out = wasm_tiled.malloc(m * n * 4)
    wasm_tiled.dispatch(exe, slots, [out])
    got = np.frombuffer(wasm_tiled.read(out, m * n * 4), np.float32).reshape(m, n)
    want = (A[0].T if a_t else A[0]).astype(np.float64) @ B[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    for s in slots + [out]:
        wasm_tiled.free(s)


def test_matmul_bias_relu_epilogue(cpu, wasm_tiled):
    b, m, k, n = 1, 19, 40, 27
    rng = np.random.RandomState(1)
    A, B, c = rng.randn(b, m, k).astype(np.float32), rng.randn(b, k, n).astype(np.float32), rng.randn(n)

    def epi(acc):
        with ir.shape_context((b, m, n)):
            bias = ir.load(2, ShapeTracker.contiguous((1, 1, n)).expand((b, m, n)), D.float32)
            return ir.alu("max", ir.alu("add", acc, bias), ir.const(0.0, D.float32))

    compare(cpu, wasm_tiled, _matmul_kernel(b, m, k, n, epi), [A, B, c.astype(np.float32)], 1e-5, 1e-5)


def test_matmul_f64(cpu, wasm):
    rng = np.random.RandomState(2)
    A, B = rng.randn(1, 6, 11), rng.randn(1, 11, 7)
    compare(cpu, wasm, _matmul_kernel(1, 6, 11, 7, dt=D.float64), [A, B], 1e-12, 1e-12)


# --- errors -------------------------------------------------------------------------------------------


def test_out_of_memory_is_clear_and_recoverable():
    from pyjax.hosts.wasmtime_host import WasmtimeHost

    be = WasmBackend(WasmtimeHost(pages=16, max_pages=64))
    s = be.malloc(1 << 20)
    with pytest.raises(MemoryError, match="out of memory"):
        be.malloc(8 << 20)
    be.free(s)
    s2 = be.malloc(2 << 20)  # still usable
    be.write(s2, b"abc")
    assert be.read(s2, 3) == b"abc"


def test_trap_names_the_kernel(wasm):
    from pyjax.backends.wasm.backend import WasmKernelError

    k = Kernel((4,), [D.float32], ir.alu("add", ld(0, (4,), D.float32), ir.const(1.0, D.float32)), name="k_trap")
    exe = wasm.prepare_kernel(k)
    out = wasm.malloc(16)
    with pytest.raises(WasmKernelError, match="k_trap"):
        wasm.dispatch(exe, [2**31 - 8], [out])  # an input pointer far outside memory
    # still usable
    assert run(wasm, k, [np.ones(4, np.float32)]).tolist() == [2.0] * 4


def test_kernel_cache_by_structure(wasm):
    e = ir.alu("mul", ld(0, (8,), D.float32), ir.const(3.0, D.float32))
    k1, k2 = Kernel((8,), [D.float32], e, name="a"), Kernel((8,), [D.float32], e, name="b")
    assert wasm.prepare_kernel(k1) is wasm.prepare_kernel(k2)


# --- routines -------------------------------------------------------------------------------------------


def run_routine(backend, r, inputs):
    slots = []
    for a in inputs:
        a = np.ascontiguousarray(a)
        s = backend.malloc(max(a.nbytes, 1))
        backend.write(s, a.tobytes())
        slots.append(s)
    outs, res = [], []
    for av in r.out_avals:
        nb = math.prod(av.shape) * np.dtype(av.dtype.name).itemsize
        o = backend.malloc(max(nb, 1))
        backend.write(o, b"\xa5" * max(nb, 1))  # garbage: outputs must be written completely
        outs.append((o, nb, av))
    backend.dispatch(backend.prepare_routine(r), slots, [o for o, _, _ in outs])
    for o, nb, av in outs:
        res.append(np.frombuffer(backend.read(o, nb), np.dtype(av.dtype.name)).reshape(av.shape).copy())
    return res


def compare_routine(cpu, wasm, r, inputs, rtol=0.0, atol=0.0):
    want = run_routine(cpu, r, inputs)
    got = run_routine(wasm, r, inputs)
    for g, w in zip(got, want):
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, equal_nan=True, err_msg=repr(r))
        else:
            np.testing.assert_array_equal(g, w, err_msg=repr(r))


def _aval(shape, dt):
    from pyjax.core.core import ShapedArray

    return ShapedArray(tuple(shape), dt)


@pytest.mark.parametrize(
    "dt", [D.float32, D.float64, D.float16, D.int32, D.uint8, D.int8, D.bool_, D.int64, D.uint32], ids=lambda d: d.name
)
@pytest.mark.parametrize("shape", [(7,), (3, 40), (2, 1000), (1,), (4, 0)])
def test_sort_one_key_with_payload(cpu, wasm, dt, shape):
    from pyjax.compiler.ir import Routine

    rng = np.random.RandomState(0)
    x = values(dt, max(math.prod(shape), 1), seed=9)[: math.prod(shape)]
    x = rng.permutation(np.concatenate([x, x[: x.size // 3]]))[: math.prod(shape)].reshape(shape)  # duplicates
    payload = np.arange(math.prod(shape), dtype=np.int32).reshape(shape)
    r = Routine(
        "sort", {"num_keys": 1}, (_aval(shape, dt), _aval(shape, D.int32)), (_aval(shape, dt), _aval(shape, D.int32))
    )
    compare_routine(cpu, wasm, r, [x, payload])


def test_sort_nan_and_signed_zero_order(cpu, wasm):
    from pyjax.compiler.ir import Routine

    x = np.array([np.nan, 1.0, -0.0, 0.0, -np.inf, np.inf, -np.nan, 0.0, -0.0, -1.0] * 7, np.float32)
    idx = np.arange(x.size, dtype=np.int32)
    av = (_aval(x.shape, D.float32), _aval(x.shape, D.int32))
    r = Routine("sort", {"num_keys": 1}, av, av)
    got_x, got_i = run_routine(wasm, r, [x, idx])
    want_x, want_i = run_routine(cpu, r, [x, idx])
    np.testing.assert_array_equal(got_i, want_i)  # stable: -0.0 and 0.0 keep their order
    np.testing.assert_array_equal(np.signbit(got_x), np.signbit(want_x))


@pytest.mark.parametrize("n", [5, 300])
def test_sort_multi_key(cpu, wasm, n):
    from pyjax.compiler.ir import Routine

    rng = np.random.RandomState(1)
    k0 = rng.randint(0, 3, (2, n)).astype(np.int32)
    k1 = rng.choice(np.array([0.5, -1.0, np.nan, 2.0], np.float32), (2, n))
    k2 = rng.randint(-(2**40), 2**40, (2, n)).astype(np.int64)
    v = np.arange(2 * n, dtype=np.float64).reshape(2, n)
    avals = tuple(_aval(a.shape, dt) for a, dt in ((k0, D.int32), (k1, D.float32), (k2, D.int64), (v, D.float64)))
    compare_routine(cpu, wasm, Routine("sort", {"num_keys": 3}, avals, avals), [k0, k1, k2, v])


@pytest.mark.parametrize("op", ["sum", "prod", "max", "min", "logsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("dt", [D.float32, D.float64, D.int32, D.float16, D.uint8], ids=lambda d: d.name)
def test_cumulative(cpu, wasm, op, reverse, dt):
    from pyjax.compiler.ir import Routine

    if op == "logsumexp" and dt.kind != "f":
        pytest.skip("logsumexp is for floats")
    shape = (3, 17)
    x = values(dt, 51, seed=11).reshape(shape)
    if dt.kind == "f":
        x = np.where(np.isfinite(x), np.clip(x, -2, 2), 0.5).astype(x.dtype)
        x[1, 4] = np.nan
    av = (_aval(shape, dt),)
    r = Routine("cumulative", {"op": op, "reverse": reverse}, av, av)
    tol = {"float32": 1e-6, "float64": 1e-14, "float16": 1e-3}.get(dt.name, 0)
    with np.errstate(all="ignore"):
        compare_routine(cpu, wasm, r, [x], tol, tol)


@pytest.mark.parametrize("dt", [D.float32, D.float64], ids=lambda d: d.name)
@pytest.mark.parametrize("n,batch", [(1, ()), (5, ()), (33, (2,)), (3, (2, 2))])
def test_cholesky(cpu, wasm, dt, n, batch):
    from pyjax.compiler.ir import Routine

    rng = np.random.RandomState(n)
    a = rng.randn(*batch, n, n)
    spd = (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dt.name)
    if batch:
        spd.reshape(-1, n, n)[-1, 0, 0] = -5.0  # not positive definite: NaNs
    av = (_aval(spd.shape, dt),)
    tol = 1e-5 if dt.name == "float32" else 1e-12
    compare_routine(cpu, wasm, Routine("cholesky", {}, av, av), [spd], tol, tol)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve(cpu, wasm, left_side, lower, transpose_a, unit_diagonal):
    from pyjax.compiler.ir import Routine

    rng = np.random.RandomState(3)
    m, k = 6, 5
    a = (rng.randn(2, m, m) + 4 * np.eye(m)).astype(np.float32)
    b = rng.randn(2, m, k).astype(np.float32) if left_side else rng.randn(2, k, m).astype(np.float32)
    p = {
        "left_side": left_side,
        "lower": lower,
        "transpose_a": transpose_a,
        "conjugate_a": False,
        "unit_diagonal": unit_diagonal,
    }
    r = Routine(
        "triangular_solve", p, (_aval(a.shape, D.float32), _aval(b.shape, D.float32)), (_aval(b.shape, D.float32),)
    )
    compare_routine(cpu, wasm, r, [a, b], 1e-5, 1e-5)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 6), (2, 7, 7)])
def test_lu(cpu, wasm, shape):
    from pyjax.compiler.ir import Routine

    rng = np.random.RandomState(4)
    a = rng.randn(*shape).astype(np.float32)
    if len(shape) == 3:
        a[1, :, 2] = 0.0  # a zero pivot column
    m, n = shape[-2:]
    batch = shape[:-2]
    outs = (_aval(shape, D.float32), _aval(batch + (min(m, n),), D.int32), _aval(batch + (m,), D.int32))
    compare_routine(cpu, wasm, Routine("lu", {}, (_aval(shape, D.float32),), outs), [a], 1e-5, 1e-5)


@pytest.mark.parametrize("kind", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("dt", [D.float32, D.int32, D.bool_, D.float16], ids=lambda d: d.name)
def test_scatter(cpu, wasm, kind, dt):
    from pyjax.compiler.ir import Routine

    rng = np.random.RandomState(5)
    x = values(dt, 4 * 5 * 3, seed=1).reshape(4, 5, 3)
    if dt.kind == "f":
        x = np.where(np.isfinite(x), np.clip(x, -3, 3), 1).astype(x.dtype)
    ind = rng.randint(-1, 6, (6, 2)).astype(np.int32)  # some out of range (dropped), some repeated
    ind[3] = ind[1]
    u = values(dt, 6 * 5, seed=2).reshape(6, 5)
    if dt.kind == "f":
        u = np.where(np.isfinite(u), np.clip(u, -3, 3), 2).astype(u.dtype)
    r = Routine(
        "scatter",
        {"axes": (0, 2), "kind": kind},
        (_aval(x.shape, dt), _aval(ind.shape, D.int32), _aval(u.shape, dt)),
        (_aval(x.shape, dt),),
    )
    with np.errstate(all="ignore"):
        compare_routine(cpu, wasm, r, [x, ind, u], 1e-3 if dt.name == "float16" else 1e-6)


def test_matmul_tile_autotuned_once_per_process(monkeypatch):
    """On an engine with candidates (wasmtime's Cranelift) the first matmul times each candidate
    tile and keeps one; later backends of the process reuse it without timing again."""
    from pyjax.backends.wasm import backend as wasm_backend

    monkeypatch.setattr(wasm_backend, "_TUNED", {})
    b = WasmBackend()
    assert b.engine == "cranelift" and b._matmul_tile is None  # nothing timed before a matmul
    tile = b.matmul_tile
    assert tile in matmul.CANDIDATES["cranelift"] and wasm_backend._TUNED == {"cranelift": tile}
    monkeypatch.setattr(WasmBackend, "_tune_matmul_tile", lambda self: pytest.fail("tuned twice"))
    assert WasmBackend().matmul_tile == tile
