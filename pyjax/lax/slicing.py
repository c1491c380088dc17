"""Indexing primitives: gather, scatter, dynamic_slice, dynamic_update_slice, and JAX's lax wrappers.

pyjax's gather and scatter use one simple form instead of XLA's dimension numbers:

  gather(x, idx; axes):  idx has shape batch + (k,); column j indexes operand axis axes[j].
      out[b..., r...] = x[axes[j] = idx[b..., j], the other axes = r...]
      out shape = batch + (x's axes not in `axes`, in order). mode 'clip' clamps indices into
      range, mode 'fill' returns fill_value (NaN / INT_MIN / UINT_MAX / True by default) where
      any index is out of range, mode 'promise_in_bounds' clamps like 'clip' but its gradient
      drops out-of-range positions (what JAX's default x[idx] does on CPU and GPU).
  scatter(x, idx, u; axes, kind): the transpose view: u has the gather output's shape, and each
      u[b..., r...] combines into x at the same position with kind set/add/mul/min/max.
      Updates with an out-of-range index are dropped (JAX's default for `.at[]` updates).

numpy-style indexing (pyjax.numpy) and vmap of dynamic slices reduce to these two.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence
from typing import Any

from pyjax.core import core, dtypes
from pyjax.core.core import ShapedArray, bind
from pyjax.interpreters import ad, batching
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax
from pyjax.lax._util import _arr, canonical_axis
from pyjax.lax.lax import _aval, _prim, _shape_str
from pyjax.runtime import execute as _execute

__all__ = [
    "dynamic_slice",
    "dynamic_update_slice",
    "dynamic_index_in_dim",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice_in_dim",
    "index_in_dim",
    "slice_in_dim",
    "index_take",
    "gather_p",
    "scatter_p",
    "dynamic_slice_p",
    "dynamic_update_slice_p",
]

SCATTER_KINDS = ("set", "add", "mul", "min", "max")
GATHER_MODES = ("clip", "fill", "promise_in_bounds")


def _is_int_dtype(d) -> bool:
    return d.kind in "iu"


def _rest_axes(nd: int, axes) -> tuple:
    return tuple(a for a in range(nd) if a not in axes)


def _scalar(v, dtype):
    return _execute.make_scalar(v, dtype, False)


# --- gather ---------------------------------------------------------------------------------

gather_p = _prim("gather")


def _check_axes(name, x, idx, axes):
    if not _is_int_dtype(idx.dtype):
        raise TypeError(f"{name} indices must have an integer type, got {idx.dtype.name}")
    if idx.ndim < 1 or idx.shape[-1] != len(axes):
        raise TypeError(
            f"{name} indices must have shape batch + ({len(axes)},) for axes {axes}, got {_shape_str(idx.shape)}"
        )
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name} axes {axes} are invalid for operand of shape {_shape_str(x.shape)}")


@gather_p.def_abstract_eval
def _gather_abstract(x, idx, *, axes, mode, fill_value):
    _check_axes("gather", x, idx, axes)
    if mode not in GATHER_MODES:
        raise ValueError(f"gather mode must be one of {GATHER_MODES}, got {mode!r}")
    shape = idx.shape[:-1] + tuple(x.shape[a] for a in _rest_axes(x.ndim, axes))
    return ShapedArray(shape, x.dtype, x.weak_type)


def take_axes(x, idx, axes, mode: str = "clip", fill_value=None):
    """pyjax's gather: x indexed along `axes` by the last dimension of idx (see module doc)."""
    x = lax._as_array(x)
    idx = lax._as_array(idx)
    nd = _aval(x).ndim
    axes = tuple(operator.index(a) % builtins.max(nd, 1) for a in axes)
    if fill_value is not None:
        fill_value = core.concrete_or_error(fill_value, "gather fill_value must be a concrete scalar")
        fill_value = _py_scalar(fill_value, _aval(x).dtype)
    return bind(gather_p, x, idx, axes=axes, mode=mode, fill_value=fill_value)


