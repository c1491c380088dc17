"""pyjax.scipy.signal: jax.scipy.signal (n-d convolution and correlation, detrend, stft/istft,
welch and csd spectral estimates), built from pyjax.numpy and lax ops."""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Literal

import pyjax.numpy as jnp
from pyjax import lax

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]

ModeString = Literal["full", "same", "valid"]


def _inexact(*xs):
    """Arrays promoted to one common inexact dtype (integers and bools become the default float)."""
    arrs = [jnp.asarray(x) for x in xs]
    dt = jnp.result_type(*arrs, 0.0)
    return [a.astype(dt) for a in arrs]


def _canon(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _slices(x, starts: Sequence[int], sizes: Sequence[int]):
    """Static slice x[starts : starts + sizes] over all dimensions."""
    return lax.slice(x, tuple(starts), tuple(s + n for s, n in zip(starts, sizes)))


# ---------------------------------------------------------------- convolution


def _out_window(shape1, shape2, mode: str) -> tuple[list[int], list[int]]:
    """Start and size, within the full convolution, of the 'full'/'same'/'valid' output."""
    full = [a + b - 1 for a, b in zip(shape1, shape2)]
    if mode == "full":
        return [0] * len(full), full
    if mode == "same":
        return [(b - 1) // 2 for b in shape2], list(shape1)
    return [min(a, b) - 1 for a, b in zip(shape1, shape2)], [abs(a - b) + 1 for a, b in zip(shape1, shape2)]


def _check_sizes(shape1, shape2, message: str) -> None:
    if not (all(a >= b for a, b in zip(shape1, shape2)) or all(a <= b for a, b in zip(shape1, shape2))):
        raise ValueError(message)


def _real_conv(big, small, pads, precision):
    """Full-padded n-d correlation of big with the flipped small (both real), via lax conv."""
    kernel = jnp.flip(small)
    out = lax.conv_general_dilated(big[None, None], kernel[None, None], (1,) * big.ndim, pads, precision=precision)
    return out[0, 0]


def _convolve_nd(in1, in2, mode: str, precision=None):
    """Direct n-d convolution of two same-rank arrays, 'full', 'same' or 'valid'."""
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {in1.shape} and {in2.shape}.")
    in1, in2 = _inexact(in1, in2)
    _check_sizes(in1.shape, in2.shape, "One input must be smaller than the other in every dimension.")
    starts, sizes = _out_window(in1.shape, in2.shape, mode)
    big, small = (in1, in2) if all(a >= b for a, b in zip(in1.shape, in2.shape)) else (in2, in1)
    pads, crop = [], []
    for nb, ns, st, sz in zip(big.shape, small.shape, starts, sizes):
        lo = ns - 1 - st
        hi = sz + ns - 1 - nb - lo
        pads.append((max(lo, 0), max(hi, 0)))  # negative padding becomes a crop afterwards
        crop.append(max(lo, 0) - lo)
    if jnp.iscomplexobj(big):
        br, bi, sr, si = jnp.real(big), jnp.imag(big), jnp.real(small), jnp.imag(small)

        def conv(a, b):
            return _real_conv(a, b, pads, precision)

        out = lax.complex(conv(br, sr) - conv(bi, si), conv(br, si) + conv(bi, sr))
    else:
        out = _real_conv(big, small, pads, precision)
    return _slices(out, crop, sizes) if any(crop) or tuple(sizes) != out.shape else out


def fftconvolve(in1, in2, mode: ModeString = "full", axes: Sequence[int] | None = None):
    """Convolve two n-d arrays with FFTs, over all axes or only `axes` (others must match)."""
    in1, in2 = _inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    if axes is None:
        axes = tuple(range(in1.ndim))
    else:
        axes = tuple(sorted({_canon(a, in1.ndim) for a in (axes if isinstance(axes, Sequence) else (axes,))}))
        mapped = [i for i in range(in1.ndim) if i not in axes]
        if any(in1.shape[i] != in2.shape[i] for i in mapped):
            raise ValueError(f"mapped axes must have same shape; got {in1.shape=} {in2.shape=} {axes=}")
    s1 = [in1.shape[a] for a in axes]
    s2 = [in2.shape[a] for a in axes]
    if mode == "valid":
        _check_sizes(s1, s2, "For 'valid' mode, One input must be at least as large as the other in every dimension.")
    full = [a + b - 1 for a, b in zip(s1, s2)]
    if all(a == 1 or b == 1 for a, b in zip(s1, s2)):
        conv = in1 * in2
    elif jnp.iscomplexobj(in1):
        conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full, axes) * jnp.fft.fftn(in2, full, axes), full, axes)
    else:
        conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full, axes) * jnp.fft.rfftn(in2, full, axes), full, axes)
    if mode == "full":
        out = full
    elif mode == "same":
        out = s1
    else:
        out = [abs(a - b) + 1 for a, b in zip(s1, s2)]
    starts = [0] * conv.ndim
    sizes = list(conv.shape)
    for a, f, o in zip(axes, full, out):
        starts[a], sizes[a] = (f - o) // 2, o
    return _slices(conv, starts, sizes)


