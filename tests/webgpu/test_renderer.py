"""The webgpu backend on lavapipe (or any adapter): per-op semantics at the IR level against
the cpu reference, every kernel strategy (vec4 elementwise, packed stores, serial /
cooperative / split reductions, matmul tiles, merged inputs, multi-dimensional grids), the
routines, and the runtime contract (batched submits, deferred frees, copies, host fallback)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax.backends.cpu import numpy_eval
from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, alu, cast
from pyjax.compiler.views import ShapeTracker
from pyjax.core import dtypes

pytest.importorskip("wgpu")
pytest.importorskip("ml_dtypes")  # registers bfloat16 with numpy (the cpu reference needs it)


@pytest.fixture(scope="module")
def gpu():
    try:
        return pyjax.devices("webgpu")[0].backend
    except Exception as e:  # no adapter
        pytest.skip(f"no WebGPU adapter: {e}")


@pytest.fixture
def on_gpu(gpu):
    with pyjax.default_device(pyjax.devices("webgpu")[0]):
        yield gpu


def np_dt(d):
    return np.dtype(d.name)


def run(be, k: Kernel, arrays: list) -> np.ndarray:
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
    return np.frombuffer(raw, dtype=np_dt(k.out_dtype)).copy()


def ref(k: Kernel, arrays: list) -> np.ndarray:
    ins = [np.ascontiguousarray(a).reshape(-1).view(np_dt(d)) for a, d in zip(arrays, k.in_dtypes)]
    out = numpy_eval.run_kernel(k, ins)
    return np.asarray(out).astype(np_dt(k.out_dtype)).reshape(-1)


def flat_load(i: int, n: int, d):
    return ir.load(i, ShapeTracker.contiguous((n,)), d)


SPECIAL_F = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    3.5,
    1e-3,
    123.456,
    -1e10,
    1e30,
    65504.0,
    70000.0,
    1e-6,
    math.inf,
    -math.inf,
    math.nan,
    2.0**-20,
    7.0,
    -0.75,
]
INT_VALS = {
    "int32": [0, 1, -1, 7, -7, 2**31 - 1, -(2**31), 100, -100, 31, 32, 33, 5, -3],
    "uint32": [0, 1, 7, 2**32 - 1, 2**31, 100, 31, 32, 33, 5, 3, 8, 9, 64],
    "int8": [0, 1, -1, 7, -7, 127, -128, 100, -100, 5, 8, 9, 3, -3],
    "uint8": [0, 1, 7, 255, 128, 100, 5, 8, 9, 3, 31, 200, 2, 4],
    "int16": [0, 1, -1, 7, -7, 32767, -32768, 100, -100, 15, 16, 17, 3, -3],
    "uint16": [0, 1, 7, 65535, 32768, 100, 15, 16, 17, 3, 5, 9, 2, 4],
}

UNARY_F = [
    "neg",
    "abs",
    "sign",
    "floor",
    "ceil",
    "round_even",
    "round_away",
    "trunc",
    "sqrt",
    "rsqrt",
    "reciprocal",
    "isnan",
    "isinf",
    "isfinite",
    "exp",
    "exp2",
    "log",
    "log2",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "erf",
    "erfc",
    "erf_inv",
    "logistic",
    "cbrt",
    "lgamma",
    "digamma",
]
EXACT_UNARY = {"neg", "abs", "sign", "floor", "ceil", "round_even", "trunc", "isnan", "isinf", "isfinite"}


@pytest.mark.parametrize("op", UNARY_F)
@pytest.mark.parametrize("dt", ["float32", "float16", "bfloat16"])
def test_unary_float(gpu, op, dt):
    d = getattr(dtypes, dt)
    vals = np.array(SPECIAL_F + list(np.linspace(-3, 3, 25)), dtype=np.float32)
    if op in ("erf_inv", "atanh", "asin", "acos"):
        vals = np.concatenate([vals, np.linspace(-0.999, 0.999, 21, dtype=np.float32)])
    if dt == "bfloat16":
        data = (vals.view(np.uint32) >> 16).astype(np.uint16)
        arrays = [data]
    else:
        arrays = [vals.astype(np_dt(d))]
    n = len(vals)
    with ir.shape_context((n,)):
        k = Kernel((n,), (d,), alu(op, flat_load(0, n, d)))
    got, want = run(gpu, k, arrays), ref(k, arrays)
    if k.out_dtype is dtypes.bfloat16:
        got = (got.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
        want = (want.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if op in EXACT_UNARY or op == "round_away" and dt != "float32":
        np.testing.assert_array_equal(got, want)
    else:
        tol = {"float32": 3e-6, "float16": 1e-3, "bfloat16": 8e-3}[dt]
        atol = 1e-6 if op not in ("lgamma", "digamma") else 2e-5
        np.testing.assert_allclose(
            got.astype(np.float64),
            want.astype(np.float64),
            rtol=tol,
            atol=max(atol, tol if dt != "float32" else 0),
            equal_nan=True,
        )


def test_times_a_folded_integer_zero_keeps_nan(on_gpu):
    """x * float(0 << k): shader compilers fold the integer zero and then x * 0 to 0; IEEE (and
    JAX) keep NaN for x = log1p(-2) (found by tests/webgpu/test_fuzz.py)."""
    x, k = np.array([-2.0, 0.5, -3.0, 1.0], np.float32), np.array([1, 2, 3, 0], np.int8)
    f = pyjax.jit(lambda x, k: jnp.log1p(x) * jnp.left_shift(jnp.int8(0), k).astype(jnp.float32))
    out = np.asarray(f(x, k))
    np.testing.assert_array_equal(np.isnan(out), np.isnan(np.log1p(x)))


def test_round_away_matches_jax(gpu):
    x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, -0.49999997, 3.0], np.float32)
    with pyjax.default_device(pyjax.devices("webgpu")[0]):
        got = np.asarray(lax.round(jnp.asarray(x), lax.RoundingMethod.AWAY_FROM_ZERO))
    np.testing.assert_array_equal(got, np.array([1, 2, 3, -1, -3, 0, -0, 3], np.float32))


BINARY_F = [
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


@pytest.mark.parametrize("op", BINARY_F)
@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_binary_float(gpu, op, dt):
    d = getattr(dtypes, dt)
    v = np.array(SPECIAL_F, dtype=np.float32)
    a = np.repeat(v, len(v)).astype(np_dt(d))
    b = np.tile(v, len(v)).astype(np_dt(d))
    n = len(a)
    with ir.shape_context((n,)):
        k = Kernel((n,), (d, d), alu(op, flat_load(0, n, d), flat_load(1, n, d)))
    got, want = run(gpu, k, [a, b]), ref(k, [a, b])
    if op in ("pow", "atan2", "div"):
        tol = 3e-6 if dt == "float32" else 1e-3
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=1e-30, equal_nan=True
        )
    else:
        np.testing.assert_array_equal(got, want)


INT_BINARY = [
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


@pytest.mark.parametrize("op", INT_BINARY)
@pytest.mark.parametrize("dt", list(INT_VALS))
def test_binary_int(gpu, op, dt):
    d = getattr(dtypes, dt)
    v = np.array(INT_VALS[dt], dtype=np_dt(d))
    a, b = np.repeat(v, len(v)), np.tile(v, len(v))
    n = len(a)
    with ir.shape_context((n,)):
        k = Kernel((n,), (d, d), alu(op, flat_load(0, n, d), flat_load(1, n, d)))
    np.testing.assert_array_equal(run(gpu, k, [a, b]), ref(k, [a, b]))


@pytest.mark.parametrize("op", ["neg", "not", "abs", "sign", "popcnt", "clz"])
@pytest.mark.parametrize("dt", list(INT_VALS))
def test_unary_int(gpu, op, dt):
    d = getattr(dtypes, dt)
    v = np.array(INT_VALS[dt], dtype=np_dt(d))
    n = len(v)
    with ir.shape_context((n,)):
        k = Kernel((n,), (d,), alu(op, flat_load(0, n, d)))
    np.testing.assert_array_equal(run(gpu, k, [v]), ref(k, [v]))


CAST_DTYPES = ["float32", "float16", "bfloat16", "int32", "uint32", "int8", "uint8", "int16", "uint16", "bool"]


@pytest.mark.parametrize("src", CAST_DTYPES)
@pytest.mark.parametrize("dst", CAST_DTYPES)
def test_casts(gpu, src, dst):
    s, t = getattr(dtypes, src if src != "bool" else "bool_"), getattr(dtypes, dst if dst != "bool" else "bool_")
    if src in ("float32", "float16"):
        data = np.array(SPECIAL_F + [300.0, -300.0, 4e9, -4e9, 2.6, -2.6], np.float32).astype(src)
    elif src == "bfloat16":
        f = np.array([1.0, -2.5, 300.0, -1e10, 0.0, 3.25], np.float32)
        data = (f.view(np.uint32) >> 16).astype(np.uint16)
    elif src == "bool":
        data = np.array([True, False, True], bool)
    else:
        data = np.array(INT_VALS[src], np.dtype(src))
    n = len(data)
    with ir.shape_context((n,)):
        k = Kernel((n,), (s,), cast(flat_load(0, n, s), t))
    got, want = run(gpu, k, [data]), ref(k, [data])
    if src == "bfloat16" and t.kind in "iu":
        # numpy sees bfloat16 as a void kind, so the reference wraps; JAX saturates like float32
        f32 = (data.astype(np.uint32) << 16).view(np.float32)
        with ir.shape_context((n,)):
            k32 = Kernel((n,), (dtypes.float32,), cast(flat_load(0, n, dtypes.float32), t))
        want = ref(k32, [f32])
    if dst == "bfloat16":
        got, want = got.view(np.uint16), want.view(np.uint16)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize(
    "pair",
    [
        ("float32", "int32"),
        ("int32", "float32"),
        ("uint32", "int32"),
        ("float16", "int16"),
        ("int16", "float16"),
        ("uint8", "int8"),
        ("float16", "uint16"),
    ],
)
def test_bitcasts(gpu, pair):
    s, t = (getattr(dtypes, x) for x in pair)
    data = np.array([0, 1, 7, 100, 3, 250, 128], np.uint8).astype(np.dtype(pair[0]))
    if pair[0].startswith("float"):
        data = np.array([1.0, -2.5, 0.0, 3.0, 65504.0, 1e-3, -7.0], np.dtype(pair[0]))
    n = len(data)
    with ir.shape_context((n,)):
        k = Kernel((n,), (s,), ir.bitcast(flat_load(0, n, s), t))
    np.testing.assert_array_equal(run(gpu, k, [data]), ref(k, [data]))


# ---- kernel strategies ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 3, 4, 17, 20000, 20001])
@pytest.mark.parametrize("dt", ["float32", "bool", "uint8", "float16", "int16"])
def test_elementwise_sizes_and_packing(on_gpu, n, dt):
    d = np.dtype(dt)
    x = (np.arange(n) % 7).astype(d)
    y = (np.arange(n) % 3).astype(d)
    f = pyjax.jit(lambda a, b: (a + b) if dt != "bool" else (a ^ b))
    got = np.asarray(f(jnp.asarray(x), jnp.asarray(y)))
    want = (x + y) if dt != "bool" else (x ^ y)
    np.testing.assert_array_equal(got, want)


def test_vec4_loads_of_views(on_gpu):
    x = np.arange(64 * 1024, dtype=np.float32).reshape(256, 256)
    a = jnp.asarray(x)
    got = np.asarray(pyjax.jit(lambda a: a * 2 + a.T + a[::-1])(a))
    np.testing.assert_array_equal(got, x * 2 + x.T + x[::-1])


def test_many_inputs_are_merged(on_gpu):
    xs = [np.full((5, 3), i, np.float32) + np.arange(15, dtype=np.float32).reshape(5, 3) for i in range(12)]
    bools = np.array([True, False, True], bool)

    def f(*a):
        out = a[0]
        for t in a[1:-1]:
            out = out * 0.5 + t
        return jnp.where(a[-1], out, -out)

    got = np.asarray(pyjax.jit(f)(*[jnp.asarray(x) for x in xs], jnp.asarray(bools)))
    want = xs[0]
    for t in xs[1:]:
        want = want * 0.5 + t
    np.testing.assert_allclose(got, np.where(bools, want, -want), rtol=1e-6)


def test_multidimensional_grids(gpu):
    """Force tiny per-dimension workgroup limits so launches use 2-D/3-D grids."""
    host = gpu.host
    old = host._max_wg
    host._max_wg = 3
    try:
        n = 256 * 20 + 5
        x = np.arange(n, dtype=np.float32)
        with ir.shape_context((n,)):
            k = Kernel(
                (n,), (dtypes.float32,), alu("mul", flat_load(0, n, dtypes.float32), ir.const(2.0, dtypes.float32))
            )
        np.testing.assert_array_equal(run(gpu, k, [x]), x * 2)
        m = np.arange(40 * 50, dtype=np.float32).reshape(40, 50)
        tr = ShapeTracker.contiguous((40, 50))
        k = Kernel((40, 50), (dtypes.float32,), ir.acc(dtypes.float32), "sum", (1,), ir.load(0, tr, dtypes.float32))
        np.testing.assert_allclose(run(gpu, k, [m]), m.sum(1), rtol=1e-6)
    finally:
        host._max_wg = old


REDUCTIONS = [
    ((7,), (0,)),
    ((5, 3), (1,)),
    ((3, 5), (0, 1)),
    ((2, 3, 4), (1, 2)),
    ((4, 300), (1,)),
    ((3000, 5), (1,)),
    ((40000,), (0,)),
    ((2, 70000), (1,)),
    ((300, 40), (1,)),
]


@pytest.fixture(scope="module")
def cpu_adapter_gpu(gpu):
    """The same device with the plans SwiftShader adapters get (serial reductions, fast passes)."""
    from pyjax.backends.webgpu import WebGPUBackend
    from pyjax.backends.webgpu.renderer import Caps

    be = WebGPUBackend(gpu.host)
    be.caps = Caps(gpu.host.limits, gpu.host.has_f16, cpu_adapter=True)
    return be


@pytest.mark.parametrize("serial", [False, True])
@pytest.mark.parametrize("shape,axes", REDUCTIONS)
@pytest.mark.parametrize("op", ["sum", "max", "min", "prod", "argmax", "argmin"])
def test_reduction_strategies(gpu, cpu_adapter_gpu, shape, axes, op, serial):
    be = cpu_adapter_gpu if serial else gpu
    if op in ("argmax", "argmin") and len(axes) != 1:
        pytest.skip("arg reductions reduce one axis")
    rng = np.random.default_rng(1)
    dt = dtypes.float32 if op != "prod" else dtypes.int32
    x = rng.standard_normal(shape).astype(np.float32) if op != "prod" else rng.integers(-3, 4, shape).astype(np.int32)
    if op in ("max", "argmax") and x.size > 10:
        x.reshape(-1)[x.size // 3] = np.nan
    tr = ShapeTracker.contiguous(shape)
    nk = len(shape) - len(axes)
    acc_d = dtypes.int32 if op.startswith("arg") else dt
    k = Kernel(shape, (dt,), ir.acc(acc_d), op, tuple(range(nk, len(shape))), ir.load(0, tr, dt))
    if serial:
        from pyjax.backends.webgpu import renderer

        assert renderer._reduce_plan(k, be.caps)[0] == 1  # one thread per output or partial
    got, want = run(be, k, [x]), ref(k, [x])
    if op == "sum":
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-3)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("n", [5, 64, 5000, 70000])
def test_packed_reduction_outputs(on_gpu, n):
    x = np.arange(3 * n).reshape(3, n) % 5
    a = jnp.asarray(x.astype(np.int32))
    np.testing.assert_array_equal(np.asarray(jnp.any(a == 4, axis=1)), (x == 4).any(1))
    np.testing.assert_array_equal(np.asarray(jnp.all(a < 4, axis=1)), (x < 4).all(1))
    np.testing.assert_array_equal(
        np.asarray(jnp.sum(a.astype(jnp.int8), axis=1, dtype=jnp.int8)), x.astype(np.int8).sum(1, dtype=np.int8)
    )
    xb = np.arange(n * 6).reshape(n, 6) % 7 == 0
    np.testing.assert_array_equal(np.asarray(jnp.any(jnp.asarray(xb), axis=1)), xb.any(1))
    h = (np.arange(n * 3).reshape(n, 3) % 11).astype(np.float16)
    np.testing.assert_array_equal(np.asarray(jnp.max(jnp.asarray(h), axis=1)), h.max(1))


@pytest.mark.parametrize("shape", [(64, 32, 48), (100, 70, 33), (17, 9, 130), (256, 128, 256), (1, 300, 20)])
def test_matmul_fused(on_gpu, shape):
    m, k, n = shape
    rng = np.random.default_rng(2)
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    c = rng.standard_normal((n,), dtype=np.float32)
    f = pyjax.jit(lambda a, b, c: jnp.maximum((2.0 * a) @ b + c, 0.0))
    got = np.asarray(f(jnp.asarray(a), jnp.asarray(b), jnp.asarray(c)))
    want = np.maximum((2.0 * a.astype(np.float64)) @ b + c, 0)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_matmul_batched_transposed_and_f16(on_gpu):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 40, 24), dtype=np.float32)
    b = rng.standard_normal((3, 72, 24), dtype=np.float32)
    got = np.asarray(jnp.einsum("bmk,bnk->bmn", jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_allclose(got, np.einsum("bmk,bnk->bmn", a, b), rtol=1e-4, atol=1e-4)
    h1 = rng.standard_normal((64, 48)).astype(np.float16)
    h2 = rng.standard_normal((48, 64)).astype(np.float16)
    got = np.asarray(jnp.asarray(h1).T.T @ jnp.asarray(h2))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float64), h1.astype(np.float64) @ h2, rtol=5e-3, atol=5e-3)


def test_matmul_is_recognized(gpu):
    from pyjax.backends.webgpu import matmul

    tr_a = ShapeTracker.contiguous((64, 32)).reshape((64, 1, 32)).expand((64, 48, 32))
    tr_b = ShapeTracker.contiguous((32, 48)).permute((1, 0)).reshape((1, 48, 32)).expand((64, 48, 32))
    f32 = dtypes.float32
    body = alu("mul", ir.load(0, tr_a, f32), ir.load(1, tr_b, f32))
    k = Kernel((64, 48, 32), (f32, f32), ir.acc(f32), "sum", (2,), body)
    gk = matmul.try_matmul(k, gpu.caps)
    assert gk is not None and "workgroupBarrier" in gk.launches[0].wgsl
    assert "array<f32, " not in gk.launches[0].wgsl.split("fn main")[1]  # register tile is scalar locals


@pytest.mark.parametrize("m,n,kk", [(128, 256, 72), (70, 90, 33), (1024, 1040, 16)])
def test_matmul_cpu_adapter_tiles(cpu_adapter_gpu, m, n, kk):
    """SwiftShader's matmul plan (8 x 8 register tiles, also on small problems) is exact too."""
    f32 = dtypes.float32
    tr_a = ShapeTracker.contiguous((m, kk)).reshape((m, 1, kk)).expand((m, n, kk))
    tr_b = ShapeTracker.contiguous((kk, n)).permute((1, 0)).reshape((1, n, kk)).expand((m, n, kk))
    k = Kernel(
        (m, n, kk), (f32, f32), ir.acc(f32), "sum", (2,), alu("mul", ir.load(0, tr_a, f32), ir.load(1, tr_b, f32))
    )
    wgsl_text = cpu_adapter_gpu.prepare_kernel(k).launches[0].wgsl
    assert "c7_7" in wgsl_text and "workgroupBarrier" not in wgsl_text
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((m, kk), dtype=np.float32), rng.standard_normal((kk, n), dtype=np.float32)
    got = run(cpu_adapter_gpu, k, [a, b]).reshape(m, n)
    np.testing.assert_allclose(got, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def test_matmul_cpu_adapter_batched_with_prologue(cpu_adapter_gpu):
    f32 = dtypes.float32
    bt, m, n, kk = 3, 40, 72, 24
    tr_a = ShapeTracker.contiguous((bt, m, kk)).reshape((bt, m, 1, kk)).expand((bt, m, n, kk))
    tr_b = ShapeTracker.contiguous((bt, n, kk)).reshape((bt, 1, n, kk)).expand((bt, m, n, kk))
    relu_a = alu("max", ir.load(0, tr_a, f32), ir.const(0.0, f32))
    k = Kernel((bt, m, n, kk), (f32, f32), ir.acc(f32), "sum", (3,), alu("mul", relu_a, ir.load(1, tr_b, f32)))
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal((bt, m, kk), dtype=np.float32), rng.standard_normal((bt, n, kk), dtype=np.float32)
    got = run(cpu_adapter_gpu, k, [a, b]).reshape(bt, m, n)
    np.testing.assert_allclose(
        got, np.einsum("bmk,bnk->bmn", np.maximum(a, 0).astype(np.float64), b), rtol=1e-4, atol=1e-4
    )


# ---- runtime contract ----------------------------------------------------------------------------


def test_one_submit_per_program(on_gpu):
    gpu = on_gpu
    f = pyjax.jit(lambda x: (jnp.sin(x) * 2, jnp.sum(jnp.exp(x)), jnp.cumsum(x), jnp.sort(x)))
    x = jnp.asarray(np.linspace(-1, 1, 100, dtype=np.float32))
    jax_out = f(x)
    gpu.synchronize()
    before = gpu.host.stats["submits"], gpu.stats["flushes"]
    outs = f(x)
    gpu.synchronize()
    after = gpu.host.stats["submits"], gpu.stats["flushes"]
    assert after[1] - before[1] == 1 and after[0] - before[0] == 1
    for o, j in zip(outs, jax_out):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(j))