def _py_scalar(v, dtype):
    if hasattr(v, "item"):
        v = v.item()
    if dtype.kind == "f":
        return builtins.float(v)
    if dtype.kind == "b":
        return builtins.bool(v)
    return builtins.int(v)


def _column(idx, j):
    a = _aval(idx)
    col = lax.slice(idx, (0,) * (a.ndim - 1) + (j,), a.shape[:-1] + (j + 1,))
    return lax.reshape(col, a.shape[:-1])


def _stack_columns(cols, dtype):
    cols = [lax.convert_element_type(c, dtype) if _aval(c).dtype is not dtype else c for c in cols]
    shape = _aval(cols[0]).shape
    cols = [lax.reshape(c, shape + (1,)) for c in cols]
    return cols[0] if len(cols) == 1 else lax.concatenate(cols, len(shape))


def clamp_indices(idx, sizes):
    """Clamp column j of idx into [0, sizes[j] - 1]."""
    a = _aval(idx)
    cols = []
    for j, n in enumerate(sizes):
        c = _column(idx, j)
        lo = lax.full(a.shape[:-1], 0, a.dtype)
        hi = lax.full(a.shape[:-1], builtins.max(n - 1, 0), a.dtype)
        cols.append(lax.clamp(lo, c, hi))
    return _stack_columns(cols, a.dtype)


def in_bounds(idx, sizes):
    """Boolean array of idx's batch shape: every column j lies in [0, sizes[j])."""
    a = _aval(idx)
    ok = None
    for j, n in enumerate(sizes):
        c = _column(idx, j)
        good = lax.lt(c, lax.full(a.shape[:-1], n, a.dtype))
        if a.dtype.kind == "i":
            good = lax.bitwise_and(good, lax.ge(c, lax.full(a.shape[:-1], 0, a.dtype)))
        ok = good if ok is None else lax.bitwise_and(ok, good)
    return ok if ok is not None else lax.full(a.shape[:-1], True, dtypes.bool_)


def _gather_jvp(primals, tangents, axes, mode, fill_value):
    x, idx = primals
    t = tangents[0]
    out = bind(gather_p, x, idx, axes=axes, mode=mode, fill_value=fill_value)
    if type(t) is Zero:
        return out, Zero(_aval(out))
    # The tangent of a filled position is zero, not the fill value.
    return out, bind(gather_p, t, idx, axes=axes, mode=mode, fill_value=0 if mode == "fill" else None)


def _gather_transpose(ct, x, idx, axes, mode, fill_value):
    xa = _aval(x)
    sizes = [xa.shape[a] for a in axes]
    i = clamp_indices(idx, sizes) if mode == "clip" else idx  # fill/promise: out-of-range cts drop
    zeros = lax.full(xa.shape, 0, xa.dtype)
    return [bind(scatter_p, zeros, i, ct, axes=axes, kind="add", unique_indices=False), None]


def _batch_iota_column(idx, size):
    """Prepend a column holding the batch position to idx (batched along axis 0)."""
    a = _aval(idx)
    it = lax.broadcasted_iota(a.dtype, a.shape[:-1] + (1,), 0)
    return lax.concatenate([it, idx], a.ndim - 1)


def _gather_batch(size, vals, dims, axes, mode, fill_value):
    x, idx = vals
    xd, id_ = dims
    if id_ is None:
        x = batching.moveaxis(x, xd, 0)
        nb = _aval(idx).ndim - 1
        return bind(gather_p, x, idx, axes=tuple(a + 1 for a in axes), mode=mode, fill_value=fill_value), nb
    idx = batching.moveaxis(idx, id_, 0)  # the column axis stays last
    if xd is None:
        return bind(gather_p, x, idx, axes=axes, mode=mode, fill_value=fill_value), 0
    x = batching.moveaxis(x, xd, 0)
    idx = _batch_iota_column(idx, size)
    return bind(gather_p, x, idx, axes=(0,) + tuple(a + 1 for a in axes), mode=mode, fill_value=fill_value), 0


