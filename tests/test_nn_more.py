"""jax.nn.dot_product_attention (bias, masks, causal, local windows, sequence lengths, grouped
queries, residuals, gradients), jax.nn.log1mexp and jax.nn.tanh against real JAX."""

from __future__ import annotations

import jax
import jax.numpy as jj
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj

RNG = np.random.default_rng(0)
F = np.float32
Q = RNG.standard_normal((2, 5, 4, 8)).astype(F)
K = RNG.standard_normal((2, 6, 2, 8)).astype(F)
V = RNG.standard_normal((2, 6, 2, 8)).astype(F)
BIAS = RNG.standard_normal((1, 4, 5, 6)).astype(F)
MASK = RNG.random((2, 1, 5, 6)) > 0.3

OPTIONS = {
    "plain": {},
    "bias": dict(bias=BIAS),
    "mask": dict(mask=MASK),
    "causal_scaled_bias": dict(scale=0.3, is_causal=True, bias=BIAS),
    "window": dict(local_window_size=(1, 2)),
    "window_int": dict(local_window_size=1),
    "seq_lengths": dict(query_seq_lengths=np.array([3, 5]), key_value_seq_lengths=np.array([4, 6])),
    "residual": dict(return_residual=True, is_causal=True),
}


@pytest.mark.parametrize("name", list(OPTIONS))
def test_dot_product_attention(backend, name):
    got = pyjax.nn.dot_product_attention(Q, K, V, **OPTIONS[name])
    want = jax.nn.dot_product_attention(Q, K, V, **OPTIONS[name])
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_dot_product_attention_unbatched_grad_errors(backend):
    got = pyjax.nn.dot_product_attention(Q[0], K[0], V[0])
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.nn.dot_product_attention(Q[0], K[0], V[0])), atol=2e-5)
    g = pyjax.grad(lambda q: pj.sum(pyjax.nn.dot_product_attention(q, K, V, is_causal=True) ** 2))(Q)
    gj = jax.grad(lambda q: jj.sum(jax.nn.dot_product_attention(q, K, V, is_causal=True) ** 2))(Q)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        pyjax.nn.dot_product_attention(Q, K[:, :, :1].repeat(3, axis=2), V[:, :, :1].repeat(3, axis=2))


def test_log1mexp_and_tanh(backend):
    x = np.array([0.1, 0.69, 0.7, 5.0, 50.0], F)
    np.testing.assert_allclose(np.asarray(pyjax.nn.log1mexp(x)), np.asarray(jax.nn.log1mexp(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.nn.tanh(x)), np.asarray(jax.nn.tanh(x)), rtol=1e-6)
