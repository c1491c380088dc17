"""Set operations: unique (and the array-API unique_* family), isin, union1d, intersect1d, setdiff1d
and setxor1d.

All built on the stable multi-operand lax.sort; results whose size depends on values need concrete
inputs unless `size` is given, as in JAX.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

from pyjax.core import core, dtypes
from pyjax.core.errors import ConcretizationTypeError
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.lax.sorting import sort as lax_sort
from pyjax.numpy import _creation, _elementwise, _manipulation, _reductions
from pyjax.numpy._indexing import nonzero, take
from pyjax.numpy._promotion import _check_arraylike, asarray, broadcast_to
from pyjax.numpy._sorting import searchsorted, sort
from pyjax.numpy._util import _arr, _aval, _checked_arr, _i32, _result

__all__ = [
    "unique",
    "unique_values",
    "unique_counts",
    "unique_inverse",
    "unique_all",
    "isin",
    "union1d",
    "intersect1d",
    "setdiff1d",
    "setxor1d",
]


# --- unique ---------------------------------------------------------------------------------------


class _UniqueAllResult(NamedTuple):
    values: object
    indices: object
    inverse_indices: object
    counts: object


class _UniqueCountsResult(NamedTuple):
    values: object
    counts: object


class _UniqueInverseResult(NamedTuple):
    values: object
    inverse_indices: object


def _concrete_count(mask, fn: str) -> int:
    total = lax.reduce_sum(lax.convert_element_type(mask, _i32), (0,))
    if isinstance(total, core.Tracer):
        raise ConcretizationTypeError(
            total,
            f"The error arose for the first argument of jnp.{fn}(). To make jnp.{fn}() compatible with JIT "
            f"and other transforms, you can specify a concrete value for the size argument, which will determine "
            f"the output size.",
        )
    return int(total)


def unique(
    ar,
    return_index: bool = False,
    return_inverse: bool = False,
    return_counts: bool = False,
    axis: int | None = None,
    *,
    equal_nan: bool = True,
    size: int | None = None,
    fill_value=None,
    sorted: bool = True,
):
    """Sorted unique elements (or slices along `axis`); `size` makes it work under jit."""
    ar = _checked_arr("unique", ar)
    shape = _aval(ar).shape
    if axis is None:
        cols = [_manipulation.ravel(ar)]
        rest = ()
    else:
        axis = canonical_axis(axis, len(shape), "unique", scalar_ok=True)
        moved = _manipulation.moveaxis(ar, axis, 0)
        rest = _aval(moved).shape[1:]
        flat = _manipulation.reshape(moved, (shape[axis], -1))
        cols = [flat[:, j] for j in range(_aval(flat).shape[1])]
    n = shape[axis] if axis is not None else _aval(cols[0]).shape[0]
    if size is not None:
        size = operator.index(size)
    outs = _unique_core(cols, n, rest, equal_nan, size, fill_value, return_index, return_inverse, return_counts)
    values, index, inverse, counts = outs
    if axis is not None:
        values = _manipulation.moveaxis(values, 0, axis)
    elif return_inverse:
        inverse = _manipulation.reshape(inverse, shape)
    res = [values]
    if return_index:
        res.append(index)
    if return_inverse:
        res.append(inverse)
    if return_counts:
        res.append(counts)
    return res[0] if len(res) == 1 else tuple(res)


def _unique_core(cols, n, rest, equal_nan, size, fill_value, want_index, want_inverse, want_counts):
    if not cols:
        raise ValueError("unique: zero-size slices along the unique axis are not supported")
    dt = _aval(cols[0]).dtype
    iota = lax.iota(_i32, n)
    if n == 0:
        k = size or 0
        vals = _creation.zeros((k,) + rest, dt)
        z = _creation.zeros((k,), _i32)
        return vals, z, _creation.zeros((0,), _i32), z
    *scols, perm = lax_sort(tuple(cols) + (iota,), dimension=0, num_keys=len(cols))
    # mask[i]: sorted element i starts a new group.
    new = None
    for c in scols:
        d = lax.ne(c[1:], c[:-1])
        if equal_nan and dt.kind == "f":
            d = lax.bitwise_and(d, lax.bitwise_not(lax.bitwise_and(lax.ne(c[1:], c[1:]), lax.ne(c[:-1], c[:-1]))))
        new = d if new is None else lax.bitwise_or(new, d)
    mask = _manipulation.concatenate([_creation.ones((1,), dtypes.bool_), new])
    count = _concrete_count(mask, "unique") if size is None else None
    k = count if size is None else size
    # Compaction: a stable sort on the key 0 (group start) / 1 (other) brings starts to the front.
    key = lax.convert_element_type(lax.bitwise_not(mask), _i32)
    starts = lax.select(mask, iota, lax.full_like(iota, n))
    comp = lax_sort((key, *scols, perm, starts), dimension=0, num_keys=1)
    c_cols, c_perm, c_starts = comp[1 : 1 + len(scols)], comp[-2], comp[-1]
    valid = None
    c_next = _manipulation.concatenate([c_starts[1:], _creation.full((1,), n, _i32)])  # start of the following group
    if k > n:
        pad = k - n
        c_cols = [_manipulation.concatenate([c, _creation.zeros((pad,), dt)]) for c in c_cols]
        c_perm = _manipulation.concatenate([c_perm, _creation.zeros((pad,), _i32)])
        c_starts = _manipulation.concatenate([c_starts, _creation.full((pad,), n, _i32)])
        c_next = _manipulation.concatenate([c_next, _creation.full((pad,), n, _i32)])
    else:
        c_cols = [c[:k] for c in c_cols]
        c_perm, c_starts, c_next = c_perm[:k], c_starts[:k], c_next[:k]
    if size is not None:
        n_groups = lax.reduce_sum(lax.convert_element_type(mask, _i32), (0,))
        valid = lax.lt(lax.iota(_i32, k), lax.broadcast_in_dim(n_groups, (k,), ()))
    values = _manipulation.stack(c_cols, axis=-1) if rest or len(c_cols) > 1 else c_cols[0]
    if rest:
        values = _manipulation.reshape(values, (k,) + rest)
    index = c_perm
    if valid is not None:
        fv = values[:1] if fill_value is None else asarray(fill_value, dtype=dt)
        vmask = lax.broadcast_in_dim(valid, _aval(values).shape, (0,))
        values = _elementwise.where(vmask, values, broadcast_to(fv, _aval(values).shape))
        index = _elementwise.where(valid, index, index[:1])  # JAX pads indices with the first one
    counts = None
    if want_counts:
        counts = lax.sub(c_next, c_starts)
        if valid is not None:
            counts = _elementwise.where(valid, counts, 0)
    inverse = None
    if want_inverse:
        grp = lax.sub(lax.cumsum(lax.convert_element_type(mask, _i32), 0), lax.full((n,), 1, _i32))
        inverse = lax_sort((perm, grp), dimension=0, num_keys=1)[1]
    return values, index, inverse, counts


def unique_values(x):
    """Sorted unique values of x (array API)."""
    x = _checked_arr("unique_values", x)
    return unique(x)


def unique_counts(x):
    """(values, counts) of x's unique elements (array API)."""
    x = _checked_arr("unique_counts", x)
    v, c = unique(x, return_counts=True)
    return _UniqueCountsResult(v, c)