def test_free_while_queued_keeps_data(gpu):
    n = 1000
    x = np.arange(n, dtype=np.float32)
    s = gpu.malloc(4 * n)
    gpu.write(s, x.tobytes())
    out = gpu.malloc(4 * n)
    with ir.shape_context((n,)):
        k = Kernel((n,), (dtypes.float32,), alu("add", flat_load(0, n, dtypes.float32), ir.const(1.0, dtypes.float32)))
    gpu.dispatch(gpu.prepare_kernel(k), [s], [out])
    gpu.free(s)  # still used by the queued dispatch
    s2 = gpu.malloc(4 * n)  # may reuse the pooled GPU buffer: must not clobber the queued input
    gpu.write(s2, np.zeros(n, np.float32).tobytes())
    np.testing.assert_array_equal(np.frombuffer(gpu.read(out, 4 * n), np.float32), x + 1)
    gpu.free(out)
    gpu.free(s2)


def test_unaligned_copies(gpu):
    src = gpu.malloc(37)
    dst = gpu.malloc(41)
    data = bytes(range(37))
    gpu.write(src, data)
    gpu.write(dst, bytes([255]) * 41)
    gpu.copy(src, 3, dst, 5, 29)
    got = gpu.read(dst, 41)
    want = bytearray([255]) * 41
    want[5:34] = data[3:32]
    assert got == bytes(want)
    gpu.copy(dst, 0, dst, 1, 8)  # same buffer: staged through a temporary
    want[1:9] = bytes(want[0:8])
    assert gpu.read(dst, 41) == bytes(want)
    gpu.free(src)
    gpu.free(dst)


