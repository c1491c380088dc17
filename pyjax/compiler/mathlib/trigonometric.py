"""sin, cos, tan and their inverses in float32 and float64: reduction by multiples of pi/2
(Cody-Waite up to 4096 in float32, 2**20 in float64; Payne-Hanek beyond, in 32-bit integer
arithmetic for float32 and exact float64 products of 24-bit pieces for float64), polynomials on
|r| <= pi/4 (float32 minimax, float64 Taylor). float32 sin and cos below 4096 reduce by odd or
even multiples of pi/2 instead, to one polynomial on |r| <= pi/2 (the quadrant form needs two
and a select)."""

from __future__ import annotations

import math

from pyjax.compiler import ir
from pyjax.compiler.mathlib.exponential import pow2
from pyjax.compiler.mathlib.expr import *  # noqa: F403  (the shared vocabulary, expr.__all__)

PIO2_HI = 1.5707963705062866  # f32(pi/2)
PIO2_LO = -4.371138828673793e-08  # pi/2 - PIO2_HI
PI_HI = 3.1415927410125732
PI_LO = -8.742277657347586e-08
PIO4_HI = 0.7853981852531433
PIO4_LO = -2.1855694143368964e-08
TWO_OVER_PI = 0.6366197466850281
# pi/2 = CW[0] + CW[1] + CW[2] + CW[3] (+ 8e-20); the first three have 12 significant bits, so
# k * CW[i] is exact for integer k < 4096 (Cody-Waite reduction for |x| <= 4096).
CW = (1.5703125, 0.0004837512969970703, 7.549533620476723e-08, 2.5633440682570896e-12)
# 2/pi in binary, 32 bits per word, most significant first.
TWO_OVER_PI_WORDS = (0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041, 0xFE5163AB, 0xDEBBC561)
_TWO_OVER_PI_BITS = sum(w << (32 * (7 - i)) for i, w in enumerate(TWO_OVER_PI_WORDS))  # 2/pi * 2**256
# floor(2/pi * 2**(8n)) mod 2**32: the words of 2/pi at byte offsets n (Payne-Hanek's window)
_BYTE_WORDS = {n: (_TWO_OVER_PI_BITS >> (256 - 8 * n)) & 0xFFFFFFFF for n in range(2, 26)}

# sin r = r + r^3 S(r^2) on |r| <= pi/2, sin's own reduction by multiples of pi below 4096
# (float32: minimax, relative error 1.2e-7 in float32 arithmetic)
_SIN_PI_S = [-0.16666659712791443, 0.00833306647837162, -0.00019809602235909551, 2.6057798550027655e-06]
# sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4. float32: minimax, 5e-12
# and 1e-13; float64: the Taylor series to r^17 and r^16 (truncation 1e-19 and 3e-18).
_SIN_S = {
    F32: [-0.1666666716337204, 0.008333329111337662, -0.0001983930415008217, 2.718046516747563e-06],
    F64: [(-1) ** (i + 1) / math.factorial(2 * i + 3) for i in range(7)],
}
_COS_C = {
    F32: [0.0416666679084301, -0.0013888883404433727, 2.479945214872714e-05, -2.720504994613293e-07],
    F64: [(-1) ** i / math.factorial(2 * i) for i in range(2, 9)],
}
# atan u = u + u^3 A(u^2), |u| <= tan(pi/8). float32: minimax, 2e-11; float64: the Taylor
# series to u^43 (truncation 2e-18).
_ATAN_A = {
    F32: [-0.3333333134651184, 0.19999903440475464, -0.14281980693340302, 0.11044347286224365]
    + [-0.08474255353212357, 0.04739707335829735],
    F64: [(-1) ** (n + 1) / (2 * n + 3) for n in range(21)],
}
# asin x = x + x^3 B(x^2), |x| <= 0.5. float32: minimax, 3e-10; float64: the Taylor series to
# x^51 (truncation 2e-18).
_ASIN_B = {
    F32: [0.16666659712791443, 0.07500509917736053, 0.044515710324048996, 0.03181875869631767]
    + [0.01439452450722456, 0.0375814251601696],
    F64: [math.comb(2 * m, m) / (4**m * (2 * m + 1)) for m in range(1, 26)],
}
# pi/2, pi, pi/4 as a rounded head and the rest, per precision
_PIO2 = {F32: (PIO2_HI, PIO2_LO), F64: (1.5707963267948966, 6.123233995736766e-17)}
_PI = {F32: (PI_HI, PI_LO), F64: (3.141592653589793, 1.2246467991473532e-16)}
_PIO4 = {F32: (PIO4_HI, PIO4_LO), F64: (0.7853981633974483, 3.061616997868383e-17)}


