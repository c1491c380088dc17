"""WGSL helper functions for generated kernels: accurate f32 math, NaN semantics, the core ops
WGSL lacks (half floats, saturating conversions, fmod, nextafter, integer pow), JAX integer
division and threefry2x32.

Why our own math: WGSL only promises loose error bounds for its builtins (exp, log, sin, ...);
Chrome's SwiftShader measured 1.9e-4 relative error on a tanh/exp/sin chain. Every function
here is built from +, -, *, /, sqrt, integer and bit operations only (WGSL rounds + - * exactly
and / within 2.5 ulp), with range reduction and minimax polynomials. Measured on lavapipe
(tests/webgpu/test_wgsl_math.py): at most 3.2e-7 relative error for every function over its
whole f32 domain, against 2e-6 asked for.

Rules the code follows, because WGSL compilers optimize floats loosely:
- NaN/inf are tested with bit patterns (``pj_isnan``), never with ``x != x`` (compilers may
  assume there are no NaNs); inf and NaN are built at run time (a const-expression that
  yields inf or NaN is a shader-creation error).
- No error-free transformations that rely on exact float cancellation such as
  ``(a + b) - a``: Mesa folds them (measured: ``x - ((x + 1) - 1)`` gives 0 on lavapipe).
  Extra precision comes from splitting numbers by masking mantissa bits, so products of the
  halves are exact whatever the compiler does.
- Polynomial coefficients are minimax fits (Lawson's algorithm, relative error, float64)
  rounded to f32; the fitted ranges are noted next to each polynomial.

Kernels get exp, log, expm1, log1p, exp2, log2, tanh, logistic and the hyperbolics written once
as core ops by pyjax/compiler/mathlib/ (the same algorithms as here); the helpers for exp and log
below remain for the helpers that call them (pow, cbrt) until those move there too.

Public API: ``helpers_for(names) -> str`` returns the WGSL for the named helpers plus their
dependencies, in dependency order; ``fn_name(name)`` gives the WGSL function name ("pj_" +
name); ``HELPER_NAMES`` lists what exists. Signatures are in ``SIGNATURES``.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

# the polynomials shared with the core-op decompositions (written once there, float32 sets)
from pyjax.compiler.mathlib import exponential
from pyjax.compiler.mathlib.expr import F32

_EXP_P, _LOG_Q = exponential._EXP_P[F32], exponential._LOG_Q[F32]

__all__ = ["HELPER_NAMES", "SIGNATURES", "fn_name", "helpers_for"]

_CODE: dict[str, str] = {}
_DEPS: dict[str, tuple[str, ...]] = {}
SIGNATURES: dict[str, str] = {}


def _f(v: float) -> str:
    """A WGSL literal for an f32-exact value (asserted), so parsing cannot round it."""
    r = struct.unpack("<f", struct.pack("<f", v))[0]
    if r != v:
        raise ValueError(f"{v!r} is not exactly representable as f32")
    s = repr(v)
    return s if ("." in s or "e" in s) else s + ".0"


def _poly(var: str, coefs: list[float]) -> str:
    """Horner form c0 + var * (c1 + var * (...))."""
    out = _f(coefs[-1])
    for c in reversed(coefs[:-1]):
        out = f"({_f(c)} + {var} * {out})"
    return out


def _def(name: str, deps: tuple[str, ...], signature: str, code: str) -> None:
    _CODE[name] = code.strip("\n") + "\n"
    _DEPS[name] = deps
    SIGNATURES[name] = signature


# Fast variants: the helper without a rarely needed, costly path. Where a kernel calls sin, cos
# or tan with an argument for which SLOW_IF holds, the fast variant is wrong: the kernel tests
# that at each such call and, if any test held, runs again with the exact helpers. Worth it only
# on adapters that execute both sides of every branch (SwiftShader). Helpers that call these
# internally (sinpi) pass only small arguments, for which the fast variants are exact.
_FAST: dict[str, tuple[tuple[str, ...], str]] = {}
SLOW_IF = {name: "(abs({}) > 4096.0)" for name in ("sin", "cos", "tan")}


def _def_fast(name: str, deps: tuple[str, ...], code: str) -> None:
    _FAST[name] = (deps, code.strip("\n") + "\n")


def fn_name(name: str) -> str:
    """The WGSL function name of helper `name`."""
    if name not in _CODE:
        raise KeyError(f"unknown WGSL helper {name!r}")
    return "pj_" + name


def helpers_for(names: Iterable[str], fast: bool = False) -> str:
    """WGSL source defining the named helpers and everything they call, each once, callees first.

    fast=True takes the fast variants (see _def_fast).
    """
    order: list[str] = []
    seen: set[str] = set()

    def visit(n: str) -> None:
        if n in seen:
            return
        if n not in _CODE:
            raise KeyError(f"unknown WGSL helper {n!r}; known: {sorted(_CODE)}")
        seen.add(n)
        for d in _FAST[n][0] if fast and n in _FAST else _DEPS[n]:
            visit(d)
        order.append(n)

    for n in sorted(set(names)):
        visit(n)
    return "\n".join(_FAST[n][1] if fast and n in _FAST else _CODE[n] for n in order)


# ---- constants (f32-exact) --------------------------------------------------------------

_PIO2_HI = 1.5707963705062866  # f32(pi/2)
_PIO2_LO = -4.371138828673793e-08  # pi/2 - _PIO2_HI
_PI_HI = 3.1415927410125732
_PI_LO = -8.742277657347586e-08
_PIO4_HI = 0.7853981852531433
_PIO4_LO = -2.1855694143368964e-08
_LN2_HI = 0.693145751953125  # ln 2 to 16 bits: k * _LN2_HI is exact for |k| < 256
_LN2_LO = 1.428606765330187e-06
_LN2 = 0.6931471824645996
_LOG2E = 1.4426950216293335
_INVLN2_HI = 1.4423828125  # 1/ln 2 to 12 bits (exact products with 12-bit numbers)
_INVLN2_LO = 0.00031222839606925845
_LOG10E = 0.4342944920063019
_LOG10_2 = 0.3010300099849701
_SQRT2 = 1.4142135381698608
_TWO_OVER_PI = 0.6366197466850281
# pi/2 = _CW1 + _CW2 + _CW3 + _CW4 (+ 8e-20); the first three have 12 significant bits, so
# k * _CWi is exact for integer k < 4096 (Cody-Waite reduction for |x| <= 4096).
_CW1 = 1.5703125
_CW2 = 0.0004837512969970703
_CW3 = 7.549533620476723e-08
_CW4 = 2.5633440682570896e-12
# 2/pi in binary, 32 bits per word, most significant first (for Payne-Hanek reduction).
_TWO_OVER_PI_WORDS = (
    0xA2F9836E,
    0x4E441529,
    0xFC2757D1,
    0xF534DDC0,
    0xDB629599,
    0x3C439041,
    0xFE5163AB,
    0xDEBBC561,
)

# sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2), |r| <= pi/4: 5e-12 and 1e-13.
_SIN_S = [
    -0.1666666716337204,
    0.008333329111337662,
    -0.0001983930415008217,
    2.718046516747563e-06,
]
# sin(r) = r + r^3 P(r^2) on |r| <= pi/2 (the fast variants' single polynomial): 1.92 ulp at
# most evaluated in f32, measured on 2M points.
_SIN_PI2 = [-0.16666659712791443, 0.00833306647837162, -0.0001980959059437737, 2.605750751172309e-06]
_COS_C = [
    0.0416666679084301,
    -0.0013888883404433727,
    2.479945214872714e-05,
    -2.720504994613293e-07,
]
# atan u = u + u^3 A(u^2), |u| <= tan(pi/8): 2e-11.
_ATAN_A = [
    -0.3333333134651184,
    0.19999903440475464,
    -0.14281980693340302,
    0.11044347286224365,
    -0.08474255353212357,
    0.04739707335829735,
]
# asin x = x + x^3 B(x^2), |x| <= 0.5: 3e-10.
_ASIN_B = [
    0.16666659712791443,
    0.07500509917736053,
    0.044515710324048996,
    0.03181875869631767,
    0.01439452450722456,
    0.0375814251601696,
]

# ---- bits, NaN and infinity -------------------------------------------------------------

_def(
    "isnan",
    (),
    "pj_isnan(x: f32) -> bool",
    """
