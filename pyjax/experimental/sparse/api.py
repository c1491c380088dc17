"""pyjax.experimental.sparse.api: format-generic constructors and conversions (empty, eye, todense)."""

from __future__ import annotations

from pyjax.experimental.sparse._base import JAXSparse
from pyjax.experimental.sparse.bcoo import BCOO
from pyjax.experimental.sparse.bcsr import BCSR

__all__ = ["empty", "eye", "todense"]

_FORMATS = {"bcoo": BCOO, "bcsr": BCSR}


def _format(sparse_format: str):
    if sparse_format not in _FORMATS:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; must be one of {sorted(_FORMATS)}")
    return _FORMATS[sparse_format]


def empty(shape, dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds):
    """An all-zero sparse array of the given shape (nse=0 unless given)."""
    return _format(sparse_format)._empty(shape, dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds):
    """A sparse 2-D array with ones on the k-th diagonal."""
    return _format(sparse_format)._eye(N, N if M is None else M, k, dtype=dtype, index_dtype=index_dtype, **kwds)


def todense(arr):
    """arr as a dense array (dense arrays pass through)."""
    return arr.todense() if isinstance(arr, JAXSparse) else arr
