"""lax.fft and FftType, and the transforms behind them and jnp.fft.

A transform along one axis works on the real and imaginary parts as separate real arrays, by a
recursive four-step (Cooley-Tukey) split into dense DFT matmuls of at most 64 points, or, for
lengths without a useful factor, Bluestein's chirp-z convolution through a power-of-two FFT.
Everything is made of differentiable, batchable primitives, so jit, vmap and grad (with JAX's
complex convention) come for free, and the backends only ever see real arithmetic. Real
transforms (rfft, irfft) are the complex ones plus slicing and Hermitian mirroring.
"""

from __future__ import annotations

import enum
import math
import operator
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from pyjax.core import dtypes, hooks
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._util import _arr

__all__ = ["FftType", "fft"]


# --- the transform on real parts ----------------------------------------------------------------
#
# A length-n DFT along the last axis, n = n1 * n2 (four-step / Cooley-Tukey): view x as (n1, n2)
# with j = n2 j1 + j2, transform along j1, multiply by twiddles w_n^(j2 k1), transform along j2;
# the output index is k = k1 + n1 k2. Lengths up to _SMALL_DFT are a matmul with the DFT matrix
# (re and im stacked, so one real matmul per step), longer factors recurse, and lengths with no
# useful factor (large primes) go through Bluestein's chirp-z convolution of a power-of-two size.
# So the work is O(n log n) in a handful of large matmuls: few kernels to compile, and the
# backends' matmul paths do the arithmetic.

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
    return hooks.op("asarray")(values, dtype)


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


# --- one-axis transforms (numpy's norm modes), shared with jnp.fft ---------------------------------


def _scale(n: int, norm: str, inverse: bool) -> float:
    if norm == "ortho":
        return 1.0 / math.sqrt(n) if n else 1.0
    if (norm == "backward") == inverse:
        return 1.0 / n if n else 1.0
    return 1.0


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


def _c1(x, n: int, axis: int, inverse: bool, norm: str):
    """Complex-to-complex transform of complex x along one axis (resized to n)."""
    x = _resize(x, n, axis)
    nd = get_aval(x).ndim
    last = nd - 1
    moved = lax.moveaxis_lax(x, axis, last) if axis != last else x
    re, im = _fft_last(lax.real(moved), lax.imag(moved), 1 if inverse else -1)
    s = _scale(n, norm, inverse)
    if s != 1.0:
        re, im = lax.mul(re, s), lax.mul(im, s)
    out = lax.complex(re, im)
    return lax.moveaxis_lax(out, last, axis) if axis != last else out


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


def _as_complex(x):
    """x as a complex array (real inputs other than float32/float64 go through the default float)."""
    d = get_aval(x).dtype
    if d.kind == "c":
        return x
    rd = d if d.name in ("float32", "float64") else dtypes.default_float()
    return lax.convert_element_type(x, dtypes.complex_dtype(rd))


# --- fft ------------------------------------------------------------------------------------------


class FftType(enum.IntEnum):
    """Kind of lax.fft: complex forward/inverse, real-to-complex, complex-to-real."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self) -> str:
        return str(self.value)


def _fft_type(t: Any) -> FftType:
    if isinstance(t, FftType):
        return t
    if isinstance(t, str):
        try:
            return FftType[t.upper()]
        except KeyError:
            raise ValueError(f"Unknown FFT type '{t}'") from None
    try:
        return FftType(t)
    except ValueError:
        raise TypeError(f"Unknown FFT type value '{t}'") from None


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """XLA's Fft over the len(fft_lengths) minor axes (IFFT normalized by 1/n, like numpy's ifft)."""
    t = _fft_type(fft_type)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    x = _arr(x)
    aval = get_aval(x)
    shape, nl = aval.shape, len(lengths)
    if aval.ndim < nl:
        raise ValueError(
            f"FFT input shape {shape} must have at least as many input dimensions as fft_lengths {lengths}."
        )
    axes = tuple(range(aval.ndim - nl, aval.ndim))
    if t is FftType.RFFT:
        if aval.dtype.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        if aval.dtype.name not in ("float32", "float64"):
            raise ValueError(f"RFFT input must be float32 or float64, got {aval.dtype.name}")
    if t is FftType.IRFFT:
        want = lengths[:-1] + (lengths[-1] // 2 + 1,) if nl else ()
    else:
        want = lengths
    if shape[aval.ndim - nl :] != want:
        if t is FftType.IRFFT:
            raise ValueError(
                f"IRFFT input shape {shape} minor dimensions must be equal to the fft_lengths {lengths} "
                f"with the last one halved plus one: {want}"
            )
        raise ValueError(f"FFT input shape {shape} minor dimensions must be equal to fft_lengths {lengths}")
    if t in (FftType.FFT, FftType.IFFT):
        x = _as_complex(x)
        for ax in axes:
            x = _c1(x, shape[ax], ax, t is FftType.IFFT, "backward")
        return x
    if t is FftType.RFFT:
        if not nl:
            return _as_complex(x)
        x = _r1(x, lengths[-1], axes[-1], "backward")
        for ax in axes[:-1]:
            x = _c1(x, shape[ax], ax, False, "backward")
        return x
    x = _as_complex(x)
    if not nl:
        return lax.real(x)
    for ax, n in zip(axes[:-1], lengths[:-1]):
        x = _c1(x, n, ax, True, "backward")
    return _ir1(x, lengths[-1], axes[-1], "backward")
