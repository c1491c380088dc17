"""Bit packing and counting: packbits, unpackbits and bitwise_count.

Composed from pyjax.numpy and lax, so every backend runs them.
"""

from __future__ import annotations

import builtins
from typing import Any

from pyjax.core import dtypes
from pyjax.lax import lax

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None
from pyjax.numpy import _manipulation, _pad
from pyjax.numpy._promotion import _check_arraylike, _promote, asarray
from pyjax.numpy._reductions import sum as _sum

_uint8 = dtypes.SCALAR_TYPES["uint8"]  # jnp.uint8

__all__ = ["packbits", "unpackbits"]


def _check_bitorder(bitorder: str) -> None:
    if bitorder not in ("little", "big"):
        raise ValueError("'order' must be either 'little' or 'big'")


def packbits(a: Any, axis: int | None = None, bitorder: str = "big") -> Any:
    """Pack the truth values of an integer or boolean array into uint8 bytes, 8 per byte."""
    _check_arraylike("packbits", a)
    a = asarray(a)
    if a.dtype.kind not in "iub":
        raise TypeError("Expected an input array of integer or boolean data type")
    _check_bitorder(bitorder)
    bits = (a != 0).astype(_uint8)
    if axis is None:
        bits, axis = bits.ravel(), 0
    axis = axis % builtins.max(bits.ndim, 1)
    bits = _manipulation.moveaxis(bits, axis, -1) if bits.ndim else bits.reshape(1)
    n = bits.shape[-1]
    pad = -n % 8
    if pad:
        bits = _pad.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, pad)])
    bits = bits.reshape(bits.shape[:-1] + ((n + pad) // 8, 8))
    weights = [1 << (7 - i) for i in range(8)] if bitorder == "big" else [1 << i for i in range(8)]
    packed = _sum(bits * asarray(weights, _uint8), axis=-1, dtype=_uint8)
    return _manipulation.moveaxis(packed, -1, axis)


def unpackbits(a: Any, axis: int | None = None, count: int | None = None, bitorder: str = "big") -> Any:
    """Unpack the bits of a uint8 array into 0/1 uint8 values (8 per byte), optionally `count` of them."""
    _check_arraylike("unpackbits", a)
    a = asarray(a)
    if a.dtype.name != "uint8":
        raise TypeError("Expected an input array of unsigned byte data type")
    _check_bitorder(bitorder)
    shifts = list(range(7, -1, -1)) if bitorder == "big" else list(range(8))
    bits = (a[..., None] >> asarray(shifts, _uint8)) & _uint8(1)
    if axis is None:
        bits, axis = bits.ravel(), 0
    else:
        axis = axis % builtins.max(a.ndim, 1)
        bits = _manipulation.moveaxis(bits, -1, axis + 1)
        bits = bits.reshape(bits.shape[:axis] + (-1,) + bits.shape[axis + 2 :])
    if count is not None:
        n = bits.shape[axis]
        keep = count if count >= 0 else builtins.max(n + count, 0)
        if keep <= n:
            bits = _manipulation.moveaxis(_manipulation.moveaxis(bits, axis, 0)[:keep], 0, axis)
        else:
            widths = [(0, 0)] * bits.ndim
            widths[axis] = (0, keep - n)
            bits = _pad.pad(bits, widths)
    return bits


def bitwise_count(x, /):
    """Number of 1 bits in |x| for each element (uint8, as in JAX)."""
    (x,) = _promote("bitwise_count", x)
    d = x.dtype
    if d.kind not in "iub":
        raise TypeError(f"bitwise_count requires integer or bool input, got {d.name}.")
    if d.kind == "b":
        return lax.convert_element_type(x, dtypes.uint8)
    if d.kind == "i":
        x = lax.abs(x)
    u = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}[d.bits]
    x = lax.bitcast_convert_type(x, u) if d.kind == "i" else x
    count = lax.full_like(x, 0)
    for k in range(d.bits):
        count = lax.add(count, lax.bitwise_and(lax.shift_right_logical(x, lax.full_like(x, k)), lax.full_like(x, 1)))
    return lax.convert_element_type(count, dtypes.uint8)


__all__ += ["bitwise_count"]