fn pj_isnan(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u; }
""",
)
_def(
    "mul",
    (),
    "pj_mul(a: f32, b: f32, z: f32) -> f32  (IEEE product; z is a run-time -0.0)",
    """
fn pj_mul(a: f32, b: f32, z: f32) -> f32 {
  // fma with an opaque zero: never contracted into a following add. The sign is or-ed back in
  // because Vulkan drivers may drop the sign of a zero product (no SignedZeroInfNanPreserve).
  let p = bitcast<u32>(fma(a, b, z));
  return bitcast<f32>(p | ((bitcast<u32>(a) ^ bitcast<u32>(b)) & 0x80000000u));
}
""",
)
_def(
    "div",
    ("isnan", "nan"),
    "pj_div(a: f32, b: f32) -> f32  (IEEE quotient at zero and infinite divisors)",
    """
fn pj_div(a: f32, b: f32) -> f32 {
  // Vulkan leaves x / 0 and x / inf undefined (lavapipe returns 0 for 0 / 0): spell them out.
  let ua = bitcast<u32>(a);
  let ub = bitcast<u32>(b);
  let sign = (ua ^ ub) & 0x80000000u;
  let aa = ua & 0x7fffffffu;
  let ab = ub & 0x7fffffffu;
  // Selects, not early returns: SwiftShader runs every return path masked (3x the cost).
  let by_zero = bitcast<f32>(select(sign | 0x7f800000u, 0x7fc00000u, aa == 0u));
  let by_inf = bitcast<f32>(select(sign, 0x7fc00000u, aa == 0x7f800000u));
  let q = select(select(a / b, by_inf, ab == 0x7f800000u), by_zero, ab == 0u);
  return select(q, pj_nan(), aa > 0x7f800000u || ab > 0x7f800000u);
}
""",
)
_def(
    "isinf",
    (),
    "pj_isinf(x: f32) -> bool",
    """
fn pj_isinf(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u; }
""",
)
_def(
    "isfinite",
    (),
    "pj_isfinite(x: f32) -> bool",
    """
fn pj_isfinite(x: f32) -> bool { return (bitcast<u32>(x) & 0x7fffffffu) < 0x7f800000u; }
""",
)
# Built from a `var`, so the bitcast is a run-time expression (no const-eval error).
_def(
    "nan",
    (),
    "pj_nan() -> f32",
    """
fn pj_nan() -> f32 { var b = 0x7fc00000u; return bitcast<f32>(b); }
""",
)
_def(
    "inf",
    (),
    "pj_inf() -> f32",
    """
fn pj_inf() -> f32 { var b = 0x7f800000u; return bitcast<f32>(b); }
""",
)
_def(
    "copysign",
    (),
    "pj_copysign(x: f32, s: f32) -> f32",
    """
fn pj_copysign(x: f32, s: f32) -> f32 {
  return bitcast<f32>((bitcast<u32>(x) & 0x7fffffffu) | (bitcast<u32>(s) & 0x80000000u));
}
""",
)
# x with its sign flipped when s is negative (incl. -0): odd functions keep sin(-0) = -0.
_def(
    "xorsign",
    (),
    "pj_xorsign(x: f32, s: f32) -> f32",
    """
fn pj_xorsign(x: f32, s: f32) -> f32 {
  return bitcast<f32>(bitcast<u32>(x) ^ (bitcast<u32>(s) & 0x80000000u));
}
""",
)
# Keep the 12 leading significant bits: products of two such numbers are exact in f32.
_def(
    "hi12",
    (),
    "pj_hi12(x: f32) -> f32",
    """
fn pj_hi12(x: f32) -> f32 { return bitcast<f32>(bitcast<u32>(x) & 0xfffff000u); }
""",
)
_def(
    "fmax",
    ("isnan",),
    "pj_fmax(a: f32, b: f32) -> f32  (NaN if either is NaN)",
    """
fn pj_fmax(a: f32, b: f32) -> f32 {
  return select(b, a, a > b || pj_isnan(a));  // b when b is NaN; selects beat max() (pj_clampf)
}
""",
)
_def(
    "fmin",
    ("isnan",),
    "pj_fmin(a: f32, b: f32) -> f32  (NaN if either is NaN)",
    """
fn pj_fmin(a: f32, b: f32) -> f32 {
  return select(b, a, a < b || pj_isnan(a));
}
""",
)
for _name, _op, _nan in [
    ("eq", "==", "false"),
    ("ne", "!=", "true"),
    ("lt", "<", "false"),
    ("le", "<=", "false"),
    ("gt", ">", "false"),
    ("ge", ">=", "false"),
]:
    _def(
        _name,
        ("isnan",),
        f"pj_{_name}(a: f32, b: f32) -> bool  (IEEE: NaN compares unequal)",
        f"""
fn pj_{_name}(a: f32, b: f32) -> bool {{
  return select(a {_op} b, {_nan}, pj_isnan(a) || pj_isnan(b));
}}
""",
    )

# An integer-valued f with |f| < 2^22 as i32: f + 1.5 * 2^23 is exact and its low mantissa bits
# hold f. Cheaper than i32(f), which WGSL defines as saturating (SwiftShader: ~10 multiplies).
_def(
    "small_int",
    (),
    "pj_small_int(f: f32) -> i32  (f integer-valued, |f| < 2^22)",
    """
fn pj_small_int(f: f32) -> i32 { return bitcast<i32>(f + 12582912.0) - 0x4b400000; }
""",
)
# 2^k for integer-valued f32 k in [-126, 127], in one add and one integer multiply: k + 127 +
# 1.5 * 2^23 holds k + 127 in its low bits, and times 2^23 (mod 2^32) moves them into the exponent
# field and the constant's own bits out of the word. A multiply, not `<< 23u`: SwiftShader runs
# constant shifts lane by lane (measured per 2^20 values: a shift 1.6 ms, an integer multiply 0.3).
_def(
    "pow2f",
    (),
    "pj_pow2f(k: f32) -> f32  (k integer-valued, in [-126, 127])",
    """
