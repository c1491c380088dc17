"""pyjax.experimental.sparse.csr: the legacy 2-D CSR and CSC matrices (data, indices, indptr) with their
matvec/matmat, as in jax.experimental.sparse; the row of each stored element comes from indptr by search."""

from __future__ import annotations

import functools

import pyjax.numpy as jnp
from pyjax.core.pytree import register_pytree_node_class
from pyjax.experimental.sparse._base import JAXSparse
from pyjax.experimental.sparse.coo import _check_2d, _dense_matmul, _diagonal, _nonzeros, _rows_times

__all__ = ["CSC", "CSR", "csr_fromdense", "csr_matmat", "csr_matvec", "csr_todense"]


def _pointers(row, n, index_dtype):
    counts = jnp.zeros(n, index_dtype).at[row].add(1, mode="drop")
    return jnp.concatenate([jnp.zeros(1, index_dtype), jnp.cumsum(counts).astype(index_dtype)])


def _rows(indptr, nse):
    """The row (major index) of each of nse stored elements; nse and beyond the last pointer: n (dropped)."""
    return jnp.searchsorted(indptr, jnp.arange(nse, dtype=indptr.dtype), side="right").astype(indptr.dtype) - 1


class _Compressed(JAXSparse):
    """Shared part of CSR (rows compressed) and CSC (columns compressed)."""

    def __init__(self, args, *, shape):
        self.data, self.indices, self.indptr = (jnp.asarray(a) for a in args)
        super().__init__(args, shape=shape)

    nse = property(lambda self: self.data.size)
    dtype = property(lambda self: self.data.dtype)

    @property
    def _bufs(self):
        return (self.data, self.indices, self.indptr)

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), self.shape

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = aux_data
        return obj

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32"):
        _check_2d(shape, cls.__name__)
        n = shape[0] if cls is CSR else shape[1]
        return cls((jnp.zeros(0, dtype), jnp.zeros(0, index_dtype), jnp.zeros(n + 1, index_dtype)), shape=shape)


@register_pytree_node_class
class CSR(_Compressed):
    """A 2-D sparse matrix in compressed-row format: ``CSR((data, indices, indptr), shape=...)``."""

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype="int32") -> CSR:
        """The CSR of a dense 2-D array."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> CSR:
        diag = _diagonal(N, M, k, dtype, index_dtype)
        if diag is None:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        data, row, col = diag
        return cls((data, col, _pointers(row, N, jnp.dtype(index_dtype))), shape=(N, M))

    def todense(self):
        """The dense matrix."""
        return csr_todense(self)

    def transpose(self, axes=None) -> CSC:
        assert axes is None
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        return _dense_matmul(self, other, csr_matvec, csr_matmat)


@register_pytree_node_class
class CSC(_Compressed):
    """A 2-D sparse matrix in compressed-column format: the transpose of a CSR with the same buffers."""

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype="int32") -> CSC:
        """The CSC of a dense 2-D array."""
        return csr_fromdense(jnp.asarray(mat).T, nse=nse, index_dtype=index_dtype).T

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> CSC:
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).T

    def todense(self):
        """The dense matrix."""
        return self.T.todense().T

    def transpose(self, axes=None) -> CSR:
        assert axes is None
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        return _dense_matmul(
            self.T, other, functools.partial(csr_matvec, transpose=True), functools.partial(csr_matmat, transpose=True)
        )


def csr_fromdense(mat, *, nse=None, index_dtype="int32") -> CSR:
    """The CSR of a dense 2-D array: its nonzeros in row-major order."""
    data, row, col, keep = _nonzeros(mat, nse, index_dtype)
    n = jnp.shape(mat)[0]
    indptr = _pointers(jnp.where(keep, row, n), n, jnp.dtype(index_dtype))
    return CSR((data, col, indptr), shape=jnp.shape(mat))


def csr_todense(mat: CSR):
    """The dense matrix of a CSR."""
    row = _rows(mat.indptr, mat.nse)
    return jnp.zeros(mat.shape, mat.dtype).at[row, mat.indices].add(mat.data, mode="drop")


def _product(mat: CSR, b, transpose, name):
    b = jnp.asarray(b)
    row = _rows(mat.indptr, mat.nse)
    row, col = (mat.indices, row) if transpose else (row, mat.indices)
    n_out, n_in = mat.shape[::-1] if transpose else mat.shape
    if b.shape[0] != n_in:
        raise ValueError(f"{name}: shape mismatch, mat.shape={mat.shape} operand shape={b.shape} transpose={transpose}")
    dtype = jnp.result_type(mat.data.dtype, b.dtype)
    return _rows_times(mat.data.astype(dtype), row, col, b.astype(dtype), n_out)


def csr_matvec(mat: CSR, v, transpose: bool = False):
    """mat @ v (mat.T @ v with transpose=True) for a dense vector v."""
    return _product(mat, v, transpose, "csr_matvec")


def csr_matmat(mat: CSR, B, *, transpose: bool = False):
    """mat @ B (mat.T @ B with transpose=True) for a dense matrix B."""
    return _product(mat, B, transpose, "csr_matmat")
