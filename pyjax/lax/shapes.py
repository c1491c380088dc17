"""Shape helpers of jax.lax composed from primitives: broadcast_shapes, broadcast_to, broadcast_to_rank,
broadcast_like, collapse, batch_matmul, split, stack, unstack, tile, dtype and empty.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Sequence
from typing import Any

from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._util import _arr, canonical_axis
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
    shapes = [tuple(int(d) for d in s) for s in shapes]
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x: Any, shape: Sequence[int]) -> Any:
    """x broadcast to `shape` (numpy rules: trailing axes aligned, size-1 axes stretched)."""
    return broadcast_array(_arr(x), tuple(int(d) for d in shape))


def broadcast_array(x: Any, shape: tuple) -> Any:
    """broadcast_to for an array x and a tuple of ints (what jnp.broadcast_to has checked already)."""
    xs = get_aval(x).shape
    if xs == shape:
        return x
    nd = len(shape)
    if len(xs) > nd or builtins.any(a not in (1, b) for a, b in zip(xs, shape[nd - len(xs) :])):
        raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested shape {shape}")
    return lax.broadcast_in_dim(x, shape, tuple(range(nd - len(xs), nd)))


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """x with leading size-1 axes added until it has `rank` dimensions."""
    x = _arr(x)
    if x.ndim >= rank:
        return x
    return lax.broadcast(x, (1,) * (rank - x.ndim))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """arr broadcast to the shape of like_arr (trailing axes aligned)."""
    return broadcast_to(arr, get_aval(_arr(like_arr)).shape)


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge the axes start_dimension..stop_dimension-1 of operand into one."""
    x = _arr(operand)
    nd = x.ndim
    lo = start_dimension % nd if nd else 0
    hi = nd if stop_dimension is None else (stop_dimension % (nd + 1) if stop_dimension >= 0 else stop_dimension + nd)
    if not 0 <= lo <= hi <= nd:
        raise ValueError(f"collapse: invalid dimensions start={start_dimension}, stop={stop_dimension} for rank {nd}")
    size = math.prod(x.shape[lo:hi])
    return lax.reshape(x, x.shape[:lo] + (size,) + x.shape[hi:])


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Batched matrix product over the leading axes: (..., m, k) @ (..., k, n)."""
    lhs, rhs = _arr(lhs), _arr(rhs)
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim:
        raise ValueError(f"batch_matmul requires arguments of equal rank >= 2, got {lhs.ndim} and {rhs.ndim}")
    if lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError(f"batch_matmul requires equal batch dimensions, got {lhs.shape[:-2]} and {rhs.shape[:-2]}")
    batch = tuple(range(lhs.ndim - 2))
    return lax.dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)), precision=precision)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list:
    """Split operand along axis into pieces of the given sizes (which must sum to its length)."""
    x = _arr(operand)
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
    """Stack equally shaped arrays along a new axis (mixed dtypes promote, as numpy's stack)."""
    arrs = [_arr(o) for o in operands]
    if not arrs:
        raise ValueError("Need at least one array to stack.")
    if len({get_aval(a).shape for a in arrs}) > 1:
        raise ValueError("All input arrays must have the same shape.")
    d, weak = dtypes.promote([(get_aval(a).dtype, get_aval(a).weak_type) for a in arrs])
    ax = canonical_axis(axis, get_aval(arrs[0]).ndim + 1, "stack")
    arrs = [lax.expand_dims(lax._convert(a, d, weak), (ax,)) for a in arrs]
    return lax.concatenate(arrs, ax) if len(arrs) > 1 else arrs[0]


def unstack(x: Any, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple."""
    x = _arr(x)
    axis = axis % builtins.max(x.ndim, 1)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """operand repeated reps[i] times along each axis (len(reps) must equal the rank)."""
    x = _arr(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != x.ndim:
        raise ValueError(f"tile: len(reps)={len(reps)} must equal operand.ndim={x.ndim}")
    # (r0, s0, r1, s1, ...) with x along the odd axes, then each (ri, si) pair merged
    pairs = builtins.sum(((r, d) for r, d in zip(reps, x.shape)), ())
    spread = lax.broadcast_in_dim(x, pairs, tuple(range(1, 2 * x.ndim, 2)))
    return lax.reshape(spread, tuple(r * d for r, d in zip(reps, x.shape)))


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
