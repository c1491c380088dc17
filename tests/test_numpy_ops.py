"""pyjax.numpy against jax.numpy: creation, elementwise math, comparisons, reductions, shape ops,
products, integer semantics, float16. Values, shapes, exact dtypes and weak types must match."""

from __future__ import annotations

import numpy as np
import pytest

from jax_compare import check_all
from jax_compare import check_jit as check

F32_EDGE = np.array(
    [-2.5, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 2.5, 1e30, -1e30, np.nan, np.inf, -np.inf], np.float32
)
F32_UNIT = np.array([-0.99, -0.5, -0.0, 0.0, 0.3, 0.75, 0.99, 1.0, -1.0, 1.5, np.nan], np.float32)
F32_POS = np.array([0.0, 1e-30, 0.1, 0.5, 1.0, 2.0, 10.0, 1e30, np.inf, np.nan], np.float32)
I32 = np.array([-7, -3, -1, 0, 1, 2, 5, 2**31 - 1, -(2**31)], np.int32)
BOOL = np.array([True, False, True, False])
F16 = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 1000.0, np.inf, np.nan], np.float16)

# --- creation --------------------------------------------------------------------------------


CREATION = {
    "array_list": lambda j, n: n.array([1, 2, 3]),
    "array_float_list": lambda j, n: n.array([1.0, 2, 3]),
    "array_nested": lambda j, n: n.array([[1, 2], [3, 4]], dtype=n.float32),
    "array_bool": lambda j, n: n.array([True, False]),
    "array_scalar_int": lambda j, n: n.array(3),
    "array_scalar_float": lambda j, n: n.array(3.5),
    "array_ndmin": lambda j, n: n.array([1.0, 2.0], ndmin=3),
    "array_from_numpy_f64": lambda j, n: n.array(np.arange(4.0)),
    "array_from_numpy_i64": lambda j, n: n.asarray(np.arange(4)),
    "array_from_numpy_u8": lambda j, n: n.asarray(np.arange(4, dtype=np.uint8)),
    "asarray_dtype": lambda j, n: n.asarray([1, 2], dtype=n.float16),
    "asarray_scalar": lambda j, n: n.asarray(2.0),
    "asarray_bool_scalar": lambda j, n: n.asarray(True),
    "zeros": lambda j, n: n.zeros((2, 3)),
    "zeros_int": lambda j, n: n.zeros(4, dtype=n.int32),
    "ones": lambda j, n: n.ones((3,), n.bool_),
    "ones_empty_dim": lambda j, n: n.ones((0, 3)),
    "full": lambda j, n: n.full((2, 2), 7),
    "full_float": lambda j, n: n.full((2,), 1.5),
    "full_dtype": lambda j, n: n.full((2,), 3, dtype=n.float32),
    "full_array_fill": lambda j, n: n.full((2, 3), n.arange(3.0)),
    "empty_shape": lambda j, n: n.empty((2, 3)).shape,
    "zeros_like": lambda j, n: n.zeros_like(n.arange(3)),
    "ones_like_dtype": lambda j, n: n.ones_like(n.arange(3), dtype=n.float32),
    "full_like": lambda j, n: n.full_like(n.arange(3.0), 2),
    "empty_like_shape": lambda j, n: n.empty_like(n.ones((2, 2))).shape,
    "zeros_like_shape": lambda j, n: n.zeros_like(n.ones((2, 2)), shape=(3,)),
    "arange_int": lambda j, n: n.arange(5),
    "arange_start_stop": lambda j, n: n.arange(2, 9, 3),
    "arange_float": lambda j, n: n.arange(0.0, 1.0, 0.25),
    "arange_neg_step": lambda j, n: n.arange(5, 0, -2),
    "arange_dtype": lambda j, n: n.arange(4, dtype=n.float32),
    "arange_float_stop": lambda j, n: n.arange(3.5),
    "arange_empty": lambda j, n: n.arange(3, 1),
    "linspace": lambda j, n: n.linspace(0, 1, 5),
    "linspace_noend": lambda j, n: n.linspace(0.0, 2.0, 4, endpoint=False),
    "linspace_int": lambda j, n: n.linspace(0, 10, 6, dtype=n.int32),
    "linspace_retstep": lambda j, n: n.linspace(1.0, 2.0, 3, retstep=True),
    "linspace_one": lambda j, n: n.linspace(2.0, 3.0, 1),
    "eye": lambda j, n: n.eye(3),
    "eye_rect_k": lambda j, n: n.eye(2, 4, k=1),
    "eye_neg_k": lambda j, n: n.eye(3, k=-1, dtype=n.int32),
    "identity": lambda j, n: n.identity(2, dtype=n.bool_),
    "tri": lambda j, n: n.tri(3),
    "tri_rect": lambda j, n: n.tri(2, 4, k=1, dtype=n.int32),
}


@pytest.mark.parametrize("name", list(CREATION))
def test_creation(backend, name):
    check(lambda j, n: CREATION[name](j, n))


# --- elementwise unary --------------------------------------------------------------------------

