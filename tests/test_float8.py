"""8-bit floats (float8_e4m3fn, float8_e5m2) against JAX: casts of every float32 bit-pattern class,
arithmetic rounded once, promotion, finfo and numpy interop."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax.core import minifloat

F8 = list(minifloat.FORMATS)


def _f32_classes(name: str) -> np.ndarray:
    """float32 values of each class for format `name`: every value of the format, the ties
    between neighbours (and just beside them), overflow, subnormals, zeros, infinities, NaN."""
    vals = np.arange(256, dtype=np.uint8).view(getattr(ml_dtypes, name)).astype(np.float32)
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
    codes = np.arange(256, dtype=np.uint8)
    back = np.array([minifloat.decode(int(c), name) for c in codes], np.float32)
    np.testing.assert_array_equal(back, codes.view(getattr(ml_dtypes, name)).astype(np.float32))


@pytest.mark.parametrize("name", F8)
def test_casts_match_jax(backend, name):
    vals = _f32_classes(name)
    want = np.asarray(jnp.asarray(vals).astype(name).view(jnp.uint8))
    x = pjnp.asarray(vals)
    got8 = pyjax.jit(lambda v: v.astype(name))(x)
    np.testing.assert_array_equal(np.asarray(got8.view(pjnp.uint8)), want)
    # back to float32, and float16/int32 <-> float8 through jit
    f = pyjax.jit(lambda v: (v.astype(pjnp.float32), v.astype(pjnp.float16), v.astype(pjnp.int32)))
    j = jax.jit(lambda v: (v.astype(jnp.float32), v.astype(jnp.float16), v.astype(jnp.int32)))
    src = jnp.asarray(vals).astype(name)
    # XLA casts 8-bit infinities and NaNs to integers its own way (inf -> 0, fnuz NaN -> int max): finite only
    finite = np.isfinite(np.asarray(src.astype(jnp.float32)))
    for k, (g, w) in enumerate(zip(f(got8), j(src))):
        keep = finite if k == 2 else slice(None)
        np.testing.assert_array_equal(np.asarray(g)[keep], np.asarray(w)[keep])


@pytest.mark.parametrize("name", F8)
def test_arithmetic_rounds_once(backend, name):
    vals = _f32_classes(name)[:64]
    vals = vals[np.isfinite(vals)]
    a, b = vals, vals[::-1].copy()
    fn = lambda m: lambda x, y: (x * y + x, (x - y) / 3, m.sum(x * 0.5))  # noqa: E731
    ja, jb = jnp.asarray(a).astype(name), jnp.asarray(b).astype(name)
    want = jax.jit(fn(jnp))(ja, jb)
    got = pyjax.jit(fn(pjnp))(pjnp.asarray(np.asarray(ja)), pjnp.asarray(np.asarray(jb)))
    for g, w in zip(got[:2], want[:2]):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(np.asarray(g).view(np.uint8), np.asarray(w).view(np.uint8))
    assert got[2].dtype == want[2].dtype  # sums accumulate at another precision in XLA: dtype only


def test_promotion_table_matches_jax():
    others = ["bool", "int8", "uint8", "int32", "float16", "bfloat16", "float32"] + F8
    for a in F8:
        for b in others:
            try:
                want = jnp.promote_types(a, b).name
            except jax.dtypes.TypePromotionError:
                with pytest.raises(pyjax.dtypes.TypePromotionError):
                    pjnp.promote_types(a, b)
                with pytest.raises(pyjax.dtypes.TypePromotionError):
                    pjnp.promote_types(b, a)
                continue
            assert pjnp.promote_types(a, b).name == want == pjnp.promote_types(b, a).name
    x = pjnp.ones(2, pjnp.float8_e5m2)
    assert (x + 1.5).dtype == pjnp.float8_e5m2 and (x * 2).dtype == pjnp.float8_e5m2


@pytest.mark.parametrize("name", F8)
def test_finfo_and_numpy_interop(name):
    got, want = pjnp.finfo(name), jnp.finfo(name)
    for attr in ("bits", "nmant", "nexp", "eps", "tiny", "max", "min", "smallest_subnormal", "resolution"):
        assert float(getattr(got, attr)) == float(getattr(want, attr)), attr
    assert pjnp.dtype(getattr(ml_dtypes, name)) == getattr(pjnp, name) == getattr(pyjax.dtypes, name)
    a = np.array([0.1, -3.0, 12.0], getattr(ml_dtypes, name))
    x = pjnp.asarray(a)
    assert x.dtype == a.dtype and np.asarray(x).dtype == a.dtype
    np.testing.assert_array_equal(np.asarray(x).view(np.uint8), a.view(np.uint8))
    assert x.tolist() == a.astype(np.float32).tolist()
