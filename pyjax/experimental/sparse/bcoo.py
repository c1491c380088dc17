"""pyjax.experimental.sparse.bcoo: the batched-coordinate sparse array (BCOO) and its operations.

A BCOO of shape (*batch, *sparse, *dense) stores data[*batch, nse, *dense] and indices[*batch, nse, n_sparse];
duplicate indices add up and out-of-bounds indices (the padding: index == the sparse shape) are ignored. Every
operation is written with lax/numpy ops (gather and scatter-add, sort, dot_general), so it runs on each backend
and under jit, grad and vmap without backend code. Names, signatures, layouts (n_batch, n_dense, nse) and
errors follow jax.experimental.sparse.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import pyjax.numpy as jnp
from pyjax import lax
from pyjax.api import vmap
from pyjax.core.core import concrete_or_error
from pyjax.core.pytree import register_pytree_node_class
from pyjax.experimental.sparse._base import JAXSparse, SparseEfficiencyError, SparseEfficiencyWarning

__all__ = [
    "BCOO",
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_dot_general",
    "bcoo_dot_general_sampled",
    "bcoo_dynamic_slice",
    "bcoo_eliminate_zeros",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_sort_indices",
    "bcoo_squeeze",
    "bcoo_sum_duplicates",
    "bcoo_take",
    "bcoo_todense",
    "bcoo_transpose",
    "bcoo_update_layout",
]


def nfold_vmap(f, n: int):
    """f vmapped n times over the leading axis of every argument."""
    for _ in range(n):
        f = vmap(f)
    return f


def _split(seq, n_batch: int, n_sparse: int):
    seq = tuple(seq)
    return seq[:n_batch], seq[n_batch : n_batch + n_sparse], seq[n_batch + n_sparse :]


def _layout(indices, shape) -> tuple[int, int, int, int]:
    """(n_batch, n_sparse, n_dense, nse) of indices for an array of this shape, validated as JAX does."""
    if not jnp.issubdtype(indices.dtype, jnp.integer):
        raise TypeError(f"BCOO indices must be integers, got dtype={indices.dtype}")
    if indices.ndim < 2:
        raise ValueError(f"BCOO indices must have ndim >= 2, got indices.shape={tuple(indices.shape)}")
    nse, n_sparse = indices.shape[-2:]
    n_batch = indices.ndim - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"Invalid indices.shape={tuple(indices.shape)} for shape={tuple(shape)}")
    if any(s1 not in (1, s2) for s1, s2 in zip(indices.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"indices batch dimensions not compatible for indices.shape={indices.shape}, shape={shape}")
    return n_batch, n_sparse, n_dense, nse


def _validate(data, indices, shape) -> tuple[int, int, int, int]:
    n_batch, n_sparse, n_dense, nse = props = _layout(indices, shape)
    if any(s1 not in (1, s2) for s1, s2 in zip(data.shape[:n_batch], shape[:n_batch])):
        raise ValueError(f"data batch dimensions not compatible for data.shape={data.shape}, shape={shape}")
    if tuple(data.shape[n_batch:]) != (nse, *shape[n_batch + n_sparse :]):
        raise ValueError(f"Invalid data.shape={tuple(data.shape)} for nse={nse}, n_batch={n_batch}, n_dense={n_dense}")
    return props


def _full_batch(data, indices, shape):
    """data and indices with their (possibly size-1, broadcast) batch dimensions made full."""
    n_batch = indices.ndim - 2
    batch = tuple(shape[:n_batch])
    if tuple(data.shape[:n_batch]) != batch:
        data = jnp.broadcast_to(data, batch + tuple(data.shape[n_batch:]))
    if tuple(indices.shape[:n_batch]) != batch:
        indices = jnp.broadcast_to(indices, batch + tuple(indices.shape[n_batch:]))
    return data, indices


def _sparse_shape_array(shape, n_batch, n_sparse, dtype):
    return jnp.array(shape[n_batch : n_batch + n_sparse], dtype=dtype).reshape((n_sparse,))


@register_pytree_node_class
class BCOO(JAXSparse):
    """Batched COO sparse array: ``BCOO((data, indices), shape=...)``.

    data has shape ``[*batch_dims, nse, *dense_dims]``, indices ``[*batch_dims, nse, n_sparse]``.
    """

    def __init__(self, args, *, shape: Sequence[int], indices_sorted: bool = False, unique_indices: bool = False):
        data, indices = args
        self.data, self.indices = jnp.asarray(data), jnp.asarray(indices)
        self.indices_sorted = indices_sorted
        self.unique_indices = unique_indices
        super().__init__(args, shape=shape)
        self._n_dense = self.n_dense  # kept for flattening rebuilt objects whose leaves are not arrays
        _validate(self.data, self.indices, self.shape)

    nse = property(lambda self: self.indices.shape[-2])
    dtype = property(lambda self: self.data.dtype)
    n_batch = property(lambda self: self.indices.ndim - 2)
    n_sparse = property(lambda self: self.indices.shape[-1])
    n_dense = property(lambda self: self.data.ndim - 1 - self.n_batch)

    def _repr_extra(self) -> str:
        return (f", n_batch={self.n_batch}" if self.n_batch else "") + (
            f", n_dense={self.n_dense}" if self.n_dense else ""
        )

    @property
    def _info(self) -> dict:
        return {"shape": self.shape, "indices_sorted": self.indices_sorted, "unique_indices": self.unique_indices}

    @property
    def _bufs(self):
        return (self.data, self.indices)

    @classmethod
    def fromdense(cls, mat, *, nse=None, index_dtype="int32", n_dense: int = 0, n_batch: int = 0) -> BCOO:
        """A BCOO holding the nonzeros of the dense array mat."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense, n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0, n_batch: int = 0) -> BCOO:
        """A BCOO from a scipy.sparse array (unbatched, no dense dimensions, as in JAX)."""
        if n_dense != 0 or n_batch != 0:
            raise NotImplementedError("BCOO.fromscipy with nonzero n_dense/n_batch")
        mat = mat.tocoo()
        indices = jnp.stack([jnp.asarray(mat.row), jnp.asarray(mat.col)], axis=1).astype(index_dtype or "int32")
        return cls((jnp.asarray(mat.data), indices), shape=mat.shape)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense=0, n_batch=0, nse=0) -> BCOO:
        shape = tuple(shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, n_batch={n_batch}, nse={nse}")
        batch, sparse, dense = _split(shape, n_batch, n_sparse)
        data = jnp.zeros((*batch, nse, *dense), dtype)
        fill = jnp.array(sparse, dtype=index_dtype).reshape((n_sparse,))
        indices = jnp.broadcast_to(fill, (*batch, nse, n_sparse))
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32", n_batch=0, n_dense=0) -> BCOO:
        n_sparse = 2 - n_batch - n_dense
        if n_sparse < 0 or n_dense < 0 or n_batch < 0:
            raise ValueError(f"Invalid inputs: shape={(N, M)}, n_dense={n_dense}, n_batch={n_batch}")
        size = min(N, M - k) if k > 0 else min(N + k, M)
        if size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype, n_batch=n_batch, n_dense=n_dense)
        if n_batch or n_dense:
            return cls.fromdense(
                jnp.eye(N, M, k, dtype=dtype), n_batch=n_batch, n_dense=n_dense, index_dtype=index_dtype
            )
        i = jnp.arange(size, dtype=index_dtype)
        indices = jnp.stack([i + max(-k, 0), i + max(k, 0)], axis=1)
        return cls((jnp.ones(size, dtype), indices), shape=(N, M), indices_sorted=True, unique_indices=True)

    def update_layout(self, *, n_batch=None, n_dense=None, on_inefficient="error") -> BCOO:
        """The same array with n_batch and n_dense changed."""
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense, on_inefficient=on_inefficient)

    def sum_duplicates(self, nse=None, remove_zeros: bool = True) -> BCOO:
        """Duplicate indices summed (and explicit zeros dropped unless remove_zeros=False); indices sorted."""
        return bcoo_eliminate_zeros(self, nse=nse) if remove_zeros else bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> BCOO:
        """The same array with its indices in lexicographic order."""
        return bcoo_sort_indices(self)

    def todense(self):
        """The dense array."""
        return bcoo_todense(self)

    def transpose(self, axes=None) -> BCOO:
        """Permute the dimensions (batch, sparse and dense dimensions each among themselves)."""
        perm = list(range(self.ndim)[::-1] if axes is None else axes)
        out = bcoo_transpose(self, permutation=perm)
        sparse_perm = [p - self.n_batch for p in perm[self.n_batch : self.n_batch + self.n_sparse]]
        keeps_order = tuple(sparse_perm) == tuple(range(self.n_sparse))
        return BCOO(
            (out.data, out.indices),
            shape=out.shape,
            indices_sorted=self.indices_sorted and keeps_order,
            unique_indices=self.unique_indices,
        )

    def tree_flatten(self):
        return (self.data, self.indices), (self.shape, self.indices_sorted, self.unique_indices, self._n_dense)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        shape, obj.indices_sorted, obj.unique_indices, n_dense = aux_data
        obj._n_dense = n_dense
        obj.shape = _mapped_shape(shape, n_dense, obj.data, obj.indices)
        return obj


