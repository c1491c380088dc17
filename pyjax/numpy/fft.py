"""jax.numpy.fft: discrete Fourier transforms, built from lax primitives on (re, im) parts.

A transform along one axis works on the real and imaginary parts as separate real arrays, by a
recursive four-step (Cooley-Tukey) split into dense DFT matmuls of at most 64 points, or, for
lengths without a useful factor, Bluestein's chirp-z convolution through a power-of-two FFT.
Everything is made of differentiable, batchable primitives, so jit, vmap and grad (with JAX's
complex convention) come for free, and the backends only ever see real arithmetic. Real
transforms (rfft, irfft, hfft, ...) are the complex ones plus slicing and Hermitian mirroring.
"""

from __future__ import annotations

import builtins
import math
import operator
from functools import lru_cache

from pyjax._typing import Array
from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _elementwise, _manipulation, _promotion
from pyjax.numpy._promotion import _is_array

__all__ = [
    "fft",
    "ifft",
    "fft2",
    "ifft2",
    "fftn",
    "ifftn",
    "rfft",
    "irfft",
    "rfft2",
    "irfft2",
    "rfftn",
    "irfftn",
    "hfft",
    "ihfft",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]

_SMALL_DFT = 64  # lengths up to this are one dense DFT matmul


# --- the transform on real parts ----------------------------------------------------------------
#
# A length-n DFT along the last axis, n = n1 * n2 (four-step / Cooley-Tukey): view x as (n1, n2)
# with j = n2 j1 + j2, transform along j1, multiply by twiddles w_n^(j2 k1), transform along j2;
# the output index is k = k1 + n1 k2. Lengths up to _SMALL_DFT are a matmul with the DFT matrix
# (re and im stacked, so one real matmul per step), longer factors recurse, and lengths with no
# useful factor (large primes) go through Bluestein's chirp-z convolution of a power-of-two size.
# So the work is O(n log n) in a handful of large matmuls: few kernels to compile, and the
# backends' matmul paths do the arithmetic.


_QUARTERS = ((1.0, 0.0), (0.0, 1.0), (-1.0, 0.0), (0.0, -1.0))