def test_float64_kernel_runs_on_host(gpu):
    n = 5
    x = np.linspace(0, 1, n)
    f64 = dtypes.float64
    with ir.shape_context((n,)):
        k = Kernel((n,), (f64,), alu("sin", flat_load(0, n, f64)))
    before = gpu.stats["host_fallbacks"]
    np.testing.assert_allclose(run(gpu, k, [x]), np.sin(x), rtol=1e-15)
    assert gpu.stats["host_fallbacks"] == before + 1


def test_wgsl_error_has_source(gpu):
    from pyjax.hosts.wgpu_host import WGSLCompileError

    with pytest.raises(WGSLCompileError, match="fn main"):
        gpu.pipeline("@compute @workgroup_size(1) fn main() { let x: f32 = 1u; }")


# ---- routines against the cpu reference -------------------------------------------------------------


def both(f, *args, rtol=1e-5, atol=1e-5):
    outs = []
    for dev in ("cpu", "webgpu"):
        with pyjax.default_device(pyjax.devices(dev)[0]):
            r = f(*[jnp.asarray(a) for a in args])
            outs.append([np.asarray(x) for x in (r if isinstance(r, (tuple, list)) else [r])])
    for c, g in zip(*outs):
        assert c.dtype == g.dtype and c.shape == g.shape
        if c.dtype.kind in "iub":
            np.testing.assert_array_equal(g, c)
        else:
            np.testing.assert_allclose(g.astype(np.float64), c.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("shape", [(37,), (3, 37), (2, 600), (5, 1), (1, 1500)])
@pytest.mark.parametrize("dt", ["float32", "int32", "int8", "float16", "uint32", "bool"])
def test_sort_and_argsort(gpu, shape, dt):
    rng = np.random.default_rng(4)
    x = rng.integers(-20, 20, shape).astype(dt) if dt != "bool" else rng.random(shape) < 0.5
    if dt.startswith("float"):
        x = (x / 3).astype(dt)
        x.reshape(-1)[::7] = np.nan
        x.reshape(-1)[1::11] = -0.0
    both(lambda a: jnp.sort(a, axis=-1), x)
    both(lambda a: jnp.argsort(a, axis=-1, stable=True), x)


def test_multi_operand_sort(gpu):
    rng = np.random.default_rng(5)
    k1 = rng.integers(0, 3, (4, 50)).astype(np.int32)
    k2 = rng.integers(0, 3, (4, 50)).astype(np.float32)
    v = rng.standard_normal((4, 50)).astype(np.float16)
    both(lambda a, b, c: lax.sort((a, b, c), num_keys=2), k1, k2, v)


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape", [(3, 7), (2, 3000)])
def test_cumulative(gpu, op, reverse, shape):
    rng = np.random.default_rng(6)
    x = rng.standard_normal(shape).astype(np.float32)
    if op == "cumprod":
        x = (1 + x / 100).astype(np.float32)
    fn = getattr(lax, op)
    both(lambda a: fn(a, axis=1, reverse=reverse), x, rtol=2e-4, atol=2e-4)
    if op != "cumlogsumexp":
        both(lambda a: fn(a, axis=1, reverse=reverse), (x * 4).astype(np.int32))


def test_linalg_routines(gpu):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 6, 6)).astype(np.float32)
    spd = a @ a.transpose(0, 2, 1) + 6 * np.eye(6, dtype=np.float32)
    both(lambda x: lax.linalg.cholesky(x), spd, rtol=1e-4, atol=1e-4)
    b = rng.standard_normal((2, 6, 4)).astype(np.float32)
    for left in (True, False):
        for lower in (True, False):
            for tr in (False, True):
                for unit in (False, True):
                    bb = b if left else b.transpose(0, 2, 1)
                    both(
                        lambda x, y: lax.linalg.triangular_solve(
                            x, y, left_side=left, lower=lower, transpose_a=tr, unit_diagonal=unit
                        ),
                        spd,
                        bb,
                        rtol=1e-4,
                        atol=1e-4,
                    )
    both(lambda x: lax.linalg.lu(x), a, rtol=1e-4, atol=1e-4)


