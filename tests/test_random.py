"""pyjax.random against real JAX: bit-exact keys, bits, uniform, randint, bernoulli, permutation,
choice and categorical; transcendental samplers (normal, gumbel, ...) to within a few ulp; under
jit and vmap over keys; errors as JAX raises them."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
import pyjax.random as prandom


def _np(x):
    return np.asarray(x)


def assert_exact(p, j):
    p, j = _np(p), _np(j)
    assert p.shape == j.shape, (p.shape, j.shape)
    assert p.dtype == j.dtype, (p.dtype, j.dtype)
    if p.dtype.kind == "f":
        np.testing.assert_array_equal(p.view(f"u{p.dtype.itemsize}"), j.view(f"u{j.dtype.itemsize}"))
    else:
        np.testing.assert_array_equal(p, j)


def assert_ulp(p, j, max_ulp=4, min_exact=0.5, atol=2e-6):
    """Equal to within max_ulp ulps (or atol near zero, where log(-log u) cancels), and for
    large samples mostly bit-identical."""
    p, j = _np(p), _np(j)
    assert p.shape == j.shape and p.dtype == j.dtype, (p.shape, p.dtype, j.shape, j.dtype)
    p64, j64 = p.astype(np.float64), j.astype(np.float64)
    both_inf = np.isinf(p64) & np.isinf(j64) & (np.sign(p64) == np.sign(j64))
    diff = np.where(both_inf, 0, np.abs(p64 - j64))
    spacing = np.spacing(np.abs(j).astype(p.dtype)).astype(np.float64)
    bad = (diff > max_ulp * spacing) & (diff > atol)
    assert not bad.any(), (p[bad][:5], j[bad][:5])
    if p.size >= 100:
        assert np.mean(p == j) >= min_exact


def keys(seed=0):
    return prandom.PRNGKey(seed), jax.random.PRNGKey(seed)


# --- keys -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 42, -1, -12345, 2**31 - 1, 2**32 + 5, 2**40 + 3, -(2**40)])
def test_prng_key_python_int(backend, seed):
    assert_exact(prandom.PRNGKey(seed), jax.random.PRNGKey(seed))
    assert_exact(prandom.key_data(prandom.key(seed)), jax.random.key_data(jax.random.key(seed)))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "uint8", "uint16", "uint32"])
def test_prng_key_numpy_seed(backend, dtype):
    info = np.iinfo(dtype)
    for v in (0, 7, info.max, info.min):
        s = np.array(v, dtype)
        assert_exact(prandom.PRNGKey(s), jax.random.PRNGKey(s))
        assert_exact(prandom.PRNGKey(pjnp.asarray(s)), jax.random.PRNGKey(jnp.asarray(s)))


def test_prng_key_under_jit_and_vmap(backend):
    seeds = np.array([0, 3, -7, 2**31 - 1], np.int32)
    assert_exact(pyjax.jit(prandom.PRNGKey)(pjnp.asarray(seeds[1])), jax.jit(jax.random.PRNGKey)(seeds[1]))
    assert_exact(pyjax.vmap(prandom.PRNGKey)(pjnp.asarray(seeds)), jax.vmap(jax.random.PRNGKey)(seeds))


def test_prng_key_errors(backend):
    with pytest.raises(TypeError, match="must be an integer"):
        prandom.PRNGKey(1.5)
    with pytest.raises(TypeError, match="scalar seed"):
        prandom.PRNGKey(np.arange(3))
    with pytest.raises(OverflowError):
        prandom.PRNGKey(2**64 + 7)
    with pytest.raises(TypeError, match="must be an integer"):
        prandom.PRNGKey(pjnp.asarray(1.0))
    with pytest.raises(TypeError):  # JAX: 'float' object cannot be interpreted as an integer
        prandom.split(prandom.key(0), 2.5)


def test_key_data_and_wrap(backend):
    pk, jk = keys(5)
    assert_exact(prandom.key_data(pk), jax.random.key_data(jk))
    assert_exact(
        prandom.key_data(prandom.wrap_key_data(prandom.key_data(pk))),
        jax.random.key_data(jax.random.wrap_key_data(jk)),
    )
    assert prandom.key_impl(pk) == "threefry2x32"


def test_invalid_keys(backend):
    with pytest.raises(TypeError, match="dtype = uint32"):
        prandom.uniform(pjnp.zeros((2,), pjnp.int32))
    with pytest.raises(TypeError, match=r"end with \(2,\)"):
        prandom.uniform(pjnp.zeros((3,), pjnp.uint32))
    with pytest.raises(ValueError, match="accepts a single key"):
        prandom.uniform(pjnp.zeros((3, 2), pjnp.uint32))
    with pytest.raises(ValueError, match="accepts a single key"):
        prandom.split(prandom.split(prandom.PRNGKey(0)))


@pytest.mark.parametrize("num", [2, 1, 5, 0, (2, 3), (4, 1, 2)])
def test_split(backend, num):
    for seed in (0, 7, -3):
        pk, jk = keys(seed)
        assert_exact(prandom.split(pk, num), jax.random.split(jk, num))


def test_split_default_and_chain(backend):
    pk, jk = keys(11)
    for _ in range(4):
        pk, psub = prandom.split(pk)
        jk, jsub = jax.random.split(jk)
        assert_exact(psub, jsub)
    assert_exact(pk, jk)


@pytest.mark.parametrize("data", [0, 1, 3, 2**31 - 1, 2**32 - 1])
def test_fold_in(backend, data):
    pk, jk = keys(3)
    assert_exact(prandom.fold_in(pk, data), jax.random.fold_in(jk, data))


def test_fold_in_arrays_and_errors(backend):
    pk, jk = keys(3)
    for d in (np.int32(-1), np.uint32(7), np.int16(-5)):
        assert_exact(prandom.fold_in(pk, pjnp.asarray(d)), jax.random.fold_in(jk, jnp.asarray(d)))
    with pytest.raises(TypeError, match="fold_in accepts a scalar"):
        prandom.fold_in(pk, np.ones(2, np.int32))
    with pytest.raises(OverflowError):
        prandom.fold_in(pk, -1)
    ds = np.array([0, 5, 9], np.int32)
    assert_exact(
        pyjax.vmap(prandom.fold_in, in_axes=(None, 0))(pk, pjnp.asarray(ds)),
        jax.vmap(jax.random.fold_in, in_axes=(None, 0))(jk, ds),
    )


# --- bits, uniform ------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (2, 3, 4), (0,), (4, 0)])
@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32"])
def test_bits(backend, shape, dtype):
    pk, jk = keys(1)
    assert_exact(prandom.bits(pk, shape, getattr(pjnp, dtype)), jax.random.bits(jk, shape, getattr(jnp, dtype)))


def test_bits_default_and_errors(backend):
    pk, jk = keys(1)
    assert_exact(prandom.bits(pk, (4,)), jax.random.bits(jk, (4,)))
    with pytest.raises(ValueError, match="unsigned int dtype"):
        prandom.bits(pk, (2,), pjnp.int32)


@pytest.mark.parametrize("shape", [(), (1,), (5,), (3, 4), (2, 3, 5), 6, (0, 3)])
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_uniform_default_range(backend, shape, dtype):
    pk, jk = keys(2)
    assert_exact(prandom.uniform(pk, shape, getattr(pjnp, dtype)), jax.random.uniform(jk, shape, getattr(jnp, dtype)))


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (-3.7, 5.3), (2.0, 2.5), (-1e4, 1e-3), (0.1, 0.10001)])
def test_uniform_bounds(backend, dtype, bounds):
    lo, hi = bounds
    for seed in (0, 9):
        pk, jk = keys(seed)
        p = prandom.uniform(pk, (500,), getattr(pjnp, dtype), lo, hi)
        j = jax.random.uniform(jk, (500,), getattr(jnp, dtype), lo, hi)
        if dtype == "float16":
            j = _uniform_f16_as_jax_fuses(jk, j, lo, hi)
        assert_exact(p, j)


def _uniform_f16_as_jax_fuses(jk, j, lo, hi):
    """JAX's float16 `u * (hi - lo) + lo` depends on the CPU: XLA evaluates it with one rounding
    (float32 fma, as pyjax does everywhere) where the CPU has native half-precision arithmetic,
    but rounds the product to float16 first elsewhere (no AVX-512 here, 2026-12-03). Check that
    JAX's result is one of the two, from the same random bits, and return the fused one."""
    bits = np.asarray(jax.random.bits(jk, (500,), jnp.uint16))
    u = ((bits >> 6) | 0x3C00).view(np.float16) - np.float16(1)
    span = np.float16(hi) - np.float16(lo)
    fused = (u.astype(np.float32) * np.float32(span) + np.float32(np.float16(lo))).astype(np.float16)
    per_op = u * span + np.float16(lo)
    fused, per_op = np.maximum(fused, np.float16(lo)), np.maximum(per_op, np.float16(lo))
    jn = np.asarray(j)
    assert np.array_equal(jn.view(np.uint16), fused.view(np.uint16)) or np.array_equal(
        jn.view(np.uint16), per_op.view(np.uint16)
    ), "JAX's float16 uniform is neither fused nor rounded per operation"
    return fused


