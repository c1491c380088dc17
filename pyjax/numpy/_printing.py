"""Printing: array_str, array_repr and the print options (kept in pyjax.runtime.printing)."""

from __future__ import annotations

from pyjax.numpy._promotion import asarray
from pyjax.runtime.printing import get_printoptions, printoptions, set_printoptions

__all__ = ["array_str", "array_repr", "get_printoptions", "set_printoptions", "printoptions"]


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """str() of the array's values."""
    return str(asarray(a))


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """repr() of the array."""
    return repr(asarray(arr))
