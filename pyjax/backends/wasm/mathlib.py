"""Transcendental functions and the threefry PRNG as Wasm functions, emitted with `encoder`.

Wasm has only +, -, *, /, sqrt, min/max and rounding for floats; everything else is built here.
A kernel generator asks for the helpers it uses, e.g.
`idx = add_math_helpers(module, ["exp", "tanh"], "float32")`, then emits `f.call(idx["exp"])`.

How they work:
- Every function is computed in f64. The float32 helpers promote, call an f64 "core" tuned for
  ~1e-10 relative accuracy (short series), and round once to f32, so their results are within
  about half an f32 ulp plus 1e-10 (measured max relative error ~6e-8; target 2e-6).
  The float32 cores for sin/cos/tan/erf/erfc rely on their argument being an exact f32 value.
- The float64 helpers use the same code with longer series: a few ulp (relative error ~1e-15)
  except pow, whose error grows with |y*log(x)| up to ~1e-13 near overflow (exp(y*log x)).
- Range reductions: exp/expm1 by k*ln2 (Cody-Waite, two-part ln2); log by the binary exponent;
  sin/cos/tan by k*pi/2 with a 4-part pi/2 for |x| < 2**20, and for larger |x| (up to the
  largest finite value, both dtypes) by multiplying with 2/pi split into exact chunks and
  keeping the products modulo 4 (a Payne-Hanek style reduction without tables);
  atan by 1/x and two half-angle steps; erfc's tail by a Chebyshev fit.
- Special values follow numpy/C99: exp overflow -> inf, log(0) -> -inf, log(<0) -> nan,
  trig(inf) -> nan, tanh saturates to +-1, signed zeros are kept, pow follows C99 `pow`.
- Series coefficients are Taylor coefficients computed here; pi and ln2 come from exact integer
  arithmetic (Machin's formula, the series of ln 2), so no magic constants besides the erfc fit.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction
from functools import cache

from .encoder import F32, F64, I32, I64, Function, Module

__all__ = ["MATH_FUNCTIONS", "add_math_helpers", "add_threefry2x32"]

UNARY = ("exp", "log", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos", "atan")
UNARY += ("sinh", "cosh", "tanh", "erf", "erfc", "sqrt")
BINARY = ("atan2", "pow")
MATH_FUNCTIONS = UNARY + BINARY

# Series lengths per precision: "s" feeds float32 results (~1e-10), "d" float64 (~1e-17).
_TERMS = {
    "exp": {"s": 9, "d": 14},  # Taylor of e^r, |r| <= ln2/2
    "expm1": {"s": 9, "d": 14},  # Taylor of e^r - 1 (from r^1), |r| <= ln2/2
    "log": {"s": 4, "d": 9},  # 2 s^3 sum s^2k/(2k+3), |s| <= 0.172
    "sin": {"s": 6, "d": 8},  # odd Taylor terms, |r| <= pi/4
    "cos": {"s": 7, "d": 9},  # even Taylor terms
    "atan": {"s": 6, "d": 12},  # after two half-angle steps, |t| <= tan(pi/16)
    "erf": {"s": 13, "d": 19},  # erf(x)/x Taylor in x^2, |x| < 1
    "erfc": {"s": 12, "d": 22},  # Chebyshev terms of the tail fit
}


# ----------------------------------------------------------------------------- constants


@cache
def _pi_fixed(bits: int) -> int:
    """floor(pi * 2**bits) by Machin's formula pi = 16 atan(1/5) - 4 atan(1/239)."""
    guard = bits + 32

    def atan_inv(n: int) -> int:
        total, term, k, n2 = 0, (1 << guard) // n, 0, n * n
        while term:
            total += term // (2 * k + 1) if k % 2 == 0 else -(term // (2 * k + 1))
            term //= n2
            k += 1
        return total

    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> 32


@cache
def _ln2_fixed(bits: int) -> int:
    """floor(ln 2 * 2**bits) from ln 2 = sum 1/(k 2^k)."""
    guard = bits + 32
    total = sum((1 << guard) // (k << k) for k in range(1, guard + 1))
    return total >> 32


def _split(fixed: int, scale: int, widths: Iterable[int]) -> list[float]:
    """Split fixed / 2**scale into floats with the given significant-bit widths.

    Every part but the last is exact, so `k * part` stays exact for small integers k.
    """
    parts, rest = [], fixed
    widths = list(widths)
    for w in widths[:-1]:
        drop = rest.bit_length() - w
        hi = rest >> drop
        parts.append(math.ldexp(hi, drop - scale))
        rest -= hi << drop
    parts.append(rest / (1 << scale))  # Python rounds int / int correctly
    return parts


_P = 1300  # bits of pi and ln2 we keep: enough for 2/pi chunks covering f64 exponents
_LN2_HI, _LN2_LO = _split(
    _ln2_fixed(_P), _P, (40, 53)
)  # k * _LN2_HI exact for |k| < 2**13
_PIO2 = _split(
    _pi_fixed(_P), _P + 1, (33, 33, 33, 53)
)  # k * part exact for |k| < 2**20
_PIO2_HI, _PIO2_LO = _split(_pi_fixed(_P), _P + 1, (53, 53))
_PI_HI, _PI_LO = _split(_pi_fixed(_P), _P, (53, 53))
_TWO_OVER_PI_FIXED = (1 << (2 * _P + 1)) // _pi_fixed(_P)  # 2/pi * 2**_P
_INV_LN2 = 1 / math.log(2)
_TWO_OVER_PI = 2 / math.pi
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)
_INF, _NAN = math.inf, math.nan


