"""Array creation beyond _core's: logspace, geomspace, diagflat, fromfunction and the buffer / iterator /
string readers (frombuffer, fromiter, fromstring).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

from pyjax.core import core, dtypes
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _core as jnp
from pyjax.numpy._indexing import indices
from pyjax.numpy._util import _SCALARS, _aval, _result, _to_dtype

__all__ = ["logspace", "geomspace", "diagflat", "fromfunction", "frombuffer", "fromiter", "fromstring"]


# --- spaced sequences -----------------------------------------------------------------------------


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0):
    """base ** linspace(start, stop, num): numbers evenly spaced on a log scale."""
    num = operator.index(core.concrete_or_error(num, "The error occurred in jnp.logspace(): num must be static"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _result("logspace", start, stop, to_float=True)
    lin = jnp.linspace(s, e, num, endpoint=endpoint, axis=axis)
    out = jnp.power(_to_dtype(base, _aval(lin).dtype) if not isinstance(base, _SCALARS) else base, lin)
    if dtype is not None:
        out = lax.convert_element_type(out, dtypes.canonicalize(dtype))
    return out


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers evenly spaced on a log scale between start and stop (endpoints exact)."""
    num = operator.index(core.concrete_or_error(num, "The error occurred in jnp.geomspace(): num must be static"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _result("geomspace", start, stop, to_float=True)
    sign = jnp.sign(s)
    res = logspace(jnp.log10(s * sign), jnp.log10(e * sign), num, endpoint=endpoint, base=10.0, axis=axis)
    res_a = _aval(res)
    ax = canonical_axis(axis, res_a.ndim, "geomspace")
    keep = tuple(i for i in builtins.range(res_a.ndim) if i != ax)
    res = res * lax.broadcast_in_dim(
        jnp.broadcast_to(sign, jnp.broadcast_shapes(_aval(s).shape, _aval(e).shape)), res_a.shape, keep
    )
    if num > 0:
        idx = lax.broadcasted_iota(dtypes.int32, res_a.shape, ax)
        bshape = tuple(res_a.shape[i] for i in keep)
        first = lax.broadcast_in_dim(jnp.broadcast_to(s, bshape), res_a.shape, keep)
        res = jnp.where(idx == 0, first, res)
        if endpoint and num > 1:
            last = lax.broadcast_in_dim(jnp.broadcast_to(e, bshape), res_a.shape, keep)
            res = jnp.where(idx == num - 1, last, res)
    if dtype is not None:
        res = lax.convert_element_type(res, dtypes.canonicalize(dtype))
    return res


# --- small array helpers ------------------------------------------------------------------------


def diagflat(v, k: int = 0):
    """2-D array with the flattened input on diagonal k."""
    return jnp.diag(jnp.ravel(jnp.asarray(v)), k)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*index_grids) for grids of the given shape (like numpy.fromfunction)."""
    shape = tuple(operator.index(d) for d in ((shape,) if isinstance(shape, int) else shape))
    return function(*indices(shape, dtype=dtype), **kwargs)


_BUFFER_CODES = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i"}


_BUFFER_CODES.update({"uint32": "I", "int64": "q", "uint64": "Q", "float16": "e", "float32": "f", "float64": "d"})


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """1-D array interpreting the bytes of `buffer` as dtype (native byte order)."""
    d = dtypes.canonicalize(dtype) if dtype is not float else dtypes.float64
    code = _BUFFER_CODES.get(d.name)
    if code is None:
        raise TypeError(f"frombuffer: unsupported dtype {d.name}")
    mv = memoryview(buffer).cast("B")[offset:]
    size = builtins.len(mv) // mv.itemsize
    item = memoryview(b"\0" * 8).cast(code).itemsize
    if builtins.len(mv) % item and count < 0:
        raise ValueError("buffer size must be a multiple of element size")
    n = builtins.len(mv) // item if count < 0 else count
    del size
    values = mv[: n * item].cast(code).tolist()
    return jnp.asarray(values, dtype=dtypes.canonicalize(dtype))


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