def test_cholesky_not_positive_definite_like_jax(on_gpu):
    import jax.numpy as jjnp

    m = np.array([[4.0, 2.0, 0], [2.0, 1.0, 0], [0, 0, 1.0]], np.float32)
    got = np.asarray(jnp.linalg.cholesky(jnp.asarray(m)))
    want = np.asarray(jjnp.linalg.cholesky(m))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))


@pytest.mark.parametrize("dt", ["float32", "int32", "uint8", "bool", "float16"])
@pytest.mark.parametrize("kind", ["set", "add", "mul", "min", "max"])
def test_scatter(gpu, dt, kind):
    x = (np.arange(12) % 5).reshape(4, 3).astype(dt)
    idx = np.array([0, 2, 0, 3, 9], np.int32)
    upd = (np.arange(15) % 4).reshape(5, 3).astype(dt)

    def f(a, i, u):
        ref = a.at[i]
        return {"set": ref.set, "add": ref.add, "mul": ref.multiply, "min": ref.min, "max": ref.max}[kind](u)

    both(f, x, idx, upd)


def test_routine_sizes_write_everything(on_gpu):
    # outputs come from fresh pooled buffers: stale data would show up if anything were skipped
    for _ in range(2):
        x = jnp.asarray(np.arange(5 * 33, dtype=np.float32).reshape(5, 33)[:, ::-1].copy())
        np.testing.assert_array_equal(np.asarray(jnp.sort(x)), np.sort(np.asarray(x)))


