"""JAX's general lax.gather / lax.scatter (XLA dimension numbers), on top of pyjax's simple gather and
scatter primitives (slicing.take_axes / scatter_axes, which index every operand axis by one index column).

Each window start is computed from the index vectors (start_index_map / scatter_dims_to_operand_dims,
operand_batching_dims), clamped (mode clip / promise_in_bounds) or checked (fill / drop), and expanded
into one full index per window element; one primitive gather or scatter then moves every element, and
a transpose puts batch and window dimensions where the dimension numbers say. Differentiable through
the primitives' rules (indices are integers).
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax, slicing

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "gather",
    "scatter",
    "scatter_add",
    "scatter_apply",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
]


class GatherDimensionNumbers(NamedTuple):
    """How a gather maps index vectors and slices onto operand and output dimensions (as XLA)."""

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps index vectors and update windows onto operand dimensions (as XLA)."""

    update_window_dims: Sequence[int]
    inserted_window_dims: Sequence[int]
    scatter_dims_to_operand_dims: Sequence[int]
    operand_batching_dims: Sequence[int] = ()
    scatter_indices_batching_dims: Sequence[int] = ()


class GatherScatterMode(enum.Enum):
    """Out-of-bounds behaviour: CLIP clamps windows into range, FILL_OR_DROP fills gathers (drops
    scatter updates) of out-of-range windows, PROMISE_IN_BOUNDS assumes in-range (clamps here)."""

    CLIP = enum.auto()
    FILL_OR_DROP = enum.auto()
    PROMISE_IN_BOUNDS = enum.auto()
    ONE_HOT = enum.auto()

    @staticmethod
    def from_any(s) -> GatherScatterMode:
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s == "fill" or s == "drop":
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            return GatherScatterMode.ONE_HOT
        raise ValueError(f'Unknown gather mode "{s}"')


# --- shared pieces ------------------------------------------------------------------------------


def _tuple(v) -> tuple:
    return tuple(int(i) for i in v)


def _column(idx, j: int):
    a = get_aval(idx)
    col = lax.slice(idx, (0,) * (a.ndim - 1) + (j,), a.shape[:-1] + (j + 1,))
    return lax.reshape(col, a.shape[:-1])


def _starts(idx, shape, index_map, op_batch, idx_batch, window):
    """Per operand dim: the window start for every index vector (shape batch), plus a mask of the
    index vectors whose window is out of range."""
    batch = get_aval(idx).shape[:-1]
    i32 = dtypes.int32
    starts, oob = [], None
    for d, n in enumerate(shape):
        if d in index_map:
            s = _column(idx, index_map.index(d))
            hi = n - window[d]
            bad = lax.bitwise_or(lax.lt(s, lax.full(batch, 0, i32)), lax.gt(s, lax.full(batch, hi, i32)))
            oob = bad if oob is None else lax.bitwise_or(oob, bad)
            s = lax.clamp(lax.full(batch, 0, i32), s, lax.full(batch, max(hi, 0), i32))
        elif d in op_batch:
            s = lax.broadcasted_iota(i32, batch, idx_batch[op_batch.index(d)])
        else:
            s = lax.full(batch, 0, i32)
        starts.append(s)
    return starts, oob


def _full_index(starts, batch, window):
    """One operand index per window element: shape batch + window + (ndim,)."""
    shape = tuple(batch) + tuple(window)
    nb = len(batch)
    cols = []
    for d, s in enumerate(starts):
        col = lax.broadcast_in_dim(s, shape, tuple(range(nb)))
        col = lax.add(col, lax.broadcasted_iota(dtypes.int32, shape, nb + d))
        cols.append(lax.reshape(col, shape + (1,)))
    return lax.concatenate(cols, len(shape)) if len(cols) > 1 else cols[0]


def _as_indices(idx):
    idx = lax._as_array(idx)
    a = get_aval(idx)
    if a.dtype.kind not in "iu":
        raise TypeError(f"indices must have an integer type, got {a.dtype.name}")
    return lax.convert_element_type(idx, dtypes.int32) if a.dtype is not dtypes.int32 else idx


