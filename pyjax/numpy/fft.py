"""jax.numpy.fft: discrete Fourier transforms with numpy's arguments (n/s, axes, norm) over the
one-axis transforms of pyjax.lax.fft (real arithmetic on (re, im) parts, made of lax primitives);
hfft/ihfft are irfft/rfft of the conjugate, plus fftfreq/fftshift.
"""

from __future__ import annotations

import builtins
import operator

from pyjax._typing import Array
from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.lax.fft import _as_complex, _c1, _ir1, _r1
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

# --- argument handling ----------------------------------------------------------------------------


_NORMS = ("backward", "ortho", "forward")


def _check_norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    return norm


def _swap_norm(norm: str) -> str:
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def _array(a, name: str):
    if _is_array(a):
        return a
    _promotion._check_arraylike(f"jax.numpy.fft.{name}", a)
    return _promotion.asarray(a)


def _complex_input(a, name: str):
    return _as_complex(_array(a, name))


def _real_input(a, name: str):
    a = _array(a, name)
    d = get_aval(a).dtype
    if d.kind == "c":
        raise ValueError(f"only real valued inputs supported for {name}")
    rd = d if d.name in ("float32", "float64") else dtypes.default_float()
    return lax.convert_element_type(a, rd) if d is not rd else a


def _one_axis(name: str, a, axis, norm, real: bool = False):
    """(x, axis, norm) of a one-axis transform: the input checked (real or complex), the axis made
    non-negative, norm checked."""
    norm = _check_norm(norm)
    x = (_real_input if real else _complex_input)(a, name)
    return x, canonical_axis(axis, get_aval(x).ndim), norm


def _some_axes(name: str, a, s, axes, norm, real: bool = False):
    """(x, axes, s, norm) of an n-axis transform: the input checked (real or complex), axes and
    sizes made consistent, norm checked."""
    norm = _check_norm(norm)
    x = (_real_input if real else _complex_input)(a, name)
    axes, s = _axes_and_sizes(name, get_aval(x).shape, s, axes)
    return x, axes, s, norm


def _length(n, default: int) -> int:
    if n is None:
        return default
    n = operator.index(n)
    if n < 1:
        raise ValueError("Shape should be positive.")
    return n


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
    x, ax, norm = _one_axis("fft", a, axis, norm)
    return _c1(x, _length(n, get_aval(x).shape[ax]), ax, False, norm)


def ifft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional inverse discrete Fourier transform."""
    x, ax, norm = _one_axis("ifft", a, axis, norm)
    return _c1(x, _length(n, get_aval(x).shape[ax]), ax, True, norm)


def _cn(name: str, a, s, axes, norm, inverse: bool):
    x, axes, s, norm = _some_axes(name, a, s, axes, norm)
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


def rfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """One-dimensional FFT of a real signal: the n // 2 + 1 non-negative frequency terms."""
    x, ax, norm = _one_axis("rfft", a, axis, norm, real=True)
    return _r1(x, _length(n, get_aval(x).shape[ax]), ax, norm)


def irfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """Inverse of rfft: a real signal of length n (default 2 (m - 1)) from m frequency terms."""
    x, ax, norm = _one_axis("irfft", a, axis, norm)
    return _ir1(x, _length(n, 2 * (get_aval(x).shape[ax] - 1)), ax, norm)


def rfftn(a, s=None, axes=None, norm: str | None = None) -> Array:
    """N-dimensional FFT of a real array: rfft over the last axis, full FFTs over the others."""
    return _rn("rfftn", a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm: str | None = None) -> Array:
    """Two-dimensional FFT of a real array."""
    return _rn("rfft2", a, s, axes, norm)


def _rn(name, a, s, axes, norm):
    x, axes, s, norm = _some_axes(name, a, s, axes, norm, real=True)
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
    x, axes, s, norm = _some_axes(name, a, s, axes, norm)
    shape = get_aval(x).shape
    if not axes:
        return lax.real(x)
    if s is None:
        s = tuple(shape[ax] for ax in axes[:-1]) + (2 * (shape[axes[-1]] - 1),)
    for ax, n in zip(axes[:-1], s[:-1]):
        x = _c1(x, n, ax, True, norm)
    return _ir1(x, _length(s[-1], 1), axes[-1], norm)


def hfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """FFT of a signal with Hermitian symmetry (given by its first half): a real spectrum."""
    _promotion._check_arraylike("conjugate", a)  # JAX's hfft conjugates first; its error names that
    x, ax, norm = _one_axis("hfft", a, axis, norm)
    n = _length(n, 2 * (get_aval(x).shape[ax] - 1))
    return _ir1(lax.conj(x), n, ax, _swap_norm(norm))


def ihfft(a, n=None, axis: int = -1, norm: str | None = None) -> Array:
    """Inverse of hfft: the half spectrum (conjugated rfft) of a real signal."""
    x, ax, norm = _one_axis("rfft", a, axis, norm, real=True)  # JAX names rfft in ihfft's message too
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
    if not _is_array(x):
        _promotion._check_arraylike("fftshift" if sign > 0 else "ifftshift", x)
        x = _promotion.asarray(x)
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
