"""pyjax.scipy.stats.norm: the normal distribution's logpdf, pdf, cdf, logcdf, ppf, sf."""

from __future__ import annotations

import math
from typing import Any

from pyjax import numpy as jnp
from pyjax.scipy import special


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the normal density at x."""
    x, loc, scale = special._promote_inexact("norm.logpdf", x, loc, scale)
    log_normalizer = jnp.log(scale) + 0.5 * math.log(2 * math.pi)
    return -0.5 * jnp.square((x - loc) / scale) - log_normalizer


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal density at x."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The normal CDF at x."""
    x, loc, scale = special._promote_inexact("norm.cdf", x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the normal CDF at x."""
    x, loc, scale = special._promote_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function 1 - cdf(x)."""
    x, loc, scale = special._promote_inexact("norm.sf", x, loc, scale)
    return special.ndtr(-(x - loc) / scale)


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function (inverse CDF)."""
    q, loc, scale = special._promote_inexact("norm.ppf", q, loc, scale)
    return special.ndtri(q) * scale + loc


def logsf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the survival function."""
    x, loc, scale = special._promote_inexact("norm.logsf", x, loc, scale)
    return special.log_ndtr(-(x - loc) / scale)


def isf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The inverse survival function: ppf(1 - q)."""
    q, loc, scale = special._promote_inexact("norm.isf", q, loc, scale)
    return loc - special.ndtri(q) * scale
