"""Integer and float bit manipulation: mulhi (high half of a product), reduce_precision (round
to fewer exponent / mantissa bits) and total_order_compare (XLA's TOTALORDER comparisons, the meaning
of JAX's eq_to_p, le_to_p and lt_to_p).
"""

from __future__ import annotations

from typing import Any

from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._util import _arr
from pyjax.lax.shapes import broadcast_shapes, broadcast_to

__all__ = ["mulhi", "reduce_precision"]

_TOTAL_ORDER = {"eq": lax.eq, "le": lax.le, "lt": lax.lt}


# --- integer and float bit manipulation ---------------------------------------------------------


def mulhi(x: Any, y: Any, /) -> Any:
    """The high half of the double-width integer product x * y (per element, same integer dtype)."""
    x, y = _arr(x), _arr(y)
    if x.dtype != y.dtype or x.dtype.kind not in "iu":
        raise TypeError(
            f"mulhi requires two integer arguments of the same dtype, got {x.dtype.name} and {y.dtype.name}"
        )
    shape = broadcast_shapes(get_aval(x).shape, get_aval(y).shape)
    x, y = broadcast_to(x, shape), broadcast_to(y, shape)
    bits = x.dtype.itemsize * 8
    half = bits // 2
    u = dtypes.canonicalize(f"uint{bits}")
    a, b = lax.convert_element_type(x, u), lax.convert_element_type(y, u)
    mask = lax.full((), (1 << half) - 1, u)
    sh = lax.full((), half, u)
    add, mul, low, high = lax.add, lax.mul, lax.bitwise_and, lax.shift_right_logical
    a_lo, a_hi = low(a, mask), high(a, sh)
    b_lo, b_hi = low(b, mask), high(b, sh)
    lo_lo = mul(a_lo, b_lo)
    mid1 = add(mul(a_hi, b_lo), high(lo_lo, sh))
    mid2 = add(mul(a_lo, b_hi), low(mid1, mask))
    hi = add(add(mul(a_hi, b_hi), high(mid1, sh)), high(mid2, sh))
    if x.dtype.kind == "u":
        return hi
    # signed: subtract the contributions of the two's-complement sign bits
    zero = lax.full(shape, 0, u)
    hi = lax.sub(lax.sub(hi, lax.select(lax.lt(x, 0), b, zero)), lax.select(lax.lt(y, 0), a, zero))
    return lax.convert_element_type(hi, x.dtype)


_FLOAT_LAYOUT = {"float16": (5, 10, "uint16"), "bfloat16": (8, 7, "uint16"), "float32": (8, 23, "uint32")}


_FLOAT_LAYOUT["float64"] = (11, 52, "uint64")


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round a float array to the precision of a float with the given exponent and mantissa bits.

    Mantissas round to nearest even; exponents out of the narrower range give inf or signed zero.
    """
    x = _arr(operand)
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
        return lax.full((), v, u)

    band, bor = lax.bitwise_and, lax.bitwise_or
    bits = lax.bitcast_convert_type(x, u)
    if mantissa_bits < src_man:
        drop = src_man - mantissa_bits
        last = 1 << drop
        bias = lax.add(lax.shift_right_logical(band(bits, c(last)), c(drop)), c((last >> 1) - 1))
        bits = band(lax.add(bits, bias), c(((1 << nbits) - 1) ^ (last - 1)))
    if exponent_bits < src_exp:
        exp_mask = ((1 << src_exp) - 1) << src_man
        src_bias = (1 << (src_exp - 1)) - 1
        new_bias = (1 << (exponent_bits - 1)) - 1
        exponent = band(bits, c(exp_mask))
        sign = band(bits, c(1 << (nbits - 1)))
        over = lax.gt(exponent, c((src_bias + new_bias) << src_man))
        under = lax.le(exponent, c((src_bias - new_bias) << src_man))
        bits = lax.select(over, bor(sign, c(exp_mask)), lax.select(under, sign, bits))
    out = lax.bitcast_convert_type(bits, x.dtype)
    if mantissa_bits < src_man:
        out = lax.select(lax.ne(x, x), x, out)  # NaNs keep their payload
    return out


def _total_order_key(x):
    """A signed integer with the order of x's floats as XLA's TOTALORDER: -NaN < -inf < ... < -0 < +0 < ...
    < inf < NaN (the sign bit flips the other bits of negative values); integers are their own keys."""
    d = get_aval(x).dtype
    if d.kind != "f":
        return x
    i = dtypes.canonicalize(f"int{d.itemsize * 8}")
    k = lax.bitcast_convert_type(x, i)
    flip = lax.full((), (1 << (d.itemsize * 8 - 1)) - 1, i)
    return lax.select(lax.lt(k, lax.full((), 0, i)), lax.bitwise_xor(k, flip), k)


def total_order_compare(direction: str, x: Any, y: Any) -> Any:
    """x `direction` y (eq, le or lt) under XLA's total order of floats (-0 < +0; NaNs equal to themselves)."""
    x, y = _arr(x), _arr(y)
    shape = broadcast_shapes(get_aval(x).shape, get_aval(y).shape)
    x, y = broadcast_to(x, shape), broadcast_to(y, shape)
    return _TOTAL_ORDER[direction](_total_order_key(x), _total_order_key(y))