def _mapped_shape(shape, n_dense, data, indices):
    """The shape of a BCOO rebuilt from leaves whose batch axes vmap removed or added (JAX maps BCOO batch
    dimensions in vmap, with any in_axes/out_axes among them); other leaves (None, sentinels) keep it."""
    nd = getattr(indices, "ndim", None)
    if not isinstance(nd, int) or nd < 2 or not isinstance(getattr(data, "ndim", None), int):
        return shape
    n_batch = len(shape) - indices.shape[-1] - n_dense
    new_nb = nd - 2
    if new_nb == n_batch or n_batch < 0:
        return shape
    # the leaves' batch sizes (1: broadcast in both), matched from the right against the old batch sizes
    lead = [max(a, b) for a, b in zip(data.shape[:new_nb], indices.shape[:new_nb])]
    old = list(shape[:n_batch])
    batch = []
    if new_nb < n_batch:  # axes removed: keep the old axes that the leaves' axes match
        i = new_nb - 1
        for j in reversed(range(n_batch)):
            if i >= 0 and (lead[i] in (old[j], 1) or j == i):
                batch.append(old[j])
                i -= 1
    else:  # axes added: the old axes sit where they match, the rest are new
        i = n_batch - 1
        for j in reversed(range(new_nb)):
            if i >= 0 and (lead[j] in (old[i], 1) or j == i):
                batch.append(old[i])
                i -= 1
            else:
                batch.append(lead[j])
    return tuple(reversed(batch)) + tuple(shape[n_batch:])


# --- todense / fromdense / extract -----------------------------------------------------------------


def _batch_index(shape, n_batch):
    """Index arrays of the batch dimensions, each of shape (*batch, 1): they broadcast against (*batch, nse)."""
    return tuple(lax.broadcasted_iota("int32", (*shape[:n_batch], 1), d) for d in range(n_batch))


def _todense(data, indices, shape):
    n_batch, n_sparse, _, _ = _validate(data, indices, shape)
    idx = _batch_index(shape, n_batch) + tuple(indices[..., i] for i in range(n_sparse))
    if not n_sparse:
        data = data.sum(n_batch, keepdims=bool(n_batch), dtype=data.dtype)
    return jnp.zeros(shape, data.dtype).at[idx].add(data, mode="drop")


def bcoo_todense(mat: BCOO):
    """The dense array of a BCOO (duplicates summed, padding ignored)."""
    return _todense(mat.data, mat.indices, mat.shape)


def _extract(indices, arr):
    """The BCOO data for these indices read from the dense arr (zero at out-of-bounds padding)."""
    n_batch, n_sparse, _, nse = _layout(indices, arr.shape)
    idx = _batch_index(arr.shape, n_batch) + tuple(indices[..., i] for i in range(n_sparse))
    if not idx:
        out = arr[None]
    else:
        out = arr.at[idx].get(mode="fill", fill_value=0)
    if not n_sparse and nse != 1:
        out = jnp.broadcast_to(out, (*out.shape[:n_batch], nse, *out.shape[n_batch + 1 :]))
    return out


def bcoo_extract(sparr: BCOO, arr, *, assume_unique=None) -> BCOO:
    """The values of the dense arr at sparr's indices, as a BCOO with sparr's sparsity pattern. Duplicate
    indices (assume_unique=False) get the value once, at their first occurrence."""
    if not isinstance(sparr, BCOO):
        raise TypeError(f"First argument to bcoo_extract should be a BCOO array. Got type(sparr)={type(sparr)}")
    a = jnp.asarray(arr)
    if tuple(a.shape) != sparr.shape:
        raise ValueError(f"shape mismatch: sparr.shape={sparr.shape} a.shape={tuple(a.shape)}")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = _extract(sparr.indices, a)
    if not assume_unique:
        data = jnp.where(_first_occurrence(sparr.indices, sparr.shape, data.ndim), data, 0)
    return BCOO((data, sparr.indices), **sparr._info)