def _two_over_pi_chunks(width: int, count: int) -> list[float]:
    """2/pi = sum_i C_i * 2**(-width*i) with C_i = (width-bit integer) / 2**width, exactly."""
    out = []
    for i in range(count):
        shift = _P - width * (i + 1)
        out.append(((_TWO_OVER_PI_FIXED >> shift) & ((1 << width) - 1)) / (1 << width))
    return out


def _taylor(coeff, n: int) -> list[float]:
    return [float(coeff(i)) for i in range(n)]


# erfc(x) * exp(x**2) * x for x >= 1 as a Chebyshev series in s = a*(x-2)/(x+2) + b (s in [-1, 1]).
# Fitted with mpmath at 50 digits: see `_fit_erfc_tail` (the first 12 terms give 4e-10, all 22 give 1.4e-16).
_ERFC_K = 2.0
_ERFC_CHEB = [
    0.5226852818480617, 0.06239406251578745, -0.0260663015282281, 0.005894781567304472,
    -0.0007428920123522407, 1.5128890832418327e-05, 1.0671610297733193e-05, -9.96615539739532e-07,
    -1.8450476010209502e-07, 2.805919177614582e-08, 4.5876322428344715e-09, -7.389343846411987e-10,
    -1.5469505431115985e-10, 1.7584896811152985e-11, 6.057580561126259e-12, -2.4273932694348503e-13,
    -2.4051309254593736e-13, -1.075182997401723e-14, 8.586349446804667e-15, 1.3257658165635783e-15,
    -2.1923478924795032e-16, -8.484325968029135e-17,
]  # fmt: skip


def _fit_erfc_tail(n: int = 22, k: float = _ERFC_K, nodes: int = 64) -> list[float]:
    """Recompute `_ERFC_CHEB` (development helper; needs mpmath)."""
    import mpmath as mp

    mp.mp.dps = 50
    t0 = mp.mpf(1 - k) / (1 + k)
    vals = []
    for j in range(nodes):
        s = mp.cos(mp.pi * (j + mp.mpf(1) / 2) / nodes)
        t = t0 + (s + 1) / 2 * (1 - t0)
        x = k * (1 + t) / (1 - t)
        vals.append(mp.erfc(x) * mp.exp(x * x) * x)
    c = [
        2
        * mp.fsum(
            v * mp.cos(mp.pi * i * (j + mp.mpf(1) / 2) / nodes)
            for j, v in enumerate(vals)
        )
        / nodes
        for i in range(n)
    ]
    c[0] /= 2
    return [float(v) for v in c]


# ----------------------------------------------------------------------------- emit helpers