def _angles(count: int, period: int, sign: int, k_of):
    """cos and sin of sign * 2 pi (k mod period) / period for k = k_of(i), i < count (quarter turns exact)."""
    cos, sin = [], []
    for i in range(count):
        r = k_of(i) % period
        if (4 * r) % period == 0:
            c, s = _QUARTERS[4 * r // period]
        else:
            a = 2.0 * math.pi * r / period
            c, s = math.cos(a), math.sin(a)
        cos.append(c)
        sin.append(sign * s)
    return cos, sin


@lru_cache(maxsize=128)
def _dft_block(q: int, sign: int) -> tuple:
    """The real (2q, 2q) matrix [[C, S], [-S, C]]: [re, im] @ it = [re C - im S, re S + im C]."""
    c, s = _angles(q * q, q, sign, lambda i: (i // q) * (i % q))
    rows = []
    for j in range(q):
        rows.append(tuple(c[j * q : (j + 1) * q]) + tuple(s[j * q : (j + 1) * q]))
    for j in range(q):
        rows.append(tuple(-v for v in s[j * q : (j + 1) * q]) + tuple(c[j * q : (j + 1) * q]))
    return tuple(rows)


@lru_cache(maxsize=128)
def _twiddle_table(n1: int, n2: int, sign: int) -> tuple:
    """w_n^(j2 k1) as (n2, n1) cos and sin tables (n = n1 n2)."""
    c, s = _angles(n1 * n2, n1 * n2, sign, lambda i: (i // n1) * (i % n1))
    return tuple(tuple(c[r * n1 : (r + 1) * n1]) for r in range(n2)), tuple(
        tuple(s[r * n1 : (r + 1) * n1]) for r in range(n2)
    )


@lru_cache(maxsize=64)
def _chirp(q: int, sign: int) -> tuple[tuple, tuple]:
    """exp(sign * i pi j^2 / q) for j < q (j^2 taken mod 2q, where the angle repeats)."""
    ang = [sign * math.pi * ((j * j) % (2 * q)) / q for j in range(q)]
    return tuple(math.cos(a) for a in ang), tuple(math.sin(a) for a in ang)


def _const(values, dtype):
    return _promotion.asarray(values, dtype=dtype)


def _bcast(c, shape):
    """Broadcast a constant over the leading axes of shape."""
    cs = get_aval(c).shape
    if cs == shape:
        return c
    return lax.broadcast_in_dim(c, shape, tuple(range(len(shape) - len(cs), len(shape))))


def _cmul(ar, ai, br, bi):
    return lax.sub(lax.mul(ar, br), lax.mul(ai, bi)), lax.add(lax.mul(ar, bi), lax.mul(ai, br))


def _slice_axis(x, axis: int, lo: int, hi: int):
    shape = get_aval(x).shape
    start = (0,) * axis + (lo,) + (0,) * (len(shape) - axis - 1)
    return lax.slice(x, start, shape[:axis] + (hi,) + shape[axis + 1 :])


def _dft_axis(re, im, axis: int, sign: int):
    """Dense DFT along axis: [re, im] stacked along it times the block DFT matrix (one matmul).

    The transformed axis comes out last (dot_general puts the matrix's free axis after x's)."""
    shape = get_aval(re).shape
    q = shape[axis]
    d = get_aval(re).dtype
    w = _const(_dft_block(q, sign), d)
    both = lax.concatenate([re, im], axis)
    out = lax.dot_general(both, w, (((axis,), (0,)), ((), ())))
    last = len(shape) - 1
    return _slice_axis(out, last, 0, q), _slice_axis(out, last, q, 2 * q)


def _fft_axis_to_last(re, im, axis: int, sign: int):
    """DFT along axis, the result's transformed axis moved last."""
    q = get_aval(re).shape[axis]
    if q <= _SMALL_DFT:
        return _dft_axis(re, im, axis, sign)
    last = len(get_aval(re).shape) - 1
    if axis != last:
        perm = tuple(i for i in range(last + 1) if i != axis) + (axis,)
        re, im = lax.transpose(re, perm), lax.transpose(im, perm)
    return _fft_last(re, im, sign)


def _split(n: int) -> int:
    """The divisor of n closest to sqrt(n) from below (1 when n is prime)."""
    r = math.isqrt(n)
    for d in range(r, 1, -1):
        if n % d == 0:
            return d
    return 1


def _bluestein(re, im, sign: int):
    """Length-q DFT as a chirp-z convolution through power-of-two FFTs (O(q log q) for any q)."""
    shape = get_aval(re).shape
    q = shape[-1]
    d = get_aval(re).dtype
    m = 1
    while m < 2 * q - 1:
        m *= 2
    cr, ci = _chirp(q, sign)
    c_re, c_im = _bcast(_const(cr, d), shape), _bcast(_const(ci, d), shape)
    ar, ai = _cmul(re, im, c_re, c_im)
    pad = [(0, 0, 0)] * (len(shape) - 1) + [(0, m - q, 0)]
    ar, ai = lax.pad(ar, lax.full((), 0, d), pad), lax.pad(ai, lax.full((), 0, d), pad)
    # b_k = conj(chirp_|k|) for |k| < q, laid out circularly over m points
    br, bi = [0.0] * m, [0.0] * m
    for k in range(q):
        br[k], bi[k] = cr[k], -ci[k]
        if k:
            br[m - k], bi[m - k] = cr[k], -ci[k]
    fbr, fbi = _fft_last(_const(br, d), _const(bi, d), sign)
    far, fai = _fft_last(ar, ai, sign)
    full = get_aval(far).shape
    pr, pi = _cmul(far, fai, _bcast(fbr, full), _bcast(fbi, full))
    yr, yi = _fft_last(pr, pi, -sign)
    yr, yi = _slice_axis(yr, len(shape) - 1, 0, q), _slice_axis(yi, len(shape) - 1, 0, q)
    yr, yi = lax.mul(yr, 1.0 / m), lax.mul(yi, 1.0 / m)
    return _cmul(yr, yi, c_re, c_im)


def _fft_last(re, im, sign: int):
    """Unnormalized DFT (kernel exp(sign 2 pi i jk / n)) along the last axis of the parts."""
    shape = get_aval(re).shape
    n = shape[-1]
    if n <= 1:
        return re, im
    if n <= _SMALL_DFT:
        return _dft_axis(re, im, len(shape) - 1, sign)
    n1 = _split(n)
    if n1 == 1:
        return _bluestein(re, im, sign)
    n2 = n // n1
    batch = shape[:-1]
    nb = len(batch)
    d = get_aval(re).dtype
    re, im = lax.reshape(re, batch + (n1, n2)), lax.reshape(im, batch + (n1, n2))
    re, im = _fft_axis_to_last(re, im, nb, sign)  # (batch, j2, k1)
    tc, ts = _twiddle_table(n1, n2, sign)
    sh = batch + (n2, n1)
    re, im = _cmul(re, im, _bcast(_const(tc, d), sh), _bcast(_const(ts, d), sh))
    re, im = _fft_axis_to_last(re, im, nb, sign)  # (batch, k1, k2)
    perm = tuple(range(nb)) + (nb + 1, nb)  # k = k1 + n1 k2: k2 major
    return lax.reshape(lax.transpose(re, perm), batch + (n,)), lax.reshape(lax.transpose(im, perm), batch + (n,))


# --- argument handling ----------------------------------------------------------------------------


_NORMS = ("backward", "ortho", "forward")


def _check_norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    return norm


def _scale(n: int, norm: str, inverse: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n) if n else 1.0
    if (norm == "backward") == inverse:
        return 1.0 / n if n else 1.0
    return 1.0


def _swap_norm(norm: str) -> str:
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def _array(a, name: str):
    if isinstance(a, (list, tuple)):
        raise TypeError(f"jax.numpy.fft.{name} requires ndarray or scalar arguments, got {type(a)} at position 0.")
    return a if _is_array(a) else _promotion.asarray(a)


def _complex_input(a, name: str):
    a = _array(a, name)
    d = get_aval(a).dtype
    if d.kind == "c":
        return a
    rd = d if d.name in ("float32", "float64") else dtypes.default_float()
    return lax.convert_element_type(a, dtypes.complex_dtype(rd))


def _real_input(a, name: str):
    a = _array(a, name)
    d = get_aval(a).dtype
    if d.kind == "c":
        raise ValueError(f"only real valued inputs supported for {name}")
    rd = d if d.name in ("float32", "float64") else dtypes.default_float()
    return lax.convert_element_type(a, rd) if d is not rd else a


def _resize(x, n: int, axis: int):
    """Truncate or zero-pad x along axis to length n (numpy's n= / s= semantics)."""
    shape = get_aval(x).shape
    if shape[axis] == n:
        return x
    if shape[axis] > n:
        limits = shape[:axis] + (n,) + shape[axis + 1 :]
        return lax.slice(x, (0,) * len(shape), limits)
    pad = [(0, 0, 0)] * len(shape)
    pad[axis] = (0, n - shape[axis], 0)
    return lax.pad(x, lax.full((), 0, get_aval(x).dtype), pad)


def _length(n, default: int) -> int:
    if n is None:
        return default
    n = operator.index(n)
    if n < 1:
        raise ValueError("Shape should be positive.")
    return n


def _c1(x, n: int, axis: int, inverse: bool, norm: str):
    """Complex-to-complex transform of complex x along one axis (resized to n)."""
    x = _resize(x, n, axis)
    nd = get_aval(x).ndim
    last = nd - 1
    moved = _manipulation.moveaxis(x, axis, last) if axis != last else x
    re, im = _fft_last(lax.real(moved), lax.imag(moved), 1 if inverse else -1)
    s = _scale(n, norm, inverse)
    if s != 1.0:
        re, im = lax.mul(re, s), lax.mul(im, s)
    out = lax.complex(re, im)
    return _manipulation.moveaxis(out, last, axis) if axis != last else out


def _axes_and_sizes(name: str, shape: tuple, s, axes):
    nd = len(shape)
    if axes is None:
        axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
    else:
        axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(canonical_axis(ax, nd) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes {tuple(axes)}.")
    if s is not None:
        s = tuple(operator.index(v) for v in s)
        if len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
        for v in s:
            if v < 1:
                raise ValueError("Shape should be positive.")
    return axes, s


# --- complex transforms -------------------------------------------------------------------------


def fft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional discrete Fourier transform (complex output)."""
    norm = _check_norm(norm)
    x = _complex_input(a, "fft")
    ax = canonical_axis(axis, get_aval(x).ndim)
    return _c1(x, _length(n, get_aval(x).shape[ax]), ax, False, norm)


def ifft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional inverse discrete Fourier transform."""
    norm = _check_norm(norm)
    x = _complex_input(a, "ifft")
    ax = canonical_axis(axis, get_aval(x).ndim)
    return _c1(x, _length(n, get_aval(x).shape[ax]), ax, True, norm)


def _cn(name: str, a, s, axes, norm, inverse: bool):
    norm = _check_norm(norm)
    x = _complex_input(a, name)
    axes, s = _axes_and_sizes(name, get_aval(x).shape, s, axes)
    for i, ax in enumerate(axes):
        n = s[i] if s is not None else get_aval(x).shape[ax]
        x = _c1(x, n, ax, inverse, norm)
    return x


def fftn(a, s=None, axes=None, norm: str | None = None) -> Array:
    """N-dimensional discrete Fourier transform over axes (all axes by default)."""
    return _cn("fftn", a, s, axes, norm, False)


def ifftn(a, s=None, axes=None, norm: str | None = None) -> Array:
    """N-dimensional inverse discrete Fourier transform."""
    return _cn("ifftn", a, s, axes, norm, True)


def fft2(a, s=None, axes=(-2, -1), norm: str | None = None) -> Array:
    """Two-dimensional discrete Fourier transform (over the last two axes by default)."""
    return _cn("fft2", a, s, axes, norm, False)


def ifft2(a, s=None, axes=(-2, -1), norm: str | None = None) -> Array:
    """Two-dimensional inverse discrete Fourier transform."""
    return _cn("ifft2", a, s, axes, norm, True)


# --- real transforms ----------------------------------------------------------------------------


def _r1(x, n: int, axis: int, norm: str):
    """rfft of real x along one axis: the n // 2 + 1 non-negative frequencies."""
    x = _resize(x, n, axis)
    c = lax.convert_element_type(x, dtypes.complex_dtype(get_aval(x).dtype))
    full = _c1(c, n, axis, False, norm)
    shape = get_aval(full).shape
    return lax.slice(full, (0,) * len(shape), shape[:axis] + (n // 2 + 1,) + shape[axis + 1 :])


def _ir1(x, n: int, axis: int, norm: str):
    """irfft of complex x along one axis: a real signal of length n from its half spectrum."""
    half = n // 2 + 1
    x = _resize(x, half, axis)
    # the rest of the spectrum is the conjugate mirror X[n - k] = conj(X[k]), k = 1 .. n - half
    nd = get_aval(x).ndim
    mirror_len = n - half
    if mirror_len:
        shape = get_aval(x).shape
        tail = lax.slice(x, (0,) * nd, shape[:axis] + (mirror_len + 1,) + shape[axis + 1 :])
        start = [0] * nd
        start[axis] = 1
        tail = lax.slice(tail, tuple(start), get_aval(tail).shape)
        tail = lax.rev(lax.conj(tail), (axis,))
        x = lax.concatenate([x, tail], axis)
    return lax.real(_c1(x, n, axis, True, norm))


def rfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional FFT of a real signal: the n // 2 + 1 non-negative frequency terms."""
    norm = _check_norm(norm)
    x = _real_input(a, "rfft")
    ax = canonical_axis(axis, get_aval(x).ndim)
    return _r1(x, _length(n, get_aval(x).shape[ax]), ax, norm)


def irfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """Inverse of rfft: a real signal of length n (default 2 (m - 1)) from m frequency terms."""
    norm = _check_norm(norm)
    x = _complex_input(a, "irfft")
    ax = canonical_axis(axis, get_aval(x).ndim)
    return _ir1(x, _length(n, 2 * (get_aval(x).shape[ax] - 1)), ax, norm)


def rfftn(a, s=None, axes=None, norm: str | None = None) -> Array:
    """N-dimensional FFT of a real array: rfft over the last axis, full FFTs over the others."""
    return _rn("rfftn", a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm: str | None = None) -> Array:
    """Two-dimensional FFT of a real array."""
    return _rn("rfft2", a, s, axes, norm)


def _rn(name, a, s, axes, norm):
    norm = _check_norm(norm)
    x = _real_input(a, name)
    axes, s = _axes_and_sizes(name, get_aval(x).shape, s, axes)
    sizes = s if s is not None else tuple(get_aval(x).shape[ax] for ax in axes)
    if not axes:
        return lax.convert_element_type(x, dtypes.complex_dtype(get_aval(x).dtype))
    x = _r1(x, sizes[-1], axes[-1], norm)
    for ax, n in zip(axes[:-1], sizes[:-1]):
        x = _c1(x, n, ax, False, norm)
    return x


def irfftn(a, s=None, axes=None, norm: str | None = None) -> Array:
    """Inverse of rfftn: the last axis is the half-spectrum one (output length s[-1])."""
    return _irn("irfftn", a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm: str | None = None) -> Array:
    """Inverse of rfft2."""
    return _irn("irfft2", a, s, axes, norm)


def _irn(name, a, s, axes, norm):
    norm = _check_norm(norm)
    x = _complex_input(a, name)
    shape = get_aval(x).shape
    axes, s = _axes_and_sizes(name, shape, s, axes)
    if not axes:
        return lax.real(x)
    if s is None:
        s = tuple(shape[ax] for ax in axes[:-1]) + (2 * (shape[axes[-1]] - 1),)
    for ax, n in zip(axes[:-1], s[:-1]):
        x = _c1(x, n, ax, True, norm)
    return _ir1(x, _length(s[-1], 1), axes[-1], norm)


def hfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """FFT of a signal with Hermitian symmetry (given by its first half): a real spectrum."""
    norm = _check_norm(norm)
    x = _complex_input(a, "hfft")
    ax = canonical_axis(axis, get_aval(x).ndim)
    n = _length(n, 2 * (get_aval(x).shape[ax] - 1))
    return _ir1(lax.conj(x), n, ax, _swap_norm(norm))


def ihfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """Inverse of hfft: the half spectrum (conjugated rfft) of a real signal."""
    norm = _check_norm(norm)
    x = _real_input(a, "rfft")  # JAX names rfft in ihfft's message too
    ax = canonical_axis(axis, get_aval(x).ndim)
    return lax.conj(_r1(x, _length(n, get_aval(x).shape[ax]), ax, _swap_norm(norm)))


# --- helpers ----------------------------------------------------------------------------------------


def _freq_dtype(dtype):
    return dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)


def fftfreq(n: int, d=1.0, *, dtype=None, device=None) -> Array:
    """Sample frequencies of an n-point FFT: [0, 1, ..., -(n // 2), ..., -1] / (d n)."""
    n = builtins.int(n) if isinstance(n, builtins.float) else operator.index(n)
    k = [i if i < (n + 1) // 2 else i - n for i in range(n)]
    return _freqs(k, n, d, dtype)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None) -> Array:
    """Sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d n)."""
    n = builtins.int(n) if isinstance(n, builtins.float) else operator.index(n)
    return _freqs(list(range(n // 2 + 1)), n, d, dtype)


def _freqs(k: list, n: int, d, dtype):
    fd = _freq_dtype(dtype)
    out = _promotion.asarray(k, dtype=fd)
    if not n:
        return out
    if isinstance(d, (builtins.int, builtins.float)):
        return lax.mul(out, 1.0 / (d * n))
    return _elementwise.divide(out, lax.mul(lax.convert_element_type(_promotion.asarray(d), fd), float(n)))


def _shift(x, axes, sign: int):
    x = x if _is_array(x) else _promotion.asarray(x)
    shape = get_aval(x).shape
    if axes is None:
        axes = tuple(range(len(shape)))
    elif isinstance(axes, int):
        axes = (axes,)
    shifts = tuple(sign * (shape[canonical_axis(ax, len(shape))] // 2) for ax in axes)
    return _manipulation.roll(x, shifts, tuple(axes))


def fftshift(x, axes=None) -> Array:
    """Move the zero frequency to the center (roll by n // 2 along axes)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None) -> Array:
    """Inverse of fftshift (roll by -(n // 2) along axes)."""
    return _shift(x, axes, -1)
