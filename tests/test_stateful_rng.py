"""jax.experimental.random's stateful generator against JAX: the same draws bit for bit (eager, under jit,
from keys, spawned children), the counter advancing once per draw."""

from __future__ import annotations

import jax
import jax.experimental.random as jrandom
import numpy as np

import pyjax
import pyjax.experimental.random as prandom


def _draws(lib, mod):
    rng = mod.stateful_rng(42)
    out = [rng.uniform(), rng.uniform(size=3), rng.normal(1.0, 2.0, size=(2,)), rng.integers(10, size=4)]
    out += [rng.random(2, dtype="float32"), lib.jit(rng.uniform)(), lib.jit(rng.uniform)()]
    out += [lib.random.key_data(rng.key()), lib.random.key_data(rng.key((2,)))]
    out += [child.integers(0, 10, 2) for child in rng.spawn(2)]
    return out, rng


def test_stateful_rng_matches_jax():
    (want, jrng), (got, prng) = _draws(jax, jrandom), _draws(pyjax, prandom)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    assert int(prng._counter[...]) == int(jrng._counter[...]) == 10
    assert repr(prng).split("_counter")[1] == repr(jrng).split("_counter")[1]
    assert prandom.stateful_rng().key().shape == ()