ad.jvp_rules[gather_p] = _gather_jvp
ad.transpose_rules[gather_p] = _gather_transpose
batching.batch_rules[gather_p] = _gather_batch

# --- scatter --------------------------------------------------------------------------------

scatter_p = _prim("scatter")


def _updated(x, u, message: str) -> ShapedArray:
    """The aval of operand x after an update u, which must have x's dtype (else TypeError(message))."""
    if u.dtype is not x.dtype:
        raise TypeError(message)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


@scatter_p.def_abstract_eval
def _scatter_abstract(x, idx, u, *, axes, kind, unique_indices):
    _check_axes("scatter", x, idx, axes)
    if kind not in SCATTER_KINDS:
        raise ValueError(f"scatter kind must be one of {SCATTER_KINDS}, got {kind!r}")
    want = idx.shape[:-1] + tuple(x.shape[a] for a in _rest_axes(x.ndim, axes))
    if u.shape != want:
        raise TypeError(
            f"scatter updates shape {_shape_str(u.shape)} must be {_shape_str(want)} for operand "
            f"{_shape_str(x.shape)}, indices {_shape_str(idx.shape)} and axes {axes}"
        )
    return _updated(
        x, u, f"scatter requires operand and updates to have the same dtype, got {x.dtype.name} and {u.dtype.name}"
    )


def scatter_axes(x, idx, u, axes, kind: str = "set", mode: str = "drop", unique_indices: bool = False):
    """pyjax's scatter (see module doc). mode 'drop' skips out-of-range updates, 'clip' clamps them."""
    x, idx, u = lax._as_array(x), lax._as_array(idx), lax._as_array(u)
    xa = _aval(x)
    axes = tuple(operator.index(a) % builtins.max(xa.ndim, 1) for a in axes)
    if mode == "clip":
        idx = clamp_indices(idx, [xa.shape[a] for a in axes])
    elif mode not in ("drop", "fill", "promise_in_bounds", None):
        raise ValueError(f"scatter mode must be 'drop' or 'clip', got {mode!r}")
    return bind(scatter_p, x, idx, u, axes=axes, kind=kind, unique_indices=builtins.bool(unique_indices))


def _sc(kind, x, idx, u, axes, unique=False):
    return bind(scatter_p, x, idx, u, axes=axes, kind=kind, unique_indices=unique)


def _ga_fill0(x, idx, axes):
    return bind(gather_p, x, idx, axes=axes, mode="fill", fill_value=0)


def _update_mask(idx, xa, axes, ua):
    """Which updates land (their indices are in range), broadcast to the updates' shape."""
    ok = in_bounds(idx, [xa.shape[a] for a in axes])
    return lax.broadcast_in_dim(ok, ua.shape, tuple(range(_aval(ok).ndim)))


def _scatter_jvp(primals, tangents, axes, kind, unique_indices):
    x, idx, u = primals
    tx, _, tu = tangents
    out = _sc(kind, x, idx, u, axes, unique_indices)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero(_aval(out))
    xa = _aval(x)
    if kind in ("set", "add"):
        return out, _sc(kind, ad.instantiate(tx), idx, ad.instantiate(tu), axes, unique_indices)
    if kind == "mul":
        t = _sc("mul", ad.instantiate(tx), idx, u, axes, unique_indices) if type(tx) is not Zero else None
        if type(tu) is not Zero:
            if not unique_indices:
                raise NotImplementedError("scatter_mul gradients are only implemented if `unique_indices=True`")
            tt = _sc("add", lax.full(xa.shape, 0, xa.dtype), idx, lax.mul(_ga_fill0(x, idx, axes), tu), axes)
            t = tt if t is None else lax.add(t, tt)
        return out, t
    succ, keep, count = _extremal_weights(x, idx, u, out, axes)
    tx, tu = ad.instantiate(tx), ad.instantiate(tu)
    num = lax.add(lax.mul(tx, keep), _sc("add", lax.full(xa.shape, 0, xa.dtype), idx, lax.mul(tu, succ), axes))
    return out, lax.div(num, count)


