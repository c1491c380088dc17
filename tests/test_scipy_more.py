"""jax.scipy additions against real JAX: special functions (gamma family, incomplete gamma/beta,
Bessel i0/i1, zeta/polygamma, erfcx, kl_div, ...), the stats distributions beyond norm, and
jax.scipy.linalg's qr/eigh/svd/polar/expm/block_diag/toeplitz. Inputs are arrays (rank >= 1)."""

from __future__ import annotations

import jax
import jax.numpy as jj
import jax.scipy.linalg as jsl
import jax.scipy.special as jsp
import jax.scipy.stats as jst
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj
import pyjax.scipy.linalg as psl
import pyjax.scipy.special as psp
import pyjax.scipy.stats as pst


def _close(got, want, tol=2e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True)


F = np.float32
X = np.array([-2.0, -1.5, -0.5, 0.0, 0.5, 3.0, 20.0], F)

SPECIAL = [
    ("gamma", (X,), 2e-5),
    ("gammasgn", (X,), 0),
    ("loggamma", (X,), 2e-5),
    ("factorial", (X,), 2e-5),
    ("erfcx", (np.array([-3.0, 0.0, 1.0, 5.5, 6.5, 30.0], F),), 2e-5),
    ("i0", (X,), 2e-5),
    ("i0e", (np.array([0.0, 1.0, 14.9, 15.1, 40.0, 1000.0], F),), 2e-5),
    ("i1", (X,), 2e-5),
    ("i1e", (np.array([-1.0, 14.9, -15.1, 40.0, 1000.0], F),), 2e-5),
    ("beta", (np.array([-0.5, 2.0], F), np.array([1.5, 3.0], F)), 2e-5),
    ("poch", (np.array([2.0, -1.5], F), np.array([3.0, 2.0], F)), 2e-5),
    ("comb", (np.array([5.0, 5.0, 3.0, 10.0], F), np.array([2.0, 6.0, -1.0, 3.0], F)), 2e-5),
    ("kl_div", (np.array([0.0, 1.0, 1.0, -1.0], F), np.array([1.0, 0.0, 2.0, 1.0], F)), 2e-5),
    ("rel_entr", (np.array([0.0, 1.0, 1.0, -1.0], F), np.array([1.0, 0.0, 2.0, 1.0], F)), 2e-5),
    ("boxcox", (np.array([0.5, 2.0, 3.0], F), np.array([0.0, 0.5, -1.0], F)), 2e-5),
    ("boxcox1p", (np.array([0.5, 2.0, 3.0], F), np.array([0.0, 0.5, -1.0], F)), 2e-5),
    (
        "gammainc",
        (
            np.array([0.0, 1.0, 2.0, -1.0, 2.0, 2.0, 0.5, 5.0, 30.0, 100.0, 1000.0, 0.1], F),
            np.array([1.0, 0.0, 3.0, 1.0, -1.0, np.inf, 0.2, 12.0, 25.0, 110.0, 990.0, 5.0], F),
        ),
        1e-4,
    ),
    ("gammaincc", (np.array([0.0, 1.0, 2.0, 0.5, 5.0, 30.0], F), np.array([1.0, 0.0, 3.0, 0.2, 12.0, 25.0], F)), 1e-4),
    (
        "betainc",
        (
            np.array([1.0, 2.0, 0.0, -1.0, 2.0, 0.5, 5.0, 50.0, 3.0], F),
            np.array([1.0, 3.0, 1.0, 1.0, 3.0, 0.5, 2.0, 40.0, 0.2], F),
            np.array([0.5, 0.2, 0.5, 0.5, 1.5, 0.9, 0.7, 0.55, 0.99], F),
        ),
        1e-4,
    ),
    ("zeta", (np.array([2.0, 3.0, 1.0, 0.5, 1.5, 10.0], F), np.array([1.0, 2.0, 1.0, 1.0, 0.3, 5.0], F)), 1e-4),
    ("polygamma", (np.array([0, 1, 2, 3, 1]), np.array([0.5, 2.0, 3.0, -1.5, 10.0], F)), 1e-4),
]


@pytest.mark.parametrize("name,args,tol", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_special_values(backend, name, args, tol):
    _close(getattr(psp, name)(*args), getattr(jsp, name)(*args), tol)


def test_special_grads(backend):
    cases = [
        (lambda a, x: psp.gammainc(a, x), lambda a, x: jsp.gammainc(a, x), (2.5, 1.7), (0, 1)),
        (lambda x: psp.betainc(2.5, 1.5, x), lambda x: jsp.betainc(2.5, 1.5, x), (0.8,), (0,)),
        (lambda x: psp.zeta(x, 2.0), lambda x: jsp.zeta(x, 2.0), (3.0,), (0,)),
    ]
    for fp, fj, args, nums in cases:
        gp = pyjax.grad(lambda *a: pj.sum(fp(*a)), argnums=nums)(*[pj.array([v], F) for v in args])
        gj = jax.grad(lambda *a: jj.sum(fj(*a)), argnums=nums)(*[jj.array([v], F) for v in args])
        np.testing.assert_allclose(np.ravel(np.array(gp)), np.ravel(np.array(gj)), rtol=1e-3, atol=1e-5)


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


def test_scipy_linalg(backend):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 4)).astype(F)
    b = rng.standard_normal((5, 3)).astype(F)
    for A in (a, 3 * a, np.stack([a, 0.1 * a])):
        _close(psl.expm(A), jsl.expm(A), 1e-4)
    _close(psl.block_diag(a[:2, :3], F(2.0), b[0]), jsl.block_diag(a[:2, :3], F(2.0), b[0]))
    _close(psl.toeplitz(b[:, 0]), jsl.toeplitz(b[:, 0]))
    _close(psl.toeplitz(b[:, 0], b[:3, 1]), jsl.toeplitz(b[:, 0], b[:3, 1]))
    _close(psl.eigh(a, eigvals_only=True), jsl.eigh(a, eigvals_only=True), 1e-4)
    _close(psl.svd(b, compute_uv=False), jsl.svd(b, compute_uv=False), 1e-4)
    for mode in ("full", "economic", "r"):
        got, want = psl.qr(b, mode=mode), jsl.qr(b, mode=mode)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, 1e-4)
    u, p = psl.polar(a)
    ju, jp = jsl.polar(a)
    _close(u, ju, 1e-4)
    _close(p, jp, 1e-4)


_COMPLEX_OK = ["logit", "expit", "logsumexp", "xlogy", "xlog1py"]
_COMPLEX_REFUSED = [
    "erf",
    "erfc",
    "erfinv",
    "gammaln",
    "digamma",
    "entr",
    "i0",
    "i0e",
    "i1",
    "zeta",
    "kl_div",
    "rel_entr",
]


@pytest.mark.parametrize("name", _COMPLEX_OK + _COMPLEX_REFUSED)
def test_special_complex_arguments(backend, name):
    """Complex arguments: computed where JAX computes them, refused with JAX's error class elsewhere
    (never silently reduced to their real part)."""
    z = np.array([1 + 1j, 0.5 - 0.2j, -2 + 3j], np.complex64)
    binary = name in ("xlogy", "xlog1py", "zeta", "kl_div", "rel_entr")
    args = (z, z[::-1]) if binary else (z,)
    try:
        want = getattr(jsp, name)(*args)
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(psp, name)(*args)
        return
    _close(getattr(psp, name)(*args), want, 1e-5)
