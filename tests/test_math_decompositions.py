"""Elementwise math written once (pyjax/compiler/mathlib/): accuracy sweeps on every backend.

Each float32 function is run jitted over random bit patterns (every exponent), a dense range
and special values, against numpy in float64: relative error within the 2e-6 contract where
the result is normal, within the smallest normal where it is subnormal or zero (flushing is
allowed, as XLA flushes), the same signed zero where both are zero, the same inf/NaN.
"""

import math

import numpy as np
import pytest
import scipy.special as scipy_special

import pyjax
import pyjax.numpy as jnp
from pyjax.compiler import ir, mathlib
from pyjax.core import dtypes
from pyjax.scipy import special

F32_TOL = 2e-6
TINY = np.finfo(np.float32).tiny

REFERENCE = {
    "exp": (jnp.exp, np.exp),
    "exp2": (jnp.exp2, np.exp2),
    "expm1": (jnp.expm1, np.expm1),
    "log": (jnp.log, np.log),
    "log2": (jnp.log2, np.log2),
    "log1p": (jnp.log1p, np.log1p),
    "tanh": (jnp.tanh, np.tanh),
    # as JAX: 1 / (1 + exp(-x)), so 0 once exp(-x) overflows float32
    "logistic": (pyjax.nn.sigmoid, lambda x: np.where(x < -88.73, 0.0, np.exp(-np.logaddexp(0.0, -x)))),
    "sinh": (jnp.sinh, np.sinh),
    "cosh": (jnp.cosh, np.cosh),
    "asinh": (jnp.arcsinh, np.arcsinh),
    "acosh": (jnp.arccosh, np.arccosh),
    "atanh": (jnp.arctanh, np.arctanh),
    "erf": (special.erf, np.frompyfunc(math.erf, 1, 1)),
    "erfc": (special.erfc, np.frompyfunc(math.erfc, 1, 1)),
    # as JAX: erf_inv(-0) = -0, lgamma(-inf) = inf, digamma(0) = NaN
    "erf_inv": (special.erfinv, lambda x: np.where(x == 0, x, scipy_special.erfinv(x))),
    "lgamma": (special.gammaln, lambda x: np.where(x == -np.inf, np.inf, scipy_special.gammaln(x))),
    "digamma": (special.digamma, lambda x: np.where(x == 0, np.nan, scipy_special.digamma(x))),
    "sin": (jnp.sin, np.sin),
    "cos": (jnp.cos, np.cos),
    "tan": (jnp.tan, np.tan),
    "asin": (jnp.arcsin, np.arcsin),
    "acos": (jnp.arccos, np.arccos),
    "atan": (jnp.arctan, np.arctan),
    "cbrt": (jnp.cbrt, np.cbrt),
    # binary: each value against the sweep reversed (dense pairs, specials against specials)
    "atan2": (lambda x: jnp.arctan2(x, x[::-1]), lambda x: np.arctan2(x, x[::-1])),
    "pow": (lambda x: jnp.power(x, x[::-1]), lambda x: np.power(x, x[::-1])),
}
# Reflection (x < 0) subtracts terms of size log|x|: there the error is judged against their size
# too (as JAX, absolute near the zeros of lgamma and the roots of digamma)
CANCELS = {"lgamma", "digamma"}
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 9.0, 9.1, 22.0, 88.7, 89.0, -87.5, -103.0, -104.0, -150.0]
SPECIAL += [1e-45, -1e-45, 1.17e-38, 1e-30, 3e38, -3e38, np.inf, -np.inf, np.nan, 0.2928, -0.2928, 268435456.0, 3e8]
SPECIAL += [4096.0, 4097.0, -1e20, 0.41421356, 3.0, -3.0, 2.5, -2.5]  # trig's reduction switch, atan's, odd powers
# Bit patterns of the f32 values closest to multiples of pi/2 (found by scanning every
# mantissa of every binade from 0.5 to 2^128 with exact integer arithmetic).
TRIG_WORST = [
    0x6F79BE45, 0x50A3E87F, 0x6FF9BE45, 0x5123E87F, 0x437CE5F1, 0x7079BE45, 0x6A1976F1,
    0x53B146A6, 0x65898498, 0x51A3E87F, 0x43FCE5F1, 0x77584625, 0x4C2332E9, 0x4096CBE4,
    0x6C55DA58, 0x70F9BE45, 0x6A9976F1, 0x5C07BCD0, 0x543146A6, 0x66098498, 0x5223E87F,
    0x474D246F, 0x723FA09A, 0x447CE5F1, 0x4A2562AE, 0x77D84625, 0x642E0733, 0x664E46E4,
    0x4E13D4A5, 0x7EBDCDA0, 0x4CA332E9, 0x4116CBE4, 0x6CD5DA58, 0x7179BE45, 0x6B1976F1,
    0x5C87BCD0, 0x54B146A6, 0x66898498, 0x5FE4112C, 0x52A3E87F,
]  # fmt: skip
SPECIAL += list(np.array(TRIG_WORST, np.uint32).view(np.float32) * np.float32(-1)) + list(
    np.array(TRIG_WORST, np.uint32).view(np.float32)
)