def _extremal_weights(x, idx, u, out, axes):
    """For scatter min/max: which updates and operand entries equal the result (ties share)."""
    xa, ua = _aval(x), _aval(u)
    target = _ga_fill0(out, idx, axes)
    succ = lax.bitwise_and(lax.eq(u, target), _update_mask(idx, xa, axes, ua))
    succ = lax.convert_element_type(succ, xa.dtype)
    keep = lax.convert_element_type(lax.eq(x, out), xa.dtype)
    count = lax.add(keep, _sc("add", lax.full(xa.shape, 0, xa.dtype), idx, succ, axes))
    return succ, keep, count


def _scatter_transpose(ct, x, idx, u, axes, kind, unique_indices):
    """scatter is linear in (operand, updates) for add and set, and in the operand for mul."""
    lin_x, lin_u = ad.is_undefined_primal(x), ad.is_undefined_primal(u)
    xa, ua = _aval(x), _aval(u)
    if kind == "add":
        return [ct if lin_x else None, None, _ga_fill0(ct, idx, axes) if lin_u else None]
    if kind == "set":
        gx = _sc("set", ct, idx, lax.full(ua.shape, 0, ua.dtype), axes) if lin_x else None
        gu = None
        if lin_u:  # an update that a later duplicate overwrote gets no cotangent
            n = builtins.max(math.prod(ua.shape), 1)
            ids = lax.reshape(lax.iota(dtypes.int32, n), ua.shape) if ua.size else lax.full(ua.shape, 0, dtypes.int32)
            owner = _sc("set", lax.full(xa.shape, -1, dtypes.int32), idx, ids, axes)
            back = bind(gather_p, owner, idx, axes=axes, mode="fill", fill_value=-2)
            gu = lax.select(lax.eq(back, ids), _ga_fill0(ct, idx, axes), lax.full(ua.shape, 0, ua.dtype))
        return [gx, None, gu]
    if kind == "mul" and not lin_u:
        return [_sc("mul", ct, idx, u, axes, unique_indices), None, None]
    raise NotImplementedError(f"scatter_{kind} is not linear in its updates")


def _scatter_batch(size, vals, dims, axes, kind, unique_indices):
    x, idx, u = vals
    xd, id_, ud = dims
    x = batching.move_to(x, xd, 0, size)
    if id_ is None and ud is None:
        # Same indices and updates for every example: index the batch axis as a window axis.
        u = batching.move_to(u, None, _aval(idx).ndim - 1, size)
        return _sc(kind, x, idx, u, tuple(a + 1 for a in axes), unique_indices), 0
    idx = batching.move_to(idx, id_, 0, size)
    u = batching.move_to(u, ud, 0, size)
    idx = _batch_iota_column(idx, size)
    return _sc(kind, x, idx, u, (0,) + tuple(a + 1 for a in axes), unique_indices), 0


ad.jvp_rules[scatter_p] = _scatter_jvp
ad.transpose_rules[scatter_p] = _scatter_transpose
batching.batch_rules[scatter_p] = _scatter_batch

# --- dynamic_slice / dynamic_update_slice ---------------------------------------------------

dynamic_slice_p = _prim("dynamic_slice")
dynamic_update_slice_p = _prim("dynamic_update_slice")


