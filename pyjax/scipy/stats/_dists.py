"""The jax.scipy.stats distributions other than norm, as plain functions grouped per distribution.

`DISTRIBUTIONS` maps a distribution name to its functions; stats/__init__.py turns each entry
into a submodule (jax.scipy.stats.beta, ...). Densities are written in log space from
jax.scipy.special (xlogy, gammaln, betaln); CDFs of gamma-, beta- and Poisson-type distributions
use gammainc / betainc.
"""

from __future__ import annotations

import math

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.scipy import special as sp

_inexact = sp._promote_inexact
_NEG_INF = float("-inf")


def _std(name, x, loc, scale, *shape):
    """Promoted x, shape parameters and the standardized z = (x - loc) / scale."""
    x, loc, scale, *shape = _inexact(name, x, loc, scale, *shape)
    return (x - loc) / scale, jnp.log(scale), shape


# --- continuous ------------------------------------------------------------------------------------


def beta_logpdf(x, a, b, loc=0, scale=1):
    """log density of Beta(a, b) (location/scale shifted)."""
    z, log_s, (a, b) = _std("beta.logpdf", x, loc, scale, a, b)
    lp = sp.xlogy(a - 1, z) + sp.xlog1py(b - 1, -z) - sp.betaln(a, b) - log_s
    return jnp.where((z < 0) | (z > 1), _NEG_INF, lp)


def beta_cdf(x, a, b, loc=0, scale=1):
    """CDF of Beta(a, b): the regularized incomplete beta function."""
    z, _, (a, b) = _std("beta.cdf", x, loc, scale, a, b)
    return sp.betainc(a, b, jnp.clip(z, 0, 1))


def beta_sf(x, a, b, loc=0, scale=1):
    """Survival function of Beta(a, b)."""
    z, _, (a, b) = _std("beta.sf", x, loc, scale, a, b)
    return sp.betainc(b, a, 1 - jnp.clip(z, 0, 1))


def gamma_logpdf(x, a, loc=0, scale=1):
    """log density of Gamma(a)."""
    z, log_s, (a,) = _std("gamma.logpdf", x, loc, scale, a)
    lp = sp.xlogy(a - 1, z) - z - sp.gammaln(a) - log_s
    return jnp.where(z < 0, _NEG_INF, lp)


def gamma_cdf(x, a, loc=0, scale=1):
    """CDF of Gamma(a): the regularized lower incomplete gamma function."""
    z, _, (a,) = _std("gamma.cdf", x, loc, scale, a)
    return sp.gammainc(a, jnp.maximum(z, 0))


def gamma_sf(x, a, loc=0, scale=1):
    """Survival function of Gamma(a)."""
    z, _, (a,) = _std("gamma.sf", x, loc, scale, a)
    return sp.gammaincc(a, jnp.maximum(z, 0))


def chi2_logpdf(x, df, loc=0, scale=1):
    """log density of the chi-square distribution with df degrees of freedom."""
    z, log_s, (df,) = _std("chi2.logpdf", x, loc, scale, df)
    half = df / 2
    lp = sp.xlogy(half - 1, z) - z / 2 - sp.gammaln(half) - half * math.log(2) - log_s
    return jnp.where(z < 0, _NEG_INF, lp)


def chi2_cdf(x, df, loc=0, scale=1):
    """CDF of the chi-square distribution."""
    z, _, (df,) = _std("chi2.cdf", x, loc, scale, df)
    return sp.gammainc(df / 2, jnp.maximum(z, 0) / 2)


def chi2_sf(x, df, loc=0, scale=1):
    """Survival function of the chi-square distribution."""
    z, _, (df,) = _std("chi2.sf", x, loc, scale, df)
    return sp.gammaincc(df / 2, jnp.maximum(z, 0) / 2)


def t_logpdf(x, df, loc=0, scale=1):
    """log density of Student's t with df degrees of freedom."""
    z, log_s, (df,) = _std("t.logpdf", x, loc, scale, df)
    norm = sp.gammaln((df + 1) / 2) - sp.gammaln(df / 2) - 0.5 * jnp.log(df * math.pi)
    return norm - (df + 1) / 2 * jnp.log1p(z * z / df) - log_s


def expon_logpdf(x, loc=0, scale=1):
    """log density of the exponential distribution."""
    z, log_s, _ = _std("expon.logpdf", x, loc, scale)
    return jnp.where(z < 0, _NEG_INF, -z - log_s)


def expon_cdf(x, loc=0, scale=1):
    """CDF of the exponential distribution."""
    z, _, _ = _std("expon.cdf", x, loc, scale)
    return jnp.where(z < 0, 0.0, -jnp.expm1(-z))


