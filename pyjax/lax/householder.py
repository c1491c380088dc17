"""lax.linalg's Householder routines in LAPACK's storage: householder_product (xORGQR), ormqr
(xORMQR), hessenberg (xGEHRD) and tridiagonal (xSYTRD / xHETRD).

A reflector H = I - tau v v^H is stored as v past its unit entry, as LAPACK does. Reflectors are
made as xLARFG makes them: beta = -sign(Re alpha) |(alpha, x)|, tau = (beta - alpha) / beta and
v = x / (alpha - beta); tau = 0 (H = I) where x is zero and alpha real. Each step works on
full-size arrays masked by iotas (no data-dependent shapes), so batching (leading axes), jit and
autodiff see only lax ops.
"""

from __future__ import annotations

from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax.complex import complex as _complex
from pyjax.lax.complex import conj, imag, real
from pyjax.lax.slicing import index_in_dim

__all__ = ["householder_product", "ormqr", "hessenberg", "tridiagonal"]


def _is_complex(x) -> bool:
    return dtypes.is_complex(get_aval(x).dtype)


def _cj(x):
    return conj(x) if _is_complex(x) else x


def _abs2(x):
    return lax.add(lax.square(real(x)), lax.square(imag(x))) if _is_complex(x) else lax.square(x)


def _iota(shape, axis):
    return lax.broadcasted_iota(dtypes.int32, shape, axis)


def _bcast(x, shape, dims):
    """x broadcast to shape, its axes landing on dims."""
    return lax.broadcast_in_dim(x, shape, dims)


def _where(pred, a, b):
    """select with a and b broadcast (as scalars or to pred's shape along its leading axes)."""
    shape = get_aval(pred).shape

    def full(v):
        s = get_aval(v).shape if not isinstance(v, (int, float, complex)) else None
        if s is None:
            return v
        return v if s == shape else _bcast(v, shape, tuple(range(len(s))))

    a, b = full(a), full(b)
    if isinstance(a, (int, float, complex)):
        a = lax.full(shape, a, get_aval(b).dtype)
    if isinstance(b, (int, float, complex)):
        b = lax.full(shape, b, get_aval(a).dtype)
    return lax.select(pred, a, b)


def _mm(a, b):
    """Matrix product over the last two axes, leading axes batched."""
    nb = get_aval(a).ndim - 2
    batch = tuple(range(nb))
    return lax.dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))


def _apply_left(y, v, tau):
    """(I - tau v v^H) y for y (..., m, p), v (..., m), tau (...)."""
    nb = get_aval(v).ndim - 1
    w = _mm(lax.expand_dims(_cj(v), (nb,)), y)  # (..., 1, p)
    tv = lax.mul(v, _bcast(tau, get_aval(v).shape, tuple(range(nb))))
    return lax.sub(y, _mm(lax.expand_dims(tv, (nb + 1,)), w))


def _apply_right(y, v, tau):
    """y (I - tau v v^H) for y (..., p, m), v (..., m), tau (...)."""
    nb = get_aval(v).ndim - 1
    w = _mm(y, lax.expand_dims(v, (nb + 1,)))  # (..., p, 1)
    tv = lax.mul(_cj(v), _bcast(tau, get_aval(v).shape, tuple(range(nb))))
    return lax.sub(y, _mm(w, lax.expand_dims(tv, (nb,))))


def _larfg(alpha, rest2):
    """xLARFG on alpha and a vector of squared norm rest2: (beta, tau, scale of the vector)."""
    dt = get_aval(alpha).dtype
    if dtypes.is_complex(dt):
        ar, ai = real(alpha), imag(alpha)
        trivial = lax.bitwise_and(lax.eq(rest2, 0.0), lax.eq(ai, 0.0))
    else:
        ar, ai = alpha, None
        trivial = lax.eq(rest2, 0.0)
    norm = lax.sqrt(lax.add(_abs2(alpha), rest2))
    beta = _where(trivial, ar, _where(lax.ge(ar, 0.0), lax.neg(norm), norm))
    safe_beta = _where(trivial, 1.0, beta)
    tau_r = _where(trivial, 0.0, lax.div(lax.sub(beta, ar), safe_beta))
    if ai is None:
        tau = tau_r
        denom = lax.sub(alpha, beta)
    else:
        tau = _complex(tau_r, _where(trivial, 0.0, lax.div(lax.neg(ai), safe_beta)))
        denom = lax.sub(alpha, _complex(beta, lax.full_like(beta, 0.0)))
    one = lax.full_like(denom, 1.0)
    scale = lax.div(one, lax.select(trivial, one, denom))
    return beta, tau, scale