def _horner(f: Function, z: int, coeffs: list[float]) -> None:
    """Push sum(coeffs[i] * z**i)."""
    f.f64_const(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        f.local_get(z).f64_mul().f64_const(c).f64_add()


def _pow2(f: Function) -> None:
    """i64 k on the stack -> f64 2**k (k must be a normal exponent, -1022..1023)."""
    f.i64_const(1023).i64_add().i64_const(52).i64_shl().f64_reinterpret_i64()


def _signbit(f: Function, x: int) -> None:
    """Push i32 1 if the sign bit of f64 local x is set (also for -0 and -nan)."""
    f.local_get(x).i64_reinterpret_f64().i64_const(0).i64_lt_s()


def _select_const(f: Function, value: float, cond) -> None:
    """result-on-stack = cond ? value : result; `cond` emits the i32 condition."""
    tmp_result = f.local(F64)
    f.local_set(tmp_result).f64_const(value).local_get(tmp_result)
    cond()
    f.select()


class _Lib:
    """Emits helper functions into one module on demand (each at most once per precision)."""

    def __init__(self, module: Module):
        self.m = module
        self.index: dict[tuple, int] = {}

    def get(self, name: str, prec: str) -> int:
        """Function index of `name` at precision "s"/"d" (f64 cores) or "f32" (wrapper)."""
        key = (name, prec)
        if key not in self.index:
            nargs = 2 if name in BINARY else 1
            t = F32 if prec == "f32" else F64
            results = (F64, I32) if name == "rem_pio2" else (t,)
            if name == "atan_kernel":
                nargs = 1
            label = {"s": "core_s", "d": "f64", "f32": "f32"}[prec]
            f = self.m.function(f"pyjax_{name}_{label}", [t] * nargs, results)
            self.index[key] = f.index
            if prec == "f32":
                self._wrap_f32(f, name, nargs)
            else:
                getattr(self, "_" + name)(f, prec)
            f.finish()
        return self.index[key]

    def _wrap_f32(self, f: Function, name: str, nargs: int) -> None:
        if name == "sqrt":
            f.local_get(0).f32_sqrt()
            return
        for i in range(nargs):
            f.local_get(i).f64_promote_f32()
        f.call(self.get(name, "s")).f32_demote_f64()

    # -- exponentials and logarithms

    def _sqrt(self, f: Function, prec: str) -> None:
        f.local_get(0).f64_sqrt()

    def _exp(self, f: Function, prec: str) -> None:
        x, k, r, ki = 0, f.local(F64), f.local(F64), f.local(I64)
        # beyond [-746, 710] the result is 0 or inf anyway; clamping keeps 2**k representable
        # as two factors (NaN passes through min/max)
        f.local_get(x).f64_const(-746.0).f64_max().f64_const(710.0).f64_min().local_set(
            x
        )
        f.local_get(x).f64_const(_INV_LN2).f64_mul().f64_nearest().local_tee(k)
        f.i64_trunc_sat_f64_s().local_set(ki)
        f.local_get(x).local_get(k).f64_const(_LN2_HI).f64_mul().f64_sub()
        f.local_get(k).f64_const(_LN2_LO).f64_mul().f64_sub().local_set(r)
        _horner(
            f, r, _taylor(lambda i: Fraction(1, math.factorial(i)), _TERMS["exp"][prec])
        )
        # times 2**(k//2) * 2**(k - k//2): one final rounding, also into subnormals
        f.local_get(ki).i64_const(1).i64_shr_s()
        _pow2(f)
        f.f64_mul()
        f.local_get(ki).local_get(ki).i64_const(1).i64_shr_s().i64_sub()
        _pow2(f)
        f.f64_mul()

    def _expm1(self, f: Function, prec: str) -> None:
        x = 0
        f.local_get(x).f64_abs().f64_const(0.34657359027997264).f64_lt()
        with f.if_(F64):
            # x * (1 + x/2 + x^2/6 + ...): exact sign and tiny values
            f.local_get(x)
            _horner(
                f,
                x,
                _taylor(
                    lambda i: Fraction(1, math.factorial(i + 1)), _TERMS["expm1"][prec]
                ),
            )
            f.f64_mul()
            f.else_()
            f.local_get(x).call(self.get("exp", prec)).f64_const(1.0).f64_sub()

    def _log(self, f: Function, prec: str) -> None:
        x, bits, e, m, s, z = (
            0,
            f.local(I64),
            f.local(F64),
            f.local(F64),
            f.local(F64),
            f.local(F64),
        )
        fm = f.local(F64)
        # subnormals: scale by 2**54 first so the exponent field is meaningful
        f.local_get(x).f64_const(2.0**54).f64_mul().local_get(x)
        f.local_get(x).f64_const(
            2.0**-1022
        ).f64_lt().select().i64_reinterpret_f64().local_set(bits)
        f.local_get(bits).i64_const(52).i64_shr_u().i64_const(
            0x7FF
        ).i64_and().i64_const(1023).i64_sub()
        f.f64_convert_i64_s()
        f.f64_const(-54.0).f64_const(0.0).local_get(x).f64_const(
            2.0**-1022
        ).f64_lt().select()
        f.f64_add().local_set(e)
        # mantissa m in [1, 2), then into [sqrt(1/2), sqrt(2)) so log(m) is small
        f.local_get(bits).i64_const((1 << 52) - 1).i64_and().i64_const(
            0x3FF0000000000000
        ).i64_or()
        f.f64_reinterpret_i64().local_set(m)
        f.local_get(m).f64_const(math.sqrt(2.0)).f64_gt()
        with f.if_():
            f.local_get(m).f64_const(0.5).f64_mul().local_set(m)
            f.local_get(e).f64_const(1.0).f64_add().local_set(e)
        # log(m) = fm - fm*s + 2 s^3 R(s^2) with fm = m - 1 (exact), s = fm / (m + 1)
        f.local_get(m).f64_const(1.0).f64_sub().local_set(fm)
        f.local_get(fm).local_get(m).f64_const(1.0).f64_add().f64_div().local_set(s)
        f.local_get(s).local_get(s).f64_mul().local_set(z)
        f.local_get(e).f64_const(_LN2_HI).f64_mul()  # exact
        f.local_get(fm)
        f.local_get(fm).local_get(s).f64_mul()
        f.f64_const(2.0).local_get(s).f64_mul().local_get(z).f64_mul()
        _horner(f, z, _taylor(lambda i: Fraction(1, 2 * i + 3), _TERMS["log"][prec]))
        f.f64_mul().f64_sub()  # fm*s - 2 s^3 R
        f.f64_sub()  # log(m)
        f.local_get(e).f64_const(_LN2_LO).f64_mul().f64_add()
        f.f64_add()
        # special values: +inf, negative -> nan, zero -> -inf, nan
        _select_const(f, _INF, lambda: f.local_get(x).f64_const(_INF).f64_eq())
        _select_const(f, _NAN, lambda: f.local_get(x).f64_const(0.0).f64_lt())
        _select_const(f, -_INF, lambda: f.local_get(x).f64_const(0.0).f64_eq())
        _select_const(f, _NAN, lambda: f.local_get(x).local_get(x).f64_ne())

    def _log1p(self, f: Function, prec: str) -> None:
        x, u = 0, f.local(F64)
        # log(u) * x / (u - 1) with u = 1 + x rounded: the rounding error of u cancels
        f.local_get(x).f64_const(1.0).f64_add().local_tee(u).f64_const(1.0).f64_eq()
        with f.if_(F64):
            f.local_get(x)
            f.else_()
            f.local_get(u).call(self.get("log", prec))
            f.local_get(x).local_get(u).f64_const(1.0).f64_sub().f64_div().f64_mul()
        _select_const(f, _INF, lambda: f.local_get(x).f64_const(_INF).f64_eq())

    # -- trigonometric

    def _rem_pio2(self, f: Function, prec: str) -> None:
        """x -> (r, q): x = (4n + q) * pi/2 + r with |r| <~ pi/4."""
        x, k = 0, f.local(F64)
        f.local_get(x).f64_abs().f64_const(2.0**20).f64_lt()
        f.if_(((), (F64, I32)))
        f.local_get(x).f64_const(_TWO_OVER_PI).f64_mul().f64_nearest().local_set(k)
        f.local_get(x)
        for part in _PIO2:  # k * part is exact for the first three parts
            f.local_get(k).f64_const(part).f64_mul().f64_sub()
        f.local_get(k).i32_trunc_sat_f64_s().i32_const(3).i32_and()
        f.else_()
        self._rem_pio2_large(f, prec)
        f.end()

    def _rem_pio2_large(self, f: Function, prec: str) -> None:
        """Reduction for huge |x|: x * 2/pi mod 4 from exact products with 2/pi chunks.

        x is split into pieces of at most 53 - w bits, so each piece times a w-bit chunk
        of 2/pi is exact. A product's integer part only matters modulo 4; its fraction
        is split into a multiple of 2**-52 (summed exactly, kept in [-1/2, 1/2]) and a
        tiny rest (summed apart), so cancellation leaves full relative precision.
        Works up to the largest finite double.
        """
        x = 0
        if prec == "s":  # x is an exact f32: 24 bits, so 29-bit chunks
            width, count = 29, 8
            pieces = [f.local(F64)]
            f.local_get(x).local_set(pieces[0])
        else:
            width, count = 26, 45
            pieces = [f.local(F64), f.local(F64)]
            hi, lo = pieces
            f.local_get(x).i64_reinterpret_f64()
            f.i64_const(~((1 << 27) - 1)).i64_and().f64_reinterpret_i64()
            f.local_set(hi)  # top 26 bits
            f.local_get(x).local_get(hi).f64_sub().local_set(lo)  # the other 27
        t, n, frac, rest, quad = (f.local(F64) for _ in range(5))
        for v in (frac, rest, quad):
            f.f64_const(0.0).local_set(v)

        def add_integer(value: int) -> None:  # quad += value mod 4 (value is integral)
            f.local_get(quad).local_get(value).f64_add()
            f.local_get(value).f64_const(0.25).f64_mul().f64_floor()
            f.f64_const(4.0).f64_mul().f64_sub().local_set(quad)

        for i, chunk in enumerate(_two_over_pi_chunks(width, count)):
            for p in pieces:
                if chunk:
                    f.local_get(p).f64_const(chunk).f64_mul().local_tee(t)
                    f.f64_nearest().local_set(n)
                    add_integer(n)
                    f.local_get(t).local_get(n).f64_sub().local_set(t)  # exact fraction
                    # t = head (multiple of 2**-52) + tail
                    f.local_get(t).f64_const(2.0**52).f64_mul().f64_nearest()
                    f.f64_const(2.0**-52).f64_mul().local_set(n)
                    f.local_get(rest).local_get(t).local_get(n).f64_sub().f64_add()
                    f.local_set(rest)
                    f.local_get(frac).local_get(n).f64_add().local_tee(frac)
                    f.f64_nearest().local_set(n)
                    f.local_get(frac).local_get(n).f64_sub().local_set(frac)
                    f.local_get(quad).local_get(n).f64_add().local_set(quad)
                if i + 1 < count:
                    f.local_get(p).f64_const(2.0**-width).f64_mul().local_set(p)
        # frac + rest may leave [-1/2, 1/2] by a hair: harmless for the kernels
        f.local_get(frac).local_get(rest).f64_add().f64_const(_PIO2_HI).f64_mul()
        f.local_get(quad).i32_trunc_sat_f64_s().i32_const(3).i32_and()

    def _sincos_poly(self, f: Function, prec: str, r: int, z: int, which: str) -> None:
        """Push sin(r) or cos(r) for |r| <= pi/4 (z = r*r)."""
        if which == "sin":
            n = _TERMS["sin"][prec]
            f.local_get(r).local_get(r).local_get(z).f64_mul()
            _horner(
                f,
                z,
                _taylor(
                    lambda i: Fraction((-1) ** (i + 1), math.factorial(2 * i + 3)),
                    n - 1,
                ),
            )
            f.f64_mul().f64_add()
        else:
            n = _TERMS["cos"][prec]
            _horner(
                f, z, _taylor(lambda i: Fraction((-1) ** i, math.factorial(2 * i)), n)
            )

    def _trig(self, f: Function, prec: str, which: str) -> None:
        x, r, q, z = 0, f.local(F64), f.local(I32), f.local(F64)
        f.local_get(x).call(self.get("rem_pio2", prec)).local_set(q).local_set(r)
        f.local_get(r).local_get(r).f64_mul().local_set(z)
        if which == "tan":
            # odd quadrant: -cos/sin, even: sin/cos
            f.local_get(q).i32_const(1).i32_and()
            with f.if_(F64):
                self._sincos_poly(f, prec, r, z, "cos")
                f.f64_neg()
                self._sincos_poly(f, prec, r, z, "sin")
                f.f64_div().else_()
                self._sincos_poly(f, prec, r, z, "sin")
                self._sincos_poly(f, prec, r, z, "cos")
                f.f64_div()
        else:
            # cos(x) = sin(x + pi/2): shift the quadrant by one
            if which == "cos":
                f.local_get(q).i32_const(1).i32_add().local_set(q)
            f.local_get(q).i32_const(1).i32_and()
            with f.if_(F64):
                self._sincos_poly(f, prec, r, z, "cos")
                f.else_()
                self._sincos_poly(f, prec, r, z, "sin")
            res = f.local(F64)  # quadrants 2 and 3 negate
            f.local_set(res).local_get(res).f64_neg().local_get(res)
            f.local_get(q).i32_const(2).i32_and().select()
        if which != "cos":  # sin/tan of tiny x (and of +-0) is x itself
            self._tiny_passthrough(f)

    def _tiny_passthrough(self, f: Function) -> None:
        res = f.local(F64)
        f.local_set(res).local_get(0).local_get(res)
        f.local_get(0).f64_abs().f64_const(2.0**-27).f64_lt().select()

    def _sin(self, f: Function, prec: str) -> None:
        self._trig(f, prec, "sin")

    def _cos(self, f: Function, prec: str) -> None:
        self._trig(f, prec, "cos")

    def _tan(self, f: Function, prec: str) -> None:
        self._trig(f, prec, "tan")

    # -- inverse trigonometric

    def _atan_kernel(self, f: Function, prec: str) -> None:
        """atan(t) for t in [0, 1]: two half-angle steps, then the odd Taylor series."""
        t, z = 0, f.local(F64)
        for _ in range(2):  # atan(t) = 2 atan(t / (1 + sqrt(1 + t^2)))
            f.local_get(t).f64_const(1.0).local_get(t).local_get(t).f64_mul().f64_const(
                1.0
            ).f64_add()
            f.f64_sqrt().f64_add().f64_div().local_set(t)
        f.local_get(t).local_get(t).f64_mul().local_set(z)
        f.local_get(t).local_get(t).local_get(z).f64_mul()
        _horner(
            f,
            z,
            _taylor(
                lambda i: Fraction((-1) ** (i + 1), 2 * i + 3), _TERMS["atan"][prec] - 1
            ),
        )
        f.f64_mul().f64_add().f64_const(4.0).f64_mul()

    def _pio2_minus(self, f: Function) -> None:
        """value on the stack -> pi/2 - value (two-part pi/2)."""
        v = f.local(F64)
        f.local_set(v).f64_const(_PIO2_HI).local_get(v).f64_sub().f64_const(
            _PIO2_LO
        ).f64_add()

    def _atan(self, f: Function, prec: str) -> None:
        x, a = 0, f.local(F64)
        kernel = self.get("atan_kernel", prec)
        f.local_get(x).f64_abs().local_tee(a).f64_const(1.0).f64_gt()
        with f.if_(F64):  # atan(a) = pi/2 - atan(1/a)
            f.f64_const(1.0).local_get(a).f64_div().call(kernel)
            self._pio2_minus(f)
            f.else_()
            f.local_get(a).call(kernel)
        f.local_get(x).f64_copysign()
        self._tiny_passthrough(f)

    def _atan2(self, f: Function, prec: str) -> None:
        y, x, ay, ax, a = 0, 1, f.local(F64), f.local(F64), f.local(F64)
        kernel = self.get("atan_kernel", prec)
        f.local_get(y).f64_abs().local_set(ay)
        f.local_get(x).f64_abs().local_set(ax)
        f.local_get(ay).local_get(ax).f64_gt()
        with f.if_(F64):
            f.local_get(ax).local_get(ay).f64_div().call(kernel)
            self._pio2_minus(f)
            f.else_()
            f.local_get(ay).local_get(ax).f64_div().call(kernel)
        _select_const(f, 0.0, lambda: f.local_get(ay).f64_const(0.0).f64_eq())
        both_inf = lambda: (
            f.local_get(ay)
            .f64_const(_INF)
            .f64_eq()
            .local_get(ax)
            .f64_const(_INF)
            .f64_eq()
            .i32_and()
        )
        _select_const(f, math.pi / 4, both_inf)
        f.local_set(a)
        _signbit(f, x)
        with f.if_(F64):  # x < 0 or -0: the angle is measured from the negative axis
            f.f64_const(_PI_HI).local_get(a).f64_sub().f64_const(_PI_LO).f64_add()
            f.else_()
            f.local_get(a)
        f.local_get(y).f64_copysign()
        nan_in = lambda: (
            f.local_get(x)
            .local_get(x)
            .f64_ne()
            .local_get(y)
            .local_get(y)
            .f64_ne()
            .i32_or()
        )
        _select_const(f, _NAN, nan_in)

    def _sqrt_one_minus_sq(self, f: Function) -> None:
        """Push sqrt((1 - x)(1 + x)) for the parameter x (accurate near |x| = 1; nan beyond)."""
        f.f64_const(1.0).local_get(0).f64_sub().f64_const(1.0).local_get(
            0
        ).f64_add().f64_mul().f64_sqrt()

    def _asin(self, f: Function, prec: str) -> None:
        f.local_get(0)
        self._sqrt_one_minus_sq(f)
        f.call(self.get("atan2", prec))

    def _acos(self, f: Function, prec: str) -> None:
        self._sqrt_one_minus_sq(f)
        f.local_get(0).call(self.get("atan2", prec))

    # -- hyperbolic

    def _sinh(self, f: Function, prec: str) -> None:
        x, a, u = 0, f.local(F64), f.local(F64)
        f.local_get(x).f64_abs().local_tee(a).f64_const(709.0).f64_lt()
        with f.if_(
            F64
        ):  # (u + u/(u+1)) / 2 with u = expm1(a): no cancellation for small a
            f.local_get(a).call(self.get("expm1", prec)).local_tee(u)
            f.local_get(u).local_get(u).f64_const(
                1.0
            ).f64_add().f64_div().f64_add().f64_const(0.5).f64_mul()
            f.else_()
            self._half_exp_squared(f, a, prec)
        f.local_get(x).f64_copysign()

    def _half_exp_squared(self, f: Function, a: int, prec: str) -> None:
        """Push exp(a)/2 as (exp(a/2)/2) * exp(a/2): finite up to a ~ 710.47."""
        w = f.local(F64)
        f.local_get(a).f64_const(0.5).f64_mul().call(self.get("exp", prec)).local_tee(w)
        f.f64_const(0.5).f64_mul().local_get(w).f64_mul()

    def _cosh(self, f: Function, prec: str) -> None:
        x, a, e = 0, f.local(F64), f.local(F64)
        f.local_get(x).f64_abs().local_tee(a).f64_const(709.0).f64_lt()
        with f.if_(F64):
            f.local_get(a).call(self.get("exp", prec)).local_tee(e).f64_const(
                0.5
            ).f64_mul()
            f.f64_const(0.5).local_get(e).f64_div().f64_add()
            f.else_()
            self._half_exp_squared(f, a, prec)

    def _tanh(self, f: Function, prec: str) -> None:
        x, a, u = 0, f.local(F64), f.local(F64)
        f.local_get(x).f64_abs().local_tee(a).f64_const(22.0).f64_gt()
        with f.if_(F64):  # 1 - tanh(22) < 2**-63
            f.f64_const(1.0)
            f.else_()  # tanh(a) = u / (u + 2) with u = expm1(2a)
            f.local_get(a).f64_const(2.0).f64_mul().call(
                self.get("expm1", prec)
            ).local_tee(u)
            f.local_get(u).f64_const(2.0).f64_add().f64_div()
        f.local_get(x).f64_copysign()

    # -- error function

    def _erf(self, f: Function, prec: str) -> None:
        x, z = 0, f.local(F64)
        f.local_get(x).f64_abs().f64_const(1.0).f64_lt()
        with f.if_(F64):  # x * P(x^2), Taylor
            f.local_get(x).local_get(x).f64_mul().local_set(z)
            f.local_get(x)
            coeff = lambda i: (
                Fraction((-1) ** i, math.factorial(i) * (2 * i + 1)) * _TWO_OVER_SQRT_PI
            )
            _horner(f, z, _taylor(coeff, _TERMS["erf"][prec]))
            f.f64_mul()
            f.else_()
            f.f64_const(1.0).local_get(x).f64_abs().call(
                self.get("erfc_tail", prec)
            ).f64_sub()
            f.local_get(x).f64_copysign()

    def _erfc(self, f: Function, prec: str) -> None:
        x = 0
        tail = self.get("erfc_tail", prec)
        f.local_get(x).f64_abs().f64_const(1.0).f64_lt()
        with f.if_(F64):
            f.f64_const(1.0).local_get(x).call(self.get("erf", prec)).f64_sub()
            f.else_()
            f.local_get(x).f64_const(0.0).f64_gt()
            with f.if_(F64):
                f.local_get(x).call(tail)
                f.else_()  # erfc(-a) = 2 - erfc(a); also NaN
                f.f64_const(2.0).local_get(x).f64_neg().call(tail).f64_sub()

    def _erfc_tail(self, f: Function, prec: str) -> None:
        """erfc(a) for a >= 1 (or inf/nan): exp(-a^2) * g(s) / a, g a Chebyshev series."""
        a, s2, b1, b2, e = 0, f.local(F64), f.local(F64), f.local(F64), f.local(F64)
        coeffs = _ERFC_CHEB[: _TERMS["erfc"][prec]]
        k = _ERFC_K
        t0 = (1 - k) / (1 + k)
        alpha, beta = 2 / (1 - t0), -(1 + t0) / (1 - t0)
        f.local_get(a).f64_const(30.0).f64_min().local_set(
            a
        )  # erfc(30) underflows to 0
        # 2s, s = alpha * (a - k)/(a + k) + beta
        f.local_get(a).f64_const(k).f64_sub().local_get(a).f64_const(
            k
        ).f64_add().f64_div()
        f.f64_const(alpha).f64_mul().f64_const(beta).f64_add().f64_const(
            2.0
        ).f64_mul().local_set(s2)
        f.f64_const(0.0).local_set(b1).f64_const(0.0).local_set(b2)
        for c in reversed(coeffs[1:]):  # Clenshaw: b_k = 2s b_{k+1} - b_{k+2} + c_k
            f.local_get(s2).local_get(b1).f64_mul().local_get(b2).f64_sub().f64_const(
                c
            ).f64_add()
            f.local_get(b1).local_set(b2).local_set(b1)
        f.local_get(s2).f64_const(0.5).f64_mul().local_get(b1).f64_mul().local_get(
            b2
        ).f64_sub()
        f.f64_const(coeffs[0]).f64_add()
        exp = self.get("exp", prec)
        if prec == "s":  # a is an f32 value: a*a is exact
            f.local_get(a).local_get(a).f64_mul().f64_neg().call(exp)
        else:  # exp(-a^2) = exp(-hi^2) * exp(-(a - hi)(a + hi)) with hi^2 exact
            hi = f.local(F64)
            f.local_get(a).i64_reinterpret_f64().i64_const(
                ~((1 << 27) - 1)
            ).i64_and().f64_reinterpret_i64()
            f.local_tee(hi).local_get(hi).f64_mul().f64_neg().call(exp)
            f.local_get(a).local_get(hi).f64_sub().local_get(a).local_get(
                hi
            ).f64_add().f64_mul()
            f.f64_neg().call(exp).f64_mul()
        f.f64_mul().local_get(a).f64_div()
        del e

    # -- power

    def _pow(self, f: Function, prec: str) -> None:
        x, y, r, yint, yhalf = 0, 1, f.local(F64), f.local(I32), f.local(F64)
        f.local_get(y).local_get(x).f64_abs().call(self.get("log", prec)).f64_mul()
        f.call(self.get("exp", prec)).local_set(r)
        f.local_get(y).f64_floor().local_get(y).f64_eq().local_set(yint)
        f.local_get(y).f64_const(0.5).f64_mul().local_set(yhalf)
        # negative base (or -0, -inf) with an odd integer exponent: negative result
        f.local_get(r).f64_neg().local_get(r)
        _signbit(f, x)
        f.local_get(yint).i32_and().local_get(yhalf).f64_floor().local_get(
            yhalf
        ).f64_ne().i32_and()
        f.select()
        # finite negative base with a non-integer exponent: nan
        _select_const(
            f,
            _NAN,
            lambda: (
                f.local_get(x)
                .f64_const(0.0)
                .f64_lt()
                .local_get(x)
                .f64_const(-_INF)
                .f64_gt()
                .i32_and()
                .local_get(yint)
                .i32_eqz()
                .i32_and()
            ),
        )
        # pow(x, +-0) = 1, pow(1, y) = 1, pow(-1, +-inf) = 1, even for nan
        _select_const(
            f,
            1.0,
            lambda: (
                f.local_get(y)
                .f64_const(0.0)
                .f64_eq()
                .local_get(x)
                .f64_const(1.0)
                .f64_eq()
                .i32_or()
                .local_get(x)
                .f64_abs()
                .f64_const(1.0)
                .f64_eq()
                .local_get(y)
                .f64_abs()
                .f64_const(_INF)
                .f64_eq()
                .i32_and()
                .i32_or()
            ),
        )


# ----------------------------------------------------------------------------- public API


def _precision(dtype) -> str:
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str):  # a scalar type such as numpy.float32
        name = getattr(dtype, "__name__", str(dtype))
    name = name.lower()
    if name in ("float32", "f32"):
        return "f32"
    if name in ("float64", "f64"):
        return "d"
    raise ValueError(f"math helpers exist for float32 and float64, not {dtype!r}")