def _first_occurrence(indices, shape, data_ndim):
    """Mask (broadcastable to data) of entries whose index does not occur earlier in the same batch."""
    n_batch = indices.ndim - 2
    same = jnp.all(indices[..., :, None, :] == indices[..., None, :, :], -1)
    nse = indices.shape[-2]
    earlier = lax.broadcasted_iota("int32", (nse, nse), 1) < lax.broadcasted_iota("int32", (nse, nse), 0)
    first = ~jnp.any(same & earlier, -1)
    return first.reshape(first.shape + (1,) * (data_ndim - n_batch - 1))


def _count_stored(mat, n_batch, n_dense):
    mask = mat != 0
    if n_dense:
        mask = mask.any(tuple(range(mat.ndim - n_dense, mat.ndim)))
    counts = mask.sum(tuple(range(n_batch, mask.ndim)))
    return counts.max() if n_batch else counts


_TRACED_NSE = (
    "The error arose for the nse argument of bcoo_fromdense. In order for BCOO.fromdense() to be used in "
    "traced/compiled code, you must pass a concrete value to the nse (number of stored elements) argument."
)


def bcoo_fromdense(mat, *, nse=None, n_batch: int = 0, n_dense: int = 0, index_dtype="int32") -> BCOO:
    """The BCOO of a dense array: the nonzeros (nonzero blocks, with n_dense) of each batch in row-major
    order, padded to nse with zeros at out-of-bounds indices."""
    mat = jnp.asarray(mat)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for mat.shape={tuple(mat.shape)}")
    if nse is None:
        nse = _count_stored(mat, n_batch, n_dense)
    nse = operator.index(int(concrete_or_error(nse, _TRACED_NSE)))
    mask = mat != 0
    if n_dense:
        mask = mask.any(tuple(range(mat.ndim - n_dense, mat.ndim)))
    sparse_shape = tuple(mat.shape[n_batch : n_batch + n_sparse])
    if n_sparse:
        cols = nfold_vmap(lambda m: jnp.stack(jnp.nonzero(m, size=nse, fill_value=sparse_shape), -1), n_batch)(mask)
        indices = cols.astype(index_dtype)
    else:
        indices = jnp.zeros((*mat.shape[:n_batch], nse, 0), index_dtype)
    data = _extract(indices, mat)
    true_nse = mask.sum(tuple(range(n_batch, mask.ndim)))[..., None]
    keep = lax.broadcasted_iota("int32", (1,) * n_batch + (nse,), n_batch) < true_nse
    data = jnp.where(keep.reshape(keep.shape + (1,) * n_dense), data, 0)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


# --- layout ------------------------------------------------------------------------------------------


def _unbatch(data, indices, shape, n_keep=0):
    """data, indices with the batch dimensions after the first n_keep moved into the sparse dimensions."""
    n_batch = indices.ndim - 2
    if n_batch == n_keep:
        return data, indices
    data, indices = _full_batch(data, indices, shape)
    keep, moved = tuple(shape[:n_keep]), tuple(shape[n_keep:n_batch])
    nse, n_sparse = indices.shape[-2:]
    coords = [
        jnp.broadcast_to(lax.broadcasted_iota(indices.dtype, (*moved, 1, 1), d), (*keep, *moved, nse, 1))
        for d in range(len(moved))
    ]
    indices = jnp.concatenate([*coords, indices], axis=-1)
    new_nse = math.prod(moved) * nse
    data = data.reshape((*keep, new_nse, *data.shape[n_batch + 1 :]))
    indices = indices.reshape((*keep, new_nse, len(moved) + n_sparse))
    return data, indices


def _undense(data, indices, shape, n_dense_out):
    """data, indices with the dense dimensions before the last n_dense_out moved into the sparse dimensions."""
    n_batch, n_sparse, n_dense, nse = _validate(data, indices, shape)
    if n_dense == n_dense_out:
        return data, indices
    data, indices = _full_batch(data, indices, shape)
    moved = tuple(data.shape[n_batch + 1 : n_batch + 1 + n_dense - n_dense_out])
    rest = tuple(data.shape[n_batch + 1 + len(moved) :])
    batch = tuple(shape[:n_batch])
    size = math.prod(moved)
    coords = [
        jnp.broadcast_to(lax.broadcasted_iota(indices.dtype, (1, *moved, 1), d + 1), (*batch, nse, *moved, 1))
        for d in range(len(moved))
    ]
    old = jnp.broadcast_to(
        indices.reshape((*batch, nse, *(1,) * len(moved), n_sparse)), (*batch, nse, *moved, n_sparse)
    )
    indices = jnp.concatenate([old, *coords], axis=-1).reshape((*batch, nse * size, n_sparse + len(moved)))
    data = data.reshape((*batch, nse * size, *rest))
    return data, indices


def bcoo_update_layout(mat: BCOO, *, n_batch=None, n_dense=None, on_inefficient="error") -> BCOO:
    """The same array stored with n_batch batch and n_dense dense dimensions. Lowering either is cheap;
    raising one stores explicit zeros: SparseEfficiencyError unless on_inefficient is 'warn' or None."""
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > mat.ndim:
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={mat.shape}")
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(f"on_inefficient={on_inefficient!r}; expected one of 'error', 'warn', None")
    if n_batch > mat.n_batch or n_dense > mat.n_dense:
        grown = mat.shape[mat.n_batch : n_batch] + mat.shape[mat.ndim - n_dense : mat.ndim - mat.n_dense]
        if math.prod(grown) > 1:
            msg = (
                f"Layout change from n_batch={mat.n_batch}, n_dense={mat.n_dense} to n_batch={n_batch}, "
                f"n_dense={n_dense} will store explicit zeros."
            )
            if on_inefficient == "error":
                raise SparseEfficiencyError(msg + " To silence this error, use on_inefficient=None.")
            if on_inefficient == "warn":
                import warnings

                warnings.warn(msg, SparseEfficiencyWarning, stacklevel=2)
        dense = mat.todense()
        return bcoo_fromdense(dense, n_batch=n_batch, n_dense=n_dense, index_dtype=mat.indices.dtype)
    data, indices = _unbatch(mat.data, mat.indices, mat.shape, n_batch)
    data, indices = _undense(data, indices, mat.shape, n_dense)
    return BCOO((data, indices), shape=mat.shape)


# --- sorting and duplicates --------------------------------------------------------------------------


def _sort_order(indices):
    """The permutation sorting the rows of indices (nse, n_sparse) lexicographically."""
    return jnp.lexsort(tuple(indices[:, i] for i in reversed(range(indices.shape[1]))))


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """The same array with each batch's indices in lexicographic order (data permuted with them)."""
    if not mat.n_sparse or mat.nse <= 1:
        return BCOO(mat._bufs, shape=mat.shape, indices_sorted=True, unique_indices=mat.unique_indices)
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)

    def sort(d, i):
        order = _sort_order(i)
        return d[order], i[order]

    data, indices = nfold_vmap(sort, mat.n_batch)(data, indices)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=mat.unique_indices)


