"""Shape manipulation and array editing: reshape, transpose, moveaxis, squeeze, expand_dims,
concatenate/stack/split and their variants, tile, repeat, flip, roll, rot90, pad, tril/triu,
diagonal, diag, trace; append, insert, delete, resize, block, trim_zeros, fill_diagonal, unstack,
rollaxis, put and place. Functions whose output shape depends on values (insert/delete positions,
trim_zeros) need those values concrete, as in JAX.
"""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import dtypes
from pyjax.core.core import Tracer
from pyjax.lax import lax, slicing
from pyjax.lax._util import canonical_axis
from pyjax.lax.sorting import argsort_lax
from pyjax.numpy import _keys
from pyjax.runtime.array import Array

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None
from pyjax.numpy import _creation, _elementwise, _reductions
from pyjax.numpy._promotion import (
    _check_arraylike,
    _is_array,
    _promote_list,
    _shape_tuple,
    _stack,
    asarray,
    broadcast_shapes,
    broadcast_to,
    ndim,
)
from pyjax.numpy._util import _arr, _aval, _concrete, _slice_axis, _to_dtype, _wrap_negative

__all__ = [
    "append",
    "insert",
    "delete",
    "resize",
    "block",
    "trim_zeros",
    "fill_diagonal",
    "unstack",
    "rollaxis",
    "put",
    "place",
]


# --- array editing ------------------------------------------------------------------------------------


def append(arr, values, axis: int | None = None):
    """arr with values appended (flattened when axis is None)."""
    if axis is None:  # JAX ravels both, or concatenates them, and its error names that step
        _check_arraylike("ravel", arr)
        _check_arraylike("ravel", values)
    else:
        _check_arraylike("concatenate", arr, values)
    if axis is None:
        return concatenate([ravel(_arr(arr)), ravel(_arr(values))])
    return concatenate([_arr(arr), _arr(values)], axis=axis)


def _index_array(obj, fn: str):
    """obj (an index array-like, not a slice) as an int32 array; lists are rejected as in JAX."""
    _check_arraylike(fn, obj)
    ind = _arr(obj)
    if _aval(ind).ndim > 1:
        raise ValueError(f"jnp.{fn}(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}")
    return ind


def _along(arr, axis: int | None, fn: str):
    """insert/delete's operand and axis: axis None means the flattened array."""
    a = _arr(arr)
    if axis is None:
        return ravel(a), 0
    return a, canonical_axis(axis, _aval(a).ndim, fn)