def test_uniform_array_bounds(backend):
    pk, jk = keys(4)
    lo = np.array([[-1.0], [0.5], [3.0]], np.float32)
    hi = np.array([2.0, 4.0, 7.5, 9.0], np.float32)
    assert_exact(
        prandom.uniform(pk, (3, 4), minval=pjnp.asarray(lo), maxval=pjnp.asarray(hi)),
        jax.random.uniform(jk, (3, 4), minval=lo, maxval=hi),
    )
    with pytest.raises(TypeError):
        prandom.uniform(pk, (2,), minval=pjnp.zeros(3))
    with pytest.raises(ValueError, match="float dtype"):
        prandom.uniform(pk, (2,), pjnp.int32)


def test_uniform_grad_wrt_bounds(backend):
    pk, jk = keys(4)
    gp = pyjax.grad(lambda a, b: pjnp.sum(prandom.uniform(pk, (6,), minval=a, maxval=b) ** 2), argnums=(0, 1))
    gj = jax.grad(lambda a, b: jnp.sum(jax.random.uniform(jk, (6,), minval=a, maxval=b) ** 2), argnums=(0, 1))
    for a, b in zip(gp(-1.5, 2.5), gj(-1.5, 2.5)):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5)


def test_uniform_jit_and_vmap_over_keys(backend):
    pk, jk = keys(6)
    pks, jks = prandom.split(pk, 5), jax.random.split(jk, 5)
    assert_exact(
        pyjax.vmap(lambda k: prandom.uniform(k, (3, 2), minval=-2.0, maxval=3.0))(pks),
        jax.vmap(lambda k: jax.random.uniform(k, (3, 2), minval=-2.0, maxval=3.0))(jks),
    )
    assert_exact(
        pyjax.jit(lambda k: prandom.uniform(k, (7,), minval=-2.0, maxval=3.0))(pk),
        jax.jit(lambda k: jax.random.uniform(k, (7,), minval=-2.0, maxval=3.0))(jk),
    )
    assert_exact(
        pyjax.jit(pyjax.vmap(lambda k: prandom.bits(k, (4,))))(pks),
        jax.jit(jax.vmap(lambda k: jax.random.bits(k, (4,))))(jks),
    )
    assert_exact(pyjax.vmap(prandom.split)(pks), jax.vmap(jax.random.split)(jks))
    # vmap over a batch of keys inside jit with split inside
    f_p = pyjax.jit(pyjax.vmap(lambda k: prandom.uniform(prandom.split(k)[1], (2,))))
    f_j = jax.jit(jax.vmap(lambda k: jax.random.uniform(jax.random.split(k)[1], (2,))))
    assert_exact(f_p(pks), f_j(jks))