fn pj_pow2f(k: f32) -> f32 { return bitcast<f32>(bitcast<i32>(k + 12583039.0) * 8388608); }
""",
)
# x limited to [lo, hi], NaN kept. Selects, not clamp() / min() / max(): SwiftShader spent 1.75
# ms per 2^20 values on a clamp and 0.9 on a min, against 0.7 for two selects.
_def(
    "clampf",
    (),
    "pj_clampf(x: f32, lo: f32, hi: f32) -> f32  (NaN stays NaN)",
    """
fn pj_clampf(x: f32, lo: f32, hi: f32) -> f32 { return select(select(x, hi, x > hi), lo, x < lo); }
""",
)
# p * 2^k (k integer-valued) in two exact steps, so results may be subnormal or overflow to inf
# correctly. k as f32: halving it is a float multiply, where an i32 shift is dear.
_def(
    "ldexp",
    ("pow2f", "clampf"),
    "pj_ldexp(p: f32, k: f32) -> f32  (k integer-valued)",
    """
fn pj_ldexp(p: f32, k: f32) -> f32 {
  let kc = pj_clampf(k, -252.0, 254.0);
  let k1 = floor(kc * 0.5);
  return (p * pj_pow2f(k1)) * pj_pow2f(kc - k1);
}
""",
)

# ---- exponentials -------------------------------------------------------------------------

# expm1 on |r| <= ln2/2 (also the core of exp).
_def(
    "expm1_kernel",
    (),
    "pj_expm1_kernel(r: f32) -> f32  (|r| <= 0.35)",
    f"""
fn pj_expm1_kernel(r: f32) -> f32 {{ return r + (r * r) * {_poly("r", _EXP_P)}; }}
""",
)
_def(
    "exp",
    ("expm1_kernel", "pow2f", "clampf", "isnan"),
    "pj_exp(x: f32) -> f32",
    f"""
fn pj_exp(x: f32) -> f32 {{
  let xc = pj_clampf(x, -104.0, 89.0);
  // floor(v + 0.5), not round(): a tie may go either way (|r| <= ln2/2 both ways), and round is
  // several times dearer on SwiftShader.
  let kf = floor(xc * {_f(_LOG2E)} + 0.5);
  let r = (xc - kf * {_f(_LN2_HI)}) - kf * {_f(_LN2_LO)};
  // 2^k as 2^k1 * 2^(k - k1), both normal for k in [-150, 129]: the first multiply is exact and
  // the second rounds once, into the subnormals or to inf: what pj_ldexp does, without its
  // clamp, and fewer operations than scaling by selects (none of which SwiftShader likes).
  let k1 = floor(kf * 0.5);
  let y = ((1.0 + pj_expm1_kernel(r)) * pj_pow2f(k1)) * pj_pow2f(kf - k1);
  return select(y, x, pj_isnan(x));
}}
""",
)
_def(
    "exp2",
    ("expm1_kernel", "ldexp", "clampf", "isnan"),
    "pj_exp2(x: f32) -> f32",
    f"""
fn pj_exp2(x: f32) -> f32 {{
  let xc = pj_clampf(x, -152.0, 130.0);
  let kf = floor(xc + 0.5);
  let y = pj_ldexp(1.0 + pj_expm1_kernel((xc - kf) * {_f(_LN2)}), kf);
  return select(y, x, pj_isnan(x));
}}
""",
)
# Branch-free (a CPU adapter such as SwiftShader runs both sides of every branch): for
# |x| <= ln2/2, k = 0 and this is the kernel itself; past 2^127 the scale goes through ldexp.
_def(
    "expm1",
    ("expm1_kernel", "ldexp", "pow2f", "clampf", "isnan"),
    "pj_expm1(x: f32) -> f32",
    f"""
fn pj_expm1(x: f32) -> f32 {{
  let xc = pj_clampf(x, -104.0, 89.0);
  let kf = floor(xc * {_f(_LOG2E)} + 0.5);
  let r = (xc - kf * {_f(_LN2_HI)}) - kf * {_f(_LN2_LO)};
  let p = pj_expm1_kernel(r);
  let s = pj_pow2f(pj_clampf(kf, -30.0, 126.0));
  // 2^k expm1(r) + (2^k - 1): 2^k - 1 is exact, no cancellation worse than 2x.
  let y = select(s * p + (s - 1.0), pj_ldexp(1.0 + p, kf) - 1.0, kf > 126.0);
  // x itself for NaN and +-0 (expm1(-0) = -0).
  return select(y, x, pj_isnan(x) || x == 0.0);
}}
""",
)

# ---- logarithms ---------------------------------------------------------------------------

# ln(1+f) for f in [sqrt(1/2)-1, sqrt(2)-1]; f itself must be exact.
_def(
    "log1p_kernel",
    (),
    "pj_log1p_kernel(f: f32) -> f32  (|f| <= 0.415)",
    f"""
fn pj_log1p_kernel(f: f32) -> f32 {{
  let s = f / (2.0 + f);
  let z = s * s;
  return 2.0 * s + (s * z) * {_poly("z", _LOG_Q)};
}}
""",
)
# x = 2^e * m with m in [sqrt(1/2), sqrt(2)), from the bits (subnormals included, even where
# the hardware flushes them). Returns (e, m - 1) for finite x > 0.
_def(
    "frexp_sqrt2",
    (),
    "pj_frexp_sqrt2(x: f32) -> vec2<f32>  ((e, m - 1), x finite > 0)",
    f"""
fn pj_frexp_sqrt2(x: f32) -> vec2<f32> {{
  // Branch-free, and no shifts or countLeadingZeros (SwiftShader runs those lane by lane): a
  // subnormal's bits, converted as an integer, are the normal number x * 2^149; the biased
  // exponent field, converted as an integer (a multiple of 2^23 below 2^31, so exactly), is
  // the exponent times 2^23.
  let b0 = bitcast<u32>(x) & 0x7fffffffu;
  let sub = b0 < 0x00800000u;
  let b = select(b0, bitcast<u32>(f32(i32(b0))), sub);
  let e = f32(i32(b & 0x7f800000u)) * {_f(2.0**-23)} - select(127.0, 276.0, sub);
  let m = bitcast<f32>((b & 0x007fffffu) | 0x3f800000u);
  let big = m > {_f(_SQRT2)};
  return vec2<f32>(e + select(0.0, 1.0, big), select(m, m * 0.5, big) - 1.0);
}}
""",
)
# NaN for x < 0 or NaN, -inf for +-0, x for +inf; else `v`.
_def(
    "log_special",
    ("nan", "inf"),
    "pj_log_special(x: f32, v: f32) -> f32",
    """
