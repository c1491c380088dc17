"""Statistics: counting and histograms (bincount, histogram, histogram_bin_edges, histogram2d,
histogramdd) and covariance (cov, corrcoef). Order statistics (median, quantile) are in _sorting.
"""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import core, dtypes
from pyjax.numpy import _creation, _elementwise, _manipulation, _products, _ranges, _reductions
from pyjax.numpy._differences import diff
from pyjax.numpy._promotion import _check_arraylike, _is_array, asarray, broadcast_to
from pyjax.numpy._sorting import searchsorted
from pyjax.numpy._util import _arr, _aval, _concrete, _result, _to_dtype

__all__ = ["bincount", "histogram_bin_edges", "histogram", "cov", "corrcoef", "histogramdd", "histogram2d"]


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """Counts (or summed weights) of each non-negative integer value; negative values count in
    bin 0 and values >= length are dropped, as in JAX. `length` is needed under jit."""
    _check_arraylike("bincount", x)
    x = _arr(x)
    xa = _aval(x)
    if xa.dtype.kind not in "iub":
        raise TypeError(f"x argument to bincount must have an integer type; got {xa.dtype.name}")
    if xa.dtype.kind == "b":  # booleans count as 0 and 1, as in JAX
        x = x.astype(dtypes.int32)
    if xa.ndim != 1:
        raise ValueError(f"only 1-dimensional input supported for bincount; got shape {xa.shape}")
    minlength = operator.index(
        core.concrete_or_error(minlength, "The error occurred because of argument 'minlength' of jnp.bincount.")
    )
    if minlength < 0:
        raise ValueError(f"minlength must be non-negative; got minlength={minlength}")
    if length is None:
        vals = _concrete(
            x,
            "The error occurred because of argument 'x' of jnp.bincount. To avoid this error, "
            "pass a static `length` argument.",
        )
        length = builtins.max([minlength] + [v + 1 for v in vals])
    length = operator.index(length)
    if weights is None:
        w = _creation.ones(xa.shape, dtype=dtypes.canonicalize(dtypes.int64))
    else:
        w = broadcast_to(_arr(weights), xa.shape)
    idx = _elementwise.clip(x, 0)
    return _creation.zeros((length,), dtype=_aval(w).dtype).at[idx].add(w, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Edges of histogram bins: `bins` equal-width bins over range (default the data's span)."""
    _check_arraylike("histogram_bin_edges", a, bins)
    if not isinstance(bins, builtins.int) and not (_is_array(bins) and _aval(bins).ndim == 0):
        b = _arr(bins)
        if _aval(b).ndim != 1:
            raise ValueError(f"`bins` must be 1-dimensional, got shape {_aval(b).shape}")
        return b
    nbins = operator.index(
        core.concrete_or_error(bins, "The error occurred because of argument 'bins' of jnp.histogram_bin_edges.")
    )
    if nbins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    (a,) = _result("histogram_bin_edges", _manipulation.ravel(_arr(a)), to_float=True)
    d = _aval(a).dtype
    if range is None:
        lo, hi = _reductions.min(a), _reductions.max(a)
    else:
        r = _to_dtype(range, d)
        if _aval(r).shape != (2,):
            raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
        lo, hi = r[0], r[1]
    same = lo == hi
    lo = _elementwise.where(same, lo - 0.5, lo)
    hi = _elementwise.where(same, hi + 0.5, hi)
    return _ranges.linspace(lo, hi, nbins + 1, dtype=d)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, bin_edges) of a; the last bin includes its right edge."""
    _check_arraylike("histogram", a, bins, *([] if weights is None else [weights]))
    edges = histogram_bin_edges(a, bins, range, weights)
    a = _manipulation.ravel(_arr(a))
    if weights is None:
        w = _creation.ones_like(a)
        (w,) = _result("histogram", w, to_float=True)
    else:
        w = _manipulation.ravel(_arr(weights))
        if _aval(w).shape != _aval(a).shape:
            raise ValueError("weights should have the same shape as a.")
    from pyjax.numpy._sorting import searchsorted

    nb = _aval(edges).shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = _elementwise.where(a == edges[-1], nb - 1, idx)
    counts = _creation.zeros((nb,), dtype=_aval(w).dtype).at[idx].add(w, mode="drop")[1:]
    if density:
        widths = diff(edges)
        counts = counts / widths / _reductions.sum(counts)
    return counts, edges


# --- statistics ---------------------------------------------------------------------------------------


def _variables(name: str, a, rowvar: bool):
    """cov's input `a` as a 2-D array with one variable per row."""
    a = _arr(a)
    if _aval(a).ndim > 2:
        raise ValueError(f"{name} has more than 2 dimensions")
    a = _manipulation.atleast_2d(a)
    return a.T if not rowvar and _aval(a).shape[0] != 1 else a


def _sample_weights(name: str, weights, n: int, dtype):
    """cov's fweights (integer counts) or aweights: one per sample (n), in the data's dtype."""
    w = _arr(weights)
    if _aval(w).ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if _aval(w).shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if name == "fweights" and _aval(w).dtype.kind not in "iu":
        raise TypeError("fweights must be integer.")
    return _to_dtype(w, dtype)


def cov(
    m,
    y=None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights=None,
    aweights=None,
    dtype=None,
):
    """Covariance matrix of the variables in the rows (or columns, rowvar=False) of m (and y)."""
    _check_arraylike("cov", m, *([] if y is None else [y]))
    x = _variables("m", m, rowvar)
    if _aval(x).shape[0] == 0:
        return _creation.zeros((0, 0), dtype=dtypes.default_float())
    if y is not None:
        x, yy = _result("cov", x, _variables("y", y, rowvar))
        x = _manipulation.concatenate([x, yy], axis=0)
    (x,) = _result("cov", x, to_float=True)
    if dtype is not None:
        x = _to_dtype(x, dtypes.canonicalize(dtype))
    if ddof is None:
        ddof = 0 if bias else 1
    n = _aval(x).shape[1]
    w = None
    if fweights is not None:
        w = _sample_weights("fweights", fweights, n, _aval(x).dtype)
    if aweights is not None:
        aw = _sample_weights("aweights", aweights, n, _aval(x).dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = _reductions.mean(x, axis=1)
        fact = n - ddof
    else:
        wsum = _reductions.sum(w)
        avg = _reductions.sum(x * w, axis=1) / wsum
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = wsum - ddof
        else:
            fact = wsum - ddof * _reductions.sum(w * aw) / wsum
    xc = x - avg[:, None]
    xw = xc if w is None else xc * w
    c = _products.matmul(xw, _elementwise.conjugate(xc).T) / fact
    return _manipulation.squeeze(c)


def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients (cov normalized by the standard deviations, clipped to [-1, 1])."""
    _check_arraylike("corrcoef", x)
    c = cov(x, y, rowvar, dtype=dtype)
    if _aval(c).ndim == 0:
        return c / c
    d = _manipulation.diagonal(c)
    s = _elementwise.sqrt(d)
    c = c / s[:, None] / s[None, :]
    return _elementwise.clip(c, -1, 1)


# --- multi-dimensional histograms -----------------------------------------------------------------


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, edges per dimension) of the points sample[i] (shape (N, D)); last bins include the right edge."""
    _check_arraylike("histogramdd", sample, *([] if weights is None else [weights]))
    sample = asarray(sample)
    if sample.ndim == 1:
        sample = sample[:, None]
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be 1- or 2-dimensional, got shape {sample.shape}")
    n, d = sample.shape
    bins = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    ranges = list(range) if range is not None else [None] * d
    if len(bins) != d or len(ranges) != d:
        raise ValueError(f"histogramdd: bins and range must have one entry per dimension ({d})")
    edges = [histogram_bin_edges(sample[:, i], bins[i], ranges[i]) for i in builtins.range(d)]
    w = _creation.ones((n,), dtypes.int32) if weights is None else _manipulation.ravel(asarray(weights))
    flat, valid, sizes = _creation.zeros((n,), dtypes.int32), _creation.ones((n,), bool), []
    for i, e in enumerate(edges):
        nb = e.shape[0] - 1
        x = sample[:, i]
        idx = searchsorted(e, x, side="right") - 1
        idx = _elementwise.where(x == e[-1], nb - 1, idx)
        valid = valid & (idx >= 0) & (idx < nb)
        flat = flat * nb + idx
        sizes.append(nb)
    total = math.prod(sizes)
    hist = (
        _creation.zeros((total,), w.dtype).at[_elementwise.where(valid, flat, total)].add(w, mode="drop").reshape(sizes)
    )
    if density:
        hist = hist / _reductions.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = sizes[i]
            hist = hist / diff(e).reshape(shape)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(counts, x edges, y edges) of the points (x[i], y[i])."""
    _check_arraylike("histogram2d", x, y)
    sample = _manipulation.stack([_manipulation.ravel(asarray(x)), _manipulation.ravel(asarray(y))], axis=1)
    hist, (ex, ey) = histogramdd(sample, bins, range, weights, density)
    return hist, ex, ey
