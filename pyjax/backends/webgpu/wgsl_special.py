"""More WGSL helpers for generated kernels, on top of `wgsl_math`: half-precision conversions,
exact fmod, nextafter, cbrt, erf_inv, lgamma, digamma, integer pow (the hyperbolic functions
are written once as core ops in pyjax/compiler/mathlib/).

Same rules as `wgsl_math` (NaN/inf tested through bit patterns, inf/NaN built at run time, no
reliance on exact float cancellation). Half floats are stored as 16-bit patterns and computed in
f32: `pj_f32_to_f16` rounds to nearest even in integer arithmetic (WGSL's pack2x16float leaves
rounding and overflow unspecified), `pj_rf16(x)` rounds an f32 to the nearest f16 value.

Public API: ``helpers(names) -> str`` gives WGSL for helpers of this module *and* of wgsl_math,
with their dependencies, callees first.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyjax.backends.webgpu import wgsl_math

__all__ = ["HELPER_NAMES", "helpers"]

_CODE: dict[str, str] = {}
_DEPS: dict[str, tuple[str, ...]] = {}


def _def(name: str, deps: tuple[str, ...], code: str) -> None:
    _CODE[name] = code.strip("\n") + "\n"
    _DEPS[name] = deps


def helpers(names: Iterable[str], fast: bool = False) -> str:
    """WGSL for the named helpers (this module's or wgsl_math's) and all their dependencies
    (fast: wgsl_math's fast variants, see wgsl_math._def_fast)."""
    order: list[str] = []
    seen: set[str] = set()
    math_names: set[str] = set()

    def visit(n: str) -> None:
        if n in seen:
            return
        seen.add(n)
        if n in _CODE:
            for d in _DEPS[n]:
                visit(d)
            order.append(n)
        elif n in wgsl_math.HELPER_NAMES:
            math_names.add(n)
        else:
            raise KeyError(f"unknown WGSL helper {n!r}")

    for n in sorted(set(names)):
        visit(n)
    head = wgsl_math.helpers_for(math_names, fast) if math_names else ""
    return head + "\n".join(_CODE[n] for n in order)


# ---- half precision ------------------------------------------------------------------------

_def(
    "f16_to_f32",
    (),
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
_def("rf16", ("f16_to_f32", "f32_to_f16"), "fn pj_rf16(x: f32) -> f32 { return pj_f16_to_f32(pj_f32_to_f16(x)); }")
_def("bf16_to_f32", (), "fn pj_bf16_to_f32(h: u32) -> f32 { return bitcast<f32>(h << 16u); }")
_def(
    "f32_to_bf16",
    (),
    """
fn pj_f32_to_bf16(x: f32) -> u32 {
  let b = bitcast<u32>(x);
  if ((b & 0x7fffffffu) > 0x7f800000u) { return (b >> 16u) | 0x40u; }
  return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}
""",
)
_def(
    "rbf16", ("f32_to_bf16", "bf16_to_f32"), "fn pj_rbf16(x: f32) -> f32 { return pj_bf16_to_f32(pj_f32_to_bf16(x)); }"
)

# ---- saturating float -> int conversions (NaN -> 0), as the cpu reference ---------------------

_def(
    "f2i32",
    ("isnan",),
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

# ---- cbrt, erf_inv ----------------------------------------------------------------------

_def(
    "cbrt",
    ("exp2", "log2", "copysign", "isfinite"),
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

# ---- erf_inv (Giles' single-precision approximation, one Newton step on erf) -----------------

_def(
    "erf_inv",
    ("log1p", "erf", "exp", "inf", "nan", "copysign", "isnan"),
    """
fn pj_erf_inv(y: f32) -> f32 {
  let a = abs(y);
  if (pj_isnan(y) || a > 1.0) { return pj_nan(); }
  if (a == 1.0) { return pj_copysign(pj_inf(), y); }
  var w = -pj_log1p(-y * y);
  var p: f32;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  var x = p * y;
  if (abs(x) < 2.5) {
    x = x - (pj_erf(x) - y) / (1.1283791670955126 * pj_exp(-x * x));
  }
  return x;
}
""",
)

# ---- sin(pi x), tan(pi x) with exact argument reduction (for the reflection formulas) ---------

_def(
    "sinpi",
    ("sin", "cos"),
    """
fn pj_sinpi(x: f32) -> f32 {
  // x - 2 round(x / 2) is exact for |x| < 2^24 (larger f32 values are even integers).
  let r = select(x - 2.0 * round(x * 0.5), 0.0, abs(x) >= 16777216.0);
  if (abs(r) <= 0.25) { return pj_sin(3.1415927410125732 * r); }
  if (abs(r) <= 0.75) {
    let c = pj_cos(3.1415927410125732 * (abs(r) - 0.5));
    return select(c, -c, r < 0.0);
  }
  let t = select(r - 1.0, r + 1.0, r < 0.0);
  return -pj_sin(3.1415927410125732 * t);
}
""",
)
_def(
    "cospi",
    ("sinpi",),
    """
fn pj_cospi(x: f32) -> f32 {
  let r = select(abs(x) - 2.0 * round(abs(x) * 0.5), 0.0, abs(x) >= 16777216.0);
  return pj_sinpi(0.5 - abs(r));
}
""",
)

# ---- lgamma and digamma (shift to large arguments + asymptotic series, reflection below 0.5) --

_def(
    "lgamma",
    ("log", "sinpi", "inf", "isnan", "isinf"),
    """
fn pj_lgamma(x: f32) -> f32 {
  if (pj_isnan(x)) { return x; }
  if (pj_isinf(x)) { return pj_inf(); }
  if (x <= 0.0 && floor(x) == x) { return pj_inf(); }
  var z = x;
  var refl = 0.0;
  if (x < 0.5) {
    refl = pj_log(3.1415927410125732 / abs(pj_sinpi(x)));
    z = 1.0 - x;
  }
  var p = 1.0;
  var q = 0.0;
  loop {
    if (z >= 8.0) { break; }
    p = p * z;
    z = z + 1.0;
  }
  q = pj_log(p);
  let iz = 1.0 / z;
  let iz2 = iz * iz;
  let series = iz * (0.08333333333 - iz2 * (0.002777777778 - iz2 * (0.0007936507937 - iz2 * 0.0005952380952)));
  let r = (z - 0.5) * (pj_log(z) - 1.0) + (0.41893853320467274 + series) - q;
  return select(r, refl - r, x < 0.5);
}
""",
)
_def(
    "digamma",
    ("log", "sinpi", "cospi", "inf", "nan", "isnan"),
    """
fn pj_digamma(x: f32) -> f32 {
  if (pj_isnan(x)) { return x; }
  if (x <= 0.0 && floor(x) == x) { return pj_nan(); }
  if (x == pj_inf()) { return x; }
  var z = x;
  var acc = 0.0;
  if (x < 0.5) {
    acc = -3.1415927410125732 * pj_cospi(x) / pj_sinpi(x);
    z = 1.0 - x;
  }
  loop {
    if (z >= 6.0) { break; }
    acc = acc - 1.0 / z;
    z = z + 1.0;
  }
  let iz = 1.0 / z;
  let iz2 = iz * iz;
  let s = pj_log(z) - 0.5 * iz
    - iz2 * (0.08333333333 - iz2 * (0.008333333333 - iz2 * (0.003968253968 - iz2 * (0.004166666667 - iz2 * 0.007575757576))));
  return acc + s;
}
""",
)

# ---- integer power (exponentiation by squaring, wrapping), for pow on integer arrays ---------

_def(
    "ipow_i32",
    (),
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

HELPER_NAMES = frozenset(_CODE)