fn pj_log_special(x: f32, v: f32) -> f32 {
  let b = bitcast<u32>(x);
  let a = b & 0x7fffffffu;
  let r = select(v, x, b == 0x7f800000u);
  return select(select(r, pj_nan(), b > 0x80000000u || a > 0x7f800000u), -pj_inf(), a == 0u);
}
""",
)
_def(
    "log",
    ("frexp_sqrt2", "log1p_kernel", "log_special"),
    "pj_log(x: f32) -> f32",
    f"""
fn pj_log(x: f32) -> f32 {{
  let ef = pj_frexp_sqrt2(x);
  let y = ef.x * {_f(_LN2_HI)} + (pj_log1p_kernel(ef.y) + ef.x * {_f(_LN2_LO)});
  return pj_log_special(x, y);
}}
""",
)
_def(
    "log2",
    ("frexp_sqrt2", "log1p_kernel", "log_special"),
    "pj_log2(x: f32) -> f32",
    f"""
fn pj_log2(x: f32) -> f32 {{
  let ef = pj_frexp_sqrt2(x);
  return pj_log_special(x, ef.x + pj_log1p_kernel(ef.y) * {_f(_LOG2E)});
}}
""",
)
_def(
    "log10",
    ("frexp_sqrt2", "log1p_kernel", "log_special"),
    "pj_log10(x: f32) -> f32",
    f"""
fn pj_log10(x: f32) -> f32 {{
  let ef = pj_frexp_sqrt2(x);
  return pj_log_special(x, ef.x * {_f(_LOG10_2)} + pj_log1p_kernel(ef.y) * {_f(_LOG10E)});
}}
""",
)
# |x| < 0.2928: 1 + x would round, so use x directly; elsewhere the rounding of 1 + x costs
# at most 2.3e-7 relative.
_def(
    "log1p",
    ("log1p_kernel", "log"),
    "pj_log1p(x: f32) -> f32",
    """
fn pj_log1p(x: f32) -> f32 {
  return select(pj_log(1.0 + x), pj_log1p_kernel(x), abs(x) < 0.2928);
}
""",
)

# ---- trigonometry -------------------------------------------------------------------------

_def(
    "sin_kernel",
    (),
    "pj_sin_kernel(r: f32) -> f32  (|r| <= pi/4)",
    f"""
fn pj_sin_kernel(r: f32) -> f32 {{ let z = r * r; return r + (r * z) * {_poly("z", _SIN_S)}; }}
""",
)
_def(
    "cos_kernel",
    (),
    "pj_cos_kernel(r: f32) -> f32  (|r| <= pi/4)",
    f"""
fn pj_cos_kernel(r: f32) -> f32 {{
  let z = r * r;
  return 1.0 - (0.5 * z - (z * z) * {_poly("z", _COS_C)});
}}
""",
)
# 64x32-bit helpers for Payne-Hanek: full 32x32 -> 64 product as (lo, hi).
_def(
    "mulwide_u32",
    (),
    "pj_mulwide_u32(a: u32, b: u32) -> vec2<u32>  ((lo, hi) of a*b)",
    """
fn pj_mulwide_u32(a: u32, b: u32) -> vec2<u32> {
  let a0 = a & 0xffffu;
  let a1 = a >> 16u;
  let b0 = b & 0xffffu;
  let b1 = b >> 16u;
  let p00 = a0 * b0;
  let p01 = a0 * b1;
  let p10 = a1 * b0;
  let mid = (p00 >> 16u) + (p01 & 0xffffu) + (p10 & 0xffffu);
  let hi = a1 * b1 + (p01 >> 16u) + (p10 >> 16u) + (mid >> 16u);
  return vec2<u32>((mid << 16u) | (p00 & 0xffffu), hi);
}
""",
)
_cases = "\n".join(f"    case {i}: {{ return 0x{w:08x}u; }}" for i, w in enumerate(_TWO_OVER_PI_WORDS[:-1]))
# Word i of 2/pi (a switch, not an array: arrays indexed at run time live in slow local memory).
_def(
    "two_over_pi_word",
    (),
    "pj_two_over_pi_word(i: i32) -> u32  (bits 32i+1 .. 32i+32 of 2/pi)",
    f"""
fn pj_two_over_pi_word(i: i32) -> u32 {{
  switch i {{
{_cases}
    default: {{ return 0x{_TWO_OVER_PI_WORDS[-1]:08x}u; }}
  }}
}}
""",
)
# Payne-Hanek in integer arithmetic for finite ax > 4096: the 24-bit mantissa times the 128 bits
# of 2/pi that the exponent selects (earlier bits only add multiples of 4) gives ax * 2/pi
# mod 4 to 2^-62; returns (r, q) as pj_trig_reduce.
_def(
    "trig_reduce_big",
    ("mulwide_u32", "two_over_pi_word"),
    "pj_trig_reduce_big(ax: f32) -> vec2<f32>  ((r, q), ax finite > 4096)",
    f"""
fn pj_trig_reduce_big(ax: f32) -> vec2<f32> {{
  let bits = bitcast<u32>(ax);
  let m = (bits & 0x7fffffu) | 0x800000u;
  let e = i32(bits >> 23u) - 150;
  let j = max(0, (e - 2) >> 5u);
  // m * words j..j+3 as five 32-bit limbs l0 (least significant) .. l4; the high half of each
  // 24x32-bit product is below 2^24, so adding a carry to it cannot overflow.
  let p3 = pj_mulwide_u32(m, pj_two_over_pi_word(j + 3));
  let p2 = pj_mulwide_u32(m, pj_two_over_pi_word(j + 2));
  let p1 = pj_mulwide_u32(m, pj_two_over_pi_word(j + 1));
  let p0 = pj_mulwide_u32(m, pj_two_over_pi_word(j));
  let l1 = p3.y + p2.x;
  let l2 = (p2.y + select(0u, 1u, l1 < p2.x)) + p1.x;
  let l3 = (p1.y + select(0u, 1u, l2 < p1.x)) + p0.x;
  let l4 = p0.y + select(0u, 1u, l3 < p0.x);
  // Bits [sh, sh + 63] of the product (sh in [33, 77]) hold ax * 2/pi from the 2^1 place
  // down to 2^-62: three limbs starting at limb sh / 32 (1 or 2), shifted by sh % 32.
  let sh = u32(66 - e + 32 * j);
  let first = (sh >> 5u) == 1u;
  let a = select(l2, l1, first);
  let b = select(l3, l2, first);
  let c = select(l4, l3, first);
  let o = sh & 31u;
  var lo = a;
  var hi = b;
  if (o != 0u) {{
    lo = (a >> o) | (b << (32u - o));
    hi = (b >> o) | (c << (32u - o));
  }}
  // Round to the nearest quadrant: add half a quadrant, then re-center the fraction.
  hi = hi + 0x20000000u;
  let q = hi >> 30u;
  var fh = (hi & 0x3fffffffu) - 0x20000000u;
  var fl = lo;
  let neg = (fh & 0x80000000u) != 0u;
  if (neg) {{
    fl = ~fl + 1u;
    fh = ~fh + select(0u, 1u, fl == 0u);
  }}
  // (fh * 2^32 + fl) * 2^-62 quadrants, then radians.
  let mag = (f32(fh) * 9.313225746154785e-10 + f32(fl) * 2.168404344971009e-19) * {_f(_PIO2_HI)};
  return vec2<f32>(select(mag, -mag, neg), f32(q));
}}
""",
)
# |x| = (q + r / (pi/2)) * pi/2 with q mod 4 and |r| <= ~pi/4, for finite |x| >= 0: Cody-Waite
# (4-part pi/2, exact products for k < 4096) up to 4096, Payne-Hanek above.
_def(
    "trig_reduce_cw",
    ("small_int",),
    "pj_trig_reduce_cw(ax: f32) -> vec2<f32>  ((r, q), 0 <= ax <= 4096)",
    f"""
