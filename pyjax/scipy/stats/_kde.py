"""jax.scipy.stats.gaussian_kde: a weighted Gaussian kernel density estimate, a pytree like JAX's.

The bandwidth scales the data's weighted covariance by factor**2 ("scott", "silverman", a scalar
or a callable of the estimate). Densities are evaluated in the whitened space of the kernel's
precision matrix: each point's density is a weighted sum (logsumexp for logpdf) of unit normals.
"""

from __future__ import annotations

import math

from pyjax import numpy as jnp
from pyjax import random
from pyjax.core import dtypes
from pyjax.scipy import linalg, special
from pyjax.tree_util import register_pytree_node_class

_FIELDS = ("neff", "dataset", "weights", "covariance", "inv_cov")


def _bandwidth(kde, bw_method, d):
    """The covariance scale factor of bw_method."""
    if bw_method is None or (isinstance(bw_method, str) and bw_method == "scott"):
        return jnp.power(kde.neff, -1.0 / (d + 4))
    if isinstance(bw_method, str) and bw_method == "silverman":
        return jnp.power(kde.neff * (d + 2) / 4.0, -1.0 / (d + 4))
    if not isinstance(bw_method, str) and jnp.isscalar(bw_method):
        return bw_method
    if callable(bw_method):
        return bw_method(kde)
    raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")


def _reject_complex(x, what):
    if dtypes.is_complex(jnp.result_type(x)):
        raise NotImplementedError(f"gaussian_kde does not support complex {what}")


@register_pytree_node_class
class gaussian_kde:
    """Gaussian kernel density estimate of `dataset` (shape (n,) or (d, n)), optionally weighted."""

    __slots__ = _FIELDS

    def __init__(self, dataset, bw_method=None, weights=None):
        _reject_complex(dataset, "data")
        dataset = jnp.atleast_2d(jnp.asarray(dataset))
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is None:
            dataset = jnp.asarray(dataset, dtype=jnp.result_type(dataset, float))
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        else:
            ft = jnp.result_type(dataset, weights, float)
            dataset, weights = dataset.astype(ft), jnp.atleast_1d(jnp.asarray(weights, ft))
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise ValueError("`weights` input should be of length n")
        object.__setattr__(self, "dataset", dataset)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "neff", 1 / jnp.sum(weights**2))
        factor = _bandwidth(self, bw_method, d)
        cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        object.__setattr__(self, "covariance", cov * factor**2)
        object.__setattr__(self, "inv_cov", jnp.linalg.inv(cov) / factor**2)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}")

    def tree_flatten(self):
        return tuple(getattr(self, f) for f in _FIELDS), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        kde = cls.__new__(cls)
        for f, c in zip(_FIELDS, children):
            object.__setattr__(kde, f, c)
        return kde

    @property
    def d(self):
        return self.dataset.shape[0]

    @property
    def n(self):
        return self.dataset.shape[1]

    def _points(self, points):
        _reject_complex(points, "coordinates")
        points = jnp.atleast_2d(jnp.asarray(points))
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return points.reshape(self.d, 1)
            raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _log_kernels(self, points):
        """log N(x_j - data_i) under the kernel covariance, shape (n, m), and the promoted weights."""
        x = self._points(points)
        ft = jnp.result_type(self.dataset, x, self.inv_cov, float)
        white = jnp.linalg.cholesky(self.inv_cov.astype(ft))  # inv_cov = W W^T
        data, x = self.dataset.astype(ft).T @ white, x.astype(ft).T @ white
        sq = jnp.sum(jnp.square(data[:, None, :] - x[None, :, :]), axis=-1)
        log_norm = jnp.sum(jnp.log(jnp.diagonal(white))) - 0.5 * self.d * math.log(2 * math.pi)
        return log_norm - 0.5 * sq, self.weights.astype(ft)

    def evaluate(self, points):
        """The estimated density at points (shape (d, m), or (m,) when d == 1)."""
        logk, w = self._log_kernels(points)
        return jnp.sum(w[:, None] * jnp.exp(logk), axis=0)

    __call__ = pdf = evaluate

    def logpdf(self, x):
        """log of the estimated density at x."""
        logk, w = self._log_kernels(x)
        return special.logsumexp(logk + jnp.log(w)[:, None], axis=0)

    def _convolve(self, chol, norm, target, weights, means):
        """norm * sum_i weights_i N(target_i - mean) for each column mean of means, shape (k,)."""
        diff = (target[:, :, None] - means[:, None, :]).reshape(self.d, -1)
        quad = jnp.sum(diff * linalg.cho_solve(chol, diff), axis=0).reshape(target.shape[1], means.shape[1])
        return norm * jnp.sum(jnp.exp(-0.5 * quad) * weights[:, None], axis=0)

    def _gauss_norm(self, cov):
        chol = linalg.cho_factor(self.covariance + cov)
        return chol, 1.0 / (math.sqrt(2 * math.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the Gaussian N(mean, cov)."""
        mean, cov = jnp.atleast_1d(jnp.squeeze(jnp.asarray(mean))), jnp.atleast_2d(jnp.asarray(cov))
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol, norm = self._gauss_norm(cov)
        return self._convolve(chol, norm, self.dataset, self.weights, mean[:, None])[0]

    def integrate_box_1d(self, low, high):
        """The probability mass between the scalars low and high (1-D estimates only)."""
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if jnp.ndim(low) != 0 or jnp.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        lo = jnp.squeeze((low - self.dataset) / sigma)
        hi = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(hi) - special.ndtr(lo)))

    def integrate_kde(self, other):
        """The integral of the product of this estimate and another."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol, norm = self._gauss_norm(other.covariance)
        small, large = (self, other) if self.n < other.n else (other, self)
        per = self._convolve(chol, norm, large.dataset, large.weights, small.dataset)
        return jnp.sum(per * small.weights)

    def resample(self, key, shape=()):
        """Samples of shape (d,) + shape drawn from the estimate (the same bits as JAX for a key)."""
        shape = tuple(shape)
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        zero = jnp.zeros(self.d, self.covariance.dtype)
        eps = random.multivariate_normal(eps_key, zero, self.covariance, shape=shape, dtype=self.dataset.dtype)
        return self.dataset[:, ind] + eps.T

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not in JAX either: only 1-D boxes (integrate_box_1d)."""
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not in JAX either: the bandwidth is fixed at construction."""
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")
