"""jax.scipy.ndimage: map_coordinates with order 0 (nearest) or 1 (linear) interpolation and the
boundary modes JAX supports ('constant', 'nearest', 'wrap', 'mirror', 'reflect')."""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Sequence

from pyjax import numpy as jnp
from pyjax.lax import lax

__all__ = ["map_coordinates"]


def _mirror(index, size: int):
    """Fold index into [0, size) by a triangular wave with period 2 * (size - 1)."""
    half = size - 1
    return jnp.abs((index + half) % (2 * half) - half)


def _reflect(index, size: int):
    """Fold index into [0, size), repeating the edge samples (scipy's 'reflect')."""
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_MODES = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round_away(a):
    return a if jnp.issubdtype(a.dtype, jnp.integer) else lax.round(a)


def _nearest_nodes(coord) -> list:
    return [(_round_away(coord).astype(jnp.int32), None)]


def _linear_nodes(coord) -> list:
    lower = jnp.floor(coord)
    w_hi = coord - lower
    idx = lower.astype(jnp.int32)
    return [(idx, 1 - w_hi), (idx + 1, w_hi)]


def map_coordinates(input, coordinates: Sequence, order: int, mode: str = "constant", cval=0.0):
    """Sample input at the given per-axis coordinates by nearest (order=0) or linear (order=1)
    interpolation; 'constant' fills outside points with cval (JAX's grid-constant semantics)."""
    arr = jnp.asarray(input)
    coords = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, arr.dtype)
    if len(coords) != arr.ndim:
        raise ValueError(f"coordinates must be a sequence of length input.ndim, but {len(coords)} != {arr.ndim}")
    fixer = _MODES.get(mode)
    if fixer is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_MODES)}."
        )
    if order == 0:
        nodes_fn = _nearest_nodes
    elif order == 1:
        nodes_fn = _linear_nodes
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")

    per_axis = []
    for coord, size in zip(coords, arr.shape):
        items = []
        for idx, w in nodes_fn(coord):
            if mode == "constant":
                ok = (idx >= 0) & (idx < size)
                idx = jnp.clip(idx, 0, size - 1)  # masked below; clipping keeps the gather in range
            else:
                ok, idx = None, fixer(idx, size)
            items.append((idx, ok, w))
        per_axis.append(items)

    terms = []
    for combo in itertools.product(*per_axis):
        idxs = tuple(c[0] for c in combo)
        oks = [c[1] for c in combo if c[1] is not None]
        ws = [c[2] for c in combo if c[2] is not None]
        val = arr[idxs]
        if oks:
            val = jnp.where(functools.reduce(operator.and_, oks), val, cval)
        terms.append(functools.reduce(operator.mul, ws) * val if ws else val)
    out = functools.reduce(operator.add, terms)
    if jnp.issubdtype(arr.dtype, jnp.integer):
        out = _round_away(out)
    return out.astype(arr.dtype)