fn pj_trig_reduce_cw(ax: f32) -> vec2<f32> {{
  let k = floor(ax * {_f(_TWO_OVER_PI)} + 0.5);
  let r = (((ax - k * {_f(_CW1)}) - k * {_f(_CW2)}) - k * {_f(_CW3)}) - k * {_f(_CW4)};
  return vec2<f32>(r, f32(pj_small_int(k) & 3));
}}
""",
)
_def(
    "trig_reduce",
    ("trig_reduce_cw", "trig_reduce_big"),
    "pj_trig_reduce(ax: f32) -> vec2<f32>  ((r, q), ax finite >= 0)",
    """
fn pj_trig_reduce(ax: f32) -> vec2<f32> {
  if (ax > 4096.0) { return pj_trig_reduce_big(ax); }
  return pj_trig_reduce_cw(ax);
}
""",
)
_def_fast(
    "trig_reduce",
    ("trig_reduce_cw",),
    """
fn pj_trig_reduce(ax: f32) -> vec2<f32> { return pj_trig_reduce_cw(ax); }
""",
)
_def(
    "sin",
    ("trig_reduce", "sin_kernel", "cos_kernel", "xorsign", "small_int", "isfinite", "nan"),
    "pj_sin(x: f32) -> f32",
    """
fn pj_sin(x: f32) -> f32 {
  // Branch-free (SwiftShader runs every path): inf and NaN reduce to garbage, replaced at the end.
  let rq = pj_trig_reduce(abs(x));
  let q = pj_small_int(rq.y);
  var y = select(pj_sin_kernel(rq.x), pj_cos_kernel(rq.x), (q & 1) == 1);
  y = select(y, -y, q >= 2);
  return select(pj_nan(), pj_xorsign(y, x), pj_isfinite(x));
}
""",
)
# Fast sin and cos (see _def_fast): reduced by multiples of pi, not pi/2, so one polynomial on
# |r| <= pi/2 does, without computing both kernels and selecting by quadrant. The reduction is
# the Cody-Waite one of pj_trig_reduce_cw with m = 2k (or 2k + 1 for cos) halves of pi. No
# infinity gets here (the kernel's check sends it to the exact helpers) and NaN propagates
# through r, so neither needs a select; the sign comes from k's parity, the lowest bit of k + 2^23.
_SIN_FAST = f"""
  let ax = abs(x);
  let r = (((ax - m * {_f(_CW1)}) - m * {_f(_CW2)}) - m * {_f(_CW3)}) - m * {_f(_CW4)};
  let z = r * r;
  let s = r + (r * z) * {_poly("z", _SIN_PI2)};
  let odd = bitcast<u32>(k + 8388608.0) << 31u;"""
_def_fast(
    "sin",
    (),
    f"""
fn pj_sin(x: f32) -> f32 {{
  // sin |x| = (-1)^k sin r with |x| = k pi + r
  let k = floor(abs(x) * {_f(_TWO_OVER_PI / 2)} + 0.5);
  let m = 2.0 * k;{_SIN_FAST}
  return bitcast<f32>(bitcast<u32>(s) ^ odd ^ (bitcast<u32>(x) & 0x80000000u));
}}
""",
)
_def_fast(
    "cos",
    (),
    f"""
fn pj_cos(x: f32) -> f32 {{
  // cos |x| = (-1)^(k + 1) sin r with |x| = (k + 1/2) pi + r: accurate near the zeros of cos
  let k = floor(abs(x) * {_f(_TWO_OVER_PI / 2)});
  let m = 2.0 * k + 1.0;{_SIN_FAST}
  return bitcast<f32>(bitcast<u32>(s) ^ odd ^ 0x80000000u);
}}
""",
)
_def(
    "cos",
    ("trig_reduce", "sin_kernel", "cos_kernel", "small_int", "isfinite", "nan"),
    "pj_cos(x: f32) -> f32",
    """
fn pj_cos(x: f32) -> f32 {
  let rq = pj_trig_reduce(abs(x));
  let q = pj_small_int(rq.y);
  var y = select(pj_cos_kernel(rq.x), pj_sin_kernel(rq.x), (q & 1) == 1);
  y = select(y, -y, q == 1 || q == 2);
  return select(pj_nan(), y, pj_isfinite(x));
}
""",
)
_def(
    "tan",
    ("trig_reduce", "sin_kernel", "cos_kernel", "xorsign", "small_int", "isfinite", "nan"),
    "pj_tan(x: f32) -> f32",
    """
fn pj_tan(x: f32) -> f32 {
  let rq = pj_trig_reduce(abs(x));
  let s = pj_sin_kernel(rq.x);
  let c = pj_cos_kernel(rq.x);
  let y = select(s / c, -c / s, (pj_small_int(rq.y) & 1) == 1);
  return select(pj_nan(), pj_xorsign(y, x), pj_isfinite(x));
}
""",
)

# ---- inverse trigonometry -----------------------------------------------------------------

_def(
    "asin_kernel",
    (),
    "pj_asin_kernel(x: f32) -> f32  (|x| <= 0.5)",
    f"""
fn pj_asin_kernel(x: f32) -> f32 {{ let z = x * x; return x + (x * z) * {_poly("z", _ASIN_B)}; }}
""",
)
_def(
    "asin",
    ("asin_kernel", "copysign", "nan"),
    "pj_asin(x: f32) -> f32",
    f"""
fn pj_asin(x: f32) -> f32 {{
  let ax = abs(x);
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x3f800000u) {{ return pj_nan(); }}
  var y = pj_asin_kernel(ax);
  if (ax > 0.5) {{
    // asin(x) = pi/2 - 2 asin(sqrt((1 - x) / 2)); 1 - x is exact here.
    y = ({_f(_PIO2_HI)} - 2.0 * pj_asin_kernel(sqrt((1.0 - ax) * 0.5))) + {_f(_PIO2_LO)};
  }}
  return pj_copysign(y, x);
}}
""",
)
_def(
    "acos",
    ("asin_kernel", "nan"),
    "pj_acos(x: f32) -> f32",
    f"""
