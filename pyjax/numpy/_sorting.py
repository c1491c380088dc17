"""jax.numpy sorting, searching and order statistics: sort, argsort, lexsort, searchsorted,
digitize, interp, partition, argpartition, median, quantile, percentile and their nan-variants.

Everything is composed from the stable multi-operand `lax.sort` plus fused elementwise and
reduction ops; nothing needs gather or scatter (values at computed positions are picked with
fused one-hot reductions).
"""

from __future__ import annotations

import builtins

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.lax.sorting import argsort_lax
from pyjax.lax.sorting import sort as lax_sort

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None
from pyjax.numpy import _creation, _elementwise, _manipulation, _reductions
from pyjax.numpy._manipulation import take
from pyjax.numpy._promotion import (
    _aval,
    _check_arraylike,
    _is_array,
    _promote,
    _weak_result,
    asarray,
    ndim,
    result_type,
)
from pyjax.numpy._util import _checked_arr as _arr
from pyjax.numpy._util import _i32

__all__ = [
    "sort",
    "argsort",
    "lexsort",
    "sort_complex",
    "partition",
    "argpartition",
    "searchsorted",
    "digitize",
    "quantile",
    "nanquantile",
    "percentile",
    "nanpercentile",
    "median",
    "nanmedian",
]


def _promote_dtypes(*args):
    """Promote arrays to their common dtype (weak-type aware) without broadcasting shapes."""
    d, weak = _weak_result(*args)
    return [lax._convert(a, d, weak) if _aval(a).dtype is not d else a for a in args]


def _last(x) -> int:
    return _aval(x).ndim - 1


# --- sort, argsort, lexsort -----------------------------------------------------------------------


def _sort_operand(fn: str, a, axis: int | None, order):
    """sort/argsort's checked operand and axis (None: the flattened array; a scalar has no axis)."""
    if order is not None:
        raise ValueError(f"The 'order' argument to {fn} is not supported.")
    a = _arr(fn, a)
    if axis is None:
        a, axis = _manipulation.ravel(a), 0
    if _aval(a).ndim == 0:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension 0")
    return a, canonical_axis(axis, _aval(a).ndim, fn, scalar_ok=True)


def sort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True, descending: bool = False):
    """Sorted copy of `a` along `axis` (None: flattened); NaNs last (first when descending)."""
    a, axis = _sort_operand("sort", a, axis, order)
    out = lax_sort(a, dimension=axis)
    return lax.rev(out, (axis,)) if descending else out


def argsort(a, axis: int | None = -1, *, kind=None, order=None, stable: bool = True, descending: bool = False):
    """Indices (int32) that sort `a` along `axis`; stable, and descending keeps ties in index order."""
    a, axis = _sort_operand("argsort", a, axis, order)
    return argsort_lax(a, axis, bool(descending))


def lexsort(keys, axis: int = -1):
    """Indirect stable sort by several keys; the last key is the primary one (numpy's convention)."""
    if _is_array(keys):
        keys = [keys[i] for i in range(_aval(keys).shape[0])] if _aval(keys).ndim else []
    keys = [_arr("lexsort", k) for k in keys]
    if not keys:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    shape = _aval(keys[0]).shape
    if builtins.any(_aval(k).shape != shape for k in keys):
        raise ValueError("all keys need to be the same shape")
    if not shape:
        return asarray(0, dtype=_i32)
    axis = canonical_axis(axis, len(shape), "lexsort", scalar_ok=True)
    idx = lax.broadcasted_iota(_i32, shape, axis)
    out = lax_sort(tuple(reversed(keys)) + (idx,), dimension=axis, num_keys=len(keys))
    return out[-1]


def sort_complex(a):
    """Sorted copy along the last axis as a complex array (real part first, then imaginary)."""
    a = _arr("sort_complex", a)
    out = sort(a)
    d = _aval(out).dtype
    return (
        out
        if d.kind == "c"
        else lax.convert_element_type(out, dtypes.complex_dtype(d if d.kind == "f" else dtypes.default_float()))
    )


