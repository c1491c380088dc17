"""Still more of jax.numpy: window functions (bartlett, blackman, hamming, hanning, kaiser) and
i0, small array helpers (diagflat, fromfunction, matvec, vecmat, unstack, rollaxis, put, place),
set operations (union1d, intersect1d, setdiff1d, setxor1d), polynomials (poly, polydiv,
polyfit), dtype queries (isdtype, iterable), frombuffer, array_str / array_repr and the index
helpers mgrid, ogrid, r_, c_, s_, index_exp.

All composed from the rest of pyjax.numpy; set operations need concrete inputs unless `size`
is given, as in JAX.
"""

from __future__ import annotations

import builtins
import math
import operator

import pyjax.numpy as jnp
from pyjax.core import core, dtypes

__all__ = [
    "bartlett",
    "blackman",
    "hamming",
    "hanning",
    "kaiser",
    "i0",
    "diagflat",
    "fromfunction",
    "matvec",
    "vecmat",
    "unstack",
    "rollaxis",
    "put",
    "place",
    "union1d",
    "intersect1d",
    "setdiff1d",
    "setxor1d",
    "poly",
    "roots",
    "polydiv",
    "polyfit",
    "isdtype",
    "iterable",
    "frombuffer",
    "histogramdd",
    "histogram2d",
    "array_str",
    "array_repr",
    "mgrid",
    "ogrid",
    "r_",
    "c_",
    "s_",
    "index_exp",
]


# --- window functions and i0 --------------------------------------------------------------------


def _window_n(name: str, M):
    M = operator.index(core.concrete_or_error(M, f"M argument of jnp.{name}"))
    return M, jnp.arange(M, dtype=dtypes.default_float())


def _cosine_window(name: str, M, coeffs):
    """sum_k coeffs[k] * cos(2 pi k n / (M - 1)) for n in range(M) (numpy's window definitions)."""
    M, n = _window_n(name, M)
    if M <= 1:
        return jnp.ones((M,), dtypes.default_float())
    out = jnp.zeros((M,), dtypes.default_float())
    for k, c in enumerate(coeffs):
        out = out + c * jnp.cos(2 * math.pi * k * n / (M - 1))
    return out


def bartlett(M):
    """Bartlett (triangular) window of M points."""
    M, n = _window_n("bartlett", M)
    if M <= 1:
        return jnp.ones((M,), dtypes.default_float())
    half = (M - 1) / 2
    return 1 - jnp.abs(n - half) / half


def blackman(M):
    """Blackman window of M points."""
    return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


def hamming(M):
    """Hamming window of M points."""
    return _cosine_window("hamming", M, (0.54, -0.46))


def hanning(M):
    """Hann window of M points."""
    return _cosine_window("hanning", M, (0.5, -0.5))