UNARY_FLOAT = [
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "sqrt",
    "cbrt",
    "negative",
    "positive",
    "absolute",
    "abs",
    "fabs",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "rint",
    "round",
    "around",
    "square",
    "reciprocal",
    "isfinite",
    "isnan",
    "isinf",
    "isposinf",
    "isneginf",
    "signbit",
    "deg2rad",
    "rad2deg",
    "degrees",
    "radians",
    "sinc",
    "logical_not",
    "conj",
    "conjugate",
    "real",
    "imag",
    "nan_to_num",
    "iscomplex",
    "isreal",
]
UNARY_INPUTS = {"edge": F32_EDGE, "unit": F32_UNIT, "pos": F32_POS, "i32": I32[:7], "bool": BOOL, "f16": F16}
# functions JAX treats with looser accuracy on some inputs
_LOOSE = {"sinc": (1e-4, 1e-5), "cbrt": (1e-5, 1e-6), "arccosh": (1e-5, 1e-5), "arcsinh": (1e-5, 1e-5)}


@pytest.mark.parametrize("name", UNARY_FLOAT)
def test_unary(backend, name):
    cases = []
    for inp, x in UNARY_INPUTS.items():
        if name in ("tan", "sin", "cos", "sinc") and inp == "edge":
            x = x[np.abs(x) < 1e20]  # argument reduction of huge values is implementation-specific
        cases.append((x,))
    rtol, atol = _LOOSE.get(name, (None, None))
    check_all(lambda j, n, a: getattr(n, name)(a), cases, rtol=rtol, atol=atol)


@pytest.mark.parametrize(
    "name",
    [
        "negative",
        "positive",
        "absolute",
        "sign",
        "square",
        "bitwise_not",
        "invert",
        "bitwise_count",
        "floor",
        "ceil",
        "round",
        "trunc",
    ],
)
def test_unary_int(backend, name):
    cases = []
    for dt in ("int8", "uint8", "int32", "uint32"):
        x = np.array([0, 1, 2, 5, 100, 127], dt)
        if dt.startswith("int"):
            x = np.concatenate([x, np.array([-1, -7, np.iinfo(dt).min], dt)])
        cases.append((x,))
    check_all(lambda j, n, a: getattr(n, name)(a), cases)


def test_unary_python_scalar(backend):
    for name in ["sin", "exp", "sqrt", "negative", "abs", "floor", "square", "sign"]:
        check(lambda j, n: getattr(n, name)(2.0))
        check(lambda j, n: getattr(n, name)(3))
    check(lambda j, n: n.logical_not(True))


def test_negative_zero_preserved(backend):
    check(lambda j, n, a: n.signbit(n.negative(a)), np.array([0.0, -0.0, 1.0], np.float32))
    check(lambda j, n, a: n.signbit(a * 1.0), np.array([0.0, -0.0], np.float32))
    check(lambda j, n, a: n.signbit(n.abs(a)), np.array([-0.0], np.float32))
    check(lambda j, n, a: n.signbit(n.round(a)), np.array([-0.3, -0.0], np.float32))


def test_bool_negative_rejected(backend):
    check(lambda j, n, a: -a, BOOL)
    check(lambda j, n, a: n.negative(a), BOOL)


# --- elementwise binary ---------------------------------------------------------------------

BINARY = [
    "add",
    "subtract",
    "multiply",
    "divide",
    "true_divide",
    "floor_divide",
    "remainder",
    "mod",
    "fmod",
    "power",
    "float_power",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "arctan2",
    "hypot",
    "copysign",
    "nextafter",
    "logaddexp",
    "logaddexp2",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "heaviside",
    "divmod",
]
BINARY_INT = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "gcd", "lcm"]

FA = np.array([-2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 3.0, 7.5, np.inf, -np.inf, np.nan, 2.0], np.float32)
FB = np.array([2.0, -3.0, 1.0, -0.0, 0.5, np.inf, -2.0, 2.0, 1.0, 3.0, 1.0, np.nan], np.float32)
IA = np.array([-7, -7, 7, 7, 0, 5, -1, 100, 3], np.int32)
IB = np.array([2, -2, 2, -2, 3, 1, 4, 7, -5], np.int32)

BINARY_PAIRS = {
    "f32_f32": (FA, FB),
    "i32_i32": (IA, IB),
    "i32_f32": (IA, FB[:9]),
    "f32_pyfloat": (FA, 2.5),
    "pyfloat_f32": (-1.5, FB),
    "i32_pyint": (IA, 3),
    "pyint_i32": (5, IB),
    "i32_pyfloat": (IA, 0.5),
    "bool_bool": (BOOL, np.array([True, True, False, False])),
    "bool_pyint": (BOOL, 2),
    "u8_i8": (np.array([1, 200, 3], np.uint8), np.array([-1, 2, 3], np.int8)),
    "f16_f32": (F16[:4], FA[:4]),
    "f16_pyfloat": (F16, 0.75),
    "i8_pyint": (np.array([-3, 5, 100], np.int8), 2),
    "broadcast": (FA.reshape(3, 4)[:, :1], FB.reshape(3, 4)[0]),
    "scalar_arrays": (np.float32(2.0), np.float32(-3.0)),
}