def _check_dims(what: str, dims, nd: int, name: str) -> None:
    if any(not 0 <= d < nd for d in dims) or len(set(dims)) != len(dims):
        raise TypeError(f"{what}: {name} {dims} must be distinct dimensions in [0, {nd})")


def _check_index_dims(what: str, ia, nd: int, index_map: tuple, removed: tuple, op_batch: tuple) -> None:
    """Checks shared by gather and scatter (JAX's messages): the index vectors' length matches the
    index map, and the map, the removed (collapsed / inserted) dims and the batching dims are valid
    operand dims, the removed ones disjoint from the batching ones. `index_map` and `removed` are
    (name, dims) pairs."""
    (map_name, dims_map), (removed_name, dims_removed) = index_map, removed
    if ia.shape[-1] != len(dims_map):
        raise TypeError(
            f"{what.capitalize()} op has {len(dims_map)} elements in {map_name} and the bound of dimension "
            f"index_vector_dim={ia.ndim - 1} of indices is {ia.shape[-1]}. These two numbers must be equal."
        )
    for name, dims in (removed, index_map, ("operand_batching_dims", op_batch)):
        _check_dims(what, dims, nd, name)
    if set(dims_removed) & set(op_batch):
        raise TypeError(
            f"{removed_name} and operand_batching_dims in {what} op must be disjoint; got: {dims_removed} and {op_batch}."
        )


# --- gather -------------------------------------------------------------------------------------


def gather(
    operand: Any,
    start_indices: Any,
    dimension_numbers: GatherDimensionNumbers,
    slice_sizes: Sequence[int],
    *,
    unique_indices: bool = False,
    indices_are_sorted: bool = False,
    mode: str | GatherScatterMode | None = None,
    fill_value=None,
) -> Any:
    """XLA's gather: one slice of size slice_sizes per index vector (the last axis of start_indices)."""
    x = lax._as_array(operand)
    idx = _as_indices(start_indices)
    xa, ia = get_aval(x), get_aval(idx)
    dn = dimension_numbers
    offset, collapsed, index_map = _tuple(dn.offset_dims), _tuple(dn.collapsed_slice_dims), _tuple(dn.start_index_map)
    op_batch, idx_batch = _tuple(dn.operand_batching_dims), _tuple(dn.start_indices_batching_dims)
    slice_sizes = _tuple(slice_sizes)
    nd = xa.ndim
    if ia.ndim < 1:
        raise TypeError("gather start_indices must have rank >= 1 (the last axis holds the index vectors)")
    batch = ia.shape[:-1]
    if len(slice_sizes) != nd:
        raise TypeError(
            f"Gather op must have one slice size for every input dimension; got: len(slice_sizes)={len(slice_sizes)}, "
            f"input_shape.rank={nd}"
        )
    for i, (s, n) in enumerate(zip(slice_sizes, xa.shape)):
        if not 0 <= s <= n:
            raise TypeError(
                f"Slice size at index {i} in gather op is out of range, must be within [0, {n} + 1), got {s}."
            )
    _check_index_dims("gather", ia, nd, ("start_index_map", index_map), ("collapsed_slice_dims", collapsed), op_batch)
    if any(slice_sizes[d] > 1 for d in collapsed + op_batch):
        raise TypeError("Gather op can only collapse (or batch) slice dims with bound 1 or 0")
    if len(op_batch) != len(idx_batch) or any(not 0 <= d < len(batch) for d in idx_batch):
        raise TypeError("gather: operand_batching_dims and start_indices_batching_dims must match in length")
    kept = [d for d in range(nd) if d not in collapsed and d not in op_batch]
    if (
        tuple(sorted(offset)) != offset
        or len(offset) != len(kept)
        or any(not 0 <= d < len(batch) + len(kept) for d in offset)
    ):
        raise TypeError(
            f"gather: offset_dims {offset} must be sorted, one per slice dimension that is neither collapsed nor "
            f"batched ({len(kept)}), within the output rank {len(batch) + len(kept)}"
        )
    m = GatherScatterMode.from_any(mode) if mode is not None else GatherScatterMode.PROMISE_IN_BOUNDS
    if m is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("pyjax: gather mode ONE_HOT is not supported")
    starts, oob = _starts(idx, xa.shape, index_map, op_batch, idx_batch, slice_sizes)
    if math.prod(slice_sizes) == 0 or math.prod(batch) == 0 or nd == 0:
        out_shape = _gather_out_shape(batch, [slice_sizes[d] for d in kept], offset)
        return lax.full(out_shape, 0, xa.dtype) if nd else lax.broadcast_in_dim(x, out_shape, ())
    full = _full_index(starts, batch, slice_sizes)
    g = slicing.take_axes(x, full, tuple(range(nd)), mode="clip")  # batch + slice_sizes
    nb = len(batch)
    g = lax.reshape(g, tuple(batch) + tuple(slice_sizes[d] for d in kept))
    perm, bi, wi = [], 0, 0
    for k in range(nb + len(kept)):
        if k in offset:
            perm.append(nb + wi)
            wi += 1
        else:
            perm.append(bi)
            bi += 1
    g = lax.transpose(g, tuple(perm))
    if m is GatherScatterMode.PROMISE_IN_BOUNDS and oob is not None:
        # value of the clamped window, but no gradient to it (JAX's transpose drops out-of-range windows)
        shape = get_aval(g).shape
        mask = lax.broadcast_in_dim(oob, shape, tuple(k for k in range(len(shape)) if k not in offset))
        g = lax.select_n(mask, g, lax.stop_gradient(g))
    if m is GatherScatterMode.FILL_OR_DROP and oob is not None:
        shape = get_aval(g).shape
        bdims = tuple(k for k in range(len(shape)) if k not in offset)
        fill = dtypes.gather_fill_value(xa.dtype) if fill_value is None else fill_value
        mask = lax.broadcast_in_dim(oob, shape, bdims)
        g = lax.select_n(mask, g, lax._convert(lax.full(shape, fill, xa.dtype), xa.dtype, xa.weak_type))
    return g


