"""pyjax.experimental.sparse.coo: the legacy 2-D COO matrix (data, row, col) with its matvec/matmat, as in
jax.experimental.sparse (BCOO is the general format; this one exists for code written against it)."""

from __future__ import annotations

import operator

import pyjax.numpy as jnp
from pyjax import lax
from pyjax.core.core import concrete_or_error
from pyjax.core.pytree import register_pytree_node_class
from pyjax.experimental.sparse._base import JAXSparse

__all__ = ["COO", "coo_fromdense", "coo_matmat", "coo_matvec", "coo_todense"]


def _check_2d(shape, name):
    if len(shape) != 2:
        raise ValueError(f"{name} must have ndim=2; got shape={tuple(shape)}")


def _diagonal(N, M, k, dtype, index_dtype):
    """(data, row, col) of the k-th diagonal of an N x M matrix, or None when it is empty."""
    size = min(N, M - k) if k > 0 else min(N + k, M)
    if size <= 0:
        return None
    i = jnp.arange(size, dtype=index_dtype)
    return jnp.ones(size, dtype), i + max(-k, 0), i + max(k, 0)


def _nonzeros(mat, nse, index_dtype):
    """data, row, col of the nonzeros of a 2-D array in row-major order, nse of them (JAX's padding)."""
    mat = jnp.asarray(mat)
    _check_2d(mat.shape, "fromdense input")
    if nse is None:
        nse = (mat != 0).sum()
    nse = operator.index(int(concrete_or_error(nse, "The nse argument of fromdense must be concrete.")))
    row, col = jnp.nonzero(mat, size=nse)
    keep = jnp.arange(nse) < (mat != 0).sum()
    data = jnp.where(keep, mat[row, col], 0)
    return data, row.astype(index_dtype), col.astype(index_dtype), keep


def _rows_times(data, row, col, b, n_out):
    """sum over stored elements of data * b[col] into rows `row` of an (n_out, ...) result."""
    prod = data.reshape(data.shape + (1,) * (b.ndim - 1)) * b.at[col].get(mode="fill", fill_value=0)
    return jnp.zeros((n_out, *b.shape[1:]), prod.dtype).at[row].add(prod, mode="drop")


def _dense_matmul(a, other, matvec, matmat):
    """a @ other for a 2-D sparse a and a dense other: matvec(a, other) for a vector, matmat(a, other) for a matrix."""
    if isinstance(other, JAXSparse):
        raise NotImplementedError("matmul between two sparse objects.")
    other = jnp.asarray(other)
    if other.ndim == 1:
        return matvec(a, other)
    if other.ndim == 2:
        return matmat(a, other)
    raise NotImplementedError(f"matmul with object of shape {other.shape}")


@register_pytree_node_class
class COO(JAXSparse):
    """A 2-D sparse matrix in coordinate format: ``COO((data, row, col), shape=...)``."""

    def __init__(self, args, *, shape, rows_sorted: bool = False, cols_sorted: bool = False):
        self.data, self.row, self.col = (jnp.asarray(a) for a in args)
        self._rows_sorted, self._cols_sorted = rows_sorted, cols_sorted
        super().__init__(args, shape=shape)

    nse = property(lambda self: self.data.size)
    dtype = property(lambda self: self.data.dtype)

    @property
    def _bufs(self):
        return (self.data, self.row, self.col)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype="int32") -> COO:
        """The COO of a dense 2-D array."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> COO:
        _check_2d(shape, "COO")
        empty = jnp.zeros(0, index_dtype)
        return cls((jnp.zeros(0, dtype), empty, empty), shape=shape, rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> COO:
        diag = _diagonal(N, M, k, dtype, index_dtype)
        if diag is None:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype)
        return cls(diag, shape=(N, M), rows_sorted=True, cols_sorted=True)

    def _sort_indices(self) -> COO:
        if self._rows_sorted:
            return self
        row, col, data = lax.sort((self.row, self.col, self.data), num_keys=2)
        return COO((data, row, col), shape=self.shape, rows_sorted=True)

    def todense(self):
        """The dense matrix."""
        return coo_todense(self)

    def transpose(self, axes=None) -> COO:
        if axes is not None:
            raise NotImplementedError("axes argument to transpose()")
        return COO(
            (self.data, self.col, self.row),
            shape=self.shape[::-1],
            rows_sorted=self._cols_sorted,
            cols_sorted=self._rows_sorted,
        )

    def __matmul__(self, other):
        return _dense_matmul(self, other, coo_matvec, coo_matmat)

    def tree_flatten(self):
        return (self.data, self.row, self.col), (self.shape, self._rows_sorted, self._cols_sorted)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        obj.shape, obj._rows_sorted, obj._cols_sorted = aux_data
        return obj


def coo_fromdense(mat, *, nse=None, index_dtype="int32") -> COO:
    """The COO of a dense 2-D array: its nonzeros in row-major order (padding: zeros at (0, 0))."""
    data, row, col, _ = _nonzeros(mat, nse, index_dtype)
    return COO((data, row, col), shape=jnp.shape(mat), rows_sorted=True)


def coo_todense(mat: COO):
    """The dense matrix of a COO (duplicates summed)."""
    return jnp.zeros(mat.shape, mat.dtype).at[mat.row, mat.col].add(mat.data, mode="drop")


def coo_matvec(mat: COO, v, transpose: bool = False):
    """mat @ v (mat.T @ v with transpose=True) for a dense vector v."""
    v = jnp.asarray(v)
    row, col = (mat.col, mat.row) if transpose else (mat.row, mat.col)
    n_out, n_in = mat.shape[::-1] if transpose else mat.shape
    if v.shape != (n_in,):
        raise ValueError(f"coo_matvec: shape mismatch, mat.shape={mat.shape} v.shape={v.shape} transpose={transpose}")
    data, v = jnp.asarray(mat.data), v
    dtype = jnp.result_type(data.dtype, v.dtype)
    return _rows_times(data.astype(dtype), row, col, v.astype(dtype), n_out)


def coo_matmat(mat: COO, B, *, transpose: bool = False):
    """mat @ B (mat.T @ B with transpose=True) for a dense matrix B."""
    B = jnp.asarray(B)
    row, col = (mat.col, mat.row) if transpose else (mat.row, mat.col)
    n_out, n_in = mat.shape[::-1] if transpose else mat.shape
    if B.ndim != 2 or B.shape[0] != n_in:
        raise ValueError(f"coo_matmat: shape mismatch, mat.shape={mat.shape} B.shape={B.shape} transpose={transpose}")
    dtype = jnp.result_type(mat.data.dtype, B.dtype)
    return _rows_times(mat.data.astype(dtype), row, col, B.astype(dtype), n_out)