def add_math_helpers(
    module: Module, names: Iterable[str], dtype="float32"
) -> dict[str, int]:
    """Emit the requested functions (and what they use) into `module`; return name -> function index.

    float32 helpers take and return f32, float64 ones f64; atan2 and pow take two arguments
    (atan2(y, x), pow(x, y)). Requesting a helper again returns the same index.
    """
    prec = _precision(dtype)
    lib = module.memo.get("pyjax.mathlib")
    if lib is None:
        lib = module.memo["pyjax.mathlib"] = _Lib(module)
    out = {}
    for name in names:
        if name not in MATH_FUNCTIONS:
            raise ValueError(
                f"unknown math helper {name!r}; available: {', '.join(MATH_FUNCTIONS)}"
            )
        out[name] = lib.get(name, prec)
    return out


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def add_threefry2x32(module: Module) -> int:
    """Emit threefry2x32(key0, key1, x0, x1) -> (y0, y1), all u32 as i32; return its index.

    The Threefry-2x32 block cipher with 20 rounds, exactly as JAX's `threefry2x32`: key schedule
    (k0, k1, k0 ^ k1 ^ 0x1BD11BDA), rotations 13,15,26,6 / 17,29,16,24, key injection every
    four rounds with the injection counter added to the second word.
    """
    key = "pyjax.threefry2x32"
    if key in module.memo:
        return module.memo[key]
    f = module.function("pyjax_threefry2x32", [I32] * 4, [I32, I32])
    module.memo[key] = f.index
    k0, k1, x0, x1, k2 = 0, 1, 2, 3, f.local(I32)
    ks = (k0, k1, k2)
    f.local_get(k0).local_get(k1).i32_xor().i32_const(0x1BD11BDA).i32_xor().local_set(
        k2
    )
    f.local_get(x0).local_get(k0).i32_add().local_set(x0)
    f.local_get(x1).local_get(k1).i32_add().local_set(x1)
    for group in range(5):
        for rot in _ROTATIONS[group % 2]:
            f.local_get(x0).local_get(x1).i32_add().local_tee(x0)
            f.local_get(x1).i32_const(rot).i32_rotl().i32_xor().local_set(x1)
        f.local_get(x0).local_get(ks[(group + 1) % 3]).i32_add().local_set(x0)
        f.local_get(x1).local_get(ks[(group + 2) % 3]).i32_add().i32_const(
            group + 1
        ).i32_add().local_set(x1)
    f.local_get(x0).local_get(x1)
    f.finish()
    return f.index