def expon_logcdf(x, loc=0, scale=1):
    """log CDF of the exponential distribution."""
    z, _, _ = _std("expon.logcdf", x, loc, scale)
    return jnp.where(z < 0, _NEG_INF, jnp.log(-jnp.expm1(-z)))


def expon_sf(x, loc=0, scale=1):
    """Survival function of the exponential distribution."""
    z, _, _ = _std("expon.sf", x, loc, scale)
    return jnp.where(z < 0, 1.0, jnp.exp(-z))


def expon_logsf(x, loc=0, scale=1):
    """log survival function of the exponential distribution."""
    z, _, _ = _std("expon.logsf", x, loc, scale)
    return jnp.where(z < 0, 0.0, -z)


def expon_ppf(q, loc=0, scale=1):
    """Quantile function of the exponential distribution."""
    q, loc, scale = _inexact("expon.ppf", q, loc, scale)
    return jnp.where((q < 0) | (q > 1), jnp.nan, loc - scale * jnp.log1p(-q))


def uniform_logpdf(x, loc=0, scale=1):
    """log density of the uniform distribution on [loc, loc + scale]."""
    z, log_s, _ = _std("uniform.logpdf", x, loc, scale)
    return jnp.where((z < 0) | (z > 1), _NEG_INF, -log_s)


def uniform_cdf(x, loc=0, scale=1):
    """CDF of the uniform distribution."""
    z, _, _ = _std("uniform.cdf", x, loc, scale)
    return jnp.clip(z, 0, 1)


def uniform_ppf(q, loc=0, scale=1):
    """Quantile function of the uniform distribution."""
    q, loc, scale = _inexact("uniform.ppf", q, loc, scale)
    return jnp.where((q < 0) | (q > 1), jnp.nan, loc + q * scale)


def laplace_logpdf(x, loc=0, scale=1):
    """log density of the Laplace distribution."""
    z, log_s, _ = _std("laplace.logpdf", x, loc, scale)
    return -jnp.abs(z) - math.log(2) - log_s


def laplace_cdf(x, loc=0, scale=1):
    """CDF of the Laplace distribution."""
    z, _, _ = _std("laplace.cdf", x, loc, scale)
    return jnp.where(z < 0, 0.5 * jnp.exp(z), 1 - 0.5 * jnp.exp(-z))


def logistic_logpdf(x, loc=0, scale=1):
    """log density of the logistic distribution."""
    z, log_s, _ = _std("logistic.logpdf", x, loc, scale)
    az = jnp.abs(z)
    return -az - 2 * jnp.log1p(jnp.exp(-az)) - log_s


def logistic_cdf(x, loc=0, scale=1):
    """CDF of the logistic distribution."""
    z, _, _ = _std("logistic.cdf", x, loc, scale)
    return sp.expit(z)


def logistic_sf(x, loc=0, scale=1):
    """Survival function of the logistic distribution."""
    z, _, _ = _std("logistic.sf", x, loc, scale)
    return sp.expit(-z)


def logistic_ppf(x, loc=0, scale=1):
    """Quantile function of the logistic distribution."""
    x, loc, scale = _inexact("logistic.ppf", x, loc, scale)
    return loc + scale * sp.logit(x)


def logistic_isf(x, loc=0, scale=1):
    """Inverse survival function of the logistic distribution."""
    x, loc, scale = _inexact("logistic.isf", x, loc, scale)
    return loc - scale * sp.logit(x)


def cauchy_logpdf(x, loc=0, scale=1):
    """log density of the Cauchy distribution."""
    z, log_s, _ = _std("cauchy.logpdf", x, loc, scale)
    return -math.log(math.pi) - log_s - jnp.log1p(z * z)


def cauchy_cdf(x, loc=0, scale=1):
    """CDF of the Cauchy distribution."""
    z, _, _ = _std("cauchy.cdf", x, loc, scale)
    return 0.5 + jnp.arctan(z) / math.pi


def cauchy_sf(x, loc=0, scale=1):
    """Survival function of the Cauchy distribution."""
    z, _, _ = _std("cauchy.sf", x, loc, scale)
    return 0.5 - jnp.arctan(z) / math.pi


def cauchy_ppf(q, loc=0, scale=1):
    """Quantile function of the Cauchy distribution."""
    q, loc, scale = _inexact("cauchy.ppf", q, loc, scale)
    return loc + scale * jnp.tan(math.pi * (q - 0.5))