def _reflector(x, unit: int, rest):
    """The reflector taking x (..., m) to beta e_unit using the entries where rest is true."""
    nb = get_aval(x).ndim - 1
    xs = _where(rest, x, 0.0)
    alpha = index_in_dim(x, unit, axis=nb, keepdims=False)
    beta, tau, scale = _larfg(alpha, lax.reduce_sum(_abs2(xs), (nb,)))
    r = _iota(get_aval(x).shape, nb)
    v = _where(lax.eq(r, unit), 1.0, lax.mul(xs, _bcast(scale, get_aval(x).shape, tuple(range(nb)))))
    return beta, tau, v


def _stack_last(parts, batch, dtype):
    if not parts:
        return lax.full(batch + (0,), 0, dtype)
    nb = len(batch)
    return lax.concatenate([lax.expand_dims(p, (nb,)) for p in parts], nb)


def _square(name, a):
    aval = get_aval(a)
    if aval.ndim < 2 or aval.shape[-1] != aval.shape[-2]:
        raise ValueError(f"Argument to {name} must have shape [..., n, n], got shape {aval.shape}")
    return aval


def _column(a, j):
    return index_in_dim(a, j, axis=get_aval(a).ndim - 1, keepdims=False)


def _stored_vectors(a, k: int):
    """The k reflectors of a (..., m, n) in xGEQRF storage: v_j = e_j + a[j+1:, j]."""
    aval = get_aval(a)
    nb = aval.ndim - 2
    r = _iota(aval.shape[:-1], nb)
    return [_where(lax.eq(r, j), 1.0, _where(lax.gt(r, j), _column(a, j), 0.0)) for j in range(k)]


def householder_product(a, taus):
    """The first n columns of Q = H_0 ... H_{k-1} from xGEQRF's reflectors in a (..., m, n), m >= n."""
    av, tv = get_aval(a), get_aval(taus)
    if av.ndim < 2 or av.shape[-2] < av.shape[-1]:
        raise ValueError(
            f"The first argument to householder_product must have at least as many rows as columns, got shape {av.shape}"
        )
    if tv.ndim < 1 or tv.shape[-1] > min(av.shape[-2:]):
        raise ValueError(
            "The second argument to householder_product must not have more rows than the minimum "
            "of the first argument's rows and columns."
        )
    if tv.shape[:-1] != av.shape[:-2]:
        raise ValueError(f"householder_product: batch shapes differ: {av.shape} and {tv.shape}")
    m, n, k, nb = av.shape[-2], av.shape[-1], tv.shape[-1], av.ndim - 2
    y = lax.convert_element_type(lax.eq(_iota(av.shape, nb), _iota(av.shape, nb + 1)), av.dtype)
    vs = _stored_vectors(a, k)
    for j in reversed(range(k)):
        y = _apply_left(y, vs[j], index_in_dim(taus, j, axis=nb, keepdims=False))
    del m, n
    return y


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Q c, Q^H c (transpose), c Q or c Q^H (left=False), Q = H_0 ... H_{k-1} from xGEQRF's reflectors."""
    av, tv, cv = get_aval(a), get_aval(taus), get_aval(c)
    m = cv.shape[-2] if left else cv.shape[-1]
    if av.ndim < 2 or av.shape[-2] != m:
        raise ValueError(f"ormqr: a has {av.shape[-2]} rows but c needs {m}, got shapes {av.shape} and {cv.shape}")
    k, nb = tv.shape[-1], av.ndim - 2
    vs = _stored_vectors(a, k)
    tau = [index_in_dim(taus, j, axis=nb, keepdims=False) for j in range(k)]
    if transpose:
        tau = [_cj(t) for t in tau]
    # Q c applies H_{k-1} first; Q^H c applies H_0^H first; c Q applies H_0 first.
    order = range(k) if left == transpose else reversed(range(k))
    for j in order:
        c = _apply_left(c, vs[j], tau[j]) if left else _apply_right(c, vs[j], tau[j])
    return c