# ---- argument reduction -------------------------------------------------------------------


def _reduce_cw(ax: V) -> tuple[V, V]:
    """(r, q): ax = (4j + q) pi/2 + r, |r| <= pi/4, for 0 <= ax <= 4096 (q int32 in 0..3)."""
    k = floor(madd(ax, TWO_OVER_PI, 0.5))
    r = madd(k, -CW[3], madd(k, -CW[2], madd(k, -CW[1], madd(k, -CW[0], ax))))
    return r, bits(k + 12582912.0) & 3  # k + 1.5 * 2**23 holds k in its low mantissa bits


def _mul_hi(a: V, w: V) -> V:
    """The high 32 bits of the 64-bit product of uint32 a < 2**31 and w, from 16-bit halves."""
    a0, a1, w0, w1 = a & 0xFFFF, a >> 16, w & 0xFFFF, w >> 16
    p01, p10 = a0 * w1, a1 * w0
    mid = ((a0 * w0) >> 16) + (p01 & 0xFFFF) + (p10 & 0xFFFF)
    return a1 * w1 + (p01 >> 16) + (p10 >> 16) + (mid >> 16)


def _select4(i: V, items: list) -> V:
    """items[i] for an int32 i in 0..3 (uint32 constants or values)."""
    out = items[0] if isinstance(items[0], V) else V(ir.const(items[0], U32))
    for j in range(1, 4):
        item = items[j] if isinstance(items[j], V) else V(ir.const(items[j], U32))
        out = where(i > j - 1, item, out)
    return out


def _u32(x: V) -> V:
    return V(ir.bitcast(x.n, U32))


def _reduce_big(ax: V) -> tuple[V, V]:
    """(r, q) as _reduce_cw for finite ax > 4096 (Payne-Hanek): ax = m 2**e with a 24-bit m, so
    ax 2/pi mod 4 needs only the bits of 2/pi from 2**(1 - e) on. The window of them that starts
    at the byte the exponent selects is three words, and m is shifted left by the rest (below 8
    bits, m stays under 2**31): the product's top word then holds the quadrant in its two high
    bits and 30 bits of fraction, the next word 32 more (to within 3 units of 2**-62). Integer
    operations only up to the last two conversions (signed ones): float floors, f32 -> u32 and
    u32 -> f32 conversions cost tens of instructions each where they are emulated (SwiftShader),
    and a GPU of lane masks (SwiftShader) pays for this path on every element."""
    u = bits(ax)
    t = (u >> 23) - 120  # the biased exponent - 120
    b = t >> 3  # in [2, 16]
    m = _u32(((u & 0x7FFFFF) | 0x800000) << (t & 7))  # m 2**(e + 30 - 8b), an integer below 2**31
    # words b, b + 4, b + 8 of the table: first each group of four by b mod 4, then the group
    bb = b - 2
    g = bb >> 2
    i = bb & 3
    groups = [_select4(i, [_BYTE_WORDS[2 + 4 * j + i] for i in range(4)]) for j in range(6)]
    w = [_select4(g, groups[k : k + 4]) for k in range(3)]
    lo1 = m * w[1]
    low = lo1 + (((m & 0xFFFF) * (w[2] >> 16)) >> 16) + (((m >> 16) * (w[2] & 0xFFFF)) >> 16) + (m >> 16) * (w[2] >> 16)
    one, zero = V(ir.const(1, U32)), V(ir.const(0, U32))
    top = m * w[0] + _mul_hi(m, w[1]) + where(low < lo1, one, zero)
    # round to the nearest quadrant; a fraction of half a quadrant or more is taken from the next
    # one: the ones' complement of its 62 bits, 2**-62 short of the exact negation
    q = (top + 0x20000000) >> 30
    s = where((top & 0x20000000).eq(0), zero, 0xFFFFFFFF)
    hi = V(ir.bitcast(((top ^ s) & 0x3FFFFFFF).n, I32))
    lo = V(ir.bitcast(((low ^ s) >> 1).n, I32))  # 31 bits: a signed conversion
    r = madd(to(lo, F32), 2.0**-31, to(hi, F32)) * (PIO2_HI * 2.0**-30)
    return from_bits(bits(r) ^ (V(ir.bitcast(s.n, I32)) & 0x80000000)), V(ir.bitcast(q.n, I32))


# ---- float64 argument reduction ------------------------------------------------------------