def _sum_duplicates(data, indices, sparse_shape, nse):
    """One batch: (data, indices) with sorted unique indices, padded/truncated to nse, and the true count."""
    fill = jnp.array(sparse_shape, dtype=indices.dtype).reshape((len(sparse_shape),))
    oob = jnp.any((indices >= fill) | (indices < 0), -1)
    indices = jnp.where(oob[:, None], fill, indices)
    order = _sort_order(indices)
    idx, dat, oob = indices[order], data[order], oob[order]
    new = jnp.concatenate([jnp.ones((1,), bool), jnp.any(idx[1:] != idx[:-1], -1)])
    seg = jnp.cumsum(new) - 1
    seg = jnp.where(oob, nse, seg)  # padding goes nowhere
    out_idx = jnp.broadcast_to(fill, (nse, fill.shape[0])).at[seg].set(idx, mode="drop")
    out_dat = jnp.zeros((nse, *dat.shape[1:]), dat.dtype).at[seg].add(dat, mode="drop")
    count = jnp.sum(new & ~oob)
    return out_dat, out_idx, count


def _unique_count(mat: BCOO):
    """The largest number of distinct in-bounds indices of a batch (concrete)."""
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)
    sparse_shape = mat.shape[mat.n_batch : mat.n_batch + mat.n_sparse]
    count = nfold_vmap(lambda d, i: _sum_duplicates(d, i, sparse_shape, 1)[2], mat.n_batch)(data, indices)
    return int(concrete_or_error(count.max() if mat.n_batch else count, "nse argument of bcoo_sum_duplicates."))


def bcoo_sum_duplicates(mat: BCOO, nse=None) -> BCOO:
    """Duplicate indices summed into one entry, indices sorted; nse (default: the largest count) pads or
    truncates the result; a given nse makes it usable under jit."""
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)
    if not n_sparse:
        nse_out = 1 if nse is None else operator.index(nse)
        data = data.sum(n_batch, keepdims=True, dtype=data.dtype)
        pad = [(0, 0)] * data.ndim
        pad[n_batch] = (0, max(nse_out - 1, 0))
        data = jnp.pad(data, pad)[(slice(None),) * n_batch + (slice(0, nse_out),)]
        indices = jnp.zeros((*mat.shape[:n_batch], nse_out, 0), indices.dtype)
        return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)
    nse = _unique_count(mat) if nse is None else operator.index(nse)
    sparse_shape = mat.shape[n_batch : n_batch + n_sparse]
    data, indices, _ = nfold_vmap(lambda d, i: _sum_duplicates(d, i, sparse_shape, nse), n_batch)(data, indices)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_eliminate_zeros(mat: BCOO, nse=None) -> BCOO:
    """bcoo_sum_duplicates after dropping the entries whose stored data are all zero."""
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)
    zero = jnp.all(data == 0, tuple(range(n_batch + 1, data.ndim)))
    fill = _sparse_shape_array(mat.shape, n_batch, n_sparse, indices.dtype)
    indices = jnp.where(zero[..., None], fill, indices)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=mat.shape), nse=nse)


# --- structure: transpose, reshape, broadcast, concatenate, slice, squeeze, rev ---------------------------


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """lax.transpose of a BCOO: batch, sparse and dense dimensions may each be permuted among themselves."""
    perm = tuple(operator.index(p) for p in permutation)
    if sorted(perm) != list(range(mat.ndim)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got permutation {perm} for operand shape {mat.shape}."
        )
    nb, ns = mat.n_batch, mat.n_sparse
    bp, sp, dp = _split(perm, nb, ns)
    if (
        tuple(sorted(bp)) != tuple(range(nb))
        or tuple(sorted(sp)) != tuple(range(nb, nb + ns))
        or tuple(sorted(dp)) != tuple(range(nb + ns, mat.ndim))
    ):
        raise NotImplementedError(
            f"bcoo_transpose: permutation={list(perm)} is invalid for n_batch={nb}, n_sparse={ns}: batch, "
            "sparse and dense dimensions may only be permuted among themselves."
        )
    data = mat.data.transpose((*bp, nb, *(d - ns + 1 for d in dp)))
    indices = mat.indices.transpose((*bp, nb, nb + 1))
    if ns:
        indices = indices[..., [s - nb for s in sp]]
    shape = tuple(mat.shape[p] for p in perm)
    return BCOO((data, indices), shape=shape)


def bcoo_reshape(mat: BCOO, *, new_sizes: Sequence[int], dimensions=None, sharding=None) -> BCOO:
    """lax.reshape of a BCOO: batch, sparse and dense dimensions are reshaped separately and cannot mix."""
    new_sizes = tuple(operator.index(s) for s in new_sizes)
    if math.prod(new_sizes) != mat.size:
        raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} for shape {mat.shape}.")
    if dimensions is not None and tuple(dimensions) != tuple(range(mat.ndim)):
        mat = mat.transpose(tuple(dimensions))
    nb, ns = mat.n_batch, mat.n_sparse
    batch, sparse, _ = _split(mat.shape, nb, ns)
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)
    batch_size, sparse_size = math.prod(batch), math.prod(sparse)
    cum = [math.prod(new_sizes[: i + 1]) for i in range(len(new_sizes))]
    if batch_size != 1 and batch_size not in cum:
        raise ValueError(
            f"bcoo_reshape: new shape cannot mix batch and sparse dimensions; got shape={mat.shape} "
            f"new_shape={new_sizes} with n_batch={nb}"
        )
    if sparse_size != 1 and batch_size * sparse_size not in cum:
        raise ValueError(
            f"bcoo_reshape: new shape cannot mix sparse and dense dimensions; got shape={mat.shape} "
            f"new_shape={new_sizes} with n_dense={mat.n_dense}"
        )
    i1 = sum(c <= batch_size for c in cum)
    i2 = sum(c <= batch_size * sparse_size for c in cum)
    new_batch, new_sparse, new_dense = new_sizes[:i1], new_sizes[i1:i2], new_sizes[i2:]
    data = data.reshape((*new_batch, mat.nse, *new_dense))
    indices = indices.reshape((*new_batch, mat.nse, ns))
    if not new_sparse:
        indices = jnp.zeros((*new_batch, mat.nse, 0), indices.dtype)
    elif sparse:
        fill = _sparse_shape_array(mat.shape, nb, ns, indices.dtype)
        oob = jnp.any(indices >= fill, -1, keepdims=True)
        flat = jnp.zeros(indices.shape[:-1], indices.dtype)
        for i, s in enumerate(sparse):
            flat = flat * s + jnp.clip(indices[..., i], 0, s - 1)
        cols = []
        for s in reversed(new_sparse):
            cols.append(flat % s)
            flat = flat // s
        indices = jnp.stack(cols[::-1], -1)
        indices = jnp.where(oob, jnp.array(new_sparse, indices.dtype), indices)
    else:  # only size-1 sparse dimensions appear
        indices = jnp.zeros((*new_batch, mat.nse, len(new_sparse)), indices.dtype)
    return BCOO((data, indices), shape=new_sizes)