def hessenberg(a):
    """xGEHRD: (h, taus) with the upper Hessenberg form of a in h and its reflectors below the subdiagonal."""
    av = _square("hessenberg", a)
    n, nb = av.shape[-1], av.ndim - 2
    rows, cols = _iota(av.shape, nb), _iota(av.shape, nb + 1)
    r = _iota(av.shape[:-1], nb)
    h, stored, taus = a, a, []
    for i in range(n - 1):
        _, tau, v = _reflector(_column(h, i), i + 1, lax.ge(r, i + 2))
        h = _apply_right(_apply_left(h, v, _cj(tau)), v, tau)
        vmat = _bcast(v, av.shape, tuple(range(nb + 1)))
        stored = _where(lax.bitwise_and(lax.eq(cols, i), lax.ge(rows, i + 2)), vmat, stored)
        taus.append(tau)
    return _where(lax.gt(rows, lax.add(cols, 1)), stored, h), _stack_last(taus, av.shape[:-2], av.dtype)


def tridiagonal(a, *, lower: bool = True):
    """xSYTRD / xHETRD: (a, d, e, taus) for Hermitian a; the `lower` (or upper) triangle of the result
    holds the diagonal d, the off-diagonal e and the reflectors, the other triangle is a's."""
    av = _square("tridiagonal", a)
    n, nb = av.shape[-1], av.ndim - 2
    rows, cols = _iota(av.shape, nb), _iota(av.shape, nb + 1)
    r = _iota(av.shape[:-1], nb)
    t, stored = a, a
    betas, taus = [None] * (n - 1), [None] * (n - 1)
    for i in range(n - 1) if lower else reversed(range(n - 1)):
        if lower:
            beta, tau, v = _reflector(_column(t, i), i + 1, lax.ge(r, i + 2))
            place = lax.bitwise_and(lax.eq(cols, i), lax.ge(rows, i + 2))
        else:
            beta, tau, v = _reflector(_column(t, i + 1), i, lax.lt(r, i))
            place = lax.bitwise_and(lax.eq(cols, i + 1), lax.lt(rows, i))
        t = _apply_right(_apply_left(t, v, _cj(tau)), v, tau)
        stored = _where(place, _bcast(v, av.shape, tuple(range(nb + 1))), stored)
        betas[i], taus[i] = beta, tau
    rdt = dtypes.real_dtype(av.dtype)
    d = lax.reduce_sum(_where(lax.eq(rows, cols), real(t) if _is_complex(t) else t, 0.0), (nb + 1,))
    e = _stack_last(betas, av.shape[:-2], rdt)
    off = lax.eq(rows, lax.add(cols, 1)) if lower else lax.eq(cols, lax.add(rows, 1))
    e_full = lax.concatenate([e, lax.full(av.shape[:-2] + (1,), 0.0, rdt)], nb)  # e[i] at (i+1, i) / (i, i+1)
    e_mat = _bcast(e_full, av.shape, tuple(range(nb)) + ((nb + 1,) if lower else (nb,)))
    d_mat = _bcast(d, av.shape, tuple(range(nb)) + (nb + 1,))
    if _is_complex(a):
        zero = lax.full(av.shape, 0.0, rdt)
        d_mat = _complex(d_mat, zero)
        e_mat = _complex(e_mat, zero)
    out = _where(off, e_mat, _where(lax.eq(rows, cols), d_mat, stored))
    keep = lax.lt(rows, cols) if lower else lax.gt(rows, cols)
    out = _where(keep, a, out)
    return out, d, e, _stack_last(taus, av.shape[:-2], av.dtype)