# --- partition -------------------------------------------------------------------------------------


def _partition_operand(fn: str, a, kth: int, axis: int):
    """partition/argpartition's checked axis and kth, and `a` with that axis moved last."""
    a = _arr(fn, a)
    axis = canonical_axis(axis, _aval(a).ndim, fn, scalar_ok=True)
    kth = canonical_axis(kth, _aval(a).shape[axis], fn, scalar_ok=True)
    return axis, kth, _manipulation.swapaxes(a, axis, -1)


def partition(a, kth: int, axis: int = -1):
    """The kth smallest at position kth, smaller ones (ascending) before it, larger ones after."""
    axis, kth, x = _partition_operand("partition", a, kth, axis)
    s = lax_sort(x, dimension=_last(x))
    bottom, top = s[..., : kth + 1], s[..., kth + 1 :]
    out = _manipulation.concatenate([bottom, lax.rev(top, (_last(top),))], axis=-1)
    return _manipulation.swapaxes(out, axis, -1)


def argpartition(a, kth: int, axis: int = -1):
    """Indices that partition `a`: the kth+1 smallest (in value order), then the rest in index order."""
    axis, kth, x = _partition_operand("argpartition", a, kth, axis)
    last = _last(x)
    perm = argsort_lax(x, last)
    iota = lax.broadcasted_iota(_i32, _aval(x).shape, last)
    rank = lax_sort((perm, iota), dimension=last, num_keys=1)[1]  # inverse permutation
    in_bottom = lax.convert_element_type(lax.le(rank, lax.full_like(rank, kth)), _i32)
    rest = lax_sort((in_bottom, iota), dimension=last, num_keys=1)[1]
    out = _manipulation.concatenate([perm[..., : kth + 1], rest[..., : _aval(x).shape[last] - kth - 1]], axis=-1)
    return _manipulation.swapaxes(out, axis, -1)


# --- searching ------------------------------------------------------------------------------------