def insert(arr, obj, values, axis: int | None = None):
    """arr with values inserted before the given positions along axis (positions may be traced;
    out-of-range positions are clipped, as in JAX)."""
    _check_arraylike("insert", arr, 0 if isinstance(obj, builtins.slice) else obj, values)
    a, axis = _along(arr, axis, "insert")
    nd, n = _aval(a).ndim, _aval(a).shape[axis]
    if isinstance(obj, builtins.slice):
        ind = asarray(list(builtins.range(*obj.indices(n))), dtype=dtypes.int32)
    else:
        ind = _index_array(obj, "insert")
        if _aval(ind).dtype.kind not in "iu":
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    d = _aval(a).dtype
    vals = _to_dtype(values, d)
    vnd = _aval(vals).ndim
    if vnd < nd:
        vals = reshape(vals, (1,) * (nd - vnd) + _aval(vals).shape)
    if _aval(ind).size == 1:
        first = ravel(ind)[0]
        if _aval(ind).ndim == 0:
            vals = moveaxis(vals, 0, axis)
        ind = _creation.full((_aval(vals).shape[axis],), first, dtype=_aval(ind).dtype)
    k = broadcast_shapes(_aval(ind).shape, (_aval(vals).shape[axis],))[0]
    ind = broadcast_to(ind.astype(dtypes.int32), (k,))
    ind = _elementwise.clip(_elementwise.where(ind < 0, ind + n, ind), 0, n)
    order = argsort_lax(ind, 0, False)  # jnp.argsort(ind, stable=True) of the 1-D int32 positions
    vpos = ind.at[order].add(_creation.arange(k, dtype=dtypes.int32))
    keep_mask = _creation.ones((n + k,), dtype=dtypes.bool_).at[vpos].set(False)
    apos = _elementwise.where(keep_mask, size=n)[0]
    shape = list(_aval(a).shape)
    shape[axis] = n + k
    lead = (builtins.slice(None),) * axis
    out = _creation.zeros(tuple(shape), dtype=d)
    vshape = list(_aval(a).shape)
    vshape[axis] = k
    out = out.at[lead + (vpos,)].set(broadcast_to(vals, tuple(vshape)))
    return out.at[lead + (apos,)].set(a)


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """arr without the entries at the given (static) positions, slice or boolean mask along axis."""
    _check_arraylike("delete", arr)
    a, axis = _along(arr, axis, "delete")
    n = _aval(a).shape[axis]
    drop: set
    if isinstance(obj, builtins.slice):
        drop = set(builtins.range(*obj.indices(n)))
    elif isinstance(obj, builtins.int) and not isinstance(obj, builtins.bool):
        if not -n <= obj < n:
            raise ValueError(f"jnp.delete: index {obj} is out of bounds for axis {axis} with size {n}")
        drop = {obj % n}
    else:
        _check_arraylike("delete", a, obj)
        ind = _index_array(obj, "delete")
        kind = _aval(ind).dtype.kind
        if assume_unique_indices and kind in "iu" and isinstance(ind, Tracer):
            return _delete_traced(a, ind, axis, n)
        vals = _concrete(ind, "'obj' array argument of jnp.delete()")
        vals = vals if isinstance(vals, builtins.list) else [vals]
        if kind == "b":
            if _aval(ind).shape != (n,):
                raise ValueError(
                    "np.delete(arr, obj): for boolean indices, obj must be one-dimensional with length "
                    "matching specified axis."
                )
            drop = {i for i, m in enumerate(vals) if m}
        elif kind in "iu":
            for p in vals:
                if not -n <= p < n:
                    raise IndexError(f"index {p} is out of bounds for axis {axis} with size {n}")
            drop = {p % n for p in vals}
        else:
            raise ValueError(f"np.delete(arr, obj): got obj.dtype={_aval(ind).dtype.name}; must be integer or bool.")
    keep = [i for i in builtins.range(n) if i not in drop]
    if not keep:
        return _slice_axis(a, 0, 0, axis)
    if keep == list(builtins.range(keep[0], keep[0] + len(keep))):
        return _slice_axis(a, keep[0], keep[0] + len(keep), axis)
    return take(a, asarray(keep, dtype=dtypes.int32), axis=axis)


def _delete_traced(a, ind, axis: int, n: int):
    """delete at traced, distinct integer positions (assume_unique_indices): the output keeps n - len(ind)
    entries, so its shape is static; a mask with the positions cleared picks them (jit-safe)."""
    ind = lax.reshape(ind.astype(dtypes.int32), (_aval(ind).size,))
    wrapped = lax.select(ind < 0, ind + n, ind)
    keep = lax.full((n,), True, dtypes.bool_).at[wrapped].set(False, mode="drop")
    (pos,) = _elementwise.nonzero(keep, size=n - _aval(ind).size)
    return take(a, pos, axis=axis)


