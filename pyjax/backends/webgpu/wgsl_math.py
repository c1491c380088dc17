"""WGSL helper functions for generated kernels: NaN semantics, the core ops WGSL lacks (half
floats, saturating conversions, fmod, nextafter, integer pow) and JAX integer division.
(threefry2x32 is built from core integer ops like any kernel.)

Rules the code follows, because WGSL compilers optimize floats loosely:
- NaN/inf are tested with bit patterns (``pj_isnan``), never with ``x != x`` (compilers may
  assume there are no NaNs); inf and NaN are built at run time (a const-expression that
  yields inf or NaN is a shader-creation error).
- No error-free transformations that rely on exact float cancellation such as
  ``(a + b) - a``: Mesa folds them (measured: ``x - ((x + 1) - 1)`` gives 0 on lavapipe).
  Extra precision comes from splitting numbers by masking mantissa bits, so products of the
  halves are exact whatever the compiler does.

Kernels and routines get every float function (exponentials, logarithms, trigonometric,
hyperbolic and error functions, pow, cbrt, ...) written once as core ops by
pyjax/compiler/mathlib/ (WGSL's builtins promise loose error bounds: Chrome's SwiftShader
measured 1.9e-4 relative error on a tanh/exp/sin chain); the logsumexp routine's step too
(wgsl.scalar_function).

Public API: ``helpers_for(names) -> str`` returns the WGSL for the named helpers plus their
dependencies, in dependency order; ``fn_name(name)`` gives the WGSL function name ("pj_" +
name); ``HELPER_NAMES`` lists what exists. Signatures are in ``SIGNATURES``.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyjax.core import minifloat

__all__ = ["HELPER_NAMES", "SIGNATURES", "fn_name", "helpers_for"]

_CODE: dict[str, str] = {}
_DEPS: dict[str, tuple[str, ...]] = {}
SIGNATURES: dict[str, str] = {}


def _def(name: str, deps: tuple[str, ...], signature: str, code: str) -> None:
    _CODE[name] = code.strip("\n") + "\n"
    _DEPS[name] = deps
    SIGNATURES[name] = signature


def fn_name(name: str) -> str:
    """The WGSL function name of helper `name`."""
    if name not in _CODE:
        raise KeyError(f"unknown WGSL helper {name!r}")
    return "pj_" + name


def helpers_for(names: Iterable[str]) -> str:
    """WGSL source defining the named helpers and everything they call, each once, callees first."""
    order: list[str] = []
    seen: set[str] = set()

    def visit(n: str) -> None:
        if n in seen:
            return
        if n not in _CODE:
            raise KeyError(f"unknown WGSL helper {n!r}; known: {sorted(_CODE)}")
        seen.add(n)
        for d in _DEPS[n]:
            visit(d)
        order.append(n)

    for n in sorted(set(names)):
        visit(n)
    return "\n".join(_CODE[n] for n in order)


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
    "fmax",
    ("isnan",),
    "pj_fmax(a: f32, b: f32) -> f32  (NaN if either is NaN)",
    """
