"""jnp.add, jnp.multiply, ... as jnp.ufunc objects (JAX's ufunc API): call, reduce, accumulate, outer, at.

Each wraps the array function it replaces (calls go straight to it); reduce and accumulate use the
matching reduction (add.reduce is sum, multiply.accumulate is cumprod, ...) where one exists, else the
generic fold of jnp.ufunc; at(a, indices, b, inplace=False) is a scatter (`a.at[indices].add(b)`, ...).
"""

from __future__ import annotations

from typing import Any

from pyjax.numpy import _bits, _core

__all__ = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2", "logical_and"]
__all__ += ["logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative", "subtract"]

_INPLACE = (
    "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like np.ufunc.at(). Instead, you "
    "can pass inplace=False and capture the result; e.g.\n>>> arr = jnp.add.at(arr, ind, val, inplace=False)"
)


class _ArrayUfunc(_bits.ufunc):
    """A ufunc over an existing jnp function, with fast reduce/accumulate/at where jnp has them."""

    def __init__(self, fn, nin: int, identity: Any = None, reduce=None, accumulate=None, at: str | None = None):
        super().__init__(fn, nin, 1, name=fn.__name__, identity=identity)
        self._fn, self._reduce, self._accumulate, self._at = fn, reduce, accumulate, at
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        if self._reduce is None:
            return super().reduce(a, axis, dtype, out, keepdims, initial, where)
        if out is not None:
            raise NotImplementedError(f"{self.__name__}.reduce: the 'out' argument is not supported")
        kw = {"initial": initial} if initial is not None else {}
        if where is not None:
            kw["where"] = where
        return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, **kw)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        if self._accumulate is None:
            return super().accumulate(a, axis, dtype, out)
        if out is not None:
            raise NotImplementedError(f"{self.__name__}.accumulate: the 'out' argument is not supported")
        return self._accumulate(a, axis=axis, dtype=dtype)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """a with func applied at indices (repeated indices apply again, as np.ufunc.at); needs inplace=False."""
        if inplace:
            raise NotImplementedError(_INPLACE)
        a = _core.asarray(a)
        if self._at is not None:  # a scatter: repeated indices accumulate
            ref, b = a.at[indices], _core.asarray(b)
            return ref.add(_core.negative(b)) if self._at == "subtract" else getattr(ref, self._at)(b)
        return self._at_in_order(a, indices, b)

    def _at_in_order(self, a, indices, b):
        """One update per index, in order (a loop), for integer indices along the first axis."""
        from pyjax import lax

        idx = _core.asarray(indices)
        if idx.dtype.kind not in "iu":
            raise NotImplementedError(f"jnp.{self.__name__}.at: pyjax takes integer indices along the first axis")
        idx = idx.ravel()
        args = () if self.nin == 1 else (_core.broadcast_to(_core.asarray(b), idx.shape + a.shape[1:]),)

        def step(k, arr):
            new = self._fn(arr[idx[k]], *(v[k] for v in args))
            return arr.at[idx[k]].set(new.astype(arr.dtype))

        return lax.fori_loop(0, idx.shape[0], step, a)


class _LogicalUfunc(_ArrayUfunc):
    """logical_and/or/xor: operands count as booleans in reduce and accumulate too."""

    def reduce(self, a, *args, **kwargs):
        return super().reduce(_core.asarray(a).astype(bool), *args, **kwargs)

    def accumulate(self, a, *args, **kwargs):
        return super().accumulate(_core.asarray(a).astype(bool), *args, **kwargs)

    def at(self, a, indices, b=None, /, *, inplace=True):
        return super().at(_core.asarray(a).astype(bool), indices, b, inplace=inplace)


def _boolean(fn):
    return lambda a, axis=0, dtype=None, **kw: fn(a, axis=axis, **kw)  # all/any take no dtype


def _cumulative(fn):
    return lambda a, axis=0, dtype=None: fn(a, axis=axis, dtype=dtype)


add = _ArrayUfunc(_core.add, 2, 0, _core.sum, _cumulative(_core.cumsum), "add")
multiply = _ArrayUfunc(_core.multiply, 2, 1, _core.prod, _cumulative(_core.cumprod), "multiply")
subtract = _ArrayUfunc(_core.subtract, 2, None, at="subtract")
maximum = _ArrayUfunc(_core.maximum, 2, None, _core.max, at="max")
minimum = _ArrayUfunc(_core.minimum, 2, None, _core.min, at="min")
logical_and = _LogicalUfunc(_core.logical_and, 2, True, _boolean(_core.all))
logical_or = _LogicalUfunc(_core.logical_or, 2, False, _boolean(_core.any))
logical_xor = _LogicalUfunc(_core.logical_xor, 2, False)
bitwise_and = _ArrayUfunc(_core.bitwise_and, 2, -1)
bitwise_or = _ArrayUfunc(_core.bitwise_or, 2, 0)
bitwise_xor = _ArrayUfunc(_core.bitwise_xor, 2, 0)
logaddexp = _ArrayUfunc(_core.logaddexp, 2, -float("inf"))
logaddexp2 = _ArrayUfunc(_core.logaddexp2, 2, -float("inf"))
negative = _ArrayUfunc(_core.negative, 1)
