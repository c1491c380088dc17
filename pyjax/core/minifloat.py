"""8-bit float formats (float8_e4m3fn, float8_e5m2, ...): their layout table and pure-Python codecs;
and bfloat16's bit codec (float32's top half, rounded).

Stored as one byte, computed in float32 and rounded once to the format (round half to even), as
ml_dtypes does. "ieee" formats overflow to infinity; "fn" formats have no infinity: overflow,
infinity and NaN give NaN (0x7f with the sign); "fnuz" formats have one NaN (0x80) and no -0.
Backends without numpy use these codecs; the Wasm and WGSL kernels render the same rules.
"""

from __future__ import annotations

import math
import struct

# name -> (exponent bits, mantissa bits, exponent bias, special values rule)
FORMATS = {
    "float8_e4m3fn": (4, 3, 7, "fn"),
    "float8_e5m2": (5, 2, 15, "ieee"),
    "float8_e4m3fnuz": (4, 3, 8, "fnuz"),
    "float8_e5m2fnuz": (5, 2, 16, "fnuz"),
    "float8_e4m3b11fnuz": (4, 3, 11, "fnuz"),
    "float8_e4m3": (4, 3, 7, "ieee"),
    "float8_e3m4": (3, 4, 3, "ieee"),
}


def nan_code(name: str) -> int:
    """The positive NaN byte of a format (ml_dtypes': 0x7f for fn, 0x80 for fnuz, the quiet NaN for ieee)."""
    e, m, _, rule = FORMATS[name]
    if rule == "fnuz":
        return 0x80
    return 0x7F if rule == "fn" else ((1 << e) - 1) << m | 1 << (m - 1)


def overflow_code(name: str) -> int:
    """The byte (without sign) a value beyond the largest finite one rounds to: NaN (fn, fnuz) or infinity."""
    e, m, _, rule = FORMATS[name]
    if rule == "fnuz":
        return 0x80
    return 0x7F if rule == "fn" else ((1 << e) - 1) << m


def encode(x: float, name: str) -> int:
    """The byte of format `name` nearest to x (round half to even)."""
    _, m, bias, _ = FORMATS[name]
    sign = 0x80 if math.copysign(1.0, x) < 0 else 0
    if x != x:
        return sign | nan_code(name)
    a = abs(x)
    if a == math.inf:
        return sign | overflow_code(name)
    exp = math.frexp(a)[1] - 1 if a else -bias
    e = max(exp, 1 - bias)  # subnormals share the smallest normal exponent's quantum
    n = round(math.ldexp(a, m - e))  # exact scaling by a power of two; round() ties to even
    code = ((e + bias - 1) << m) + n if exp >= 1 - bias else n
    code = min(code, overflow_code(name))
    return 0 if code == 0 and FORMATS[name][3] == "fnuz" else sign | code  # fnuz has no -0


def decode(code: int, name: str) -> float:
    """The float value of a byte of format `name`."""
    e, m, bias, rule = FORMATS[name]
    sign = -1.0 if code & 0x80 else 1.0
    c = code & 0x7F
    ef, mf = c >> m, c & ((1 << m) - 1)
    if (rule == "fn" and c == 0x7F) or (rule == "fnuz" and code == 0x80):
        return math.nan
    if rule == "ieee" and ef == (1 << e) - 1:
        return sign * math.inf if mf == 0 else math.nan
    if ef == 0:
        return sign * math.ldexp(mf, 1 - bias - m)
    return sign * math.ldexp((1 << m) + mf, ef - bias - m)


def largest(name: str) -> float:
    """The largest finite value of format `name`."""
    return max(decode(c, name) for c in range(0x80) if decode(c, name) < math.inf)


def round_to(x: float, name: str) -> float:
    """x rounded to the nearest value of format `name`."""
    return decode(encode(x, name), name)


def bfloat16_bits(v: float) -> int:
    """bfloat16 bit pattern nearest to v: float32 bits rounded half to even, top 16 bits."""
    if v != v:
        return 0x7FC0
    try:
        (bits,) = struct.unpack("<I", struct.pack("<f", v))
    except OverflowError:  # beyond float32: rounds to infinity in bfloat16 too
        return 0xFF80 if v < 0 else 0x7F80
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) & 0xFFFF
