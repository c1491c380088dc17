"""Annotations for code written against pyjax (JAX's jax.typing): `ArrayLike` for values that
functions accept as arrays, `DTypeLike` for values that name a dtype. Both are typing.Unions, so
they also work with isinstance."""

from __future__ import annotations

from typing import Union

from pyjax._typing import Array
from pyjax.core.dtypes import DType, generic

__all__ = ["ArrayLike", "DTypeLike", "SupportsDType"]


class _HasDType(type):
    def __instancecheck__(cls, obj) -> bool:
        return hasattr(obj, "dtype")

    def __subclasscheck__(cls, sub) -> bool:  # what isinstance on a Union asks
        return hasattr(sub, "dtype")


class SupportsDType(metaclass=_HasDType):
    """Anything with a `dtype` attribute (arrays, numpy arrays, scalar types)."""


# numpy's array and scalar types count where numpy is installed (Pyodide may lack it).
try:
    import numpy as _np

    _NUMPY: tuple = (_np.ndarray, _np.bool_, _np.number)
    _NUMPY_DTYPE: tuple = (_np.dtype,)
except ImportError:
    _NUMPY = _NUMPY_DTYPE = ()

ArrayLike = Union[(Array, generic, *_NUMPY, bool, int, float, complex)]
DTypeLike = Union[(str, type, DType, *_NUMPY_DTYPE, SupportsDType)]