# --- integers and booleans ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype,lo,hi",
    [
        ("int32", 0, 10),
        ("int32", -5, 5),
        ("int32", -(2**31), 2**31 - 1),
        ("int32", 3, 3),
        ("int32", 7, 2),
        ("int32", 0, 2**31 - 1),
        ("int8", -100, 200),
        ("int8", -128, 127),
        ("int16", -1000, 1000),
        ("uint8", 0, 256),
        ("uint8", 5, 17),
        ("uint32", 0, 2**31 - 1),
    ],
)
def test_randint(backend, dtype, lo, hi):
    for seed in (0, 1):
        pk, jk = keys(seed)
        p = prandom.randint(pk, (300,), lo, hi, getattr(pjnp, dtype))
        j = jax.random.randint(jk, (300,), lo, hi, getattr(jnp, dtype))
        assert_exact(p, j)


def test_randint_arrays_jit_vmap(backend):
    pk, jk = keys(8)
    lo = np.array([0, -3, 10], np.int32)
    hi = np.array([[5], [100]], np.int32)
    assert_exact(
        prandom.randint(pk, (2, 3), pjnp.asarray(lo), pjnp.asarray(hi)), jax.random.randint(jk, (2, 3), lo, hi)
    )
    assert_exact(prandom.randint(pk, (), 0, 5), jax.random.randint(jk, (), 0, 5))
    pks, jks = prandom.split(pk, 3), jax.random.split(jk, 3)
    assert_exact(
        pyjax.jit(pyjax.vmap(lambda k: prandom.randint(k, (4,), -9, 9)))(pks),
        jax.jit(jax.vmap(lambda k: jax.random.randint(k, (4,), -9, 9)))(jks),
    )
    with pytest.raises(TypeError, match="integer dtypes"):
        prandom.randint(pk, (2,), 0, 3, pjnp.float32)