def resize(a, new_shape):
    """An array of new_shape filled by repeating the flattened a."""
    _check_arraylike("resize", a)
    a = ravel(_arr(a))
    shape = (
        (operator.index(new_shape),)
        if not isinstance(new_shape, (builtins.tuple, builtins.list))
        else tuple(operator.index(s) for s in new_shape)
    )
    if any(s < 0 for s in shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    total = math.prod(shape)
    size = _aval(a).shape[0]
    if size == 0 or total == 0:
        return _creation.zeros(shape, dtype=_aval(a).dtype)
    reps = -(-total // size)
    return reshape(tile(a, reps)[:total], shape)


def block(arrays):
    """Assemble an array from nested lists of blocks (innermost lists join along the last axis)."""

    def depth(x, path):
        if isinstance(x, builtins.tuple):
            raise ValueError(f"jax.numpy.block does not allow tuples, got {path} = {x}")
        if isinstance(x, builtins.list):
            if not x:
                raise ValueError(f"List at {path} cannot be empty")
            ds = [depth(e, f"{path}[{i}]") for i, e in enumerate(x)]
            if builtins.any(d != ds[0] for d in ds):
                raise ValueError(
                    "List depths are mismatched. First element was at depth "
                    f"{ds[0] + 1}, but there is an element at depth {ds[1:][0] + 1}"
                )
            return ds[0] + 1
        return 0

    list_depth = depth(arrays, "arrays")

    def leaves(x):
        if isinstance(x, builtins.list):
            for e in x:
                yield from leaves(e)
        else:
            yield x

    ndim = builtins.max([list_depth] + [_aval(_arr(v)).ndim for v in leaves(arrays)])

    def build(x, level):
        if not isinstance(x, builtins.list):
            v = _arr(x)
            vnd = _aval(v).ndim
            return reshape(v, (1,) * (ndim - vnd) + _aval(v).shape) if vnd < ndim else v
        parts = [build(e, level + 1) for e in x]
        return concatenate(parts, axis=-(list_depth - level))

    if list_depth == 0:
        return _arr(arrays)
    return build(arrays, 0)


def trim_zeros(filt, trim: str = "fb", axis=None):
    """filt with leading ('f') and/or trailing ('b') zeros removed (needs concrete values)."""
    _check_arraylike("trim_zeros", filt)
    a = _arr(filt)
    nd = _aval(a).ndim
    if nd == 0:
        return a
    t = trim.lower()
    if not t or builtins.any(c not in "fb" for c in t):
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    axes = (
        tuple(builtins.range(nd))
        if axis is None
        else tuple(canonical_axis(x, nd, "trim_zeros") for x in ((axis,) if isinstance(axis, builtins.int) else axis))
    )
    nz = lax.ne(a, lax.full_like(a, 0))
    bounds = []
    for ax in builtins.range(nd):
        n = _aval(a).shape[ax]
        if ax not in axes:
            bounds.append((0, n))
            continue
        others = tuple(i for i in builtins.range(nd) if i != ax)
        hit = _concrete(
            lax.reduce_or(nz, others) if others else nz, "Error arose in the `filt` argument of trim_zeros()"
        )
        idx = [i for i, h in enumerate(hit) if h]
        if not idx:
            bounds.append((0, 0))
            continue
        lo = idx[0] if "f" in t else 0
        hi = idx[-1] + 1 if "b" in t else n
        bounds.append((lo, hi))
    return lax.slice(a, [b for b, _ in bounds], [e for _, e in bounds])


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """a with its main diagonal set to val (repeated cyclically); requires inplace=False."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    _check_arraylike("fill_diagonal", a, val)
    a = _arr(a)
    shape = _aval(a).shape
    nd = len(shape)
    if nd < 2:
        raise ValueError("array must be at least 2-d")
    if nd > 2 and builtins.any(s != shape[0] for s in shape):
        raise ValueError("All dimensions of input must be of equal length")
    if nd == 2:
        step = shape[1] + 1
        end = math.prod(shape) if wrap else builtins.min(shape[1] * shape[1], math.prod(shape))
    else:
        step = 1 + builtins.sum(math.prod(shape[i + 1 :]) for i in builtins.range(nd - 1))
        end = math.prod(shape)
    positions = list(builtins.range(0, end, step))
    flat = ravel(a)
    if not positions:
        return a
    v = ravel(_to_dtype(val, _aval(a).dtype))
    m = _aval(v).shape[0]
    if m == 0:
        return a
    if m != len(positions):
        v = tile(v, -(-len(positions) // m))[: len(positions)]
    flat = flat.at[asarray(positions, dtype=dtypes.int32)].set(v)
    return reshape(flat, shape)


def unstack(x, /, *, axis: int = 0):
    """Tuple of the slices of x along axis."""
    _check_arraylike("unstack", x, keys=True)
    x = asarray(x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    x = moveaxis(x, axis, 0)
    return tuple(x[i] for i in range(x.shape[0]))


def rollaxis(a, axis: int, start: int = 0):
    """Roll `axis` backwards until it lies before position `start` (numpy semantics)."""
    a = asarray(a)
    n = a.ndim
    axis = operator.index(axis)
    start = operator.index(start)
    if not -n <= axis < n:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {n}")
    if not -n <= start <= n:
        raise ValueError(f"start={start} must satisfy {-n}<=start<={n}")
    axis %= n
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start) if axis != start else a


def _no_inplace(name: str, inplace: bool):
    if inplace:
        raise ValueError(
            f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
            f"Pass inplace=False to instead return an updated array."
        )


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False, fill_value=None):
    """jnp.take: elements of a along axis (flattened a if axis is None) at integer indices.

    mode None/'fill' fills out-of-range indices (NaN, INT_MIN, UINT_MAX or True unless fill_value),
    'clip' clamps, 'wrap' wraps around; negative indices count from the end except under 'clip'."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    _check_arraylike("take", a, indices, keys=True)
    if isinstance(a, _keys.PRNGKeyArray):
        return _keys.take(a, indices, axis, take, mode=mode, fill_value=fill_value)
    a = _arr(a)
    indices = _arr(indices)
    if _aval(indices).dtype.kind not in "iu":
        raise ValueError("indices must have an integer type")
    if axis is None:
        a = ravel(a)
        axis = 0
    nd = _aval(a).ndim
    axis = canonical_axis(axis, nd, "take", scalar_ok=True)
    n = _aval(a).shape[axis]
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
    if mode not in (None, "fill", "clip", "wrap", "promise_in_bounds", "drop"):
        raise ValueError(f"Invalid mode '{mode}' for np.take")
    ia = _aval(indices)
    if n == 0 and ia.size and mode in ("clip", "wrap"):
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axes.")
    if mode == "wrap":
        indices = _elementwise.remainder(indices, n) if n else indices
    elif mode != "clip":
        indices = _wrap_negative(indices, n)
    g_mode = {"clip": "clip", "wrap": "clip", "promise_in_bounds": "promise_in_bounds"}.get(mode, "fill")
    ind = lax.reshape(indices, ia.shape + (1,))
    y = slicing.take_axes(a, ind, (axis,), mode=g_mode, fill_value=fill_value)
    k = ia.ndim
    perm = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, k + nd - 1))
    return lax.transpose(y, perm) if axis and k else y


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """a with the flat positions ind set to v (v cycled to the length of ind); needs inplace=False."""
    _no_inplace("put", inplace)
    a = asarray(a)
    ind = ravel(asarray(ind))
    v = ravel(asarray(v)).astype(a.dtype)
    if v.shape[0] == 0 or ind.shape[0] == 0:
        return a
    v = take(v, _creation.arange(ind.shape[0]) % v.shape[0])
    if mode in ("wrap",):
        ind = ind % a.size
    elif mode in ("clip",):
        ind = _elementwise.clip(ind, 0, a.size - 1)
    elif mode not in (None, "raise", "fill"):
        raise ValueError(f"put: mode must be one of 'raise', 'clip', 'wrap', 'fill', got {mode!r}")
    return ravel(a).at[ind].set(v).reshape(a.shape)