def bcoo_broadcast_in_dim(
    mat: BCOO, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding=None
) -> BCOO:
    """lax.broadcast_in_dim of a BCOO: new leading dimensions become batch dimensions, new trailing ones dense."""
    shape, bdims = tuple(shape), tuple(broadcast_dimensions)
    if len(mat.shape) != len(bdims):
        raise ValueError(f"spinfo.shape={mat.shape} and broadcast_dimensions={bdims} must have the same length")
    nb, ns, nd, nse = mat.n_batch, mat.n_sparse, mat.n_dense, mat.nse
    b_dims, s_dims, d_dims = _split(bdims, nb, ns)
    if max(b_dims, default=0) > min(s_dims, default=len(shape)):
        raise ValueError("Cannot mix batch and sparse dimensions during broadcast_in_dim")
    if max(s_dims, default=0) > min(d_dims, default=len(shape)):
        raise ValueError("Cannot mix sparse and dense dimensions during broadcast_in_dim")
    new_nb = min(bdims[nb:], default=len(shape))
    new_nd = nd and len(shape) - min(bdims[-nd:])
    new_ns = len(shape) - new_nb - new_nd
    if math.prod(mat.shape[nb : nb + ns]) != math.prod(shape[new_nb : new_nb + new_ns]):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    data, indices = mat.data, mat.indices
    if (new_nb, new_nd) != (nb, nd):
        data = lax.broadcast_in_dim(
            data,
            (*shape[:new_nb], nse, *shape[new_nb + new_ns :]),
            (*b_dims, new_nb, *(b + 1 - new_ns for b in d_dims)),
        )
        indices = lax.broadcast_in_dim(indices, (*shape[:new_nb], nse, ns), (*b_dims, new_nb, new_nb + 1))
    if new_ns != ns:
        cols = [s - new_nb for s in s_dims]
        new = jnp.zeros((*indices.shape[:-1], new_ns), indices.dtype)
        indices = new.at[..., cols].set(indices) if cols else new
    return BCOO((data, indices), shape=shape)


def _set_nse(mat: BCOO, nse: int) -> BCOO:
    """mat padded (zeros at out-of-bounds indices) to nse entries per batch."""
    if nse == mat.nse:
        return mat
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)
    nb = mat.n_batch
    pad = [(0, 0)] * data.ndim
    pad[nb] = (0, nse - mat.nse)
    data = jnp.pad(data, pad)
    fill = _sparse_shape_array(mat.shape, nb, mat.n_sparse, indices.dtype)
    extra = jnp.broadcast_to(fill, (*indices.shape[:nb], nse - mat.nse, mat.n_sparse))
    indices = jnp.concatenate([indices, extra], axis=nb)
    return BCOO((data, indices), shape=mat.shape)


def _cap_nse(mat: BCOO) -> BCOO:
    """mat with at most one entry per sparse position (duplicates summed) when its nse exceeds their number,
    as JAX sizes slices and sparse products."""
    n_positions = math.prod(mat.shape[mat.n_batch : mat.n_batch + mat.n_sparse])
    if not mat.n_sparse or mat.nse <= n_positions:
        return mat
    out = bcoo_sum_duplicates(mat, nse=n_positions)
    return BCOO((out.data, out.indices), shape=mat.shape)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """lax.concatenate of BCOO arrays with the same layout, along a batch or sparse dimension."""
    dimension = operator.index(dimension)
    if not all(isinstance(op, BCOO) for op in operands):
        raise ValueError(f"bcoo_concatenate: expected operands to be a sequence of BCOO arrays. Got {operands}")
    shapes = [op.shape for op in operands]
    if len({len(s) for s in shapes}) != 1 or not 0 <= dimension < len(shapes[0]):
        raise TypeError(f"Cannot concatenate arrays with shapes {shapes} along dimension {dimension}")
    if any(s[:dimension] + s[dimension + 1 :] != shapes[0][:dimension] + shapes[0][dimension + 1 :] for s in shapes):
        raise TypeError(
            f"Cannot concatenate arrays with shapes that differ in dimensions other than the one being "
            f"concatenated: concatenating along dimension {dimension} for shapes {', '.join(map(str, shapes))}."
        )
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    if len({op.n_batch for op in operands}) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    nb, ns = operands[0].n_batch, operands[0].n_sparse
    out_shape = list(shapes[0])
    out_shape[dimension] = sum(s[dimension] for s in shapes)
    if dimension < nb:
        nse = max(op.nse for op in operands)
        ops = [_set_nse(op, nse) for op in operands]
        bufs = [_full_batch(op.data, op.indices, op.shape) for op in ops]
        data = jnp.concatenate([d for d, _ in bufs], axis=dimension)
        indices = jnp.concatenate([i for _, i in bufs], axis=dimension)
    elif dimension < nb + ns:
        bufs = [_full_batch(op.data, op.indices, op.shape) for op in operands]
        offsets = [sum(s[dimension] for s in shapes[:k]) for k in range(len(shapes))]
        data = jnp.concatenate([d for d, _ in bufs], axis=nb)
        indices = jnp.concatenate([i.at[..., dimension - nb].add(o) for (_, i), o in zip(bufs, offsets)], axis=nb)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((data, indices), shape=out_shape)