def test_struct_helpers():
    from pyjax.backends.webgpu import wgsl

    assert wgsl.lit(-(2**31), dtypes.int32) == "(-2147483647i - 1i)"
    assert wgsl.flit(float("inf")) == "pj_inf()"
    assert wgsl.round_to(70000.0, dtypes.float16) == math.inf
    assert struct.pack("<f", wgsl.round_to(0.1, dtypes.float32)) == struct.pack("<f", 0.1)


def test_one_pipeline_for_many_lengths(on_gpu):
    """Flat elementwise kernels and reductions read their sizes from a uniform, so 40 lengths
    (30 row-reduction shapes) of one jitted function share a few pipelines (were 2 per shape)."""
    f = pyjax.jit(lambda x, s: jnp.sin(x) * s + x.sum())
    before = len(on_gpu._pipes)
    for n in range(1, 41):
        x = np.linspace(-3, 3, 7 * n, dtype=np.float32)
        got = np.asarray(f(jnp.asarray(x), np.float32(2.0)))
        np.testing.assert_allclose(got, np.sin(x) * 2 + x.sum(dtype=np.float64), rtol=1e-5, atol=1e-5)
    assert len(on_gpu._pipes) - before <= 8
    g = pyjax.jit(lambda x: jnp.argmax(x * x, axis=1) + jnp.sum(x, axis=-1).astype(jnp.int32))
    before = len(on_gpu._pipes)
    for n in range(1, 31):
        x = np.cos(np.arange(n * (n + 40), dtype=np.float32) * 0.37).reshape(n, n + 40)
        want = np.argmax(x * x, axis=1) + x.sum(axis=-1).astype(np.int32)
        np.testing.assert_array_equal(np.asarray(g(jnp.asarray(x))), want)
    assert len(on_gpu._pipes) - before <= 8


