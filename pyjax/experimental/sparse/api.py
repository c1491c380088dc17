"""pyjax.experimental.sparse.api: format-generic constructors and conversions (empty, eye, todense)."""

from __future__ import annotations

from pyjax.api import jit
from pyjax.core.core import Tracer
from pyjax.experimental.sparse._base import JAXSparse
from pyjax.experimental.sparse.bcoo import BCOO
from pyjax.experimental.sparse.bcsr import BCSR
from pyjax.experimental.sparse.coo import COO
from pyjax.experimental.sparse.csr import CSC, CSR

__all__ = ["empty", "eye", "todense"]

_FORMATS = {"bcoo": BCOO, "bcsr": BCSR, "coo": COO, "csr": CSR, "csc": CSC}


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


def _identity(x):
    return x


# The name of the jitted identity that a traced todense() leaves in a jaxpr: sparsify's rule for it densifies
# (a dotted name no Python function has).
TODENSE_NAME = "sparse.todense"
_identity.__name__ = _identity.__qualname__ = TODENSE_NAME
_todense_traced = jit(_identity)


def todense(arr):
    """arr as a dense array (dense arrays pass through; inside sparsify, sparse values densify)."""
    if isinstance(arr, JAXSparse):
        return arr.todense()
    return _todense_traced(arr) if isinstance(arr, Tracer) else arr
