"""pyjax.dtypes: JAX's dtype helpers (jax.dtypes): canonicalize_dtype, result_type, issubdtype, ..."""

from __future__ import annotations

import sys
from typing import Any

from pyjax._prng import KeyDtype as _KeyDtype
from pyjax._prng import extended, prng_key
from pyjax.core import dtypes as _d
from pyjax.core.core import Tracer, get_aval
from pyjax.core.dtypes import finfo, iinfo  # noqa: F401
from pyjax.runtime.array import Array

bfloat16 = _d.SCALAR_TYPES["bfloat16"]
float8_e4m3fn = _d.SCALAR_TYPES["float8_e4m3fn"]
float8_e5m2 = _d.SCALAR_TYPES["float8_e5m2"]
float8_e4m3fnuz = _d.SCALAR_TYPES["float8_e4m3fnuz"]
float8_e5m2fnuz = _d.SCALAR_TYPES["float8_e5m2fnuz"]
float8_e4m3b11fnuz = _d.SCALAR_TYPES["float8_e4m3b11fnuz"]
float8_e4m3 = _d.SCALAR_TYPES["float8_e4m3"]
float8_e3m4 = _d.SCALAR_TYPES["float8_e3m4"]
TypePromotionError = _d.TypePromotionError

__all__ = [
    "bfloat16",
    "canonicalize_dtype",
    "extended",
    "finfo",
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e4m3fnuz",
    "float8_e5m2fnuz",
    "float8_e4m3b11fnuz",
    "float8_e4m3",
    "float8_e3m4",
    "float0",  # noqa: F822 (module __getattr__: numpy's dtype, made on first use)
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "result_type",
    "scalar_type_of",
    "TypePromotionError",
]


def _is_key_type(x: Any) -> bool:
    return isinstance(x, _KeyDtype) or (isinstance(x, type) and issubclass(x, extended))


def issubdtype(a: Any, b: Any) -> bool:
    """np.issubdtype over pyjax dtypes, extended to typed-key dtypes (key<fry> < prng_key < extended)."""
    if _is_key_type(a) or _is_key_type(b):
        ta, tb = (x.type if isinstance(x, _KeyDtype) else x for x in (a, b))
        return isinstance(ta, type) and isinstance(tb, type) and issubclass(ta, tb)
    return _d.issubdtype(a, b)


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> Any:
    """The dtype JAX computes in for `dtype` (64-bit types become 32-bit without jax_enable_x64): numpy's dtype
    object once numpy is imported, as JAX returns (so `is` comparisons with np.dtype(...) hold), else pyjax's."""
    d = _d.canonicalize(dtype)
    if "numpy" in sys.modules:
        try:
            return d.dtype
        except AttributeError:  # bfloat16/float8 without ml_dtypes
            pass
    return d


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype of combining args under JAX's promotion rules (optionally with the weak-type flag)."""
    items = []
    for a in args:
        if isinstance(a, (_d.DType, str, type)) or (hasattr(a, "dtype") and isinstance(a, type)):
            try:  # canonicalized before the join, as in JAX: (int8, uint64) -> int32 without x64
                items.append((_d.canonicalize(a), False))
                continue
            except TypeError:
                pass
        if isinstance(a, (bool, int, float, complex)):
            items.append((_d.python_scalar_dtype(a), _d.is_weak_scalar(a)))
        elif isinstance(a, (Array, Tracer)):
            av = get_aval(a)
            items.append((av.dtype, av.weak_type))
        elif isinstance(a, getattr(sys.modules.get("numpy"), "dtype", ())):
            items.append((_d.canonicalize(a), False))
        elif hasattr(a, "dtype"):  # numpy arrays and scalars
            items.append((_d.canonicalize(a.dtype), False))
        else:
            items.append((_d.canonicalize(a), False))
    if not items:
        raise ValueError("at least one array or dtype is required")
    d = _d.promote(items)[0]
    if not return_weak_type_flag:
        return d
    weak = bool(args) and all(isinstance(a, (bool, int, float)) or getattr(a, "weak_type", False) for a in args)
    return d, weak


def scalar_type_of(x: Any) -> type:
    """The Python scalar type (bool, int, float or complex) matching the dtype of x."""
    d = _d.dtype(x.dtype) if hasattr(x, "dtype") else _d.python_scalar_dtype(x)
    return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[d.kind]


def itemsize_bits(dtype: Any) -> int:
    """The size of one element of dtype in bits."""
    return _d.dtype(dtype).bits


# --- float0: the tangent dtype of integer and bool values --------------------------------------

_FLOAT0 = _d.DType("float0", 0, "V")  # without numpy; natively float0 is numpy's, as in JAX


def _float0_dtype() -> Any:
    try:
        import numpy as np
    except ImportError:
        return _FLOAT0
    return np.dtype([("float0", np.void, 0)])


class Float0Array:
    """Zeros of dtype float0 where numpy is missing (Pyodide without numpy): only a shape."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple):
        self.shape = tuple(shape)

    dtype = _FLOAT0
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: _prod(self.shape))

    def __repr__(self):
        return f"Float0Array(shape={self.shape})"


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def float0_zeros(shape: tuple) -> Any:
    """The tangent/cotangent of an integer or bool value of this shape: np.zeros(shape, float0), as JAX gives."""
    try:
        import numpy as np
    except ImportError:
        return Float0Array(shape)
    return np.zeros(shape, _float0_dtype())


def is_float0(x: Any) -> bool:
    """Whether x is a float0 array (or x is the float0 dtype)."""
    if x is _FLOAT0:
        return True
    d = getattr(x, "dtype", x)
    return d is _FLOAT0 or getattr(d, "names", None) == ("float0",)


def __getattr__(name: str) -> Any:
    if name == "float0":
        return _float0_dtype()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