def place(arr, mask, vals, *, inplace: bool = True):
    """arr with its masked positions filled from vals in order (cycling); needs inplace=False."""
    _no_inplace("place", inplace)
    arr = asarray(arr)
    mask = ravel(asarray(mask)).astype(bool)
    vals = ravel(asarray(vals)).astype(arr.dtype)
    if vals.shape[0] == 0:
        return arr
    idx = (_reductions.cumsum(mask.astype(dtypes.int32)) - 1) % vals.shape[0]
    return _elementwise.where(mask, take(vals, idx), ravel(arr)).reshape(arr.shape)


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """jnp.reshape with -1 inference; order='F' reverses axes around a C reshape."""
    if shape is None:
        shape = newshape
    if isinstance(a, _keys.PRNGKeyArray):
        return a.reshape(shape)
    _check_arraylike("reshape", a)
    a = a if _is_array(a) else asarray(a)
    av = _aval(a)
    shape = _shape_tuple(shape)
    if builtins.sum(1 for s in shape if s == -1) > 1:
        raise TypeError(f"reshape: can only specify one unknown axis size with a `-1` value, got {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or av.size % known:
            raise TypeError(f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {shape}")
        shape = tuple(av.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != av.size:
        raise TypeError(
            f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {shape} (size {math.prod(shape)})"
        )
    if order == "F":
        return transpose(lax.reshape(transpose(a), shape[::-1]))
    return lax.reshape(a, shape)


def ravel(a, order="C"):
    _check_arraylike("ravel", a)
    a = a if _is_array(a) else asarray(a)
    return reshape(a, (-1,) if _aval(a).size else (0,), order=order)


def transpose(a, axes=None):
    _check_arraylike("transpose", a)
    a = a if _is_array(a) else asarray(a)
    nd = _aval(a).ndim
    if axes is None:
        axes = tuple(range(nd - 1, -1, -1))
    axes = tuple(operator.index(x) for x in axes)
    for x in axes:
        if not -nd <= x < nd:
            raise ValueError(f"transpose: axis {x} is out of bounds for array of dimension {nd}")
    if len(axes) != nd or sorted(x % nd if nd else x for x in axes) != list(range(nd)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got permutation {axes} "
            f"for operand shape {_aval(a).shape}."
        )
    return lax.transpose(a, tuple(x % nd for x in axes))


def permute_dims(a, axes):
    _check_arraylike("permute_dims", a)
    return transpose(a, axes)


def matrix_transpose(x, /):
    _check_arraylike("matrix_transpose", x)
    return swapaxes(x, -1, -2)


def moveaxis(a, source, destination):
    a = a if _is_array(a) else asarray(a)
    nd = _aval(a).ndim
    src = [source] if isinstance(source, builtins.int) else list(source)
    dst = [destination] if isinstance(destination, builtins.int) else list(destination)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    src = [canonical_axis(s, nd, "moveaxis") for s in src]
    dst = [canonical_axis(d, nd, "moveaxis") for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(a, tuple(order))


def swapaxes(a, axis1, axis2):
    a = a if _is_array(a) else asarray(a)
    nd = _aval(a).ndim
    perm = list(range(nd))
    i, j = canonical_axis(axis1, nd, "swapaxes"), canonical_axis(axis2, nd, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, tuple(perm))


def expand_dims(a, axis):
    if isinstance(a, _keys.PRNGKeyArray):
        return _keys.expand_dims(a, axis, expand_dims)
    _check_arraylike("expand_dims", a)
    a = a if _is_array(a) else asarray(a)
    axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
    nd = _aval(a).ndim + len(axes)
    norm = sorted(canonical_axis(x, nd, "expand_dims") for x in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("repeated axis in expand_dims")
    return lax.expand_dims(a, norm)


def squeeze(a, axis=None):
    if isinstance(a, _keys.PRNGKeyArray):
        return a.squeeze(axis)
    _check_arraylike("squeeze", a)
    a = a if _is_array(a) else asarray(a)
    shp = _aval(a).shape
    if axis is None:
        axes = tuple(i for i, s in enumerate(shp) if s == 1)
    else:
        axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
        axes = tuple(canonical_axis(x, len(shp), "squeeze") for x in axes)
        for x in axes:
            if shp[x] != 1:
                raise ValueError(
                    f"cannot select an axis to squeeze out which has size not equal to one, "
                    f"got shape={shp} and dimensions={axes}"
                )
    return lax.squeeze(a, axes)


def atleast_1d(*arys):
    _check_arraylike("atleast_1d", *arys)
    out = [reshape(a, (1,)) if ndim(a) == 0 else asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    _check_arraylike("atleast_2d", *arys)
    out = []
    for a in arys:
        a = asarray(a)
        out.append(reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    _check_arraylike("atleast_3d", *arys)
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def concatenate(arrays, axis=0, dtype=None):
    if not isinstance(arrays, (list, tuple)) and not _is_array(arrays):
        raise TypeError("concatenate requires a sequence of arrays")
    arrays = list(arrays) if not _is_array(arrays) else [arrays[i] for i in range(len(arrays))]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if _keys.any_key(arrays):  # typed PRNG keys concatenate like arrays, as in JAX
        return _keys.concatenate(arrays, axis, concatenate)
    _check_arraylike("concatenate", *arrays)  # a list of arrays, not a nested list
    arrs = [a if _is_array(a) else asarray(a) for a in arrays]
    if axis is None:
        arrs = [ravel(a) for a in arrs]
        axis = 0
    nd = _aval(arrs[0]).ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    for a in arrs:
        if _aval(a).ndim != nd:
            raise TypeError(
                f"Cannot concatenate arrays with different numbers of dimensions: got "
                f"{', '.join(str(_aval(x).shape) for x in arrs)}."
            )
    ax = canonical_axis(axis, nd, "concatenate")
    arrs = _promote_list(arrs)
    if dtype is not None:
        arrs = [lax.convert_element_type(a, dtype) for a in arrs]
    for a in arrs:
        sa, s0 = _aval(a).shape, _aval(arrs[0]).shape
        if builtins.any(x != y for i, (x, y) in enumerate(zip(sa, s0)) if i != ax):
            raise TypeError(
                f"Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                f"being concatenated: concatenating along dimension {ax} for shapes "
                f"{', '.join(str(_aval(x).shape) for x in arrs)}. "
                f"All the input array dimensions except for the concatenation axis must match exactly, "
                f"but along dimension {[i for i, (x, y) in enumerate(zip(sa, s0)) if x != y and i != ax][0]}"
                f", the array at index 0 has size {s0} and the other array has shape {sa}"
            )
    return lax.concatenate(arrs, ax)


def concat(arrays, /, *, axis: int | None = 0):
    """jnp.concat, the array API's concatenate."""
    if not _keys.any_key(arrays) and isinstance(arrays, (list, tuple)):
        _check_arraylike("concat", *arrays)
    return concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None, dtype=None):
    arrays = list(arrays) if not _is_array(arrays) else [arrays[i] for i in range(len(arrays))]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    if not _keys.any_key(arrays):  # typed PRNG keys stack like arrays (in _stack), as in JAX
        _check_arraylike("stack", *arrays)
    return _stack(arrays, axis, dtype)


def vstack(tup, dtype=None):
    tup = _elements("vstack", tup)
    return concatenate([atleast_2d(a) for a in tup], axis=0, dtype=dtype)


row_stack = vstack


def hstack(tup, dtype=None):
    tup = _elements("hstack", tup)
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, dtype=dtype)


def dstack(tup, dtype=None):
    tup = _elements("dstack", tup)
    return concatenate([atleast_3d(a) for a in tup], axis=2, dtype=dtype)


def column_stack(tup):
    """Stack 1-D arrays (and scalars) as columns, 2-D and higher along axis 1."""
    tup = _elements("column_stack", tup)
    arrs = [reshape(a, (-1, 1)) if ndim(a) < 2 else asarray(a) for a in tup]
    return concatenate(arrs, axis=1)


def _elements(fn: str, tup) -> list:
    """The arrays of a sequence argument (vstack, hstack, ...: a list of arrays or an array), checked
    one by one as JAX checks them."""
    tup = [tup[i] for i in range(len(tup))] if _is_array(tup) else list(tup)
    _check_arraylike(fn, *tup, keys=True)
    return tup


def split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, "split")


def _split(ary, indices_or_sections, axis, fn):
    _check_arraylike(fn, ary)
    ary = ary if _is_array(ary) else asarray(ary)
    nd = _aval(ary).ndim
    ax = canonical_axis(axis, nd, fn)
    n = _aval(ary).shape[ax]
    if isinstance(indices_or_sections, (builtins.int, builtins.float)) or (
        hasattr(indices_or_sections, "__index__") and not isinstance(indices_or_sections, (list, tuple, Array))
    ):
        ios = indices_or_sections
        sections = builtins.int(ios) if isinstance(ios, builtins.float) else operator.index(ios)  # JAX truncates
        if sections == 0:  # JAX's class (numpy's is ValueError)
            raise ZeroDivisionError(f"{fn}: the number of sections must be larger than 0")
        if sections < 0:
            raise ValueError("number sections must be larger than 0.")
        if fn == "split" and n % sections:
            raise ValueError(f"array split does not result in an equal division: rest is {n % sections}")
        if fn == "split":
            idx = [i * (n // sections) for i in range(1, sections)]
        else:
            q, r = builtins.divmod(n, sections)
            sizes = [q + 1] * r + [q] * (sections - r)
            idx, acc = [], 0
            for s in sizes[:-1]:
                acc += s
                idx.append(acc)
    else:
        idx = [
            operator.index(i)
            for i in (indices_or_sections.tolist() if isinstance(indices_or_sections, Array) else indices_or_sections)
        ]
    bounds = [0] + [builtins.min(builtins.max(i if i >= 0 else i + n, 0), n) for i in idx] + [n]
    out = []
    shp = _aval(ary).shape
    for b, e in zip(bounds[:-1], bounds[1:]):
        start = [0] * nd
        lim = list(shp)
        start[ax], lim[ax] = b, builtins.max(b, e)
        out.append(lax.slice(ary, start, lim))
    return out


def array_split(ary, indices_or_sections, axis=0):
    return _split(ary, indices_or_sections, axis, "array_split")


def hsplit(ary, indices_or_sections):
    _check_arraylike("hsplit", ary, keys=True)
    nd = ary.ndim if isinstance(ary, _keys.PRNGKeyArray) else ndim(ary)
    if nd == 0:  # JAX's class for a 0-d array
        raise IndexError("hsplit: needs an array of at least 1 dimension, got a 0-d array")
    return _split(ary, indices_or_sections, 1 if nd > 1 else 0, "hsplit")


def vsplit(ary, indices_or_sections):
    return _split(ary, indices_or_sections, 0, "vsplit")


def dsplit(ary, indices_or_sections):
    _check_arraylike("dsplit", ary, keys=True)
    nd = ary.ndim if isinstance(ary, _keys.PRNGKeyArray) else ndim(ary)
    if nd < 3:  # JAX's class for too few dimensions
        raise IndexError(f"dsplit: needs an array of at least 3 dimensions, got {nd}")
    return _split(ary, indices_or_sections, 2, "dsplit")


def tile(A, reps):
    _check_arraylike("tile", A)
    A = A if _is_array(A) else asarray(A)
    reps = (reps,) if isinstance(reps, builtins.int) else tuple(reps)
    nd = builtins.max(len(reps), A.ndim)
    A = reshape(A, (1,) * (nd - A.ndim) + A.shape)
    reps = (1,) * (nd - len(reps)) + reps
    # broadcast to (r0, s0, r1, s1, ...) then merge
    shape = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, A.shape)):
        shape += [r, s]
        dims.append(2 * i + 1)
    b = lax.broadcast_in_dim(A, tuple(shape), tuple(dims))
    return reshape(b, tuple(r * s for r, s in zip(reps, A.shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    _check_arraylike("repeat", a, repeats)
    a = a if _is_array(a) else asarray(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = canonical_axis(axis, a.ndim, "repeat")
    if total_repeat_length is not None and isinstance(repeats, Tracer):
        return _repeat_to_length(a, repeats, ax, operator.index(total_repeat_length))
    if isinstance(repeats, builtins.int) or (
        isinstance(repeats, Array) and repeats.ndim == 0 and not isinstance(repeats, Tracer)
    ):
        r = builtins.int(repeats)
        shp = a.shape
        b = lax.broadcast_in_dim(
            a, shp[: ax + 1] + (r,) + shp[ax + 1 :], tuple(range(ax + 1)) + tuple(range(ax + 2, a.ndim + 1))
        )
        return reshape(b, shp[:ax] + (shp[ax] * r,) + shp[ax + 1 :])
    reps = [builtins.int(v) for v in (repeats.tolist() if hasattr(repeats, "tolist") else repeats)]
    if len(reps) != a.shape[ax]:
        raise ValueError(f"repeat: repeats length {len(reps)} does not match axis size {a.shape[ax]}")
    idx = [i for i, r in enumerate(reps) for _ in range(r)]
    return take(a, asarray(idx, dtype=dtypes.int32), axis=ax)


def _repeat_to_length(a, repeats, ax: int, length: int):
    """repeat with traced repeats and a static output length (what jit needs): output j takes the element
    whose run covers j. A run ends at each cumulative count; counting the ends at or before j (one
    scatter-add of ones, then a cumulative sum) gives its index. Past the last run the last element
    repeats; runs beyond length are cut, as JAX."""
    from pyjax.numpy._reductions import cumsum

    n = a.shape[ax]
    reps = broadcast_to(asarray(repeats).astype(dtypes.int32), (n,))
    ends = cumsum(reps)[:-1]
    starts = lax.full((length,), 0, dtypes.int32).at[ends].add(1, mode="drop")
    src = lax.min(cumsum(starts), lax.full((length,), n - 1, dtypes.int32))
    return take(a, src, axis=ax)


def flip(m, axis=None):
    _check_arraylike("flip", m)
    m = m if _is_array(m) else asarray(m)
    axes = _reductions._reduce_axes("flip", m, axis)
    return lax.rev(m, axes)


def fliplr(m):
    _check_arraylike("fliplr", m)
    return flip(m, 1)


def flipud(m):
    _check_arraylike("flipud", m)
    return flip(m, 0)


def roll(a, shift, axis=None):
    _check_arraylike("roll", a)
    a = a if _is_array(a) else asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, builtins.int) else tuple(shift)
    axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    for s, ax in zip(shifts, axes):
        ax = canonical_axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0:
            continue
        s = operator.index(s) % n
        if s:
            first = (
                lax.slice_in_dim(a, n - s, n, axis=ax) if hasattr(lax, "slice_in_dim") else _slice_axis(a, n - s, n, ax)
            )
            rest = _slice_axis(a, 0, n - s, ax)
            a = lax.concatenate([first, rest], ax)
    return a


def rot90(m, k=1, axes=(0, 1)):
    _check_arraylike("rot90", m)
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got first argument of shape "
            f"{m.shape}, which has ndim {m.ndim}"
        )
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must hold two axes, got {tuple(axes)}")
    a0, a1 = (canonical_axis(a, m.ndim, "rot90") for a in axes)
    if a0 == a1:
        raise ValueError("Axes must be different")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def _triangle(fn: str, m, k, keep):
    """m with zeros where keep(row + k, col) is false: tril keeps >=, triu keeps <=."""
    _check_arraylike(fn, m)
    m = m if _is_array(m) else asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{fn} requires an array of at least 2 dimensions")
    n, mm = m.shape[-2:]
    mask = keep(
        lax.add(lax.broadcasted_iota(dtypes.int32, (n, mm), 0), k), lax.broadcasted_iota(dtypes.int32, (n, mm), 1)
    )
    return _elementwise.where(mask, m, _creation.zeros_like(m))


def tril(m, k=0):
    return _triangle("tril", m, k, lax.ge)


def triu(m, k=0):
    return _triangle("triu", m, k, lax.le)


def diagonal(a, offset=0, axis1=0, axis2=1):
    _check_arraylike("diagonal", a)
    a = a if _is_array(a) else asarray(a)
    nd = a.ndim
    ax1, ax2 = canonical_axis(axis1, nd, "diagonal"), canonical_axis(axis2, nd, "diagonal")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    n, m = a.shape[-2:]
    if offset >= 0:
        k = builtins.max(0, builtins.min(n, m - offset))
        rows, cols = list(range(k)), [i + offset for i in range(k)]
    else:
        k = builtins.max(0, builtins.min(n + offset, m))
        rows, cols = [i - offset for i in range(k)], list(range(k))
    if k == 0:
        return _creation.zeros(a.shape[:-2] + (0,), a.dtype)
    # diagonal as a strided view: flatten the last two axes and take every (m+1)-th element
    flat = reshape(a, a.shape[:-2] + (n * m,))
    start = rows[0] * m + cols[0]
    lead = a.ndim - 2
    return lax.slice(
        flat, [0] * lead + [start], list(a.shape[:-2]) + [start + (k - 1) * (m + 1) + 1], [1] * lead + [m + 1]
    )


def diag(v, k=0):
    """1-D input: a matrix with v on diagonal k; 2-D input: its k-th diagonal."""
    _check_arraylike("diag", v)
    v = v if _is_array(v) else asarray(v)
    if v.ndim == 1:
        n = v.shape[0] + builtins.abs(k)
        r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
        c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
        padded = lax.pad(v, lax.full((), 0, v.dtype), [(0, builtins.abs(k), 0)])
        # Row i holds v[i] when k >= 0 (column i + k); column j holds v[j] when k < 0.
        vals = broadcast_to(reshape(padded, (n, 1) if k >= 0 else (1, n)), (n, n))
        return _elementwise.where(lax.eq(lax.add(r, k), c), vals, _creation.zeros((n, n), v.dtype))
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("diag input must be 1d or 2d")


def diagflat(v, k: int = 0):
    """2-D array with the flattened input on diagonal k."""
    _check_arraylike("diagflat", v)
    return diag(ravel(asarray(v)), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    _check_arraylike("trace", a)
    return _reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# Element-moving functions accept typed PRNG key arrays too, as in JAX.
ravel, transpose, moveaxis, swapaxes = map(_keys.lifted, (ravel, transpose, moveaxis, swapaxes))


_split, tile, repeat = map(_keys.lifted, (_split, tile, repeat))


flip, fliplr, flipud, roll, rot90 = map(_keys.lifted, (flip, fliplr, flipud, roll, rot90))


atleast_1d, atleast_2d, atleast_3d = map(_keys.lifted, (atleast_1d, atleast_2d, atleast_3d))


__all__ += [
    "reshape",
    "ravel",
    "transpose",
    "permute_dims",
    "matrix_transpose",
    "moveaxis",
    "swapaxes",
    "expand_dims",
    "squeeze",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "concatenate",
    "concat",
    "stack",
    "vstack",
    "row_stack",
    "hstack",
    "dstack",
    "column_stack",
    "split",
    "array_split",
    "hsplit",
    "vsplit",
    "dsplit",
    "tile",
    "repeat",
    "flip",
    "fliplr",
    "flipud",
    "roll",
    "rot90",
    "tril",
    "triu",
    "diagonal",
    "diag",
    "diagflat",
    "trace",
]