@pytest.mark.parametrize("mode", ["low", "high"])
def test_bernoulli(backend, mode):
    pk, jk = keys(12)
    assert_exact(prandom.bernoulli(pk, 0.3, (200,), mode=mode), jax.random.bernoulli(jk, 0.3, (200,), mode=mode))
    p = np.linspace(0.0, 1.0, 12).astype(np.float32).reshape(3, 4)
    assert_exact(prandom.bernoulli(pk, pjnp.asarray(p), mode=mode), jax.random.bernoulli(jk, p, mode=mode))
    assert_exact(
        prandom.bernoulli(pk, pjnp.asarray(p), (5, 3, 4), mode=mode), jax.random.bernoulli(jk, p, (5, 3, 4), mode=mode)
    )
    assert_exact(prandom.bernoulli(pk), jax.random.bernoulli(jk))


def test_bernoulli_errors(backend):
    pk, _ = keys(0)
    with pytest.raises(TypeError, match="floating dtype"):
        prandom.bernoulli(pk, 1)
    with pytest.raises(ValueError, match="mode"):
        prandom.bernoulli(pk, 0.5, mode="mid")


@pytest.mark.parametrize("dtype", ["int32", "float32", "int8"])
def test_rademacher(backend, dtype):
    pk, jk = keys(13)
    assert_exact(
        prandom.rademacher(pk, (50,), getattr(pjnp, dtype)), jax.random.rademacher(jk, (50,), getattr(jnp, dtype))
    )


# --- permutations and choices -------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 5, 31, 100, 1000])
def test_permutation_int(backend, n):
    pk, jk = keys(21)
    assert_exact(prandom.permutation(pk, n), jax.random.permutation(jk, n))


def test_permutation_arrays(backend):
    pk, jk = keys(22)
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    px = pjnp.asarray(x)
    assert_exact(prandom.permutation(pk, px[0]), jax.random.permutation(jk, x[0]))
    assert_exact(prandom.permutation(pk, px, axis=1, independent=True), jax.random.permutation(jk, x, 1, True))
    assert_exact(prandom.permutation(pk, px, axis=0, independent=True), jax.random.permutation(jk, x, 0, True))
    if hasattr(pjnp, "take"):
        assert_exact(prandom.permutation(pk, px), jax.random.permutation(jk, x))
        assert_exact(prandom.permutation(pk, px, axis=1), jax.random.permutation(jk, x, axis=1))
    with pytest.raises(TypeError, match="integer or at least 1-dimensional"):
        prandom.permutation(pk, 2.0)