def _total_lt(x, y):
    """x < y in the sort order: NaN is largest and equal to itself, -0.0 == 0.0."""
    if _aval(x).dtype.kind != "f":
        return lax.lt(x, y)
    return lax.bitwise_or(lax.lt(x, y), lax.bitwise_and(lax.ne(y, y), lax.eq(x, x)))


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Insertion indices (int32) of `v` into the sorted 1-D array `a`, so that order is kept."""
    if side not in ("left", "right"):
        raise ValueError(f"invalid argument side={side!r}, expected 'left' or 'right'")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise ValueError(
            f"invalid argument method={method!r}, expected 'scan', 'scan_unrolled', 'sort' or 'compare_all'"
        )
    _check_arraylike("searchsorted", a, v, *([] if sorter is None else [sorter]))
    a, v = _arr("searchsorted", a), _arr("searchsorted", v)
    if _aval(a).ndim != 1:
        raise ValueError("a should be 1-dimensional")
    if sorter is not None:
        a = take(a, sorter)
    a, v = _promote_dtypes(a, v)
    n = _aval(a).shape[0]
    vshape = _aval(v).shape
    m = builtins.max(1, _aval(v).size)
    if n == 0 or _aval(v).size == 0:
        return _creation.zeros(vshape, _i32)
    if method == "sort" or (method != "compare_all" and n * m > (1 << 22)):
        return _manipulation.reshape(_searchsorted_by_sort(a, _manipulation.ravel(v), side), vshape)
    ab = lax.broadcast_in_dim(a, vshape + (n,), (len(vshape),))
    vb = lax.broadcast_in_dim(v, vshape + (n,), tuple(range(len(vshape))))
    before = _total_lt(ab, vb) if side == "left" else lax.bitwise_not(_total_lt(vb, ab))
    return lax.reduce_sum(lax.convert_element_type(before, _i32), (len(vshape),))


def _searchsorted_by_sort(a, v, side):
    n, m = _aval(a).shape[0], _aval(v).shape[0]
    keys = _manipulation.concatenate([a, v])
    a_tag, v_tag = (1, 0) if side == "left" else (0, 1)
    tag = _manipulation.concatenate([_creation.full((n,), a_tag, _i32), _creation.full((m,), v_tag, _i32)])
    pos = lax.iota(_i32, n + m)
    _, stag, spos = lax_sort((keys, tag, pos), dimension=0, num_keys=2)
    is_a = lax.convert_element_type(lax.eq(stag, lax.full_like(stag, a_tag)), _i32)
    before = lax.sub(lax.cumsum(is_a, 0), is_a)
    back = lax_sort((spos, before), dimension=0, num_keys=1)[1]
    return back[n:]


def digitize(x, bins, right: bool = False, *, method: str | None = None):
    """Index of the bin of each x (numpy's convention, for increasing or decreasing bins)."""
    _check_arraylike("digitize", x, bins)
    x, bins = _arr("digitize", x), _arr("digitize", bins)
    if _aval(bins).ndim != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    nb = _aval(bins).shape[0]
    if nb == 0:
        return _creation.zeros(_aval(x).shape, _i32)
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    inc = searchsorted(bins, x, side=side, **kw)
    dec = lax.sub(lax.full_like(inc, nb), searchsorted(lax.rev(bins, (0,)), x, side=side, **kw))
    return _elementwise.where(bins[-1] >= bins[0], inc, dec)


# --- order statistics -----------------------------------------------------------------------------


_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _pick(a, index):
    """a[..., index] along the last axis for index of shape Q + a.shape[:-1] (a fused one-hot sum)."""
    aa, ia = _aval(a), _aval(index)
    n = aa.shape[-1]
    full = ia.shape + (n,)
    ab = lax.broadcast_in_dim(a, full, tuple(range(ia.ndim - aa.ndim + 1, len(full))))
    ib = lax.broadcast_in_dim(index, full, tuple(range(ia.ndim)))
    hit = lax.eq(ib, lax.broadcasted_iota(_i32, full, len(full) - 1))
    return lax.reduce_sum(lax.select(hit, ab, lax.full_like(ab, 0)), (len(full) - 1,))


def _quantile(fn, a, q, axis, method, keepdims, squash_nans, weights=None):
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'")
    if weights is not None and method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights.")
    _check_arraylike(fn, a, q)
    a = _arr(fn, a)
    q = _arr(fn, q)
    (a,) = _promote(fn, a, to_float=True)
    dt = _aval(a).dtype
    if dt.kind == "c":
        raise ValueError("quantile does not support complex input, as the operation is poorly defined.")
    q = lax.convert_element_type(q, dt) if _aval(q).dtype is not dt else q
    if _aval(q).ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {_aval(q).shape}")
    shape = _aval(a).shape
    nd = len(shape)
    axes = _reductions._reduce_axes(fn, a, axis)
    if weights is not None:
        weights = _arr(fn, weights)
        weights = lax.convert_element_type(weights, dt) if _aval(weights).dtype is not dt else weights
        if _aval(weights).shape != shape:
            if axis is None:
                raise ValueError("Weights shape must match 'a' shape when axis is None.")
            if _aval(weights).shape != tuple(shape[i] for i in axes):
                raise ValueError(
                    f"Weights shape {_aval(weights).shape} must match reduction axes {tuple(shape[i] for i in axes)}"
                )
            weights = lax.broadcast_in_dim(weights, shape, axes)
    kept = [i for i in range(nd) if i not in axes]
    perm = kept + list(axes)
    red = 1
    for i in axes:
        red *= shape[i]
    x = _manipulation.reshape(_manipulation.transpose(a, perm), tuple(shape[i] for i in kept) + (red,))
    w = None if weights is None else _manipulation.reshape(_manipulation.transpose(weights, perm), _aval(x).shape)
    out_kept = tuple(1 if i in axes else shape[i] for i in range(nd)) if keepdims else tuple(shape[i] for i in kept)
    last = len(kept)
    nanmask = lax.ne(x, x)
    if squash_nans:
        x = lax.select(nanmask, lax.full_like(x, float("nan")), x)
    if w is not None:
        x, w = lax_sort((x, w), dimension=last, num_keys=1)
    else:
        x = lax_sort(x, dimension=last)
    qa = _aval(q)
    qb = lax.broadcast_in_dim(q, qa.shape + _aval(x).shape[:-1], tuple(range(qa.ndim)))
    if squash_nans:
        cnt = lax.reduce_sum(lax.convert_element_type(lax.bitwise_not(nanmask), dt), (last,))
        cnt = lax.broadcast_in_dim(cnt, _aval(qb).shape, tuple(range(qa.ndim, _aval(qb).ndim)))
    else:
        cnt = lax.full_like(qb, red)
    if method == "inverted_cdf":
        ww = lax.full_like(x, 1) if w is None else w
        bad = lax.bitwise_or(lax.lt(ww, lax.full_like(ww, 0)), lax.ne(ww, ww))
        nan_x = lax.ne(x, x)
        clean = lax.select(lax.bitwise_or(bad, nan_x), lax.full_like(ww, 0), ww)
        cw = lax.cumsum(clean, last)
        total = cw[..., -1]
        target = lax.mul(qb, lax.broadcast_in_dim(total, _aval(qb).shape, tuple(range(qa.ndim, _aval(qb).ndim))))
        full = _aval(qb).shape + (red,)
        less = lax.lt(
            lax.broadcast_in_dim(cw, full, tuple(range(qa.ndim, len(full)))),
            lax.broadcast_in_dim(target, full, tuple(range(len(full) - 1))),
        )
        idx = lax.reduce_sum(lax.convert_element_type(less, _i32), (len(full) - 1,))
        hi_idx = lax.sub(lax.convert_element_type(cnt, _i32), lax.full_like(idx, 1))
        idx = lax.max(lax.full_like(idx, 0), lax.min(idx, hi_idx))
        result = _pick(x, idx)
        force = lax.eq(cnt, lax.full_like(cnt, 0))
        any_bad = lax.reduce_or(bad, (last,))
        force = lax.bitwise_or(
            force, lax.broadcast_in_dim(any_bad, _aval(qb).shape, tuple(range(qa.ndim, _aval(qb).ndim)))
        )
        if not squash_nans:
            any_nan = lax.reduce_or(nan_x, (last,))
            force = lax.bitwise_or(
                force, lax.broadcast_in_dim(any_nan, _aval(qb).shape, tuple(range(qa.ndim, _aval(qb).ndim)))
            )
        result = lax.select(force, lax.full_like(result, float("nan")), result)
    else:
        pos = lax.mul(qb, lax.sub(cnt, lax.full_like(cnt, 1)))
        low, high = lax.floor(pos), lax.ceil(pos)
        hw = lax.sub(pos, low)
        lw = lax.sub(lax.full_like(hw, 1), hw)
        top = lax.max(lax.sub(cnt, lax.full_like(cnt, 1)), lax.full_like(cnt, 0))
        low = lax.convert_element_type(lax.max(lax.full_like(low, 0), lax.min(low, top)), _i32)
        high = lax.convert_element_type(lax.max(lax.full_like(high, 0), lax.min(high, top)), _i32)
        lo_v, hi_v = _pick(x, low), _pick(x, high)
        if method == "linear":
            result = lax.add(lax.mul(lo_v, lw), lax.mul(hi_v, hw))
        elif method == "lower":
            result = lo_v
        elif method == "higher":
            result = hi_v
        elif method == "nearest":
            result = lax.select(lax.le(hw, lax.full_like(hw, 0.5)), lo_v, hi_v)
        else:
            result = lax.mul(lax.add(lo_v, hi_v), lax.full_like(lo_v, 0.5))
        if not squash_nans:
            any_nan = lax.reduce_or(nanmask, (last,))
            any_nan = lax.broadcast_in_dim(any_nan, _aval(result).shape, tuple(range(qa.ndim, _aval(result).ndim)))
            result = lax.select(any_nan, lax.full_like(result, float("nan")), result)
    return _manipulation.reshape(result, qa.shape + out_kept)


def _quantile_function(name: str, squash_nans: bool, scale: int, doc: str):
    """One public quantile function with numpy's signature: q is read on a 0..`scale` scale
    (1 for quantile, 100 for percentile), NaNs skipped when `squash_nans`."""

    def quantile(
        a,
        q,
        axis=None,
        out=None,
        overwrite_input: bool = False,
        method: str = "linear",
        keepdims: bool = False,
        *,
        weights=None,
    ):
        if out is not None:
            raise ValueError(f"jax.numpy.{name} does not support the 'out' argument")
        _check_arraylike(name, a, q)
        if scale != 1:
            (q,) = _promote(name, _arr(name, q), to_float=True)
            q = lax.div(q, lax.full_like(q, scale))
        return _quantile(name, a, q, axis, method, keepdims, squash_nans, weights)

    quantile.__name__ = quantile.__qualname__ = name
    quantile.__doc__ = doc
    return quantile


quantile = _quantile_function(
    "quantile", False, 1, "q-th quantiles (q in [0, 1], scalar or 1-D) of `a` over `axis`; NaN if a slice has a NaN."
)
nanquantile = _quantile_function("nanquantile", True, 1, "quantile ignoring NaNs.")
percentile = _quantile_function("percentile", False, 100, "q-th percentiles (q in [0, 100]) of `a` over `axis`.")
nanpercentile = _quantile_function("nanpercentile", True, 100, "percentile ignoring NaNs.")


def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """Median over `axis` (midpoint of the two middle values)."""
    if out is not None:
        raise ValueError("jax.numpy.median does not support the 'out' argument")
    return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """median ignoring NaNs."""
    if out is not None:
        raise ValueError("jax.numpy.nanmedian does not support the 'out' argument")
    return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation of (xp, fp) at x (numpy.interp)."""
    from pyjax.numpy._sorting import argsort

    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if ndim(xp) != 1 or ndim(fp) != 1 or xp.shape[0] != fp.shape[0]:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    d = result_type(x, xp, fp)
    d = d if d.kind in "fc" else dtypes.default_float()
    x, xp, fp = (lax.convert_element_type(a, d) for a in (x, xp, fp))
    if period is not None:
        # wrap x and xp into [0, period) and pad xp with one point past each end
        period = _elementwise.abs(period)
        x, xp = x % period, xp % period
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = _manipulation.concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = _manipulation.concatenate([fp[-1:], fp, fp[:1]])
    i = _elementwise.clip(searchsorted_right(xp, x), 1, xp.shape[0] - 1)
    x0, y0, y1 = take(xp, i - 1), take(fp, i - 1), take(fp, i)
    dx = take(xp, i) - x0
    flat = dx == 0  # repeated xp: the left value, no division by zero
    out = _elementwise.where(
        flat, y0, y0 + ((x - x0) / _elementwise.where(flat, _creation.ones_like(dx), dx)) * (y1 - y0)
    )
    if period is None:
        out = _elementwise.where(x < xp[0], fp[0] if left is None else left, out)
        out = _elementwise.where(x > xp[-1], fp[-1] if right is None else right, out)
    return out


def searchsorted_right(a, v):
    from pyjax.numpy._sorting import searchsorted

    return searchsorted(a, v, side="right")


__all__ += ["interp", "searchsorted_right"]
