"""Array creation: zeros/ones/full/empty (and *_like), arange, eye, identity, tri, copy, fromfunction
and the buffer / iterator / string readers (frombuffer, fromiter, fromstring). The spaced sequences
built on other topic modules (linspace, logspace, geomspace, meshgrid) are in _ranges; diagflat is
with diag in _manipulation.
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any

from pyjax.core import core, dtypes
from pyjax.core.core import Tracer
from pyjax.dtypes import float0_zeros, is_float0
from pyjax.lax import lax
from pyjax.numpy import _keys
from pyjax.runtime.array import Array

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None
from pyjax.numpy._promotion import _check_arraylike, _is_array, _shape_tuple, array, asarray, broadcast_to
from pyjax.numpy._util import _aval

__all__ = ["fromfunction", "frombuffer", "from_dlpack", "fromiter", "fromstring"]


# --- small array helpers ------------------------------------------------------------------------


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*index_grids) for grids of the given shape (like numpy.fromfunction)."""
    shape = tuple(operator.index(d) for d in ((shape,) if isinstance(shape, int) else shape))
    from pyjax import api  # (lax level: numpy may use it)

    # JAX maps function over every index, so it sees scalars: one vmap per axis, the last innermost
    for i in reversed(range(len(shape))):
        function = api.vmap(function, in_axes=tuple(0 if j == i else None for j in range(len(shape))))
    return function(*(arange(n, dtype=dtype) for n in shape), **kwargs)


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
    return asarray(values, dtype=dtypes.canonicalize(dtype))


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
    """An array with the data of an object that implements __dlpack__ (through numpy's from_dlpack), on device."""
    from pyjax.api import device_put

    if not hasattr(x, "__dlpack__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ methods.")
    if _np is None:
        raise TypeError("from_dlpack needs numpy")
    return device_put(_np.from_dlpack(x, copy=copy), device)


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
    return asarray(values, dtype=d)


def _check_shape(fn, shape):
    for s in shape:
        if s < 0:
            raise TypeError(f"{fn}: negative dimensions are not allowed, got shape {shape}")


def zeros(shape, dtype=None, *, device=None):
    shape = _shape_tuple(shape)
    _check_shape("zeros", shape)
    if is_float0(dtype):  # float0 has one value: JAX gives numpy's float0 zeros for any fill
        return float0_zeros(shape)
    return lax.full(shape, 0, dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float())


def ones(shape, dtype=None, *, device=None):
    shape = _shape_tuple(shape)
    _check_shape("ones", shape)
    if is_float0(dtype):
        return float0_zeros(shape)
    return lax.full(shape, 1, dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float())


def empty(shape, dtype=None, *, device=None):
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None, *, device=None):
    _check_arraylike("full", fill_value)
    shape = _shape_tuple(shape)
    _check_shape("full", shape)
    if is_float0(dtype):
        return float0_zeros(shape)
    if (
        _is_array(fill_value)
        or isinstance(fill_value, (list, tuple))
        or (_np is not None and isinstance(fill_value, _np.ndarray))
    ):
        fv = asarray(fill_value, dtype)
        return broadcast_to(fv, shape)
    if dtype is None:
        return broadcast_to(asarray(fill_value), shape)  # a Python scalar fill stays weakly typed, as in JAX
    return lax.full(shape, fill_value, dtypes.canonicalize(dtype))


def _keep_weak(a, out, dtype):
    """*_like of a weakly typed array, without a dtype, is weakly typed too (as in JAX)."""
    if dtype is None and _aval(a).weak_type and not _aval(out).weak_type:
        return lax._convert(out, _aval(out).dtype, True)
    return out


def _like_operand(a):
    """*_like's first argument: an array, or anything with a shape and dtype (a ShapeDtypeStruct), as in JAX."""
    return a if _is_array(a) or type(a) in core.pytype_aval_mappings else asarray(a)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    return _full_like("zeros_like", a, 0, dtype, shape)


def ones_like(a, dtype=None, shape=None, *, device=None):
    return _full_like("ones_like", a, 1, dtype, shape)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    return _full_like("full_like", a, fill_value, dtype, shape)


