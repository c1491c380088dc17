"""jax.random's gamma family and counting samplers (gamma, loggamma, beta, dirichlet, chisquare, f,
t, generalized_normal, wald, poisson, binomial, multinomial) against real JAX.

The rejection samplers are not JAX's bit-for-bit, so values are checked statistically with fixed
keys (deterministic): Kolmogorov-Smirnov tests against the exact distribution (scipy.stats) for
continuous samplers, chi-square goodness of fit for counts; shapes and dtypes are compared with
JAX's through jax.eval_shape (no compilation), and edge values and error types with JAX's."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from scipy import stats

import pyjax
import pyjax.numpy as pjnp
import pyjax.random as prandom

N = 3000
P_MIN = 1e-3


def _sample(name, *args, **kw):
    """pyjax's sample, after checking its shape and dtype against JAX's (abstractly evaluated)."""
    p = getattr(prandom, name)(prandom.key(3), *args, **kw)
    j = jax.eval_shape(lambda k: getattr(jax.random, name)(k, *args, **kw), jax.random.key(0))
    assert (p.shape, p.dtype) == (j.shape, j.dtype), (p.shape, p.dtype, j.shape, j.dtype)
    return np.asarray(p, np.float64)


def _ks(x, dist):
    assert np.isfinite(x).all()
    assert stats.kstest(x.ravel(), dist.cdf).pvalue > P_MIN


def _chi2(x, dist):
    """Chi-square goodness of fit of integer samples x to a discrete scipy distribution (tails pooled)."""
    lo, hi = int(dist.ppf(0.005)), int(dist.ppf(0.995))
    ks = np.arange(lo, hi + 1)
    observed = np.array([np.sum(x <= lo)] + [np.sum(x == k) for k in ks[1:-1]] + [np.sum(x >= hi)])
    expected = np.concatenate([[dist.cdf(lo)], dist.pmf(ks[1:-1]), [dist.sf(hi - 1)]]) * x.size
    assert stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue > P_MIN


CONTINUOUS = [
    ("gamma", (0.3,), stats.gamma(0.3)),
    ("gamma", (4.0,), stats.gamma(4.0)),
    ("beta", (0.5, 2.0), stats.beta(0.5, 2.0)),
    ("chisquare", (3.0,), stats.chi2(3.0)),
    ("f", (4.0, 9.0), stats.f(4.0, 9.0)),
    ("t", (5.0,), stats.t(5.0)),
    ("wald", (1.5,), stats.invgauss(1.5)),
]


@pytest.mark.parametrize("name,args,dist", CONTINUOUS, ids=[c[0] + str(c[1]) for c in CONTINUOUS])
def test_continuous_match_distribution(backend, name, args, dist):
    _ks(_sample(name, *args, shape=(N,)), dist)


def test_loggamma_generalized_normal_dirichlet(backend):
    x = _sample("loggamma", 0.05, (N,))
    _ks(np.exp(x), stats.gamma(0.05))
    assert x.min() < -30  # tiny values stay representable in log space
    _ks(_sample("generalized_normal", 1.5, (N,)), stats.gennorm(1.5))
    alpha = np.array([0.5, 1.0, 3.0], np.float32)
    d = _sample("dirichlet", alpha, (N,))
    np.testing.assert_allclose(d.sum(-1), 1, rtol=1e-5)
    for i in range(3):
        _ks(d[:, i], stats.beta(alpha[i], alpha.sum() - alpha[i]))


@pytest.mark.parametrize("lam", [0.7, 4.0, 25.0])
def test_poisson(backend, lam):
    _chi2(_sample("poisson", lam, (N,)), stats.poisson(lam))


def test_poisson_edges(backend):
    edge = np.array([0.0, -1.0, np.nan, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(prandom.poisson(prandom.key(0), edge))[:3], [0, -1, -1])


@pytest.mark.parametrize("n,prob", [(10.0, 0.3), (200.0, 0.4), (50.0, 0.95)])
def test_binomial(backend, n, prob):
    _chi2(_sample("binomial", n, prob, (N,)), stats.binom(int(n), prob))


def test_binomial_edges(backend):
    nn = np.array([0.0, -1.0, 5.0, 5.0, 5.0], np.float32)
    pp = np.array([0.5, 0.5, 0.0, 1.0, np.nan], np.float32)
    np.testing.assert_array_equal(np.asarray(prandom.binomial(prandom.key(0), nn, pp)), [0, np.nan, 0, 5, np.nan])


def test_multinomial(backend):
    probs = np.array([0.2, 0.3, 0.5], np.float32)
    m = _sample("multinomial", 20, probs, shape=(N, 3))
    np.testing.assert_array_equal(m.sum(-1), 20)
    for i in range(3):
        _chi2(m[:, i], stats.binom(20, probs[i]))
    assert _sample("multinomial", 7, probs).shape == (3,)


def test_gamma_edges_shapes_and_errors(backend):
    a = np.array([0.0, -1.0, np.nan, 1e-3, np.inf], np.float32)
    got = np.asarray(prandom.gamma(prandom.key(0), a))
    np.testing.assert_array_equal(got[:3], [0.0, np.nan, np.nan])
    assert got[4] == np.inf and 0 <= got[3] < 1
    assert np.isfinite(np.asarray(prandom.loggamma(prandom.key(0), np.float32(1e-30), (4,)))).all()
    for name, args in [("gamma", (np.ones((2, 1), np.float32),)), ("beta", (1.0, np.ones(3, np.float32)))]:
        _sample(name, *args)
        _sample(name, *args, shape=(4, 2, 3))
    assert prandom.gamma(prandom.key(0), 2.0, dtype=pjnp.float16).dtype == pjnp.float16
    with pytest.raises(ValueError):
        prandom.gamma(prandom.key(0), np.ones(3, np.float32), (2,))
    with pytest.raises(ValueError):
        prandom.dirichlet(prandom.key(0), 1.0)
    with pytest.raises(TypeError):
        prandom.poisson(prandom.key(0), 2.0, dtype=pjnp.float32)
    # deterministic in the key; different keys give different samples
    k1, k2 = prandom.split(prandom.key(5))
    np.testing.assert_array_equal(np.asarray(prandom.gamma(k1, 2.0, (5,))), np.asarray(prandom.gamma(k1, 2.0, (5,))))
    assert not np.array_equal(np.asarray(prandom.gamma(k1, 2.0, (5,))), np.asarray(prandom.gamma(k2, 2.0, (5,))))


def test_under_jit_and_vmap(backend):
    f = pyjax.jit(lambda k, a: prandom.gamma(k, a, (N,)))
    _ks(np.asarray(f(prandom.key(1), 3.0), np.float64), stats.gamma(3.0))
    keys = prandom.split(prandom.key(2), 3)
    out = pyjax.vmap(lambda k: prandom.poisson(k, 3.0, (500,)))(keys)
    assert out.shape == (3, 500) and out.dtype == np.int32
    assert abs(float(pjnp.mean(out.astype(pjnp.float32))) - 3.0) < 0.2


def test_gamma_implicit_reparameterization_grads(backend):
    a = np.array([0.3, 1.0, 2.5, 10.0], np.float32)
    z = np.asarray(prandom.gamma(prandom.key(0), a))
    g = pyjax.grad(lambda a: pjnp.sum(prandom.gamma(prandom.key(0), a)))(a)
    np.testing.assert_allclose(np.asarray(g), np.asarray(jax.lax.random_gamma_grad(a, z)), rtol=1e-4)
    lz = np.asarray(prandom.loggamma(prandom.key(0), a))
    g = pyjax.grad(lambda a: pjnp.sum(prandom.loggamma(prandom.key(0), a)))(a)
    want = np.asarray(jax.lax.random_gamma_grad(a, np.exp(lz))) / np.exp(lz)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-4)
    # d/da E[Beta(a, 2)] = 2 / (a + 2) ** 2 at a = 3, estimated from the reparameterized samples
    g = pyjax.grad(lambda a: pjnp.mean(prandom.beta(prandom.key(1), a, 2.0, (N,))))(3.0)
    assert abs(float(g) - 0.08) < 0.01


def test_ball(backend):
    x = _sample("ball", 3, 2, (N,))
    r3 = np.sum(x * x, axis=-1) ** 1.5  # uniform in the 3-ball: radius**3 ~ U(0, 1)
    _ks(r3, stats.uniform())
    x1 = _sample("ball", 2, 1, (N,))
    assert np.abs(x1).sum(-1).max() <= 1