@pytest.mark.parametrize("name", BINARY)
def test_binary(backend, name):
    rtol = 1e-4 if name in ("power", "float_power") else None
    cases = []
    for pair, (a, b) in BINARY_PAIRS.items():
        if pair == "bool_bool" and name in ("floor_divide", "remainder", "mod", "fmod", "divmod"):
            b = np.ones_like(b)  # integer division by zero is undefined
        if name == "power" and isinstance(b, np.ndarray) and b.dtype.kind == "i":
            b = np.abs(b)  # integer powers with negative exponents are undefined in JAX
        cases.append((a, b))
    check_all(lambda j, n, x, y: getattr(n, name)(x, y), cases, rtol=rtol)


INT_PAIRS = {
    "i32_i32": (IA, np.array([2, 1, 0, 3, 31, 4, 1, 2, 5], np.int32)),
    "u8_u8": (np.array([1, 200, 255, 0], np.uint8), np.array([1, 3, 7, 2], np.uint8)),
    "i8_pyint": (np.array([-3, 5, 100, -128], np.int8), 1),
    "bool_bool": (BOOL, np.array([True, True, False, False])),
    "u32_i32": (np.array([1, 2, 3], np.uint32), np.array([1, 2, 3], np.int32)),
}


@pytest.mark.parametrize("name", BINARY_INT)
def test_binary_int(backend, name):
    check_all(lambda j, n, x, y: getattr(n, name)(x, y), list(INT_PAIRS.values()))


def test_bitwise_on_float_rejected(backend):
    check(lambda j, n, x: n.bitwise_and(x, x), FA)
    check(lambda j, n, x: x | x, FA)
    check(lambda j, n, x: ~x, FA)


