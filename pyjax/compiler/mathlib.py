"""Elementwise math written once: each non-core function as a decomposition into core scalar ops.

A backend renders core ops only (arithmetic, comparisons, where, floor, sqrt, casts, bitcasts,
integer and bit ops) plus whatever native math it declares; `expand` rewrites every other
elementwise function of a kernel (exp, log, tanh, ...) into core ops through the table
`DECOMPOSITIONS`, so each backend inherits all of them and a vectorizing backend renders the
same decomposition as SIMD lanes.

The float32 algorithms are branch-free (both sides of a `where` are computed: GPUs and SIMD
lanes run them anyway): range reduction by k ln2 with a two-part ln2, exponent/mantissa split
from the bits (subnormals included), minimax polynomials (relative error fits, rounded to f32,
fitted ranges noted below). They use only + - * / (each rounded once), floor, sqrt and
integer/bit operations, never exact-cancellation tricks such as (a + b) - a that loose float
compilers fold, and test NaN with the core `isnan`. Measured max error in
tests/test_mathlib_ir.py: within 3e-7 relative of the float64 value (contract 2e-6).
float16/bfloat16 are computed in float32 and rounded once; float64 is left to the backend
(its native helpers) until decompositions with float64 coefficients exist.
"""

from __future__ import annotations

from collections.abc import Callable

from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, Node
from pyjax.core import dtypes

__all__ = ["DECOMPOSITIONS", "expand", "expand_kernel"]

F32, I32 = dtypes.float32, dtypes.int32


class V:
    """A scalar expression with Python operators; numbers become constants of its dtype."""

    __slots__ = ("n",)

    def __init__(self, n: Node):
        self.n = n

    def _c(self, o) -> Node:
        return o.n if isinstance(o, V) else ir.const(o, self.n.dtype)

    def _op(self, op: str, o, rev: bool = False) -> V:
        a, b = (self._c(o), self.n) if rev else (self.n, self._c(o))
        return V(ir.alu(op, a, b))

    def __add__(self, o):
        return self._op("add", o)

    def __radd__(self, o):
        return self._op("add", o, True)

    def __sub__(self, o):
        return self._op("sub", o)

    def __rsub__(self, o):
        return self._op("sub", o, True)

    def __mul__(self, o):
        return self._op("mul", o)

    def __rmul__(self, o):
        return self._op("mul", o, True)

    def __truediv__(self, o):
        return self._op("div", o)

    def __rtruediv__(self, o):
        return self._op("div", o, True)

    def __neg__(self):
        return V(ir.alu("neg", self.n))

    def __lt__(self, o):
        return self._op("lt", o)

    def __le__(self, o):
        return self._op("le", o)

    def __gt__(self, o):
        return self._op("gt", o)

    def __ge__(self, o):
        return self._op("ge", o)

    def eq(self, o) -> V:
        return self._op("eq", o)

    def __and__(self, o):
        return self._op("and", o)

    def __or__(self, o):
        return self._op("or", o)

    def __xor__(self, o):
        return self._op("xor", o)

    def __invert__(self):
        return V(ir.alu("not", self.n))


def where(c: V, a, b, dtype: dtypes.DType = F32) -> V:
    """a where c else b (numbers take the dtype of the other branch, else `dtype`)."""
    if not isinstance(a, V):
        a = V(ir.const(a, b.n.dtype if isinstance(b, V) else dtype))
    if not isinstance(b, V):
        b = V(ir.const(b, a.n.dtype))
    return V(ir.where(c.n, a.n, b.n))


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


def bits(x: V) -> V:
    """The bits of a float32 as int32 (masked values stay non-negative: signed compares are
    the cheap ones on SIMD hardware)."""
    return V(ir.bitcast(x.n, I32))


def from_bits(u: V) -> V:
    return V(ir.bitcast(u.n, F32))