def cauchy_isf(q, loc=0, scale=1):
    """Inverse survival function of the Cauchy distribution."""
    q, loc, scale = _inexact("cauchy.isf", q, loc, scale)
    return loc + scale * jnp.tan(math.pi * (0.5 - q))


def pareto_logpdf(x, b, loc=0, scale=1):
    """log density of the Pareto distribution with shape b."""
    z, log_s, (b,) = _std("pareto.logpdf", x, loc, scale, b)
    return jnp.where(z < 1, _NEG_INF, jnp.log(b) - log_s - (b + 1) * jnp.log(jnp.maximum(z, 1)))


def pareto_cdf(x, b, loc=0, scale=1):
    """CDF of the Pareto distribution."""
    z, _, (b,) = _std("pareto.cdf", x, loc, scale, b)
    return jnp.where(z < 1, 0.0, 1 - jnp.maximum(z, 1) ** (-b))


def pareto_sf(x, b, loc=0, scale=1):
    """Survival function of the Pareto distribution."""
    z, _, (b,) = _std("pareto.sf", x, loc, scale, b)
    return jnp.where(z < 1, 1.0, jnp.maximum(z, 1) ** (-b))


def pareto_ppf(q, b, loc=0, scale=1):
    """Quantile function of the Pareto distribution."""
    q, b, loc, scale = _inexact("pareto.ppf", q, b, loc, scale)
    return jnp.where((q < 0) | (q > 1), jnp.nan, loc + scale * (1 - q) ** (-1 / b))


def gennorm_logpdf(x, beta):
    """log density of the generalized normal distribution with shape beta."""
    x, beta = _inexact("gennorm.logpdf", x, beta)
    return jnp.log(beta) - math.log(2) - sp.gammaln(1 / beta) - jnp.abs(x) ** beta


def gennorm_cdf(x, beta):
    """CDF of the generalized normal distribution."""
    x, beta = _inexact("gennorm.cdf", x, beta)
    return 0.5 + jnp.sign(x) * 0.5 * sp.gammainc(1 / beta, jnp.abs(x) ** beta)


def truncnorm_logpdf(x, a, b, loc=0, scale=1):
    """log density of the normal distribution truncated to [a, b] (in standard units)."""
    z, log_s, (a, b) = _std("truncnorm.logpdf", x, loc, scale, a, b)
    log_mass = jnp.log(sp.ndtr(b) - sp.ndtr(a))
    lp = -0.5 * z * z - 0.5 * math.log(2 * math.pi) - log_mass - log_s
    return jnp.where((z < a) | (z > b), _NEG_INF, lp)


def truncnorm_cdf(x, a, b, loc=0, scale=1):
    """CDF of the truncated normal distribution."""
    z, _, (a, b) = _std("truncnorm.cdf", x, loc, scale, a, b)
    val = (sp.ndtr(jnp.clip(z, a, b)) - sp.ndtr(a)) / (sp.ndtr(b) - sp.ndtr(a))
    return jnp.clip(val, 0, 1)


def truncnorm_sf(x, a, b, loc=0, scale=1):
    """Survival function of the truncated normal distribution."""
    return 1 - truncnorm_cdf(x, a, b, loc, scale)


def vonmises_logpdf(x, kappa):
    """log density of the von Mises distribution with concentration kappa."""
    x, kappa = _inexact("vonmises.logpdf", x, kappa)
    return kappa * (jnp.cos(x) - 1) - math.log(2 * math.pi) - jnp.log(sp.i0e(kappa))


