"""Helpers shared by the library modules: the lazy numpy import of the lax modules composed from
primitives, and canonical_axis (the one axis check of numpy, lax and random)."""

from __future__ import annotations

import operator


def _jnp():
    import pyjax.numpy as jnp

    return jnp


def _arr(x):
    from pyjax.numpy import _core

    return x if _core._is_array(x) else _core.asarray(x)


def canonical_axis(axis, nd: int, fn: str = "", *, scalar_ok: bool = False) -> int:
    """axis as a non-negative int below nd, or numpy's ValueError naming fn; scalar_ok lets a 0-d operand
    take axis 0 (the functions that treat a scalar as one element)."""
    axis = operator.index(axis)
    hi = max(nd, 1) if scalar_ok else nd
    if not -nd <= axis < hi:
        prefix = f"{fn}: " if fn else ""
        raise ValueError(f"{prefix}axis {axis} is out of bounds for array of dimension {nd}")
    return axis % hi