def to(x: V, dtype: dtypes.DType) -> V:
    return V(ir.cast(x.n, dtype))


def madd(a: V, b, c) -> V:
    """a * b + c: one `madd` node (fused or not, the backend's choice) where the backend declares
    "madd" native, else a multiply and an add."""
    b = b if isinstance(b, V) else V(ir.const(b, a.n.dtype))
    if "madd" in _native:
        return V(ir.alu("madd", a.n, b.n, b._c(c)))
    return a * b + c


def poly(z: V, coeffs: list[float]) -> V:
    """c0 + z (c1 + z (c2 + ...)) by Horner's rule."""
    out = V(ir.const(coeffs[-1], z.n.dtype))
    for c in reversed(coeffs[:-1]):
        out = madd(z, out, c)
    return out


def copysign(x: V, s: V) -> V:
    return from_bits((bits(x) & 0x7FFFFFFF) | (bits(s) & 0x80000000))


def xorsign(x: V, s: V) -> V:
    """x with its sign flipped where s is negative (-0 too): odd functions keep f(-0) = -0."""
    return from_bits(bits(x) ^ (bits(s) & 0x80000000))


# ---- constants (f32-exact) ----------------------------------------------------------------

_LN2_HI = 0.693145751953125  # ln 2 to 16 bits: k * _LN2_HI is exact for |k| < 256
_LN2_LO = 1.428606765330187e-06
_LN2 = 0.6931471824645996
_LOG2E = 1.4426950216293335
_SQRT2 = 1.4142135381698608
_INF = float("inf")
_NAN = float("nan")

# exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2: relative error 3e-9.
_EXP_P = [0.4999999403953552, 0.1666652113199234, 0.04166838899254799, 0.008368714712560177, 0.0013814589474350214]
# ln(1+f) = 2s + s^3 Q(s^2), s = f/(2+f), |s| <= 0.1716: relative error 5e-12.
_LOG_Q = [0.6666666269302368, 0.4000033736228943, 0.2853720784187317, 0.2358430176973343]


# erf(x) = x E(x^2), |x| <= 1.
_ERF_E = [1.128379225730896, -0.37612637877464294, 0.11283782124519348, -0.0268654003739357]
_ERF_E += [0.005220945458859205, -0.0008482827106490731, 0.0001125693233916536, -9.641468750487547e-06]
# erfc(x) exp(x^2): on [0.5, 1.5] in (x - 1) (6e-10), on [1.5, 2.5] in (x - 2) (5e-10),
# and x erfc(x) exp(x^2) on [2.5, 10.1] in 1/x^2 (1.4e-9).
_ERFC_A = [0.42758357524871826, -0.2732120156288147, 0.15437151491641998, -0.07922699302434921]
_ERFC_A += [0.03757401183247566, -0.0166618749499321, 0.006950917188078165, -0.002765652723610401]
_ERFC_A += [0.0011373399756848812, -0.0004058303020428866]
_ERFC_B = [0.25539568066596985, -0.10679645836353302, 0.04180275276303291, -0.01546076126396656]
_ERFC_B += [0.00544075109064579, -0.0018298830837011337, 0.0005921095726080239, -0.00019420712487772107]
_ERFC_B += [5.8113022532779723e-05]
_ERFC_C = [0.5641895532608032, -0.2820891737937927, 0.4226931631565094, -1.0396288633346558]
_ERFC_C += [3.2711548805236816, -10.149112701416016, 23.14360809326172, -26.026094436645508]


# ---- exponentials -------------------------------------------------------------------------


def pow2(k: V) -> V:
    """2**k for integer-valued float32 k in [-126, 127]: k + 127 + 1.5 * 2**23 holds k + 127 in
    its low bits; times 2**23 (mod 2**32) moves them into the exponent field."""
    return from_bits(bits(k + 12583039.0) * 8388608)