def _pi_bits(n: int) -> int:
    """floor(pi 2**n) (to a unit): Machin's formula pi = 16 atan(1/5) - 4 atan(1/239) in integers
    with 32 guard bits."""
    one = 1 << (n + 32)

    def atan_inv(k: int) -> int:
        total, term, i = 0, one // k, 0
        while term:
            total, term, i = total + (-1) ** i * (term // (2 * i + 1)), term // (k * k), i + 1
        return total

    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> 32


def _split(fixed: int, scale: int, widths: tuple) -> tuple:
    """fixed / 2**scale as floats of the given significant-bit widths, all but the last exact."""
    parts, rest = [], fixed
    for w in widths[:-1]:
        drop = rest.bit_length() - w
        parts.append(math.ldexp(rest >> drop, drop - scale))
        rest -= (rest >> drop) << drop
    return (*parts, rest / (1 << scale))  # int / int rounds correctly


_PI_BITS = _pi_bits(1400)
# pi/2 = CW64[0] + CW64[1] + CW64[2] + CW64[3] (+ 1e-117): the first three have 33 significant
# bits, so k * CW64[i] is exact for integer k < 2**20 (Cody-Waite reduction for |x| <= 2**20).
CW64 = _split(_PI_BITS, 1401, (33, 33, 33, 53))
# 2/pi = sum_j F24[j] 2**(-24 (j + 1)), 24-bit integers: enough for every float64 exponent
F24 = tuple(float(((1 << 2801) // _PI_BITS >> (1400 - 24 * (j + 1))) & 0xFFFFFF) for j in range(49))
_PH_TERMS = 8  # Payne-Hanek: 24-bit places of x 2/pi kept below the units (to ~2**-119)


def _reduce_cw64(ax: V) -> tuple[V, V]:
    """(r, q): ax = (4j + q) pi/2 + r, |r| <= pi/4, for 0 <= ax <= 2**20 (q int64 in 0..3)."""
    k = floor(madd(ax, 2.0 / math.pi, 0.5))
    r = madd(k, -CW64[3], madd(k, -CW64[2], madd(k, -CW64[1], madd(k, -CW64[0], ax))))
    return r, bits(k + 1.5 * 2.0**52) & 3  # k + 1.5 * 2**52 holds k in its low mantissa bits


def _window(u: V, table: list, count: int, width: int) -> list:
    """table[u : u + count] (zeros past its end) for int32 u < 2**width: a barrel shifter, one
    select per bit of u and entry still needed (at most width (count - 1) + 2**width selects)."""
    cur = [V(ir.const(v, F64)) for v in table]
    cur += [V(ir.const(0.0, F64))] * (count + (1 << width) - len(cur))
    for b in reversed(range(width)):
        on, step = ((u >> b) & 1).eq(1), 1 << b
        cur = [c if c.n is d.n else where(on, d, c) for c, d in zip(cur[: count + step - 1], cur[step:])]
    return cur


def _reduce_big64(ax: V) -> tuple[V, V]:
    """(r, q) as _reduce_cw64 for ax > 2**20 (Payne-Hanek in exact float64 arithmetic). ax is
    m 2**(e - 52) with m = a0 2**48 + a1 2**24 + a2 in 24-bit pieces, and e - 28 = 24 w + p, so
    ax 2/pi = sum_t Q_t 2**(p - 24 t) with Q_t = a0 F24[w + t] + a1 F24[w + t - 1] + a2 F24[w + t - 2]
    (each exact, below 2**50), where places t < 0 are multiples of 4. The places' carries are
    propagated into 24-bit digits; the digits are added from the top, modulo 4 while they have an
    integer part, each sum exact or far larger than the rest, so the fraction keeps full relative
    precision however close ax comes to a multiple of pi/2."""
    b = bits(ax)
    ef = to(b >> 52, F64) - 1051.0  # e - 28, in [-8, 996]
    w = floor(ef / 24.0)  # exact: the quotient is an integer or 1/24 from one
    scale = pow2(ef - 24.0 * w)  # 2**p
    m = (b & 0xFFFFFFFFFFFFF) | (1 << 52)
    a = [to(m >> 48, F64), to((m >> 24) & 0xFFFFFF, F64), to(m & 0xFFFFFF, F64)]
    f = _window(to(w + 1.0, I32), [0.0] * 3 + list(F24), _PH_TERMS + 2, 6)  # f[i] = F24[w - 2 + i]
    q = [madd(a[0], f[t + 2], madd(a[1], f[t + 1], a[2] * f[t])) for t in range(_PH_TERMS)]
    digits, carry = [], None
    for t in reversed(range(1, _PH_TERMS)):
        v = q[t] if carry is None else q[t] + carry
        carry = floor(v * 2.0**-24)
        digits.insert(0, madd(carry, -(2.0**24), v))
    y = (q[0] + carry) * scale  # an integer below 2**74
    y = madd(floor(y * 0.25), -4.0, y)
    y = madd(digits[0], scale * 2.0**-24, y)
    y = madd(floor(y * 0.25), -4.0, y)
    y = madd(digits[1], scale * 2.0**-48, y)  # in [0, 4.5), multiples of 2**-48: exact
    n = floor(y + 0.5)
    frac = y - n
    for t, d in enumerate(digits[2:], 3):
        frac = frac + d * (scale * 2.0 ** (-24 * t))
    return frac * (math.pi / 2), to(n, I64) & 3


# ---- sin, cos, tan ----------------------------------------------------------------------------

# per precision: (the Cody-Waite bound, its reduction, the one beyond)
_REDUCTIONS = {F32: (4096.0, _reduce_cw, _reduce_big), F64: (2.0**20, _reduce_cw64, _reduce_big64)}


def _beyond(ax: V, bound: float) -> V:
    """ax > bound for ax >= 0, or ax NaN (a NaN result either way): an integer compare of the bits,
    cheaper than a float compare that has to spell out NaN where compilers assume none."""
    return bits(ax) > float_bits(bound, ax.dtype)


def _reduce(x: V) -> tuple[V, V, V]:
    """(r, q, finite) for x: |x| = (4j + q) pi/2 + r."""
    ax = fabs(x)
    bound, near, far = pick(x, _REDUCTIONS)
    big = _beyond(ax, bound)
    rc, qc = near(ax)
    rb, qb = far(ax)  # a cold branch: an `if` on webgpu and wasm, a select on cpu
    return rarely(big, rb, rc), rarely(big, qb, qc), bits(ax) < x.fmt.exp_mask


def _sin_kernel(r: V, z: V) -> V:
    return madd(r * z, poly(z, pick(r, _SIN_S)), r)


def _cos_kernel(z: V) -> V:
    return 1.0 - madd(z * z, -poly(z, pick(z, _COS_C)), 0.5 * z)


def _quadrant_sign(q: V, x: V) -> V:
    """The sign bit of x's width (q's integer) for quadrants 2 and 3."""
    return (q & 2) * (x.fmt.sign >> 1)


def _sin_quadrants(x: V, r: V, q: V) -> V:
    """sin x from |x| = (4j + q) pi/2 + r."""
    z = r * r
    y = where((q & 1).eq(1), _cos_kernel(z), _sin_kernel(r, z))
    return from_bits(bits(y) ^ _quadrant_sign(q, x) ^ (bits(x) & x.fmt.sign))


def _sin_halfturns(ax: V, m: V, sign: V) -> V:
    """(-1)**m sin(ax - m pi/2) with sign's sign bit xor-ed in, for ax <= 4096 and an odd or
    even integer-valued m < 4096 chosen so that |ax - m pi/2| <= pi/2 (float32): one polynomial
    (the quadrant form evaluates two and selects). m CW[i] is exact."""
    r = madd(m, -CW[3], madd(m, -CW[2], madd(m, -CW[1], madd(m, -CW[0], ax))))
    y = madd(r * (r * r), poly(r * r, _SIN_PI_S), r)
    # m + 1.5 * 2**23 holds m in its low mantissa bits: bit 1 is the parity of the half turns
    return from_bits(bits(y) ^ ((bits(m + 12582912.0) & 2) * (ax.fmt.sign >> 1)) ^ (bits(sign) & ax.fmt.sign))


def _sin_or_cos(x: V, quadrants, halfturns) -> V:
    """sin or cos of x: float64 through the quadrant reduction; float32 through halfturns(|x|) (one
    polynomial) up to 4096 and the quadrant form of Payne-Hanek's reduction beyond."""
    if x.dtype == F64:
        r, q, finite = _reduce(x)
        return where(finite, quadrants(x, r, q), NAN)
    ax = fabs(x)
    big = _beyond(ax, 4096.0)
    rb, qb = _reduce_big(ax)  # a cold branch: an `if` on webgpu and wasm, a select on cpu
    near = halfturns(ax)
    y = rarely(big, quadrants(x, rb, qb), near)
    return where(bits(ax) < x.fmt.exp_mask, y, NAN)


def sin(x: V) -> V:
    # |x| = k pi + r: m = 2k
    def halfturns(ax: V) -> V:
        return _sin_halfturns(ax, 2.0 * floor(madd(ax, 1.0 / math.pi, 0.5)), x)

    return _sin_or_cos(x, _sin_quadrants, halfturns)


def _cos_quadrants(x: V, r: V, q: V) -> V:
    z = r * r
    y = where((q & 1).eq(1), _sin_kernel(r, z), _cos_kernel(z))
    return from_bits(bits(y) ^ _quadrant_sign(q + 1, x))


def cos(x: V) -> V:
    # |x| = (k + 1/2) pi + r: cos x = -(-1)**k sin r, m = 2k + 1 (the sign: -1 xor-ed in)
    def halfturns(ax: V) -> V:
        return _sin_halfturns(ax, madd(floor(ax * (1.0 / math.pi)), 2.0, 1.0), V(ir.const(-1.0, x.dtype)))

    return _sin_or_cos(x, _cos_quadrants, halfturns)


def tan(x: V) -> V:
    r, q, finite = _reduce(x)
    z = r * r
    s, c = _sin_kernel(r, z), _cos_kernel(z)
    y = where((q & 1).eq(1), -c / s, s / c)
    return where(finite, xorsign(y, x), NAN)


# ---- inverse functions --------------------------------------------------------------------


def _asin_kernel(s: V, z: V) -> V:
    """asin(s) for |s| <= 0.5, z = s * s."""
    return madd(s * z, poly(z, pick(s, _ASIN_B)), s)


def _asin_parts(x: V) -> tuple[V, V, V]:
    """(ax <= 0.5, asin_kernel(x), 2 asin(sqrt((1 - ax) / 2))): asin |x| = pi/2 - the last for
    ax > 0.5, where 1 - ax is exact. NaN past |x| = 1 (the square root of a negative)."""
    ax = fabs(x)
    small = ax <= 0.5
    z = where(small, x * x, (1.0 - ax) * 0.5)
    s = where(small, x, sqrt(z))
    k = _asin_kernel(s, z)
    return small, k, 2.0 * k


def asin(x: V) -> V:
    small, k, k2 = _asin_parts(x)
    hi, lo = pick(x, _PIO2)
    return copysign(where(small, k, (hi - k2) + lo), x)


def acos(x: V) -> V:
    small, k, k2 = _asin_parts(x)
    (hi, lo), (pi_hi, pi_lo) = pick(x, _PIO2), pick(x, _PI)
    big = where(x > 0.0, k2, (pi_hi - k2) + pi_lo)
    return where(small, hi - (k - lo), big)


def _atan01(t: V) -> V:
    """atan(t) for 0 <= t <= 1 (NaN passes)."""
    big = t > 0.41421356
    u = where(big, (t - 1.0) / (t + 1.0), t)
    z = u * u
    k = madd(u * z, poly(z, pick(t, _ATAN_A)), u)
    hi, lo = pick(t, _PIO4)
    return where(big, hi + (k + lo), k)


def _pio2_minus(a: V) -> V:
    hi, lo = pick(a, _PIO2)
    return hi - (a - lo)


def atan(x: V) -> V:
    ax = fabs(x)
    inv = ax > 1.0
    a = _atan01(where(inv, 1.0 / ax, ax))  # 1 / inf = 0
    return copysign(where(inv, _pio2_minus(a), a), x)


def atan2(y: V, x: V) -> V:
    ax, ay = fabs(x), fabs(y)
    swap = ay > ax
    a = _atan01(where(swap, ax, ay) / where(swap, ay, ax))
    a = where(swap, _pio2_minus(a), a)
    # atan2(+-0, +-0) and atan2(+-inf, +-inf) as in C99 and numpy (0/0 and inf/inf gave NaN)
    both_zero = (bits(ax) | bits(ay)).eq(0)
    both_inf = (ax.eq(float("inf"))) & ay.eq(float("inf"))
    (pio4, _), (pi_hi, pi_lo) = pick(x, _PIO4), pick(x, _PI)
    a = where(both_inf, pio4, where(both_zero, 0.0, a))
    a = where(bits(x) < 0, (pi_hi - a) + pi_lo, a)  # x negative, -0 too
    return where(isnan(x) | isnan(y), x + y, copysign(a, y))


TABLE = {"sin": sin, "cos": cos, "tan": tan, "asin": asin, "acos": acos, "atan": atan, "atan2": atan2}
