"""Operators and methods shared by concrete Arrays and tracers (registered in core/hooks.py)."""

from __future__ import annotations

import builtins
import sys

from pyjax.core import core, dtypes, hooks
from pyjax.lax import lax
from pyjax.numpy import _elementwise, _manipulation, _products, _reductions
from pyjax.numpy._promotion import array, astype
from pyjax.runtime.array import Array

_NOT_IMPLEMENTED_TYPES = (str, bytes, dict, set)
# Operands whose type outranks tracers (1000) handle the operator themselves (sparse arrays' reflected ops)
_DEFER_PRIORITY = 1000


def _defer(fn, swap=False):
    def op(self, other):
        t = type(other)
        if t is Array or t is builtins.float or t is builtins.int:  # the common operands: straight through
            return fn(other, self) if swap else fn(self, other)
        if isinstance(other, _NOT_IMPLEMENTED_TYPES) or (isinstance(other, (list, tuple))):
            return NotImplemented
        priority = getattr(other, "__array_priority__", 0)
        if isinstance(priority, (int, float)) and priority > _DEFER_PRIORITY:
            return NotImplemented
        if hasattr(other, "__jax_array__"):
            other = other.__jax_array__()
        return fn(other, self) if swap else fn(self, other)

    return op


def _matmul(a, b):
    return _products.matmul(a, b)


def _getitem(self, idx):
    from pyjax.numpy._indexing import getitem

    return getitem(self, idx)