def ldexp(p: V, k: V) -> V:
    """p * 2**k (k integer-valued) in two exact-scale steps: subnormal and inf results round once."""
    kc = clamp(k, -252.0, 254.0)
    k1 = floor(kc * 0.5)
    return (p * pow2(k1)) * pow2(kc - k1)


def _expm1_kernel(r: V) -> V:
    """expm1(r) for |r| <= 0.35."""
    return madd(r * r, poly(r, _EXP_P), r)


def _reduce_ln2(x: V) -> tuple[V, V]:
    """(k, r) with x = k ln2 + r, |r| <= ln2/2, k integer-valued (k * _LN2_HI exact)."""
    k = floor(madd(x, _LOG2E, 0.5))  # a tie may go either way
    return k, madd(k, -_LN2_LO, madd(k, -_LN2_HI, x))


def exp(x: V) -> V:
    k, r = _reduce_ln2(clamp(x, -104.0, 89.0))
    k1 = floor(k * 0.5)  # 2**k as 2**k1 * 2**(k - k1): one rounding, into subnormals or inf
    y = ((1.0 + _expm1_kernel(r)) * pow2(k1)) * pow2(k - k1)
    return where(isnan(x), x, y)


def exp2(x: V) -> V:
    xc = clamp(x, -152.0, 130.0)
    k = floor(xc + 0.5)
    y = ldexp(1.0 + _expm1_kernel((xc - k) * _LN2), k)
    return where(isnan(x), x, y)


def expm1(x: V) -> V:
    k, r = _reduce_ln2(clamp(x, -104.0, 89.0))
    s = pow2(clamp(k, -30.0, 126.0))
    t = pow2(V(ir.alu("max", k.n, ir.const(126.0, F32))) - 126.0)  # 2**(k - 126) past 2**126, else 1
    # 2**k expm1(r) + (2**k - 1): 2**k - 1 is exact, no cancellation worse than 2x
    y = (s * _expm1_kernel(r) + (s - 1.0)) * t
    return where(isnan(x) | x.eq(0.0), x, y)  # expm1(-0) = -0


def tanh(x: V) -> V:
    # em / (em + 2) with em = expm1(2|x|); tanh rounds to 1 from 9.1 on, so the scale 2**k
    # (k <= 27) needs none of expm1's range handling
    a = 2.0 * clamp(fabs(x), 0.0, 9.1)
    k, r = _reduce_ln2(a)
    s = pow2(k)
    em = s * _expm1_kernel(r) + (s - 1.0)
    return where(isnan(x), x, xorsign(em / (em + 2.0), x))


def logistic(x: V) -> V:
    return 1.0 / (1.0 + exp(-x))  # as JAX: 0 once exp(-x) overflows (x < -88.7); NaN passes


def sinh(x: V) -> V:
    # beyond |x| = 9, e^-|x| is below half an ulp of e^|x|; exp(|x|/2)^2 / 2 overflows no sooner
    ax = fabs(x)
    em = expm1(clamp(ax, 0.0, 9.0))
    h = exp(0.5 * ax)
    return xorsign(where(ax < 9.0, 0.5 * (em + em / (em + 1.0)), (0.5 * h) * h), x)


def cosh(x: V) -> V:
    ax = fabs(x)
    e = exp(clamp(ax, 0.0, 9.0))
    h = exp(0.5 * ax)
    return where(ax < 9.0, 0.5 * (e + 1.0 / e), (0.5 * h) * h)


# ---- error function ----------------------------------------------------------------------


def _erf_kernel(x: V) -> V:
    return x * poly(x * x, _ERF_E)


def hi12(x: V) -> V:
    """x with its 12 leading significant bits: products of two such numbers are exact."""
    return from_bits(bits(x) & -4096)