fn pj_fmax(a: f32, b: f32) -> f32 {
  return select(b, a, a > b || pj_isnan(a));  // b when b is NaN; selects beat max() on SwiftShader
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


def _f8_defs(name: str, e: int, mb: int, bias: int, rule: str) -> None:
    """pj_{name}_to_f32, pj_f32_to_{name} and pj_r{name} for an 8-bit (or smaller) float of core/minifloat.py."""
    if rule == "e8m0":
        _e8m0_codec(name)
    else:
        _minifloat_codec(name, e, mb, bias, rule)
    _def(
        f"r{name}",
        (f"f32_to_{name}", f"{name}_to_f32"),
        f"pj_r{name}(x: f32) -> f32  (x rounded to {name})",
        f"fn pj_r{name}(x: f32) -> f32 {{ return pj_{name}_to_f32(pj_f32_to_{name}(x)); }}",
    )


def _minifloat_codec(name: str, e: int, mb: int, bias: int, rule: str) -> None:
    """pj_{name}_to_f32 and pj_f32_to_{name} of a float with an IEEE-like exponent and mantissa."""
    shift = 23 - mb
    sb, w = minifloat.sign_bit(name), minifloat.width(name)
    special = ""
    if rule == "fn":  # 0x7f is NaN
        special = "if (c == 0x7fu) { return bitcast<f32>(s | 0x7fc00000u); }"
    elif rule == "fnuz":  # 0x80 (what would be -0) is the NaN
        special = "if (h == 0x80u) { return bitcast<f32>(0x7fc00000u); }"
    elif rule == "ieee":  # all-ones exponent: infinity or NaN
        special = f"if (c >> {mb}u == {(1 << e) - 1}u) {{ return bitcast<f32>(s | 0x7f800000u | (c << {shift}u)); }}"
    _def(
        f"{name}_to_f32",
        (),
        f"pj_{name}_to_f32(h: u32) -> f32  ({name} bits)",
        f"""
fn pj_{name}_to_f32(h: u32) -> f32 {{
  let s = (h & {sb}u) << {32 - w}u;
  let c = h & {sb - 1}u;
  {special}
  if (c >> {mb}u == 0u) {{ return bitcast<f32>(s | bitcast<u32>(f32(c) * {2.0 ** (1 - bias - mb)!r})); }}
  return bitcast<f32>(s | ((c << {shift}u) + {(127 - bias) << 23}u));
}}
""",
    )
    magic = ((127 - bias) + shift + 1) << 23  # adding it rounds a subnormal to the format's quantum
    offset = (((bias - 127) << 23) + (1 << (shift - 1)) - 1) & 0xFFFFFFFF
    _def(
        f"f32_to_{name}",
        (),
        f"pj_f32_to_{name}(x: f32) -> u32  ({name} bits, round to nearest even)",
        f"""
fn pj_f32_to_{name}(x: f32) -> u32 {{
  let b = bitcast<u32>(x);
  let s = (b >> {32 - w}u) & {sb}u;
  let u = b & 0x7fffffffu;
  if (u > 0x7f800000u) {{ return s {"^" if rule == "finite" else "|"} {minifloat.nan_code(name)}u; }}
  var r: u32;
  if (u < {(128 - bias) << 23}u) {{
    r = bitcast<u32>(bitcast<f32>(u) + bitcast<f32>({magic}u)) - {magic}u;
  }} else {{
    r = (u + {offset}u + ((u >> {shift}u) & 1u)) >> {shift}u;
  }}
  let m = min(r, {minifloat.overflow_code(name)}u);
  return {"select(0u, s, m != 0u)" if rule == "fnuz" else "s"} | m;
}}
""",
    )


def _e8m0_codec(name: str) -> None:
    """float8_e8m0fnu's load and store helpers (core/minifloat.py): code c is 2**(c - 127), 0xff NaN, ties round up."""
    _def(
        f"{name}_to_f32",
        (),
        f"pj_{name}_to_f32(h: u32) -> f32  ({name} bits)",
        f"""
fn pj_{name}_to_f32(h: u32) -> f32 {{
  if (h == 0xffu) {{ return bitcast<f32>(0x7fc00000u); }}
  return bitcast<f32>(select(h << 23u, 0x400000u, h == 0u));
}}
""",
    )
    _def(
        f"f32_to_{name}",
        (),
        f"pj_f32_to_{name}(x: f32) -> u32  ({name} bits, nearest power of two, ties up)",
        f"""
fn pj_f32_to_{name}(x: f32) -> u32 {{
  let u = bitcast<i32>(x);
  if (u <= 0i || u >= 0x7f800000i) {{ return 0xffu; }}
  return u32(u + select(0x400000i, 0x200000i, u < 0x800000i)) >> 23u;
}}
""",
    )


for _name, _fmt in minifloat.FORMATS.items():
    _f8_defs(_name, *_fmt)

for _h, _to, _from, _sign, _mag in (
    ("float16", "f32_to_f16", "f16_to_f32", "0x8000u", "0x7fffu"),
    ("bfloat16", "f32_to_bf16", "bf16_to_f32", "0x8000u", "0x7fffu"),
    *(
        (
            n,
            f"f32_to_{n}",
            f"{n}_to_f32",
            f"{minifloat.sign_bit(n) or 0x80}u",
            f"{(minifloat.sign_bit(n) or 0x80) - 1}u",
        )
        for n in minifloat.FORMATS
    ),
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


# ---- integer power (exponentiation by squaring, wrapping), for pow on integer arrays ---------

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
_def(
    "ipow_i32",
    ("ipow_u32",),
    "pj_ipow_i32(a: i32, b: i32) -> i32  (wrapping: the unsigned product's bits)",
    """
fn pj_ipow_i32(a: i32, b: i32) -> i32 {
  if (b < 0) { return select(select(0, 1, a == 1), select(-1, 1, (b & 1) == 0), a == -1); }
  return bitcast<i32>(pj_ipow_u32(bitcast<u32>(a), u32(b)));
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


HELPER_NAMES: frozenset[str] = frozenset(_CODE)