def unique_inverse(x):
    """(values, inverse_indices) of x's unique elements (array API)."""
    x = _checked_arr("unique_inverse", x)
    v, i = unique(x, return_inverse=True)
    return _UniqueInverseResult(v, i)


def unique_all(x):
    """(values, indices, inverse_indices, counts) of x's unique elements (array API)."""
    x = _checked_arr("unique_all", x)
    v, i, inv, c = unique(x, return_index=True, return_inverse=True, return_counts=True)
    return _UniqueAllResult(v, i, inv, c)


# --- membership, counting, histograms ---------------------------------------------------------------


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *, method="auto"):
    """Elementwise: is each element in test_elements (compared by value, after promotion)."""
    _check_arraylike("isin", element, test_elements)
    e, t = _result("isin", _arr(element), _arr(test_elements))
    ea = _aval(e)
    tf = _manipulation.ravel(t)
    m = _aval(tf).shape[0]
    if m == 0:
        hit = _creation.zeros(ea.shape, dtype=dtypes.bool_)
    else:
        eb = lax.broadcast_in_dim(e, ea.shape + (m,), tuple(range(ea.ndim)))
        tb = lax.broadcast_in_dim(tf, ea.shape + (m,), (ea.ndim,))
        hit = lax.reduce_or(lax.eq(eb, tb), (ea.ndim,))
    return lax.bitwise_not(hit) if invert else hit