def test_permutation_vmap(backend):
    pk, jk = keys(23)
    pks, jks = prandom.split(pk, 4), jax.random.split(jk, 4)
    assert_exact(
        pyjax.vmap(lambda k: prandom.permutation(k, 10))(pks), jax.vmap(lambda k: jax.random.permutation(k, 10))(jks)
    )


@pytest.mark.parametrize("replace", [True, False])
def test_choice(backend, replace):
    pk, jk = keys(31)
    assert_exact(prandom.choice(pk, 10, (5,), replace=replace), jax.random.choice(jk, 10, (5,), replace=replace))
    assert_exact(prandom.choice(pk, 10, (2, 3), replace=replace), jax.random.choice(jk, 10, (2, 3), replace=replace))
    if hasattr(pjnp, "take"):
        a = np.arange(12.0, dtype=np.float32).reshape(3, 4) * 1.5
        pa = pjnp.asarray(a)
        assert_exact(prandom.choice(pk, pa, (2,), replace=replace), jax.random.choice(jk, a, (2,), replace=replace))
        assert_exact(
            prandom.choice(pk, pa, (3,), replace=replace, axis=1),
            jax.random.choice(jk, a, (3,), replace=replace, axis=1),
        )


@pytest.mark.parametrize("replace", [True, False])
def test_choice_with_p(backend, replace):
    pk, jk = keys(32)
    p = np.array([0.1, 0.0, 0.4, 0.2, 0.3], np.float32)
    assert_exact(
        prandom.choice(pk, 5, (3,), replace=replace, p=pjnp.asarray(p)),
        jax.random.choice(jk, 5, (3,), replace=replace, p=p),
    )
    if replace:
        assert_exact(prandom.choice(pk, 5, (40,), p=pjnp.asarray(p)), jax.random.choice(jk, 5, (40,), p=p))


def test_choice_errors(backend):
    pk, _ = keys(0)
    with pytest.raises(ValueError, match="larger sample"):
        prandom.choice(pk, 5, (6,), replace=False)
    with pytest.raises(TypeError, match="must be a sequence"):
        prandom.choice(pk, 5, 3)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        prandom.choice(pk, 5, (2,), p=pjnp.ones(4) / 4)
    assert prandom.choice(pk, 5, (0,)).shape == (0,)


def test_categorical(backend):
    pk, jk = keys(41)
    logits = np.log(np.array([[0.1, 0.5, 0.4], [0.3, 0.3, 0.4]], np.float32))
    pl = pjnp.asarray(logits)
    assert_exact(prandom.categorical(pk, pl), jax.random.categorical(jk, logits))
    assert_exact(prandom.categorical(pk, pl, axis=0), jax.random.categorical(jk, logits, axis=0))
    assert_exact(prandom.categorical(pk, pl, shape=(7, 2)), jax.random.categorical(jk, logits, shape=(7, 2)))
    assert_exact(prandom.categorical(pk, pl[0], shape=(100,)), jax.random.categorical(jk, logits[0], shape=(100,)))
    assert_exact(
        prandom.categorical(pk, pl, shape=(2, 2), replace=False),
        jax.random.categorical(jk, logits, shape=(2, 2), replace=False),
    )
    pks, jks = prandom.split(pk, 3), jax.random.split(jk, 3)
    assert_exact(
        pyjax.vmap(lambda k: prandom.categorical(k, pl))(pks),
        jax.vmap(lambda k: jax.random.categorical(k, logits))(jks),
    )
    with pytest.raises(ValueError):
        prandom.categorical(pk, pl, shape=(5,))


# --- continuous samplers built on transcendental functions -------------------------------------


@pytest.mark.parametrize("name", ["normal", "gumbel", "exponential", "laplace", "logistic"])
@pytest.mark.parametrize("shape", [(), (1000,), (10, 20)])
def test_transcendental_samplers(backend, name, shape):
    pk, jk = keys(51)
    assert_ulp(getattr(prandom, name)(pk, shape), getattr(jax.random, name)(jk, shape))