def convolve(in1, in2, mode: ModeString = "full", method: str = "auto", precision=None):
    """Convolve two n-d arrays; method 'direct'/'auto' (lax conv) or 'fft'."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method in ("direct", "auto"):
        return _convolve_nd(in1, in2, mode, precision=precision)
    raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def correlate(in1, in2, mode: ModeString = "full", method: str = "auto", precision=None):
    """Cross-correlate two n-d arrays (convolution with the flipped, conjugated in2)."""
    in2 = jnp.asarray(in2)
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name: str, in1, in2, boundary: str, fillvalue) -> None:
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if jnp.ndim(in1) != 2 or jnp.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode: ModeString = "full", boundary: str = "fill", fillvalue: float = 0, precision=None):
    """2-d convolution (boundary='fill' with fillvalue 0 only)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate2d(in1, in2, mode: ModeString = "full", boundary: str = "fill", fillvalue: float = 0, precision=None):
    """2-d cross-correlation (boundary='fill' with fillvalue 0 only)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape))
    same_shape = in1.shape == in2.shape
    # reversed: correlating in2 against in1 (used when in1 is the smaller input)
    reverse = (mode == "valid" and swap and not same_shape) or (mode == "full" and swap)
    if mode not in ("full", "same", "valid"):
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if reverse:
        out = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision=precision)
        return jnp.conj(out) if mode == "full" else out
    return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision=precision))


# ---------------------------------------------------------------- detrend


def _breakpoints(bp, n: int) -> list[int]:
    try:
        extra = [operator.index(b) for b in bp]
    except TypeError:
        extra = [operator.index(bp)]
    points = sorted({0, n, *extra})
    if points[0] < 0 or points[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    return points


def _remove_line(seg):
    """seg (n, ...) minus its least-squares straight line along axis 0."""
    n = seg.shape[0]
    centred = seg - jnp.mean(seg, axis=0, keepdims=True)
    if n < 2:
        return centred
    t = [k - (n - 1) / 2.0 for k in range(n)]
    norm = sum(v * v for v in t)
    tc = jnp.reshape(jnp.asarray(t, dtype=jnp.real(seg).dtype), (n,) + (1,) * (seg.ndim - 1))
    slope = jnp.sum(tc * centred, axis=0, keepdims=True) / norm
    return centred - tc * slope


def detrend(data, axis: int = -1, type: str = "linear", bp: int | Sequence[int] = 0, overwrite_data: None = None):
    """Remove a linear (piecewise, split at breakpoints bp) or constant trend along axis."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    (x,) = _inexact(data)
    if type == "constant":
        return x - jnp.mean(x, axis=axis, keepdims=True)
    axis = _canon(axis, x.ndim)
    n = x.shape[axis]
    points = _breakpoints(bp, n)
    x = jnp.moveaxis(x, axis, 0)
    parts = [_remove_line(x[lo:hi]) for lo, hi in zip(points[:-1], points[1:])]
    out = jnp.concatenate(parts, axis=0) if len(parts) > 1 else parts[0]
    return jnp.moveaxis(out, 0, axis)


# ---------------------------------------------------------------- spectral analysis


def _complex_dtype(dt):
    """The complex dtype matching an inexact dtype (complex dtypes map to themselves)."""
    return jnp.result_type(dt, 1j)


def _hann(n: int, dtype):
    """Periodic Hann window of length n."""
    if n == 1:
        return jnp.ones((1,), dtype=dtype)
    return (jnp.sin(jnp.linspace(0.0, math.pi, n, endpoint=False)) ** 2).astype(dtype)


def _named_window(window, n: int, dtype):
    if isinstance(window, str) and window == "hann":
        return _hann(n, dtype)
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use {window=}") from err
    return jnp.asarray([float(v) for v in get_window(window, n)], dtype=dtype)