def wrapcauchy_logpdf(x, c):
    """log density of the wrapped Cauchy distribution on [0, 2 pi]."""
    x, c = _inexact("wrapcauchy.logpdf", x, c)
    lp = jnp.log1p(-c * c) - math.log(2 * math.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    return jnp.where((x < 0) | (x > 2 * math.pi), _NEG_INF, lp)


def gumbel_r_logpdf(x, loc=0, scale=1):
    """log density of the right-skewed Gumbel distribution."""
    z, log_s, _ = _std("gumbel_r.logpdf", x, loc, scale)
    return -z - jnp.exp(-z) - log_s


def gumbel_r_cdf(x, loc=0, scale=1):
    """CDF of the right-skewed Gumbel distribution."""
    z, _, _ = _std("gumbel_r.cdf", x, loc, scale)
    return jnp.exp(-jnp.exp(-z))


def gumbel_r_sf(x, loc=0, scale=1):
    """Survival function of the right-skewed Gumbel distribution."""
    z, _, _ = _std("gumbel_r.sf", x, loc, scale)
    return -jnp.expm1(-jnp.exp(-z))


def gumbel_r_ppf(p, loc=0, scale=1):
    """Quantile function of the right-skewed Gumbel distribution."""
    p, loc, scale = _inexact("gumbel_r.ppf", p, loc, scale)
    return jnp.where((p < 0) | (p > 1), jnp.nan, loc - scale * jnp.log(-jnp.log(p)))


def gumbel_l_logpdf(x, loc=0, scale=1):
    """log density of the left-skewed Gumbel distribution."""
    z, log_s, _ = _std("gumbel_l.logpdf", x, loc, scale)
    return z - jnp.exp(z) - log_s


def gumbel_l_cdf(x, loc=0, scale=1):
    """CDF of the left-skewed Gumbel distribution."""
    z, _, _ = _std("gumbel_l.cdf", x, loc, scale)
    return -jnp.expm1(-jnp.exp(z))


def gumbel_l_sf(x, loc=0, scale=1):
    """Survival function of the left-skewed Gumbel distribution."""
    z, _, _ = _std("gumbel_l.sf", x, loc, scale)
    return jnp.exp(-jnp.exp(z))


def gumbel_l_ppf(p, loc=0, scale=1):
    """Quantile function of the left-skewed Gumbel distribution."""
    p, loc, scale = _inexact("gumbel_l.ppf", p, loc, scale)
    return jnp.where((p < 0) | (p > 1), jnp.nan, loc + scale * jnp.log(-jnp.log1p(-p)))


# --- discrete --------------------------------------------------------------------------------------


def poisson_logpmf(k, mu, loc=0):
    """log probability of k under Poisson(mu)."""
    k, mu, loc = _inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    lp = sp.xlogy(x, mu) - sp.gammaln(x + 1) - mu
    return jnp.where((x < 0) | (x != jnp.round(x)), _NEG_INF, lp)


def poisson_cdf(k, mu, loc=0):
    """CDF of Poisson(mu) at k."""
    k, mu, loc = _inexact("poisson.cdf", k, mu, loc)
    x = jnp.floor(k - loc)
    return jnp.where(x < 0, 0.0, sp.gammaincc(jnp.maximum(x, 0) + 1, mu))


def bernoulli_logpmf(k, p, loc=0):
    """log probability of k under Bernoulli(p)."""
    k, p, loc = _inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    # JAX's 1 here is a strongly typed constant: the result is never weakly typed
    lp = sp.xlogy(x, p) + sp.xlog1py(jnp.asarray(1, x.dtype) - x, -p)
    return jnp.where((x < 0) | (x > 1), _NEG_INF, lp)


def bernoulli_cdf(k, p):
    """CDF of Bernoulli(p) at k."""
    k, p = _inexact("bernoulli.cdf", k, p)
    return jnp.where(k < 0, 0.0, jnp.where(k < 1, 1 - p, 1.0))


def bernoulli_ppf(q, p):
    """Quantile function of Bernoulli(p)."""
    q, p = _inexact("bernoulli.ppf", q, p)
    return jnp.where((q < 0) | (q > 1), jnp.nan, jnp.where(q <= 1 - p, 0.0, 1.0))


def binom_logpmf(k, n, p, loc=0):
    """log probability of k successes under Binomial(n, p)."""
    k, n, p, loc = _inexact("binom.logpmf", k, n, p, loc)
    x = k - loc
    comb = sp.gammaln(n + 1) - sp.gammaln(x + 1) - sp.gammaln(n - x + 1)
    lp = comb + sp.xlogy(x, p) + sp.xlog1py(n - x, -p)
    return jnp.where((x < 0) | (x > n), _NEG_INF, lp)


def geom_logpmf(k, p, loc=0):
    """log probability of k trials to the first success under Geometric(p)."""
    k, p, loc = _inexact("geom.logpmf", k, p, loc)
    x = k - loc
    return jnp.where(x < 1, _NEG_INF, sp.xlog1py(x - 1, -p) + jnp.log(p))


def nbinom_logpmf(k, n, p, loc=0):
    """log probability of k failures before n successes under NegativeBinomial(n, p)."""
    k, n, p, loc = _inexact("nbinom.logpmf", k, n, p, loc)
    x = k - loc
    lp = sp.gammaln(n + x) - sp.gammaln(x + 1) - sp.gammaln(n) + sp.xlogy(n, p) + sp.xlog1py(x, -p)
    return jnp.where(x < 0, _NEG_INF, lp)


def betabinom_logpmf(k, n, a, b, loc=0):
    """log probability of k under the beta-binomial distribution."""
    k, n, a, b, loc = _inexact("betabinom.logpmf", k, n, a, b, loc)
    x = k - loc
    comb = sp.gammaln(n + 1) - sp.gammaln(x + 1) - sp.gammaln(n - x + 1)
    lp = comb + sp.betaln(x + a, n - x + b) - sp.betaln(a, b)
    return jnp.where((x < 0) | (x > n), _NEG_INF, lp)


def multinomial_logpmf(x, n, p):
    """log probability of the count vector x (last axis) under Multinomial(n, p)."""
    x, n = jnp.asarray(x), jnp.asarray(n)
    if x.dtype.kind not in "iu" or n.dtype.kind not in "iu":
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    xf, pf = _inexact("multinomial.logpmf", x, p)
    terms = jnp.sum(sp.xlogy(xf, pf) - sp.gammaln(xf + 1), axis=-1)
    nf = jnp.broadcast_to(n.astype(xf.dtype), terms.shape)
    lp = jnp.reshape(sp.gammaln(jnp.reshape(nf, (-1,)) + 1), terms.shape) + terms
    # JAX compares the total over all of x (not per row) with n; kept for identical results.
    return jnp.where(jnp.sum(x) != n, _NEG_INF, lp)


# --- multivariate ---------------------------------------------------------------------------------


def multivariate_normal_logpdf(x, mean, cov, allow_singular=None):
    """log density of N(mean, cov) at x (last axis), via the Cholesky factor of cov."""
    from pyjax.scipy.linalg import solve_triangular

    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = (jnp.asarray(v) for v in _inexact_keep_shapes("multivariate_normal.logpdf", x, mean, cov))
    n = mean.shape[-1] if mean.ndim else 1
    if cov.ndim < 2:
        cov = jnp.eye(n, dtype=x.dtype) * cov
        diff = x - mean
        return -0.5 * jnp.sum(diff * diff / jnp.diagonal(cov), axis=-1) - 0.5 * (
            n * math.log(2 * math.pi) + jnp.sum(jnp.log(jnp.diagonal(cov)))
        )
    chol = jnp.linalg.cholesky(cov)
    diff = x - mean
    batch = jnp.broadcast_shapes(diff.shape[:-1], cov.shape[:-2])
    chol_b = jnp.broadcast_to(chol, batch + (n, n))
    y = solve_triangular(chol_b, jnp.broadcast_to(diff, batch + (n,))[..., None], lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-2, axis2=-1)), axis=-1)
    return -0.5 * jnp.sum(y * y, axis=-1) - log_det - 0.5 * n * math.log(2 * math.pi)


