"""More of jax.numpy: differences and integrals, set membership and counting, histograms,
polynomials, statistics (cov, corrcoef), array editing (append, insert, delete, resize,
block, trim_zeros, fill_diagonal), float decomposition (frexp, ldexp, modf, spacing),
functional helpers (vectorize, apply_along_axis, apply_over_axes, piecewise) and 1-D
convolution (convolve, correlate, via lax.conv_general_dilated).

Everything is composed from lax and the rest of pyjax.numpy. Functions whose output shape
depends on values (insert/delete positions, trim_zeros, bincount without `length`) need
those values concrete, as in JAX.
"""

from __future__ import annotations

import builtins
import math
import operator
import re
from collections.abc import Callable, Sequence

from pyjax.core import core, dtypes
from pyjax.core.core import Tracer
from pyjax.core.errors import ConcretizationTypeError
from pyjax.interpreters import batching
from pyjax.lax import lax
from pyjax.lax.convolution import conv_general_dilated
from pyjax.numpy import _core as jnp
from pyjax.runtime import execute as _execute
from pyjax.runtime.array import Array

__all__ = [
    "cumulative_prod",
    "cumulative_sum",
    "append",
    "apply_along_axis",
    "apply_over_axes",
    "bincount",
    "block",
    "convolve",
    "corrcoef",
    "correlate",
    "cov",
    "delete",
    "diff",
    "ediff1d",
    "fill_diagonal",
    "frexp",
    "geomspace",
    "gradient",
    "histogram",
    "histogram_bin_edges",
    "insert",
    "isin",
    "ldexp",
    "logspace",
    "modf",
    "piecewise",
    "polyadd",
    "polyder",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "resize",
    "spacing",
    "trapezoid",
    "trim_zeros",
    "unwrap",
    "vander",
    "vectorize",
]

_SCALARS = (builtins.int, builtins.float, builtins.bool)


def _arr(x):
    return x if jnp._is_array(x) else jnp.asarray(x)


def _aval(x):
    return jnp._aval(x)


def _to_dtype(x, d):
    x = _arr(x)
    return x if _aval(x).dtype is d else lax.convert_element_type(x, d)


def _result(fn: str, *args, to_float: bool = False):
    """Promote args (weak-type aware) to one dtype without broadcasting them together."""
    args = [a if isinstance(a, _SCALARS) or jnp._is_array(a) else jnp.asarray(a) for a in args]
    d, weak = jnp._weak_result(*args)
    if to_float and d.kind not in "fc":
        d = dtypes.default_float()
        weak = weak and builtins.all(isinstance(a, _SCALARS) for a in args)
    out = []
    for a in args:
        if isinstance(a, _SCALARS):
            out.append(_execute.make_scalar(a, d, weak))
        else:
            av = _aval(a)
            out.append(a if av.dtype is d and av.weak_type == weak else lax._convert(a, d, weak))
    return out


def _concrete(x, what: str):
    """A concrete Python value (int, float, bool or nested list) of x, else ConcretizationTypeError."""
    if isinstance(x, (builtins.list, builtins.tuple)):
        return [_concrete(v, what) for v in x]
    if isinstance(x, _SCALARS):
        return x
    if isinstance(x, Tracer):
        low = x.full_lower()
        if isinstance(low, Tracer):
            prim = getattr(low, "primal", None)
            if prim is None:
                raise ConcretizationTypeError(_aval(x), what)
            return _concrete(prim, what)
        x = low
    if not isinstance(x, Array):
        x = jnp.asarray(x)
    return x.tolist()


def _slice_axis(a, start, stop, axis):
    shape = _aval(a).shape
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, starts, limits)


def _norm_axis(axis, nd, fn):
    return jnp._norm_axis(axis, nd, fn) % builtins.max(nd, 1)


# --- differences and integrals --------------------------------------------------------------------


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """n-th discrete difference along axis (optionally with values prepended/appended)."""
    jnp._check_arraylike("diff", a, *[v for v in (prepend, append) if v is not None])
    a = _arr(a)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if n == 0:
        return a
    nd = _aval(a).ndim
    if nd == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    axis = _norm_axis(axis, nd, "diff")
    parts = []
    for v in (prepend, append):
        if v is None:
            parts.append(None)
            continue
        v = _arr(v)
        if _aval(v).ndim == 0:
            shape = list(_aval(a).shape)
            shape[axis] = 1
            v = jnp.broadcast_to(v, tuple(shape))
        parts.append(v)
    if parts[0] is not None or parts[1] is not None:
        a = jnp.concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    for _ in range(n):
        m = _aval(a).shape[axis]
        if m == 0:
            break
        hi, lo = _slice_axis(a, 1, m, axis), _slice_axis(a, 0, m - 1, axis)
        a = lax.ne(hi, lo) if _aval(a).dtype.kind == "b" else lax.sub(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of the flattened array, with optional values at both ends (cast to its dtype)."""
    jnp._check_arraylike("ediff1d", ary, *[v for v in (to_begin, to_end) if v is not None])
    a = jnp.ravel(_arr(ary))
    d = _aval(a).dtype
    out = diff(a) if _aval(a).shape[0] else a
    parts = []
    if to_begin is not None:
        parts.append(jnp.ravel(_to_dtype(to_begin, d)))
    parts.append(out)
    if to_end is not None:
        parts.append(jnp.ravel(_to_dtype(to_end, d)))
    return jnp.concatenate(parts) if len(parts) > 1 else out


def gradient(f, *varargs, axis=None, edge_order=None):
    """Numerical gradient: central differences inside, one-sided at the edges; spacing is a
    scalar or a coordinate array per axis."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a = _arr(f)
    nd = _aval(a).ndim
    if axis is None:
        axes = tuple(range(nd))
    elif isinstance(axis, (builtins.list, builtins.tuple)):
        axes = tuple(_norm_axis(x, nd, "gradient") for x in axis)
    else:
        axes = (_norm_axis(axis, nd, "gradient"),)
    if not axes:
        return []
    if builtins.min(_aval(a).shape[x] for x in axes) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 elements are required."
        )
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(varargs)} for axis={axis}")
    (a,) = _result("gradient", a, to_float=True)
    out = [_gradient_axis(a, h, ax) for ax, h in zip(axes, spacing)]
    return out[0] if len(axes) == 1 else out


def _gradient_axis(a, h, axis):
    n = _aval(a).shape[axis]

    def s(lo, hi):
        return _slice_axis(a, lo, hi, axis)

    upper = lax.sub(s(1, 2), s(0, 1))
    lower = lax.sub(s(n - 1, n), s(n - 2, n - 1))
    if isinstance(h, _SCALARS) or _aval(_arr(h)).ndim == 0:
        h = h if isinstance(h, _SCALARS) else _to_dtype(h, _aval(a).dtype)
        upper, lower = jnp.true_divide(upper, h), jnp.true_divide(lower, h)
        inner = jnp.true_divide(lax.sub(s(2, n), s(0, n - 2)), jnp.multiply(2.0, h)) if n > 2 else None
    else:
        h = _arr(h)
        if _aval(h).ndim != 1:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        if _aval(h).shape[0] != n:
            raise ValueError(
                "Spacing arrays must have the same length as the dimension along which the gradient is calculated."
            )
        (h,) = _result("gradient", h, to_float=True)
        h = _to_dtype(h, _aval(a).dtype)
        shape = [1] * _aval(a).ndim
        shape[axis] = n
        h = jnp.reshape(h, tuple(shape))

        def hs(lo, hi):
            return _slice_axis(h, lo, hi, axis)

        upper = upper / (hs(1, 2) - hs(0, 1))
        lower = lower / (hs(n - 1, n) - hs(n - 2, n - 1))
        inner = None
        if n > 2:
            dx1 = hs(1, n - 1) - hs(0, n - 2)
            dx2 = hs(2, n) - hs(1, n - 1)
            ca = -dx2 / (dx1 * (dx1 + dx2))
            cb = (dx2 - dx1) / (dx1 * dx2)
            cc = dx1 / (dx2 * (dx1 + dx2))
            inner = ca * s(0, n - 2) + cb * s(1, n - 1) + cc * s(2, n)
    parts = [upper] + ([inner] if inner is not None else []) + [lower]
    return jnp.concatenate(parts, axis=axis)


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """Integral of y along axis by the trapezoidal rule (sample points x, or uniform spacing dx)."""
    jnp._check_arraylike("trapezoid", y)
    y = _arr(y)
    if x is None:
        (y,) = _result("trapezoid", y, to_float=True)
        nd = _aval(y).ndim
        axis = _norm_axis(axis, nd, "trapezoid")
        n = _aval(y).shape[axis]
        mid = lax.add(_slice_axis(y, 1, n, axis), _slice_axis(y, 0, n - 1, axis)) if n else y
        return jnp.multiply(dx, jnp.sum(mid, axis=axis) * 0.5) if n else jnp.sum(mid, axis=axis)
    y, x = _result("trapezoid", y, _arr(x), to_float=True)
    nd = _aval(y).ndim
    axis = _norm_axis(axis, nd, "trapezoid")
    if _aval(x).ndim == 1:
        dxs = diff(x)
        shape = [1] * nd
        shape[axis] = _aval(dxs).shape[0]
        dxs = jnp.reshape(dxs, tuple(shape))
    else:
        dxs = diff(x, axis=axis)
    n = _aval(y).shape[axis]
    mid = lax.add(_slice_axis(y, 1, n, axis), _slice_axis(y, 0, n - 1, axis))
    return jnp.sum(dxs * mid, axis=axis) * 0.5


def unwrap(p, discont=None, axis: int = -1, period=2 * math.pi):
    """Unwrap phases: remove jumps larger than discont by adding multiples of period."""
    jnp._check_arraylike("unwrap", p)
    (p,) = _result("unwrap", _arr(p), to_float=True)
    nd = _aval(p).ndim
    axis = _norm_axis(axis, nd, "unwrap")
    n = _aval(p).shape[axis]
    if n < 2:
        return p
    d = _aval(p).dtype
    period = _to_dtype(period, d) if not isinstance(period, _SCALARS) else period
    half = jnp.true_divide(period, 2)
    discont = half if discont is None else discont
    dd = diff(p, axis=axis)
    ddmod = jnp.remainder(dd + half, period) - half
    ddmod = jnp.where((ddmod == -half) & (dd > 0), half, ddmod)
    corr = jnp.where(jnp.abs(dd) < discont, jnp.zeros_like(dd), ddmod - dd)
    up = _slice_axis(p, 1, n, axis) + lax.cumsum(corr, axis)
    return jnp.concatenate([_slice_axis(p, 0, 1, axis), up.astype(d)], axis=axis)


# --- membership, counting, histograms ---------------------------------------------------------------


def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *, method="auto"):
    """Elementwise: is each element in test_elements (compared by value, after promotion)."""
    jnp._check_arraylike("isin", element, test_elements)
    e, t = _result("isin", _arr(element), _arr(test_elements))
    ea = _aval(e)
    tf = jnp.ravel(t)
    m = _aval(tf).shape[0]
    if m == 0:
        hit = jnp.zeros(ea.shape, dtype=dtypes.bool_)
    else:
        eb = lax.broadcast_in_dim(e, ea.shape + (m,), tuple(range(ea.ndim)))
        tb = lax.broadcast_in_dim(tf, ea.shape + (m,), (ea.ndim,))
        hit = lax.reduce_or(lax.eq(eb, tb), (ea.ndim,))
    return lax.bitwise_not(hit) if invert else hit


def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None):
    """Counts (or summed weights) of each non-negative integer value; negative values count in
    bin 0 and values >= length are dropped, as in JAX. `length` is needed under jit."""
    jnp._check_arraylike("bincount", x)
    x = _arr(x)
    xa = _aval(x)
    if xa.dtype.kind not in "iu":
        raise TypeError(f"x argument to bincount must have an integer type; got {xa.dtype.name}")
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
        w = jnp.ones(xa.shape, dtype=dtypes.canonicalize(dtypes.int64))
    else:
        w = jnp.broadcast_to(_arr(weights), xa.shape)
    idx = jnp.clip(x, 0)
    return jnp.zeros((length,), dtype=_aval(w).dtype).at[idx].add(w, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Edges of histogram bins: `bins` equal-width bins over range (default the data's span)."""
    jnp._check_arraylike("histogram_bin_edges", a)
    if not isinstance(bins, builtins.int) and not (jnp._is_array(bins) and _aval(bins).ndim == 0):
        b = _arr(bins)
        if _aval(b).ndim != 1:
            raise ValueError(f"`bins` must be 1-dimensional, got shape {_aval(b).shape}")
        return b
    nbins = operator.index(
        core.concrete_or_error(bins, "The error occurred because of argument 'bins' of jnp.histogram_bin_edges.")
    )
    if nbins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    (a,) = _result("histogram_bin_edges", jnp.ravel(_arr(a)), to_float=True)
    d = _aval(a).dtype
    if range is None:
        lo, hi = jnp.min(a), jnp.max(a)
    else:
        r = _to_dtype(range, d)
        if _aval(r).shape != (2,):
            raise ValueError(f"`range` must be either None or a sequence of scalars, got {range}")
        lo, hi = r[0], r[1]
    same = lo == hi
    lo = jnp.where(same, lo - 0.5, lo)
    hi = jnp.where(same, hi + 0.5, hi)
    return jnp.linspace(lo, hi, nbins + 1, dtype=d)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """(counts, bin_edges) of a; the last bin includes its right edge."""
    jnp._check_arraylike("histogram", a)
    edges = histogram_bin_edges(a, bins, range, weights)
    a = jnp.ravel(_arr(a))
    if weights is None:
        w = jnp.ones_like(a)
        (w,) = _result("histogram", w, to_float=True)
    else:
        w = jnp.ravel(_arr(weights))
        if _aval(w).shape != _aval(a).shape:
            raise ValueError("weights should have the same shape as a.")
    from pyjax.numpy._sorting import searchsorted

    nb = _aval(edges).shape[0]
    idx = searchsorted(edges, a, side="right")
    idx = jnp.where(a == edges[-1], nb - 1, idx)
    counts = jnp.zeros((nb,), dtype=_aval(w).dtype).at[idx].add(w, mode="drop")[1:]
    if density:
        widths = diff(edges)
        counts = counts / widths / jnp.sum(counts)
    return counts, edges


# --- polynomials ------------------------------------------------------------------------------------


def polyval(p, x, *, unroll: int = 16):
    """Evaluate the polynomial with coefficients p (highest degree first, along p's first axis) at x (Horner's
    rule); coefficients of more dimensions broadcast against x, as in JAX."""
    jnp._check_arraylike("polyval", p, x)
    p, x = _result("polyval", _arr(p), _arr(x))
    if _aval(p).ndim == 0:
        raise ValueError("polyval requires an array of coefficients of at least one dimension, got a scalar")
    y = jnp.zeros_like(x)
    for i in builtins.range(_aval(p).shape[0]):
        y = y * x + p[i]
    return y


def polyadd(a1, a2):
    """Sum of two polynomials (coefficients highest degree first)."""
    jnp._check_arraylike("polyadd", a1, a2)
    a, b = _result("polyadd", _arr(a1), _arr(a2))
    na, nb = _aval(a).shape[0], _aval(b).shape[0]
    if na < nb:
        a = lax.pad(a, 0, [(nb - na, 0, 0)])
    elif nb < na:
        b = lax.pad(b, 0, [(na - nb, 0, 0)])
    return lax.add(a, b)


def polysub(a1, a2):
    """Difference of two polynomials."""
    jnp._check_arraylike("polysub", a1, a2)
    return polyadd(a1, jnp.negative(_arr(a2)))


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """Product of two polynomials (full convolution of the coefficients)."""
    jnp._check_arraylike("polymul", a1, a2)
    a, b = _arr(a1), _arr(a2)
    if trim_leading_zeros:
        a, b = trim_zeros(a, trim="f"), trim_zeros(b, trim="f")
    a, b = _result("polymul", a, b, to_float=True)
    a, b = jnp.atleast_1d(a), jnp.atleast_1d(b)
    if _aval(a).shape[0] == 0:
        a = jnp.zeros((1,), _aval(a).dtype)
    if _aval(b).shape[0] == 0:
        b = jnp.zeros((1,), _aval(b).dtype)
    return convolve(a, b, mode="full", preferred_element_type=_aval(a).dtype)


def polyder(p, m: int = 1):
    """m-th derivative of a polynomial."""
    jnp._check_arraylike("polyder", p)
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    (p,) = _result("polyder", _arr(p), to_float=True)
    if m == 0:
        return p
    n = _aval(p).shape[0]
    coeff = [math.prod(builtins.range(k - m + 1, k + 1)) for k in builtins.range(n - 1, m - 1, -1)]
    if not coeff:
        return p[:0]
    return p[: n - m] * jnp.asarray(coeff, dtype=_aval(p).dtype)


def polyint(p, m: int = 1, k=None):
    """m-th antiderivative of a polynomial with integration constants k (default zeros)."""
    jnp._check_arraylike("polyint", p, *([] if k is None else [k]))
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"Order of integral must be positive (see polyder), got m={m}")
    (p,) = _result("polyint", _arr(p), to_float=True)
    if m == 0:
        return p
    d = _aval(p).dtype
    ks = jnp.zeros((m,), d) if k is None else jnp.ravel(_to_dtype(k, d))
    if _aval(ks).shape[0] == 1 and m > 1:
        ks = jnp.broadcast_to(ks, (m,))
    if _aval(ks).shape[0] != m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    for i in builtins.range(m):
        n = _aval(p).shape[0]
        div = jnp.asarray(list(builtins.range(n, 0, -1)), dtype=d) if n else jnp.zeros((0,), d)
        p = jnp.concatenate([p / div, ks[i : i + 1]])
    return p


def vander(x, N: int | None = None, increasing: bool = False):
    """Vandermonde matrix: columns are powers of x (decreasing unless increasing=True)."""
    jnp._check_arraylike("vander", x)
    x = _arr(x)
    if _aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _aval(x).shape[0] if N is None else operator.index(core.concrete_or_error(N, "jnp.vander N must be static"))
    if n < 0:
        raise ValueError("N must be nonnegative")
    if n == 0:
        return jnp.zeros((_aval(x).shape[0], 0), dtype=_aval(x).dtype)
    cols = [jnp.ones_like(x)]
    for _ in builtins.range(n - 1):
        cols.append(cols[-1] * x)
    if not increasing:
        cols = cols[::-1]
    return jnp.stack(cols, axis=1)


# --- statistics ---------------------------------------------------------------------------------------


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
    jnp._check_arraylike("cov", m)
    m = _arr(m)
    if _aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    x = jnp.atleast_2d(m)
    if not rowvar and _aval(x).shape[0] != 1:
        x = x.T
    if _aval(x).shape[0] == 0:
        return jnp.zeros((0, 0), dtype=dtypes.default_float())
    if y is not None:
        y = _arr(y)
        if _aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        yy = jnp.atleast_2d(y)
        if not rowvar and _aval(yy).shape[0] != 1:
            yy = yy.T
        x, yy = _result("cov", x, yy)
        x = jnp.concatenate([x, yy], axis=0)
    (x,) = _result("cov", x, to_float=True)
    if dtype is not None:
        x = _to_dtype(x, dtypes.canonicalize(dtype))
    if ddof is None:
        ddof = 0 if bias else 1
    n = _aval(x).shape[1]
    w = None
    if fweights is not None:
        f = _arr(fweights)
        if _aval(f).ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if _aval(f).shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if _aval(f).dtype.kind not in "iu":
            raise TypeError("fweights must be integer.")
        w = _to_dtype(f, _aval(x).dtype)
    if aweights is not None:
        aw = _arr(aweights)
        if _aval(aw).ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if _aval(aw).shape[0] != n:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aw = _to_dtype(aw, _aval(x).dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = jnp.mean(x, axis=1)
        fact = n - ddof
    else:
        wsum = jnp.sum(w)
        avg = jnp.sum(x * w, axis=1) / wsum
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = wsum - ddof
        else:
            fact = wsum - ddof * jnp.sum(w * aw) / wsum
    xc = x - avg[:, None]
    xw = xc if w is None else xc * w
    c = jnp.matmul(xw, jnp.conjugate(xc).T) / fact
    return jnp.squeeze(c)


def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients (cov normalized by the standard deviations, clipped to [-1, 1])."""
    jnp._check_arraylike("corrcoef", x)
    c = cov(x, y, rowvar, dtype=dtype)
    if _aval(c).ndim == 0:
        return c / c
    d = jnp.diagonal(c)
    s = jnp.sqrt(d)
    c = c / s[:, None] / s[None, :]
    return jnp.clip(c, -1, 1)


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


def insert(arr, obj, values, axis: int | None = None):
    """arr with values inserted before the given positions along axis (positions may be traced;
    out-of-range positions are clipped, as in JAX)."""
    jnp._check_arraylike("insert", arr, values)
    a = _arr(arr)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    nd = _aval(a).ndim
    axis = _norm_axis(axis, nd, "insert")
    n = _aval(a).shape[axis]
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
    a = _arr(arr)
    if axis is None:
        a = jnp.ravel(a)
        axis = 0
    nd = _aval(a).ndim
    axis = _norm_axis(axis, nd, "delete")
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
    from pyjax.numpy._advanced import take

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
        else tuple(_norm_axis(x, nd, "trim_zeros") for x in ((axis,) if isinstance(axis, builtins.int) else axis))
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


# --- spaced sequences -----------------------------------------------------------------------------


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0):
    """base ** linspace(start, stop, num): numbers evenly spaced on a log scale."""
    num = operator.index(core.concrete_or_error(num, "The error occurred in jnp.logspace(): num must be static"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _result("logspace", start, stop, to_float=True)
    lin = jnp.linspace(s, e, num, endpoint=endpoint, axis=axis)
    out = jnp.power(_to_dtype(base, _aval(lin).dtype) if not isinstance(base, _SCALARS) else base, lin)
    if dtype is not None:
        out = lax.convert_element_type(out, dtypes.canonicalize(dtype))
    return out


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers evenly spaced on a log scale between start and stop (endpoints exact)."""
    num = operator.index(core.concrete_or_error(num, "The error occurred in jnp.geomspace(): num must be static"))
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    s, e = _result("geomspace", start, stop, to_float=True)
    sign = jnp.sign(s)
    res = logspace(jnp.log10(s * sign), jnp.log10(e * sign), num, endpoint=endpoint, base=10.0, axis=axis)
    res_a = _aval(res)
    ax = _norm_axis(axis, res_a.ndim, "geomspace")
    keep = tuple(i for i in builtins.range(res_a.ndim) if i != ax)
    res = res * lax.broadcast_in_dim(
        jnp.broadcast_to(sign, jnp.broadcast_shapes(_aval(s).shape, _aval(e).shape)), res_a.shape, keep
    )
    if num > 0:
        idx = lax.broadcasted_iota(dtypes.int32, res_a.shape, ax)
        bshape = tuple(res_a.shape[i] for i in keep)
        first = lax.broadcast_in_dim(jnp.broadcast_to(s, bshape), res_a.shape, keep)
        res = jnp.where(idx == 0, first, res)
        if endpoint and num > 1:
            last = lax.broadcast_in_dim(jnp.broadcast_to(e, bshape), res_a.shape, keep)
            res = jnp.where(idx == num - 1, last, res)
    if dtype is not None:
        res = lax.convert_element_type(res, dtypes.canonicalize(dtype))
    return res


# --- float decomposition --------------------------------------------------------------------------

# dtype name -> (mantissa bits, exponent bits, same-width unsigned and signed int dtype names)
_FLOAT_LAYOUT = {
    "float16": (10, 5, "uint16", "int16"),
    "bfloat16": (7, 8, "uint16", "int16"),
    "float32": (23, 8, "uint32", "int32"),
    "float64": (52, 11, "uint64", "int64"),
}


def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= |mantissa| < 1."""
    jnp._check_arraylike("frexp", x)
    (x,) = _result("frexp", _arr(x), to_float=True)
    d = _aval(x).dtype
    nmant, nexp, uname, iname = _FLOAT_LAYOUT[d.name]
    u, it = dtypes.dtype(uname), dtypes.dtype(iname)
    bias = (1 << (nexp - 1)) - 1
    expmask = (1 << nexp) - 1
    # scale subnormals into the normal range first
    sub = lax.bitwise_and(lax.ne(x, 0.0), lax.lt(jnp.abs(x), _SMALLEST_NORMAL[d.name]))
    scale = float(2 ** (nmant + 1))
    xs = jnp.where(sub, x * scale, x)
    bits = lax.bitcast_convert_type(xs, u)

    def uc(v):
        return lax.full(_aval(x).shape, v, u)

    biased = lax.bitwise_and(lax.shift_right_logical(bits, uc(nmant)), uc(expmask))
    mant_bits = lax.bitwise_or(
        lax.bitwise_and(bits, uc(~(expmask << nmant) & ((1 << (nmant + nexp + 1)) - 1))), uc((bias - 1) << nmant)
    )
    mant = lax.bitcast_convert_type(mant_bits, d)
    e = lax.sub(lax.convert_element_type(biased, it), lax.full(_aval(x).shape, bias - 1, it))
    e = jnp.where(sub, e - (nmant + 1), e)
    special = lax.bitwise_or(lax.eq(x, 0.0), lax.bitwise_not(lax.is_finite(x)))
    mant = jnp.where(special, x, mant)
    e = jnp.where(special, lax.full(_aval(x).shape, 0, it), e)
    return mant, e.astype(dtypes.canonicalize(dtypes.int64) if iname == "int64" else dtypes.int32)


_SMALLEST_NORMAL = {"float16": 2.0**-14, "bfloat16": 2.0**-126, "float32": 2.0**-126, "float64": 2.0**-1022}


def _pow2(e, d):
    """2.0**e exactly for integer e within the normal exponent range (clamped), in dtype d."""
    nmant, nexp, uname, iname = _FLOAT_LAYOUT[d.name]
    bias = (1 << (nexp - 1)) - 1
    u = dtypes.dtype(uname)
    e = jnp.clip(e, 1 - bias, bias)
    b = lax.convert_element_type(e + bias, u)
    return lax.bitcast_convert_type(lax.shift_left(b, lax.full(_aval(b).shape, nmant, u)), d)


def ldexp(x1, x2, /):
    """x1 * 2**x2 (x2 an integer array), exact over the whole exponent range."""
    jnp._check_arraylike("ldexp", x1, x2)
    x2a = _arr(x2)
    if _aval(x2a).dtype.kind not in "iub":
        raise ValueError(f"ldexp: x2 must be an integer array, got dtype {_aval(x2a).dtype.name}")
    (x1,) = _result("ldexp", _arr(x1) if not isinstance(x1, _SCALARS) else x1, to_float=True)
    x1 = _arr(x1)
    d = _aval(x1).dtype
    x1, e = jnp.broadcast_arrays(x1, x2a.astype(dtypes.int32))
    nexp = _FLOAT_LAYOUT[d.name][1]
    lim = 2 * ((1 << nexp) + _FLOAT_LAYOUT[d.name][0])
    e = jnp.clip(e, -lim, lim)
    h1 = lax.div(e, lax.full_like(e, 2))
    h2 = e - h1
    h1b = lax.div(h1, lax.full_like(h1, 2))
    return x1 * _pow2(h1b, d) * _pow2(h1 - h1b, d) * _pow2(h2, d)


def modf(x, /, out=None):
    """(fractional part, integral part), both with the sign of x."""
    jnp._check_arraylike("modf", x)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    (x,) = _result("modf", _arr(x), to_float=True)
    whole = jnp.where(x >= 0, jnp.floor(x), jnp.ceil(x))
    return x - whole, whole


def spacing(x, /):
    """Distance from x to the next representable float away from zero."""
    jnp._check_arraylike("spacing", x)
    (x,) = _result("spacing", _arr(x), to_float=True)
    d = _aval(x).dtype
    inf = lax.full_like(x, float("inf"))
    toward = jnp.where(lax.lt(x, lax.full_like(x, 0)), -inf, inf)
    nxt = lax.nextafter(x, toward)
    return jnp.where(lax.eq(jnp.abs(x), inf), lax.full_like(x, float("nan")), nxt - x).astype(d)


# --- functional helpers -----------------------------------------------------------------------------


def _vmap1(f: Callable, in_axes: Sequence, out_axis: int):
    """vmap of f over positional args (in_axes: int or None per arg); outputs may be pytrees."""
    from pyjax.core import pytree

    def wrapped(*args):
        sizes = {_aval(a).shape[ax] for a, ax in zip(args, in_axes) if ax is not None}
        if len(sizes) != 1:
            raise ValueError(f"vectorized arguments have inconsistent sizes {sorted(sizes)}")
        size = sizes.pop()
        store = {}

        def flat_f(*xs):
            out = f(*xs)
            leaves, store["tree"] = pytree.tree_flatten(out)
            return [_arr(leaf) for leaf in leaves]

        vals, dims = batching.vmap_flat(flat_f, size, list(in_axes), list(args))
        outs = []
        for v, d in zip(vals, dims):
            nd = _aval(v).ndim + (1 if d is None else 0)
            dst = out_axis % nd
            outs.append(batching.move_to(v, d, dst, size))
        return pytree.tree_unflatten(store["tree"], outs)

    return wrapped


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs):
    """Apply func1d to the 1-D slices of arr along axis (vmapped over the other axes)."""
    a = _arr(arr)
    nd = _aval(a).ndim
    axis = _norm_axis(axis, nd, "apply_along_axis")

    def func(x):
        return func1d(x, *args, **kwargs)

    for i in builtins.range(1, nd - axis):
        func = _vmap1(func, (i,), -1)
    for _ in builtins.range(axis):
        func = _vmap1(func, (0,), 0)
    return func(a)


def apply_over_axes(func: Callable, a, axes: Sequence[int]):
    """Apply func(a, axis) repeatedly over axes, keeping the number of dimensions."""
    a = _arr(a)
    for axis in [axes] if isinstance(axes, builtins.int) else axes:
        b = func(a, axis)
        nd = _aval(a).ndim
        if _aval(b).ndim == nd:
            a = b
        elif _aval(b).ndim == nd - 1:
            a = jnp.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


_DIMS = r"\w+"
_CORE = rf"(?:{_DIMS}(?:,{_DIMS})*)?"
_ARGS = rf"\({_CORE}\)(?:,\({_CORE}\))*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature: str):
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")
    parse = lambda part: [tuple(re.findall(_DIMS, arg)) for arg in re.findall(rf"\({_CORE}\)", part)]  # noqa: E731
    return parse(ins), parse(outs)


class vectorize:
    """numpy.vectorize via vmap: pyfunc applied over broadcast leading (loop) dimensions; with a
    gufunc signature like '(n),(n)->()' the named core dimensions are passed whole."""

    def __init__(self, pyfunc: Callable, *, excluded=frozenset(), signature: str | None = None):
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args, **kwargs):
        excluded = self.excluded
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw = [(k, v) for k, v in kwargs.items() if k not in excluded]
        dyn_idx = [i for i in builtins.range(len(args)) if i not in excluded]
        dyn = [_arr(args[i]) for i in dyn_idx] + [_arr(v) for _, v in dyn_kw]
        n_pos = len(dyn_idx)

        def call(*xs):
            full = list(args)
            for i, x in zip(dyn_idx, xs[:n_pos]):
                full[i] = x
            kw = dict(static_kw)
            kw.update({k: x for (k, _), x in zip(dyn_kw, xs[n_pos:])})
            return self.pyfunc(*full, **kw)

        if self.signature is None:
            core_dims = [()] * len(dyn)
            out_core = None
        else:
            core_dims, out_core = _parse_signature(self.signature)
            if len(core_dims) != len(dyn):
                raise TypeError(f"wrong number of positional arguments: expected {len(core_dims)}, got {len(dyn)}")
        sizes: dict = {}
        loop_shapes = []
        for x, cd in zip(dyn, core_dims):
            shape = _aval(x).shape
            if len(cd) > len(shape):
                raise ValueError(
                    f"input with shape {shape} does not have enough dimensions for all core "
                    f"dimensions {cd} of signature {self.signature}"
                )
            for name, s in zip(cd, shape[len(shape) - len(cd) :]):
                if sizes.setdefault(name, s) != s:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: {sizes[name]} vs {s}")
            loop_shapes.append(shape[: len(shape) - len(cd)])
        loop = jnp.broadcast_shapes(*loop_shapes) if loop_shapes else ()
        xs = []
        for x, ls in zip(dyn, loop_shapes):
            core_shape = _aval(x).shape[len(ls) :]
            xs.append(jnp.broadcast_to(x, tuple(loop) + core_shape) if ls != tuple(loop) else x)
        f = call
        for _ in builtins.range(len(loop)):
            f = _vmap1(f, (0,) * len(xs), 0)
        out = f(*xs)
        if out_core is not None:
            outs = out if isinstance(out, builtins.tuple) else (out,)
            if len(outs) != len(out_core):
                raise ValueError(f"wrong number of outputs from pyfunc: expected {len(out_core)}, got {len(outs)}")
            for o, cd in zip(outs, out_core):
                shape = _aval(o).shape[len(loop) :]
                if len(shape) != len(cd):
                    raise ValueError(f"output shape {shape} does not match core dimensions {cd}")
                for name, s in zip(cd, shape):
                    if sizes.setdefault(name, s) != s:
                        raise ValueError(f"inconsistent size for core dimension {name!r}: {sizes[name]} vs {s}")
        return out


def piecewise(x, condlist, funclist, *args, **kw):
    """Evaluate funclist[i] (a callable or a constant) where condlist[i] holds; a trailing extra
    function is the default. Later conditions win; every function sees all of x."""
    jnp._check_arraylike("piecewise", x)
    x = _arr(x)
    xa = _aval(x)
    nc, nf = len(condlist), len(funclist)
    conds = jnp.asarray(condlist, dtype=dtypes.bool_) if not jnp._is_array(condlist) else condlist.astype(bool)
    if nf == nc + 1:
        default, funcs = funclist[-1], list(funclist[:-1])
    elif nf == nc:
        default, funcs = 0, list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        v = _to_dtype(v, xa.dtype)
        return jnp.broadcast_to(v, xa.shape)

    out = value(default)
    for i, f in enumerate(funcs):
        out = jnp.where(conds[i], value(f), out)
    return out


# --- 1-D convolution ----------------------------------------------------------------------------------


def _conv1d(fn: str, a, v, mode: str, precision, preferred_element_type):
    jnp._check_arraylike(fn, a, v)
    a, v = _arr(a), _arr(v)
    if _aval(a).ndim != 1 or _aval(v).ndim != 1:
        raise ValueError(f"{fn}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        a, v = _result(fn, a, v, to_float=True)
    else:
        a, v = _result(fn, a, v)
    na, nv = _aval(a).shape[0], _aval(v).shape[0]
    if na == 0 or nv == 0:
        raise ValueError(f"{fn}: inputs cannot be empty, got shapes {_aval(a).shape} and {_aval(v).shape}.")
    reverse_out = False
    if na < nv:
        a, v = v, a
        reverse_out = fn == "correlate"
    if fn == "convolve":
        v = lax.rev(v, (0,))
    k = _aval(v).shape[0]
    if mode == "valid":
        pad = (0, 0)
    elif mode == "same":
        pad = (k // 2, k - k // 2 - 1)
    elif mode == "full":
        pad = (k - 1, k - 1)
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = conv_general_dilated(
        lax.reshape(a, (1, 1, _aval(a).shape[0])),
        lax.reshape(v, (1, 1, k)),
        (1,),
        [pad],
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    out = lax.reshape(out, (_aval(out).shape[2],))
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays (modes 'full', 'same', 'valid')."""
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays (modes 'full', 'same', 'valid')."""
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)


def _cumulative_api(name: str, fn):
    def cumulative(x, /, *, axis=None, dtype=None, include_initial: bool = False):
        jnp._check_arraylike(name, x)
        x = _arr(x)
        nd = _aval(x).ndim
        if nd == 0:
            raise ValueError(
                f"The input must be non-scalar to take a cumulative {name[len('cumulative_') :]}, "
                "however a scalar value or scalar array was given."
            )
        if axis is None:
            if nd > 1:
                raise ValueError(
                    f"The input array has rank {nd}, however axis was not set to an explicit value. The axis "
                    "argument is only optional for one-dimensional arrays."
                )
            axis = 0
        axis = _norm_axis(axis, nd, name)
        d = _aval(x).dtype
        if dtype is None and name == "cumulative_sum" and d.kind in "biu" and d.itemsize < 4:
            dtype = "uint32" if d.kind == "u" else "int32"  # the array API's sum widens small integers (JAX too)
        out = fn(x, axis=axis, dtype=dtype)
        if include_initial:
            shape = list(_aval(out).shape)
            shape[axis] = 1
            first = jnp.full(shape, 0 if name == "cumulative_sum" else 1, _aval(out).dtype)
            out = jnp.concatenate([first, out], axis=axis)
        return out

    cumulative.__name__ = name
    cumulative.__doc__ = f"The array API's {name}: axis needed beyond 1-D, include_initial prepends the identity."
    return cumulative


cumulative_sum = _cumulative_api("cumulative_sum", jnp.cumsum)
cumulative_prod = _cumulative_api("cumulative_prod", jnp.cumprod)
