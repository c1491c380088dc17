"""float16/bfloat16/float8 (and smaller) <-> float32 conversions for Wasm kernels (Wasm has no narrow
floats): values are stored as 16- or 8-bit patterns and computed in float32."""

from __future__ import annotations

import struct

from pyjax.backends.wasm.encoder import F32, I32, Module
from pyjax.core import minifloat

__all__ = ["f16_helpers", "f8_helpers", "narrow_helper"]


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
    out["round_f16"] = _round_helper(m, "pyjax_round_f16", out["f32_to_f16"], out["f16_to_f32"])
    out["round_bf16"] = _round_helper(m, "pyjax_round_bf16", out["f32_to_bf16"], out["bf16_to_f32"])
    m.memo["pyjax.f16"] = out
    return out


def _i32(v: int) -> int:
    """v as a signed 32-bit constant."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def f8_helpers(m: Module, name: str) -> dict[str, int]:
    """Emit 8-bit (or smaller) float (core/minifloat.py FORMATS[name]) <-> float32 conversions; role -> index.

    load(i32 byte) -> f32, store(f32) -> i32 byte (round half to even; overflow to infinity or, for
    fn formats, NaN; finite formats saturate), round(f32) -> f32 (the value rounded to the format).
    """
    key = "pyjax." + name
    memo = m.memo.get(key)
    if memo is not None:
        return memo
    out = _e8m0_codec(m, name) if minifloat.FORMATS[name][3] == "e8m0" else _minifloat_codec(m, name)
    out["round"] = _round_helper(m, f"pyjax_round_{name}", out["store"], out["load"])
    m.memo[key] = out
    return out


def _round_helper(m: Module, fname: str, store: int, load: int) -> int:
    """Emit fname(f32) -> f32: the value rounded to a narrow format (store, then load back)."""
    f = m.function(fname, [F32], [F32])
    f.local_get(0).call(store).call(load)
    f.finish()
    return f.index


def _minifloat_codec(m: Module, name: str) -> dict[str, int]:
    """The load/store pair of an 8-bit (or smaller) float with an IEEE-like exponent and mantissa."""
    e, mb, bias, rule = minifloat.FORMATS[name]
    shift = 23 - mb
    sb, w = minifloat.sign_bit(name), minifloat.width(name)
    out: dict[str, int] = {}
    # byte -> f32
    f = m.function(f"pyjax_{name}_to_f32", [I32], [F32])
    h, c, ef, s = 0, f.local(I32), f.local(I32), f.local(I32)
    f.local_get(h).i32_const(sb).i32_and().i32_const(32 - w).i32_shl().local_set(s)
    f.local_get(h).i32_const(sb - 1).i32_and().local_tee(c).i32_const(mb).i32_shr_u().local_set(ef)
    # normal: rebias the exponent, widen the mantissa
    f.local_get(c).i32_const(shift).i32_shl().i32_const((127 - bias) << 23).i32_add().local_get(s).i32_or()
    if rule == "fn":  # 0x7f is NaN
        f.local_get(s).i32_const(0x7FC00000).i32_or().i32_const(0x7F).local_get(c).i32_ne().select()
    elif rule == "ieee":  # all-ones exponent: infinity or NaN
        f.local_get(s).i32_const(0x7F800000).i32_or().local_get(c).i32_const(shift).i32_shl().i32_or()
        f.local_get(ef).i32_const((1 << e) - 1).i32_ne().select()
    # zero / subnormal: mantissa * 2**(1 - bias - mb)
    f.local_get(c).f32_convert_i32_u().f32_const(2.0 ** (1 - bias - mb)).f32_mul().i32_reinterpret_f32()
    f.local_get(s).i32_or()
    f.local_get(ef).select()  # ef == 0 picks the subnormal value
    if rule == "fnuz":  # 0x80 (what would be -0) is the NaN
        v = f.local(I32)
        f.local_set(v).i32_const(0x7FC00000).local_get(v).local_get(h).i32_const(0x80).i32_eq().select()
    f.f32_reinterpret_i32()
    f.finish()
    out["load"] = f.index
    # f32 -> byte
    f = m.function(f"pyjax_f32_to_{name}", [F32], [I32])
    u, s = f.local(I32), f.local(I32)
    magic = ((127 - bias) + shift + 1) << 23  # adding it rounds a subnormal to the format's quantum
    f.local_get(0).i32_reinterpret_f32().local_tee(u).i32_const(32 - w).i32_shr_u().i32_const(sb).i32_and().local_set(s)
    f.local_get(u).i32_const(0x7FFFFFFF).i32_and().local_set(u)
    f.i32_const(minifloat.nan_code(name))
    # small: add the magic float, subtract its bits
    f.local_get(u).f32_reinterpret_i32().f32_const(_f32_of_bits(magic)).f32_add().i32_reinterpret_f32()
    f.i32_const(magic).i32_sub()
    # normal: rebias, round half to even
    f.local_get(u).i32_const(_i32(((bias - 127) << 23) + (1 << (shift - 1)) - 1)).i32_add()
    f.local_get(u).i32_const(shift).i32_shr_u().i32_const(1).i32_and().i32_add().i32_const(shift).i32_shr_u()
    f.local_get(u).i32_const((128 - bias) << 23).i32_lt_u().select()  # small ? r_small : r_norm
    r = f.local(I32)
    f.local_tee(r).i32_const(minifloat.overflow_code(name)).local_get(r).i32_const(minifloat.overflow_code(name))
    f.i32_lt_u().select()  # min(r, overflow code)
    f.local_get(u).i32_const(0x7F800000).i32_gt_u().select()  # NaN ? nan : r
    if rule == "fnuz":  # no -0: a zero magnitude drops the sign
        mag = f.local(I32)
        f.local_tee(mag).local_get(s).i32_const(0).local_get(mag).select().i32_or()
    elif rule == "finite":  # NaN (sb) gives the zero of the other sign; below sb, xor is or
        f.local_get(s).i32_xor()
    else:
        f.local_get(s).i32_or()
    f.finish()
    out["store"] = f.index
    return out


def _e8m0_codec(m: Module, name: str) -> dict[str, int]:
    """float8_e8m0fnu's load/store pair (core/minifloat.py): code c is 2**(c - 127), 0xff NaN."""
    out: dict[str, int] = {}
    f = m.function(f"pyjax_{name}_to_f32", [I32], [F32])
    c = 0
    # c << 23 is 2**(c - 127) for c >= 1; code 0 is the float32 subnormal 0x400000; 0xff is NaN
    f.local_get(c).i32_const(23).i32_shl().i32_const(0x400000).local_get(c).select()
    f.i32_const(0x7FC00000).local_get(c).i32_const(0xFF).i32_ne().select().f32_reinterpret_i32()
    f.finish()
    out["load"] = f.index
    f = m.function(f"pyjax_f32_to_{name}", [F32], [I32])
    u = f.local(I32)
    # round to the nearest power of two, ties up: add half the gap to the next one (below 2**-126, the
    # gap between 2**-127 and 2**-126 is 2**-127, half of it 0x200000) and keep the exponent
    f.local_get(0).i32_reinterpret_f32().local_tee(u)
    f.i32_const(0x200000).i32_const(0x400000).local_get(u).i32_const(0x800000).i32_lt_s().select().i32_add()
    f.i32_const(23).i32_shr_u()
    # zero, negatives, infinity and NaN: 0xff
    f.i32_const(0xFF).local_get(u).i32_const(0).i32_gt_s().local_get(u).i32_const(0x7F800000).i32_lt_s().i32_and()
    f.select()
    f.finish()
    out["store"] = f.index
    return out


def _f32_of_bits(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


_F16_ROLES = {
    "float16": {"load": "f16_to_f32", "store": "f32_to_f16", "round": "round_f16"},
    "bfloat16": {"load": "bf16_to_f32", "store": "f32_to_bf16", "round": "round_bf16"},
}


def narrow_helper(m: Module, name: str, role: str) -> int:
    """Index of the helper of narrow float dtype `name` (float16, bfloat16, 8-bit floats) for role:
    load (stored bits -> f32), store (f32 -> bits) or round (f32 to the dtype's precision)."""
    if name in minifloat.FORMATS:
        return f8_helpers(m, name)[role]
    return f16_helpers(m)[_F16_ROLES[name][role]]