def test_trig_big_arguments_branch(on_gpu):
    """sin/cos/tan's Payne-Hanek reduction (|x| > 4096, mathlib's `rarely`) renders as one `if`
    per reduced argument, shared by its r and q, so small arguments skip it; lanes that mix small,
    big, inf and NaN, elementwise (vec4 and scalar) and in a row reduction, still match JAX."""
    jax = pytest.importorskip("jax")
    rng = np.random.default_rng(3)
    small = rng.uniform(-6, 6, 2048)
    big = rng.uniform(-1e30, 1e30, 2048) * np.where(rng.random(2048) < 0.5, 1.0, 1e-25)
    x = np.where(np.arange(2048) % 3 == 0, big, small).astype(np.float32)
    x[:6] = [np.inf, -np.inf, np.nan, 4096.0, 4097.0, -0.0]
    before = set(on_gpu._pipes)
    for n in (16384, 2048):  # vec4 lanes, one value per thread
        xs = np.resize(x, n)
        got = np.asarray(pyjax.jit(lambda v: jnp.sin(v) * jnp.cos(3 * v) + jnp.tan(v))(jnp.asarray(xs)))
        want = np.asarray(jax.jit(lambda v: jax.numpy.sin(v) * jax.numpy.cos(3 * v) + jax.numpy.tan(v))(xs))
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, equal_nan=True)
    texts = [t for t in on_gpu._pipes if t not in before]
    # x's reduction (sin and tan share it) and 3x's, for each of a thread's 4 or 1 values
    assert sorted(t.count("; if (") for t in texts) == [2, 8]
    rows = x[:2046].reshape(62, 33)
    got = np.asarray(pyjax.jit(lambda v: jnp.sum(jnp.sin(v), axis=1))(jnp.asarray(rows)))
    want = np.asarray(jax.jit(lambda v: jax.numpy.sum(jax.numpy.sin(v), axis=1))(rows))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("huge", [False, True])