def bcoo_slice(mat: BCOO, *, start_indices: Sequence[int], limit_indices: Sequence[int], strides=None) -> BCOO:
    """lax.slice of a BCOO (nse is kept: entries sliced away become padding)."""
    start, limit = tuple(map(operator.index, start_indices)), tuple(map(operator.index, limit_indices))
    strides = (1,) * mat.ndim if strides is None else tuple(map(operator.index, strides))
    if not len(start) == len(limit) == len(strides) == mat.ndim:
        raise ValueError(
            f"bcoo_slice: start_indices, limit_indices and strides must have length mat.ndim={mat.ndim}; got "
            f"start_indices={start}, limit_indices={limit}, strides={strides}"
        )
    if any(s < 0 or s > lim or lim > n for s, lim, n in zip(start, limit, mat.shape)) or any(st < 1 for st in strides):
        raise ValueError(f"bcoo_slice: invalid start_indices={start}, limit_indices={limit} for shape={mat.shape}")
    nb, ns = mat.n_batch, mat.n_sparse
    new_shape = tuple(-(-(lim - s) // st) for s, lim, st in zip(start, limit, strides))
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)
    bsl = tuple(slice(s, lim, st) for s, lim, st in zip(start[:nb], limit[:nb], strides[:nb]))
    dsl = tuple(slice(s, lim, st) for s, lim, st in zip(start[nb + ns :], limit[nb + ns :], strides[nb + ns :]))
    data = data[bsl + (slice(None),) + dsl]
    indices = indices[bsl]
    if ns:
        s0 = jnp.array(start[nb : nb + ns], indices.dtype)
        lim = jnp.array(limit[nb : nb + ns], indices.dtype)
        st = jnp.array(strides[nb : nb + ns], indices.dtype)
        off = indices - s0
        ok = jnp.all((indices >= s0) & (indices < lim) & (off % st == 0), -1)
        fill = jnp.array(new_shape[nb : nb + ns], indices.dtype)
        indices = jnp.where(ok[..., None], off // st, fill)
        data = jnp.where(ok.reshape(ok.shape + (1,) * mat.n_dense), data, 0)
        return _cap_nse(BCOO((data, indices), shape=new_shape))
    return BCOO((data, indices), shape=new_shape)


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """lax.squeeze of a BCOO: drop size-1 dimensions."""
    dims = tuple(operator.index(d) % arr.ndim for d in dimensions)
    if any(arr.shape[d] != 1 for d in dims):
        raise ValueError(
            "cannot select an axis to squeeze out which has size not equal to one, "
            f"got shape={arr.shape} and dimensions={tuple(dimensions)}"
        )
    nb, ns = arr.n_batch, arr.n_sparse
    batch_dims = tuple(d for d in dims if d < nb)
    keep = [i for i in range(ns) if i + nb not in dims]
    dense_dims = tuple(d - ns + 1 for d in dims if d >= nb + ns)
    data = lax.squeeze(arr.data, batch_dims + dense_dims)
    indices = lax.squeeze(arr.indices[..., keep], batch_dims)
    shape = tuple(s for i, s in enumerate(arr.shape) if i not in dims)
    return BCOO((data, indices), shape=shape, indices_sorted=arr.indices_sorted, unique_indices=arr.unique_indices)


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """lax.rev of a BCOO: reverse the given dimensions."""
    nb, ns = operand.n_batch, operand.n_sparse
    dims = tuple(operator.index(d) for d in dimensions)
    if any(not 0 <= d < operand.ndim for d in dims) or len(set(dims)) != len(dims):
        raise ValueError(f"rev dimensions must be unique and in range, got dimensions={dims} for shape={operand.shape}")
    data, indices = _full_batch(operand.data, operand.indices, operand.shape)
    bdims = [d for d in dims if d < nb]
    ddims = [d + 1 - ns for d in dims if d >= nb + ns]
    if bdims:
        indices = lax.rev(indices, bdims)
    if bdims or ddims:
        data = lax.rev(data, bdims + ddims)
    for d in dims:
        if nb <= d < nb + ns:
            n = operand.shape[d]
            col = indices[..., d - nb]
            indices = indices.at[..., d - nb].set(jnp.where(col < n, n - 1 - col, n))
    return BCOO((data, indices), shape=operand.shape)


def bcoo_dynamic_slice(mat: BCOO, start_indices, slice_sizes: Sequence[int]) -> BCOO:
    """lax.dynamic_slice of a BCOO (starts clamped into range as in lax; batch dimensions become sparse)."""
    sizes = tuple(map(operator.index, slice_sizes))
    if len(start_indices) != mat.ndim or len(sizes) != mat.ndim:
        raise TypeError(
            f"dynamic_slice: start_indices and slice_sizes must have length mat.ndim={mat.ndim}; got "
            f"{len(start_indices)} start indices and slice_sizes={sizes}"
        )
    if any(not 0 <= z <= n for z, n in zip(sizes, mat.shape)):
        raise TypeError(f"dynamic_slice slice_sizes must be in range [0, operand shape], got {sizes} for {mat.shape}")
    data, indices = _unbatch(mat.data, mat.indices, mat.shape)
    ns, nse = indices.shape[-1], indices.shape[-2]
    starts = [
        jnp.clip(jnp.asarray(s).astype(indices.dtype), 0, n - z) for s, n, z in zip(start_indices, mat.shape, sizes)
    ]
    if ns:
        lo = jnp.stack(starts[:ns])
        size = jnp.array(sizes[:ns], indices.dtype)
        off = indices - lo
        ok = jnp.all((indices < jnp.array(mat.shape[:ns], indices.dtype)) & (off >= 0) & (off < size), -1)
        indices = jnp.where(ok[:, None], off, size)
        data = jnp.where(ok.reshape(ok.shape + (1,) * (data.ndim - 1)), data, 0)
    if mat.ndim > ns:
        data = lax.dynamic_slice(data, [jnp.zeros((), indices.dtype), *starts[ns:]], (nse, *sizes[ns:]))
    return _cap_nse(BCOO((data, indices), shape=sizes))


def bcoo_take(mat: BCOO, idx, axes: Sequence[int], mode="promise_in_bounds") -> BCOO:
    """pyjax's gather (lax.take_axes) of a BCOO along sparse or batch axes: out[g, ...] = mat[idx[g] at axes, ...]
    with idx's leading dimensions first; every stored element is matched against every index (nse * len(idx))."""
    idx = jnp.asarray(idx)
    axes = tuple(operator.index(a) for a in axes)
    data, indices = _unbatch(mat.data, mat.indices, mat.shape)
    ns, nse = indices.shape[-1], indices.shape[-2]
    if any(a >= ns for a in axes):
        raise NotImplementedError("sparse gather along dense dimensions")
    gshape = tuple(idx.shape[:-1])
    g = math.prod(gshape)
    dims = jnp.array([mat.shape[a] for a in axes], indices.dtype).reshape((len(axes),))
    flat = idx.reshape((g, len(axes))).astype(indices.dtype)
    if mode == "fill":
        flat = jnp.where(jnp.all((flat >= 0) & (flat < dims), -1, keepdims=True), flat, -1)
    else:
        flat = jnp.clip(flat, 0, dims - 1)
    valid = jnp.all(indices < jnp.array(mat.shape[:ns], indices.dtype).reshape((ns,)), -1)
    match = jnp.all(indices[None, :, list(axes)] == flat[:, None, :], -1) & valid[None, :]
    rest = [a for a in range(ns) if a not in axes]
    cols = (
        [jnp.broadcast_to(c.reshape((g, 1)), (g, nse)) for c in jnp.unravel_index(jnp.arange(g), gshape)]
        if gshape
        else []
    )
    cols += [jnp.broadcast_to(indices[None, :, a], (g, nse)) for a in rest]
    out_shape = gshape + tuple(mat.shape[a] for a in rest) + tuple(mat.shape[ns:])
    n_out = len(gshape) + len(rest)
    if cols:
        fill = jnp.array(out_shape[:n_out], indices.dtype).reshape((n_out,))
        out_idx = jnp.where(match[..., None], jnp.stack(cols, -1).astype(indices.dtype), fill)
    else:
        out_idx = jnp.zeros((g, nse, 0), indices.dtype)
    out_data = jnp.where(match.reshape(match.shape + (1,) * (data.ndim - 1)), data[None], 0)
    return BCOO((out_data.reshape((g * nse, *data.shape[1:])), out_idx.reshape((g * nse, n_out))), shape=out_shape)


# --- arithmetic ----------------------------------------------------------------------------------


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """Sum over axes: dense axes sum the data, sparse axes drop their index column (duplicates may appear),
    batch axes fold into nse."""
    axes = sorted({operator.index(a) % mat.ndim if mat.ndim else operator.index(a) for a in axes})
    nb, ns, nse = mat.n_batch, mat.n_sparse, mat.nse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape)
    data = data.sum(tuple(a - ns + 1 for a in axes if a >= nb + ns))
    if ns:
        fill = _sparse_shape_array(mat.shape, nb, ns, indices.dtype)
        valid = jnp.all(indices < fill, -1)
        data = jnp.where(valid.reshape(valid.shape + (1,) * (data.ndim - valid.ndim)), data, 0)
    keep = [i for i in range(ns) if i + nb not in axes]
    indices = indices[..., keep] if keep else jnp.zeros((*indices.shape[:-1], 0), indices.dtype)
    summed = [a for a in axes if a < nb]
    kept = [a for a in range(nb) if a not in summed]
    new_nse = nse * math.prod(mat.shape[a] for a in summed)
    data = data.transpose((*kept, *summed, *range(nb, data.ndim)))
    data = data.reshape((*(mat.shape[a] for a in kept), new_nse, *data.shape[nb + 1 :]))
    indices = indices.transpose((*kept, *summed, nb, nb + 1))
    indices = indices.reshape((*(mat.shape[a] for a in kept), new_nse, indices.shape[-1]))
    out_shape = tuple(s for i, s in enumerate(mat.shape) if i not in axes)
    return BCOO((data, indices), shape=out_shape)


def bcoo_multiply_dense(sp_mat: BCOO, v):
    """The data of sp_mat * v for a dense v broadcasting to sp_mat's shape (the sparsity pattern is kept)."""
    v = jnp.asarray(v)
    shape = sp_mat.shape
    if v.ndim == 0:
        return sp_mat.data * v
    if tuple(v.shape) == shape:
        return sp_mat.data * _extract(sp_mat.indices, v)
    if jnp.broadcast_shapes(tuple(v.shape), shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented for cases where the output shape "
            f"matches the sparse matrix shape. Got shape={shape}, v.shape={tuple(v.shape)}"
        )
    v = v.reshape((1,) * (len(shape) - v.ndim) + tuple(v.shape))
    nb, ns = sp_mat.n_batch, sp_mat.n_sparse
    data, indices = _full_batch(sp_mat.data, sp_mat.indices, shape)
    vb = jnp.broadcast_to(v, shape[:nb] + tuple(v.shape[nb:])) if nb else v

    def mul(d, i, vv):
        idx = tuple(i[:, k] if vv.shape[k] != 1 else jnp.zeros_like(i[:, k]) for k in range(ns))
        return d * vv.at[idx].get(mode="fill", fill_value=0) if idx else d * vv[None]

    return nfold_vmap(mul, nb)(data, indices, vb)


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """Elementwise product of two BCOO arrays (output nse = lhs.nse * rhs.nse per batch)."""
    if len(lhs.shape) != len(rhs.shape):
        raise TypeError(
            f"bcoo_multiply_sparse: arrays must have same number of dimensions, got {lhs.shape}, {rhs.shape}"
        )
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError(
            f"bcoo_multiply_sparse: arrays with differing numbers of dense dimensions: {lhs}, {rhs}"
        )
    out_shape = jnp.broadcast_shapes(lhs.shape, rhs.shape)
    nb = min(lhs.n_batch, rhs.n_batch)
    ld, li = _unbatch(lhs.data, lhs.indices, lhs.shape, nb)
    rd, ri = _unbatch(rhs.data, rhs.indices, rhs.shape, nb)
    ld, li = _full_batch(ld, li, out_shape)
    rd, ri = _full_batch(rd, ri, out_shape)
    lshape, rshape = lhs.shape[nb:], rhs.shape[nb:]
    ns = li.shape[-1]
    dims = [k for k in range(ns) if lshape[k] != 1 and rshape[k] != 1]
    n_l, n_r = li.shape[-2], ri.shape[-2]

    def mul(ld, li, rd, ri):
        match = jnp.all(li[:, None, dims] == ri[None, :, dims], -1) if dims else jnp.ones((n_l, n_r), bool)
        i_l, i_r = jnp.nonzero(match, size=n_l * n_r, fill_value=(n_l, n_r))
        data = ld.at[i_l].get(mode="fill", fill_value=0) * rd.at[i_r].get(mode="fill", fill_value=0)
        big_l, big_r = max(lshape, default=0), max(rshape, default=0)
        idx = jnp.maximum(li.at[i_l].get(mode="fill", fill_value=big_l), ri.at[i_r].get(mode="fill", fill_value=big_r))
        return data, idx

    data, indices = nfold_vmap(mul, nb)(ld, li, rd, ri)
    return BCOO((data, indices), shape=out_shape)


# --- dot_general -----------------------------------------------------------------------------------


def _dot_shape(lhs_shape, rhs_shape, dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(map(operator.index, x)) for x in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(
            f"dot_general requires equal numbers of lhs and rhs contracting/batch dimensions, got {dimension_numbers}"
        )
    if any(lhs_shape[a] != rhs_shape[b] for a, b in zip(lc, rc)):
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{tuple(lhs_shape[a] for a in lc)} and {tuple(rhs_shape[b] for b in rc)}."
        )
    if any(lhs_shape[a] != rhs_shape[b] for a, b in zip(lb, rb)):
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the same shape, got "
            f"{tuple(lhs_shape[a] for a in lb)} and {tuple(rhs_shape[b] for b in rb)}."
        )
    lfree = [d for d in range(len(lhs_shape)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rhs_shape)) if d not in rc and d not in rb]
    out = tuple(lhs_shape[d] for d in lb) + tuple(lhs_shape[d] for d in lfree) + tuple(rhs_shape[d] for d in rfree)
    return (lc, rc, lb, rb, lfree, rfree), out


