"""pyjax.dtypes: JAX's dtype helpers (jax.dtypes): canonicalize_dtype, result_type, issubdtype, ..."""

from __future__ import annotations

import sys
from typing import Any

from pyjax._prng import KeyDtype as _KeyDtype
from pyjax._prng import extended, prng_key
from pyjax.core import dtypes as _d
from pyjax.core.dtypes import finfo, iinfo  # noqa: F401

bfloat16 = _d.SCALAR_TYPES["bfloat16"]

__all__ = [
    "bfloat16",
    "canonicalize_dtype",
    "extended",
    "finfo",
    "iinfo",
    "issubdtype",
    "itemsize_bits",
    "prng_key",
    "result_type",
    "scalar_type_of",
    "TypePromotionError",
]


class TypePromotionError(ValueError):
    """Raised when dtypes cannot be promoted together (JAX's strict promotion mode)."""


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
        except AttributeError:  # bfloat16 without ml_dtypes
            pass
    return d


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """The dtype of combining args under JAX's promotion rules (optionally with the weak-type flag)."""
    import pyjax.numpy as jnp

    d = jnp.result_type(*args)
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
    return _d.dtype(dtype).itemsize * 8