def _erfc_tail(x: V) -> V:
    """erfc(x) for x >= 0.5: exp(-x^2) R(x), one polynomial whose coefficients are picked per
    interval. exp(-x^2) = exp(-xh^2) exp((xh - x)(xh + x)) with xh = x to 12 bits: xh^2 is
    exact, so the rounding of x^2 never reaches the exponent."""
    x = clamp(x, 0.5, 10.1)
    mid, far = x >= 1.5, x >= 2.5
    t = where(far, 1.0 / (x * x), x - where(mid, 2.0, 1.0))
    n = len(_ERFC_A)
    a, b, c = (cs + [0.0] * (n - len(cs)) for cs in (_ERFC_A, _ERFC_B, _ERFC_C))
    coeffs = [where(far, ci, where(mid, bi, ai)) for ai, bi, ci in zip(a, b, c)]
    r = coeffs[-1]
    for ci in reversed(coeffs[:-1]):
        r = madd(t, r, ci)
    r = where(far, r / x, r)
    xh = hi12(x)
    return where(x >= 10.1, 0.0, (r * exp((xh - x) * (xh + x))) * exp(-(xh * xh)))


def erf(x: V) -> V:
    ax = fabs(x)
    y = where(ax < 1.0, _erf_kernel(x), copysign(1.0 - _erfc_tail(ax), x))
    return where(isnan(x), x, y)


def erfc(x: V) -> V:
    tail = _erfc_tail(fabs(x))
    y = where(x >= 0.5, tail, where(x > -1.0, 1.0 - _erf_kernel(x), 2.0 - tail))
    return where(isnan(x), x, y)


# ---- logarithms ---------------------------------------------------------------------------


def _log1p_kernel(f: V) -> V:
    """log(1 + f) for |f| <= 0.415, f exact."""
    s = f / (2.0 + f)
    z = s * s
    return madd(s * z, poly(z, _LOG_Q), 2.0 * s)


def _frexp_sqrt2(x: V) -> tuple[V, V]:
    """(e, m - 1) with x = 2**e m, m in [sqrt(1/2), sqrt(2)), for finite x > 0 (subnormals too:
    their bits, converted as an integer, are the normal number x * 2**149)."""
    b0 = bits(x) & 0x7FFFFFFF
    sub = b0 < 0x00800000
    b = where(sub, bits(to(b0, F32)), b0)
    e = to(b & 0x7F800000, F32) * 2.0**-23 - where(sub, 276.0, 127.0)
    m = from_bits((b & 0x007FFFFF) | 0x3F800000)
    big = m > _SQRT2
    return e + where(big, 1.0, 0.0), where(big, m * 0.5, m) - 1.0


def _log_special(x: V, v: V) -> V:
    """NaN for x < 0 or NaN, -inf for +-0, x for +inf; else v."""
    a = bits(x) & 0x7FFFFFFF
    r = where(x.eq(_INF), x, v)
    return where(a.eq(0), -_INF, where((x < 0.0) | (a > 0x7F800000), _NAN, r))


def _log_of(u: V, f: V, exact: V, scale: float = _LN2, extra: V | float = 0.0) -> V:
    """log(u) * scale / ln2 + extra, where `exact` holds log(1 + f) with f exact (f = u - 1 there)
    instead of splitting u: one polynomial serves both sides of log1p-like selections."""
    e, m1 = _frexp_sqrt2(u)
    e, m1 = where(exact, 0.0, e), where(exact, f, m1)
    p = _log1p_kernel(m1)
    if scale == _LN2:  # e * _LN2_HI is exact
        y = madd(e, _LN2_HI, madd(e, _LN2_LO, p))
    else:
        y = madd(p, _LOG2E, e)
    y = where(exact, p, y)  # p itself keeps log1p(-0) = -0
    return _log_special(u, y if isinstance(extra, float) and extra == 0.0 else y + extra)


def log(x: V) -> V:
    return _log_of(x, x, V(ir.const(False, dtypes.bool_)))


def log2(x: V) -> V:
    return _log_of(x, x, V(ir.const(False, dtypes.bool_)), scale=1.0)


