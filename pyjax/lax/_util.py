"""Helpers shared by the library modules: _arr (an operand as an array, through the asarray that
pyjax.numpy registers in core/hooks.py), canonical_axis (the one axis check of numpy, lax and random) and static_ints (the window parameters of
convolutions and reduce_window)."""

from __future__ import annotations

import operator

from pyjax.core import hooks


def _arr(x):
    return hooks.op("asarray")(x)


def canonical_axis(axis, nd: int, fn: str = "", *, scalar_ok: bool = False) -> int:
    """axis as a non-negative int below nd, or numpy's ValueError naming fn; scalar_ok lets a 0-d operand
    take axis 0 (the functions that treat a scalar as one element)."""
    axis = operator.index(axis)
    hi = max(nd, 1) if scalar_ok else nd
    if not -nd <= axis < hi:
        prefix = f"{fn}: " if fn else ""
        raise ValueError(f"{prefix}axis {axis} is out of bounds for array of dimension {nd}")
    return axis % hi


def static_ints(fn: str, name: str, v, n: int, per: str, length_error: type[Exception] = ValueError) -> tuple:
    """The static int sequence `v` (None means all ones) with one entry per `per` (n in all), or an
    error naming fn and the parameter."""
    if v is None:
        return (1,) * n
    try:
        out = tuple(operator.index(s) for s in v)
    except TypeError as e:
        raise TypeError(f"{fn} {name} must be a sequence of ints, got {v!r}") from e
    if len(out) != n:
        raise length_error(f"{fn} {name} must have {n} entries (one per {per}), got {len(out)}: {v!r}")
    return out
