"""Array editing: append, insert, delete, resize, block, trim_zeros, fill_diagonal, unstack,
rollaxis, put and place. Functions whose output shape depends on values (insert/delete positions,
trim_zeros) need those values concrete, as in JAX.
"""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _core as jnp
from pyjax.numpy._indexing import take
from pyjax.numpy._util import _arr, _aval, _concrete, _slice_axis, _to_dtype

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
    jnp._check_arraylike("append", arr, values)
    if axis is None:
        return jnp.concatenate([jnp.ravel(_arr(arr)), jnp.ravel(_arr(values))])
    return jnp.concatenate([_arr(arr), _arr(values)], axis=axis)


def _index_array(obj, fn: str):
    """obj (an index array-like, not a slice) as an int32 array; lists are rejected as in JAX."""
    jnp._check_arraylike(fn, obj)
    ind = _arr(obj)
    if _aval(ind).ndim > 1:
        raise ValueError(f"jnp.{fn}(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}")
    return ind


def _along(arr, axis: int | None, fn: str):
    """insert/delete's operand and axis: axis None means the flattened array."""
    a = _arr(arr)
    if axis is None:
        return jnp.ravel(a), 0
    return a, canonical_axis(axis, _aval(a).ndim, fn)


def insert(arr, obj, values, axis: int | None = None):
    """arr with values inserted before the given positions along axis (positions may be traced;
    out-of-range positions are clipped, as in JAX)."""
    jnp._check_arraylike("insert", arr, values)
    a, axis = _along(arr, axis, "insert")
    nd, n = _aval(a).ndim, _aval(a).shape[axis]
    if isinstance(obj, builtins.slice):
        ind = jnp.asarray(list(builtins.range(*obj.indices(n))), dtype=dtypes.int32)
    else:
        ind = _index_array(obj, "insert")
        if _aval(ind).dtype.kind not in "iu":
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    d = _aval(a).dtype
    vals = _to_dtype(values, d)
    vnd = _aval(vals).ndim
    if vnd < nd:
        vals = jnp.reshape(vals, (1,) * (nd - vnd) + _aval(vals).shape)
    if _aval(ind).size == 1:
        first = jnp.ravel(ind)[0]
        if _aval(ind).ndim == 0:
            vals = jnp.moveaxis(vals, 0, axis)
        ind = jnp.full((_aval(vals).shape[axis],), first, dtype=_aval(ind).dtype)
    k = jnp.broadcast_shapes(_aval(ind).shape, (_aval(vals).shape[axis],))[0]
    ind = jnp.broadcast_to(ind.astype(dtypes.int32), (k,))
    ind = jnp.clip(jnp.where(ind < 0, ind + n, ind), 0, n)
    from pyjax.numpy._sorting import argsort

    order = argsort(ind, stable=True)
    vpos = ind.at[order].add(jnp.arange(k, dtype=dtypes.int32))
    keep_mask = jnp.ones((n + k,), dtype=dtypes.bool_).at[vpos].set(False)
    apos = jnp.where(keep_mask, size=n)[0]
    shape = list(_aval(a).shape)
    shape[axis] = n + k
    lead = (builtins.slice(None),) * axis
    out = jnp.zeros(tuple(shape), dtype=d)
    vshape = list(_aval(a).shape)
    vshape[axis] = k
    out = out.at[lead + (vpos,)].set(jnp.broadcast_to(vals, tuple(vshape)))
    return out.at[lead + (apos,)].set(a)


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """arr without the entries at the given (static) positions, slice or boolean mask along axis."""
    jnp._check_arraylike("delete", arr)
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
        ind = _index_array(obj, "delete")
        kind = _aval(ind).dtype.kind
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
    from pyjax.numpy._indexing import take

    return take(a, jnp.asarray(keep, dtype=dtypes.int32), axis=axis)


def resize(a, new_shape):
    """An array of new_shape filled by repeating the flattened a."""
    jnp._check_arraylike("resize", a)
    a = jnp.ravel(_arr(a))
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
        return jnp.zeros(shape, dtype=_aval(a).dtype)
    reps = -(-total // size)
    return jnp.reshape(jnp.tile(a, reps)[:total], shape)


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
            return jnp.reshape(v, (1,) * (ndim - vnd) + _aval(v).shape) if vnd < ndim else v
        parts = [build(e, level + 1) for e in x]
        return jnp.concatenate(parts, axis=-(list_depth - level))

    if list_depth == 0:
        return _arr(arrays)
    return build(arrays, 0)


def trim_zeros(filt, trim: str = "fb", axis=None):
    """filt with leading ('f') and/or trailing ('b') zeros removed (needs concrete values)."""
    jnp._check_arraylike("trim_zeros", filt)
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
    jnp._check_arraylike("fill_diagonal", a, val)
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
    flat = jnp.ravel(a)
    if not positions:
        return a
    v = jnp.ravel(_to_dtype(val, _aval(a).dtype))
    m = _aval(v).shape[0]
    if m == 0:
        return a
    if m != len(positions):
        v = jnp.tile(v, -(-len(positions) // m))[: len(positions)]
    flat = flat.at[jnp.asarray(positions, dtype=dtypes.int32)].set(v)
    return jnp.reshape(flat, shape)


def unstack(x, /, *, axis: int = 0):
    """Tuple of the slices of x along axis."""
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was passed.")
    x = jnp.moveaxis(x, axis, 0)
    return tuple(x[i] for i in range(x.shape[0]))


def rollaxis(a, axis: int, start: int = 0):
    """Roll `axis` backwards until it lies before position `start` (numpy semantics)."""
    a = jnp.asarray(a)
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
    return jnp.moveaxis(a, axis, start) if axis != start else a


def _no_inplace(name: str, inplace: bool):
    if inplace:
        raise ValueError(
            f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
            f"Pass inplace=False to instead return an updated array."
        )


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """a with the flat positions ind set to v (v cycled to the length of ind); needs inplace=False."""
    _no_inplace("put", inplace)
    a = jnp.asarray(a)
    ind = jnp.ravel(jnp.asarray(ind))
    v = jnp.ravel(jnp.asarray(v)).astype(a.dtype)
    if v.shape[0] == 0 or ind.shape[0] == 0:
        return a
    v = take(v, jnp.arange(ind.shape[0]) % v.shape[0])
    if mode in ("wrap",):
        ind = ind % a.size
    elif mode in ("clip",):
        ind = jnp.clip(ind, 0, a.size - 1)
    elif mode not in (None, "raise", "fill"):
        raise ValueError(f"put: mode must be one of 'raise', 'clip', 'wrap', 'fill', got {mode!r}")
    return jnp.ravel(a).at[ind].set(v).reshape(a.shape)


def place(arr, mask, vals, *, inplace: bool = True):
    """arr with its masked positions filled from vals in order (cycling); needs inplace=False."""
    _no_inplace("place", inplace)
    arr = jnp.asarray(arr)
    mask = jnp.ravel(jnp.asarray(mask)).astype(bool)
    vals = jnp.ravel(jnp.asarray(vals)).astype(arr.dtype)
    if vals.shape[0] == 0:
        return arr
    idx = (jnp.cumsum(mask.astype(dtypes.int32)) - 1) % vals.shape[0]
    return jnp.where(mask, take(vals, idx), jnp.ravel(arr)).reshape(arr.shape)