def _window(window, nperseg: int | None, length: int, dtype):
    """(window array, segment length) from a window name/tuple or an explicit 1-D window."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using nperseg={length}")
            n = length
        return _named_window(window, n, dtype), n
    win = jnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _pad_last(x, lo: int, hi: int, **kwargs):
    widths = [(0, 0)] * (x.ndim - 1) + [(lo, hi)]
    return jnp.pad(x, widths, **kwargs)


def _odd_ext(x, n: int):
    """Odd extension of x by n points at both ends of the last axis."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, which is {x.shape[-1] - 1}."
        )
    first, last = x[..., :1], x[..., -1:]
    left = 2 * first - jnp.flip(x[..., 1 : n + 1], axis=-1)
    right = 2 * last - jnp.flip(x[..., -(n + 1) : -1], axis=-1)
    return jnp.concatenate([left, x, right], axis=-1)


_BOUNDARIES: dict = {
    "even": lambda x, n: _pad_last(x, n, n, mode="reflect"),
    "odd": _odd_ext,
    "constant": lambda x, n: _pad_last(x, n, n, mode="edge"),
    "zeros": lambda x, n: _pad_last(x, n, n),
    None: lambda x, n: x,
}


def _segments_fft(x, win, detrend_func: Callable, nperseg: int, noverlap: int, nfft: int, sides: str):
    """FFT of the detrended, windowed segments of x's last axis: shape (..., nseg, nfreq)."""
    length = x.shape[-1]
    if nperseg == 1 and noverlap == 0:
        segs = x[..., None]
    else:
        step = nperseg - noverlap
        idx = [[s + k for k in range(nperseg)] for s in range(0, length - nperseg + 1, step)]
        segs = jnp.take(x, jnp.asarray(idx, dtype=jnp.int32), axis=-1)
    segs = detrend_func(segs)
    segs = win * segs
    if sides == "twosided":
        return jnp.fft.fft(segs, n=nfft)
    return jnp.fft.rfft(jnp.real(segs), n=nfft)


def _spectral(
    x,
    y,
    fs,
    window,
    nperseg,
    noverlap,
    nfft,
    detrend_type,
    return_onesided,
    scaling,
    axis,
    mode,
    boundary=None,
    padded=False,
):
    """Shared windowed-FFT machinery of stft, csd and welch: (freqs, times, result)."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}")
    x = jnp.asarray(x)
    axis = _canon(axis, x.ndim)
    if y is None:
        (x,) = _inexact(x)
        yv = x
        outer = tuple(d for i, d in enumerate(x.shape) if i != axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        x, yv = _inexact(x, y)
        if x.ndim != yv.ndim:
            raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {yv.ndim}).")
        try:
            outer = jnp.broadcast_shapes(
                tuple(d for i, d in enumerate(x.shape) if i != axis),
                tuple(d for i, d in enumerate(yv.shape) if i != axis),
            )
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = jnp.real(jnp.zeros((), result_dtype)).dtype

    if nperseg is not None:
        nperseg = int(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    nfft = nperseg if nfft is None else int(nfft)

    if y is None and x.size == 0:
        z = jnp.zeros(x.shape, freq_dtype)
        return z, z, jnp.zeros(x.shape, result_dtype)
    if y is not None and (x.size == 0 or yv.size == 0):
        shape = outer[:axis] + (min(x.shape[axis], yv.shape[axis]),) + outer[axis:]
        z = jnp.zeros(shape, freq_dtype)
        return z, z, jnp.zeros(shape, result_dtype)

    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        yv = jnp.moveaxis(yv, axis, -1)
        if x.shape[-1] < yv.shape[-1]:
            x = _pad_last(x, 0, yv.shape[-1] - x.shape[-1])
        elif yv.shape[-1] < x.shape[-1]:
            yv = _pad_last(yv, 0, x.shape[-1] - yv.shape[-1])
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg - noverlap

    if boundary is not None:
        x = _BOUNDARIES[boundary](x, nperseg // 2)
        if y is not None:
            yv = _BOUNDARIES[boundary](yv, nperseg // 2)
    if padded:
        nadd = (-(x.shape[-1] - nperseg) % nstep) % nperseg
        x = _pad_last(x, 0, nadd)
        if y is not None:
            yv = _pad_last(yv, 0, nadd)

    if isinstance(detrend_type, str):

        def detrend_func(d):
            return detrend(d, axis=-1, type=detrend_type)

    elif callable(detrend_type):

        def detrend_func(d):
            return jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)

    elif not detrend_type:

        def detrend_func(d):
            return d

    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    scale = jnp.asarray(scale).astype(_complex_dtype(jnp.asarray(scale).dtype))

    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and (jnp.iscomplexobj(x) or (y is not None and jnp.iscomplexobj(yv))):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False")
    if sides == "twosided":
        freqs = jnp.fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp.fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype)

    result = _segments_fft(x, win, detrend_func, nperseg, noverlap, nfft, sides)
    if y is not None:
        result = jnp.conj(result) * _segments_fft(yv, win, detrend_func, nperseg, noverlap, nfft, sides)
    elif mode == "psd":
        result = jnp.conj(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        nf = result.shape[-1]
        end = nf if nfft % 2 else nf - 1
        factor = [2.0 if 1 <= k < end else 1.0 for k in range(nf)]
        result = result * jnp.asarray(factor, dtype=freq_dtype)

    times = jnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nperseg - noverlap, dtype=freq_dtype) / fs
    if boundary is not None:
        times = times - (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)
    return freqs, times, jnp.moveaxis(result, -1, axis)


def stft(
    x,
    fs=1.0,
    window: str = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: bool = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
):
    """Short-time Fourier transform: (frequencies, segment times, STFT of x)."""
    return _spectral(
        x,
        None,
        fs,
        window,
        nperseg,
        noverlap,
        nfft,
        detrend,
        return_onesided,
        "spectrum",
        axis,
        "stft",
        boundary,
        padded,
    )


def _median_bias(n: int) -> float:
    """Bias of the median of n chi-squared(2) periodogram values, relative to the mean."""
    return 1.0 + sum(1.0 / (k + 1) - 1.0 / k for k in range(2, n, 2))


def csd(
    x,
    y,
    fs=1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
):
    """Cross power spectral density of x and y by Welch's method: (frequencies, Pxy)."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, "psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = jnp.asarray(_median_bias(pxy.shape[-1])).astype(pxy.dtype)
                if jnp.iscomplexobj(pxy):
                    pxy = lax.complex(jnp.median(jnp.real(pxy), axis=-1), jnp.median(jnp.imag(pxy), axis=-1))
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = jnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(
    x,
    fs=1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: str = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
):
    """Power spectral density of x by Welch's method: (frequencies, Pxx)."""
    freqs, pxx = csd(
        x,
        None,
        fs=fs,
        window=window,
        nperseg=nperseg,
        noverlap=noverlap,
        nfft=nfft,
        detrend=detrend,
        return_onesided=return_onesided,
        scaling=scaling,
        axis=axis,
        average=average,
    )
    return freqs, jnp.real(pxx)


