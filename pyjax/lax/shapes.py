"""Shape helpers of jax.lax composed from primitives: broadcast_shapes, broadcast_to_rank,
broadcast_like, collapse, batch_matmul, split, stack, unstack, tile, dtype and empty.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax._lazy_numpy import _jnp
from pyjax.lax.slicing import index_in_dim, slice_in_dim

__all__ = [
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcast_like",
    "collapse",
    "batch_matmul",
    "split",
    "stack",
    "unstack",
    "tile",
    "dtype",
    "empty",
]


# --- shapes -----------------------------------------------------------------------------------


def broadcast_shapes(*shapes: Sequence[int]) -> tuple:
    """The shape that all `shapes` broadcast to (numpy rules); raises ValueError if incompatible."""
    return _jnp().broadcast_shapes(*[tuple(int(d) for d in s) for s in shapes])


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """x with leading size-1 axes added until it has `rank` dimensions."""
    x = _jnp().asarray(x)
    if x.ndim >= rank:
        return x
    return lax.broadcast(x, (1,) * (rank - x.ndim))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """arr broadcast to the shape of like_arr (trailing axes aligned)."""
    jnp = _jnp()
    return jnp.broadcast_to(arr, jnp.shape(like_arr))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge the axes start_dimension..stop_dimension-1 of operand into one."""
    x = _jnp().asarray(operand)
    nd = x.ndim
    lo = start_dimension % nd if nd else 0
    hi = nd if stop_dimension is None else (stop_dimension % (nd + 1) if stop_dimension >= 0 else stop_dimension + nd)
    if not 0 <= lo <= hi <= nd:
        raise ValueError(f"collapse: invalid dimensions start={start_dimension}, stop={stop_dimension} for rank {nd}")
    size = math.prod(x.shape[lo:hi])
    return lax.reshape(x, x.shape[:lo] + (size,) + x.shape[hi:])


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Batched matrix product over the leading axes: (..., m, k) @ (..., k, n)."""
    jnp = _jnp()
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim:
        raise ValueError(f"batch_matmul requires arguments of equal rank >= 2, got {lhs.ndim} and {rhs.ndim}")
    if lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError(f"batch_matmul requires equal batch dimensions, got {lhs.shape[:-2]} and {rhs.shape[:-2]}")
    batch = tuple(range(lhs.ndim - 2))
    return lax.dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)), precision=precision)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list:
    """Split operand along axis into pieces of the given sizes (which must sum to its length)."""
    x = _jnp().asarray(operand)
    axis = axis % builtins.max(x.ndim, 1)
    sizes = [int(s) for s in sizes]
    if builtins.sum(sizes) != x.shape[axis] or builtins.any(s < 0 for s in sizes):
        raise ValueError(
            f"split: sizes {sizes} must be nonnegative and sum to {x.shape[axis]}, the size of axis {axis}"
        )
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(x, start, start + s, axis=axis))
        start += s
    return out


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Stack equally shaped arrays along a new axis."""
    return _jnp().stack(list(operands), axis=axis)


def unstack(x: Any, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple."""
    x = _jnp().asarray(x)
    axis = axis % builtins.max(x.ndim, 1)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """operand repeated reps[i] times along each axis (len(reps) must equal the rank)."""
    x = _jnp().asarray(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != x.ndim:
        raise ValueError(f"tile: len(reps)={len(reps)} must equal operand.ndim={x.ndim}")
    return _jnp().tile(x, reps)


def dtype(x: Any) -> Any:
    """The canonical dtype of a value, array or dtype-like."""
    if hasattr(x, "dtype"):
        return dtypes.canonicalize(x.dtype)
    if isinstance(x, (bool, int, float)):
        return dtypes.canonicalize(dtypes.python_scalar_dtype(x))
    return dtypes.canonicalize(x)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of the given shape and dtype (zeros: pyjax has no uninitialized memory)."""
    return lax.full(tuple(shape), 0, dtypes.canonicalize(dtype))