fn pj_acos(x: f32) -> f32 {{
  let ax = abs(x);
  if ((bitcast<u32>(x) & 0x7fffffffu) > 0x3f800000u) {{ return pj_nan(); }}
  if (ax <= 0.5) {{ return {_f(_PIO2_HI)} - (pj_asin_kernel(x) - {_f(_PIO2_LO)}); }}
  let a = 2.0 * pj_asin_kernel(sqrt((1.0 - ax) * 0.5));
  if (x > 0.0) {{ return a; }}
  return ({_f(_PI_HI)} - a) + {_f(_PI_LO)};
}}
""",
)
_def(
    "atan_kernel",
    (),
    "pj_atan_kernel(u: f32) -> f32  (|u| <= tan(pi/8))",
    f"""
fn pj_atan_kernel(u: f32) -> f32 {{ let z = u * u; return u + (u * z) * {_poly("z", _ATAN_A)}; }}
""",
)
# atan(t) for t in [0, 1].
_def(
    "atan01",
    ("atan_kernel",),
    "pj_atan01(t: f32) -> f32  (0 <= t <= 1)",
    f"""
fn pj_atan01(t: f32) -> f32 {{
  if (t > 0.41421356) {{
    return {_f(_PIO4_HI)} + (pj_atan_kernel((t - 1.0) / (t + 1.0)) + {_f(_PIO4_LO)});
  }}
  return pj_atan_kernel(t);
}}
""",
)
_def(
    "atan",
    ("atan01", "copysign", "isnan"),
    "pj_atan(x: f32) -> f32",
    f"""
fn pj_atan(x: f32) -> f32 {{
  if (pj_isnan(x)) {{ return x; }}
  let ax = abs(x);
  var y: f32;
  if (ax > 1.0) {{
    y = {_f(_PIO2_HI)} - (pj_atan01(1.0 / ax) - {_f(_PIO2_LO)});
  }} else {{
    y = pj_atan01(ax);
  }}
  return pj_copysign(y, x);
}}
""",
)
_def(
    "atan2",
    ("atan01", "copysign", "isnan", "isinf"),
    "pj_atan2(y: f32, x: f32) -> f32",
    f"""
fn pj_atan2(y: f32, x: f32) -> f32 {{
  if (pj_isnan(x) || pj_isnan(y)) {{ return x + y; }}
  let ax = abs(x);
  let ay = abs(y);
  let xneg = (bitcast<u32>(x) & 0x80000000u) != 0u;
  var a: f32;
  if ((ay == 0.0 && ax == 0.0) || (pj_isinf(ax) && pj_isinf(ay))) {{
    // atan2(+-0, +-0) and atan2(+-inf, +-inf), as in C99 and numpy.
    a = select(0.0, {_f(_PIO4_HI)}, pj_isinf(ax));
  }} else if (ay <= ax) {{
    a = pj_atan01(ay / ax);
  }} else {{
    a = {_f(_PIO2_HI)} - (pj_atan01(ax / ay) - {_f(_PIO2_LO)});
  }}
  if (xneg) {{ a = ({_f(_PI_HI)} - a) + {_f(_PI_LO)}; }}
  return pj_copysign(a, y);
}}
""",
)

# ---- hyperbolic ---------------------------------------------------------------------------

# ---- pow ----------------------------------------------------------------------------------

# |x|^y for finite x > 0, finite y. log2|x| is carried as Th + Tl (Th 12 bits) to about 2^-36
# relative, y is split into 12-bit halves, so y * Th is exact and y * log2|x| is known to about
# 1e-8 absolute even when it is near +-150; then 2^n * exp((t - n) ln 2).
_def(
    "pow_core",
    ("frexp_sqrt2", "hi12", "expm1_kernel", "ldexp", "clampf"),
    "pj_pow_core(ax: f32, y: f32) -> f32  (ax finite > 0, y finite)",
    f"""
fn pj_pow_core(ax: f32, y: f32) -> f32 {{
  let ef = pj_frexp_sqrt2(ax);
  let e = ef.x;
  let f = ef.y;
  // s = f / (2 + f) as sh + sl: sh has 12 bits, sl from the exact residual f - sh (2 + f).
  let d = 2.0 + f;
  let sh = pj_hi12(f / d);
  let fh = pj_hi12(f);
  let num = ((f - 2.0 * sh) - sh * fh) - sh * (f - fh);
  let sl = num / d;
  let s = sh + sl;
  let z = s * s;
  // ln m = H + L with H = 2 sh exact; log2 m = H / ln2 split so that H * invln2_hi is exact.
  let hh = 2.0 * sh;
  let ll = 2.0 * sl + (s * z) * {_poly("z", _LOG_Q)};
  let p = hh * {_f(_INVLN2_HI)};
  let qt = hh * {_f(_INVLN2_LO)} + ll * {_f(_LOG2E)};
  let th = pj_hi12(e + (p + qt));
  let tl = ((e - th) + p) + qt;
  let yh = pj_hi12(y);
  let a = yh * th;
  let b = (y - yh) * th + y * tl;
  // n = round(y log2|x|); ac - n is exact; fr stays within [-0.5, 0.5] up to rounding
  // (clamped only when the result overflows or underflows anyway).
  let ac = pj_clampf(a, -300.0, 300.0);
  let n = floor(ac + b + 0.5);
  let fr = pj_clampf((ac - n) + b, -1.0, 1.0);
  return pj_ldexp(1.0 + pj_expm1_kernel(fr * {_f(_LN2)}), n);
}}
""",
)
_def(
    "pow",
    ("pow_core", "isnan", "isinf", "nan", "inf"),
    "pj_pow(x: f32, y: f32) -> f32  (C99/numpy powf)",
    """
fn pj_pow(x: f32, y: f32) -> f32 {
  let xb = bitcast<u32>(x);
  let yb = bitcast<u32>(y);
  if ((yb & 0x7fffffffu) == 0u || xb == 0x3f800000u) { return 1.0; }
  if (pj_isnan(x) || pj_isnan(y)) { return x + y; }
  let ax = abs(x);
  let ay = abs(y);
  let xneg = (xb & 0x80000000u) != 0u;
  let y_int = floor(y) == y;
  let y_odd = y_int && ay < 16777216.0 && (u32(ay) & 1u) == 1u;
  var r: f32;
  if (pj_isinf(y)) {
    if (ax == 1.0) { return 1.0; }
    return select(pj_inf(), 0.0, (ax < 1.0) == (y > 0.0));
  }
  if (ax == 0.0) {
    r = select(0.0, pj_inf(), y < 0.0);
  } else if (pj_isinf(ax)) {
    r = select(pj_inf(), 0.0, y < 0.0);
  } else {
    if (xneg && !y_int) { return pj_nan(); }
    r = pj_pow_core(ax, y);
  }
  return select(r, -r, xneg && y_odd);
}
""",
)

# ---- core ops WGSL lacks: half floats, saturating conversions, fmod, nextafter, integer pow ----

# Half floats are stored as 16-bit patterns and computed in f32: pj_f32_to_f16 rounds to nearest
# even in integer arithmetic (WGSL's pack2x16float leaves rounding and overflow unspecified).

_def(
    "f16_to_f32",
    (),
    "pj_f16_to_f32(h: u32) -> f32  (float16 bits)",
    """
