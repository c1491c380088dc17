"""Dtype queries: isdtype (array-API kinds) and iterable."""

from __future__ import annotations

from pyjax.core import dtypes

__all__ = ["isdtype", "iterable"]


# --- dtype queries, buffers, printing -----------------------------------------------------------

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
