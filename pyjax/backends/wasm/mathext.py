"""More float helpers for kernels, composed from `mathlib`'s float64 cores: cbrt, and the
float16/bfloat16 conversions (exp2, log2, the inverse hyperbolics, logistic, erf_inv, lgamma and
digamma are core ops now: compiler/mathlib).

cbrt is emitted here once per module in float64; float32 kernels promote, call and demote (one
rounding), which keeps float32 results within an ulp of the float64 value.
"""

from __future__ import annotations

import math

from pyjax.backends.wasm.encoder import F32, F64, I32, Function, Module
from pyjax.backends.wasm.mathlib import add_math_helpers

__all__ = ["EXTRA", "f16_helpers", "math_index"]

EXTRA = ("cbrt",)


class _Ext:
    def __init__(self, m: Module):
        self.m = m
        self.index: dict[str, int] = {}

    def core(self, name: str) -> int:
        return add_math_helpers(self.m, [name], "float64")[name]

    def get(self, name: str) -> int:
        if name not in self.index:
            f = self.m.function(f"pyjax_{name}_f64x", [F64], [F64])
            self.index[name] = f.index
            getattr(self, "_" + name)(f)
            f.finish()
        return self.index[name]

    # each builder leaves the f64 result on the stack; the argument is local 0

    def _cbrt(self, f: Function) -> None:
        a, y = f.local(F64), f.local(F64)
        f.local_get(0).f64_abs().local_tee(a).call(self.core("log")).f64_const(1 / 3).f64_mul()
        f.call(self.core("exp")).local_set(y)
        for _ in range(2):  # Newton: y -= (y^3 - a) / (3 y^2)
            f.local_get(y).local_get(y).local_get(y).f64_mul().local_get(y).f64_mul().local_get(a).f64_sub()
            f.f64_const(3.0).local_get(y).f64_mul().local_get(y).f64_mul().f64_div().f64_sub().local_set(y)
        # zero, inf and nan come back unchanged
        f.local_get(y).local_get(0).f64_copysign()
        r = f.local(F64)
        f.local_set(r).local_get(0).local_get(r)
        f.local_get(a).f64_const(0.0).f64_eq().local_get(a).f64_const(math.inf).f64_eq().i32_or()
        f.local_get(0).local_get(0).f64_ne().i32_or().select()


def math_index(m: Module, name: str, dtype_name: str) -> int:
    """Index of a float helper `name` (mathlib or EXTRA) for "float32" or "float64" arguments."""
    from pyjax.backends.wasm import mathlib

    if name in mathlib.MATH_FUNCTIONS:
        return add_math_helpers(m, [name], dtype_name)[name]
    ext = m.memo.get("pyjax.mathext")
    if ext is None:
        ext = m.memo["pyjax.mathext"] = _Ext(m)
    core = ext.get(name)
    if dtype_name == "float64":
        return core
    key = ("mathext_f32", name)
    if key not in m.memo:
        f = m.function(f"pyjax_{name}_f32x", [F32], [F32])
        f.local_get(0).f64_promote_f32().call(core).f32_demote_f64()
        f.finish()
        m.memo[key] = f.index
    return m.memo[key]