def log1p(x: V) -> V:
    # |x| < 0.2928: x itself is exact for the kernel; elsewhere 1 + x rounds by <= 2.3e-7 relative
    return _log_of(1.0 + x, x, fabs(x) < 0.2928)


def asinh(x: V) -> V:
    # a > 2: log(2a + 1/(sqrt(a^2 + 1) + a)) (+ ln2 past 2**28, where that is log(2a)); else
    # log1p(a + a^2 / (1 + sqrt(1 + a^2)))
    a = fabs(x)
    big = a > 268435456.0
    t = a * a
    v = a + t / (1.0 + sqrt(1.0 + t))
    large = a > 2.0
    u = where(large, where(big, a, 2.0 * a + 1.0 / (sqrt(t + 1.0) + a)), 1.0 + v)
    r = _log_of(u, v, ~large & (v < 0.2928), extra=where(big, _LN2, 0.0))
    return copysign(r, x)


def acosh(x: V) -> V:
    big = x > 268435456.0
    large = x > 2.0
    t = x - 1.0
    v = t + sqrt(2.0 * t + t * t)
    u = where(large, where(big, x, 2.0 * x - 1.0 / (x + sqrt(x * x - 1.0))), 1.0 + v)
    r = _log_of(u, v, ~large & (v < 0.2928), extra=where(big, _LN2, 0.0))
    return where(x < 1.0, _NAN, r)


def atanh(x: V) -> V:
    # |x| = 1 gives log1p(inf) = inf, |x| > 1 log1p(< -1) = NaN: IEEE division does the cases
    a = fabs(x)
    u = where(a < 0.5, 2.0 * a + 2.0 * a * a / (1.0 - a), 2.0 * a / (1.0 - a))
    return copysign(0.5 * log1p(u), x)


# op -> float32 builder (arguments and result as V)
DECOMPOSITIONS: dict[str, Callable[..., V]] = {
    "exp": exp,
    "exp2": exp2,
    "expm1": expm1,
    "log": log,
    "log2": log2,
    "log1p": log1p,
    "tanh": tanh,
    "logistic": logistic,
    "sinh": sinh,
    "cosh": cosh,
    "asinh": asinh,
    "acosh": acosh,
    "atanh": atanh,
    "erf": erf,
    "erfc": erfc,
}

_VIA_F32 = ("float32", "float16", "bfloat16")
_native: frozenset = frozenset()  # the capabilities of the expansion in progress


def expand(root: Node, native: frozenset = frozenset(), memo: dict | None = None) -> Node:
    """root with every op of DECOMPOSITIONS (float32, float16, bfloat16) that is not in `native`
    replaced by its decomposition into core ops. float16/bfloat16 compute in float32.
    `native` may also name "madd" (a * b + c, fused or not): the polynomials then use it."""
    global _native
    memo = {} if memo is None else memo
    _native = native
    for n in ir.walk(root):
        if n in memo:
            continue
        srcs = tuple(memo[s] for s in n.srcs)
        out = n if srcs == n.srcs else ir.node(n.op, n.dtype, srcs, n.arg)
        if n.op in DECOMPOSITIONS and n.op not in native and n.dtype.name in _VIA_F32:
            args = [V(ir.cast(s, F32)) for s in srcs]
            out = ir.cast(DECOMPOSITIONS[n.op](*args).n, n.dtype)
        memo[n] = out
    return memo[root]


def expand_kernel(k: Kernel, native: frozenset = frozenset()) -> Kernel:
    """k with its epilogue and body expanded (the same kernel object if nothing changed)."""
    memo: dict = {}
    epilogue = expand(k.epilogue, native, memo)
    body = expand(k.body, native, memo) if k.body is not None else None
    if epilogue is k.epilogue and body is k.body:
        return k
    return Kernel(k.shape, k.in_dtypes, epilogue, k.reduce_op, k.reduce_axes, body, k.name)