def _sparse_dense_dot(lhs: BCOO, rhs, dims, precision, preferred_element_type):
    """dot_general(BCOO, dense): gather rhs at the stored indices, one small dot_general per stored element,
    scatter-add into the output."""
    (lc, rc, lb, rb, lfree, rfree), out_shape = dims
    data, indices = _unbatch(lhs.data, lhs.indices, lhs.shape)
    ns = indices.shape[-1]
    nse = indices.shape[-2]
    # rhs dims paired with sparse lhs dims are gathered at the element's index
    pairs = [(lc[k], rc[k]) for k in range(len(lc))] + [(lb[k], rb[k]) for k in range(len(lb))]
    gathered = [(l_, r_) for l_, r_ in pairs if l_ < ns]
    g_rhs = [r_ for _, r_ in gathered]
    rest = [r for r in range(rhs.ndim) if r not in g_rhs]
    if gathered:
        rhs_t = rhs.transpose((*g_rhs, *rest))
        rhs_g = rhs_t.at[tuple(indices[:, l_] for l_, _ in gathered)].get(mode="fill", fill_value=0)
    else:
        rhs_g = jnp.broadcast_to(rhs[None], (nse, *rhs.shape))
    raxis = {r: 1 + i for i, r in enumerate(rest)}
    daxis = lambda d: 1 + d - ns  # noqa: E731  (lhs dense dim -> data axis)
    dc = [(daxis(a), raxis[b]) for a, b in zip(lc, rc) if a >= ns]
    db = [(daxis(a), raxis[b]) for a, b in zip(lb, rb) if a >= ns]
    prod = lax.dot_general(
        data,
        rhs_g,
        (([a for a, _ in dc], [b for _, b in dc]), ([0, *(a for a, _ in db)], [0, *(b for _, b in db)])),
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    # output axes whose position comes from the index: sparse batch dims, then sparse free dims
    front = [(k, lb[k]) for k in range(len(lb)) if lb[k] < ns]
    front += [(len(lb) + k, d) for k, d in enumerate(lfree) if d < ns]
    if not front:
        return prod.sum(0)
    fronts = [o for o, _ in front]
    back = [o for o in range(len(out_shape)) if o not in fronts]
    perm = fronts + back
    out_t = jnp.zeros(tuple(out_shape[o] for o in perm), prod.dtype)
    out_t = out_t.at[tuple(indices[:, d] for _, d in front)].add(prod, mode="drop")
    inverse = [perm.index(o) for o in range(len(out_shape))]
    return out_t.transpose(inverse)


def _sparse_sparse_dot(lhs: BCOO, rhs: BCOO, dims, precision, preferred_element_type) -> BCOO:
    """dot_general of two BCOO arrays without dense dimensions: all pairs of stored elements whose contracted
    and batch indices agree (output nse = lhs.nse * rhs.nse)."""
    (lc, rc, lb, rb, lfree, rfree), out_shape = dims
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_dot_general of two sparse arrays with dense dimensions")
    ld, li = _unbatch(lhs.data, lhs.indices, lhs.shape)
    rd, ri = _unbatch(rhs.data, rhs.indices, rhs.shape)
    lfill = jnp.array(lhs.shape, li.dtype).reshape((len(lhs.shape),))
    rfill = jnp.array(rhs.shape, ri.dtype).reshape((len(rhs.shape),))
    lvalid = jnp.all(li < lfill, -1)
    rvalid = jnp.all(ri < rfill, -1)
    match = lvalid[:, None] & rvalid[None, :]
    for a, b in zip((*lc, *lb), (*rc, *rb)):
        match = match & (li[:, None, a] == ri[None, :, b])
    dtype = preferred_element_type or jnp.result_type(ld.dtype, rd.dtype)
    data = jnp.where(match, ld[:, None].astype(dtype) * rd[None, :].astype(dtype), 0).reshape(-1)
    n_l, n_r = li.shape[0], ri.shape[0]
    cols = [jnp.broadcast_to(li[:, None, a], (n_l, n_r)) for a in (*lb, *lfree)]
    cols += [jnp.broadcast_to(ri[None, :, b], (n_l, n_r)) for b in rfree]
    if cols:
        idx = jnp.stack(cols, -1)
        fill = jnp.array(out_shape, idx.dtype).reshape((len(out_shape),))
        idx = jnp.where(match[..., None], idx, fill).reshape((n_l * n_r, len(cols)))
    else:
        idx = jnp.zeros((n_l * n_r, 0), li.dtype)
    return _cap_nse(BCOO((data, idx), shape=out_shape))


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None, out_sharding=None):
    """lax.dot_general where lhs, rhs or both are BCOO: a dense result when one side is dense, a BCOO when both
    are sparse."""
    l_sp, r_sp = isinstance(lhs, BCOO), isinstance(rhs, BCOO)
    if not (l_sp or r_sp):
        return lax.dot_general(
            lhs, rhs, dimension_numbers, precision=precision, preferred_element_type=preferred_element_type
        )
    if not l_sp:
        lhs = jnp.asarray(lhs)
    if not r_sp:
        rhs = jnp.asarray(rhs)
    dims, out_shape = _dot_shape(tuple(lhs.shape), tuple(rhs.shape), dimension_numbers)
    if l_sp and r_sp:
        return _sparse_sparse_dot(lhs, rhs, (dims, out_shape), precision, preferred_element_type)
    if l_sp:
        return _sparse_dense_dot(lhs, rhs, (dims, out_shape), precision, preferred_element_type)
    lc, rc, lb, rb, lfree, rfree = dims
    swapped, swapped_shape = _dot_shape(tuple(rhs.shape), tuple(lhs.shape), ((rc, lc), (rb, lb)))
    out = _sparse_dense_dot(rhs, lhs, (swapped, swapped_shape), precision, preferred_element_type)
    nbd, nr, nl = len(lb), len(rfree), len(lfree)
    return out.transpose((*range(nbd), *range(nbd + nr, nbd + nr + nl), *range(nbd, nbd + nr)))


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """The data of dot_general(A, B) at the given BCOO indices (SDDMM; its gradients stay sparse)."""
    A, B, indices = jnp.asarray(A), jnp.asarray(B), jnp.asarray(indices)
    _, out_shape = _dot_shape(tuple(A.shape), tuple(B.shape), dimension_numbers)
    _layout(indices, out_shape)
    return _extract(indices, lax.dot_general(A, B, dimension_numbers))