def _astype(self, dtype, copy=False, device=None):
    return astype(self, dtype)


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _manipulation.reshape(self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and (isinstance(axes[0], (tuple, list)) or axes[0] is None):
        axes = axes[0]
    return _manipulation.transpose(self, axes or None)


def _sort(self, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    from pyjax.numpy._sorting import sort

    return sort(self, axis=axis, stable=stable, descending=descending)


def _argsort(self, axis=-1, kind=None, order=None, *, stable=True, descending=False):
    from pyjax.numpy._sorting import argsort

    return argsort(self, axis=axis, stable=stable, descending=descending)


def _at(self):
    from pyjax.numpy._indexing import _IndexUpdateHelper

    return _IndexUpdateHelper(self)


def _round(self, decimals=0):
    return _elementwise.round(self, decimals)


def _neg_check(self):
    if dtypes.dtype(self.dtype).kind == "b":
        raise TypeError(
            "The numpy boolean negative, the `-` operator, is not supported, use the `~` operator "
            "or the logical_not function instead."
        )
    return _elementwise.negative(self)


def _view(self, dtype=None, type=None):
    """x.view(dtype): the same bytes as another dtype; the last axis grows or shrinks by the size ratio
    (numpy's rule); bools are bytes (0 or 1 in, nonzero -> True out)."""
    if dtype is None:
        return self
    new = dtypes.dtype(dtype)
    x = lax.convert_element_type(self, dtypes.uint8) if self.dtype == dtypes.bool_ else self
    target = dtypes.uint8 if new == dtypes.bool_ else new
    old_size, new_size = x.dtype.itemsize, target.itemsize
    if old_size != new_size and x.ndim == 0:
        raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
    if new_size > old_size:
        ratio, last = new_size // old_size, x.shape[-1]
        if last % ratio:
            raise ValueError(
                "When changing to a larger dtype, its size must be a divisor of the total size in bytes of the last "
                "axis of the array."
            )
        x = lax.reshape(x, x.shape[:-1] + (last // ratio, ratio))
    out = lax.bitcast_convert_type(x, target)
    if new_size < old_size:
        out = lax.reshape(out, x.shape[:-1] + (x.shape[-1] * (old_size // new_size),))
    return lax.ne(out, lax.full((), 0, dtypes.uint8)) if new == dtypes.bool_ else out


def _clip(self, min=None, max=None):
    return _elementwise.clip(self, min, max)


def _argpartition(self, kth, axis=-1, kind="introselect", order=None):
    from pyjax.numpy._sorting import argpartition

    return argpartition(self, kth, axis)


def _searchsorted(self, v, side="left", sorter=None, *, method="scan"):
    from pyjax.numpy._sorting import searchsorted

    return searchsorted(self, v, side, sorter, method=method)


def _nonzero(self, *, fill_value=None, size=None):
    from pyjax.numpy._indexing import nonzero

    return nonzero(self, size=size, fill_value=fill_value)


def _take(
    self, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False, fill_value=None
):
    from pyjax.numpy._indexing import take

    return take(self, indices, axis, out, mode, unique_indices, indices_are_sorted, fill_value)


def _choose(self, choices, out=None, mode="raise"):
    from pyjax.numpy._indexing import choose

    return choose(self, choices, out, mode)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    from pyjax.numpy._indexing import compress

    return compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _copy(self, order=None):
    return array(self, copy=True)


METHODS = {
    "__add__": _defer(_elementwise.add),
    "__radd__": _defer(_elementwise.add, True),
    "__sub__": _defer(_elementwise.subtract),
    "__rsub__": _defer(_elementwise.subtract, True),
    "__mul__": _defer(_elementwise.multiply),
    "__rmul__": _defer(_elementwise.multiply, True),
    "__truediv__": _defer(_elementwise.true_divide),
    "__rtruediv__": _defer(_elementwise.true_divide, True),
    "__floordiv__": _defer(_elementwise.floor_divide),
    "__rfloordiv__": _defer(_elementwise.floor_divide, True),
    "__mod__": _defer(_elementwise.remainder),
    "__rmod__": _defer(_elementwise.remainder, True),
    "__divmod__": _defer(_elementwise.divmod),
    "__rdivmod__": _defer(_elementwise.divmod, True),
    "__pow__": _defer(_elementwise.power),
    "__rpow__": _defer(_elementwise.power, True),
    "__matmul__": _defer(_matmul),
    "__rmatmul__": _defer(_matmul, True),
    "__and__": _defer(_elementwise.bitwise_and),
    "__rand__": _defer(_elementwise.bitwise_and, True),
    "__or__": _defer(_elementwise.bitwise_or),
    "__ror__": _defer(_elementwise.bitwise_or, True),
    "__xor__": _defer(_elementwise.bitwise_xor),
    "__rxor__": _defer(_elementwise.bitwise_xor, True),
    "__lshift__": _defer(_elementwise.left_shift),
    "__rlshift__": _defer(_elementwise.left_shift, True),
    "__rshift__": _defer(_elementwise.right_shift),
    "__rrshift__": _defer(_elementwise.right_shift, True),
    "__lt__": _defer(_elementwise.less),
    "__le__": _defer(_elementwise.less_equal),
    "__gt__": _defer(_elementwise.greater),
    "__ge__": _defer(_elementwise.greater_equal),
    "__eq__": _defer(_elementwise.equal),
    "__ne__": _defer(_elementwise.not_equal),
    "__neg__": _neg_check,
    "__pos__": _elementwise.positive,
    "__abs__": _elementwise.absolute,
    "__invert__": _elementwise.bitwise_not,
    "__getitem__": _getitem,
    "sum": _reductions.sum,
    "mean": _reductions.mean,
    "max": _reductions.max,
    "min": _reductions.min,
    "prod": _reductions.prod,
    "var": _reductions.var,
    "std": _reductions.std,
    "argmax": _reductions.argmax,
    "argmin": _reductions.argmin,
    "all": _reductions.all,
    "any": _reductions.any,
    "cumsum": _reductions.cumsum,
    "cumprod": _reductions.cumprod,
    "reshape": _reshape,
    "transpose": _transpose,
    "astype": _astype,
    "ravel": _manipulation.ravel,
    "flatten": _manipulation.ravel,
    "squeeze": _manipulation.squeeze,
    "clip": _clip,
    "round": _round,
    "sort": _sort,
    "argsort": _argsort,
    "swapaxes": _manipulation.swapaxes,
    "dot": _products.dot,
    "diagonal": _manipulation.diagonal,
    "trace": _manipulation.trace,
    "ptp": _reductions.ptp,
    "repeat": _manipulation.repeat,
    "view": _view,
    "nonzero": _nonzero,
    "take": _take,
    "searchsorted": _searchsorted,
    "argpartition": _argpartition,
    "choose": _choose,
    "compress": _compress,
    "copy": _copy,
    "conj": lambda self: _elementwise.conjugate(self),
    "conjugate": lambda self: _elementwise.conjugate(self),
    "__array_namespace__": lambda self, *, api_version=None: sys.modules["pyjax.numpy"],  # the Array API's
}

PROPERTIES = {
    "T": lambda self: _manipulation.transpose(self),
    "mT": lambda self: _manipulation.swapaxes(self, -1, -2),
    "at": _at,
    "real": lambda self: _elementwise.real(self),
    "imag": lambda self: _elementwise.imag(self),
    "flat": lambda self: _manipulation.ravel(self),
}


def install() -> None:
    """Register the operators, methods and properties of Array and Tracer (core.ArrayMethods
    forwards to these tables; nothing of the lower layers is patched)."""
    if set(METHODS) != set(core.METHODS) or set(PROPERTIES) != set(core.PROPERTIES):
        raise RuntimeError("pyjax.numpy's array methods differ from the names core.ArrayMethods declares")
    hooks.methods.update(METHODS)
    hooks.properties.update(PROPERTIES)


builtins = builtins