def _check_starts(name, x, starts):
    if len(starts) != x.ndim:
        raise ValueError(
            f"Length of slice indices must match number of operand dimensions ({len(starts)} vs {_shape_str(x.shape)})"
        )
    for s in starts:
        if s.shape != () or not _is_int_dtype(s.dtype):
            raise TypeError(f"{name} start indices must be integer scalars, got {s}")


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_abstract(x, *starts, slice_sizes):
    _check_starts("dynamic_slice", x, starts)
    if len(slice_sizes) != x.ndim:
        raise TypeError(
            f"dynamic_slice slice_sizes must have the same length as the operand's rank, got "
            f"slice_sizes {tuple(slice_sizes)} for operand shape {_shape_str(x.shape)}."
        )
    if any(s < 0 or s > n for s, n in zip(slice_sizes, x.shape)):
        raise TypeError(
            f"slice slice_sizes must be less than or equal to operand shape, got slice_sizes "
            f"{tuple(slice_sizes)} for operand shape {_shape_str(x.shape)}."
        )
    return ShapedArray(tuple(slice_sizes), x.dtype, x.weak_type)


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_abstract(x, u, *starts):
    _check_starts("dynamic_update_slice", x, starts)
    if u.ndim != x.ndim or any(a > b for a, b in zip(u.shape, x.shape)):
        raise TypeError(
            f"dynamic_update_slice update shape must be smaller than operand shape, got update "
            f"shape {_shape_str(u.shape)} for operand shape {_shape_str(x.shape)}."
        )
    return _updated(
        x,
        u,
        f"lax.dynamic_update_slice requires arguments to have the same dtypes, got {x.dtype.name}, {u.dtype.name}.",
    )


def _start_list(fn, start_indices, nd, allow_negative_indices, shape):
    """Start indices as a list of integer scalars (negative ones wrapped when allowed)."""
    if hasattr(start_indices, "shape") and not isinstance(start_indices, (list, tuple)):
        a = _aval(start_indices)
        if a.ndim != 1:
            raise ValueError(
                f"{fn}: start_indices must be a sequence of scalars or a 1-D array, got shape {_shape_str(a.shape)}"
            )
        starts = [lax.reshape(lax.slice(start_indices, (i,), (i + 1,)), ()) for i in range(a.shape[0])]
    else:
        starts = list(start_indices)
    if len(starts) != nd:
        raise ValueError(
            f"Length of slice indices must match number of operand dimensions ({len(starts)} vs {_shape_str(shape)})"
        )
    neg = allow_negative_indices
    negs = list(neg) if isinstance(neg, (list, tuple)) else [neg] * nd
    out = []
    for s, n, wrap in zip(starts, shape, negs):
        if isinstance(s, builtins.bool) or not isinstance(s, builtins.int) and not hasattr(s, "dtype"):
            s = operator.index(s)
        if isinstance(s, builtins.int):
            if wrap and s < 0:
                s += n
            out.append(_scalar(s, dtypes.int32))
            continue
        a = _aval(s)
        if a.shape != () or not _is_int_dtype(a.dtype):
            raise TypeError(f"{fn}: start indices must be integer scalars, got {a}")
        if wrap and a.dtype.kind == "i":
            s = lax.select(lax.lt(s, _scalar(0, a.dtype)), lax.add(s, _scalar(n, a.dtype)), s)
        out.append(s)
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """lax.dynamic_slice: a slice of static size at traced start indices (clamped to stay in bounds)."""
    operand = lax._as_array(operand)
    shape = _aval(operand).shape
    starts = _start_list("dynamic_slice", start_indices, len(shape), allow_negative_indices, shape)
    sizes = tuple(operator.index(s) for s in slice_sizes)
    return bind(dynamic_slice_p, operand, *starts, slice_sizes=sizes)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """lax.dynamic_update_slice: operand with `update` written at traced (clamped) start indices."""
    operand, update = lax._as_array(operand), lax._as_array(update)
    shape = _aval(operand).shape
    starts = _start_list("dynamic_update_slice", start_indices, len(shape), allow_negative_indices, shape)
    return bind(dynamic_update_slice_p, operand, update, *starts)


def _ds_jvp(primals, tangents, slice_sizes):
    x, *starts = primals
    out = bind(dynamic_slice_p, x, *starts, slice_sizes=slice_sizes)
    t = tangents[0]
    if type(t) is Zero:
        return out, Zero(_aval(out))
    return out, bind(dynamic_slice_p, t, *starts, slice_sizes=slice_sizes)