def kaiser(M, beta):
    """Kaiser window of M points with shape parameter beta."""
    M, n = _window_n("kaiser", M)
    if M <= 1:
        return jnp.ones((M,), dtypes.default_float())
    alpha = (M - 1) / 2
    return i0(beta * jnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(jnp.asarray(beta, dtypes.default_float()))


def i0(x):
    """Modified Bessel function of the first kind, order 0: power series for |x| <= 15, else asymptotic."""
    x = jnp.asarray(x)
    if x.dtype.kind not in "f":
        x = x.astype(dtypes.default_float())
    ax = jnp.abs(x)
    small = ax <= 15
    xs = jnp.where(small, ax, 0)
    q = xs * xs / 4
    term, total = jnp.ones_like(xs), jnp.ones_like(xs)
    for k in range(1, 60):
        term = term * q / (k * k)
        total = total + term
    xl = jnp.where(small, 15, ax)
    coef, series = jnp.ones_like(xl), jnp.ones_like(xl)
    for k in range(1, 12):
        coef = coef * (2 * k - 1) ** 2 / (8 * k * xl)
        series = series + coef
    large = jnp.exp(xl) / jnp.sqrt(2 * math.pi * xl) * series
    return jnp.where(small, total, large)


# --- small array helpers ------------------------------------------------------------------------


def diagflat(v, k: int = 0):
    """2-D array with the flattened input on diagonal k."""
    return jnp.diag(jnp.ravel(jnp.asarray(v)), k)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*index_grids) for grids of the given shape (like numpy.fromfunction)."""
    shape = tuple(operator.index(d) for d in ((shape,) if isinstance(shape, int) else shape))
    return function(*jnp.indices(shape, dtype=dtype), **kwargs)


def matvec(x1, x2, /):
    """Batched matrix-vector product: x1 (..., m, n) with x2 (..., n) -> (..., m)."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim < 2 or x2.ndim < 1:
        raise ValueError(f"matvec requires x1.ndim >= 2 and x2.ndim >= 1, got {x1.ndim=}, {x2.ndim=}")
    return jnp.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    """Batched vector-matrix product: x1 (..., m) with x2 (..., m, n) -> (..., n)."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    if x1.ndim < 1 or x2.ndim < 2:
        raise ValueError(f"vecmat requires x1.ndim >= 1 and x2.ndim >= 2, got {x1.ndim=}, {x2.ndim=}")
    return jnp.matmul(x1[..., None, :], x2)[..., 0, :]


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
    v = jnp.take(v, jnp.arange(ind.shape[0]) % v.shape[0])
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
    return jnp.where(mask, jnp.take(vals, idx), jnp.ravel(arr)).reshape(arr.shape)


# --- set operations -----------------------------------------------------------------------------


def _pad_to(x, size, fill_value):
    """x (1-D) cut or padded to `size`, padding with fill_value (default: x's smallest value)."""
    if size is None:
        return x
    n = x.shape[0]
    if n >= size:
        return x[:size]
    if fill_value is None:
        fill_value = jnp.min(x) if n else 0
    return jnp.concatenate([x, jnp.full((size - n,), fill_value, x.dtype)])


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values in either array."""
    a = jnp.concatenate([jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))])
    return jnp.unique(a, size=size, fill_value=fill_value)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *, size=None, fill_value=None):
    """Sorted unique values present in both arrays (optionally with their first indices)."""
    a, b = jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))
    if return_indices:
        ua, ia = jnp.unique(a, return_index=True)
        ub, ib = jnp.unique(b, return_index=True)
        both = jnp.isin(ua, ub)
        common = ua[both]
        ia = ia[both]
        ib = jnp.take(ib, jnp.searchsorted(ub, common))
        return _pad_to(common, size, fill_value), _pad_to(ia, size, 0), _pad_to(ib, size, 0)
    ua = a if assume_unique else jnp.unique(a)
    common = ua[jnp.isin(ua, b)]
    return _pad_to(jnp.sort(common), size, fill_value)


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """Sorted unique values of ar1 that are not in ar2."""
    a = jnp.ravel(jnp.asarray(ar1))
    ua = a if assume_unique else jnp.unique(a)
    return _pad_to(ua[~jnp.isin(ua, jnp.ravel(jnp.asarray(ar2)))], size, fill_value)


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size=None, fill_value=None):
    """Sorted unique values in exactly one of the arrays."""
    a, b = jnp.ravel(jnp.asarray(ar1)), jnp.ravel(jnp.asarray(ar2))
    if not assume_unique:
        a, b = jnp.unique(a), jnp.unique(b)
    only = jnp.concatenate([a[~jnp.isin(a, b)], b[~jnp.isin(b, a)]])
    return _pad_to(jnp.sort(only), size, fill_value)


# --- polynomials ----------------------------------------------------------------------------------


def poly(seq_of_zeros):
    """Coefficients (highest degree first) of the monic polynomial with the given roots (or the
    characteristic polynomial of a square matrix)."""
    z = jnp.asarray(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        from pyjax.numpy import linalg

        z = linalg.eigvals(z)  # the characteristic polynomial
    if z.ndim != 1:
        raise ValueError("Input must be 1d or non-empty square 2d array.")
    dt = z.dtype if z.dtype.kind in "fc" else dtypes.default_float()
    out = jnp.ones((1,), dt)
    for i in range(z.shape[0]):
        out = jnp.convolve(out, jnp.stack([jnp.ones((), dt), -z[i].astype(dt)]))
    return out


def roots(p, *, strip_zeros: bool = True):
    """The roots (complex) of the polynomial with coefficients p, highest degree first: the
    eigenvalues of its companion matrix. strip_zeros drops leading zeros (p must be concrete)."""
    from pyjax.numpy import linalg

    p = jnp.atleast_1d(jnp.asarray(p))
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if strip_zeros:
        nz = [i for i, v in enumerate(jnp.asarray(p != 0).tolist()) if v]
        p = p[nz[0] :] if nz else p[:0]
    dt = jnp.result_type(p, dtypes.default_float())
    cdt = dt if dt.kind == "c" else (dtypes.complex128 if dt.itemsize == 8 else dtypes.complex64)
    n = p.shape[0] - 1
    if n < 1:
        return jnp.zeros((0,), cdt)
    p = p.astype(dt)
    companion = jnp.concatenate([(-p[1:] / p[0])[None, :], jnp.eye(n - 1, n, dtype=dt)])
    return linalg.eigvals(companion).astype(cdt)


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """(quotient, remainder) of polynomial division u / v (coefficients highest degree first)."""
    u, v = jnp.asarray(u), jnp.asarray(v)
    dt = jnp.result_type(u, v, dtypes.default_float())
    u, v = u.astype(dt), v.astype(dt)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = jnp.zeros((max(m - n + 1, 1),), dt)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k : k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = jnp.trim_zeros(r, trim="f")
    return q, r


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """Least-squares polynomial fit of degree deg (coefficients highest degree first)."""
    deg = operator.index(core.concrete_or_error(deg, "deg must be int"))
    x, y = jnp.asarray(x), jnp.asarray(y)
    dt = jnp.result_type(x, y, dtypes.default_float())
    x, y = x.astype(dt), y.astype(dt)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x) * float(dtypes.finfo(dt).eps)
    lhs = jnp.vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = jnp.asarray(w).astype(dt)
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))
    c, resids, rank, s = jnp.linalg.lstsq(lhs / scale, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, jnp.asarray(rcond, dt)
    if cov:
        raise NotImplementedError("jnp.polyfit: cov=True is not supported by pyjax")
    return c


# --- multi-dimensional histograms -----------------------------------------------------------------


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, edges per dimension) of the points sample[i] (shape (N, D)); last bins include the right edge."""
    sample = jnp.asarray(sample)
    if sample.ndim == 1:
        sample = sample[:, None]
    if sample.ndim != 2:
        raise ValueError(f"histogramdd: sample must be 1- or 2-dimensional, got shape {sample.shape}")
    n, d = sample.shape
    bins = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    ranges = list(range) if range is not None else [None] * d
    if len(bins) != d or len(ranges) != d:
        raise ValueError(f"histogramdd: bins and range must have one entry per dimension ({d})")
    edges = [jnp.histogram_bin_edges(sample[:, i], bins[i], ranges[i]) for i in builtins.range(d)]
    w = jnp.ones((n,), dtypes.int32) if weights is None else jnp.ravel(jnp.asarray(weights))
    flat, valid, sizes = jnp.zeros((n,), dtypes.int32), jnp.ones((n,), bool), []
    for i, e in enumerate(edges):
        nb = e.shape[0] - 1
        x = sample[:, i]
        idx = jnp.searchsorted(e, x, side="right") - 1
        idx = jnp.where(x == e[-1], nb - 1, idx)
        valid = valid & (idx >= 0) & (idx < nb)
        flat = flat * nb + idx
        sizes.append(nb)
    total = math.prod(sizes)
    hist = jnp.zeros((total,), w.dtype).at[jnp.where(valid, flat, total)].add(w, mode="drop").reshape(sizes)
    if density:
        hist = hist / jnp.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = sizes[i]
            hist = hist / jnp.diff(e).reshape(shape)
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(counts, x edges, y edges) of the points (x[i], y[i])."""
    sample = jnp.stack([jnp.ravel(jnp.asarray(x)), jnp.ravel(jnp.asarray(y))], axis=1)
    hist, (ex, ey) = histogramdd(sample, bins, range, weights, density)
    return hist, ex, ey


# --- dtype queries, buffers, printing -----------------------------------------------------------

_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype, kind):
    """Whether dtype is of `kind` (a dtype, one of the array-API kind names, or a tuple of them)."""
    d = dtypes.canonicalize(dtype) if not isinstance(dtype, str) else dtypes.canonicalize(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"Unrecognized {k=!r}")
            if d.kind in _KINDS[k]:
                return True
        elif dtypes.canonicalize(k) is d:
            return True
    return False


def iterable(y) -> bool:
    """Whether iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


_BUFFER_CODES = {"bool": "?", "int8": "b", "uint8": "B", "int16": "h", "uint16": "H", "int32": "i"}
_BUFFER_CODES.update({"uint32": "I", "int64": "q", "uint64": "Q", "float16": "e", "float32": "f", "float64": "d"})


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """1-D array interpreting the bytes of `buffer` as dtype (native byte order)."""
    d = dtypes.canonicalize(dtype) if dtype is not float else dtypes.float64
    code = _BUFFER_CODES.get(d.name)
    if code is None:
        raise TypeError(f"frombuffer: unsupported dtype {d.name}")
    mv = memoryview(buffer).cast("B")[offset:]
    size = builtins.len(mv) // mv.itemsize
    item = memoryview(b"\0" * 8).cast(code).itemsize
    if builtins.len(mv) % item and count < 0:
        raise ValueError("buffer size must be a multiple of element size")
    n = builtins.len(mv) // item if count < 0 else count
    del size
    values = mv[: n * item].cast(code).tolist()
    return jnp.asarray(values, dtype=dtypes.canonicalize(dtype))


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """str() of the array's values."""
    return str(jnp.asarray(a))


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """repr() of the array."""
    return repr(jnp.asarray(arr))


# --- index helpers --------------------------------------------------------------------------------


def _slice_values(s: slice):
    """The points of a slice: arange for a real step, linspace for an imaginary step (num points)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        num = int(builtins.abs(step))
        return jnp.linspace(start, s.stop, num)
    return jnp.arange(start, s.stop, step)


class _Grid:
    """mgrid / ogrid: dense or open multi-dimensional grids from slices."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        dt = jnp.result_type(*axes)
        grids = jnp.meshgrid(*[a.astype(dt) for a in axes], indexing="ij", sparse=self.sparse)
        return grids if self.sparse else jnp.stack(grids)


class _Concat:
    """r_ / c_: concatenate slices, scalars and arrays along an axis (c_: columns, as numpy)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin = self.axis, self.ndmin
        if key and isinstance(key[0], str):
            parts = [int(p) for p in key[0].split(",")]
            axis = parts[0]
            ndmin = parts[1] if len(parts) > 1 else ndmin
            key = key[1:]
        items = []
        for k in key:
            x = _slice_values(k) if isinstance(k, slice) else jnp.atleast_1d(jnp.asarray(k))
            while x.ndim < ndmin:
                x = x[:, None] if self.trans1d == -1 and x.ndim == 1 else x[None]
            items.append(x)
        if not items:
            return jnp.zeros((0,))
        dt = jnp.result_type(*items)
        return jnp.concatenate([x.astype(dt) for x in items], axis=axis)


class _IndexExpression:
    """s_ / index_exp: the index expression itself (tuple for index_exp)."""

    def __init__(self, maketuple: bool):
        self.maketuple = maketuple

    def __getitem__(self, item):
        return (item,) if self.maketuple and not isinstance(item, tuple) else item


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)
r_ = _Concat(axis=0, ndmin=1, trans1d=0)
c_ = _Concat(axis=-1, ndmin=2, trans1d=-1)
s_ = _IndexExpression(maketuple=False)
index_exp = _IndexExpression(maketuple=True)