fn pj_f16_to_f32(h: u32) -> f32 {
  let s = (h & 0x8000u) << 16u;
  let e = (h >> 10u) & 0x1fu;
  let m = h & 0x3ffu;
  if (e == 0x1fu) { return bitcast<f32>(s | 0x7f800000u | (m << 13u)); }
  if (e == 0u) { return bitcast<f32>(bitcast<u32>(f32(m) * 5.9604644775390625e-8) | s); }
  return bitcast<f32>(s | ((e + 112u) << 23u) | (m << 13u));
}
""",
)
_def(
    "f32_to_f16",
    (),
    "pj_f32_to_f16(x: f32) -> u32  (float16 bits, round to nearest even)",
    """
fn pj_f32_to_f16(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  let s = (b >> 16u) & 0x8000u;
  let a = b & 0x7fffffffu;
  if (a > 0x7f800000u) { return s | 0x7e00u | ((a >> 13u) & 0x3ffu); }
  if (a >= 0x477ff000u) { return s | 0x7c00u; }
  if (a >= 0x38800000u) {
    let r = a + 0xfffu + ((a >> 13u) & 1u);
    return s | ((r - 0x38000000u) >> 13u);
  }
  let e = a >> 23u;
  if (e < 102u) { return s; }
  let m = (a & 0x7fffffu) | 0x800000u;
  let sh = 126u - e;
  let q = m >> sh;
  let rem = m & ((1u << sh) - 1u);
  let half = 1u << (sh - 1u);
  let up = rem > half || (rem == half && (q & 1u) == 1u);
  return s | (q + select(0u, 1u, up));
}
""",
)
_def(
    "rf16",
    ("f16_to_f32", "f32_to_f16"),
    "pj_rf16(x: f32) -> f32  (x rounded to float16)",
    "fn pj_rf16(x: f32) -> f32 { return pj_f16_to_f32(pj_f32_to_f16(x)); }",
)
_def(
    "bf16_to_f32",
    (),
    "pj_bf16_to_f32(h: u32) -> f32  (bfloat16 bits)",
    "fn pj_bf16_to_f32(h: u32) -> f32 { return bitcast<f32>(h << 16u); }",
)
_def(
    "f32_to_bf16",
    (),
    "pj_f32_to_bf16(x: f32) -> u32  (bfloat16 bits, round to nearest even)",
    """
fn pj_f32_to_bf16(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return (b >> 16u) | 0x40u; }
  return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}
""",
)
_def(
    "rbf16",
    ("f32_to_bf16", "bf16_to_f32"),
    "pj_rbf16(x: f32) -> f32  (x rounded to bfloat16)",
    "fn pj_rbf16(x: f32) -> f32 { return pj_bf16_to_f32(pj_f32_to_bf16(x)); }",
)

# ---- saturating float -> int conversions (NaN -> 0), as the cpu reference ---------------------

_def(
    "f2i32",
    ("isnan",),
    "pj_f2i32(x: f32) -> i32  (saturating, NaN -> 0)",
    """
fn pj_f2i32(x: f32) -> i32 {
  if (pj_isnan(x)) { return 0; }
  if (x >= 2147483648.0) { return 2147483647; }
  if (x <= -2147483648.0) { return -2147483647 - 1; }
  return i32(x);
}
""",
)
_def(
    "f2u32",
    ("isnan",),
    "pj_f2u32(x: f32) -> u32  (saturating, NaN -> 0)",
    """
fn pj_f2u32(x: f32) -> u32 {
  if (pj_isnan(x) || x <= 0.0) { return 0u; }
  if (x >= 4294967296.0) { return 0xffffffffu; }
  return u32(x);
}
""",
)

# ---- exact fmod (lax.rem on floats), by long division of the mantissas ------------------------

_def(
    "fmod",
    ("nan",),
    "pj_fmod(x: f32, y: f32) -> f32  (exact, sign of x)",
    """
fn pj_fmod(x: f32, y: f32) -> f32 {
  let ux = bitcast<u32>(x);
  let ax = ux & 0x7fffffffu;
  let ay = bitcast<u32>(y) & 0x7fffffffu;
  let sx = ux & 0x80000000u;
  if (ay == 0u || ax >= 0x7f800000u || ay > 0x7f800000u) { return pj_nan(); }
  if (ax < ay) { return x; }
  if (ax == ay) { return bitcast<f32>(sx); }
  var ex = i32(ax >> 23u);
  var ey = i32(ay >> 23u);
  var mx = ax & 0x7fffffu;
  var my = ay & 0x7fffffu;
  if (ex == 0) { ex = 1; loop { if ((mx & 0x800000u) != 0u) { break; } mx = mx << 1u; ex = ex - 1; } }
  else { mx = mx | 0x800000u; }
  if (ey == 0) { ey = 1; loop { if ((my & 0x800000u) != 0u) { break; } my = my << 1u; ey = ey - 1; } }
  else { my = my | 0x800000u; }
  loop {
    if (ex <= ey) { break; }
    if (mx >= my) { mx = mx - my; }
    if (mx == 0u) { return bitcast<f32>(sx); }
    mx = mx << 1u;
    ex = ex - 1;
  }
  if (mx >= my) { mx = mx - my; }
  if (mx == 0u) { return bitcast<f32>(sx); }
  loop { if ((mx & 0x800000u) != 0u) { break; } mx = mx << 1u; ex = ex - 1; }
  var r: u32;
  if (ex > 0) { r = (mx - 0x800000u) | (u32(ex) << 23u); } else { r = mx >> u32(1 - ex); }
  return bitcast<f32>(r | sx);
}
""",
)

_def(
    "nextafter",
    ("isnan", "nan"),
    "pj_nextafter(x: f32, y: f32) -> f32",
    """
fn pj_nextafter(x: f32, y: f32) -> f32 {
  if (pj_isnan(x) || pj_isnan(y)) { return pj_nan(); }
  let ux = bitcast<u32>(x);
  let uy = bitcast<u32>(y);
  if (ux == uy || ((ux | uy) & 0x7fffffffu) == 0u) { return y; }
  if ((ux & 0x7fffffffu) == 0u) { return bitcast<f32>(1u | (uy & 0x80000000u)); }
  let up = (x < y) == ((ux & 0x80000000u) == 0u);
  return bitcast<f32>(select(ux - 1u, ux + 1u, up));
}
""",
)

for _h, _to, _from, _sign, _mag in (
    ("float16", "f32_to_f16", "f16_to_f32", "0x8000u", "0x7fffu"),
    ("bfloat16", "f32_to_bf16", "bf16_to_f32", "0x8000u", "0x7fffu"),
):
    _def(
        "nextafter_" + _h,
        ("isnan", "nan", _to, _from),
        f"pj_nextafter_{_h}(x: f32, y: f32) -> f32  ({_h} values in f32)",
        f"""