def test_table_covers_reference():
    assert set(REFERENCE) == set(mathlib.DECOMPOSITIONS)


def _sweep() -> np.ndarray:
    rng = np.random.RandomState(0)
    x = rng.randint(0, 2**32, 60000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = rng.uniform(-12, 12, 20000).astype(np.float32)
    small = (rng.uniform(-1, 1, 5000) * 1e-3).astype(np.float32)
    return np.concatenate([x[np.isfinite(x)], dense, small, np.array(SPECIAL, np.float32)])


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_float32_accuracy(backend, name):
    ours, ref = REFERENCE[name]
    x = _sweep()
    got = np.asarray(pyjax.jit(ours)(jnp.asarray(x)))
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float64)
        want32 = want.astype(np.float32)
    # a subnormal input may be read as zero (GPUs, and XLA's CPU flags, flush them: jnp.log of
    # -1e-40 is -inf in JAX)
    flushable = (np.abs(x) < TINY) & (x != 0)
    if name in ("atan2", "pow"):  # the second operand is x reversed
        flushable |= (np.abs(x[::-1]) < TINY) & (x[::-1] != 0)
    normal = np.isfinite(want32) & (np.abs(want) >= TINY) & ~flushable
    scale = np.abs(want) + (
        np.where(x < 0, np.log(2.0 + np.abs(x.astype(np.float64))), 0.0) if name in CANCELS else 0.0
    )
    rel = np.abs(got[normal] - want[normal]) / scale[normal]
    assert rel.max() <= F32_TOL, (name, x[normal][rel.argmax()], rel.max())
    tiny = np.isfinite(want32) & (np.abs(want) < TINY)  # subnormal or zero: flushing allowed, as XLA
    assert np.all(np.abs(got[tiny] - want[tiny]) <= TINY), (name, x[tiny][np.abs(got[tiny] - want[tiny]).argmax()])
    zero = tiny & (want32 == 0) & (got == 0)
    assert np.array_equal(np.signbit(got[zero]), np.signbit(want32[zero])), name
    special = ~np.isfinite(want32) & ~flushable
    same = (got[special] == want32[special]) | (np.isnan(got[special]) & np.isnan(want32[special]))
    assert same.all(), (name, x[special][~same][:5], got[special][~same][:5])


@pytest.mark.parametrize("name", ["exp", "log1p", "tanh", "asinh"])
def test_float16_computed_in_float32(backend, name):
    ours, ref = REFERENCE[name]
    x = np.linspace(-3, 3, 601).astype(np.float16)
    got = np.asarray(pyjax.jit(ours)(jnp.asarray(x)))
    assert got.dtype == np.float16
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(np.float16)
    ok = np.isfinite(want)
    np.testing.assert_allclose(got[ok].astype(np.float64), want[ok].astype(np.float64), rtol=1e-3, atol=0)
    assert np.array_equal(np.isnan(got), np.isnan(want))