def _full_like(fn, a, fill_value, dtype, shape):
    if isinstance(a, _keys.PRNGKeyArray):
        return _keys.full_like(a, fill_value, dtype, shape, full)
    # JAX checks a only when it has no shape and dtype (a ShapeDtypeStruct passes), and full_like's fill
    fill = (fill_value,) if fn == "full_like" else ()
    if not _is_array(a) and not (hasattr(a, "dtype") and hasattr(a, "shape")):
        _check_arraylike(fn, a, *fill, keys=True)
    elif fill:
        _check_arraylike(fn, 0, *fill, keys=True)
    if is_float0(dtype) or (dtype is None and is_float0(a)):
        return float0_zeros(tuple(a.shape) if shape is None else _shape_tuple(shape))
    a = _like_operand(a)
    out = full(_aval(a).shape if shape is None else shape, fill_value, dtype or _aval(a).dtype)
    return out if _is_array(fill_value) and _aval(fill_value).shape else _keep_weak(a, out, dtype)


def empty_like(a, dtype=None, shape=None, *, device=None):
    return _full_like("ones_like", a, 0, dtype, shape)  # JAX's name for it in the check_arraylike error


def _concrete_scalar(x, fn):
    """x (a concrete value) or, for a tracer, its concrete value; else the concretization error."""
    if isinstance(x, Tracer):
        x = core.concrete_or_error(x, f"The {fn} argument must be concrete (static); use a Python number.")
    return x


def _bound_type(x) -> tuple:
    """(dtype, weak) of an arange bound: Python numbers are weak, NumPy and JAX scalars keep their dtype."""
    if isinstance(x, Array):
        return x.dtype, x.weak_type
    if hasattr(x, "dtype"):  # numpy scalars (np.prod's int64, ...) and 0-d arrays
        return dtypes.canonicalize(x.dtype), False
    return dtypes.python_scalar_dtype(x), True


def _bound_value(x):
    """The Python number an arange bound stands for."""
    return x.item() if hasattr(x, "item") and not isinstance(x, (builtins.int, builtins.float)) else x


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """jnp.arange with static bounds; the dtype is the bounds' (Python ints give int32, the default int;
    floats float32; NumPy or JAX scalars their own dtype, as JAX)."""
    _check_arraylike("arange", start, stop, step, none=True)
    bounds = [_concrete_scalar(b, "arange") if b is not None else None for b in (start, stop, step)]
    types = [_bound_type(b) for b in bounds if b is not None]
    start, stop, step = (_bound_value(b) for b in bounds)
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ValueError("arange: step cannot be zero")
    if dtype is None:
        d, _ = dtypes.promote(types)
    else:
        d = dtypes.canonicalize(dtype)
    n = builtins.max(0, math.ceil((stop - start) / step))
    if d.kind in "iu" and builtins.all(isinstance(v, builtins.int) for v in (start, step)):
        out = lax.iota(d, n)
        if step != 1:
            out = lax.mul(out, lax._promote_scalars(step, out)[0])
        if start != 0:
            out = lax.add(out, lax._promote_scalars(start, out)[0])
        return out
    idx = lax.iota(dtypes.default_float() if d.kind != "f" else d, n)
    out = lax.add(lax.mul(idx, step), start)
    return lax.convert_element_type(out, d)


def _diagonal_mask(N, M, k, dtype, compare):
    """An N x M (N x N without M) array of dtype (default float) that is 1 where compare(row + k, column)."""
    M = N if M is None else M
    d = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    r = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    c = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    return lax.convert_element_type(compare(lax.add(r, k), c), d)


def eye(N, M=None, k=0, dtype=None, *, device=None):
    return _diagonal_mask(N, M, k, dtype, lax.eq)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    return _diagonal_mask(N, M, k, dtype, lax.ge)


def copy(a, order=None):
    _check_arraylike("copy", a)
    return array(a, copy=True)


__all__ += [
    "zeros",
    "ones",
    "empty",
    "full",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "arange",
    "eye",
    "identity",
    "tri",
    "copy",
]
