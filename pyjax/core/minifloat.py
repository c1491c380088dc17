"""Float formats of 8 bits and fewer (float8_e4m3fn, float4_e2m1fn, float6_e3m2fn, float8_e8m0fnu, ...):
their layout table and pure-Python codecs; and bfloat16's bit codec (float32's top half, rounded).

Stored as one byte (the format's bits, the sign its top bit), computed in float32 and rounded once
to the format (round half to even), as ml_dtypes does. "ieee" formats overflow to infinity; "fn"
formats have no infinity: overflow, infinity and NaN give NaN (0x7f with the sign); "fnuz" formats
have one NaN (0x80) and no -0; "finite" formats (4 and 6 bits) have neither: overflow saturates and
NaN gives a zero of the other sign (ml_dtypes' rule); "e8m0" is unsigned powers of two 2**(c-127)
with 0xff the NaN (zero and negatives too), rounding ties up.
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
    "float4_e2m1fn": (2, 1, 1, "finite"),
    "float6_e2m3fn": (2, 3, 1, "finite"),
    "float6_e3m2fn": (3, 2, 3, "finite"),
    "float8_e8m0fnu": (8, 0, 127, "e8m0"),
}


def width(name: str) -> int:
    """The number of bits of format `name` (the sign bit, if any, is the top one)."""
    e, m, _, rule = FORMATS[name]
    return e + m + (rule != "e8m0")


def sign_bit(name: str) -> int:
    """The sign bit of format `name` (0 for the unsigned e8m0)."""
    return 0 if FORMATS[name][3] == "e8m0" else 1 << (width(name) - 1)


def nan_code(name: str) -> int:
    """The positive NaN byte of a format (ml_dtypes': 0x7f for fn, 0x80 for fnuz, the quiet NaN for ieee,
    0xff for e8m0; finite formats have none: the negative zero a positive NaN converts to)."""
    e, m, _, rule = FORMATS[name]
    if rule in ("fnuz", "finite"):
        return sign_bit(name)
    if rule == "e8m0":
        return 0xFF
    return 0x7F if rule == "fn" else ((1 << e) - 1) << m | 1 << (m - 1)


def overflow_code(name: str) -> int:
    """The byte (without sign) a value beyond the largest finite one rounds to: NaN (fn, fnuz, e8m0),
    infinity (ieee) or the largest value (finite)."""
    e, m, _, rule = FORMATS[name]
    if rule == "fnuz":
        return 0x80
    if rule in ("fn", "finite", "e8m0"):
        return (1 << width(name)) - 1 - sign_bit(name)  # all ones below the sign
    return ((1 << e) - 1) << m


def encode(x: float, name: str) -> int:
    """The byte of format `name` nearest to x (round half to even)."""
    _, m, bias, rule = FORMATS[name]
    if rule == "e8m0":
        return _encode_e8m0(x)
    sign = sign_bit(name) if math.copysign(1.0, x) < 0 else 0
    if x != x:
        return sign ^ nan_code(name) if rule == "finite" else sign | nan_code(name)
    a = abs(x)
    if a == math.inf:
        return sign | overflow_code(name)
    exp = math.frexp(a)[1] - 1 if a else -bias
    e = max(exp, 1 - bias)  # subnormals share the smallest normal exponent's quantum
    n = round(math.ldexp(a, m - e))  # exact scaling by a power of two; round() ties to even
    code = ((e + bias - 1) << m) + n if exp >= 1 - bias else n
    code = min(code, overflow_code(name))
    return 0 if code == 0 and rule == "fnuz" else sign | code  # fnuz has no -0


def _encode_e8m0(x: float) -> int:
    """float8_e8m0fnu's byte nearest to x (a power of two; ties up, as ml_dtypes): 0xff for NaN, zero,
    negatives and overflow; values below 2**-127 round to it."""
    if not 0 < x < math.inf:
        return 0xFF
    mant, exp = math.frexp(x)  # x = mant * 2**exp, 0.5 <= mant < 1
    return min(max(exp + 126 + (mant >= 0.75), 0), 0xFF)


def decode(code: int, name: str) -> float:
    """The float value of a byte of format `name`."""
    e, m, bias, rule = FORMATS[name]
    if rule == "e8m0":
        return math.nan if code == 0xFF else math.ldexp(1.0, code - 127)
    sb = sign_bit(name)
    sign = -1.0 if code & sb else 1.0
    c = code & (sb - 1)
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
    return max(decode(c, name) for c in range(1 << width(name)) if decode(c, name) < math.inf)


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