def test_cold_paths_split_on_cpu_adapters(cpu_adapter_gpu, huge):
    """SwiftShader plans: a big elementwise kernel with a cold path (sin's big-argument
    reduction) runs without it, flagging where it is needed; the full kernel then runs through
    an indirect dispatch only if some element was flagged. Both ways match JAX."""
    import jax
    import jax.numpy as jjnp

    from pyjax.compiler import mathlib

    n = 1 << 15
    x = np.linspace(-6, 6, n, dtype=np.float32)
    if huge:
        x[[5, n - 7]] = [1e20, -3e7]
    tr = ShapeTracker.contiguous((n,))
    sin = alu("sin", ir.load(0, tr, dtypes.float32))
    k = Kernel((n,), (dtypes.float32,), alu("mul", sin, ir.const(2.0, dtypes.float32)))
    gk = cpu_adapter_gpu.prepare_kernel(k)
    assert [launch.grid if type(launch.grid) is tuple else "n" for launch in gk.launches] == ["n", "n", ("tmp", 0)]
    assert any(n.arg == "cold" for n in ir.walk(mathlib.expand(k.epilogue)))
    got = run(cpu_adapter_gpu, k, [x])
    want = np.asarray(jax.jit(lambda v: jjnp.sin(v) * 2.0)(x))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