def _gather_out_shape(batch, window, offset) -> tuple:
    out, bi, wi = [], 0, 0
    for k in range(len(batch) + len(window)):
        if k in offset:
            out.append(window[wi])
            wi += 1
        else:
            out.append(batch[bi])
            bi += 1
    return tuple(out)


# --- scatter ------------------------------------------------------------------------------------


def _scatter(kind: str, operand, scatter_indices, updates, dimension_numbers, *, unique_indices, mode):
    x = lax._as_array(operand)
    idx = _as_indices(scatter_indices)
    xa, ia = get_aval(x), get_aval(idx)
    u = lax._as_array(updates)
    ua = get_aval(u)
    if ua.dtype is not xa.dtype:
        u = lax._convert(u, xa.dtype, xa.weak_type)
        ua = get_aval(u)
    dn = dimension_numbers
    uwd, inserted, index_map = (
        _tuple(dn.update_window_dims),
        _tuple(dn.inserted_window_dims),
        _tuple(dn.scatter_dims_to_operand_dims),
    )
    op_batch, idx_batch = _tuple(dn.operand_batching_dims), _tuple(dn.scatter_indices_batching_dims)
    nd = xa.ndim
    if ia.ndim < 1:
        raise TypeError("scatter indices must have rank >= 1 (the last axis holds the index vectors)")
    batch = ia.shape[:-1]
    _check_index_dims(
        "scatter", ia, nd, ("scatter_dims_to_operand_dims", index_map), ("inserted_window_dims", inserted), op_batch
    )
    kept = [d for d in range(nd) if d not in inserted and d not in op_batch]
    if len(uwd) != len(kept) or ua.ndim != len(batch) + len(kept) or tuple(sorted(uwd)) != uwd:
        raise TypeError(
            f"scatter: updates of shape {ua.shape} do not match: update_window_dims {uwd} must be sorted, one per "
            f"operand dimension neither inserted nor batched ({len(kept)}), next to the {len(batch)} batch dims"
        )
    ub = tuple(ua.shape[k] for k in range(ua.ndim) if k not in uwd)
    if ub != tuple(batch):
        raise TypeError(f"scatter: update batch dims {ub} must equal the indices' batch shape {tuple(batch)}")
    window = [1] * nd
    for d, k in zip(kept, uwd):
        window[d] = ua.shape[k]
        if window[d] > xa.shape[d]:
            raise TypeError(
                f"scatter: update window size {window[d]} exceeds operand dimension {d} of size {xa.shape[d]}"
            )
    m = GatherScatterMode.from_any(mode)
    if m is GatherScatterMode.ONE_HOT:
        raise NotImplementedError("pyjax: scatter mode ONE_HOT is not supported")
    if math.prod(ua.shape) == 0 or nd == 0:
        return x if nd else _combine_scalar(kind, x, u, batch)
    starts, oob = _starts(idx, xa.shape, index_map, op_batch, idx_batch, window)
    full = _full_index(starts, batch, window)
    if m is not GatherScatterMode.CLIP and oob is not None:  # drop whole out-of-range windows, as XLA
        shape = get_aval(full).shape
        mask = lax.broadcast_in_dim(oob, shape, tuple(range(len(batch))))
        full = lax.select_n(mask, full, lax.full(shape, max(xa.shape) + 1, dtypes.int32))
    nb = len(batch)
    upos = [k for k in range(ua.ndim) if k not in uwd] + list(uwd)
    u = lax.transpose(u, tuple(upos))
    n = math.prod(batch) * math.prod(window)
    u = lax.reshape(u, (n,))
    full = lax.reshape(full, (n, nd))
    del nb
    return slicing.scatter_axes(x, full, u, tuple(range(nd)), kind=kind, mode="drop", unique_indices=unique_indices)