def test_two_over_pi_and_cody_waite_constants():
    """The Payne-Hanek words are 2/pi (Machin's formula in integer arithmetic), the Cody-Waite
    parts sum to pi/2."""
    from pyjax.compiler.mathlib import trigonometric as trig

    nbits = 32 * len(trig.TWO_OVER_PI_WORDS)
    one = 1 << (nbits + 64)

    def arctan_inv(k):  # arctan(1/k) * one
        total, term, n, sign = 0, one // k, 1, 1
        while term:
            total, term, n, sign = total + sign * (term // n), term // (k * k), n + 2, -sign
        return total

    table = 0
    for w in trig.TWO_OVER_PI_WORDS:
        table = (table << 32) | w
    assert table == (2 * one << nbits) // (16 * arctan_inv(5) - 4 * arctan_inv(239))
    assert sum(trig.CW) == pytest.approx(math.pi / 2, rel=1e-16)
    # float64: the 24-bit digits of 2/pi (their first 256 bits are the words above), pi/2's parts
    digits = 0
    for d in trig.F24[: nbits // 24]:
        digits = (digits << 24) | int(d)
    assert digits == table >> (nbits - 24 * (nbits // 24))
    assert sum(trig.CW64) == math.pi / 2 and all(math.frexp(c)[0] * 2**33 % 1 == 0 for c in trig.CW64[:3])


def test_pow_hard_cases(backend):
    """pow where it is hardest: results near overflow and underflow, x within 2000 ulps of 1
    with huge |y| (log2 x must be carried in extra precision), negative bases."""
    rng = np.random.default_rng(11)
    n = 50000
    x1 = np.exp(rng.uniform(-87, 88, n)).astype(np.float32)  # normal bases: a GPU may flush others
    y1 = (rng.uniform(-1, 1, n) * 90 / np.maximum(np.abs(np.log(x1.astype(np.float64))), 1e-30)).astype(np.float32)
    x2 = (1 + rng.integers(-2000, 2000, n) * 2.0**-23).astype(np.float32)
    y2 = (rng.uniform(-1, 1, n) * 85 / np.maximum(np.abs(np.log(x2.astype(np.float64))), 1e-30)).astype(np.float32)
    x3 = -np.exp(rng.uniform(-10, 10, n)).astype(np.float32)
    y3 = np.round(rng.uniform(-30, 30, n)).astype(np.float32)
    x, y = np.concatenate([x1, x2, x3]), np.concatenate([y1, y2, y3])
    got = np.asarray(pyjax.jit(jnp.power)(jnp.asarray(x), jnp.asarray(y))).astype(np.float64)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64))
    normal = (np.abs(want) >= TINY) & (np.abs(want) < np.finfo(np.float32).max)
    rel = np.abs(got[normal] - want[normal]) / np.abs(want[normal])
    assert rel.max() <= F32_TOL, (x[normal][rel.argmax()], y[normal][rel.argmax()], rel.max())
    assert np.all(np.abs(got[~normal & (np.abs(want) < 1)] - want[~normal & (np.abs(want) < 1)]) <= TINY)


def test_pow_exact_results(backend):
    """pow whose result is representable comes out exactly, as JAX's: the extra precision must
    survive the backend's compiler (webgpu once rendered 10 ** 2 as 99.99999: logspace to int 99)."""
    b = np.array([10, 10, 10, 3, 2, 7, 5, 9, 0.5, 1.5, 6, 11], np.float32)
    e = np.array([2, 3, 7, 4, 10, 2, 3, 0.5, -3, 2, 5, 4], np.float32)
    got = np.asarray(pyjax.jit(jnp.power)(jnp.asarray(b), jnp.asarray(e)))
    np.testing.assert_array_equal(got, np.power(b.astype(np.float64), e).astype(np.float32))


def test_binary_special_values_match_jax(backend):
    """pow and atan2 over every pair of special values, against JAX (C99's cases: signed zeros,
    infinities, NaN, negative bases with integer and non-integer exponents)."""
    import jax.numpy as jjnp

    s = np.array(
        [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5, -2.5, np.inf, -np.inf, np.nan], np.float32
    )
    a, b = (v.ravel() for v in np.meshgrid(s, s))
    for ours, theirs in ((jnp.power, jjnp.power), (jnp.arctan2, jjnp.arctan2)):
        got = np.asarray(pyjax.jit(ours)(jnp.asarray(a), jnp.asarray(b)))
        want = np.asarray(theirs(a, b))
        np.testing.assert_allclose(got, want, rtol=F32_TOL, atol=0)
        ok = ~np.isnan(want)
        assert np.array_equal(np.signbit(got[ok]), np.signbit(want[ok])), ours


def test_cumulative_logsumexp_step_matches_jax(backend):
    """The cumulative logsumexp routines' step (mathlib.logaddexp, rendered by wasm in float64 and
    by webgpu in float32) over pairs of special and ordinary values, against JAX."""
    import jax

    s = np.array([0.0, -0.0, 1.0, -1.0, 3.5, 30.0, -100.0, 88.5, np.inf, -np.inf, np.nan], np.float32)
    x = np.stack([v.ravel() for v in np.meshgrid(s, s)], axis=1)
    got = np.asarray(pyjax.lax.cumlogsumexp(jnp.asarray(x), axis=1))
    want = np.asarray(jax.lax.cumlogsumexp(x, axis=1))
    np.testing.assert_allclose(got, want, rtol=F32_TOL, atol=TINY)  # XLA flushes log1p(e^-100) to 0


@pytest.mark.parametrize("dtype", [dtypes.float32, dtypes.float64], ids=["f32", "f64"])
def test_expansion_leaves_core_ops_only(dtype):
    x = ir.node("gather", dtype, (ir.const(0, dtypes.int32),), 0)
    for name in mathlib.DECOMPOSITIONS:
        root = ir.alu(name, *[x] * (2 if name in ir.BINARY_OPS else 1))
        for native in (frozenset(), frozenset(("madd",))):
            nodes = list(ir.walk(mathlib.expand(root, native)))
            ops = {n.op for n in nodes}
            assert not ops & set(mathlib.DECOMPOSITIONS), (name, ops)
            assert ("madd" in ops) == ("madd" in native), name
            assert {n.dtype for n in nodes if n.dtype.kind == "f"} == {dtype}, name
    # a native op stays
    assert mathlib.expand(ir.alu("exp", x), frozenset(("exp",))).op == "exp"
