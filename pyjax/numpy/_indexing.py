"""Indexing front end: x[idx] and the x.at[idx] update helpers (the work is in _advanced)."""

from __future__ import annotations

from collections.abc import Callable

from pyjax.numpy import _core as jnp
from pyjax.numpy._advanced import (  # noqa: F401  (re-exported for _core's lazy imports)
    advanced_getitem,
    nonzero,
    scatter_update,
    take,
    take_along_axis,
)

_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")


def getitem(x, idx):
    """x[idx] with numpy's basic and advanced indexing (out-of-range indices clamp, as in JAX)."""
    return advanced_getitem(x, idx)


class _IndexUpdateHelper:
    """The `x.at` property: `x.at[idx]` gives an _IndexUpdateRef."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.x, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.x!r})"


class _IndexUpdateRef:
    """x.at[idx]: functional versions of x[idx] = v, x[idx] += v, ... (JAX's .at API)."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def __repr__(self):
        return f"_IndexUpdateRef({self.x!r}, {self.idx!r})"

    def get(
        self,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        fill_value=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx]; mode='fill' gives fill_value (default NaN/INT_MIN/UINT_MAX/True) out of range."""
        return advanced_getitem(self.x, self.idx, mode=mode, fill_value=fill_value)

    def _update(self, kind, values, mode, unique_indices=False):
        return scatter_update(self.x, self.idx, values, kind, mode=mode, unique_indices=unique_indices)

    def set(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] = values (out-of-range updates are dropped unless mode='clip')."""
        return self._update("set", values, mode, unique_indices)

    def add(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] += values (repeated indices accumulate)."""
        return self._update("add", values, mode, unique_indices)

    def subtract(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] -= values."""
        values = values if jnp._is_array(values) else jnp.asarray(values)
        values = values.astype(jnp._aval(self.x).dtype) if jnp._is_array(self.x) else values
        return self._update("add", jnp.negative(values), mode, unique_indices)

    def multiply(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] *= values."""
        return self._update("mul", values, mode, unique_indices)

    mul = multiply

    def divide(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] /= values, as x / (ones with values multiplied in at idx), like JAX."""
        x = self.x if jnp._is_array(self.x) else jnp.asarray(self.x)
        ones = scatter_update(jnp.ones_like(x), self.idx, values, "mul", mode=mode, unique_indices=unique_indices)
        return jnp.true_divide(x, ones)

    def power(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] **= values, as x ** (ones with values multiplied in at idx), like JAX."""
        x = self.x if jnp._is_array(self.x) else jnp.asarray(self.x)
        ones = scatter_update(jnp.ones_like(x), self.idx, values, "mul", mode=mode, unique_indices=unique_indices)
        return jnp.power(x, ones)

    def min(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] = minimum(x[idx], values)."""
        return self._update("min", values, mode, unique_indices)

    def max(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx] = maximum(x[idx], values)."""
        return self._update("max", values, mode, unique_indices)

    def apply(
        self, func: Callable, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True
    ):
        """x[idx] = func(x[idx]) (func applied once per distinct index)."""
        return self._update("set", func(self.get(mode=mode)), mode, unique_indices)
