"""jax.scipy.stats distributions beyond norm, the multivariate ones and sem against real JAX. Inputs
are arrays (rank >= 1).
"""

from __future__ import annotations

import jax.scipy.stats as jst
import numpy as np
import pytest

import pyjax.scipy.stats as pst


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


F = np.float32


XS = np.array([-1.5, -0.2, 0.0, 0.3, 0.7, 1.0, 1.4, 2.5, 6.0], F)


KS = np.array([-1.0, 0.0, 1.0, 2.0, 3.0, 5.0, 7.0], F)


Q = np.array([0.01, 0.3, 0.5, 0.9], F)


STATS = {
    "beta": [(XS, 2.0, 3.0), (XS, 0.7, 1.5, -0.5, 2.0)],
    "gamma": [(XS, 2.0), (XS, 0.5, 0.1, 2.0)],
    "chi2": [(XS, 3.0)],
    "t": [(XS, 3.0), (XS, 5.0, 1.0, 2.0)],
    "expon": [(XS,), (XS, 0.5, 2.0)],
    "uniform": [(XS, -1.0, 3.0)],
    "laplace": [(XS, 0.3, 2.0)],
    "logistic": [(XS, 0.3, 2.0)],
    "cauchy": [(XS, 0.3, 2.0)],
    "pareto": [(XS + 1, 3.0)],
    "gennorm": [(XS, 1.5)],
    "truncnorm": [(XS, -1.0, 2.0)],
    "vonmises": [(XS, 2.0)],
    "wrapcauchy": [(XS, 0.5)],
    "gumbel_r": [(XS, 0.3, 2.0)],
    "gumbel_l": [(XS, 0.3, 2.0)],
    "norm": [(XS, 0.3, 2.0)],
    "poisson": [(KS, 2.5), (KS, 2.5, 1.0)],
    "bernoulli": [(KS, 0.3)],
    "binom": [(KS, 5.0, 0.3)],
    "geom": [(KS, 0.3)],
    "nbinom": [(KS, 4.0, 0.3)],
    "betabinom": [(KS, 5.0, 2.0, 3.0)],
}


@pytest.mark.parametrize("dist", list(STATS))
def test_stats_distributions(backend, dist):
    jm, pm = getattr(jst, dist), getattr(pst, dist)
    fns = [f for f in dir(jm) if not f.startswith("_") and callable(getattr(jm, f)) and f not in ("entropy", "rvs")]
    for fn in fns:
        assert hasattr(pm, fn), f"{dist}.{fn} missing"
        if dist == "truncnorm" and fn not in ("logpdf", "cdf"):
            continue  # JAX compiles these slowly; they are thin wrappers of the two checked
        for args in STATS[dist]:
            a = (Q,) + args[1:] if fn in ("ppf", "isf") else args
            _close(getattr(pm, fn)(*a), getattr(jm, fn)(*a), 2e-4)


def test_multivariate_stats_and_sem(backend):
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(F)
    mean, cov = np.array([0.5, -1.0], F), np.array([[2.0, 0.5], [0.5, 1.0]], F)
    _close(pst.multivariate_normal.logpdf(x, mean, cov), jst.multivariate_normal.logpdf(x, mean, cov), 1e-4)
    _close(pst.multivariate_normal.pdf(x, mean, cov), jst.multivariate_normal.pdf(x, mean, cov), 1e-4)
    alpha = np.array([1.0, 2.0, 3.0], F)
    for xd in (np.array([0.2, 0.3, 0.5], F), np.array([[0.2, 0.3], [0.3, 0.2], [0.5, 0.5]], F)):
        _close(pst.dirichlet.logpdf(xd, alpha), jst.dirichlet.logpdf(xd, alpha), 1e-4)
    p = np.array([0.2, 0.3, 0.5], F)
    for xm in (np.array([1, 2, 3]), np.array([[1, 2, 2], [1, 2, 3]])):
        _close(pst.multinomial.logpmf(xm, 6, p), jst.multinomial.logpmf(xm, 6, p), 1e-4)
    _close(pst.sem(np.arange(10.0, dtype=F)), jst.sem(np.arange(10.0, dtype=F)), 1e-5)
    import pyjax.scipy.stats.beta as submodule

    assert submodule.logpdf is pst.beta.logpdf


def _same(got, want):
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_array_equal(g, w)


def test_rankdata_and_mode(backend):
    ties = np.array([3.0, 1.0, 2.0, 1.0, 5.0, 2.0], F)
    grid = np.array([[3.0, np.nan, 1.0], [1.0, 2.0, 1.0]], F)
    for method in ("average", "min", "max", "dense", "ordinal"):
        _same(pst.rankdata(ties, method), jst.rankdata(ties, method))
        _same(pst.rankdata(grid, method, axis=1), jst.rankdata(grid, method, axis=1))
    _same(pst.rankdata(grid, axis=0), jst.rankdata(grid, axis=0))
    ints = np.array([[1, 2, 1, 3, 2, 1], [3, 1, 3, 2, 1, 3], [1, 2, 2, 3, 1, 2]], np.int32)
    _same(pst.mode(ints), jst.mode(ints))
    _same(pst.mode(ints, axis=1, keepdims=True), jst.mode(ints, axis=1, keepdims=True))
    _same(pst.mode(grid, axis=None), jst.mode(grid, axis=None))
    _same(pst.mode(np.array([np.nan, np.nan, 1.0], F)), jst.mode(np.array([np.nan, np.nan, 1.0], F)))
    with pytest.raises(ValueError, match="unknown method"):
        pst.rankdata(ties, "first")
    with pytest.raises(NotImplementedError):
        pst.mode(ties, nan_policy="omit")


def test_gaussian_kde(backend):
    import jax

    import pyjax

    rng = np.random.default_rng(0)
    data, w = rng.standard_normal((2, 9)).astype(F), rng.uniform(size=9).astype(F)
    pts = rng.standard_normal((2, 4)).astype(F)
    pk, jk = pst.gaussian_kde(data, weights=w), jst.gaussian_kde(data, weights=w)
    for fn in ("evaluate", "logpdf"):
        _close(getattr(pk, fn)(pts), getattr(jk, fn)(pts), 1e-5)
    _close(pk.covariance, jk.covariance)
    _close(pk.integrate_kde(pst.gaussian_kde(pts)), jk.integrate_kde(jst.gaussian_kde(pts)), 1e-5)
    _close(pk.resample(pyjax.random.key(1), (3,)), jk.resample(jax.random.key(1), (3,)), 1e-5)
    line = data[0]
    p1, j1 = pst.gaussian_kde(line, bw_method="silverman"), jst.gaussian_kde(line, bw_method="silverman")
    _close(pyjax.jit(lambda k, x: k.pdf(x))(p1, pts[0]), j1.pdf(pts[0]), 1e-5)
    _close(p1.integrate_box_1d(-0.5, 1.0), j1.integrate_box_1d(-0.5, 1.0), 1e-5)
    grad = pyjax.grad(lambda d: pst.gaussian_kde(d).logpdf(pts[0]).sum())(line)
    _close(grad, jax.grad(lambda d: jst.gaussian_kde(d).logpdf(pts[0]).sum())(line), 1e-4)
    with pytest.raises(ValueError, match="bw_method"):
        pst.gaussian_kde(line, bw_method="wide")
