"""pyjax.scipy.fft: jax.scipy.fft's discrete cosine transforms (type 2: dct, idct, dctn, idctn)."""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import pyjax.numpy as jnp
from pyjax import lax

__all__ = ["dct", "dctn", "idct", "idctn"]


def _inexact(x):
    """x as an array of an inexact dtype (integers and bools become the default float)."""
    x = jnp.asarray(x)
    return x.astype(jnp.result_type(x, 0.0))


def _check(name: str, type: int, norm) -> None:
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")


def _canon(axis: int, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _resize(x, n: int | None, axis: int):
    """Zero-pad or truncate x along axis to length n."""
    if n is None:
        return x
    n = operator.index(n)
    cur = x.shape[axis]
    if n < cur:
        return lax.slice_in_dim(x, 0, n, axis=axis)
    if n > cur:
        widths = [(0, 0)] * x.ndim
        widths[axis] = (0, n - cur)
        return jnp.pad(x, widths)
    return x


def _along(v, axis: int, ndim: int):
    """Reshape a 1-D array so that it broadcasts along `axis` of an ndim-array."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return jnp.reshape(v, tuple(shape))


def _ortho_scale(n: int, dtype, axis: int, ndim: int):
    """Per-coefficient factor turning a backward-normalised DCT-II into the orthonormal one."""
    f = [1.0 / math.sqrt(4.0 * n)] + [1.0 / math.sqrt(2.0 * n)] * (n - 1)
    return _along(jnp.asarray(f, dtype=dtype), axis, ndim)


def _split_complex(fn, x, *args):
    if jnp.iscomplexobj(x):
        return lax.complex(fn(jnp.real(x), *args), fn(jnp.imag(x), *args))
    return None


def _dct1(x, n, axis: int, norm):
    """DCT-II of a real array along one axis (Makhoul's reordering plus one FFT)."""
    x = _resize(x, n, axis)
    size = x.shape[axis]
    order = [2 * m for m in range((size + 1) // 2)] + [2 * (size - 1 - m) + 1 for m in range((size + 1) // 2, size)]
    v = jnp.take(x, jnp.asarray(order, dtype=jnp.int32), axis=axis)
    spec = jnp.fft.fft(v, axis=axis)
    ang = [-math.pi * k / (2.0 * size) for k in range(size)]
    rdt = jnp.real(spec).dtype
    c = _along(jnp.asarray([math.cos(a) for a in ang], dtype=rdt), axis, x.ndim)
    s = _along(jnp.asarray([math.sin(a) for a in ang], dtype=rdt), axis, x.ndim)
    out = 2 * (jnp.real(spec) * c - jnp.imag(spec) * s)
    if norm == "ortho":
        out = out * _ortho_scale(size, out.dtype, axis, x.ndim)
    return out


def _idct1(x, n, axis: int, norm):
    """Inverse of the DCT-II of a real array along one axis (one inverse FFT)."""
    x = _resize(x, n, axis)
    size = x.shape[axis]
    if norm == "ortho":
        x = x / _ortho_scale(size, x.dtype, axis, x.ndim)
    # mirrored coefficients X[N-k] (X[N] taken as zero) give the imaginary part
    mirrored = jnp.take(x, jnp.asarray([0] + list(range(size - 1, 0, -1)), dtype=jnp.int32), axis=axis)
    mirrored = mirrored * _along(jnp.asarray([0.0] + [1.0] * (size - 1), dtype=x.dtype), axis, x.ndim)
    ang = [math.pi * k / (2.0 * size) for k in range(size)]
    c = _along(jnp.asarray([math.cos(a) for a in ang], dtype=x.dtype), axis, x.ndim)
    s = _along(jnp.asarray([math.sin(a) for a in ang], dtype=x.dtype), axis, x.ndim)
    # V[k] = (X[k] - i X[N-k]) / 2 * exp(i pi k / 2N)
    re = (x * c + mirrored * s) * 0.5
    im = (x * s - mirrored * c) * 0.5
    v = jnp.real(jnp.fft.ifft(lax.complex(re, im), axis=axis))
    order = [j // 2 if j % 2 == 0 else size - 1 - j // 2 for j in range(size)]
    return jnp.take(v, jnp.asarray(order, dtype=jnp.int32), axis=axis)


def _cosine(name: str, one_axis, x, type: int, n: int | None, axis: int, norm: str | None):
    """dct/idct: checks, then `one_axis` on x (on its real and imaginary parts if complex)."""
    _check(name, type, norm)
    x = _inexact(x)
    split = _split_complex(lambda r: _cosine(name, one_axis, r, type, n, axis, norm), x)
    if split is not None:
        return split
    return one_axis(x, n, _canon(axis, x.ndim), norm)


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Discrete cosine transform (type 2) of x along axis, optionally resized to length n."""
    return _cosine("dct", _dct1, x, type, n, axis, norm)


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Inverse discrete cosine transform (of type 2) of x along axis."""
    return _cosine("idct", _idct1, x, type, n, axis, norm)


def _nd_axes(x, s, axes) -> tuple[list[int] | None, tuple[int, ...]]:
    if s is not None:
        try:
            s = [operator.index(v) for v in s]
        except TypeError:
            s = [operator.index(s)]
        if len(s) > x.ndim:
            raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(x.ndim - (len(s) if s is not None else x.ndim), x.ndim))
    else:
        axes = tuple(_canon(a, x.ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in axes: {axes}")
    return s, axes


def _nd(one, name: str, x, type: int, s, axes, norm):
    _check(name, type, norm)
    x = _inexact(x)
    split = _split_complex(lambda r: _nd(one, name, r, type, s, axes, norm), x)
    if split is not None:
        return split
    s, axes = _nd_axes(x, s, axes)
    sizes = dict(zip(axes, s)) if s is not None else {}
    for a in axes:
        x = one(x, sizes.get(a), a, norm)
    return x


def dctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None):
    """Multidimensional DCT (type 2) over axes, optionally resized to shape s."""
    return _nd(_dct1, "dctn", x, type, s, axes, norm)


def idctn(x, type: int = 2, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None):
    """Multidimensional inverse DCT (of type 2) over axes, optionally resized to shape s."""
    return _nd(_idct1, "idctn", x, type, s, axes, norm)
