"""pyjax.experimental.sparse.bcsr: the batched compressed-sparse-row array (BCSR), two sparse dimensions stored
as column indices plus row pointers; its operations go through the equivalent BCOO."""

from __future__ import annotations

from collections.abc import Sequence

import pyjax.numpy as jnp
from pyjax.core.pytree import register_pytree_node_class
from pyjax.experimental.sparse._base import JAXSparse
from pyjax.experimental.sparse.bcoo import BCOO, _mapped_shape, bcoo_fromdense, bcoo_todense, nfold_vmap

__all__ = ["BCSR", "bcsr_fromdense", "bcsr_todense"]


def _validate(data, indices, indptr, shape):
    n_batch = indices.ndim - 1
    n_dense = len(shape) - n_batch - 2
    if n_dense < 0:
        raise ValueError(f"Invalid indices.shape={tuple(indices.shape)} for shape={tuple(shape)}")
    nse = indices.shape[-1]
    if tuple(indptr.shape[n_batch:]) != (shape[n_batch] + 1,):
        raise ValueError(f"indptr shape must match the matrix shape plus 1, got indptr.shape={tuple(indptr.shape)}")
    if tuple(data.shape[n_batch:]) != (nse, *shape[n_batch + 2 :]):
        raise ValueError(f"Invalid data.shape={tuple(data.shape)} for nse={nse}, n_batch={n_batch}, n_dense={n_dense}")
    return n_batch, n_dense, nse


def _bcoo_indices(indices, indptr):
    """BCOO indices (*batch, nse, 2) of BCSR column indices and row pointers."""
    nse = indices.shape[-1]

    def rows(ptr):
        return jnp.searchsorted(ptr, jnp.arange(nse, dtype=ptr.dtype), side="right").astype(ptr.dtype) - 1

    r = nfold_vmap(rows, indices.ndim - 1)(indptr)
    return jnp.stack([r, indices.astype(r.dtype)], axis=-1)


def _bcsr_buffers(indices, shape, index_dtype):
    """BCSR (column indices, row pointers) of sorted BCOO indices."""
    n_batch = indices.ndim - 2
    n_rows = shape[n_batch]

    def ptr(row):
        counts = jnp.zeros(n_rows, index_dtype).at[row].add(1, mode="drop")
        return jnp.concatenate([jnp.zeros(1, index_dtype), jnp.cumsum(counts).astype(index_dtype)])

    return indices[..., 1], nfold_vmap(ptr, n_batch)(indices[..., 0])


@register_pytree_node_class
class BCSR(JAXSparse):
    """Batched CSR sparse array: ``BCSR((data, indices, indptr), shape=...)``."""

    def __init__(self, args, *, shape: Sequence[int], indices_sorted: bool = False, unique_indices: bool = False):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=shape)
        self._n_dense = self.n_dense  # kept for flattening rebuilt objects whose leaves are not arrays
        _validate(self.data, self.indices, self.indptr, self.shape)

    nse = property(lambda self: self.indices.shape[-1])
    dtype = property(lambda self: self.data.dtype)
    n_batch = property(lambda self: self.indices.ndim - 1)
    n_sparse = property(lambda self: 2)
    n_dense = property(lambda self: self.data.ndim - self.indices.ndim)

    def _repr_extra(self) -> str:
        return (f", n_batch={self.n_batch}" if self.n_batch else "") + (
            f", n_dense={self.n_dense}" if self.n_dense else ""
        )

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype="int32", n_dense: int = 0, n_batch: int = 0) -> BCSR:
        """A BCSR holding the nonzeros of the dense array mat."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> BCSR:
        """The BCSR of a BCOO with two sparse dimensions."""
        if arr.n_sparse != 2:
            raise NotImplementedError(f"BSCR.from_bcoo requires n_sparse=2; got arr.n_sparse={arr.n_sparse}")
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        indices, indptr = _bcsr_buffers(arr.indices, arr.shape, arr.indices.dtype)
        return cls((arr.data, indices, indptr), shape=arr.shape)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0) -> BCSR:
        if len(shape) - n_dense - n_batch != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions.")
        return cls.from_bcoo(
            BCOO._empty(shape, dtype=dtype, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch, nse=nse)
        )

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0) -> BCSR:
        if n_batch or n_dense:
            raise ValueError(
                f"BCSR sparse.eye: must have 2 sparse dimensions; got n_batch={n_batch}, n_dense={n_dense}"
            )
        return cls.from_bcoo(BCOO._eye(N, M, k, dtype=dtype, index_dtype=index_dtype))

    def to_bcoo(self) -> BCOO:
        """The equivalent BCOO."""
        indices = _bcoo_indices(self.indices, self.indptr)
        return BCOO(
            (self.data, indices),
            shape=self.shape,
            indices_sorted=self.indices_sorted,
            unique_indices=self.unique_indices,
        )

    def todense(self):
        """The dense array."""
        return bcsr_todense(self)

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("Transpose is not implemented.")

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), (
            self.shape,
            self.indices_sorted,
            self.unique_indices,
            self._n_dense,
        )

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        shape, obj.indices_sorted, obj.unique_indices, n_dense = aux_data
        obj._n_dense = n_dense
        ndim = getattr(obj.indices, "ndim", None)
        obj.shape = _mapped_shape(shape, n_dense, obj.data, _Rank(obj.indices, 2)) if isinstance(ndim, int) else shape
        return obj


class _Rank:
    """A shape-only view of BCSR indices as the BCOO indices (*batch, nse, n_sparse) they stand for."""

    def __init__(self, indices, n_sparse):
        self.shape = (*indices.shape, n_sparse)
        self.ndim = len(self.shape)


def bcsr_fromdense(mat, *, nse=None, n_batch: int = 0, n_dense: int = 0, index_dtype="int32") -> BCSR:
    """The BCSR of a dense array (exactly two sparse dimensions)."""
    mat = jnp.asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions.")
    return BCSR.from_bcoo(bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype))


def bcsr_todense(mat: BCSR):
    """The dense array of a BCSR."""
    return bcoo_todense(mat.to_bcoo())