def f16_helpers(m: Module) -> dict[str, int]:
    """Emit float16/bfloat16 <-> float32 conversions (Wasm has no half floats); name -> index.

    f16_to_f32(i32 bits) -> f32, f32_to_f16(f32) -> i32 bits (round to nearest even, overflow to
    inf, NaN to 0x7E00), bf16_to_f32(bits), f32_to_bf16(f32) -> bits (round to nearest even,
    NaN to 0x7FC0), round_f16(f32) -> f32 and round_bf16(f32) -> f32 (value rounded to the type).
    """
    memo = m.memo.get("pyjax.f16")
    if memo is not None:
        return memo
    out: dict[str, int] = {}
    # f16 bits -> f32
    f = m.function("pyjax_f16_to_f32", [I32], [F32])
    h, e, mant, sign = 0, f.local(I32), f.local(I32), f.local(I32)
    f.local_get(h).i32_const(0x8000).i32_and().i32_const(16).i32_shl().local_set(sign)
    f.local_get(h).i32_const(10).i32_shr_u().i32_const(0x1F).i32_and().local_set(e)
    f.local_get(h).i32_const(0x3FF).i32_and().local_set(mant)
    # normal
    f.local_get(sign).local_get(e).i32_const(112).i32_add().i32_const(23).i32_shl().i32_or()
    f.local_get(mant).i32_const(13).i32_shl().i32_or()
    # inf / nan
    f.local_get(sign).i32_const(0x7F800000).i32_or().local_get(mant).i32_const(13).i32_shl().i32_or()
    f.local_get(e).i32_const(31).i32_ne().select()
    # zero / subnormal: mant * 2**-24
    f.local_get(mant).f32_convert_i32_u().f32_const(2.0**-24).f32_mul().i32_reinterpret_f32()
    f.local_get(sign).i32_or()
    f.local_get(e).select()  # e == 0 (zero or subnormal) picks the last value
    f.f32_reinterpret_i32()
    f.finish()
    out["f16_to_f32"] = f.index
    # f32 -> f16 bits
    f = m.function("pyjax_f32_to_f16", [F32], [I32])
    u, s = f.local(I32), f.local(I32)
    f.local_get(0).i32_reinterpret_f32().local_tee(u).i32_const(0x80000000).i32_and().local_set(s)
    f.local_get(u).i32_const(0x7FFFFFFF).i32_and().local_set(u)
    # overflow / inf / nan
    f.i32_const(0x7E00).i32_const(0x7C00).local_get(u).i32_const(0x7F800000).i32_gt_u().select()
    # small: add 0.5f and subtract its bits (rounds into the subnormal range)
    f.local_get(u).f32_reinterpret_i32().f32_const(0.5).f32_add().i32_reinterpret_f32().i32_const(0x3F000000).i32_sub()
    # normal: rebias, round half to even
    f.local_get(u).i32_const(0xC8000FFF).i32_add().local_get(u).i32_const(13).i32_shr_u().i32_const(1).i32_and()
    f.i32_add().i32_const(13).i32_shr_u()
    f.local_get(u).i32_const(113 << 23).i32_lt_u().select()  # small ? r_small : r_norm
    f.local_get(u).i32_const(143 << 23).i32_ge_u().select()  # big ? r_big : ...
    f.local_get(s).i32_const(16).i32_shr_u().i32_or()
    f.finish()
    out["f32_to_f16"] = f.index
    # bf16
    f = m.function("pyjax_bf16_to_f32", [I32], [F32])
    f.local_get(0).i32_const(16).i32_shl().f32_reinterpret_i32()
    f.finish()
    out["bf16_to_f32"] = f.index
    f = m.function("pyjax_f32_to_bf16", [F32], [I32])
    u = f.local(I32)
    f.i32_const(0x7FC0)
    f.local_get(0).i32_reinterpret_f32().local_tee(u).i32_const(0x7FFF).i32_add()
    f.local_get(u).i32_const(16).i32_shr_u().i32_const(1).i32_and().i32_add().i32_const(16).i32_shr_u()
    f.local_get(0).local_get(0).f32_ne().select()
    f.finish()
    out["f32_to_bf16"] = f.index
    for name, to_bits, from_bits in (
        ("round_f16", "f32_to_f16", "f16_to_f32"),
        ("round_bf16", "f32_to_bf16", "bf16_to_f32"),
    ):
        f = m.function("pyjax_" + name, [F32], [F32])
        f.local_get(0).call(out[to_bits]).call(out[from_bits])
        f.finish()
        out[name] = f.index
    m.memo["pyjax.f16"] = out
    return out
