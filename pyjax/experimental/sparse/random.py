"""pyjax.experimental.sparse.random: random_bcoo, a BCOO with random indices and values (JAX's key usage, so
the same key gives JAX's array)."""

from __future__ import annotations

import math
import operator

import pyjax.numpy as jnp
from pyjax import random
from pyjax.api import vmap
from pyjax.experimental.sparse.bcoo import BCOO

__all__ = ["random_bcoo"]


def random_bcoo(
    key,
    shape,
    *,
    dtype=None,
    indices_dtype=None,
    nse=0.2,
    n_batch=0,
    n_dense=0,
    unique_indices=True,
    sorted_indices=False,
    generator=random.uniform,
    **kwds,
) -> BCOO:
    """A random BCOO: nse stored elements per batch (a fraction of the sparse size when 0 < nse < 1) at
    indices drawn with random.choice, values from generator(key, shape=..., dtype=..., **kwds)."""
    shape = tuple(map(operator.index, shape))
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}")
    n_sparse = len(shape) - n_batch - n_dense
    batch, sparse, dense = shape[:n_batch], shape[n_batch : n_batch + n_sparse], shape[n_batch + n_sparse :]
    sparse_size = math.prod(sparse)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    nse = operator.index(nse)
    indices_dtype = jnp.dtype(indices_dtype or jnp.int_)
    if sparse_size > jnp.iinfo(indices_dtype).max:
        raise ValueError(
            f"indices_dtype={indices_dtype} does not have enough range to generate sparse indices of size {sparse_size}."
        )

    def draw(k):
        if not sparse:
            return jnp.zeros((nse, n_sparse), indices_dtype)
        flat = random.choice(k, sparse_size, shape=(nse,), replace=not unique_indices).astype(indices_dtype)
        return jnp.stack(jnp.unravel_index(flat, sparse), axis=1)

    keys = random.split(key, math.prod(batch) + 1)
    data = generator(keys[0], shape=(*batch, nse, *dense), dtype=dtype or jnp.float_, **kwds)
    indices = vmap(draw)(keys[1:]).reshape((*batch, nse, n_sparse))
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat
