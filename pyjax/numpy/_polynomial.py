"""Polynomials in numpy's highest-power-first coefficient order: poly, roots, polyval, polyadd,
polysub, polymul, polydiv, polyder, polyint, polyfit and the Vandermonde matrix.
"""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import core, dtypes
from pyjax.lax import lax
from pyjax.numpy import _creation, _elementwise, _manipulation, _reductions, linalg
from pyjax.numpy._convolution import convolve
from pyjax.numpy._manipulation import trim_zeros
from pyjax.numpy._promotion import _check_arraylike, asarray, broadcast_to, result_type
from pyjax.numpy._util import _arr, _aval, _result, _to_dtype

__all__ = [
    "polyval",
    "polyadd",
    "polysub",
    "polymul",
    "polyder",
    "polyint",
    "vander",
    "poly",
    "roots",
    "polydiv",
    "polyfit",
]


# --- polynomials ------------------------------------------------------------------------------------


def polyval(p, x, *, unroll: int = 16):
    """Evaluate the polynomial with coefficients p (highest degree first, along p's first axis) at x (Horner's
    rule); coefficients of more dimensions broadcast against x, as in JAX."""
    _check_arraylike("polyval", p, x)
    p, x = _result("polyval", _arr(p), _arr(x))
    if _aval(p).ndim == 0:
        raise ValueError("polyval requires an array of coefficients of at least one dimension, got a scalar")
    y = _creation.zeros_like(x)
    for i in builtins.range(_aval(p).shape[0]):
        y = y * x + p[i]
    return y


def polyadd(a1, a2):
    """Sum of two polynomials (coefficients highest degree first)."""
    _check_arraylike("polyadd", a1, a2)
    a, b = _result("polyadd", _arr(a1), _arr(a2))
    na, nb = _aval(a).shape[0], _aval(b).shape[0]
    if na < nb:
        a = lax.pad(a, 0, [(nb - na, 0, 0)])
    elif nb < na:
        b = lax.pad(b, 0, [(na - nb, 0, 0)])
    return lax.add(a, b)


def polysub(a1, a2):
    """Difference of two polynomials."""
    _check_arraylike("polysub", a1, a2)
    return polyadd(a1, _elementwise.negative(_arr(a2)))


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """Product of two polynomials (full convolution of the coefficients)."""
    _check_arraylike("polymul", a1, a2)
    a, b = _arr(a1), _arr(a2)
    if trim_leading_zeros:
        a, b = trim_zeros(a, trim="f"), trim_zeros(b, trim="f")
    a, b = _result("polymul", a, b, to_float=True)
    a, b = _manipulation.atleast_1d(a), _manipulation.atleast_1d(b)
    if _aval(a).shape[0] == 0:
        a = _creation.zeros((1,), _aval(a).dtype)
    if _aval(b).shape[0] == 0:
        b = _creation.zeros((1,), _aval(b).dtype)
    return convolve(a, b, mode="full", preferred_element_type=_aval(a).dtype)


def polyder(p, m: int = 1):
    """m-th derivative of a polynomial."""
    _check_arraylike("polyder", p)
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
    return p[: n - m] * asarray(coeff, dtype=_aval(p).dtype)


def polyint(p, m: int = 1, k=None):
    """m-th antiderivative of a polynomial with integration constants k (default zeros)."""
    _check_arraylike("polyint", p, *([] if k is None else [k]))
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"Order of integral must be positive (see polyder), got m={m}")
    (p,) = _result("polyint", _arr(p), to_float=True)
    if m == 0:
        return p
    d = _aval(p).dtype
    ks = _creation.zeros((m,), d) if k is None else _manipulation.ravel(_to_dtype(k, d))
    if _aval(ks).shape[0] == 1 and m > 1:
        ks = broadcast_to(ks, (m,))
    if _aval(ks).shape[0] != m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    for i in builtins.range(m):
        n = _aval(p).shape[0]
        div = asarray(list(builtins.range(n, 0, -1)), dtype=d) if n else _creation.zeros((0,), d)
        p = _manipulation.concatenate([p / div, ks[i : i + 1]])
    return p


def vander(x, N: int | None = None, increasing: bool = False):
    """Vandermonde matrix: columns are powers of x (decreasing unless increasing=True)."""
    _check_arraylike("vander", x)
    x = _arr(x)
    if _aval(x).ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = _aval(x).shape[0] if N is None else operator.index(core.concrete_or_error(N, "jnp.vander N must be static"))
    if n < 0:
        raise ValueError("N must be nonnegative")
    if n == 0:
        return _creation.zeros((_aval(x).shape[0], 0), dtype=_aval(x).dtype)
    cols = [_creation.ones_like(x)]
    for _ in builtins.range(n - 1):
        cols.append(cols[-1] * x)
    if not increasing:
        cols = cols[::-1]
    return _manipulation.stack(cols, axis=1)


# --- polynomials ----------------------------------------------------------------------------------


def poly(seq_of_zeros):
    """Coefficients (highest degree first) of the monic polynomial with the given roots (or the
    characteristic polynomial of a square matrix)."""
    _check_arraylike("poly", seq_of_zeros)
    z = asarray(seq_of_zeros)
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] > 0:
        from pyjax.numpy import linalg

        z = linalg.eigvals(z)  # the characteristic polynomial
    if z.ndim != 1:
        raise ValueError("Input must be 1d or non-empty square 2d array.")
    dt = z.dtype if z.dtype.kind in "fc" else dtypes.default_float()
    out = _creation.ones((1,), dt)
    for i in range(z.shape[0]):
        out = convolve(out, _manipulation.stack([_creation.ones((), dt), -z[i].astype(dt)]))
    return out


def roots(p, *, strip_zeros: bool = True):
    """The roots (complex) of the polynomial with coefficients p, highest degree first: the
    eigenvalues of its companion matrix. strip_zeros drops leading zeros (p must be concrete)."""
    from pyjax.numpy import linalg

    _check_arraylike("roots", p)
    p = _manipulation.atleast_1d(asarray(p))
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if strip_zeros:
        nz = [i for i, v in enumerate(asarray(p != 0).tolist()) if v]
        p = p[nz[0] :] if nz else p[:0]
    dt = result_type(p, dtypes.default_float())
    cdt = dt if dt.kind == "c" else (dtypes.complex128 if dt.itemsize == 8 else dtypes.complex64)
    n = p.shape[0] - 1
    if n < 1:
        return _creation.zeros((0,), cdt)
    p = p.astype(dt)
    companion = _manipulation.concatenate([(-p[1:] / p[0])[None, :], _creation.eye(n - 1, n, dtype=dt)])
    return linalg.eigvals(companion).astype(cdt)


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """(quotient, remainder) of polynomial division u / v (coefficients highest degree first)."""
    _check_arraylike("polydiv", u, v)
    u, v = asarray(u), asarray(v)
    dt = result_type(u, v, dtypes.default_float())
    u, v = u.astype(dt), v.astype(dt)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = _creation.zeros((max(m - n + 1, 1),), dt)
    r = u
    for k in range(0, m - n + 1):
        d = scale * r[k]
        q = q.at[k].set(d)
        r = r.at[k : k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = trim_zeros(r, trim="f")
    return q, r


def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov=False):
    """Least-squares polynomial fit of degree deg (coefficients highest degree first)."""
    deg = operator.index(core.concrete_or_error(deg, "deg must be int"))
    x, y = asarray(x), asarray(y)
    dt = result_type(x, y, dtypes.default_float())
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
    lhs = vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = asarray(w).astype(dt)
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = _elementwise.sqrt(_reductions.sum(lhs * lhs, axis=0))
    c, resids, rank, s = linalg.lstsq(lhs / scale, rhs, rcond)
    c = (c.T / scale).T
    if full:
        return c, resids, rank, s, asarray(rcond, dt)
    if cov:
        raise NotImplementedError("jnp.polyfit: cov=True is not supported by pyjax")
    return c
