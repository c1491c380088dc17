"""lax.rng_bit_generator and rng_bit_generator_p (pyjax/lax/rng.py): bit-exact with JAX on CPU for each
algorithm, dtype and shape (odd, even, scalar, empty), under jit and vmap, with counters that carry."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
from tests.jax_compare import check, check_all

KEYS = [
    np.array([1, 2, 3, 4], np.uint32),
    np.array([0xFFFFFFFF, 7, 0xFFFFFFFE, 0xFFFFFFFF], np.uint32),  # the counter wraps into its high words
]
SHAPES = [(), (5,), (3, 5), (2, 3, 4), (3, 1, 5), (0, 3)]


@pytest.mark.parametrize("algorithm", ["RNG_THREE_FRY", "RNG_PHILOX"])
def test_rng_bit_generator_matches_jax(backend, algorithm):
    cases = [(KEYS[1], s, "uint32") for s in SHAPES] + [(KEYS[0], (5,), "uint8"), (KEYS[0], (2, 3), "uint16")]
    check_all(lambda j, n, k, s, d: j.lax.rng_bit_generator(k, s, d, getattr(j.lax.RandomAlgorithm, algorithm)), cases)


def test_rng_bit_generator_vmap_jit_and_primitive():
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    for alg in ("RNG_DEFAULT", "RNG_THREE_FRY"):
        gen = lambda j, k, alg=alg: j.lax.rng_bit_generator(k, (2, 3), "uint32", getattr(j.lax.RandomAlgorithm, alg))  # noqa: E731
        check(lambda j, n, ks: j.vmap(lambda k: gen(j, k))(ks), keys)  # JAX's rule: the first key serves all rows
        check(lambda j, n, ks: j.jit(j.vmap(lambda k: gen(j, k)))(ks), keys)
        bind = lambda j, k, alg=alg: j.lax.rng_bit_generator_p.bind(  # noqa: E731
            k, shape=(7,), dtype=np.dtype("uint32"), algorithm=getattr(j.lax.RandomAlgorithm, alg), out_sharding=None
        )
        check(lambda j, n, k: bind(j, k), KEYS[1])
        check(lambda j, n, ks: j.vmap(lambda k: bind(j, k))(ks), keys)
    with pytest.raises(TypeError, match="unsupported dtype"):
        pyjax.lax.rng_bit_generator(KEYS[0], (3,), "int32")
    with pytest.raises(AssertionError):
        pyjax.lax.rng_bit_generator(np.zeros(2, np.uint32), (3,))
    assert jax.lax.rng_bit_generator_p.name == pyjax.lax.rng_bit_generator_p.name


def test_rng_uniform_is_stateful_and_in_range():
    """rng_uniform (XLA's stateful RngUniform) draws new values at every call, eagerly and under jit, in
    [a, b) with a's dtype, as JAX's does on CPU (whose values come from XLA's hidden state: no oracle)."""
    f = pyjax.jit(lambda a, b: pyjax.lax.rng_uniform(a, b, (1000,)))
    draws = [pyjax.lax.rng_uniform(np.float32(-2), np.float32(5), (1000,)), f(np.float32(-2), np.float32(5))]
    draws.append(f(np.float32(-2), np.float32(5)))
    for d in draws:
        v = np.asarray(d)
        assert v.dtype == np.float32 and v.min() >= -2 and v.max() < 5 and 0.5 < v.mean() < 2.5
    assert not np.array_equal(draws[1], draws[2])
    ints = np.asarray(pyjax.lax.rng_uniform(np.int32(3), np.int32(7), (500,)))
    assert ints.dtype == jax.lax.rng_uniform(np.int32(3), np.int32(7), (2,)).dtype and set(ints) == {3, 4, 5, 6}
    assert "rng_uniform[shape=(2,)]" in str(pyjax.make_jaxpr(lambda: pyjax.lax.rng_uniform(0.0, 1.0, (2,)))())
