"""jax.scipy.interpolate: RegularGridInterpolator (linear / nearest on a rectilinear grid)."""

from __future__ import annotations

import itertools

from pyjax import numpy as jnp
from pyjax.core import dtypes as _dtypes
from pyjax.core.pytree import register_pytree_node
from pyjax.numpy._promotion import _check_arraylike

__all__ = ["RegularGridInterpolator"]

_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _inexact(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(_dtypes.default_float())


def _points_array(xi, ndim: int):
    """xi as one (..., ndim) array: a tuple of per-axis coordinate arrays is broadcast and stacked."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = jnp.broadcast_arrays(*xi)
        return jnp.stack([p.astype(_dtypes.default_float()) for p in parts], axis=-1)
    _check_arraylike("_ndim_coords_from_arrays", xi)
    xi = jnp.asarray(xi)
    return xi.reshape(-1, ndim) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolate `values` given on the grid `points` (each axis strictly increasing); outside the
    grid the result is fill_value (NaN by default; None extrapolates). bounds_error is unsupported."""

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False, fill_value=float("nan")):
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if self.bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        _check_arraylike("RegularGridInterpolator", values)
        if len(points) > jnp.ndim(values):
            raise ValueError(f"there are {len(points)} point arrays, but values has {jnp.ndim(values)} dimensions")
        values = _inexact(values)
        if fill_value is not None:
            _check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if _KIND_RANK[fill_value.dtype.kind] > _KIND_RANK[values.dtype.kind]:  # numpy's same_kind rule
                raise ValueError("fill_value must be either 'None' or of a type compatible with values")
        self.fill_value = fill_value
        _check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method: str | None = None):
        """Interpolated values at xi (shape (..., ndim), or a tuple of per-axis arrays)."""
        method = self.method if method is None else method
        if method not in ("linear", "nearest"):
            raise ValueError(f"method {method!r} is not defined")
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(
                f"the requested sample points xi have dimension {xi.shape[1]}, but this "
                f"RegularGridInterpolator has dimension {ndim}"
            )
        lead = xi.shape[:-1]
        xi = xi.reshape(-1, ndim)
        idx, frac, outside = self._locate(xi.T)
        out = self._linear(idx, frac) if method == "linear" else self._nearest(idx, frac)
        if self.fill_value is not None:
            out = jnp.where(outside.reshape(out.shape[:1] + (1,) * (out.ndim - 1)), self.fill_value, out)
        return out.reshape(lead + self.values.shape[ndim:])

    def _locate(self, xi):
        idx, frac = [], []
        outside = jnp.zeros((xi.shape[1],), dtype=bool)
        for x, g in zip(xi, self.grid):
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            idx.append(i)
            frac.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return idx, frac, outside

    def _linear(self, idx, frac):
        tail = (slice(None),) + (None,) * (self.values.ndim - len(idx))
        acc = jnp.asarray(0.0)
        for corner in itertools.product(*[(0, 1) for _ in idx]):
            w = jnp.asarray(1.0)
            for up, t in zip(corner, frac):
                w = w * (t if up else 1 - t)
            acc = acc + self.values[tuple(i + up for up, i in zip(corner, idx))] * w[tail]
        return acc

    def _nearest(self, idx, frac):
        return self.values[tuple(jnp.where(t <= 0.5, i, i + 1) for i, t in zip(idx, frac))]


register_pytree_node(
    RegularGridInterpolator,
    lambda o: ((o.grid, o.values, o.fill_value), (o.method, o.bounds_error)),
    lambda aux, ch: RegularGridInterpolator(ch[0], ch[1], aux[0], aux[1], ch[2]),
)