def test_integer_semantics(backend):
    i32max = np.array([2**31 - 1, -(2**31)], np.int32)
    check(lambda j, n, a: a + 1, i32max)
    check(lambda j, n, a: a - 1, i32max)
    check(lambda j, n, a: a * 2, i32max)
    check(lambda j, n, a: -a, i32max)
    check(lambda j, n, a: n.abs(a), i32max)
    check(lambda j, n, a: a * a, np.array([100, -100, 12], np.int8))
    check(lambda j, n, a: a - 3, np.array([0, 1, 2], np.uint8))
    check(lambda j, n, a: a + 250, np.array([10, 5], np.uint8))
    # floor_divide / remainder follow Python's sign rules (result sign = divisor sign)
    a = np.array([-7, 7, -7, 7, -1, 0], np.int32)
    b = np.array([2, -2, -2, 2, 3, -5], np.int32)
    check(lambda j, n, x, y: x // y, a, b)
    check(lambda j, n, x, y: x % y, a, b)
    check(lambda j, n, x, y: n.fmod(x, y), a, b)
    check(lambda j, n, x, y: divmod(x, y), a, b)
    check(lambda j, n, x, y: x // y, a.astype(np.float32), b.astype(np.float32))
    check(lambda j, n, x, y: x % y, a.astype(np.float32), b.astype(np.float32))
    check(lambda j, n, x: x % 0.7, np.array([-2.0, 2.0, -0.0], np.float32))
    # shifts
    check(lambda j, n, x: x << 3, np.array([1, -1, 2**28], np.int32))
    check(lambda j, n, x: x >> 1, np.array([-8, 8, -1], np.int32))
    check(lambda j, n, x: x >> 1, np.array([200, 8], np.uint8))
    check(lambda j, n, x, y: x << y, np.array([1, 1, 1], np.int32), np.array([0, 31, 32], np.int32))
    check(lambda j, n, x, y: x >> y, np.array([-16, 16, -1], np.int32), np.array([2, 40, 33], np.int32))
    check(lambda j, n, x: 2**x, np.array([0, 3, 10], np.int32))
    check(lambda j, n, x: x**3, np.array([-2, 3, 1000], np.int32))
    check(lambda j, n, x: x**2.0, np.array([-2, 3], np.int32))
    check(lambda j, n, x: n.power(x, -1), np.array([1, 2], np.int32))
    # integer arrays: JAX squares over the exponent's low six bits only (negative ones too)
    base = np.array([3, -7, 0, 0, 2, 46341], np.int32)
    check(lambda j, n, x, y: n.power(x, y), base, np.array([-11, 93, 64, -3, 63, 3], np.int32))


def test_float16_arrays(backend):
    a = np.array([0.1, 1.5, -3.25, 60000.0], np.float16)
    b = np.array([2.0, 0.5, 4.0, 2.0], np.float16)
    check(lambda j, n, x, y: x + y, a, b)
    check(lambda j, n, x, y: x * y, a, b)  # 120000 overflows to inf in float16
    check(lambda j, n, x, y: x / y, a, b)
    check(lambda j, n, x: n.exp(x), a[:3])
    check(lambda j, n, x: n.sum(x), a[:3])
    check(lambda j, n, x: n.mean(x), a)
    check(lambda j, n, x: x.astype(n.float32), a)
    check(lambda j, n, x: n.asarray(x, n.float16), np.array([1e5, 1e-8, 0.1], np.float32))
    check(lambda j, n, x: x * 2.0, a)
    check(lambda j, n, x: x + n.float32(1), a)
    check(lambda j, n, x: n.sqrt(x), np.abs(a))
    check(lambda j, n, x: x @ x, np.arange(4, dtype=np.float16).reshape(2, 2))


# --- comparisons, logical, where, clip ----------------------------------------------------------


def test_where_clip(backend):
    c = np.array([True, False, True, False])
    x = np.arange(4, dtype=np.float32)
    check(lambda j, n, c, x: n.where(c, x, -x), c, x)
    check(lambda j, n, c, x: n.where(c, x, 0), c, x)
    check(lambda j, n, c: n.where(c, 1, 2.5), c)
    check(lambda j, n, c: n.where(c, 1, 2), c)
    check(lambda j, n, x: n.where(x > 1, x, n.int32(7)), x)
    check(lambda j, n, c, x: n.where(c[:, None], x, x[:1]), c, x)
    check(lambda j, n, x: n.where(x, 1.0, 0.0), np.array([0, 2, -1], np.int32))
    check(lambda j, n, x: n.clip(x, 1, 2), x)
    check(lambda j, n, x: n.clip(x, 1.5), x)
    check(lambda j, n, x: n.clip(x, max=1.5), x)
    check(lambda j, n, x: n.clip(x, 1, 2), np.arange(4, dtype=np.int32))
    check(lambda j, n, x: n.clip(x, 0.5, 2), np.arange(4, dtype=np.int32))
    check(lambda j, n, x: n.clip(x, n.array([0.0, 1.0, 5.0, 0.0]), 2.0), x)
    check(lambda j, n, x: n.clip(x, 0.0, 1.0), np.array([np.nan, -np.inf, np.inf, 0.5], np.float32))


def test_comparisons_mixed(backend):
    check(lambda j, n, a: a == 2, np.arange(4, dtype=np.int32))
    check(lambda j, n, a: a < 2.5, np.arange(4, dtype=np.int32))
    check(lambda j, n, a: a != a, np.array([np.nan, 1.0], np.float32))
    check(lambda j, n, a, b: a >= b, np.array([1, 2], np.uint8), np.array([-1, 3], np.int8))
    check(lambda j, n, a: n.isclose(a, a + 1e-7), np.array([1.0, 1e-20], np.float32))
    check(lambda j, n, a: n.allclose(a, a), np.array([1.0, 2.0], np.float32))
    check(lambda j, n, a: n.array_equal(a, a), np.array([1.0, 2.0], np.float32))
    check(lambda j, n, a: n.logical_and(a, 1), np.array([0, 2, -1], np.int32))
    check(lambda j, n, a: n.logical_or(a, 0.0), np.array([0, 2, -1], np.float32))


# --- reductions ------------------------------------------------------------------------------------

REDUCTIONS = [
    "sum",
    "prod",
    "mean",
    "var",
    "std",
    "max",
    "min",
    "argmax",
    "argmin",
    "all",
    "any",
    "cumsum",
    "cumprod",
    "ptp",
    "count_nonzero",
    "nansum",
    "nanmax",
    "nanmin",
    "nanmean",
    "median",
    "average",
]
RED_INPUTS = {
    "f32": (np.arange(24, dtype=np.float32).reshape(2, 3, 4) % 7 - 3) / 2,
    "i32": (np.arange(24, dtype=np.int32).reshape(2, 3, 4) % 5 - 2),
    "bool": (np.arange(24).reshape(2, 3, 4) % 3 == 0),
    "u8": (np.arange(24, dtype=np.uint8).reshape(2, 3, 4) % 4),
    "f16": (np.arange(24, dtype=np.float16).reshape(2, 3, 4) / 8),
}


_AXIS_ONLY = ("argmax", "argmin", "cumsum", "cumprod", "median", "nanargmax", "nanargmin")


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reductions(backend, name):
    kws = [{}]
    axes = [0, 2, -1] if name in _AXIS_ONLY else [1, -1, (0, 2), (2, 0), (0, 1, 2)]
    if name == "average":
        axes = [0, -1]
    for ax in axes:
        kws.append({"axis": ax})
        if name not in ("cumsum", "cumprod", "average"):
            kws.append({"axis": ax, "keepdims": True})
    if name not in ("cumsum", "cumprod", "median", "average", "count_nonzero", "ptp"):
        kws.append({"keepdims": True})
    for x in RED_INPUTS.values():
        check_all(lambda j, n, a, kw: getattr(n, name)(a, **kw), [(x, kw) for kw in kws])


def test_reduction_dtypes_and_options(backend):
    x = RED_INPUTS["f32"]
    i = RED_INPUTS["i32"]
    check(lambda j, n, a: n.sum(a, dtype=n.int32), x)
    check(lambda j, n, a: n.sum(a, dtype=n.float32), i)
    check(lambda j, n, a: n.mean(a, dtype=n.float16), i)
    check(lambda j, n, a: n.var(a, ddof=1, axis=1), x)
    check(lambda j, n, a: n.std(a, ddof=2), x)
    check(lambda j, n, a: n.sum(a, where=a > 0), x)
    check(lambda j, n, a: n.max(a, initial=0.5), x)
    check(lambda j, n, a: n.max(a, axis=1, where=a > 0, initial=-10.0), x)
    check(lambda j, n, a: n.sum(a, initial=10), i)
    check(lambda j, n, a: n.prod(a, axis=()), i)
    check(lambda j, n, a: n.mean(a, where=a > 0), x)
    check(lambda j, n, a: n.cumsum(a), x)  # flattened
    check(lambda j, n, a: n.cumsum(a, dtype=n.float32, axis=1), i)
    check(lambda j, n, a: n.cumsum(a, axis=0), RED_INPUTS["bool"])
    check(lambda j, n, a: n.average(a, axis=1, weights=n.arange(1.0, 4.0)), x)
    check(lambda j, n, a: n.average(a, axis=1, weights=n.arange(1.0, 5.0)), x)  # ValueError
    check(lambda j, n, a: n.sum(a), 3.0)
    check(lambda j, n, a: n.mean(a), 3)
    check(lambda j, n, a: n.max(a, axis=0), np.array([np.nan, 1.0, 2.0], np.float32))
    check(lambda j, n, a: n.argmax(a), np.array([1.0, np.nan, 2.0], np.float32))
    check(lambda j, n, a: n.argmin(a), np.array([1.0, 0.5, 0.5], np.float32))
    check(lambda j, n, a: n.argmax(a, axis=1, keepdims=True), x)


def test_reductions_empty(backend):
    e = np.zeros((0, 3), np.float32)
    check(lambda j, n, a: n.sum(a, axis=0), e)
    check(lambda j, n, a: n.prod(a, axis=0), e)
    check(lambda j, n, a: n.any(a, axis=0), e)
    check(lambda j, n, a: n.all(a, axis=0), e)
    check(lambda j, n, a: n.mean(a, axis=0), e)
    check(lambda j, n, a: n.max(a, axis=0), e)  # ValueError in JAX: zero-size reduction without identity


def test_boolean_reduction_identities(backend):
    f = np.zeros((3, 4), bool)
    t = np.ones((3, 4), bool)
    for a in (f, t):
        for name in ("any", "all", "max", "min", "sum", "prod"):
            check(lambda j, n, x: getattr(n, name)(x), a)
            check(lambda j, n, x: getattr(n, name)(x, axis=1), a)
            check(lambda j, n, x: getattr(n, name)(x, axis=0, keepdims=True), a)
    # all-false any/max is False; all-true all/min is True
    import pyjax.numpy as pjnp

    assert pjnp.any(pjnp.asarray(f)).item() is False
    assert pjnp.max(pjnp.asarray(f)).item() is False
    assert pjnp.all(pjnp.asarray(t)).item() is True
    assert pjnp.min(pjnp.asarray(t)).item() is True
    check(lambda j, n, x: n.any(x), np.zeros(5, np.float32))
    check(lambda j, n, x: n.all(x), np.array([1.0, np.nan, -1.0], np.float32))


def test_axes_sorted_numerically(backend):
    x = np.arange(2 * 3 * 1 * 1 * 1 * 1 * 1 * 1 * 1 * 1 * 2, dtype=np.float32).reshape(2, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2)
    for name in ("sum", "max", "prod", "mean", "any"):
        check(lambda j, n, a: getattr(n, name)(a, axis=(10, 2)), x)
        check(lambda j, n, a: getattr(n, name)(a, axis=(2, 10), keepdims=True), x)
        check(lambda j, n, a: getattr(n, name)(a, axis=(10, 1, 0)), x)
    check(lambda j, n, a: n.transpose(a, (10, 2, 1, 0, 3, 4, 5, 6, 7, 8, 9)) * 2, x)
    check(lambda j, n, a: n.squeeze(a, axis=(9, 2)), x)
    check(lambda j, n, a: n.expand_dims(a, (11, 3)), x)
    check(lambda j, n, a: n.argmax(a, axis=10), x)


def test_reduction_bad_axis(backend):
    check(lambda j, n, a: n.sum(a, axis=3), RED_INPUTS["f32"])
    check(lambda j, n, a: n.sum(a, axis=(0, 0)), RED_INPUTS["f32"])


# --- shape ops ---------------------------------------------------------------------------------

X234 = np.arange(24, dtype=np.float32).reshape(2, 3, 4)

SHAPE_OPS = {
    "reshape": lambda j, n, a: n.reshape(a, (4, 6)),
    "reshape_neg": lambda j, n, a: n.reshape(a, (-1, 2)),
    "reshape_F": lambda j, n, a: n.reshape(a, (4, 6), order="F"),
    "reshape_scalar": lambda j, n, a: n.reshape(a[0, 0, :1], ()),
    "transpose": lambda j, n, a: n.transpose(a),
    "transpose_axes": lambda j, n, a: n.transpose(a, (1, 0, 2)),
    "transpose_neg": lambda j, n, a: n.transpose(a, (-1, 0, 1)),
    "moveaxis": lambda j, n, a: n.moveaxis(a, 0, -1),
    "moveaxis_multi": lambda j, n, a: n.moveaxis(a, (0, 1), (2, 0)),
    "swapaxes": lambda j, n, a: n.swapaxes(a, 0, 2),
    "expand_dims": lambda j, n, a: n.expand_dims(a, 1),
    "expand_dims_neg": lambda j, n, a: n.expand_dims(a, (-1, 0)),
    "squeeze": lambda j, n, a: n.squeeze(n.reshape(a, (1, 2, 1, 12))),
    "squeeze_axis": lambda j, n, a: n.squeeze(n.reshape(a, (1, 2, 1, 12)), axis=2),
    "squeeze_bad": lambda j, n, a: n.squeeze(a, axis=0),
    "broadcast_to": lambda j, n, a: n.broadcast_to(a[:, :1], (5, 2, 3, 4)),
    "broadcast_to_scalar": lambda j, n, a: n.broadcast_to(3.0, (2, 2)),
    "broadcast_arrays": lambda j, n, a: n.broadcast_arrays(a, a[0, :, :1]),
    "concatenate": lambda j, n, a: n.concatenate([a, a * 2], axis=1),
    "concatenate_neg": lambda j, n, a: n.concatenate([a, a[:, :, :1]], axis=-1),
    "concatenate_none": lambda j, n, a: n.concatenate([a, a], axis=None),
    "concatenate_mixed": lambda j, n, a: n.concatenate([a, n.ones((2, 3, 1), n.int32)], axis=2),
    "stack": lambda j, n, a: n.stack([a, a], axis=1),
    "stack_neg": lambda j, n, a: n.stack([a, a, a], axis=-1),
    "vstack": lambda j, n, a: n.vstack([a[0], a[1]]),
    "hstack": lambda j, n, a: n.hstack([a[0], a[1]]),
    "dstack": lambda j, n, a: n.dstack([a[0], a[1]]),
    "column_stack": lambda j, n, a: n.column_stack([a[0, 0], a[0, 1]]),
    "split": lambda j, n, a: n.split(a, 2, axis=0),
    "split_idx": lambda j, n, a: n.split(a, [1, 3], axis=2),
    "split_bad": lambda j, n, a: n.split(a, 3, axis=2),
    "array_split": lambda j, n, a: n.array_split(a, 3, axis=2),
    "hsplit": lambda j, n, a: n.hsplit(a, 3),
    "vsplit": lambda j, n, a: n.vsplit(a, 2),
    "tile": lambda j, n, a: n.tile(a[0], (2, 3)),
    "tile_int": lambda j, n, a: n.tile(a[0, 0], 2),
    "tile_more": lambda j, n, a: n.tile(a[0, 0], (2, 1, 2)),
    "repeat": lambda j, n, a: n.repeat(a, 2, axis=1),
    "repeat_flat": lambda j, n, a: n.repeat(a[0], 2),
    "repeat_list": lambda j, n, a: n.repeat(a[0], n.array([1, 0, 2]), axis=0, total_repeat_length=3),
    "repeat_list_py": lambda j, n, a: n.repeat(a[0], [1, 0, 2], axis=0),
    "pad": lambda j, n, a: n.pad(a, 1),
    "pad_widths": lambda j, n, a: n.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=-1.0),
    "pad_edge": lambda j, n, a: n.pad(a[0], 2, mode="edge"),
    "pad_reflect": lambda j, n, a: n.pad(a[0], ((1, 2), (2, 1)), mode="reflect"),
    "pad_symmetric": lambda j, n, a: n.pad(a[0], 2, mode="symmetric"),
    "pad_wrap": lambda j, n, a: n.pad(a[0], 2, mode="wrap"),
    "flip": lambda j, n, a: n.flip(a),
    "flip_axis": lambda j, n, a: n.flip(a, axis=(0, 2)),
    "fliplr": lambda j, n, a: n.fliplr(a[0]),
    "flipud": lambda j, n, a: n.flipud(a[0]),
    "roll": lambda j, n, a: n.roll(a, 2),
    "roll_axis": lambda j, n, a: n.roll(a, -1, axis=2),
    "roll_multi": lambda j, n, a: n.roll(a, (1, 5), axis=(0, 2)),
    "rot90": lambda j, n, a: n.rot90(a[0]),
    "tril": lambda j, n, a: n.tril(a),
    "tril_k": lambda j, n, a: n.tril(a[0], k=1),
    "triu": lambda j, n, a: n.triu(a),
    "triu_k": lambda j, n, a: n.triu(a[0], k=-1),
    "diagonal": lambda j, n, a: n.diagonal(a[0]),
    "diagonal_offset": lambda j, n, a: n.diagonal(a[0], offset=1),
    "diagonal_neg_offset": lambda j, n, a: n.diagonal(a[0], offset=-1),
    "diagonal_axes": lambda j, n, a: n.diagonal(a, axis1=1, axis2=2),
    "diagonal_axes_rev": lambda j, n, a: n.diagonal(a, 0, 2, 0),
    "diag": lambda j, n, a: n.diag(a[0, 0]),
    "diag_k": lambda j, n, a: n.diag(a[0], k=1),
    "trace": lambda j, n, a: n.trace(a[0]),
    "ravel": lambda j, n, a: n.ravel(a),
    "ravel_view": lambda j, n, a: n.ravel(n.transpose(a)),
    "atleast_2d": lambda j, n, a: n.atleast_2d(a[0, 0]),
    "atleast_3d": lambda j, n, a: n.atleast_3d(a[0]),
    "meshgrid": lambda j, n, a: n.meshgrid(a[0, 0], a[0, :, 0]),
    "meshgrid_ij": lambda j, n, a: n.meshgrid(a[0, 0], a[0, :, 0], indexing="ij"),
    "reshape_bad": lambda j, n, a: n.reshape(a, (5, 5)),
}


@pytest.mark.parametrize("name", list(SHAPE_OPS))
def test_shape_ops(backend, name):
    check(SHAPE_OPS[name], X234)


def test_shape_ops_int_bool(backend):
    for x in (X234.astype(np.int32), X234 > 10):
        for name in ("transpose", "concatenate", "stack", "pad", "flip", "roll", "tril", "diagonal", "tile", "repeat"):
            check(SHAPE_OPS[name], x)


# --- products -----------------------------------------------------------------------------------


def _r(*shape, dtype=np.float32, seed=0):
    return np.random.RandomState(seed + sum(shape)).randn(*shape).astype(dtype)


PRODUCTS = {
    "matmul_2d": (lambda j, n, a, b: n.matmul(a, b), _r(3, 4), _r(4, 5)),
    "matmul_vec_mat": (lambda j, n, a, b: a @ b, _r(4), _r(4, 5)),
    "matmul_mat_vec": (lambda j, n, a, b: a @ b, _r(3, 4), _r(4)),
    "matmul_vec_vec": (lambda j, n, a, b: a @ b, _r(4), _r(4)),
    "matmul_batch": (lambda j, n, a, b: a @ b, _r(2, 3, 4), _r(2, 4, 5)),
    "matmul_broadcast": (lambda j, n, a, b: a @ b, _r(2, 1, 3, 4), _r(3, 4, 2)),
    "matmul_batch_vec": (lambda j, n, a, b: a @ b, _r(2, 3, 4), _r(4)),
    "matmul_int": (
        lambda j, n, a, b: a @ b,
        np.arange(6, dtype=np.int32).reshape(2, 3),
        np.arange(6, dtype=np.int32).reshape(3, 2),
    ),
    "matmul_mixed": (lambda j, n, a, b: a @ b, np.arange(6, dtype=np.int32).reshape(2, 3), _r(3, 2)),
    "matmul_bool": (lambda j, n, a, b: a @ b, np.eye(3, dtype=bool), np.ones((3, 2), bool)),
    "rmatmul_np": (lambda j, n, a, b: b.__rmatmul__(a), _r(3, 4), _r(4, 2)),
    "matmul_mismatch": (lambda j, n, a, b: a @ b, _r(3, 4), _r(3, 4)),
    "matmul_scalar": (lambda j, n, a, b: n.matmul(a, 2.0), _r(3, 4), None),
    "dot_2d": (lambda j, n, a, b: n.dot(a, b), _r(3, 4), _r(4, 2)),
    "dot_nd": (lambda j, n, a, b: n.dot(a, b), _r(2, 3, 4), _r(5, 4, 2)),
    "dot_scalar": (lambda j, n, a, b: n.dot(a, 2.0), _r(3, 4), None),
    "dot_vec": (lambda j, n, a, b: n.dot(a, b), _r(4), _r(4)),
    "dot_method": (lambda j, n, a, b: a.dot(b), _r(3, 4), _r(4)),
    "tensordot_int": (lambda j, n, a, b: n.tensordot(a, b, 1), _r(2, 3, 4), _r(4, 5)),
    "tensordot_2": (lambda j, n, a, b: n.tensordot(a, b), _r(2, 3, 4), _r(3, 4, 5)),
    "tensordot_0": (lambda j, n, a, b: n.tensordot(a, b, 0), _r(2, 3), _r(4)),
    "tensordot_axes": (lambda j, n, a, b: n.tensordot(a, b, axes=([0, 2], [2, 0])), _r(2, 3, 4), _r(4, 5, 2)),
    "tensordot_axes_int_pair": (lambda j, n, a, b: n.tensordot(a, b, axes=(1, 0)), _r(2, 3), _r(3, 4)),
    "outer": (lambda j, n, a, b: n.outer(a, b), _r(3), _r(4)),
    "outer_2d": (lambda j, n, a, b: n.outer(a, b), _r(2, 2), _r(3)),
    "inner": (lambda j, n, a, b: n.inner(a, b), _r(3, 4), _r(2, 4)),
    "inner_vec": (lambda j, n, a, b: n.inner(a, b), _r(4), _r(4)),
    "vdot": (lambda j, n, a, b: n.vdot(a, b), _r(2, 3), _r(3, 2)),
    "kron": (lambda j, n, a, b: n.kron(a, b), _r(2, 2), _r(2, 3)),
    "cross": (lambda j, n, a, b: n.cross(a, b), _r(4, 3), _r(4, 3)),
    "matmul_f16": (lambda j, n, a, b: a @ b, _r(3, 4, dtype=np.float16), _r(4, 2, dtype=np.float16)),
    "matmul_pref": (
        lambda j, n, a, b: n.matmul(a, b, preferred_element_type=n.float32),
        np.arange(6, dtype=np.int8).reshape(2, 3),
        np.arange(6, dtype=np.int8).reshape(3, 2),
    ),
}


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products(backend, name):
    fn, a, b = PRODUCTS[name]
    tol = 2e-2 if "f16" in name else 1e-5
    if b is None:
        check(lambda j, n, x: fn(j, n, x, None), a, rtol=tol, atol=tol)
    else:
        check(fn, a, b, rtol=tol, atol=tol)


# --- misc ----------------------------------------------------------------------------------------


def test_promotion_table(backend):
    import jax.numpy as jjnp

    import pyjax.numpy as pjnp

    names = ["bool_", "uint8", "int8", "uint16", "int16", "uint32", "int32", "float16", "bfloat16", "float32"]
    for a in names:
        for b in names:
            got = pjnp.result_type(getattr(pjnp, a), getattr(pjnp, b)).name
            assert got == jjnp.result_type(getattr(jjnp, a), getattr(jjnp, b)).name, (a, b)
        cases = [(np.zeros(2, b.rstrip("_")),) for b in names if b != "bfloat16"]
        cases += [(1,), (1.0,), (True,), (np.float32(1),)]
        check_all(lambda j, n, y: n.zeros(2, getattr(n, a)) + y, cases)
        check_all(lambda j, n, y: n.zeros(2, getattr(n, a)) * y, [(1,), (1.0,), (True,)])


def test_astype_conversions(backend):
    f = np.array([-2.7, -0.5, 0.0, 0.5, 1.5, 2.5, 300.7], np.float32)
    for dt in ("int32", "int8", "uint8", "bool", "float16", "bfloat16", "float32"):
        x = f if dt not in ("int8", "uint8") else f[:-1]
        check(lambda j, n, a: a.astype(dt), x)
        check(lambda j, n, a: n.astype(a, dt), x)
    check(lambda j, n, a: a.astype(n.float32), np.array([True, False]))
    check(lambda j, n, a: a.astype("float32"), np.array([2**24 + 1, -5], np.int32))
    check(lambda j, n, a: a.astype(n.uint8), np.array([-1, 256, 3], np.int32))


def test_docstring_example_fixes():
    """Cases JAX's own docstring examples run: jnp.isscalar of NumPy scalars and 0-d arrays, correlate
    conjugating its complex second argument, column_stack of scalars, nanmin/nanmax with a fully masked
    slice (initial, not nan), rint of complex, sinc's higher derivatives at 0 and fromfunction calling
    its function on scalars."""
    from jax_compare import check as check_eager

    check_eager(lambda j, n: [n.isscalar(v) for v in (1.0, 2j, n.array(1), np.array(1.0), np.int32(1), "a", [1])])
    for mode in ("full", "same", "valid"):
        check_eager(lambda j, n: n.correlate(n.array([3 + 1j, 2, 2 - 3j]), n.array([4, 2 - 5j, 1]), mode=mode))
        check_eager(lambda j, n: n.correlate(n.array([1 - 1j, 2j]), n.array([3 + 1j, 2, 2 - 3j]), mode=mode))
    check_eager(lambda j, n: n.column_stack([1, 2, 3]))
    x = np.array([[1.0, 5, 2, 4], [-4, -2, np.nan, 7], [np.nan, 8, 3, 6]], np.float32)
    mask = np.array([[False], [True], [False]])
    check_eager(lambda j, n: n.nanmin(n.asarray(x), axis=0, keepdims=True, initial=0, where=mask))
    check_eager(lambda j, n: n.nanmax(n.asarray(x), axis=0, initial=0, where=~mask))
    check_eager(lambda j, n: n.rint(n.array([-2.5 + 3.5j, 4.5 - 0.5j])))

    def sinc_derivatives(j, n):
        f, out = n.sinc, []
        for _ in range(4):
            f = j.grad(f)
            out += [f(0.0), f(0.3)]
        return out

    check_eager(sinc_derivatives, rtol=1e-4, atol=1e-4)
    check_eager(lambda j, n: n.fromfunction(lambda i: (i + 1) * n.arange(3), shape=(2,)))
    check_eager(lambda j, n: n.fromfunction(lambda i, k: n.where(i > k, i, -k) + 0 * i.ndim, (3, 4), dtype=int))


def test_array_from_ranges_and_buffers():
    """jnp.array / asarray of range objects (also inside lists) and buffer-protocol objects (array.array,
    bytearray, memoryview): values and dtypes as JAX; jnp.size over a tuple of axes."""
    import array

    from jax_compare import check as check_eager

    for make in (
        lambda: range(5),
        lambda: range(2, 10, 3),
        lambda: range(0),
        lambda: [range(2), range(2)],
        lambda: array.array("i", [2, 3]),
        lambda: array.array("d", [2.5]),
        lambda: bytearray(b"ab"),
        lambda: memoryview(b"ab"),
    ):
        check_eager(lambda j, n: [n.array(make()), n.asarray(make()), n.array(make(), dtype=n.float32)])
    check_eager(lambda j, n: [n.size(n.ones((2, 3, 4)), axis=a) for a in (None, 1, (1,), (0, 2), -1)])
