"""jax.image: resize and scale_and_translate as separable resampling.

Each spatial dimension gets an (input size, output size) weight matrix from a 1-D kernel
(triangle, Keys cubic, Lanczos, box/area) evaluated at every input/output pixel-centre pair and
normalised per output pixel; one einsum applies all of them, so values, dtypes and gradients
come from pyjax.numpy on every backend. NEAREST is a gather with indices computed on the host.
"""

from __future__ import annotations

import enum
import math
import operator
import struct
from collections.abc import Callable, Sequence
from typing import Any

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.core.core import Tracer, get_aval
from pyjax.lax import Precision, lax

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resampling method: the kernel that weighs input pixels around each output pixel."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """The method a name denotes ("bilinear" and "triangle" are LINEAR, "bicubic" CUBIC, ...)."""
        method = _ALIASES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_ALIASES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR,
    "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR,
    "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC,
    "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


# --- 1-D kernels of a distance x >= 0 (in input pixels, divided by the filter scale) ----------------
# Each takes `ops`: pyjax.numpy for arrays (traced scales), or _Scalar to build weights on the host.


class _Scalar:
    """The few jnp functions the kernels use, on Python floats."""

    sin = staticmethod(math.sin)
    abs = staticmethod(abs)
    maximum = staticmethod(max)

    @staticmethod
    def where(c, a, b):
        return a if c else b


def _triangle(x, ops):
    return ops.maximum(0.0, 1.0 - ops.abs(x))


def _lanczos(radius: float) -> Callable:
    def kernel(x, ops):
        y = radius * ops.sin(math.pi * x) * ops.sin(math.pi * x / radius)
        out = ops.where(x > 1e-3, y / ops.where(x != 0, math.pi**2 * x * x, 1.0), 1.0)  # sinc(0) = 1
        return ops.where(x > radius, 0.0, out)

    return kernel


def _cubic(a: float) -> Callable:
    """Keys' cubic convolution kernel with parameter a (-0.5: Keys/TF/PIL; -0.75: OpenCV/PyTorch)."""

    def kernel(x, ops):
        near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        return ops.where(x >= 2.0, 0.0, ops.where(x >= 1.0, far, near))

    return kernel


_AREA = object()  # marker: weights are interval overlaps, not a kernel of the distance

# method -> (radius in input pixels, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, _AREA),
}

# weight sums below this are treated as "no input pixel contributes" (output 0), as in JAX
_MIN_WEIGHT_SUM = 1000.0 * 2.0**-23


def _weights(in_size: int, out_size: int, scale, translation, kernel, antialias: bool, radius, edge_padding: bool):
    """The (in_size, out_size) matrix whose column j weighs the input pixels that make output pixel j."""
    dt = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    # downsampling widens the kernel to low-pass filter (antialias); upsampling only interpolates
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    # input coordinate (pixel centres at k + 0.5, shifted by -0.5) of each output pixel's centre
    sample = (jnp.arange(out_size, dtype=dt) + 0.5) * inv_scale - translation * inv_scale - 0.5
    pad = radius if edge_padding else 0  # edge padding is only reached without antialiasing
    taps = jnp.arange(-pad, in_size + pad, dtype=dt)
    if kernel is _AREA:
        lo_out = jnp.arange(out_size, dtype=dt) * inv_scale - translation * inv_scale
        hi_out = lo_out + inv_scale
        lo_in = jnp.arange(in_size, dtype=dt)
        w = jnp.maximum(
            0.0, jnp.minimum(hi_out[None, :], lo_in[:, None] + 1.0) - jnp.maximum(lo_out[None, :], lo_in[:, None])
        )
    else:
        w = kernel(jnp.abs(sample[None, :] - taps[:, None]) / kernel_scale, jnp)
    if edge_padding:  # taps outside the image repeat the edge pixel: fold their weight onto it
        n_taps = in_size + 2 * pad
        fold = [[1.0 if min(max(t - pad, 0), in_size - 1) == i else 0.0 for t in range(n_taps)] for i in range(in_size)]
        w = jnp.matmul(jnp.asarray(fold, dtype=dt), w, precision=Precision.HIGHEST)
    total = jnp.sum(w, axis=0, keepdims=True)
    w = jnp.where(jnp.abs(total) > _MIN_WEIGHT_SUM, w / jnp.where(total != 0, total, 1), 0)
    if not edge_padding:  # output pixels whose centre maps outside the input image are 0
        inside = (sample >= -0.5) & (sample <= in_size - 0.5)
        w = jnp.where(inside[None, :], w, 0)
    return w


def _host_weights(in_size: int, out_size: int, scale: float, kernel, antialias: bool, radius, edge_padding: bool):
    """_weights for a static scale and no translation, computed in Python (float64) on the host: resize
    then costs one einsum on the device instead of a few dozen small kernels per dimension."""
    inv_scale = 1.0 / scale
    kernel_scale = max(inv_scale, 1.0) if antialias else 1.0
    reach = max(radius * kernel_scale, inv_scale) + 1  # every weight is 0 farther away
    cols = []
    for j in range(out_size):
        col = [0.0] * in_size
        s = (j + 0.5) * inv_scale - 0.5
        if edge_padding or -0.5 <= s <= in_size - 0.5:
            lo, hi = math.floor(s - reach), math.ceil(s + reach)
            if not edge_padding:
                lo, hi = max(lo, 0), min(hi, in_size - 1)
            for t in range(lo, hi + 1):
                if kernel is _AREA:
                    v = max(0.0, min(j * inv_scale + inv_scale, t + 1.0) - max(j * inv_scale, float(t)))
                else:
                    v = kernel(abs(s - t) / kernel_scale, _Scalar)
                col[min(max(t, 0), in_size - 1)] += v
            total = sum(col)
            col = [v / total for v in col] if abs(total) > _MIN_WEIGHT_SUM else [0.0] * in_size
        cols.append(col)
    rows = [[cols[j][i] for j in range(out_size)] for i in range(in_size)]
    return jnp.asarray(rows, dtype=dtypes.default_float()).reshape(in_size, out_size)


