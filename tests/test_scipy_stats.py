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