def _inexact_keep_shapes(name, *args):
    """Promote to a common floating dtype without broadcasting."""
    arrs = [jnp.asarray(a) for a in args]
    d = jnp.result_type(*arrs)
    if d.kind != "f":
        d = dtypes.default_float()
    return [a.astype(d) for a in arrs]


def dirichlet_logpdf(x, alpha):
    """log density of Dirichlet(alpha) at x; the category axis of x is its first axis (as JAX)."""
    x, alpha = _inexact_keep_shapes("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            f"`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    a = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    norm = jnp.sum(sp.gammaln(alpha)) - sp.gammaln(jnp.sum(alpha, keepdims=True))[0]
    lp = jnp.sum(sp.xlogy(a - 1, x), axis=0) - norm
    inside = jnp.all(x >= 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-4)
    return jnp.where(inside, lp, _NEG_INF)


# --- assembly ----------------------------------------------------------------------------------------


def _exp(f):
    def g(*args, **kw):
        return jnp.exp(f(*args, **kw))

    g.__doc__ = f"exp of {f.__name__}: the density (or probability) itself."
    return g


def _log(f):
    def g(*args, **kw):
        return jnp.log(f(*args, **kw))

    g.__doc__ = f"log of {f.__name__}."
    return g


def _collect():
    """{distribution: {function name: function}} from the definitions above, adding pdf/pmf and logs."""
    out: dict = {}
    g = globals()
    for dist in (
        "beta gamma chi2 t expon uniform laplace logistic cauchy pareto gennorm truncnorm vonmises wrapcauchy "
        "gumbel_r gumbel_l poisson bernoulli binom geom nbinom betabinom multinomial multivariate_normal dirichlet"
    ).split():
        fns = {k[len(dist) + 1 :]: v for k, v in g.items() if k.startswith(dist + "_") and callable(v)}
        if "logpdf" in fns:
            fns["pdf"] = _exp(fns["logpdf"])
        if "logpmf" in fns:
            fns["pmf"] = _exp(fns["logpmf"])
        for base in ("cdf", "sf"):
            if base in fns and "log" + base not in fns:
                fns["log" + base] = _log(fns[base])
        out[dist] = fns
    return out


DISTRIBUTIONS = _collect()
