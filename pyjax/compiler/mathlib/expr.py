"""Scalar expressions for the decompositions: core ops with Python operators, and the few
helpers (where, polynomials, sign and bit tricks) every topic module builds from."""

from __future__ import annotations

import struct
from dataclasses import dataclass
from decimal import Decimal, localcontext

from pyjax.compiler import ir
from pyjax.compiler.ir import Node
from pyjax.core import dtypes

# what every topic module builds from (they import it with `from ...expr import *`)
__all__ = [
    "F32", "F64", "I32", "I64", "U32", "INF", "NAN", "LN2", "LOG2E", "SQRT2",
    "V", "bits", "clamp", "copysign", "fabs", "floor", "from_bits", "isnan", "madd", "pick", "poly",
    "bound", "float_bits", "quotient", "rarely", "sqrt", "to", "where", "xorsign",
]  # fmt: skip

F32, F64, I32, I64, U32 = dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64, dtypes.uint32

# the native capabilities of the expansion in progress (set by mathlib.expand): "madd" there
# makes polynomials use the multiply-add node
native: frozenset = frozenset()


def _operators(op: str):
    """The methods `x op o` and `o op x` (reflected) of `V` for the binary core op `op`."""
    return (lambda self, o: self._op(op, o)), (lambda self, o: self._op(op, o, True))


class V:
    """A scalar expression with Python operators; numbers become constants of its dtype."""

    __slots__ = ("n",)

    def __init__(self, n: Node):
        self.n = n

    @property
    def dtype(self) -> dtypes.DType:
        return self.n.dtype

    @property
    def fmt(self) -> Format:
        return FORMATS[self.n.dtype]

    def _c(self, o) -> Node:
        return o.n if isinstance(o, V) else ir.const(o, self.n.dtype)

    def _op(self, op: str, o, rev: bool = False) -> V:
        a, b = (self._c(o), self.n) if rev else (self.n, self._c(o))
        return V(ir.alu(op, a, b))

    __add__, __radd__ = _operators("add")
    __sub__, __rsub__ = _operators("sub")
    __mul__, __rmul__ = _operators("mul")
    __truediv__, __rtruediv__ = _operators("div")
    __lt__, __le__, __gt__, __ge__ = (_operators(op)[0] for op in ("lt", "le", "gt", "ge"))
    __and__, __or__, __xor__ = (_operators(op)[0] for op in ("and", "or", "xor"))
    __lshift__, __rshift__ = _operators("shl")[0], _operators("shr")[0]

    def __neg__(self):
        return V(ir.alu("neg", self.n))

    def __invert__(self):
        return V(ir.alu("not", self.n))

    def eq(self, o) -> V:
        return self._op("eq", o)


def where(c: V, a, b, dtype: dtypes.DType = F32) -> V:
    """a where c else b (numbers take the dtype of the other branch, else `dtype`)."""
    if not isinstance(a, V):
        a = V(ir.const(a, b.n.dtype if isinstance(b, V) else dtype))
    if not isinstance(b, V):
        b = V(ir.const(b, a.n.dtype))
    return V(ir.where(c.n, a.n, b.n))


def rarely(c: V, a: V, b: V) -> V:
    """a where c else b, c seldom true (a costly exact path): the `where` node is marked "cold",
    so a backend with real branches may compute a only where c holds; others select as usual."""
    return V(ir.node("where", a.n.dtype, (c.n, a.n, b.n), "cold"))


def quotient(a: V, b: V) -> V:
    """a / b where b is finite and nonzero (and a finite): the `div` node is marked "finite", so a
    backend that spells out x / 0 and x / inf (webgpu) may divide plainly; others divide as usual."""
    return V(ir.node("div", a.n.dtype, (a.n, b.n), "finite"))


def unary(op: str, x: V) -> V:
    return V(ir.alu(op, x.n))


def fabs(x: V) -> V:
    return unary("abs", x)


def floor(x: V) -> V:
    return unary("floor", x)


def sqrt(x: V) -> V:
    return unary("sqrt", x)


def isnan(x: V) -> V:
    return unary("isnan", x)


def clamp(x: V, lo: float, hi: float) -> V:
    """x limited to [lo, hi]; NaN stays NaN (the core min/max propagate NaN)."""
    return V(ir.alu("min", ir.alu("max", x.n, ir.const(lo, x.n.dtype)), ir.const(hi, x.n.dtype)))


def bound(x: V, lo: float | None, hi: float) -> V:
    """x limited to [lo, hi] (lo <= 0 <= hi; lo None: no lower limit) by integer compares of its
    bits, cheaper than clamp's NaN-propagating min and max where a GPU compiler assumes no NaN:
    x > hi as signed integers, x < lo as unsigned ones. NaN becomes lo or hi, so only for callers
    that put NaN back themselves."""
    dt = x.dtype
    y = where(bits(x) > float_bits(hi, dt), hi, x)
    if lo is None:
        return y
    u = dtypes.uint64 if dt == F64 else U32
    return where(V(ir.bitcast(x.n, u)) > float_bits(lo, dt) % (1 << (8 * u.itemsize)), lo, y)


