"""Scalar type classes and dtype queries: the abstract classes (integer, floating, ...), isdtype
(array-API kinds) and iterable.

The abstract classes are numpy's when numpy is importable, as in JAX (`jnp.integer is np.integer`,
so `issubclass(x.dtype.type, jnp.integer)` and numpy code that checks them work); without numpy
(Pyodide offline) they are pyjax's own. issubdtype accepts both.
"""

from __future__ import annotations

from pyjax.core import dtypes

try:
    import numpy as _np
except ImportError:  # pragma: no cover - exercised by tests/test_no_numpy.py in a subprocess
    _np = None

__all__ = ["isdtype", "iterable"]
__all__ += ["generic", "number", "inexact", "floating", "complexfloating", "integer", "signedinteger"]
__all__ += ["unsignedinteger", "flexible", "character", "object_", "ComplexWarning"]

_ABSTRACT_SOURCE = dtypes if _np is None else _np
generic = _ABSTRACT_SOURCE.generic
number = _ABSTRACT_SOURCE.number
inexact = _ABSTRACT_SOURCE.inexact
floating = _ABSTRACT_SOURCE.floating
complexfloating = _ABSTRACT_SOURCE.complexfloating
integer = _ABSTRACT_SOURCE.integer
signedinteger = _ABSTRACT_SOURCE.signedinteger
unsignedinteger = _ABSTRACT_SOURCE.unsignedinteger
flexible = _ABSTRACT_SOURCE.flexible
character = _ABSTRACT_SOURCE.character
object_ = dtypes.object_type if _np is None else _np.object_


class _ComplexWarning(RuntimeWarning):
    """Casting complex values to a real dtype drops the imaginary part (numpy's ComplexWarning)."""


ComplexWarning = _ComplexWarning if _np is None else _np.exceptions.ComplexWarning


# --- dtype queries --------------------------------------------------------------------------------

_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype, kind):
    """Whether dtype is of `kind` (a dtype, one of the array-API kind names, or a tuple of them)."""
    d = dtypes.canonicalize(dtype) if not isinstance(dtype, str) else dtypes.canonicalize(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized {k=!r}")
            if d.kind in _KINDS[k]:
                return True
        elif dtypes.canonicalize(k) is d:
            return True
    return False


def iterable(y) -> bool:
    """Whether iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True