fn pj_nextafter_{_h}(x: f32, y: f32) -> f32 {{
  if (pj_isnan(x) || pj_isnan(y)) {{ return pj_nan(); }}
  if (x == y) {{ return y; }}
  let ux = pj_{_to}(x);
  if ((ux & {_mag}) == 0u) {{ return pj_{_from}(1u | (pj_{_to}(y) & {_sign})); }}
  let up = (x < y) == ((ux & {_sign}) == 0u);
  return pj_{_from}(select(ux - 1u, ux + 1u, up));
}}
""",
    )

_def(
    "cbrt",
    ("exp2", "log2", "copysign", "isfinite"),
    "pj_cbrt(x: f32) -> f32",
    """
fn pj_cbrt(x: f32) -> f32 {
  let a = abs(x);
  if (a == 0.0 || !pj_isfinite(x)) { return x; }
  var y = pj_exp2(pj_log2(a) / 3.0);
  y = y + (a / (y * y) - y) / 3.0;
  return pj_copysign(y, x);
}
""",
)

# ---- integer power (exponentiation by squaring, wrapping), for pow on integer arrays ---------

_def(
    "ipow_i32",
    (),
    "pj_ipow_i32(a: i32, b: i32) -> i32  (wrapping)",
    """
fn pj_ipow_i32(a: i32, b: i32) -> i32 {
  if (b < 0) { return select(select(0, 1, a == 1), select(-1, 1, (b & 1) == 0), a == -1); }
  var r = 1;
  var base = a;
  var e = u32(b);
  loop {
    if (e == 0u) { break; }
    if ((e & 1u) == 1u) { r = r * base; }
    base = base * base;
    e = e >> 1u;
  }
  return r;
}
""",
)
_def(
    "ipow_u32",
    (),
    "pj_ipow_u32(a: u32, b: u32) -> u32  (wrapping)",
    """
fn pj_ipow_u32(a: u32, b: u32) -> u32 {
  var r = 1u;
  var base = a;
  var e = b;
  loop {
    if (e == 0u) { break; }
    if ((e & 1u) == 1u) { r = r * base; }
    base = base * base;
    e = e >> 1u;
  }
  return r;
}
""",
)

# ---- integer division (JAX semantics) -----------------------------------------------------

# lax.div / lax.rem follow XLA: x / 0 = -1 (all ones for unsigned), x % 0 = x,
# INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0. jnp.floor_divide and jnp.remainder build on them
# (jnp.remainder(x, 0) = 0), as in jax/_src/numpy/ufuncs.py; all verified against jax.
_def(
    "div_i32",
    (),
    "pj_div_i32(a: i32, b: i32) -> i32  (lax.div: truncating)",
    """
fn pj_div_i32(a: i32, b: i32) -> i32 {
  let bad = b == 0 || (b == -1 && a == -2147483647 - 1);
  let q = a / select(b, 1, bad);
  return select(q, select(-1, a, b == -1), bad);
}
""",
)
_def(
    "rem_i32",
    (),
    "pj_rem_i32(a: i32, b: i32) -> i32  (lax.rem: sign of a)",
    """
fn pj_rem_i32(a: i32, b: i32) -> i32 {
  // a - (a / b) * b rather than `%`: NVIDIA's Vulkan driver computed i32 `%` as unsigned.
  let bad = b == 0 || b == -1;
  let bb = select(b, 1, bad);
  let r = a - (a / bb) * bb;
  return select(r, select(0, a, b == 0), bad);
}
""",
)
_def(
    "floordiv_i32",
    ("div_i32", "rem_i32"),
    "pj_floordiv_i32(a: i32, b: i32) -> i32  (jnp.floor_divide)",
    """
fn pj_floordiv_i32(a: i32, b: i32) -> i32 {
  let q = pj_div_i32(a, b);
  return select(q, q - 1, sign(a) != sign(b) && pj_rem_i32(a, b) != 0);
}
""",
)
_def(
    "mod_i32",
    ("rem_i32",),
    "pj_mod_i32(a: i32, b: i32) -> i32  (jnp.remainder: sign of b)",
    """
fn pj_mod_i32(a: i32, b: i32) -> i32 {
  let bb = select(b, 1, b == 0);
  let t = pj_rem_i32(a, bb);
  return select(t, t + bb, t != 0 && ((t < 0) != (bb < 0)));
}
""",
)
_def(
    "div_u32",
    (),
    "pj_div_u32(a: u32, b: u32) -> u32  (lax.div = jnp.floor_divide)",
    """
fn pj_div_u32(a: u32, b: u32) -> u32 {
  return select(a / select(b, 1u, b == 0u), 0xffffffffu, b == 0u);
}
""",
)
_def(
    "rem_u32",
    (),
    "pj_rem_u32(a: u32, b: u32) -> u32  (lax.rem)",
    """
fn pj_rem_u32(a: u32, b: u32) -> u32 { return select(a % select(b, 1u, b == 0u), a, b == 0u); }
""",
)
_def(
    "floordiv_u32",
    ("div_u32",),
    "pj_floordiv_u32(a: u32, b: u32) -> u32  (jnp.floor_divide)",
    """
fn pj_floordiv_u32(a: u32, b: u32) -> u32 { return pj_div_u32(a, b); }
""",
)
_def(
    "mod_u32",
    (),
    "pj_mod_u32(a: u32, b: u32) -> u32  (jnp.remainder)",
    """
fn pj_mod_u32(a: u32, b: u32) -> u32 { return select(a % select(b, 1u, b == 0u), 0u, b == 0u); }
""",
)


# ---- threefry2x32 (JAX's PRNG) ------------------------------------------------------------


def _threefry_code() -> str:
    """Threefry-2x32 with 20 rounds, unrolled: key schedule ks2 = k0 ^ k1 ^ 0x1BD11BDA, a key
    injection after every 4 rounds, rotations 13,15,26,6 and 17,29,16,24 alternating."""
    rot = ((13, 15, 26, 6), (17, 29, 16, 24))
    lines = [
        "fn pj_threefry2x32(key: vec2<u32>, ctr: vec2<u32>) -> vec2<u32> {",
        "  let ks = array<u32, 3>(key.x, key.y, key.x ^ key.y ^ 0x1bd11bdau);",
        "  var x0 = ctr.x + key.x;",
        "  var x1 = ctr.y + key.y;",
    ]
    for group in range(5):
        for r in rot[group % 2]:
            lines.append(f"  x0 = x0 + x1; x1 = (x1 << {r}u) | (x1 >> {32 - r}u); x1 = x1 ^ x0;")
        i = group + 1
        lines.append(f"  x0 = x0 + ks[{i % 3}]; x1 = x1 + ks[{(i + 1) % 3}] + {i}u;")
    lines += ["  return vec2<u32>(x0, x1);", "}"]
    return "\n".join(lines)


_def(
    "threefry2x32",
    (),
    "pj_threefry2x32(key: vec2<u32>, ctr: vec2<u32>) -> vec2<u32>",
    _threefry_code(),
)

HELPER_NAMES: frozenset[str] = frozenset(_CODE)
