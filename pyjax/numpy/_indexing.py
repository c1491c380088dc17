"""Indexing: x[idx] (basic and advanced), x.at[idx] updates, take, take_along_axis."""

from __future__ import annotations

import builtins
import operator

from pyjax.core import core
from pyjax.core.core import Tracer
from pyjax.lax import lax
from pyjax.numpy import _core as jnp
from pyjax.runtime.array import Array


def _is_basic(i) -> bool:
    return i is None or i is Ellipsis or isinstance(i, builtins.slice) or (
        isinstance(i, builtins.int) and not isinstance(i, builtins.bool))


def _expand_ellipsis(idx: tuple, nd: int) -> tuple:
    n_real = builtins.sum(1 for i in idx if i is not None and i is not Ellipsis and not (
        hasattr(i, "dtype") and jnp._aval(i).dtype.kind == "b" and jnp._aval(i).ndim > 1))
    n_real += builtins.sum(jnp._aval(i).ndim - 1 for i in idx if hasattr(i, "dtype") and not isinstance(i, builtins.slice)
                           and jnp._aval(i).dtype.kind == "b" and jnp._aval(i).ndim > 1)
    if builtins.sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in [i for i in idx if i is Ellipsis]:
        k = [j for j, i in enumerate(idx) if i is Ellipsis][0]
        return idx[:k] + (builtins.slice(None),) * (nd - n_real) + idx[k + 1 :]
    return idx + (builtins.slice(None),) * builtins.max(0, nd - n_real)


def getitem(x, idx):
    """x[idx] for ints, slices (any step), None, Ellipsis; advanced indices use gather."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    if builtins.all(_is_basic(i) for i in idx):
        return _basic(x, idx)
    from pyjax.numpy._advanced import advanced_getitem

    return advanced_getitem(x, idx)


def _basic(x, idx):
    shape = jnp._aval(x).shape
    nd = len(shape)
    idx = _expand_ellipsis(idx, nd)
    n_real = builtins.sum(1 for i in idx if i is not None)
    if n_real > nd:
        raise IndexError(f"Too many indices: {nd}-dimensional array indexed with {n_real} regular indices.")
    starts, limits, strides, flips, out_shape_ops = [], [], [], [], []
    axis = 0
    squeeze_axes = []
    new_axes = []
    for i in idx:
        if i is None:
            new_axes.append(len(out_shape_ops))
            out_shape_ops.append(("new",))
            continue
        n = shape[axis]
        if isinstance(i, builtins.slice):
            start, stop, step = i.indices(n)
            if step > 0:
                cnt = builtins.max(0, (stop - start + step - 1) // step)
                starts.append(start)
                limits.append(start + (cnt - 1) * step + 1 if cnt else start)
                strides.append(step)
                flips.append(False)
            else:
                cnt = builtins.max(0, (start - stop - step - 1) // (-step))
                lo = start + (cnt - 1) * step if cnt else 0
                starts.append(lo if cnt else 0)
                limits.append(start + 1 if cnt else 0)
                strides.append(-step)
                flips.append(True)
            out_shape_ops.append(("keep", axis))
        else:
            i = operator.index(i)
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
            i %= n
            starts.append(i)
            limits.append(i + 1)
            strides.append(1)
            flips.append(False)
            squeeze_axes.append(axis)
        axis += 1
    y = lax.slice(x, starts, limits, strides)
    fl = tuple(a for a, f in enumerate(flips) if f)
    if fl:
        y = lax.rev(y, fl)
    ys = jnp._aval(y).shape
    final = []
    for op in out_shape_ops:
        final.append(1 if op[0] == "new" else ys[op[1]])
    if tuple(final) != ys:
        y = lax.reshape(y, tuple(final))
    return y


class _IndexUpdateHelper:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.x, idx)


class _IndexUpdateRef:
    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
        from pyjax.numpy._advanced import advanced_getitem

        idx = self.idx if isinstance(self.idx, tuple) else (self.idx,)
        if mode is None or mode == "promise_in_bounds" or mode == "clip":
            return getitem(self.x, self.idx)
        return advanced_getitem(self.x, idx, mode=mode, fill_value=fill_value)

    def _update(self, kind, values, mode=None):
        from pyjax.numpy._advanced import scatter_update

        return scatter_update(self.x, self.idx, values, kind, mode=mode)

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("set", values, mode)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("add", values, mode)

    def subtract(self, values, **kw):
        return self._update("add", jnp.negative(values), kw.get("mode"))

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("mul", values, mode)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("mul", jnp.reciprocal(values), mode)

    def power(self, values, **kw):
        return self._update("pow", values, kw.get("mode"))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("min", values, mode)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None):
        return self._update("max", values, mode)

    def apply(self, func, **kw):
        return self.set(func(self.get()))


core = core
Tracer = Tracer
Array = Array
