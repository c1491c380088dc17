"""numpy advanced indexing, `.at[]` updates, and the index-producing jnp functions.

An index tuple is parsed once into one entry per axis of a view of x with unit axes inserted
(for None and scalar booleans): a slice, or an advanced index (a static int or an integer
array; boolean masks become one integer array per masked axis, which needs concrete masks).
Reading applies the slices as views, then one gather over the advanced axes, then moves the
broadcast index dimensions where numpy puts them (in place when the advanced indices are
adjacent, else first). Updates use one scatter whose index grid also spans partial slices,
or, when every index is a static in-range int or a unit-step slice, a fused
dynamic_update_slice.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Callable

from pyjax.core import dtypes
from pyjax.core.core import Tracer, find_top_trace
from pyjax.core.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from pyjax.core.lru import LRUCache, cache_size
from pyjax.lax import lax, slicing
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _creation, _elementwise, _keys, _manipulation, _reductions
from pyjax.numpy._elementwise import nonzero
from pyjax.numpy._manipulation import take
from pyjax.numpy._promotion import (
    _aval,
    _check_arraylike,
    _is_array,
    _promote_list,
    _weak_result,
    asarray,
    broadcast_arrays,
    broadcast_shapes,
    broadcast_to,
)
from pyjax.numpy._util import _concrete_int, _concrete_value, _wrap_negative
from pyjax.runtime import execute as _execute
from pyjax.runtime.array import Array

__all__ = [
    "take",
    "take_along_axis",
    "put_along_axis",
    "nonzero",
    "flatnonzero",
    "argwhere",
    "compress",
    "extract",
    "choose",
    "ix_",
    "unravel_index",
    "ravel_multi_index",
    "indices",
    "diag_indices",
    "diag_indices_from",
    "tril_indices",
    "triu_indices",
    "tril_indices_from",
    "triu_indices_from",
    "mask_indices",
]


_MODES = (None, "clip", "fill", "drop", "promise_in_bounds")


def getitem(x, idx):
    """x[idx] with numpy's basic and advanced indexing (out-of-range indices clamp, as in JAX)."""
    if type(x) is Array and x._buf is not None:
        key = _basic_key(idx)
        if key is not None and find_top_trace((x,)) is None:
            key = (x.aval, x._tracker, key)
            view = _views.get(key)
            if view is not None:
                return Array(view[0], x._buf, view[1], x._device)
            y = advanced_getitem(x, idx)
            if type(y) is Array and y is not x and y._buf is x._buf and y._device is x._device:
                _views[key] = (y.aval, y._tracker)
            return y
    return advanced_getitem(x, idx)


# Basic indexing of a concrete Array (ints, slices, None, ...) is a view whose aval and view
# depend only on the Array's: (aval, view, index) -> (aval, view) of the result, so a repeated
# x[i] eagerly is one lookup (the first goes the whole way and must come out a view of x).
_views = LRUCache(cache_size("index_views", 1024))


def _basic_key(idx):
    """A hashable form of an index of ints, slices of ints, None and Ellipsis; None for others."""
    out = []
    for i in idx if type(idx) is tuple else (idx,):
        t = type(i)
        if t is builtins.int:
            out.append(i)
        elif t is builtins.slice:
            a, b, c = i.start, i.stop, i.step
            if not (
                (a is None or type(a) is builtins.int)
                and (b is None or type(b) is builtins.int)
                and (c is None or type(c) is builtins.int)
            ):
                return None
            out.append((a, b, c))
        elif i is None or i is Ellipsis:
            out.append(i)
        else:
            return None
    return tuple(out)


