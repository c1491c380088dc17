"""Rank statistics, jax.scipy.stats.rankdata and mode: both sort a slice once and read its runs.

A run is a block of equal sorted values (NaNs count as equal to each other, as JAX's mode does);
each element's run start and end come from a cumulative max/min over the run boundaries, so
both functions are O(n log n) and need no data-dependent shapes.
"""

from __future__ import annotations

from typing import NamedTuple

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.lax import lax


class ModeResult(NamedTuple):
    mode: object
    count: object


def _runs(s):
    """For sorted s (runs along the last axis): each element's run start and end index."""
    n = s.shape[-1]
    same = (s[..., 1:] == s[..., :-1]) | (jnp.isnan(s[..., 1:]) & jnp.isnan(s[..., :-1]))
    idx = lax.broadcasted_iota(jnp.int32, s.shape, s.ndim - 1)
    false = jnp.zeros(s.shape[:-1] + (1,), bool)
    starts = jnp.concatenate([~false, ~same], axis=-1)
    ends = jnp.concatenate([~same, ~false], axis=-1)
    first = lax.cummax(jnp.where(starts, idx, 0), axis=s.ndim - 1)
    last = lax.cummin(jnp.where(ends, idx, n - 1), axis=s.ndim - 1, reverse=True)
    return first, last


def _check_nan_policy(nan_policy):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of {{'propagate', 'omit', 'raise'}}")
    if nan_policy != "propagate":
        raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")


_RANKS = {
    "ordinal": lambda first, last, pos, starts: pos + 1,
    "min": lambda first, last, pos, starts: first + 1,
    "max": lambda first, last, pos, starts: last + 1,
    "average": lambda first, last, pos, starts: (first + last + 2) / 2,
    "dense": lambda first, last, pos, starts: jnp.cumsum(starts, axis=-1),
}


def rankdata(a, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate"):
    """Ranks of the data (1-based), ties resolved by `method`; a slice holding a NaN ranks as all NaN."""
    if method not in _RANKS:
        raise ValueError(f"unknown method '{method}'")
    _check_nan_policy(nan_policy)
    a = jnp.asarray(a)
    if axis is None:
        return rankdata(jnp.ravel(a), method, axis=-1)
    a = jnp.moveaxis(a, axis, -1)
    order = jnp.argsort(a, axis=-1, stable=True)
    s = jnp.take_along_axis(a, order, axis=-1)
    first, last = _runs(s)
    pos = lax.broadcasted_iota(jnp.int32, s.shape, s.ndim - 1)
    starts = first == pos
    ranked = _RANKS[method](first, last, pos, starts).astype(dtypes.default_float())
    inverse = jnp.argsort(order, axis=-1)
    out = jnp.take_along_axis(ranked, inverse, axis=-1)
    if jnp.issubdtype(a.dtype, jnp.inexact):
        out = jnp.where(jnp.any(jnp.isnan(a), axis=-1, keepdims=True), jnp.nan, out)
    return jnp.moveaxis(out, -1, axis)


def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most common value along axis (the smallest one among ties) and how often it occurs."""
    _check_nan_policy(nan_policy)
    x = jnp.atleast_1d(jnp.asarray(a))
    shape = x.shape
    if axis is None:
        x, ax = jnp.ravel(x), 0
    else:
        ax = axis + x.ndim if axis < 0 else axis
        if not 0 <= ax < x.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {x.ndim}")
    s = jnp.sort(jnp.moveaxis(x, ax, -1), axis=-1)
    first, last = _runs(s)
    count = last - first + 1
    best = jnp.argmax(count, axis=-1, keepdims=True)
    m = jnp.take_along_axis(s, best, axis=-1)[..., 0]
    c = jnp.take_along_axis(count, best, axis=-1)[..., 0]
    if keepdims:
        kept = tuple(1 for _ in shape) if axis is None else shape[:ax] + (1,) + shape[ax + 1 :]
        m, c = m.reshape(kept), c.reshape(kept)
    return ModeResult(m, c)
