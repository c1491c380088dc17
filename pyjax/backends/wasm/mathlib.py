"""Transcendental functions and the threefry PRNG as Wasm functions, built with `encoder`.

What is left of wasm's own math: float64 exp, log, log1p, expm1 for the routines (logaddexp);
every other function, in both precisions, is core ops (compiler/mathlib). A kernel generator asks for
what it uses and calls it:

    idx = add_math_helpers(module, ["log1p", "exp"], "float64")
    f.local_get(0).call(idx["exp"])

How they work:
- Everything is computed in f64 with series to a few ulp (max relative error measured ~6e-16).
- Range reductions: exp/expm1 by k*ln2 (two-part ln2); log by the binary exponent.
- Special values follow numpy/C99: exp overflow -> inf, log(0) -> -inf, log(<0) -> nan,
  signed zeros are kept.
- Series are Taylor series with exact coefficients; ln 2 comes from integer arithmetic (its series).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from fractions import Fraction
from functools import cache

from .encoder import F64, I32, I64, Function, Module

__all__ = ["MATH_FUNCTIONS", "UNARY", "add_math_helpers", "add_threefry2x32", "math_index"]

UNARY = ("exp", "log", "log1p", "expm1", "sqrt")
MATH_FUNCTIONS = UNARY


# ----------------------------------------------------------------------------- series


def _fact(n: int) -> int:
    return math.factorial(n)


# name -> (coefficient i -> exact value, terms)
_SERIES: dict[str, tuple[Callable[[int], Fraction], int]] = {
    # e^r, |r| <= ln2/2
    "exp": (lambda i: Fraction(1, _fact(i)), 14),
    # (e^r - 1) / r
    "expm1": (lambda i: Fraction(1, _fact(i + 1)), 14),
    # log(1+f) = f - f s + 2 s^3 R(s^2), R = sum s^2i / (2i + 3), |s| <= 0.172
    "log": (lambda i: Fraction(1, 2 * i + 3), 9),
}


def _coeffs(name: str) -> list[float]:
    coeff, n = _SERIES[name]
    return [float(coeff(i)) for i in range(n)]


# ----------------------------------------------------------------------------- constants


@cache
def _ln2_fixed(bits: int) -> int:
    """floor(ln 2 * 2**bits), from ln 2 = sum 1/(k 2^k)."""
    guard = bits + 32
    return sum((1 << guard) // (k << k) for k in range(1, guard + 1)) >> 32


def _split(fixed: int, scale: int, widths: Iterable[int]) -> list[float]:
    """Split fixed / 2**scale into floats of the given significant-bit widths.

    All parts but the last are exact, so `k * part` is exact for small integers k.
    """
    parts, rest, widths = [], fixed, list(widths)
    for w in widths[:-1]:
        drop = rest.bit_length() - w
        hi = rest >> drop
        parts.append(math.ldexp(hi, drop - scale))
        rest -= hi << drop
    parts.append(rest / (1 << scale))  # int / int rounds correctly
    return parts


_P = 120  # bits of ln 2 kept
_LN2_HI, _LN2_LO = _split(_ln2_fixed(_P), _P, (40, 53))  # k*_LN2_HI exact, |k| < 2**13
_INF, _NAN = math.inf, math.nan


# ----------------------------------------------------------------------------- emit helpers


def _horner(f: Function, z: int, coeffs: list[float]) -> None:
    """Push sum(coeffs[i] * z**i) for the f64 local z."""
    f.f64_const(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        f.local_get(z).f64_mul().f64_const(c).f64_add()


def _pow2(f: Function) -> None:
    """i64 k on the stack -> f64 2**k (k must be a normal exponent, -1022..1023)."""
    f.i64_const(1023).i64_add().i64_const(52).i64_shl().f64_reinterpret_i64()


def _replace_if(f: Function, value: float, cond: int) -> None:
    """f64 on the stack -> `value` where the i32 local `cond` is set."""
    res = f.local(F64)
    f.local_set(res).f64_const(value).local_get(res).local_get(cond).select()


def _cond(f: Function) -> int:
    """Store the i32 on the stack into a new local and return the local."""
    c = f.local(I32)
    f.local_set(c)
    return c


def _is(f: Function, x: int, op: str, value: float) -> int:
    """New i32 local holding `x <op> value` (op: eq, ne, lt, gt, le, ge)."""
    f.local_get(x).f64_const(value).op("f64." + op)
    return _cond(f)


def _isnan(f: Function, x: int) -> int:
    """New i32 local holding isnan(x)."""
    f.local_get(x).local_get(x).f64_ne()
    return _cond(f)


class _Lib:
    """Emits helpers into one module on demand, each at most once."""

    def __init__(self, module: Module):
        self.m = module
        self.index: dict[str, int] = {}

    def get(self, name: str) -> int:
        """Index of the f64 function `name`."""
        if name not in self.index:
            f = self.m.function(f"pyjax_{name}_f64", [F64], [F64])
            self.index[name] = f.index
            getattr(self, "_" + name)(f)
            f.finish()
        return self.index[name]

    # -- exponentials and logarithms

    def _sqrt(self, f: Function) -> None:
        f.local_get(0).f64_sqrt()

    def _exp(self, f: Function) -> None:
        x, k, r, ki = 0, f.local(F64), f.local(F64), f.local(I64)
        # outside [-746, 710] the result is 0 or inf anyway; clamping keeps 2**k a
        # product of two normal numbers (min/max pass NaN through)
        f.local_get(x).f64_const(-746.0).f64_max().f64_const(710.0).f64_min().local_set(x)
        f.local_get(x).f64_const(1 / math.log(2)).f64_mul().f64_nearest().local_tee(k)
        f.i64_trunc_sat_f64_s().local_set(ki)
        # r = x - k ln2, with k * _LN2_HI exact
        f.local_get(x).local_get(k).f64_const(_LN2_HI).f64_mul().f64_sub()
        f.local_get(k).f64_const(_LN2_LO).f64_mul().f64_sub().local_set(r)
        _horner(f, r, _coeffs("exp"))
        # times 2**(k >> 1) * 2**(k - (k >> 1)): one rounding, also into subnormals
        f.local_get(ki).i64_const(1).i64_shr_s()
        _pow2(f)
        f.f64_mul().local_get(ki).local_get(ki).i64_const(1).i64_shr_s().i64_sub()
        _pow2(f)
        f.f64_mul()

    def _expm1(self, f: Function) -> None:
        x = 0
        f.local_get(x).f64_abs().f64_const(0.5 * math.log(2)).f64_lt()
        with f.if_(F64):  # x * series: exact for tiny x, keeps the sign of zero
            f.local_get(x)
            _horner(f, x, _coeffs("expm1"))
            f.f64_mul()
            f.else_()  # no harmful cancellation once |x| > ln2/2
            f.local_get(x).call(self.get("exp")).f64_const(1.0).f64_sub()

    def _log(self, f: Function) -> None:
        x, bits, sub = 0, f.local(I64), f.local(I32)
        e, m, fm, s, z = (f.local(F64) for _ in range(5))
        # subnormals: scale by 2**54 so the exponent field is meaningful
        f.local_get(x).f64_const(2.0**-1022).f64_lt().local_set(sub)
        f.local_get(x).f64_const(2.0**54).f64_mul().local_get(x).local_get(sub).select()
        f.i64_reinterpret_f64().local_set(bits)
        f.local_get(bits).i64_const(52).i64_shr_u().i64_const(0x7FF).i64_and()
        f.i64_const(1023).i64_sub().f64_convert_i64_s()
        f.f64_const(-54.0).f64_const(0.0).local_get(sub).select().f64_add().local_set(e)
        # mantissa in [1, 2), then in [sqrt(1/2), sqrt(2))
        f.local_get(bits).i64_const((1 << 52) - 1).i64_and()
        f.i64_const(0x3FF << 52).i64_or().f64_reinterpret_i64().local_set(m)
        f.local_get(m).f64_const(math.sqrt(2.0)).f64_gt()
        with f.if_():
            f.local_get(m).f64_const(0.5).f64_mul().local_set(m)
            f.local_get(e).f64_const(1.0).f64_add().local_set(e)
        # log(m) = fm - fm*s + 2 s^3 R(s^2), fm = m - 1 exact, s = fm / (m + 1)
        f.local_get(m).f64_const(1.0).f64_sub().local_set(fm)
        f.local_get(fm).local_get(m).f64_const(1.0).f64_add().f64_div().local_set(s)
        f.local_get(s).local_get(s).f64_mul().local_set(z)
        f.local_get(e).f64_const(_LN2_HI).f64_mul()  # exact
        f.local_get(fm)
        f.local_get(fm).local_get(s).f64_mul()
        f.f64_const(2.0).local_get(s).f64_mul().local_get(z).f64_mul()
        _horner(f, z, _coeffs("log"))
        f.f64_mul().f64_sub().f64_sub()  # log(m) = fm - (fm*s - 2 s^3 R)
        f.local_get(e).f64_const(_LN2_LO).f64_mul().f64_add().f64_add()
        # +inf; negative -> nan; zero -> -inf; nan
        _replace_if(f, _INF, _is(f, x, "eq", _INF))
        _replace_if(f, _NAN, _is(f, x, "lt", 0.0))
        _replace_if(f, -_INF, _is(f, x, "eq", 0.0))
        _replace_if(f, _NAN, _isnan(f, x))

    def _log1p(self, f: Function) -> None:
        x, u = 0, f.local(F64)
        # log(u) * x / (u - 1) with u = 1 + x rounded: u's rounding error cancels out
        f.local_get(x).f64_const(1.0).f64_add().local_tee(u).f64_const(1.0).f64_eq()
        with f.if_(F64):
            f.local_get(x)
            f.else_()
            f.local_get(u).call(self.get("log"))
            f.local_get(x).local_get(u).f64_const(1.0).f64_sub().f64_div().f64_mul()
        _replace_if(f, _INF, _is(f, x, "eq", _INF))


# ----------------------------------------------------------------------------- public API


def _is_float64(dtype) -> bool:
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if not isinstance(name, str):  # a scalar type such as numpy.float64
        name = getattr(dtype, "__name__", str(dtype))
    return name.lower() in ("float64", "f64")


def add_math_helpers(module: Module, names: Iterable[str], dtype="float64") -> dict[str, int]:
    """Emit the requested float64 helpers (and what they use) into `module`; name -> function
    index. Asking again for a helper returns the same index. (float32 is compiler/mathlib's:
    every float32 function decomposes into core ops.)
    """
    if not _is_float64(dtype):
        raise ValueError(f"math helpers exist for float64 only, not {dtype!r}")
    lib = module.memo.get("pyjax.mathlib")
    if lib is None:
        lib = module.memo["pyjax.mathlib"] = _Lib(module)
    out = {}
    for name in names:
        if name not in MATH_FUNCTIONS:
            known = ", ".join(MATH_FUNCTIONS)
            raise ValueError(f"unknown math helper {name!r}; available: {known}")
        out[name] = lib.get(name)
    return out


def math_index(m: Module, name: str, dtype_name: str) -> int:
    """Index of the float64 helper `name`: every other float function is core ops (compiler/mathlib)."""
    if dtype_name != "float64" or name not in MATH_FUNCTIONS:
        raise NotImplementedError(f"wasm backend: {name} on {dtype_name} (not expanded into core ops)")
    return add_math_helpers(m, [name], dtype_name)[name]


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def add_threefry2x32(module: Module) -> int:
    """Emit threefry2x32(key0, key1, x0, x1) -> (y0, y1) (u32 values as i32); its index.

    Threefry-2x32 with 20 rounds exactly as JAX's `threefry2x32`: key schedule
    (k0, k1, k0 ^ k1 ^ 0x1BD11BDA), rotations 13,15,26,6 / 17,29,16,24, a key injection
    after every four rounds with the injection count added to the second word.
    """
    if "pyjax.threefry2x32" in module.memo:
        return module.memo["pyjax.threefry2x32"]
    f = module.function("pyjax_threefry2x32", [I32] * 4, [I32, I32])
    module.memo["pyjax.threefry2x32"] = f.index
    k0, k1, x0, x1, k2 = 0, 1, 2, 3, f.local(I32)
    ks = (k0, k1, k2)
    f.local_get(k0).local_get(k1).i32_xor().i32_const(0x1BD11BDA).i32_xor().local_set(k2)
    f.local_get(x0).local_get(k0).i32_add().local_set(x0)
    f.local_get(x1).local_get(k1).i32_add().local_set(x1)
    for group in range(5):
        for rot in _ROTATIONS[group % 2]:
            f.local_get(x0).local_get(x1).i32_add().local_tee(x0)
            f.local_get(x1).i32_const(rot).i32_rotl().i32_xor().local_set(x1)
        f.local_get(x0).local_get(ks[(group + 1) % 3]).i32_add().local_set(x0)
        f.local_get(x1).local_get(ks[(group + 2) % 3]).i32_add()
        f.i32_const(group + 1).i32_add().local_set(x1)
    f.local_get(x0).local_get(x1)
    f.finish()
    return f.index
