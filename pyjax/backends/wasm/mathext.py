"""More float helpers for kernels, composed from `mathlib`'s float64 cores.

mathlib covers the C library's core functions; kernels also need cbrt, erf_inv, lgamma, digamma
and the float16/bfloat16 conversions (exp2, log2, the inverse hyperbolics and logistic are core
ops now: compiler/mathlib). The
float64 versions are emitted here once per module; float32 kernels promote, call and demote (one
rounding), which keeps float32 results within an ulp of the float64 value.

The algorithms follow the cpu backend's reference evaluator (numpy_eval / python_eval) so that
the wasm backend agrees with it: erf_inv is the same initial guess plus four Newton steps,
digamma the same recurrence and asymptotic series, lgamma a shift to x >= 8 and Stirling's series.
"""

from __future__ import annotations

import math

from pyjax.backends.wasm.encoder import F32, F64, I32, Function, Module
from pyjax.backends.wasm.mathlib import add_math_helpers

__all__ = ["EXTRA", "f16_helpers", "math_index"]

EXTRA = ("cbrt", "erf_inv", "lgamma", "digamma")


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

    def _erf_inv(self, f: Function) -> None:
        y, ln, t, x = 0, f.local(F64), f.local(F64), f.local(F64)
        a = 0.147
        f.f64_const(1.0).local_get(y).local_get(y).f64_mul().f64_sub().call(self.core("log")).local_set(ln)
        f.f64_const(2 / (math.pi * a)).local_get(ln).f64_const(0.5).f64_mul().f64_add().local_set(t)
        f.local_get(t).local_get(t).f64_mul().local_get(ln).f64_const(a).f64_div().f64_sub().f64_sqrt()
        f.local_get(t).f64_sub().f64_sqrt().local_get(y).f64_copysign().local_set(x)
        for _ in range(4):
            f.local_get(x)
            f.local_get(x).call(self.core("erf")).local_get(y).f64_sub()
            f.f64_const(2 / math.sqrt(math.pi)).local_get(x).local_get(x).f64_mul().f64_neg()
            f.call(self.core("exp")).f64_mul().f64_div().f64_sub().local_set(x)
        # |y| >= 1: +-inf at +-1, nan beyond (and for nan)
        f.local_get(x)
        f.f64_const(math.nan).local_get(y).f64_abs().f64_const(1.0).f64_lt()
        r = f.local(F64)
        f.select().local_set(r)
        f.f64_const(math.inf).local_get(y).f64_copysign().local_get(r).local_get(y).f64_abs().f64_const(1.0).f64_eq()
        f.select()

    def _lgamma_pos(self) -> int:
        """lgamma for x >= 0.5: shift to z >= 8 (log of the product), then Stirling's series."""
        if "lgamma_pos" in self.index:
            return self.index["lgamma_pos"]
        f = self.m.function("pyjax_lgamma_pos_f64", [F64], [F64])
        self.index["lgamma_pos"] = f.index
        z, prod, inv, inv2 = 0, f.local(F64), f.local(F64), f.local(F64)
        f.f64_const(1.0).local_set(prod)
        with f.block(), f.loop():
            f.local_get(z).f64_const(8.0).f64_lt().i32_eqz().br_if(1)  # also exits for nan
            f.local_get(prod).local_get(z).f64_mul().local_set(prod)
            f.local_get(z).f64_const(1.0).f64_add().local_set(z)
            f.br(0)
        f.f64_const(1.0).local_get(z).f64_div().local_tee(inv).local_get(inv).f64_mul().local_set(inv2)
        coeffs = [1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156]
        f.f64_const(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            f.local_get(inv2).f64_mul().f64_const(c).f64_add()
        f.local_get(inv).f64_mul()
        f.local_get(z).f64_const(0.5).f64_sub().local_get(z).call(self.core("log")).f64_mul().f64_add()
        f.local_get(z).f64_sub().f64_const(0.5 * math.log(2 * math.pi)).f64_add()
        f.local_get(prod).call(self.core("log")).f64_sub()
        f.finish()
        return f.index

    def _lgamma(self, f: Function) -> None:
        x = 0
        pos = self._lgamma_pos()
        f.local_get(x).f64_const(0.5).f64_ge()
        with f.if_(F64):
            f.local_get(x).f64_const(1e300).f64_min().call(pos)
            f.else_()  # reflection: log(pi / |sin(pi x)|) - lgamma(1 - x)
            f.f64_const(math.log(math.pi))
            f.local_get(x).local_get(x).f64_floor().f64_sub().f64_const(math.pi).f64_mul()
            f.call(self.core("sin")).f64_abs().call(self.core("log")).f64_sub()
            f.f64_const(1.0).local_get(x).f64_sub().call(pos).f64_sub()
        r = f.local(F64)
        f.local_set(r)
        # poles (x <= 0 integers) -> inf; inf -> inf; nan -> nan
        f.f64_const(math.inf).local_get(r)
        f.local_get(x).f64_const(0.0).f64_le().local_get(x).f64_floor().local_get(x).f64_eq().i32_and()
        f.local_get(x).f64_abs().f64_const(math.inf).f64_eq().i32_or().select()
        f.local_set(r).local_get(x).local_get(r).local_get(x).local_get(x).f64_ne().select()

    def _digamma_pos(self) -> int:
        if "digamma_pos" in self.index:
            return self.index["digamma_pos"]
        f = self.m.function("pyjax_digamma_pos_f64", [F64], [F64])
        self.index["digamma_pos"] = f.index
        x, acc, inv, inv2 = 0, f.local(F64), f.local(F64), f.local(F64)
        with f.block(), f.loop():
            f.local_get(x).f64_const(6.0).f64_lt().i32_eqz().br_if(1)  # also exits for nan
            f.local_get(acc).f64_const(1.0).local_get(x).f64_div().f64_sub().local_set(acc)
            f.local_get(x).f64_const(1.0).f64_add().local_set(x)
            f.br(0)
        f.f64_const(1.0).local_get(x).f64_div().local_tee(inv).local_get(inv).f64_mul().local_set(inv2)
        f.local_get(acc).local_get(x).call(self.core("log")).f64_add()
        f.f64_const(0.5).local_get(inv).f64_mul().f64_sub()
        # inv2 * (1/12 - inv2 * (1/120 - inv2 * (1/252 - inv2 * (1/240 - inv2/132))))
        f.f64_const(1 / 240).local_get(inv2).f64_const(1 / 132).f64_mul().f64_sub()
        for c in (1 / 252, 1 / 120, 1 / 12):
            f.local_set(inv).f64_const(c).local_get(inv2).local_get(inv).f64_mul().f64_sub()
        f.local_get(inv2).f64_mul().f64_sub()
        f.finish()
        return f.index

    def _digamma(self, f: Function) -> None:
        x = 0
        pos = self._digamma_pos()
        f.local_get(x).f64_const(0.5).f64_lt()
        with f.if_(F64):  # psi(1 - x) - pi / tan(pi x)
            f.f64_const(1.0).local_get(x).f64_sub().call(pos)
            f.f64_const(math.pi).local_get(x).f64_const(math.pi).f64_mul().call(self.core("tan")).f64_div().f64_sub()
            f.else_()
            f.local_get(x).call(pos)
        r = f.local(F64)
        f.local_set(r).f64_const(math.nan).local_get(r)
        f.local_get(x).f64_const(0.0).f64_le().local_get(x).f64_floor().local_get(x).f64_eq().i32_and().select()
        f.local_set(r).local_get(x).local_get(r).local_get(x).local_get(x).f64_ne().select()


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
