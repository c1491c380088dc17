"""Integer and float bit manipulation: mulhi (high half of a product) and reduce_precision (round
to fewer exponent / mantissa bits).
"""

from __future__ import annotations

from typing import Any

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.lax._lazy_numpy import _jnp

__all__ = ["mulhi", "reduce_precision"]


# --- integer and float bit manipulation ---------------------------------------------------------


def mulhi(x: Any, y: Any, /) -> Any:
    """The high half of the double-width integer product x * y (per element, same integer dtype)."""
    jnp = _jnp()
    x, y = jnp.asarray(x), jnp.asarray(y)
    if x.dtype != y.dtype or x.dtype.kind not in "iu":
        raise TypeError(
            f"mulhi requires two integer arguments of the same dtype, got {x.dtype.name} and {y.dtype.name}"
        )
    bits = x.dtype.itemsize * 8
    half = bits // 2
    u = dtypes.canonicalize(f"uint{bits}")
    a, b = lax.convert_element_type(x, u), lax.convert_element_type(y, u)
    mask = jnp.asarray((1 << half) - 1, u)
    sh = jnp.asarray(half, u)
    a_lo, a_hi = a & mask, (a >> sh)
    b_lo, b_hi = b & mask, (b >> sh)
    lo_lo = a_lo * b_lo
    mid1 = a_hi * b_lo + (lo_lo >> sh)
    mid2 = a_lo * b_hi + (mid1 & mask)
    hi = a_hi * b_hi + (mid1 >> sh) + (mid2 >> sh)
    if x.dtype.kind == "u":
        return hi
    # signed: subtract the contributions of the two's-complement sign bits
    zero = jnp.asarray(0, u)
    hi = hi - jnp.where(x < 0, b, zero) - jnp.where(y < 0, a, zero)
    return lax.convert_element_type(hi, x.dtype)


_FLOAT_LAYOUT = {"float16": (5, 10, "uint16"), "bfloat16": (8, 7, "uint16"), "float32": (8, 23, "uint32")}


_FLOAT_LAYOUT["float64"] = (11, 52, "uint64")


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round a float array to the precision of a float with the given exponent and mantissa bits.

    Mantissas round to nearest even; exponents out of the narrower range give inf or signed zero.
    """
    jnp = _jnp()
    x = jnp.asarray(operand)
    if x.dtype.kind != "f":
        raise TypeError(
            f"reduce_precision does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of floating."
        )
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got {exponent_bits}, {mantissa_bits}"
        )
    src_exp, src_man, uname = _FLOAT_LAYOUT[x.dtype.name]
    u = dtypes.canonicalize(uname)
    nbits = u.itemsize * 8

    def c(v):
        return jnp.asarray(v, u)

    bits = lax.bitcast_convert_type(x, u)
    if mantissa_bits < src_man:
        drop = src_man - mantissa_bits
        last = 1 << drop
        bias = ((bits & c(last)) >> c(drop)) + c((last >> 1) - 1)
        bits = (bits + bias) & c(((1 << nbits) - 1) ^ (last - 1))
    if exponent_bits < src_exp:
        exp_mask = ((1 << src_exp) - 1) << src_man
        src_bias = (1 << (src_exp - 1)) - 1
        new_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & c(exp_mask)
        sign = bits & c(1 << (nbits - 1))
        over = exponent > c((src_bias + new_bias) << src_man)
        under = exponent <= c((src_bias - new_bias) << src_man)
        bits = jnp.where(over, sign | c(exp_mask), jnp.where(under, sign, bits))
    out = lax.bitcast_convert_type(bits, x.dtype)
    if mantissa_bits < src_man:
        out = jnp.where(jnp.isnan(x), x, out)
    return out
