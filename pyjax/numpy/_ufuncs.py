"""jnp.ufunc and frompyfunc, and jnp.add, jnp.multiply, ... as jnp.ufunc objects (JAX's ufunc API): call, reduce, accumulate, outer, at.

Each wraps the array function it replaces (calls go straight to it); reduce and accumulate use the
matching reduction (add.reduce is sum, multiply.accumulate is cumprod, ...) where one exists, else the
generic fold of jnp.ufunc; at(a, indices, b, inplace=False) is a scatter (`a.at[indices].add(b)`, ...).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

from pyjax.numpy import _creation, _elementwise, _manipulation, _reductions
from pyjax.numpy._functional import vectorize
from pyjax.numpy._promotion import asarray, broadcast_to

__all__ = ["add", "bitwise_and", "bitwise_or", "bitwise_xor", "logaddexp", "logaddexp2", "logical_and"]
__all__ += ["logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative", "subtract"]
__all__ += ["frompyfunc", "ufunc"]


class ufunc:
    """A universal function built from a scalar function: broadcasting call, outer, reduce, accumulate.

    func must be traceable with pyjax (it is applied elementwise through vectorize).
    """

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None, identity: Any = None):
        if not callable(func):
            raise TypeError(f"ufunc: func must be callable, got {type(func).__name__}")
        self._func = func
        self._call = vectorize(func)
        self.nin, self.nout, self.identity = int(nin), int(nout), identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")

    nargs = property(lambda self: self.nin)

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any) -> Any:
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments but {len(args)} were given")
        return self._call(*args)

    def _binary(self, what: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(
                f"{what} only supported for binary ufuncs with a single output; got nin={self.nin}, nout={self.nout}"
            )

    def outer(self, A: Any, B: Any, /) -> Any:
        """func(a, b) for every pair of elements: shape A.shape + B.shape."""
        self._binary("outer")
        A, B = asarray(A), asarray(B)
        return self(A.reshape(A.shape + (1,) * B.ndim), B)

    def reduce(
        self,
        a: Any,
        axis: int | None = 0,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = None,
    ) -> Any:
        """Fold func along axis (left to right), starting from `initial` or the identity if given."""
        from pyjax.lax import control_flow as lax

        self._binary("reduce")
        if out is not None or where is not None:
            raise NotImplementedError("ufunc.reduce: out and where are not supported")
        a = asarray(a, dtype=dtype)
        if axis is None:
            a, axis = a.ravel(), 0
        axis = axis % builtins.max(a.ndim, 1)
        x = _manipulation.moveaxis(a, axis, 0)
        init = initial if initial is not None else self.identity
        if init is None:
            if x.shape[0] == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            carry, xs = x[0], x[1:]
        else:
            carry, xs = _creation.full(x.shape[1:], init, x.dtype), x
        result = lax.scan(lambda c, v: (self(c, v).astype(x.dtype), None), carry, xs)[0]
        return _manipulation.expand_dims(result, axis) if keepdims else result

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """Running fold of func along axis (the first element is kept as is)."""
        from pyjax.lax import control_flow as lax

        self._binary("accumulate")
        a = asarray(a, dtype=dtype)
        axis = axis % builtins.max(a.ndim, 1)
        x = _manipulation.moveaxis(a, axis, 0)
        if x.shape[0] == 0:
            return a

        def step(c, v):
            c = self(c, v).astype(x.dtype)
            return c, c

        _, rest = lax.scan(step, x[0], x[1:])
        return _manipulation.moveaxis(_manipulation.concatenate([x[:1], rest], axis=0), 0, axis)


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A jnp.ufunc from a scalar function (traceable with pyjax)."""
    return ufunc(func, nin, nout, identity=identity)


_INPLACE = (
    "Because JAX arrays are immutable, jnp.ufunc.at() cannot operate inplace like np.ufunc.at(). Instead, you "
    "can pass inplace=False and capture the result; e.g.\n>>> arr = jnp.add.at(arr, ind, val, inplace=False)"
)


class _ArrayUfunc(ufunc):
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
        a = asarray(a)
        if self._at is not None:  # a scatter: repeated indices accumulate
            ref, b = a.at[indices], asarray(b)
            return ref.add(_elementwise.negative(b)) if self._at == "subtract" else getattr(ref, self._at)(b)
        return self._at_in_order(a, indices, b)

    def _at_in_order(self, a, indices, b):
        """One update per index, in order (a loop), for integer indices along the first axis."""
        from pyjax.lax import control_flow as lax

        idx = asarray(indices)
        if idx.dtype.kind not in "iu":
            raise NotImplementedError(f"jnp.{self.__name__}.at: pyjax takes integer indices along the first axis")
        idx = idx.ravel()
        args = () if self.nin == 1 else (broadcast_to(asarray(b), idx.shape + a.shape[1:]),)

        def step(k, arr):
            new = self._fn(arr[idx[k]], *(v[k] for v in args))
            return arr.at[idx[k]].set(new.astype(arr.dtype))

        return lax.fori_loop(0, idx.shape[0], step, a)


class _LogicalUfunc(_ArrayUfunc):
    """logical_and/or/xor: operands count as booleans in reduce and accumulate too."""

    def reduce(self, a, *args, **kwargs):
        return super().reduce(asarray(a).astype(bool), *args, **kwargs)

    def accumulate(self, a, *args, **kwargs):
        return super().accumulate(asarray(a).astype(bool), *args, **kwargs)

    def at(self, a, indices, b=None, /, *, inplace=True):
        return super().at(asarray(a).astype(bool), indices, b, inplace=inplace)


def _boolean(fn):
    return lambda a, axis=0, dtype=None, **kw: fn(a, axis=axis, **kw)  # all/any take no dtype


def _cumulative(fn):
    return lambda a, axis=0, dtype=None: fn(a, axis=axis, dtype=dtype)


add = _ArrayUfunc(_elementwise.add, 2, 0, _reductions.sum, _cumulative(_reductions.cumsum), "add")
multiply = _ArrayUfunc(_elementwise.multiply, 2, 1, _reductions.prod, _cumulative(_reductions.cumprod), "multiply")
subtract = _ArrayUfunc(_elementwise.subtract, 2, None, at="subtract")
maximum = _ArrayUfunc(_elementwise.maximum, 2, None, _reductions.max, at="max")
minimum = _ArrayUfunc(_elementwise.minimum, 2, None, _reductions.min, at="min")
logical_and = _LogicalUfunc(_elementwise.logical_and, 2, True, _boolean(_reductions.all))
logical_or = _LogicalUfunc(_elementwise.logical_or, 2, False, _boolean(_reductions.any))
logical_xor = _LogicalUfunc(_elementwise.logical_xor, 2, False)
bitwise_and = _ArrayUfunc(_elementwise.bitwise_and, 2, -1)
bitwise_or = _ArrayUfunc(_elementwise.bitwise_or, 2, 0)
bitwise_xor = _ArrayUfunc(_elementwise.bitwise_xor, 2, 0)
logaddexp = _ArrayUfunc(_elementwise.logaddexp, 2, -float("inf"))
logaddexp2 = _ArrayUfunc(_elementwise.logaddexp2, 2, -float("inf"))
negative = _ArrayUfunc(_elementwise.negative, 1)