def _ds_transpose(ct, x, *starts, slice_sizes):
    xa = _aval(x)
    zeros = lax.full(xa.shape, 0, xa.dtype)
    return [bind(dynamic_update_slice_p, zeros, ct, *starts)] + [None] * len(starts)


def _dus_jvp(primals, tangents, **_):
    x, u, *starts = primals
    tx, tu = tangents[0], tangents[1]
    out = bind(dynamic_update_slice_p, x, u, *starts)
    if type(tx) is Zero and type(tu) is Zero:
        return out, Zero(_aval(out))
    return out, bind(dynamic_update_slice_p, ad.instantiate(tx), ad.instantiate(tu), *starts)


def _dus_transpose(ct, x, u, *starts):
    ua = _aval(u)
    gx = (
        bind(dynamic_update_slice_p, ct, lax.full(ua.shape, 0, ua.dtype), *starts)
        if ad.is_undefined_primal(x)
        else None
    )
    gu = bind(dynamic_slice_p, ct, *starts, slice_sizes=ua.shape) if ad.is_undefined_primal(u) else None
    return [gx, gu] + [None] * len(starts)


def _window_grid(size, starts, sdims, xshape, wshape):
    """Index grid (size, *wshape, 1 + ndim) of a clamped window per example, batch column first."""
    nd = len(xshape)
    full = (size,) + tuple(wshape)
    cols = [lax.broadcasted_iota(dtypes.int32, full, 0)]
    for d in range(nd):
        s, sd = starts[d], sdims[d]
        s = lax.convert_element_type(s, dtypes.int32)
        hi = builtins.max(xshape[d] - wshape[d], 0)
        if sd is None:
            s = lax.clamp(_scalar(0, dtypes.int32), s, _scalar(hi, dtypes.int32))
            s = lax.broadcast_in_dim(s, full, ())
        else:
            s = batching.moveaxis(s, sd, 0)
            s = lax.clamp(lax.full((size,), 0, dtypes.int32), s, lax.full((size,), hi, dtypes.int32))
            s = lax.broadcast_in_dim(s, full, (0,))
        cols.append(lax.add(s, lax.broadcasted_iota(dtypes.int32, full, d + 1)))
    return _stack_columns(cols, dtypes.int32)


def _ds_batch(size, vals, dims, slice_sizes):
    x, *starts = vals
    xd, *sdims = dims
    if all(d is None for d in sdims):
        x = batching.moveaxis(x, xd, 0)
        zero = _scalar(0, dtypes.int32)
        return bind(dynamic_slice_p, x, zero, *starts, slice_sizes=(size,) + tuple(slice_sizes)), 0
    xshape = _aval(x).shape if xd is None else tuple(s for i, s in enumerate(_aval(x).shape) if i != xd)
    x = batching.move_to(x, xd, 0, size)
    grid = _window_grid(size, starts, sdims, xshape, slice_sizes)
    return bind(gather_p, x, grid, axes=tuple(range(len(xshape) + 1)), mode="clip", fill_value=None), 0


def _dus_batch(size, vals, dims):
    x, u, *starts = vals
    xd, ud, *sdims = dims
    xa = _aval(x)
    xshape = xa.shape if xd is None else tuple(s for i, s in enumerate(xa.shape) if i != xd)
    x = batching.move_to(x, xd, 0, size)
    u = batching.move_to(u, ud, 0, size)
    if all(d is None for d in sdims):
        return bind(dynamic_update_slice_p, x, u, _scalar(0, dtypes.int32), *starts), 0
    wshape = _aval(u).shape[1:]
    grid = _window_grid(size, starts, sdims, xshape, wshape)
    return _sc("set", x, grid, u, tuple(range(len(xshape) + 1)), True), 0


