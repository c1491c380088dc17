"""Complex numbers (complex64) against real JAX on every backend: dtypes and promotion (weak Python
complex scalars included), creation, parts, arithmetic and elementwise math, reductions, products,
movement and indexing, conversions, printing, jit / vmap / grad / jvp / vjp with JAX's complex
convention, and the errors JAX raises (no complex rule, grad of a complex output)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from tests.jax_compare import assert_close, check

rng = np.random.default_rng(7)


def _c(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


Z = _c(3, 4)
Z2 = _c(3, 4)
ZV = _c(5)
M1, M2 = _c(3, 4), _c(4, 2)
X = rng.standard_normal((3, 4)).astype(np.float32)
I = np.arange(12, dtype=np.int32).reshape(3, 4)


# --- dtypes, promotion, creation ------------------------------------------------------------------


def test_dtype_objects():
    assert pjnp.dtype(pjnp.complex64) == np.complex64
    assert str(pjnp.dtype("complex64")) == "complex64"
    assert pjnp.complex64.dtype.itemsize == 8 and pjnp.complex64.dtype.kind == "c"
    for a, b in [
        (pjnp.complex64, pjnp.complexfloating),
        (pjnp.complex64, pjnp.inexact),
        (pjnp.complex64, pjnp.floating),
        (pjnp.complex64, pjnp.number),
        (pjnp.float32, pjnp.complexfloating),
    ]:
        ja, jb = getattr(jjnp, a.__name__), getattr(jjnp, b.__name__)
        assert pjnp.issubdtype(a, b) == jjnp.issubdtype(ja, jb), (a, b)
    assert pjnp.finfo(pjnp.complex64).eps == jjnp.finfo(jjnp.complex64).eps
    assert str(pjnp.finfo(pjnp.complex64).dtype) == str(jjnp.finfo(jjnp.complex64).dtype)


PROMOTE = [
    ("float32", "complex64"),
    ("int32", "complex64"),
    ("bool", "complex64"),
    ("float16", "complex64"),
    ("float64", "complex64"),
    ("complex64", "complex64"),
    ("uint8", "complex64"),
]


@pytest.mark.parametrize("a,b", PROMOTE)
def test_promote_types(a, b):
    assert str(pjnp.promote_types(a, b)) == str(jjnp.promote_types(a, b))
    assert str(pjnp.result_type(a, b)) == str(jjnp.result_type(a, b))


CREATE = {
    "py_complex": lambda jx, jnp: jnp.asarray(1 + 2j),
    "py_complex_dtype": lambda jx, jnp: jnp.asarray(1 + 2j, dtype=jnp.complex64),
    "list": lambda jx, jnp: jnp.asarray([1 + 2j, 3, -0.5j]),
    "nested": lambda jx, jnp: jnp.array([[1j, 2], [3.5, 4 - 1j]]),
    "scalar_type": lambda jx, jnp: jnp.complex64(3 - 4j),
    "scalar_type_real": lambda jx, jnp: jnp.complex64(2.5),
    "zeros": lambda jx, jnp: jnp.zeros((2, 3), jnp.complex64),
    "ones": lambda jx, jnp: jnp.ones(3, dtype="complex64"),
    "full": lambda jx, jnp: jnp.full((2,), 1 - 1j),
    "full_like": lambda jx, jnp: jnp.full_like(jnp.zeros(2), 2j, dtype=jnp.complex64),
    "zeros_like": lambda jx, jnp: jnp.zeros_like(jnp.asarray([1j, 2])),
    "eye": lambda jx, jnp: jnp.eye(2, dtype=jnp.complex64),
    "arange_times_j": lambda jx, jnp: jnp.arange(3) * 1j,
    "f32_plus_j": lambda jx, jnp: jnp.float32(1) + 1j,
    "f32_array_plus_j": lambda jx, jnp: jnp.arange(3.0) + 2j,
    "int_plus_weak_complex": lambda jx, jnp: jnp.int32(2) * (1 + 1j),
    "lax_complex": lambda jx, jnp: jx.lax.complex(jnp.arange(3.0), jnp.ones(3)),
    "lax_complex_scalars": lambda jx, jnp: jx.lax.complex(1.0, 2.0),
    "astype_c": lambda jx, jnp: jnp.arange(4).astype(jnp.complex64),
    "bool_to_c": lambda jx, jnp: jnp.asarray([True, False]).astype(jnp.complex64),
}


@pytest.mark.parametrize("name", list(CREATE))
def test_create(backend, name):
    check(CREATE[name])


def test_from_numpy(backend):
    check(lambda jx, jnp, z: z, Z)
    check(lambda jx, jnp, z: jnp.asarray(z), Z)
    z = pjnp.asarray(Z)
    np.testing.assert_array_equal(np.asarray(z), Z)
    assert np.asarray(z).dtype == np.complex64
    assert z.tolist() == Z.tolist()
    assert complex(z[1, 2]) == complex(Z[1, 2])
    assert z[0, 0].item() == complex(Z[0, 0])
    assert pjnp.asarray(np.complex128(1 + 2j)).dtype == np.complex64


def test_repr_str():
    for v in ([1 + 2j, 3 - 0.5j], 1 + 2j, [[1j, 2], [3, 4]]):
        assert repr(pjnp.asarray(v)) == repr(jjnp.asarray(v))
        assert str(pjnp.asarray(v)) == str(jjnp.asarray(v))


def test_float_of_complex_raises():
    with pytest.raises(TypeError):
        float(pjnp.asarray(1 + 2j))
    with pytest.raises(TypeError):
        float(jjnp.asarray(1 + 2j))


# --- parts, predicates ----------------------------------------------------------------------------

PARTS = {
    "real": lambda jx, jnp, z: jnp.real(z),
    "imag": lambda jx, jnp, z: jnp.imag(z),
    "conj": lambda jx, jnp, z: jnp.conj(z),
    "conjugate": lambda jx, jnp, z: jnp.conjugate(z),
    "angle": lambda jx, jnp, z: jnp.angle(z),
    "angle_deg": lambda jx, jnp, z: jnp.angle(z, deg=True),
    "abs": lambda jx, jnp, z: jnp.abs(z),
    "absolute": lambda jx, jnp, z: jnp.absolute(z),
    "prop_real": lambda jx, jnp, z: z.real,
    "prop_imag": lambda jx, jnp, z: z.imag,
    "meth_conj": lambda jx, jnp, z: z.conj(),
    "lax_real": lambda jx, jnp, z: jx.lax.real(z),
    "lax_imag": lambda jx, jnp, z: jx.lax.imag(z),
    "lax_conj": lambda jx, jnp, z: jx.lax.conj(z),
    "lax_abs": lambda jx, jnp, z: jx.lax.abs(z),
    "iscomplex": lambda jx, jnp, z: jnp.iscomplex(z.at[0, 0].set(2.0)),
    "isreal": lambda jx, jnp, z: jnp.isreal(z.at[0, 0].set(2.0)),
    "isfinite": lambda jx, jnp, z: jnp.isfinite(z),
    "isnan": lambda jx, jnp, z: jnp.isnan(z.at[1, 1].set(jnp.nan)),
}


@pytest.mark.parametrize("name", list(PARTS))
def test_parts(backend, name):
    check(PARTS[name], Z)


REAL_PARTS = {
    "real": lambda jx, jnp, x: jnp.real(x),
    "imag": lambda jx, jnp, x: jnp.imag(x),
    "conj": lambda jx, jnp, x: jnp.conj(x),
    "angle": lambda jx, jnp, x: jnp.angle(x),
    "iscomplex": lambda jx, jnp, x: jnp.iscomplex(x),
    "isreal": lambda jx, jnp, x: jnp.isreal(x),
    "prop_imag": lambda jx, jnp, x: x.imag,
    "lax_conj": lambda jx, jnp, x: jx.lax.conj(x),
}


@pytest.mark.parametrize("name", list(REAL_PARTS))
def test_parts_of_real(backend, name):
    check(REAL_PARTS[name], X)


def test_iscomplexobj():
    for v in (Z, X, 1j, 1.0, np.complex64(1), I):
        assert pjnp.iscomplexobj(v) == jjnp.iscomplexobj(v), v
        assert pjnp.isrealobj(v) == jjnp.isrealobj(v), v
    assert pjnp.iscomplexobj(pjnp.asarray(Z)) and not pjnp.iscomplexobj(pjnp.asarray(X))


# --- arithmetic and elementwise math -----------------------------------------------------------------

BINARY = {
    "add": lambda jx, jnp, a, b: a + b,
    "sub": lambda jx, jnp, a, b: a - b,
    "mul": lambda jx, jnp, a, b: a * b,
    "div": lambda jx, jnp, a, b: a / b,
    "eq": lambda jx, jnp, a, b: a == b,
    "ne": lambda jx, jnp, a, b: a != b,
    "eq_self": lambda jx, jnp, a, b: a == a,
    "pow": lambda jx, jnp, a, b: jnp.power(a, b),
    "add_real": lambda jx, jnp, a, b: a + jnp.real(b),
    "mul_real": lambda jx, jnp, a, b: jnp.real(b) * a,
    "scalar_mul": lambda jx, jnp, a, b: a * 2.5,
    "scalar_add_c": lambda jx, jnp, a, b: a + (1 - 2j),
    "scalar_rsub_c": lambda jx, jnp, a, b: (1 - 2j) - a,
    "scalar_rdiv": lambda jx, jnp, a, b: 1.0 / a,
    "int_mul": lambda jx, jnp, a, b: a * 3,
    "where": lambda jx, jnp, a, b: jnp.where(jnp.abs(a) > 1, a, b),
    "where_scalar": lambda jx, jnp, a, b: jnp.where(jnp.real(a) > 0, a, 0),
    "lax_mul": lambda jx, jnp, a, b: jx.lax.mul(a, b),
    "lax_max": lambda jx, jnp, a, b: jx.lax.max(a, b),
    "minimum_ties": lambda jx, jnp, a, b: jnp.minimum(a, jnp.real(a) + 1j * jnp.imag(b)),
    "less": lambda jx, jnp, a, b: jnp.less(a, b),
    "greater_equal_ties": lambda jx, jnp, a, b: a >= jnp.real(a) + 1j * jnp.imag(b),
    "round": lambda jx, jnp, a, b: jnp.round(a * 3),
    "lax_div": lambda jx, jnp, a, b: jx.lax.div(a, b),
}


@pytest.mark.parametrize("name", list(BINARY))
def test_binary(backend, name):
    check(BINARY[name], Z, Z2, rtol=1e-5, atol=1e-5)


UNARY = {
    "neg": lambda jx, jnp, z: -z,
    "exp": lambda jx, jnp, z: jnp.exp(z),
    "log": lambda jx, jnp, z: jnp.log(z),
    "sqrt": lambda jx, jnp, z: jnp.sqrt(z),
    "sin": lambda jx, jnp, z: jnp.sin(z),
    "cos": lambda jx, jnp, z: jnp.cos(z),
    "tan": lambda jx, jnp, z: jnp.tan(z),
    "sinh": lambda jx, jnp, z: jnp.sinh(z),
    "cosh": lambda jx, jnp, z: jnp.cosh(z),
    "tanh": lambda jx, jnp, z: jnp.tanh(z),
    "expm1": lambda jx, jnp, z: jnp.expm1(z),
    "exp2": lambda jx, jnp, z: jnp.exp2(z),
    "log2": lambda jx, jnp, z: jnp.log2(z),
    "log10": lambda jx, jnp, z: jnp.log10(z),
    "log1p": lambda jx, jnp, z: jnp.log1p(z),
    "square": lambda jx, jnp, z: jnp.square(z),
    "sign": lambda jx, jnp, z: jnp.sign(z),
    "reciprocal": lambda jx, jnp, z: jnp.reciprocal(z),
    "pow2": lambda jx, jnp, z: z**2,
    "pow3": lambda jx, jnp, z: z**3,
    "pow_neg2": lambda jx, jnp, z: z**-2,
    "pow0": lambda jx, jnp, z: z**0,
    "pow_half": lambda jx, jnp, z: z**0.5,
    "lax_integer_pow": lambda jx, jnp, z: jx.lax.integer_pow(z, 5),
    "lax_rsqrt": lambda jx, jnp, z: jx.lax.rsqrt(z),
    "abs_sq": lambda jx, jnp, z: jnp.abs(z) ** 2,
}


@pytest.mark.parametrize("name", list(UNARY))
def test_unary(backend, name):
    check(UNARY[name], Z, rtol=2e-5, atol=2e-5)


def test_special_values(backend):
    v = np.array([0, 1, -1, 1j, -1j, -4, -4 - 0j, 1e-30 + 1e-30j, 3e30 + 4e30j], np.complex64)
    for f in ("sqrt", "abs", "log", "exp", "sign", "angle"):
        check(lambda jx, jnp, z, f=f: getattr(jnp, f)(z), v, rtol=1e-5, atol=1e-6)


# --- reductions, products ------------------------------------------------------------------------

REDUCE = {
    "sum": lambda jx, jnp, z: jnp.sum(z),
    "sum_axis": lambda jx, jnp, z: jnp.sum(z, axis=1, keepdims=True),
    "mean": lambda jx, jnp, z: jnp.mean(z, axis=0),
    "prod": lambda jx, jnp, z: jnp.prod(z),
    "prod_axis": lambda jx, jnp, z: jnp.prod(z, axis=1),
    "var": lambda jx, jnp, z: jnp.var(z),
    "std": lambda jx, jnp, z: jnp.std(z, axis=0),
    "cumsum": lambda jx, jnp, z: jnp.cumsum(z, axis=1),
    "vdot": lambda jx, jnp, z: jnp.vdot(z, z),
    "linalg_norm": lambda jx, jnp, z: jnp.linalg.norm(z[0]),
}


@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce(backend, name):
    check(REDUCE[name], Z, rtol=1e-5, atol=1e-5)


def test_conv(backend):
    lhs, rhs = _c(1, 2, 6, 6), _c(3, 2, 3, 3)
    check(lambda jx, jnp, a, b: jx.lax.conv_general_dilated(a, b, (1, 1), "SAME"), lhs, rhs, rtol=1e-4, atol=1e-4)


ZT = _c(3, 5)
ZT[0, 1] = ZT[0, 3].real + 5j  # ties in the real part: ordered by the imaginary part
ZT[0, 2] = ZT[0, 3].real - 5j

ORDER = {
    "sort": lambda jx, jnp, z: jnp.sort(z),
    "sort_axis0": lambda jx, jnp, z: jnp.sort(z, axis=0),
    "argsort": lambda jx, jnp, z: jnp.argsort(z[0]),
    "lax_sort_kv": lambda jx, jnp, z: jx.lax.sort((z[0], jnp.arange(5)), num_keys=1),
    "unique": lambda jx, jnp, z: jnp.unique(jnp.concatenate([z[0], z[0, :2]])),
    "max": lambda jx, jnp, z: jnp.max(z),
    "max_axis": lambda jx, jnp, z: jnp.max(z, axis=1),
    "min_axis0": lambda jx, jnp, z: jnp.min(z, axis=0),
    "prod_odd": lambda jx, jnp, z: jnp.prod(jnp.concatenate([z[0], z[1, :2]])),
    "cumprod": lambda jx, jnp, z: jnp.cumprod(z, axis=1),
    "cumprod_reverse": lambda jx, jnp, z: jx.lax.cumprod(z, axis=0, reverse=True),
    "grad_cumprod": lambda jx, jnp, z: jx.grad(lambda a: jnp.abs(jnp.cumprod(a)[-1]))(z[0]),
    "grad_sort": lambda jx, jnp, z: jx.grad(lambda a: jnp.real(jnp.sort(a)[0] * a[1]))(z[0]),
    "jit_sort": lambda jx, jnp, z: jx.jit(jnp.sort)(z),
    "sort_complex": lambda jx, jnp, z: jnp.sort_complex(z),
    "sort_complex_real": lambda jx, jnp, z: jnp.sort_complex(jnp.real(z)),
    "vmap_sort": lambda jx, jnp, z: jx.vmap(jnp.sort)(z),
}


@pytest.mark.parametrize("name", list(ORDER))
def test_order(backend, name):
    check(ORDER[name], ZT, rtol=1e-5, atol=1e-5)


PRODUCTS = {
    "matmul": lambda jx, jnp, a, b: a @ b,
    "dot": lambda jx, jnp, a, b: jnp.dot(a, b),
    "einsum": lambda jx, jnp, a, b: jnp.einsum("ij,jk->ik", a, b),
    "einsum_trace": lambda jx, jnp, a, b: jnp.einsum("ij,ji->", a, b.T @ b.T.T),
    "matmul_real": lambda jx, jnp, a, b: a @ jnp.real(b),
    "outer": lambda jx, jnp, a, b: jnp.outer(a[0], b[:, 0]),
    "lax_dot_general": lambda jx, jnp, a, b: jx.lax.dot_general(a, b, (((1,), (0,)), ((), ()))),
    "batched": lambda jx, jnp, a, b: jnp.matmul(jnp.stack([a, a]), jnp.stack([b, b])),
}


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products(backend, name):
    check(PRODUCTS[name], M1, M2, rtol=1e-5, atol=1e-5)


# --- movement, indexing, conversion ---------------------------------------------------------------

MOVE = {
    "reshape": lambda jx, jnp, z: z.reshape(2, 6),
    "ravel": lambda jx, jnp, z: jnp.ravel(z),
    "T": lambda jx, jnp, z: z.T,
    "transpose": lambda jx, jnp, z: jnp.transpose(z[None], (2, 0, 1)),
    "broadcast_to": lambda jx, jnp, z: jnp.broadcast_to(z[0], (2, 4)),
    "concatenate": lambda jx, jnp, z: jnp.concatenate([z, z[:1]], axis=0),
    "stack": lambda jx, jnp, z: jnp.stack([z, z], axis=-1),
    "slice": lambda jx, jnp, z: z[1:, ::2],
    "index": lambda jx, jnp, z: z[1, 2],
    "fancy": lambda jx, jnp, z: z[jnp.array([2, 0]), 1],
    "take": lambda jx, jnp, z: jnp.take(z, jnp.array([3, 0, 1]), axis=1),
    "flip": lambda jx, jnp, z: jnp.flip(z, 0),
    "roll": lambda jx, jnp, z: jnp.roll(z, 1, axis=1),
    "pad": lambda jx, jnp, z: jnp.pad(z, ((1, 0), (0, 2))),
    "pad_value": lambda jx, jnp, z: jnp.pad(z, 1, constant_values=1 + 1j),
    "at_set": lambda jx, jnp, z: z.at[0, 1].set(5 - 5j),
    "at_add": lambda jx, jnp, z: z.at[jnp.array([0, 0, 2]), 1].add(1j),
    "dynamic_slice": lambda jx, jnp, z: jx.lax.dynamic_slice(z, (1, 1), (2, 2)),
    "dynamic_update_slice": lambda jx, jnp, z: jx.lax.dynamic_update_slice(z, z[:1, :2] * 2, (2, 1)),
    "squeeze": lambda jx, jnp, z: jnp.squeeze(z[:1]),
    "expand_dims": lambda jx, jnp, z: jnp.expand_dims(z, 1),
    "tile": lambda jx, jnp, z: jnp.tile(z[0], 2),
    "astype_c64": lambda jx, jnp, z: z.astype(jnp.complex64),
    "copy": lambda jx, jnp, z: jnp.array(z, copy=True),
    "triu": lambda jx, jnp, z: jnp.triu(z),
    "linspace": lambda jx, jnp, z: jnp.linspace(z[0, 0], z[0, 1], 5),
    "nan_to_num": lambda jx, jnp, z: jnp.nan_to_num(z.at[0, 0].set(jnp.nan + 1j * jnp.inf)),
    "isclose": lambda jx, jnp, z: jnp.isclose(z, z + 1e-3j),
    "device_put": lambda jx, jnp, z: jx.device_put(z),
    "kron": lambda jx, jnp, z: jnp.kron(z[0], z[1]),
    "convolve": lambda jx, jnp, z: jnp.convolve(z[0], z[1]),
    "trace": lambda jx, jnp, z: jnp.trace(z),
}


@pytest.mark.parametrize("name", list(MOVE))
def test_movement(backend, name):
    check(MOVE[name], Z)


def test_astype_complex_to_real_warns(backend):
    for lib in (pjnp, jjnp):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = lib.asarray(Z).astype(lib.float32)
        assert any("complex to real" in str(x.message) for x in w), lib
        np.testing.assert_array_equal(np.asarray(out), Z.real)
    check(lambda jx, jnp, z: jx.lax.convert_element_type(z, jnp.float32), Z)
    check(lambda jx, jnp, z: jx.lax.convert_element_type(z, jnp.int32), Z * 3)
    check(lambda jx, jnp, z: jx.lax.convert_element_type(z, jnp.bool_), Z.real * 1j)
    check(lambda jx, jnp, z: jnp.count_nonzero(z), np.array([0, 1j, 2], np.complex64))


# --- transformations --------------------------------------------------------------------------------

TRANSFORMS = {
    "jit_mul": lambda jx, jnp, z: jx.jit(lambda a: a * a + 1j)(z),
    "jit_scalar": lambda jx, jnp, z: jx.jit(lambda a: a * a)(1 + 2j),
    "jit_closure": lambda jx, jnp, z: jx.jit(lambda a: jnp.exp(a) * z)(z),
    "jit_real_out": lambda jx, jnp, z: jx.jit(lambda a: jnp.abs(a) + jnp.angle(a))(z),
    "jit_real_in": lambda jx, jnp, z: jx.jit(lambda a: jx.lax.complex(a, a * 2))(jnp.real(z)),
    "jit_nested": lambda jx, jnp, z: jx.jit(lambda a: jx.jit(lambda b: b * 1j)(a) + a)(z),
    "jit_internal_complex": lambda jx, jnp, z: jx.jit(lambda x: jnp.abs(jnp.exp(1j * x)) + x)(jnp.real(z)),
    "vmap": lambda jx, jnp, z: jx.vmap(lambda r: r * jnp.conj(r[0]))(z),
    "vmap_axis1": lambda jx, jnp, z: jx.vmap(lambda c: jnp.sum(c * c), in_axes=1)(z),
    "vmap_out1": lambda jx, jnp, z: jx.vmap(lambda c: c * 2j, out_axes=1)(z),
    "vmap_neg_in": lambda jx, jnp, z: jx.vmap(lambda c: c.sum(), in_axes=-1)(z),
    "vmap_jit": lambda jx, jnp, z: jx.vmap(jx.jit(lambda c: jnp.exp(c)))(z),
    "grad_abs2": lambda jx, jnp, z: jx.grad(lambda a: jnp.abs(a) ** 2)(3 + 4j),
    "grad_abs2_array": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.abs(a) ** 2))(z),
    "grad_real_part": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.real(a * a)))(z),
    "grad_imag_part": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.imag(jnp.exp(a))))(z),
    "grad_abs": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.abs(a)))(z),
    "grad_angle": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.angle(a)))(z),
    "grad_matmul": lambda jx, jnp, z: jx.grad(lambda a: jnp.real(jnp.sum(a @ a.T)))(z),
    "grad_real_to_complex": lambda jx, jnp, z: jx.grad(lambda x: jnp.abs(jnp.sum(jnp.exp(1j * x))))(jnp.real(z)),
    "grad_holomorphic": lambda jx, jnp, z: jx.grad(lambda a: a**2, holomorphic=True)(3 + 4j),
    "grad_holomorphic_sin": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.sin(a) * a), holomorphic=True)(z),
    "grad_jit": lambda jx, jnp, z: jx.jit(jx.grad(lambda a: jnp.sum(jnp.abs(jnp.log(a)) ** 2)))(z),
    "grad_of_jit": lambda jx, jnp, z: jx.grad(jx.jit(lambda a: jnp.sum(jnp.abs(a * a) ** 2)))(z),
    "value_and_grad": lambda jx, jnp, z: jx.value_and_grad(lambda a: jnp.sum(jnp.real(a) * jnp.imag(a)))(z),
    "jvp": lambda jx, jnp, z: jx.jvp(lambda a: a * jnp.exp(a), (z,), (z * 0.5j,)),
    "jvp_real_out": lambda jx, jnp, z: jx.jvp(lambda a: jnp.abs(a) ** 2, (z,), (z * 0.5j,)),
    "vjp": lambda jx, jnp, z: jx.vjp(lambda a: a * jnp.sin(a), z)[1](z * (1 - 1j)),
    "vjp_real_in": lambda jx, jnp, z: jx.vjp(lambda x: jnp.exp(1j * x), jnp.real(z))[1](z),
    "jacfwd_real": lambda jx, jnp, z: jx.jacfwd(lambda x: jnp.abs(jnp.exp(1j * x) + x))(jnp.real(z[0])),
    "scan": lambda jx, jnp, z: jx.lax.scan(lambda c, x: (c * x + 1j, c), jnp.complex64(1), z[0]),
    "scan_jit": lambda jx, jnp, z: jx.jit(lambda a: jx.lax.scan(lambda c, x: (c + x * c, jnp.abs(x)), a[0], a))(z),
    "scan_grad": lambda jx, jnp, z: jx.grad(
        lambda a: jnp.abs(jx.lax.scan(lambda c, x: (c * x, None), jnp.complex64(1), a)[0])
    )(z[0]),
    "scan_vmap": lambda jx, jnp, z: jx.vmap(lambda r: jx.lax.scan(lambda c, x: (c * x, c), r[0], r)[1])(z),
    "cond": lambda jx, jnp, z: jx.lax.cond(True, lambda a: a * 2j, lambda a: a, z),
    "cond_jit": lambda jx, jnp, z: jx.jit(lambda a, p: jx.lax.cond(p, lambda b: jnp.exp(b), jnp.conj, a))(z, False),
    "cond_grad": lambda jx, jnp, z: jx.grad(
        lambda a: jnp.sum(jnp.abs(jx.lax.cond(True, lambda b: b * b, lambda b: b, a)))
    )(z),
    "fori": lambda jx, jnp, z: jx.lax.fori_loop(0, 3, lambda i, a: a * (1 + 1j), z),
    "while": lambda jx, jnp, z: jx.lax.while_loop(lambda a: jnp.abs(a[0, 0]) < 10, lambda a: a * 2, z),
    "while_jit": lambda jx, jnp, z: jx.jit(
        lambda a: jx.lax.while_loop(lambda c: jnp.real(c[0]) < 5, lambda c: c + 1 + 1j, a)
    )(z[0]),
    "checkpoint": lambda jx, jnp, z: jx.grad(jx.checkpoint(lambda a: jnp.sum(jnp.abs(jnp.exp(a)))))(z),
    "stop_gradient": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.abs(jx.lax.stop_gradient(a) * a)))(z),
    "custom_jvp": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.abs(jx.nn.relu(jnp.real(a)) * a)))(z),
    "jacrev_holomorphic": lambda jx, jnp, z: jx.jacrev(lambda a: a * jnp.sin(a), holomorphic=True)(z[0]),
    "jacfwd_holomorphic": lambda jx, jnp, z: jx.jacfwd(lambda a: a * jnp.exp(a), holomorphic=True)(z[0]),
    "hessian_holomorphic": lambda jx, jnp, z: jx.hessian(lambda a: jnp.sum(a**3), holomorphic=True)(z[0]),
    "jacrev_real_out": lambda jx, jnp, z: jx.jacrev(lambda a: jnp.abs(a) ** 2)(z[0]),
    "hessian_abs2": lambda jx, jnp, z: jx.hessian(lambda x: jnp.sum(jnp.abs(x * (1 + 2j)) ** 2))(jnp.real(z[0])),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transforms(backend, name):
    check(TRANSFORMS[name], Z, rtol=1e-4, atol=1e-5)


def test_make_jaxpr_complex_avals():
    jaxpr = pyjax.make_jaxpr(lambda z: z * z)(1 + 2j)
    assert "c64[]" in str(jaxpr)
    assert jaxpr.out_avals[0].dtype == np.complex64


# --- errors ---------------------------------------------------------------------------------------

ERRORS = {
    "grad_complex_out": lambda jx, jnp, z: jx.grad(lambda a: a * a)(1 + 2j),
    "grad_holomorphic_real_in": lambda jx, jnp, z: jx.grad(lambda a: a * a, holomorphic=True)(3.0),
    "grad_holomorphic_real_out": lambda jx, jnp, z: jx.grad(lambda a: jnp.abs(a), holomorphic=True)(1 + 1j),
    "floor": lambda jx, jnp, z: jnp.floor(z),
    "lax_floor": lambda jx, jnp, z: jx.lax.floor(z),
    "lax_real_of_real": lambda jx, jnp, z: jx.lax.real(jnp.real(z)),
    "lax_add_mixed": lambda jx, jnp, z: jx.lax.add(z, jnp.real(z)),
    "lax_complex_mixed": lambda jx, jnp, z: jx.lax.complex(jnp.real(z), jnp.int32(1)),
    "trunc": lambda jx, jnp, z: jnp.trunc(z),
    "jacfwd_complex_in": lambda jx, jnp, z: jx.jacfwd(lambda a: jnp.abs(a))(z[0]),
    "jacrev_complex_out": lambda jx, jnp, z: jx.jacrev(lambda a: a * 2)(z[0]),
    "jacrev_holomorphic_real_in": lambda jx, jnp, z: jx.jacrev(lambda a: a * 2, holomorphic=True)(jnp.real(z)),
    "bitwise": lambda jx, jnp, z: jnp.bitwise_and(z, z),
    "argmax": lambda jx, jnp, z: jnp.argmax(z),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(backend, name):
    with pytest.raises(Exception):
        ERRORS[name](jax, jjnp, jjnp.asarray(Z))
    check(ERRORS[name], Z)


def test_no_rule_message():
    with pytest.raises(TypeError, match="floor does not accept dtype complex64"):
        pyjax.lax.floor(pjnp.asarray(Z))
    with pytest.raises(TypeError, match="complex64"):
        pyjax.jit(lambda z: pyjax.lax.cummax(z, 0))(pjnp.asarray(Z))


def test_weak_types(backend):
    z = pjnp.asarray(1 + 2j)
    assert z.weak_type and z.dtype == np.complex64
    out = pjnp.asarray(Z) * (1 + 1j)
    assert not out.weak_type and out.dtype == np.complex64
    assert_close(pjnp.asarray(2.0) * z, jjnp.asarray(2.0) * jjnp.asarray(1 + 2j))


def test_without_numpy_paths(monkeypatch):
    """Pyodide has no numpy: readback and printing of complex arrays in pure Python."""
    from pyjax.runtime import printing

    x = pjnp.asarray(np.array([[1 + 2j, 3 - 0.5j], [0.25j, -2]], np.complex64))
    for a in (x, x.T, x[:, 1], pjnp.full((2,), 1 - 2j), x[1, 0]):
        assert a._flat_list() == np.asarray(a).ravel().tolist()
    monkeypatch.setattr(printing, "_use_numpy", lambda arr: False)
    for v in ([1 + 2j, 3 - 0.5j], [[1j, 2], [3, 4]], [1.5 + 2.25j, -3 - 1j]):
        assert repr(pjnp.asarray(v)) == repr(jjnp.asarray(v)), v
        assert str(pjnp.asarray(v)) == str(jjnp.asarray(v)), v
    for v in (1 + 2j, 1j, -1.5 - 2j, 0j):
        assert str(pjnp.complex64(v)) == str(np.complex64(v)), v
