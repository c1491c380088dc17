"""float16/bfloat16 <-> float32 conversions for Wasm kernels (Wasm has no half floats): half
values are stored as 16-bit patterns and computed in float32."""

from __future__ import annotations

from pyjax.backends.wasm.encoder import F32, I32, Module

__all__ = ["f16_helpers"]


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