def _combine_scalar(kind, x, u, batch):
    """Scatter into a rank-0 operand: every update combines into the one element."""
    vals = lax.reshape(u, (math.prod(batch),)) if batch else lax.reshape(u, (1,))
    if kind == "set":
        return lax.reshape(lax.slice(vals, (vals.shape[0] - 1,), (vals.shape[0],)), ()) if vals.shape[0] else x
    red = {"add": lax.reduce_sum, "mul": lax.reduce_prod, "min": lax.reduce_min, "max": lax.reduce_max}[kind]
    op = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max}[kind]
    return op(x, red(vals, (0,)))


def _scatter_api(name: str, kind: str, doc: str) -> Callable:
    """A public scatter combining with `kind` ("sub" is an "add" of the negated updates)."""

    def f(
        operand: Any,
        scatter_indices: Any,
        updates: Any,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | GatherScatterMode | None = None,
    ) -> Any:
        combine = kind
        if kind == "sub":
            combine, updates = "add", lax.neg(lax._as_array(updates))
        return _scatter(
            combine, operand, scatter_indices, updates, dimension_numbers, unique_indices=unique_indices, mode=mode
        )

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return f


scatter = _scatter_api(
    "scatter", "set", "XLA's scatter: each update window overwrites the operand at its index vector."
)
scatter_add = _scatter_api("scatter_add", "add", "XLA's scatter with addition (duplicate indices accumulate).")
scatter_sub = _scatter_api(
    "scatter_sub", "sub", "XLA's scatter with subtraction (a scatter_add of the negated updates)."
)
scatter_mul = _scatter_api("scatter_mul", "mul", "XLA's scatter with multiplication.")
scatter_min = _scatter_api("scatter_min", "min", "XLA's scatter with minimum.")
scatter_max = _scatter_api("scatter_max", "max", "XLA's scatter with maximum.")


def scatter_apply(
    operand: Any,
    scatter_indices: Any,
    func: Callable,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
) -> Any:
    """Apply the elementwise func at every scattered position (once per hit, as JAX: duplicates compose)."""
    x = lax._as_array(operand)
    xa = get_aval(x)
    ones = lax.full(tuple(update_shape), 1, dtypes.int32)
    hits = _scatter(
        "add",
        lax.full(xa.shape, 0, dtypes.int32),
        scatter_indices,
        ones,
        dimension_numbers,
        unique_indices=False,
        mode=mode,
    )
    if unique_indices:
        return lax.select_n(lax.gt(hits, lax.full(xa.shape, 0, dtypes.int32)), x, func(x))
    from pyjax.lax.control_flow import while_loop

    def body(c):
        i, y = c
        return i + 1, lax.select_n(lax.gt(hits, lax.full(xa.shape, i, dtypes.int32)), y, func(y))

    _, y = while_loop(lambda c: c[0] < lax.reduce_max(hits, tuple(range(xa.ndim))), body, (0, x))
    return y