def _overlap_add(frames, step: int):
    """Sum frames (..., n, length) placed step apart: shape (..., step * (n - 1) + length)."""
    *batch, n, length = frames.shape
    chunks = -(-length // step)
    total = step * (n - 1) + length
    frames = _pad_last(frames, 0, chunks * step - length)
    frames = jnp.reshape(frames, (*batch, n, chunks, step))
    out = None
    for c in range(chunks):
        part = frames[..., c, :]  # (..., n, step): block c of every frame
        widths = [(0, 0)] * len(batch) + [(c, chunks - 1 - c), (0, 0)]
        part = jnp.pad(part, widths)
        out = part if out is None else out + part
    out = jnp.reshape(out, (*batch, (n + chunks - 1) * step))
    return out[..., :total]


def istft(
    Zxx,
    fs=1.0,
    window: str = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
):
    """Inverse short-time Fourier transform by weighted overlap-add: (times, x)."""
    Zxx = jnp.asarray(Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = _canon(freq_axis, Zxx.ndim)
    time_axis = _canon(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(_complex_dtype(Zxx.dtype))
    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
    nperseg_int = int(nperseg or n_default)
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft_int = n_default + (1 if input_onesided and nperseg_int == n_default + 1 else 0)
    else:
        nfft_int = int(nfft)
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")
    noverlap_int = int(noverlap or nperseg_int // 2)
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
        Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
    inv = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    xsubs = inv(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]  # (..., frame length, frames)

    if isinstance(window, (str, tuple)):
        win = _named_window(window, nperseg_int, xsubs.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs = xsubs * jnp.sum(win)
    win = jnp.reshape(win, (1,) * (xsubs.ndim - 2) + (win.shape[0], 1))
    x = _overlap_add(jnp.swapaxes(xsubs * win, -2, -1), nstep)
    win_sq = jnp.repeat(win * win, xsubs.shape[-1], axis=-1)
    norm = _overlap_add(jnp.swapaxes(win_sq, -2, -1), nstep)
    if boundary:
        half = nperseg_int // 2
        x = x[..., half:-half]
        norm = norm[..., half:-half]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        if freq_axis < time_axis:
            time_axis -= 1
        x = jnp.moveaxis(x, -1, time_axis)
    times = jnp.arange(x.shape[0], dtype=jnp.real(jnp.zeros((), x.dtype)).dtype) / fs
    return times, x