class _IndexUpdateHelper:
    """The `x.at` property: `x.at[idx]` gives an _IndexUpdateRef."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx) -> _IndexUpdateRef:
        return _IndexUpdateRef(self.x, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.x!r})"


class _IndexUpdateRef:
    """x.at[idx]: functional versions of x[idx] = v, x[idx] += v, ... (JAX's .at API)."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def __repr__(self):
        return f"_IndexUpdateRef({self.x!r}, {self.idx!r})"

    def get(
        self,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        fill_value=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        """x[idx]; mode='fill' gives fill_value (default NaN/INT_MIN/UINT_MAX/True) out of range."""
        return advanced_getitem(self.x, self.idx, mode=mode, fill_value=fill_value)

    def _update(self, kind, values, mode, unique_indices=False):
        return scatter_update(self.x, self.idx, values, kind, mode=mode, unique_indices=unique_indices)

    def apply(
        self, func: Callable, *, indices_are_sorted=False, unique_indices=False, mode=None, wrap_negative_indices=True
    ):
        """x[idx] = func(x[idx]) (func applied once per distinct index)."""
        return self._update("set", func(self.get(mode=mode)), mode, unique_indices)


def _scatter(kind: str) -> Callable:
    return lambda ref, values, mode, unique: ref._update(kind, values, mode, unique)


def _subtract(ref, values, mode, unique):
    values = values if _is_array(values) else asarray(values)
    values = values.astype(_aval(ref.x).dtype) if _is_array(ref.x) else values
    return ref._update("add", _elementwise.negative(values), mode, unique)


def _through_ones(op: Callable) -> Callable:
    """x op (ones with values multiplied in at idx), as JAX computes x[idx] /= v and x[idx] **= v."""

    def update(ref, values, mode, unique):
        x = ref.x if _is_array(ref.x) else asarray(ref.x)
        ones = scatter_update(_creation.ones_like(x), ref.idx, values, "mul", mode=mode, unique_indices=unique)
        return op(x, ones)

    return update


# x.at[idx].<name>(values, ...): how each update is computed, and its docstring.
_UPDATES = {
    "set": (_scatter("set"), "x[idx] = values (out-of-range updates are dropped unless mode='clip')."),
    "add": (_scatter("add"), "x[idx] += values (repeated indices accumulate)."),
    "subtract": (_subtract, "x[idx] -= values."),
    "multiply": (_scatter("mul"), "x[idx] *= values."),
    "mul": (_scatter("mul"), "x[idx] *= values."),
    "divide": (
        _through_ones(_elementwise.true_divide),
        "x[idx] /= values, as x / (ones with values multiplied in at idx), like JAX.",
    ),
    "power": (
        _through_ones(_elementwise.power),
        "x[idx] **= values, as x ** (ones with values multiplied in at idx), like JAX.",
    ),
    "min": (_scatter("min"), "x[idx] = minimum(x[idx], values)."),
    "max": (_scatter("max"), "x[idx] = maximum(x[idx], values)."),
}


def _update_method(name: str, update: Callable, doc: str) -> Callable:
    def method(
        self,
        values,
        *,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices=True,
    ):
        return update(self, values, mode, unique_indices)

    method.__name__, method.__qualname__, method.__doc__ = name, f"_IndexUpdateRef.{name}", doc
    return method


for _name, (_fn, _doc) in _UPDATES.items():
    setattr(_IndexUpdateRef, _name, _update_method(_name, _fn, _doc))
del _name, _fn, _doc


try:  # numpy scalars and arrays are valid indices when numpy is present
    import numpy as _np
except ImportError:  # pragma: no cover - Pyodide without numpy
    _np = None


_I32 = dtypes.int32


def _index_dtype():
    return dtypes.default_int()


# --- parsing ------------------------------------------------------------------------------------


class _Adv:
    """An advanced index on one axis: a static int or an integer array (already concrete-checked)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    @property
    def is_static(self) -> bool:
        return isinstance(self.value, builtins.int)

    @property
    def shape(self) -> tuple:
        return () if self.is_static else _aval(self.value).shape


def _mask_coords(mask, pos: int, shape: tuple) -> list:
    """Integer coordinate arrays of the True entries of a concrete boolean mask."""
    ma = _aval(mask)
    if ma.shape != shape:
        raise IndexError(
            f"boolean index did not match shape of indexed array in index {pos}: got {ma.shape}, expected {list(shape)}"
        )
    conc = _concrete_value(mask, "mask")
    if conc is None:
        raise NonConcreteBooleanIndexError(ma)
    flat = conc._flat_list() if isinstance(conc, Array) else list(_np.asarray(conc).reshape(-1))
    hits = [i for i, v in enumerate(flat) if v]
    coords = []
    for d in range(len(shape)):
        inner = math.prod(shape[d + 1 :])
        coords.append(asarray([(h // inner) % shape[d] for h in hits], dtype=_I32))
    return coords


def _as_index_array(i):
    if isinstance(i, (Array, Tracer)):
        return i
    if isinstance(i, (list, tuple)):
        if len(i) == 0:
            return asarray([], dtype=_I32)
        return asarray(i)
    return asarray(i)


def _classify(i):
    """('none'|'ellipsis'|'slice'|'bool'|'int'|'mask'|'array', value) for one index element."""
    if i is None:
        return "none", None
    if i is Ellipsis:
        return "ellipsis", None
    if isinstance(i, builtins.slice):
        return "slice", _static_slice(i)
    if isinstance(i, builtins.bool) or (_np is not None and isinstance(i, _np.bool_)):
        return "bool", builtins.bool(i)
    if isinstance(i, builtins.int) or (_np is not None and isinstance(i, _np.integer)):
        return "int", operator.index(i)
    if isinstance(i, str):
        raise TypeError(f"JAX does not support string indexing; got idx={i!r}")
    if isinstance(i, builtins.float):
        raise TypeError("Indexer must have integer or boolean type, got indexer with type float64")
    if isinstance(i, (Array, Tracer, list, tuple)) or (_np is not None and isinstance(i, (_np.ndarray, _np.generic))):
        arr = _as_index_array(i)
        d = _aval(arr).dtype
        if d.kind == "b":
            if _aval(arr).ndim == 0:
                conc = _concrete_value(arr, "bool")
                if conc is None:
                    raise NonConcreteBooleanIndexError(_aval(arr))
                return "bool", builtins.bool(conc)
            return "mask", arr
        if d.kind not in "iu":
            raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {d.name}")
        return "array", arr
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type {type(i).__name__}")


def _static_slice(s: builtins.slice) -> builtins.slice:
    parts = []
    for v in (s.start, s.stop, s.step):
        if v is None:
            parts.append(None)
            continue
        if isinstance(v, Tracer):
            raise IndexError(
                "Array slice indices must have static start/stop/step to be used with NumPy indexing "
                "syntax. Use lax.dynamic_slice or lax.dynamic_update_slice instead."
            )
        try:
            parts.append(operator.index(v))
        except TypeError:
            raise TypeError(f"slice indices must be integers or None, got {v!r}") from None
    if parts[2] == 0:
        raise ValueError("slice step cannot be zero")
    return builtins.slice(*parts)


def parse_index(shape: tuple, idx) -> tuple[tuple, list]:
    """(expanded shape, one entry per expanded axis: a slice or an _Adv) for x[idx]."""
    if not isinstance(idx, tuple):
        if isinstance(idx, list):
            raise TypeError(
                "Using a non-tuple sequence for multidimensional indexing is not allowed; use "
                "`arr[array(seq)]` instead of `arr[seq]`. See https://github.com/jax-ml/jax/issues/4564 "
                "for more information."
            )
        idx = (idx,)
    items = [_classify(i) for i in idx]
    n_ell = builtins.sum(1 for k, _ in items if k == "ellipsis")
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    nd = len(shape)
    used = builtins.sum(_aval(v).ndim if k == "mask" else 1 for k, v in items if k in ("slice", "int", "array", "mask"))
    if used > nd:
        raise IndexError(f"Too many indices: array is {nd}-dimensional, but {used} were indexed")
    expanded: list = []
    for k, v in items:
        if k == "ellipsis":
            expanded += [("slice", builtins.slice(None))] * (nd - used)
        else:
            expanded.append((k, v))
    if n_ell == 0:
        expanded += [("slice", builtins.slice(None))] * (nd - used)
    new_shape, entries, axis = [], [], 0
    for pos, (k, v) in enumerate(expanded):
        if k == "none":
            new_shape.append(1)
            entries.append(builtins.slice(None))
        elif k == "bool":
            new_shape.append(1)
            entries.append(_Adv(asarray([0] if v else [], dtype=_I32)))
        elif k == "mask":
            m = _aval(v).ndim
            coords = _mask_coords(v, pos, tuple(shape[axis : axis + m]))
            new_shape += list(shape[axis : axis + m])
            entries += [_Adv(c) for c in coords]
            axis += m
        else:
            new_shape.append(shape[axis])
            entries.append(_Adv(v) if k in ("int", "array") else v)
            axis += 1
    return tuple(new_shape), entries


# --- shared helpers -----------------------------------------------------------------------------


def _stack_dtype(values) -> dtypes.DType:
    big = builtins.any(not isinstance(v, builtins.int) and _aval(v).dtype.bits == 64 for v in values)
    return dtypes.canonicalize(dtypes.int64) if big else _I32


def _as_typed(v, d):
    if isinstance(v, builtins.int):
        return _execute.make_scalar(v, d, False)
    return lax.convert_element_type(v, d) if _aval(v).dtype is not d else v


def _apply_slice(x, axis: int, s: builtins.slice):
    n = _aval(x).shape[axis]
    start, stop, step = s.indices(n)
    if (start, stop, step) == (0, n, 1):
        return x
    nd = _aval(x).ndim
    if step > 0:
        cnt = builtins.max(0, (stop - start + step - 1) // step)
        lo, hi = (start, start + (cnt - 1) * step + 1) if cnt else (0, 0)
        st = step
    else:
        cnt = builtins.max(0, (start - stop - step - 1) // (-step))
        lo, hi = (start + (cnt - 1) * step, start + 1) if cnt else (0, 0)
        st = -step
    starts, limits, strides = [0] * nd, list(_aval(x).shape), [1] * nd
    starts[axis], limits[axis], strides[axis] = lo, hi, st
    y = lax.slice(x, starts, limits, strides)
    return lax.rev(y, (axis,)) if step < 0 and cnt > 1 else y


def _slice_positions(s: builtins.slice, n: int) -> tuple[int, int, int]:
    """(start, step, length) of a slice over an axis of size n."""
    start, stop, step = s.indices(n)
    return start, step, len(range(start, stop, step))


def _placement(adv_axes: list, nb: int, n_rest_before: int, n_rest: int) -> list | None:
    """Permutation moving gathered dims (batch first, then rest) to numpy's order, or None."""
    if not adv_axes or adv_axes != list(range(adv_axes[0], adv_axes[0] + len(adv_axes))):
        return None
    if n_rest_before == 0:
        return None
    return [nb + i for i in range(n_rest_before)] + list(range(nb)) + [nb + i for i in range(n_rest_before, n_rest)]


# --- reading ------------------------------------------------------------------------------------


def advanced_getitem(x, idx_tuple, mode=None, fill_value=None):
    """x[idx] with numpy's full indexing rules; mode 'fill' returns fill_value for out-of-range indices.

    Out-of-range indices are clamped otherwise (JAX's behaviour on CPU/GPU)."""
    x = x if _is_array(x) else asarray(x)
    if mode not in (None, "clip", "fill", "promise_in_bounds", "drop"):
        raise ValueError(f"mode must be one of 'clip', 'fill', 'drop' or 'promise_in_bounds', got {mode!r}")
    fill = mode in ("fill", "drop")
    shape = _aval(x).shape
    new_shape, entries = parse_index(shape, idx_tuple)
    if new_shape != shape:
        x = lax.reshape(x, new_shape)
    for a, e in enumerate(entries):
        if isinstance(e, builtins.slice):
            x = _apply_slice(x, a, e)
    xs = _aval(x).shape
    adv = [(a, e) for a, e in enumerate(entries) if isinstance(e, _Adv)]
    if not adv:
        return x
    adv_axes = [a for a, _ in adv]
    values = [_wrap_negative(e.value, xs[a]) for a, e in adv]
    if not fill and builtins.all(e.is_static for _, e in adv):
        # Static ints: a plain slice (a view). Out-of-range ints clamp, as JAX does on CPU/GPU.
        starts, limits = [0] * len(xs), list(xs)
        for a, v in zip(adv_axes, values):
            if xs[a] == 0:
                raise IndexError(f"index {v} is out of bounds for axis {a} with size 0")
            v = builtins.min(builtins.max(v, 0), xs[a] - 1)
            starts[a], limits[a] = v, v + 1
        y = lax.slice(x, starts, limits)
        return lax.reshape(y, tuple(s for i, s in enumerate(xs) if i not in adv_axes))
    if not fill and builtins.all(e.shape == () for _, e in adv):
        # Only scalar indices: one dynamic_slice (fuses, and its gradient stays fused too).
        starts = [0] * len(xs)
        sizes = list(xs)
        for a, v in zip(adv_axes, values):
            starts[a], sizes[a] = v, 1
        y = slicing.dynamic_slice(x, starts, sizes, allow_negative_indices=False)
        return lax.reshape(y, tuple(s for i, s in enumerate(xs) if i not in adv_axes))
    bshape = broadcast_shapes(*[e.shape for _, e in adv])
    d = _stack_dtype(values)
    cols = [
        lax.broadcast_in_dim(_as_typed(v, d), bshape, tuple(range(len(bshape) - len(e.shape), len(bshape))))
        for v, (_, e) in zip(values, adv)
    ]
    ind = lax.concatenate([lax.reshape(c, bshape + (1,)) for c in cols], len(bshape))
    g_mode = "fill" if fill else "clip" if mode == "clip" else "promise_in_bounds"
    y = slicing.take_axes(x, ind, adv_axes, mode=g_mode, fill_value=fill_value)
    rest = [a for a in range(len(xs)) if a not in adv_axes]
    perm = _placement(adv_axes, len(bshape), builtins.sum(1 for a in rest if a < adv_axes[0]), len(rest))
    return lax.transpose(y, perm) if perm is not None else y


# --- updating -----------------------------------------------------------------------------------


def _combine(kind, cur, new):
    if kind == "add":
        return lax.add(cur, new)
    if kind == "mul":
        return lax.mul(cur, new)
    if kind == "min":
        return lax.min(cur, new)
    return lax.max(cur, new)


def scatter_update(x, idx, values, kind: str, mode=None, unique_indices: bool = False):
    """x.at[idx].<kind>(values) for kind in set/add/mul/min/max: values broadcast to x[idx]'s shape and
    cast to x's dtype; out-of-range updates are dropped (mode 'clip' clamps them instead)."""
    x = x if _is_array(x) else asarray(x)
    xa = _aval(x)
    values = values if _is_array(values) else asarray(values)
    # Like JAX: combine in the promoted dtype, then cast the result back to x's dtype.
    d, weak = _weak_result(x, values)
    out = _scatter_update_promoted(
        lax._convert(x, d, weak), idx, lax._convert(values, d, weak), kind, mode, unique_indices
    )
    return lax._convert(out, xa.dtype, xa.weak_type)


def _scatter_update_promoted(x, idx, values, kind, mode, unique_indices):
    xa = _aval(x)
    if mode not in (None, "clip", "fill", "drop", "promise_in_bounds"):
        raise ValueError(f"mode must be one of 'clip', 'fill', 'drop' or 'promise_in_bounds', got {mode!r}")
    shape = xa.shape
    new_shape, entries = parse_index(shape, idx)
    xv = lax.reshape(x, new_shape) if new_shape != shape else x
    adv = [(a, e) for a, e in enumerate(entries) if isinstance(e, _Adv)]
    adv_axes = [a for a, _ in adv]
    bshape = broadcast_shapes(*[e.shape for _, e in adv]) if adv else ()
    slices = {a: _slice_positions(e, new_shape[a]) for a, e in enumerate(entries) if isinstance(e, builtins.slice)}
    # numpy's shape of x[idx]: labels ('b', i) for broadcast index dims, ('s', axis) for sliced axes.
    s_labels = [("s", a) for a in sorted(slices)]
    b_labels = [("b", i) for i in range(len(bshape))]
    contiguous = adv_axes == list(range(adv_axes[0], adv_axes[0] + len(adv_axes))) if adv_axes else True
    if adv_axes and contiguous:
        before = [lab for lab in s_labels if lab[1] < adv_axes[0]]
        labels = before + b_labels + [lab for lab in s_labels if lab[1] > adv_axes[0]]
    else:
        labels = b_labels + s_labels
    vshape = tuple(bshape[lab[1]] if lab[0] == "b" else slices[lab[1]][2] for lab in labels)
    values = broadcast_to(values, vshape)
    if math.prod(vshape) == 0:
        return x
    wrapped = [_wrap_negative(e.value, new_shape[a]) for a, e in adv]
    static_ok = builtins.all(isinstance(v, builtins.int) and 0 <= v < new_shape[a] for v, a in zip(wrapped, adv_axes))
    if static_ok and builtins.all(slices[a][1] == 1 for a in slices):
        out = _update_window(xv, entries, wrapped, adv_axes, slices, values, kind)
    else:
        out = _update_scatter(
            xv,
            new_shape,
            adv,
            wrapped,
            bshape,
            slices,
            labels,
            values,
            kind,
            mode,
            unique_indices or not builtins.any(e.shape for _, e in adv),
        )
    return lax.reshape(out, shape) if new_shape != shape else out


def _update_window(xv, entries, wrapped, adv_axes, slices, values, kind):
    """Static in-range ints and unit-step slices: a fused dynamic_update_slice of one window."""
    nd = len(entries)
    starts, sizes = [0] * nd, [0] * nd
    for a, v in zip(adv_axes, wrapped):
        starts[a], sizes[a] = v, 1
    for a, (st, _, ln) in slices.items():
        starts[a], sizes[a] = st, ln
    new = lax.reshape(values, tuple(sizes))
    if kind != "set":
        cur = lax.slice(xv, starts, [s + k for s, k in zip(starts, sizes)])
        new = _combine(kind, cur, new)
    return slicing.dynamic_update_slice(xv, new, starts, allow_negative_indices=False)


def _update_scatter(xv, new_shape, adv, wrapped, bshape, slices, labels, values, kind, mode, unique):
    """General case: one scatter over the advanced axes and the partial slices."""
    nb = len(bshape)
    partial = [a for a in sorted(slices) if slices[a] != (0, 1, new_shape[a])]
    gshape = tuple(bshape) + tuple(slices[a][2] for a in partial)
    d = _stack_dtype(wrapped)
    cols = []
    for (_, e), v in zip(adv, wrapped):
        v = _as_typed(v, d)
        cols.append(lax.broadcast_in_dim(v, gshape, tuple(range(nb - len(e.shape), nb))))
    for q, a in enumerate(partial):
        st, step, _ = slices[a]
        it = lax.broadcasted_iota(d, gshape, nb + q)
        cols.append(lax.add(lax.mul(it, lax.full(gshape, step, d)), lax.full(gshape, st, d)))
    ind = lax.concatenate([lax.reshape(c, gshape + (1,)) for c in cols], len(gshape))
    target = [("b", i) for i in range(nb)] + [("s", a) for a in partial]
    target += [("s", a) for a in sorted(slices) if a not in partial]
    perm = [labels.index(t) for t in target]
    upd = lax.transpose(values, perm)
    axes = [a for a, _ in adv] + partial
    return slicing.scatter_axes(
        xv, ind, upd, axes, kind, mode="clip" if mode == "clip" else "drop", unique_indices=unique
    )


# --- jnp functions ------------------------------------------------------------------------------


def _arr(x):
    return x if _is_array(x) else asarray(x)


def _along_axis_grid(fn, arr, indices, axis):
    """Broadcast arr and indices except along axis; returns (arr, gather index grid, out shape)."""
    arr, indices = _arr(arr), _arr(indices)
    ia = _aval(indices)
    if ia.dtype.kind not in "iu":
        raise TypeError(f"{fn} indices must be of integer type, got {ia.dtype.name}")
    if axis is None:
        if ia.ndim != 1:
            raise ValueError(f"{fn} indices must be 1D if axis=None, got shape {ia.shape}")
        arr = _manipulation.ravel(arr)
        axis = 0
    aa = _aval(arr)
    if ia.ndim != aa.ndim:
        raise ValueError(f"indices and arr must have the same number of dimensions; {ia.ndim} vs. {aa.ndim}")
    axis = canonical_axis(axis, aa.ndim, fn, scalar_ok=True)
    out_shape = []
    for d in range(aa.ndim):
        if d == axis:
            out_shape.append(ia.shape[d])
        else:
            out_shape.append(broadcast_shapes((aa.shape[d],), (ia.shape[d],))[0])
    out_shape = tuple(out_shape)
    idx = broadcast_to(
        _wrap_negative(indices, aa.shape[axis]),
        tuple(s if d == axis else out_shape[d] if ia.shape[d] != 1 else 1 for d, s in enumerate(ia.shape)),
    )
    d_t = _stack_dtype([idx])
    cols = []
    for d in range(aa.ndim):
        if d == axis:
            c = lax.broadcast_in_dim(_as_typed(idx, d_t), out_shape, tuple(range(aa.ndim)))
        elif aa.shape[d] == 1:
            c = lax.full(out_shape, 0, d_t)
        else:
            c = lax.broadcasted_iota(d_t, out_shape, d)
        cols.append(lax.reshape(c, out_shape + (1,)))
    grid = lax.concatenate(cols, len(out_shape)) if len(cols) > 1 else cols[0]
    return arr, grid, out_shape


@_keys.lifted
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """jnp.take_along_axis: arr's values at `indices` along axis (other axes broadcast)."""
    _check_arraylike("take_along_axis", arr, indices, keys=True)
    arr, grid, out_shape = _along_axis_grid("take_along_axis", arr, indices, axis)
    nd = _aval(arr).ndim
    g_mode = {"clip": "clip", "promise_in_bounds": "promise_in_bounds"}.get(mode, "fill")
    if mode == "wrap":
        raise NotImplementedError("take_along_axis mode='wrap' is not supported")
    return slicing.take_axes(arr, grid, tuple(range(nd)), mode=g_mode, fill_value=fill_value)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """jnp.put_along_axis (inplace=False only, as in JAX): arr with values written along axis."""
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays are "
            "immutable. Pass inplace=False to instead return an updated array."
        )
    arr = _arr(arr)
    full_arr = arr
    if axis is None:
        arr = _manipulation.ravel(arr)
    arr2, grid, out_shape = _along_axis_grid("put_along_axis", arr, indices, 0 if axis is None else axis)
    nd = _aval(arr2).ndim
    vals = broadcast_to(_arr(values).astype(_aval(arr2).dtype), out_shape)
    out = slicing.scatter_axes(arr2, grid, vals, tuple(range(nd)), "set", mode="clip" if mode == "clip" else "drop")
    return lax.reshape(out, _aval(full_arr).shape) if axis is None else out


def flatnonzero(a, *, size=None, fill_value=None):
    """jnp.flatnonzero: indices of nonzero entries of the flattened array."""
    _check_arraylike("ravel", a)  # JAX's flatnonzero ravels first, and its error names ravel
    return nonzero(_manipulation.ravel(_arr(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """jnp.argwhere: (N, ndim) array of the coordinates of nonzero entries."""
    _check_arraylike("argwhere", a)
    a = _arr(a)
    aa = _aval(a)
    if aa.ndim == 0:
        keep = (
            _concrete_int(lax.ne(a, lax.full((), 0, aa.dtype)), "argwhere of a traced 0-d array")
            if size is None
            else size
        )
        return lax.full((keep, 0), 0, _I32)
    return _manipulation.stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """jnp.compress: the slices of a along axis where condition (1-D) is true."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    _check_arraylike("compress", condition, a, fill_value)
    cond = _arr(condition)
    a = _arr(a)
    if _aval(cond).ndim != 1:
        raise ValueError("condition must be a 1D array")
    if _aval(cond).dtype.kind != "b":
        cond = lax.ne(cond, lax.full(_aval(cond).shape, 0, _aval(cond).dtype))
    if axis is None:
        a = _manipulation.ravel(a)
        axis = 0
    axis = canonical_axis(axis, _aval(a).ndim, "compress", scalar_ok=True)
    n = _aval(a).shape[axis]
    m = _aval(cond).shape[0]
    if m > n:
        extra = lax.slice(cond, (n,), (m,))
        c = _concrete_value(lax.reduce_or(extra, (0,)), "compress")
        if c is None or builtins.bool(c):
            raise ValueError("condition contains entries that are out of bounds")
        cond = lax.slice(cond, (0,), (n,))
    elif m < n:
        cond = lax.concatenate([cond, lax.full((n - m,), False, dtypes.bool_)], 0)
    (idx,) = nonzero(cond, size=size, fill_value=n)
    return take(a, idx, axis=axis, mode="fill", fill_value=fill_value)


def extract(condition, arr, *, size=None, fill_value=0):
    """jnp.extract: the entries of arr (flattened) where condition is true."""
    _check_arraylike("extreact", condition, arr, fill_value)  # JAX's spelling, word for word
    return compress(
        _manipulation.ravel(_arr(condition)), _manipulation.ravel(_arr(arr)), size=size, fill_value=fill_value
    )


def choose(a, choices, out=None, mode="raise"):
    """jnp.choose: out[i] = choices[a[i]][i] with broadcasting; mode 'raise' needs concrete a."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    _check_arraylike("choose", a, *choices)
    a = _arr(a)
    if _aval(a).dtype.kind not in "iu":
        raise TypeError("choose: index array a must have an integer dtype")
    n = len(choices)
    if mode == "raise":
        c = _concrete_value(a, "choose")
        if c is None:
            raise ConcretizationTypeError(_aval(a), "jnp.choose with mode='raise' needs a concrete index")
        lo = builtins.int(_concrete_value(_reductions.min(a), "choose")) if _aval(a).size else 0
        hi = builtins.int(_concrete_value(_reductions.max(a), "choose")) if _aval(a).size else 0
        if lo < 0 or hi >= n:
            raise ValueError("invalid entry in choice array")
    elif mode == "wrap":
        a = _elementwise.remainder(a, n)
    elif mode == "clip":
        a = _elementwise.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrs = broadcast_arrays(a, *_promote_list([_arr(c) for c in choices]))
    a, cs = arrs[0], arrs[1:]
    stacked = _manipulation.stack(cs, axis=0)
    return take_along_axis(stacked, lax.expand_dims(a, (0,)), 0, mode="clip")[0]


def ix_(*args):
    """jnp.ix_: open-mesh index arrays from 1-D integer sequences."""
    _check_arraylike("ix", *args)
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = _arr(a)
        aa = _aval(a)
        if aa.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {aa.shape}")
        if aa.dtype.kind == "b":
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = [1] * n
        shape[i] = aa.shape[0]
        out.append(lax.reshape(a, tuple(shape)))
    return tuple(out)


def unravel_index(indices, shape):
    """jnp.unravel_index: coordinate arrays of flat indices in `shape` (out-of-range ones clipped,
    negative ones counted from the end, as JAX does)."""
    _check_arraylike("unravel_index", indices)
    indices = _arr(indices)
    ia = _aval(indices)
    if ia.dtype.kind not in "iu":
        raise TypeError(f"only int indices permitted, got {ia.dtype.name}")
    shape = tuple(operator.index(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
    total = math.prod(shape)
    d = ia.dtype
    idx = _wrap_negative(indices, total)
    idx = lax.clamp(lax.full(ia.shape, 0, d), idx, lax.full(ia.shape, builtins.max(total - 1, 0), d))
    out = []
    for k in range(len(shape)):
        inner = math.prod(shape[k + 1 :])
        c = lax.rem(
            lax.div(idx, lax.full(ia.shape, builtins.max(inner, 1), d)),
            lax.full(ia.shape, builtins.max(shape[k], 1), d),
        )
        out.append(c)
    return tuple(out)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """jnp.ravel_multi_index: flat indices from coordinate arrays (mode raise/wrap/clip)."""
    if order not in ("C", "F"):
        raise ValueError("only 'C' or 'F' order is permitted")
    dims = tuple(operator.index(s) for s in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    idx = broadcast_arrays(*[_arr(i) for i in multi_index])
    for i in idx:
        if _aval(i).dtype.kind not in "iu":
            raise TypeError(f"only int indices permitted, got {_aval(i).dtype.name}")
    if mode == "raise":
        for i, n in zip(idx, dims):
            if _aval(i).size == 0:
                continue
            lo = _concrete_value(_reductions.min(i), "ravel_multi_index")
            hi = _concrete_value(_reductions.max(i), "ravel_multi_index")
            if lo is None or hi is None:
                raise ConcretizationTypeError(
                    _aval(i),
                    "The error occurred because ravel_multi_index was "
                    "jit-compiled with mode='raise'. Use mode='wrap' or mode='clip'.",
                )
            if builtins.int(lo) < 0 or builtins.int(hi) >= n:
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [_elementwise.remainder(i, n) for i, n in zip(idx, dims)]
    elif mode == "clip":
        idx = [_elementwise.clip(i, 0, n - 1) for i, n in zip(idx, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    order_dims = list(range(len(dims)))
    if order == "F":
        order_dims.reverse()
    out, stride = None, 1
    for k in reversed(order_dims):
        term = idx[k] * stride
        out = term if out is None else out + term
        stride *= dims[k]
    return out if out is not None else asarray(0)


def indices(dimensions, dtype=None, sparse: bool = False):
    """jnp.indices: a grid of coordinate arrays for an array of shape `dimensions`."""
    dims = tuple(operator.index(d) for d in dimensions)
    d = dtypes.canonicalize(dtype) if dtype is not None else _index_dtype()
    n = len(dims)
    out = []
    for i, s in enumerate(dims):
        if sparse:
            shape = tuple(s if j == i else 1 for j in range(n))
            out.append(lax.broadcasted_iota(d, shape, i))
        else:
            out.append(lax.broadcasted_iota(d, dims, i))
    if sparse:
        return tuple(out)
    return _manipulation.stack(out, axis=0) if out else _creation.zeros((0,), d)


def _static_pairs(pairs):
    rows = asarray([r for r, _ in pairs], dtype=_I32)
    cols = asarray([c for _, c in pairs], dtype=_I32)
    return rows, cols


def diag_indices(n: int, ndim: int = 2):
    """jnp.diag_indices: indices of the main diagonal of an (n,)*ndim array."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(_I32, n),) * ndim


def diag_indices_from(arr):
    """jnp.diag_indices_from: diag_indices for a square array's shape."""
    _check_arraylike("diag_indices_from", arr)
    s = _aval(_arr(arr)).shape
    if len(s) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], len(s))


def tril_indices(n: int, k: int = 0, m: int | None = None):
    """jnp.tril_indices: row and column indices of the lower triangle (offset k) of an (n, m) array."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    return _static_pairs([(i, j) for i in range(n) for j in range(m) if j - i <= k])


def triu_indices(n: int, k: int = 0, m: int | None = None):
    """jnp.triu_indices: row and column indices of the upper triangle (offset k) of an (n, m) array."""
    n, k = operator.index(n), operator.index(k)
    m = n if m is None else operator.index(m)
    return _static_pairs([(i, j) for i in range(n) for j in range(m) if j - i >= k])


def tril_indices_from(arr, k: int = 0):
    """jnp.tril_indices_from: tril_indices for a 2-D array's shape."""
    _check_arraylike("tril_indices_from", arr)
    s = _aval(_arr(arr)).shape
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(s[0], k=k, m=s[1])


def triu_indices_from(arr, k: int = 0):
    """jnp.triu_indices_from: triu_indices for a 2-D array's shape."""
    _check_arraylike("triu_indices_from", arr)
    s = _aval(_arr(arr)).shape
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(s[0], k=k, m=s[1])


def mask_indices(n: int, mask_func, k: int = 0, *, size=None):
    """jnp.mask_indices: indices where mask_func(ones((n, n)), k) is nonzero."""
    n = operator.index(n)
    return nonzero(mask_func(_creation.ones((n, n), dtype=_I32), k), size=size)
