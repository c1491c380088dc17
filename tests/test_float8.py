"""8-bit and smaller floats (float8_e4m3fn, float8_e5m2, float4_e2m1fn, float6_e3m2fn, float8_e8m0fnu, ...)
against JAX and ml_dtypes: casts of every float32 bit-pattern class, arithmetic rounded once, promotion,
finfo and numpy interop."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax.core import minifloat
from tests.jax_compare import assert_promotes_as_jax

F8 = list(minifloat.FORMATS)
# XLA's CPU backend cannot compile the 6-bit floats (it aborts the process): ml_dtypes is their oracle
ON_JAX = [name for name in F8 if not name.startswith("float6")]


def _jax_agrees(vals: np.ndarray, name: str) -> np.ndarray:
    """Where XLA's casts to `name` agree with ml_dtypes' (whose rules pyjax follows): XLA turns a negative NaN
    into -0 in the finite formats, and rounds float32 subnormals to e8m0 its own way."""
    rule = minifloat.FORMATS[name][3]
    if rule == "finite":
        return ~np.isnan(vals)
    if rule == "e8m0":
        return ~((vals > 0) & (vals < 2.0**-126))
    return np.ones(vals.shape, bool)


def _f32_classes(name: str) -> np.ndarray:
    """float32 values of each class for format `name`: every value of the format, the ties
    between neighbours (and just beside them), overflow, subnormals, zeros, infinities, NaN."""
    vals = np.arange(1 << minifloat.width(name), dtype=np.uint8).view(getattr(ml_dtypes, name)).astype(np.float32)
    vals = np.unique(vals[np.isfinite(vals)])
    ties = ((vals[:-1].astype(np.float64) + vals[1:]) / 2).astype(np.float32)
    near = np.concatenate([np.nextafter(ties, np.float32(np.inf)), np.nextafter(ties, np.float32(-np.inf))])
    big = np.float32([1e4, 6e4, 65504, 3e38, np.inf, -np.inf, np.nan, -np.nan, 1e-30, -1e-30, 0.0, -0.0])
    return np.concatenate([vals, ties, near, big, -big]).astype(np.float32)


@pytest.mark.parametrize("name", F8)
def test_codec_matches_ml_dtypes(name):
    vals = _f32_classes(name)
    want = vals.astype(getattr(ml_dtypes, name)).view(np.uint8)
    got = np.array([minifloat.encode(float(v), name) for v in vals], np.uint8)
    np.testing.assert_array_equal(got, want)
    codes = np.arange(1 << minifloat.width(name), dtype=np.uint8)
    back = np.array([minifloat.decode(int(c), name) for c in codes], np.float32)
    np.testing.assert_array_equal(back, codes.view(getattr(ml_dtypes, name)).astype(np.float32))


@pytest.mark.parametrize("name", F8)
def test_casts_match_jax(backend, name):
    vals = _f32_classes(name)
    t = getattr(ml_dtypes, name)
    got8 = pyjax.jit(lambda v: v.astype(name))(pjnp.asarray(vals))
    codes = np.asarray(got8).view(np.uint8)
    np.testing.assert_array_equal(codes, vals.astype(t).view(np.uint8))
    # back to float32, and float16/int32 <-> the format through jit
    f = pyjax.jit(lambda v: (v.astype(pjnp.float32), v.astype(pjnp.float16), v.astype(pjnp.int32)))
    src = vals.astype(t)
    # XLA casts 8-bit infinities and NaNs to integers its own way (inf -> 0, fnuz NaN -> int max), and the
    # 4-bit floats' largest values as infinities (+-6 -> int32 max/min): the others only
    finite = np.isfinite(src.astype(np.float32))
    if minifloat.FORMATS[name][3] == "finite":
        finite &= np.abs(src.astype(np.float32)) != minifloat.largest(name)
    if name in ON_JAX:
        keep = _jax_agrees(vals, name)
        want8 = np.asarray(jax.jit(lambda v: v.astype(name))(vals)).view(np.uint8)
        np.testing.assert_array_equal(codes[keep], want8[keep])
        want = jax.jit(lambda v: (v.astype(jnp.float32), v.astype(jnp.float16), v.astype(jnp.int32)))(src)
    else:
        f32 = src.astype(np.float32)
        want = (f32, f32.astype(np.float16), np.trunc(np.where(finite, f32, 0)).astype(np.int32))
    for k, (g, w) in enumerate(zip(f(got8), want)):
        keep = finite if k == 2 else slice(None)
        np.testing.assert_array_equal(np.asarray(g)[keep], np.asarray(w)[keep])


@pytest.mark.parametrize("name", F8)
def test_arithmetic_rounds_once(backend, name):
    vals = _f32_classes(name)[:64]
    vals = vals[np.isfinite(vals)]
    a, b = vals, vals[::-1].copy()
    t = getattr(ml_dtypes, name)
    fn = lambda m: lambda x, y: (x * y + x, (x - y) / 3, m.sum(x * 0.5))  # noqa: E731
    got = pyjax.jit(fn(pjnp))(pjnp.asarray(a.astype(t)), pjnp.asarray(b.astype(t)))
    if name in ON_JAX:
        want = jax.jit(fn(jnp))(jnp.asarray(a.astype(t)), jnp.asarray(b.astype(t)))
        assert got[2].dtype == want[2].dtype  # sums accumulate at another precision in XLA: dtype only
    else:  # each op computed in float32 and rounded to the format, as XLA does for the others

        def r(v):
            return np.asarray(v, np.float32).astype(t)

        x, y = (r(v).astype(np.float32) for v in (a, b))
        want = (r(r(x * y).astype(np.float32) + x), r(r(x - y).astype(np.float32) / np.float32(3)))
    for g, w in zip(got[:2], want[:2]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g).view(np.uint8), np.asarray(w).view(np.uint8))


def test_promotion_table_matches_jax():
    others = ["bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32"] + F8
    for a in F8:
        for b in others:
            assert_promotes_as_jax(a, b)
    x = pjnp.ones(2, pjnp.float8_e5m2)
    assert (x + 1.5).dtype == pjnp.float8_e5m2 and (x * 2).dtype == pjnp.float8_e5m2


@pytest.mark.parametrize("name", F8)
def test_finfo_and_numpy_interop(name):
    got, want = pjnp.finfo(name), jnp.finfo(name)
    for attr in ("bits", "nmant", "nexp", "eps", "tiny", "max", "min", "smallest_subnormal", "resolution"):
        assert float(getattr(got, attr)) == float(getattr(want, attr)), attr
    assert pjnp.dtype(getattr(ml_dtypes, name)) == getattr(pjnp, name) == pjnp.dtype(name)
    assert pyjax.dtypes.itemsize_bits(name) == jax.dtypes.itemsize_bits(name) and pjnp.dtype(name).itemsize == 1
    a = np.array([0.1, 3.0, -3.0, 12.0], getattr(ml_dtypes, name))
    x = pjnp.asarray(a)
    assert x.dtype == a.dtype and np.asarray(x).dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(x).view(np.uint8), a.view(np.uint8))
    np.testing.assert_array_equal(x.tolist(), a.astype(np.float32).tolist())
    if name in ON_JAX:
        assert repr(x) == repr(jnp.asarray(a)) and str(x) == str(jnp.asarray(a))


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e8m0fnu", "bfloat16"])
def test_random_matches_jax(backend, name):
    # uniform's bits land in the format through a uint8 bitcast; normal's constants are rounded to it
    for fn in ("uniform", "normal"):
        got = getattr(pyjax.random, fn)(pyjax.random.key(1), (64,), name)
        want = getattr(jax.random, fn)(jax.random.key(1), (64,), name)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got).astype(np.float32), np.asarray(want).astype(np.float32))
    assert repr(pjnp.dtype(name)) == repr(jnp.dtype(name))
    with pytest.raises(TypeError, match="uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot float4_e2m1fn"):
        pyjax.random.uniform(pyjax.random.key(1), (2,), pjnp.float4_e2m1fn)