def _method(fn: str, method: Any) -> ResizeMethod:
    if isinstance(method, str):
        if method not in _ALIASES:
            raise ValueError(f'{fn}: Unknown resize method "{method}"; known: {", ".join(_ALIASES)}')
        return _ALIASES[method]
    if not isinstance(method, ResizeMethod):
        raise TypeError(f"{fn}: method must be a ResizeMethod or a string, got {method!r}")
    return method


def _shape(fn: str, shape: Any, image) -> tuple:
    """The output shape as a tuple of ints, with one entry per dimension of image."""
    try:
        if isinstance(shape, Tracer):
            raise TypeError
        out = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(
            f"{fn}: shapes must be 1D sequences of concrete values of integer type, got {shape!r}."
        ) from None
    if len(out) != image.ndim:
        raise ValueError(
            f"{fn}: shape must have length equal to the number of dimensions of x;  {out} vs {image.shape}"
        )
    return out


def _asarray(fn: str, x):
    if isinstance(x, (jnp.ndarray, Tracer)):
        return x
    if isinstance(x, (list, tuple)):
        raise TypeError(f"{fn}: expected an array, got {type(x).__name__} {x!r}; wrap it in jnp.array")
    return jnp.asarray(x)


def _inexact(x):
    """x, converted to the default float dtype if it is integer or boolean (keeping weak type)."""
    av = get_aval(x)
    if dtypes.is_inexact(av.dtype):
        return x
    return lax._convert(x, dtypes.default_float(), av.weak_type)


def _apply(
    image, out_shape: tuple, dims: Sequence[int], scales, translations, method: ResizeMethod, antialias, precision
):
    """Contract each dimension in dims with its weight matrix, all in one einsum."""
    if not dims:
        return image
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method is ResizeMethod.CUBIC_PYTORCH
    nd = image.ndim
    operands: list = [image, list(range(nd))]
    out_idx = list(range(nd))
    for i, d in enumerate(dims):
        m, n = image.shape[d], out_shape[d]
        if isinstance(scales[i], float) and translations[i] == 0.0:
            w = _host_weights(m, n, scales[i], kernel, antialias, radius, edge_padding)
        else:
            w = _weights(m, n, scales[i], translations[i], kernel, antialias, radius, edge_padding)
        operands += [w.astype(image.dtype), [d, nd + i]]
        out_idx[d] = nd + i
    return jnp.einsum(*operands, out_idx, precision=precision)


def _f32(v: float) -> float:
    """v rounded to float32, to compute nearest-neighbour indices exactly as JAX does."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _resize_nearest(image, shape: tuple):
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m == n:
            continue
        idx = [int(math.floor(_f32(_f32(_f32(k + 0.5) * m) / n))) for k in range(n)]
        image = jnp.take(image, jnp.asarray(idx, dtype=jnp.int32), axis=d)
    return image


def resize(
    image: Any,
    shape: Sequence[int],
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = Precision.HIGHEST,
) -> Any:
    """Resample image to shape (every dimension, batch and channel included) with the given method.

    Integer images become floating point except with NEAREST, which keeps the input dtype."""
    image = _asarray("resize", image)
    shape = _shape("resize", shape, image)
    method = _method("resize", method)
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    dims = [d for d in range(image.ndim) if image.shape[d] != shape[d]]
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _apply(image, shape, dims, scales, [0.0] * len(dims), method, antialias, precision)


def scale_and_translate(
    image: Any,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale: Any,
    translation: Any,
    method: str | ResizeMethod,
    antialias: bool = True,
    precision: Any = Precision.HIGHEST,
) -> Any:
    """Resample image so input location x lands at x * scale + translation along each spatial dim.

    Output pixels whose centre maps outside the input are 0; scale and translation may be traced."""
    fn = "scale_and_translate"
    image = _asarray(fn, image)
    shape = _shape(fn, shape, image)
    method = _method(fn, method)
    if method is ResizeMethod.NEAREST:
        raise ValueError(f"{fn}: nearest neighbor resampling is not supported (only resize has it)")
    image = _inexact(image)
    dims = [operator.index(d) for d in spatial_dims]
    for d in dims:
        if not -image.ndim <= d < image.ndim:
            raise ValueError(f"{fn}: axis {d} is out of bounds for array of dimension {image.ndim}")
    dims = [d % image.ndim for d in dims]
    scale, translation = _asarray(fn, scale), _asarray(fn, translation)
    dt = jnp.result_type(scale, translation)
    if not dtypes.is_inexact(dt):
        dt = dtypes.default_float()
    scale, translation = scale.astype(dt), translation.astype(dt)
    for name, v in (("scale", scale), ("translation", translation)):
        if v.ndim == 0:
            raise TypeError(f"{fn}: {name} must be a 1-D array with one entry per spatial dimension, got a scalar")
        if v.ndim != 1 or v.shape[0] != len(dims):
            raise ValueError(
                f"{fn}: {name} must have one entry per spatial dimension ({len(dims)}), got shape {v.shape}"
            )
    return _apply(image, shape, dims, scale, translation, method, antialias, precision)