# --- set operations -----------------------------------------------------------------------------


def _pad_to(x, size, fill_value):
    """x (1-D) cut or padded to `size`, padding with fill_value (default: x's smallest value)."""
    if size is None:
        return x
    n = x.shape[0]
    if n >= size:
        return x[:size]
    if fill_value is None:
        fill_value = _reductions.min(x) if n else 0
    return _manipulation.concatenate([x, _creation.full((size - n,), fill_value, x.dtype)])


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values in either array."""
    _check_arraylike("union1d", ar1, ar2)
    a = _manipulation.concatenate([_manipulation.ravel(asarray(ar1)), _manipulation.ravel(asarray(ar2))])
    return unique(a, size=size, fill_value=fill_value)


def _kept_in_order(values, keep, size: int, fill_value):
    """The values where keep holds, in order, as `size` entries padded with fill_value (None: the first
    kept value, or 0 when none is): a static shape, so it works under jit."""
    (idx,) = nonzero(keep, size=size, fill_value=0)
    picked = take(values, idx)
    count = _reductions.sum(keep)
    if fill_value is None:
        fill_value = _elementwise.where(count > 0, picked[0], _creation.zeros((), values.dtype))
    return _elementwise.where(
        _creation.arange(size) < count, picked, lax.convert_element_type(fill_value, values.dtype)
    )


def _first_of_runs(s):
    """True at the first of each run of equal values of the sorted 1-D s."""
    if s.shape[0] == 0:
        return _creation.ones((0,), dtypes.bool_)
    return _manipulation.concatenate([_creation.ones((1,), dtypes.bool_), s[1:] != s[:-1]])


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *, size=None, fill_value=None):
    """Sorted unique values present in both arrays (optionally with their first indices)."""
    _check_arraylike("intersect1d", ar1, ar2)
    a, b = _manipulation.ravel(asarray(ar1)), _manipulation.ravel(asarray(ar2))
    if size is not None and not return_indices:  # jit-safe: a mask over sorted a
        s = sort(a)
        keep = isin(s, b) if assume_unique else _first_of_runs(s) & isin(s, b)
        return _kept_in_order(s, keep, operator.index(size), fill_value)
    if return_indices:
        ua, ia = unique(a, return_index=True)
        ub, ib = unique(b, return_index=True)
        both = isin(ua, ub)
        common = ua[both]
        ia = ia[both]
        ib = take(ib, searchsorted(ub, common))
        return _pad_to(common, size, fill_value), _pad_to(ia, size, 0), _pad_to(ib, size, 0)
    ua = a if assume_unique else unique(a)
    common = ua[isin(ua, b)]
    return _pad_to(sort(common), size, fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """Sorted unique values of ar1 that are not in ar2."""
    _check_arraylike("setdiff1d", ar1, ar2)
    a, b = _manipulation.ravel(asarray(ar1)), _manipulation.ravel(asarray(ar2))
    if size is not None:  # jit-safe: a mask over (sorted) a; JAX pads with 0 by default
        s = a if assume_unique else sort(a)
        keep = ~isin(s, b) if assume_unique else _first_of_runs(s) & ~isin(s, b)
        return _kept_in_order(s, keep, operator.index(size), 0 if fill_value is None else fill_value)
    ua = a if assume_unique else unique(a)
    return ua[~isin(ua, b)]


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """Sorted unique values in exactly one of the arrays."""
    _check_arraylike("setxor1d", ar1, ar2)
    a, b = _manipulation.ravel(asarray(ar1)), _manipulation.ravel(asarray(ar2))
    if not assume_unique:
        a, b = unique(a), unique(b)
    only = _manipulation.concatenate([a[~isin(a, b)], b[~isin(b, a)]])
    return _pad_to(sort(only), size, fill_value)