def test_normal_mostly_bit_exact(backend):
    # XLA's float32 erf_inv polynomial is reproduced; only log1p rounding differs
    pk, jk = keys(52)
    p, j = _np(prandom.normal(pk, (20000,))), _np(jax.random.normal(jk, (20000,)))
    assert np.mean(p == j) > 0.97
    assert_ulp(p, j, max_ulp=4)


def test_normal_complex(backend):
    """JAX's complex normal: parts from the two halves of a split, each times 1/sqrt(2)."""
    pk, jk = keys(55)
    p, j = _np(prandom.normal(pk, (2000,), "complex64")), _np(jax.random.normal(jk, (2000,), "complex64"))
    assert p.dtype == j.dtype and np.mean(p == j) > 0.97
    assert_ulp(p.real, j.real, max_ulp=4)
    assert_ulp(p.imag, j.imag, max_ulp=4)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_normal_half(backend, dtype):
    pk, jk = keys(53)
    assert_ulp(prandom.normal(pk, (500,), getattr(pjnp, dtype)), jax.random.normal(jk, (500,), getattr(jnp, dtype)), 1)


def test_cauchy(backend):
    pk, jk = keys(54)
    p, j = _np(prandom.cauchy(pk, (1000,))), _np(jax.random.cauchy(jk, (1000,)))
    np.testing.assert_allclose(p, j, rtol=1e-5)


def test_gumbel_high_mode(backend):
    pk, jk = keys(55)
    assert_ulp(prandom.gumbel(pk, (300,), mode="high"), jax.random.gumbel(jk, (300,), mode="high"))


def test_truncated_normal(backend):
    pk, jk = keys(56)
    p = _np(prandom.truncated_normal(pk, -1.5, 2.0, (1000,)))
    j = _np(jax.random.truncated_normal(jk, -1.5, 2.0, (1000,)))
    np.testing.assert_allclose(p, j, rtol=2e-6, atol=2e-6)
    assert p.min() > -1.5 and p.max() < 2.0
    lo = np.array([-1.0, 0.0, 1.0], np.float32)
    p = _np(prandom.truncated_normal(pk, pjnp.asarray(lo), 3.0))
    j = _np(jax.random.truncated_normal(jk, lo, 3.0))
    np.testing.assert_allclose(p, j, rtol=2e-6, atol=2e-6)


def test_samplers_under_jit_and_vmap(backend):
    pk, jk = keys(57)
    pks, jks = prandom.split(pk, 3), jax.random.split(jk, 3)
    assert_ulp(
        pyjax.vmap(lambda k: prandom.normal(k, (50,)))(pks), jax.vmap(lambda k: jax.random.normal(k, (50,)))(jks)
    )
    assert_ulp(pyjax.jit(lambda k: prandom.gumbel(k, (50,)))(pk), jax.jit(lambda k: jax.random.gumbel(k, (50,)))(jk))


def test_lognormal_and_friends(backend):
    pk, jk = keys(58)
    np.testing.assert_allclose(
        _np(prandom.lognormal(pk, 0.5, (100,))), _np(jax.random.lognormal(jk, 0.5, (100,))), rtol=1e-5
    )
    np.testing.assert_allclose(
        _np(prandom.weibull_min(pk, 2.0, 1.5, (100,))), _np(jax.random.weibull_min(jk, 2.0, 1.5, (100,))), rtol=1e-5
    )
    np.testing.assert_allclose(_np(prandom.pareto(pk, 3.0, (100,))), _np(jax.random.pareto(jk, 3.0, (100,))), rtol=1e-5)


def test_dtype_errors(backend):
    pk, _ = keys(0)
    with pytest.raises(ValueError, match="float or complex dtype"):
        prandom.normal(pk, (2,), pjnp.int32)
    for name in ("gumbel", "exponential", "laplace", "logistic", "cauchy"):
        with pytest.raises(ValueError, match="float dtype"):
            getattr(prandom, name)(pk, (2,), pjnp.int32)
