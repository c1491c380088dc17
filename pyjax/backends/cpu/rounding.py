"""Python numbers rounded to the values a dtype holds (float32/float16/bfloat16/minifloats through their bits,
integers wrapped): what the pure-Python cpu evaluation and its routines apply to every result."""

from __future__ import annotations

import functools
import math
import struct

from pyjax.core import minifloat
from pyjax.core.minifloat import bfloat16_bits

_F32_MAX = 3.4028234663852886e38


def _f32(x: float) -> float:
    if x != x or x in (math.inf, -math.inf):
        return x
    if abs(x) > _F32_MAX:
        # round-to-nearest: values beyond max+half-ulp overflow to inf
        return math.copysign(math.inf, x) if abs(x) >= 3.4028235677973366e38 else math.copysign(_F32_MAX, x)
    return struct.unpack("f", struct.pack("f", x))[0]


def _f16(x: float) -> float:
    try:
        return struct.unpack("e", struct.pack("e", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def _bf16(x: float) -> float:
    return struct.unpack("<f", struct.pack("<I", bfloat16_bits(x) << 16))[0]


def _wrap(bits: int, signed: bool):
    mask = (1 << bits) - 1
    half = 1 << (bits - 1)

    def w(v: int) -> int:
        v &= mask
        return v - (1 << bits) if signed and v >= half else v

    return w


def normalizer(d):
    """Function mapping a Python number to the value representable in dtype d."""
    if d.kind == "f":
        if d.name == "bfloat16":
            return _bf16
        if d.name in minifloat.FORMATS:
            return functools.partial(minifloat.round_to, name=d.name)
        return {4: _f32, 2: _f16}.get(d.itemsize, float)
    if d.kind in "iu":
        return _wrap(d.bits, d.kind == "i")
    return bool
