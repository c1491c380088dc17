"""pyjax.experimental.sparse: sparse arrays (BCOO, BCSR) and the sparsify transform, as jax.experimental.sparse.

Everything is composed of lax/numpy ops (gather, scatter-add, sort, dot_general), so sparse arrays run on every
backend and pass through jit, vmap and grad as pytrees of their data and index buffers.
"""

from pyjax.experimental.sparse import linalg  # noqa: F401
from pyjax.experimental.sparse._base import (  # noqa: F401
    CuSparseEfficiencyWarning,
    JAXSparse,
    SparseEfficiencyError,
    SparseEfficiencyWarning,
)
from pyjax.experimental.sparse.ad import grad, jacfwd, jacobian, jacrev, value_and_grad  # noqa: F401
from pyjax.experimental.sparse.api import empty, eye, todense  # noqa: F401
from pyjax.experimental.sparse.bcoo import (  # noqa: F401
    BCOO,
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dot_general,
    bcoo_dot_general_sampled,
    bcoo_dynamic_slice,
    bcoo_eliminate_zeros,
    bcoo_extract,
    bcoo_fromdense,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    bcoo_reduce_sum,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_sort_indices,
    bcoo_squeeze,
    bcoo_sum_duplicates,
    bcoo_take,
    bcoo_todense,
    bcoo_transpose,
    bcoo_update_layout,
)
from pyjax.experimental.sparse.coo import COO, coo_fromdense, coo_matmat, coo_matvec, coo_todense  # noqa: F401
from pyjax.experimental.sparse.csr import CSC, CSR, csr_fromdense, csr_matmat, csr_matvec, csr_todense  # noqa: F401
from pyjax.experimental.sparse.bcsr import BCSR, bcsr_fromdense, bcsr_todense  # noqa: F401
from pyjax.experimental.sparse.random import random_bcoo  # noqa: F401
from pyjax.experimental.sparse.transform import bcoo_gather, sparsify  # noqa: F401
