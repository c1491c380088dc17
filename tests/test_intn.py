"""4-, 2- and 1-bit integers (int4, uint4, int2, uint2, int1, uint1) against JAX: dtype objects, iinfo,
promotion, numpy interop and printing, casts, and arithmetic that wraps, on every backend."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from tests.jax_compare import assert_promotes_as_jax

INTN = ["int4", "uint4", "int2", "uint2", "int1", "uint1"]
# XLA's CPU backend runs int4/uint4 through everything below, int2/uint2 through elementwise ops only
# (it sorts, clips and dots them wrongly or not at all) and int1/uint1 not at all (it cannot even
# transfer them): numpy's integers, wrapped, are the oracle there.
ON_JAX = ["int4", "uint4", "int2", "uint2"]


def _wrap(v, name):
    """Python integers wrapped into the range of `name`, as its arithmetic wraps."""
    bits = ml_dtypes.iinfo(name).bits
    v = np.asarray(v, np.int64) & ((1 << bits) - 1)
    return np.where(v >= 1 << (bits - 1), v - (1 << bits), v) if name[0] == "i" else v


def _all_values(name):
    info = ml_dtypes.iinfo(name)
    return np.arange(info.min, info.max + 1)


def _pairs(name):
    """Every pair of values of `name` (as int64 arrays)."""
    a, b = np.meshgrid(_all_values(name), _all_values(name))
    return a.ravel(), b.ravel()


@pytest.mark.parametrize("name", INTN)
def test_dtype_objects_match_jax(name):
    d, j = pjnp.dtype(name), jnp.dtype(name)
    assert d == getattr(pjnp, name) == pjnp.dtype(getattr(ml_dtypes, name)) and d.name == j.name == str(d)
    assert d.itemsize == j.itemsize == 1 and pyjax.dtypes.itemsize_bits(name) == jax.dtypes.itemsize_bits(name)
    got, want = pjnp.iinfo(name), jnp.iinfo(name)
    assert (got.bits, got.min, got.max) == (want.bits, want.min, want.max) and str(got) == str(want)
    for t in ("integer", "signedinteger", "unsignedinteger", "floating"):
        assert pjnp.issubdtype(d, getattr(pjnp, t)) == jnp.issubdtype(j, getattr(jnp, t)), t


def test_promotion_matches_jax():
    others = INTN + ["bool", "int8", "uint8", "int32", "float32", "bfloat16", "float4_e2m1fn", "float8_e4m3fn"]
    for a in INTN:
        for b in others:
            assert_promotes_as_jax(a, b)
        x = pjnp.zeros(3, a)
        assert (x + 1).dtype == jnp.result_type(a, 1) and (x * True).dtype == jnp.result_type(a, True)
        with pytest.raises(pyjax.dtypes.TypePromotionError, match="4-bit integers do not support implicit"):
            x + 1.5


@pytest.mark.parametrize("name", ON_JAX)
def test_numpy_interop_and_printing_match_jax(name):
    a = _all_values(name).astype(getattr(ml_dtypes, name))
    x, j = pjnp.asarray(a), jnp.asarray(a)
    assert np.asarray(x).dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(x).view(np.uint8), a.view(np.uint8))  # ml_dtypes' bytes
    assert repr(x) == repr(j) and str(x.reshape(-1, 2)) == str(j.reshape(-1, 2)) and x.tolist() == j.tolist()
    assert repr(pjnp.array([1, 0, 1], name)) == repr(jnp.array([1, 0, 1], name))
    assert repr(getattr(pjnp, name)(1)) == repr(getattr(jnp, name)(1))
    if name[0] == "i":  # JAX's abs rejects the signed 4- and 2-bit integers (jnp.abs of unsigned ones is x)
        with pytest.raises(TypeError, match="narrow-width integers"):
            pjnp.abs(x)


def _f32_classes(name):
    """float32 values of each class for a cast to `name`: every value, halves between them, beyond
    the range (saturating), infinities and NaN."""
    v = _all_values(name).astype(np.float32)
    return np.concatenate([v, v + 0.5, v - 0.25, [200, -200, 1e10, -1e10, np.inf, -np.inf, np.nan, -0.0]])


@pytest.mark.parametrize("name", INTN)
def test_casts_match_jax(backend, name):
    f32 = _f32_classes(name).astype(np.float32)
    i32 = np.array([0, 1, -1, 7, 8, -8, -9, 15, 16, 17, 200, -200, 2**31 - 1, -(2**31)], np.int32)
    to_n = pyjax.jit(lambda f, i: (f.astype(name), f.astype(pjnp.float16).astype(name), i.astype(name)))
    got = to_n(f32, i32)
    if name in ON_JAX:  # float -> integer casts saturate (NaN -> 0), integer -> integer ones wrap
        want = jax.jit(lambda f, i: (f.astype(name), f.astype(jnp.float16).astype(name), i.astype(name)))(f32, i32)
    else:
        info = ml_dtypes.iinfo(name)
        sat = np.clip(np.trunc(np.nan_to_num(f32, posinf=info.max, neginf=info.min)), info.min, info.max)
        want = (sat, sat, _wrap(i32, name))
    for g, w in zip(got, want):
        assert g.dtype == name
        np.testing.assert_array_equal(np.asarray(g).astype(np.int64), np.asarray(w).astype(np.int64))
    x = pjnp.asarray(_all_values(name).astype(getattr(ml_dtypes, name)))
    outs = ("float32", "int32", "uint8", "bool", "bfloat16", "float4_e2m1fn", "float8_e4m3fn")
    got = pyjax.jit(lambda v: [v.astype(t) for t in outs])(x)
    vals = _all_values(name).astype(np.float32)
    for g, t in zip(got, outs):  # every value of these fits each target exactly, or rounds as a float32
        want = vals.astype(getattr(ml_dtypes, t, t))
        assert g.dtype == t
        np.testing.assert_array_equal(np.asarray(g).astype(np.float32), want.astype(np.float32), err_msg=t)


# op -> function of (module, x, y); every pair of values of the dtype runs through each
OPS = {
    "add": lambda m, x, y: x + y,
    "sub": lambda m, x, y: x - y,
    "mul": lambda m, x, y: x * y,
    "weak": lambda m, x, y: x * 3 + 5,
    "neg": lambda m, x, y: -x,
    "max": lambda m, x, y: m.maximum(x, y),
    "min": lambda m, x, y: m.minimum(x, y),
    "lt": lambda m, x, y: x < y,
    "eq": lambda m, x, y: x == y,
    "and": lambda m, x, y: x & y,
    "or": lambda m, x, y: x | y,
    "xor": lambda m, x, y: x ^ y,
    "invert": lambda m, x, y: ~x,
    "where": lambda m, x, y: m.where(x > y, x, y),
}
# the ones XLA runs only on int4/uint4 (or computes only there as numpy's integers would)
OPS_JAX = {
    "floordiv": lambda m, x, y: x // y,
    "mod": lambda m, x, y: x % y,
    "shl": lambda m, x, y: x << (y & 7),
    "sign": lambda m, x, y: m.sign(x),
    "square": lambda m, x, y: x**2,
    "clip": lambda m, x, y: m.clip(x, 1, 6),
    "dot": lambda m, x, y: x.reshape(-1, 16) @ y.reshape(-1, 16).T,
    "cumsum": lambda m, x, y: m.cumsum(x.reshape(-1, 16), axis=1),
    "sort": lambda m, x, y: m.sort(x * y),
    "max_reduce": lambda m, x, y: (x * y).reshape(-1, 16).max(axis=1),
    "clz": lambda m, x, y: (jax if m is jnp else pyjax).lax.clz(x),  # over the dtype's bits
}


@pytest.mark.parametrize("name", INTN)
def test_arithmetic_wraps_as_jax(backend, name):
    a, b = _pairs(name)
    t = getattr(ml_dtypes, name)
    ops = dict(OPS, **OPS_JAX) if name in ("int4", "uint4") else OPS
    got = pyjax.jit(lambda x, y: {k: f(pjnp, x, y) for k, f in ops.items()})(a.astype(t), b.astype(t))
    if name in ON_JAX:
        want = jax.jit(lambda x, y: {k: f(jnp, x, y) for k, f in ops.items()})(a.astype(t), b.astype(t))
    else:  # int64 arithmetic, wrapped
        raw = {k: np.asarray(f(np, a, b)) for k, f in ops.items()}
        want = {k: r if r.dtype == bool else _wrap(r, name).astype(t) for k, r in raw.items()}
    for k in ops:
        assert got[k].dtype == want[k].dtype, k
        np.testing.assert_array_equal(np.asarray(got[k]).astype(np.int64), np.asarray(want[k]).astype(np.int64), k)


@pytest.mark.parametrize("name", ["int4", "int2"])
def test_shift_right_logical_over_own_bits(backend, name):
    a, b = _pairs(name)
    t = getattr(ml_dtypes, name)
    x, y = a.astype(t), (b & (ml_dtypes.iinfo(name).bits - 1)).astype(t)
    got = pyjax.lax.shift_right_logical(pjnp.asarray(x), pjnp.asarray(y))
    want = jax.lax.shift_right_logical(jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(np.asarray(got).astype(np.int64), np.asarray(want).astype(np.int64))