def float_bits(v: float, dt: dtypes.DType) -> int:
    """The bits of v in precision dt as a signed integer."""
    return int.from_bytes(struct.pack("<d" if dt == F64 else "<f", v), "little", signed=True)


def bits(x: V) -> V:
    """The bits of a float as the signed integer of its width (masked values stay non-negative:
    signed compares are the cheap ones on SIMD hardware)."""
    return V(ir.bitcast(x.n, x.fmt.int))


def from_bits(u: V) -> V:
    return V(ir.bitcast(u.n, F64 if u.dtype == I64 else F32))


def to(x: V, dtype: dtypes.DType) -> V:
    return V(ir.cast(x.n, dtype))


def madd(a: V, b, c) -> V:
    """a * b + c: one `madd` node (fused or not, the backend's choice) where the backend declares
    "madd" native, else a multiply and an add."""
    b = b if isinstance(b, V) else V(ir.const(b, a.n.dtype))
    if "madd" in native:
        return V(ir.alu("madd", a.n, b.n, b._c(c)))
    return a * b + c


def poly(z: V, coeffs: list[float]) -> V:
    """c0 + z (c1 + z (c2 + ...)) by Horner's rule; float64's long series of one sign as two Horner
    chains in z^2 (even and odd coefficients): half the dependency chain, which a scalar loop
    cannot hide (alternating series keep Horner: their two halves would cancel)."""
    if z.dtype == F64 and len(coeffs) > 6 and (min(coeffs) >= 0 or max(coeffs) <= 0):
        z2 = z * z
        return madd(z, poly(z2, coeffs[1::2]), poly(z2, coeffs[0::2]))
    out = V(ir.const(coeffs[-1], z.n.dtype))
    for c in reversed(coeffs[:-1]):
        out = madd(z, out, c)
    return out


def copysign(x: V, s: V) -> V:
    return from_bits((bits(x) & x.fmt.abs_mask) | (bits(s) & x.fmt.sign))


def xorsign(x: V, s: V) -> V:
    """x with its sign flipped where s is negative (-0 too): odd functions keep f(-0) = -0."""
    return from_bits(bits(x) ^ (bits(s) & x.fmt.sign))


def pick(x: V, table: dict):
    """The entry of a {F32: ..., F64: ...} table (coefficients, thresholds) for x's precision."""
    return table[x.dtype]


# ---- precisions ---------------------------------------------------------------------------

# ln 2 to 60 digits: the two-part splits below are its leading bits and the rounded rest
_LN2_DIGITS = "0.693147180559945309417232121458176568075500134360255254120680009"


def _split_ln2(bits: int) -> tuple[float, float]:
    """(hi, lo): hi = ln 2 to `bits` significant bits (k * hi exact for small integers k),
    lo = the rest rounded."""
    with localcontext() as ctx:
        ctx.prec = 80
        ln2 = Decimal(_LN2_DIGITS)
        hi = float(int(ln2 * 2**bits) / Decimal(2**bits))  # exact: `bits` significant bits
        return hi, float(ln2 - Decimal(hi))


@dataclass(frozen=True)
class Format:
    """A float precision's bit layout and rounded constants."""

    int: dtypes.DType  # the signed integer of the same width (bits, from_bits)
    mant: int  # explicit significand bits
    bias: int  # exponent bias
    ln2_hi: float  # k * ln2_hi exact for every k the exponentials need
    ln2_lo: float

    @property
    def sign(self) -> int:
        return 1 << (self.int.bits - 1)

    @property
    def abs_mask(self) -> int:
        return self.sign - 1

    @property
    def exp_mask(self) -> int:
        return self.abs_mask - self.man_mask

    @property
    def man_mask(self) -> int:
        return (1 << self.mant) - 1

    @property
    def one(self) -> int:
        """The bits of 1.0."""
        return self.bias << self.mant

    @property
    def min_exp(self) -> int:
        """The exponent of the smallest subnormal (2**min_exp)."""
        return 1 - self.bias - self.mant


FORMATS = {
    F32: Format(I32, 23, 127, *_split_ln2(16)),  # k * LN2_HI exact for |k| < 256
    F64: Format(I64, 52, 1023, *_split_ln2(32)),  # k * LN2_HI exact for |k| < 2**21
}

# ---- constants (rounded to nearest in each precision, exact in float32 too) --------------

LN2 = 0.6931471805599453  # f32: rounds to 0.6931471824645996 exactly as before
LOG2E = 1.4426950408889634
SQRT2 = 1.4142135623730951
INF = float("inf")
NAN = float("nan")
