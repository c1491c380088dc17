"""jax.numpy gaps: packbits / unpackbits, print options, fromiter / fromstring, frompyfunc / ufunc.

All composed from pyjax.numpy and lax, so every backend runs them.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import pyjax.numpy as jnp
from pyjax.core import dtypes
from pyjax.runtime.printing import get_printoptions, printoptions, set_printoptions

__all__ = [
    "packbits",
    "unpackbits",
    "get_printoptions",
    "set_printoptions",
    "printoptions",
    "fromiter",
    "fromstring",
    "frompyfunc",
    "ufunc",
]

_ = (get_printoptions, printoptions, set_printoptions)  # re-exported print options


def _check_bitorder(bitorder: str) -> None:
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack the truth values of an integer or boolean array into uint8 bytes, 8 per byte."""
    a = jnp.asarray(a)
    if a.dtype.kind not in "iub":
        raise TypeError("Expected an input array of integer or boolean data type")
    _check_bitorder(bitorder)
    bits = (a != 0).astype(jnp.uint8)
    if axis is None:
        bits, axis = bits.ravel(), 0
    axis = axis % builtins.max(bits.ndim, 1)
    bits = jnp.moveaxis(bits, axis, -1) if bits.ndim else bits.reshape(1)
    n = bits.shape[-1]
    pad = -n % 8
    if pad:
        bits = jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, pad)])
    bits = bits.reshape(bits.shape[:-1] + ((n + pad) // 8, 8))
    weights = [1 << (7 - i) for i in range(8)] if bitorder == "big" else [1 << i for i in range(8)]
    packed = jnp.sum(bits * jnp.asarray(weights, jnp.uint8), axis=-1, dtype=jnp.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Any:
    """Unpack the bits of a uint8 array into 0/1 uint8 values (8 per byte), optionally `count` of them."""
    a = jnp.asarray(a)
    if a.dtype.name != "uint8":
        raise TypeError("Expected an input array of unsigned byte data type")
    _check_bitorder(bitorder)
    shifts = list(range(7, -1, -1)) if bitorder == "big" else list(range(8))
    bits = (a[..., None] >> jnp.asarray(shifts, jnp.uint8)) & jnp.uint8(1)
    if axis is None:
        bits, axis = bits.ravel(), 0
    else:
        axis = axis % builtins.max(a.ndim, 1)
        bits = jnp.moveaxis(bits, -1, axis + 1)
        bits = bits.reshape(bits.shape[:axis] + (-1,) + bits.shape[axis + 2 :])
    if count is not None:
        n = bits.shape[axis]
        keep = count if count >= 0 else builtins.max(n + count, 0)
        if keep <= n:
            bits = jnp.moveaxis(jnp.moveaxis(bits, axis, 0)[:keep], 0, axis)
        else:
            widths = [(0, 0)] * bits.ndim
            widths[axis] = (0, keep - n)
            bits = jnp.pad(bits, widths)
    return bits


def fromiter(iterable: Any, dtype: Any, count: int = -1, *, like: Any = None) -> Any:
    """Not implemented, as in JAX: consuming an iterator is a side effect unsafe under jit."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for use with JIT "
        "and other JAX transformations. Consider using jnp.asarray(np.fromiter(...)) instead."
    )


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Any:
    """A 1-D array parsed from the numbers in a text string separated by `sep`."""
    if not isinstance(string, (str, bytes)):
        raise TypeError(f"fromstring: expected a str, got {type(string).__name__}")
    if isinstance(string, bytes):
        string = string.decode()
    if not sep:
        raise ValueError("fromstring: the binary mode (sep='') is not supported; use jnp.frombuffer")
    d = dtypes.canonicalize(dtype) if dtype is not float else dtypes.canonicalize(dtypes.float64)
    parts = string.split() if not sep.strip() else [p.strip() for p in string.split(sep.strip())]
    parts = [p for p in parts if p]
    if count >= 0:
        if len(parts) < count:
            raise ValueError(f"fromstring: string only contains {len(parts)} items, {count} requested")
        parts = parts[:count]
    parse = float if d.kind == "f" else (lambda s: int(float(s))) if d.kind in "iu" else (lambda s: bool(int(s)))
    try:
        values = [parse(p) for p in parts]
    except ValueError:
        raise ValueError(f"fromstring: could not parse {string!r} as {d.name} numbers separated by {sep!r}") from None
    return jnp.asarray(values, dtype=d)


class ufunc:
    """A universal function built from a scalar function: broadcasting call, outer, reduce, accumulate.

    func must be traceable with pyjax (it is applied elementwise through jnp.vectorize).
    """

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None, identity: Any = None):
        if not callable(func):
            raise TypeError(f"ufunc: func must be callable, got {type(func).__name__}")
        self._func = func
        self._call = jnp.vectorize(func)
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
        A, B = jnp.asarray(A), jnp.asarray(B)
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
        from pyjax import lax

        self._binary("reduce")
        if out is not None or where is not None:
            raise NotImplementedError("ufunc.reduce: out and where are not supported")
        a = jnp.asarray(a, dtype=dtype)
        if axis is None:
            a, axis = a.ravel(), 0
        axis = axis % builtins.max(a.ndim, 1)
        x = jnp.moveaxis(a, axis, 0)
        init = initial if initial is not None else self.identity
        if init is None:
            if x.shape[0] == 0:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} which has no identity")
            carry, xs = x[0], x[1:]
        else:
            carry, xs = jnp.full(x.shape[1:], init, x.dtype), x
        result = lax.scan(lambda c, v: (self(c, v).astype(x.dtype), None), carry, xs)[0]
        return jnp.expand_dims(result, axis) if keepdims else result

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """Running fold of func along axis (the first element is kept as is)."""
        from pyjax import lax

        self._binary("accumulate")
        a = jnp.asarray(a, dtype=dtype)
        axis = axis % builtins.max(a.ndim, 1)
        x = jnp.moveaxis(a, axis, 0)
        if x.shape[0] == 0:
            return a

        def step(c, v):
            c = self(c, v).astype(x.dtype)
            return c, c

        _, rest = lax.scan(step, x[0], x[1:])
        return jnp.moveaxis(jnp.concatenate([x[:1], rest], axis=0), 0, axis)


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A jnp.ufunc from a scalar function (traceable with pyjax)."""
    return ufunc(func, nin, nout, identity=identity)