ad.jvp_rules[dynamic_slice_p] = _ds_jvp
ad.transpose_rules[dynamic_slice_p] = _ds_transpose
batching.batch_rules[dynamic_slice_p] = _ds_batch
ad.jvp_rules[dynamic_update_slice_p] = _dus_jvp
ad.transpose_rules[dynamic_update_slice_p] = _dus_transpose
batching.batch_rules[dynamic_update_slice_p] = _dus_batch

# --- lax's convenience wrappers -------------------------------------------------------------


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *, allow_negative_indices=True):
    """lax.dynamic_slice_in_dim: dynamic_slice along one axis (full extent elsewhere)."""
    operand = lax._as_array(operand)
    shape = _aval(operand).shape
    axis = canonical_axis(axis, len(shape), "dynamic_slice_in_dim", scalar_ok=True)
    starts = [0] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = operator.index(slice_size)
    negs = [True] * len(shape)
    negs[axis] = builtins.bool(allow_negative_indices)
    return dynamic_slice(operand, starts, sizes, allow_negative_indices=negs)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *, allow_negative_indices=True):
    """lax.dynamic_index_in_dim: one (traced) index along axis, keeping the axis unless keepdims=False."""
    operand = lax._as_array(operand)
    axis = canonical_axis(axis, _aval(operand).ndim, "dynamic_index_in_dim", scalar_ok=True)
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    return out if keepdims else lax.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *, allow_negative_indices=True):
    """lax.dynamic_update_slice_in_dim: dynamic_update_slice with a start along one axis only."""
    operand = lax._as_array(operand)
    nd = _aval(operand).ndim
    axis = canonical_axis(axis, nd, "dynamic_update_slice_in_dim", scalar_ok=True)
    starts = [0] * nd
    starts[axis] = start_index
    negs = [True] * nd
    negs[axis] = builtins.bool(allow_negative_indices)
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=negs)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *, allow_negative_indices=True):
    """lax.dynamic_update_index_in_dim: write `update` (with or without the axis) at one index."""
    operand, update = lax._as_array(operand), lax._as_array(update)
    nd = _aval(operand).ndim
    axis = canonical_axis(axis, nd, "dynamic_update_index_in_dim", scalar_ok=True)
    if _aval(update).ndim == nd - 1:
        update = lax.expand_dims(update, (axis,))
    return dynamic_update_slice_in_dim(operand, update, index, axis, allow_negative_indices=allow_negative_indices)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """lax.index_in_dim: one static index along axis (negative wraps; out of range is an IndexError)."""
    operand = lax._as_array(operand)
    shape = _aval(operand).shape
    axis = canonical_axis(axis, len(shape), "index_in_dim", scalar_ok=True)
    index = operator.index(index)
    n = shape[axis]
    if not -n <= index < n:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
    index %= n
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else lax.squeeze(out, (axis,))


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """lax.slice_in_dim: a static slice along one axis (None and negative bounds as in Python)."""
    operand = lax._as_array(operand)
    shape = _aval(operand).shape
    axis = canonical_axis(axis, len(shape), "slice_in_dim", scalar_ok=True)
    n = shape[axis]
    start = 0 if start_index is None else operator.index(start_index)
    limit = n if limit_index is None else operator.index(limit_index)
    if start < 0:
        start += n
    if limit < 0:
        limit += n
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, limit, operator.index(stride)
    return lax.slice(operand, starts, limits, strides)


def index_take(src: Any, idxs: Any, axes: Sequence[int]) -> Any:
    """src indexed along `axes` by the columns of idxs: src[idxs[:, 0], idxs[:, 1], ...] on those axes."""
    src, idxs = _arr(src), _arr(idxs)
    axes = [a % src.ndim for a in axes]
    if idxs.ndim != 2 or idxs.shape[1] != len(axes):
        raise ValueError(f"index_take: idxs must have shape (n, {len(axes)}), got {idxs.shape}")
    rest = [a for a in range(src.ndim) if a not in axes]
    moved = lax.transpose(src, tuple(axes + rest))
    return moved[tuple(idxs[:, k] for k in range(len(axes)))]
