"""A small WebAssembly binary encoder with a value-stack checker.

Pure Python (no third-party imports) so it runs under Pyodide. Kernel code generators build a
`Module` (one imported linear memory, `env.memory`), add `Function`s and emit instructions through
one method per instruction (`f.i32_add()`, `f.f32_load(offset=4)`, `f.f32x4_relaxed_madd()`).
Every instruction is type-checked against the value stack as it is emitted, so a malformed kernel
fails here with a `WasmValidationError` naming the function and the instruction, instead of as an
opaque validation error inside the engine.

Most instructions are described by one table (`OPS`: name -> opcode bytes, operand types, result
types, immediate kind); the methods are generated from it. Control flow, locals, globals, calls
and constants have hand-written methods because their typing depends on their immediates.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from typing import Self

__all__ = [
    "F32",
    "F64",
    "I32",
    "I64",
    "OPS",
    "V128",
    "Function",
    "Module",
    "Op",
    "WasmValidationError",
    "sleb128",
    "uleb128",
]

I32, I64, F32, F64, V128 = "i32", "i64", "f32", "f64", "v128"
VALTYPE_CODES = {I32: 0x7F, I64: 0x7E, F32: 0x7D, F64: 0x7C, V128: 0x7B}
PAGE_SIZE = 65536


class WasmValidationError(ValueError):
    """A module being built is malformed (wrong operand types, bad immediates, unclosed blocks)."""


# ----------------------------------------------------------------------------- byte helpers


def uleb128(n: int) -> bytes:
    """Unsigned LEB128."""
    if n < 0:
        raise ValueError(f"uleb128 of negative {n}")
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def sleb128(n: int) -> bytes:
    """Signed LEB128."""
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if (n == 0 and not b & 0x40) or (n == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def _name(s: str) -> bytes:
    b = s.encode("utf-8")
    return uleb128(len(b)) + b


def _vec(items: Iterable[bytes]) -> bytes:
    items = list(items)
    return uleb128(len(items)) + b"".join(items)


def _section(sid: int, payload: bytes) -> bytes:
    return bytes([sid]) + uleb128(len(payload)) + payload


def _valtype(t: str) -> bytes:
    if t not in VALTYPE_CODES:
        raise WasmValidationError(f"unknown value type {t!r}")
    return bytes([VALTYPE_CODES[t]])


def _functype(params: Sequence[str], results: Sequence[str]) -> bytes:
    return b"\x60" + _vec(_valtype(p) for p in params) + _vec(_valtype(r) for r in results)


def _limits(lo: int, hi: int | None, shared: bool) -> bytes:
    flags = (1 if hi is not None else 0) | (2 if shared else 0)
    out = bytes([flags]) + uleb128(lo)
    return out + uleb128(hi) if hi is not None else out


# ----------------------------------------------------------------------------- opcode table


class Op:
    """One table-described instruction.

    imm: None (no immediate), "mem" (memarg), "lane" (lane index), "memlane" (memarg + lane),
    "atomic" (memarg whose alignment must be natural).
    """

    __slots__ = ("align", "code", "imm", "ins", "lanes", "name", "outs")

    def __init__(self, name, code, ins, outs, imm=None, align=0, lanes=0):
        self.name, self.code, self.ins, self.outs = name, code, ins, outs
        self.imm, self.align, self.lanes = imm, align, lanes

    def __repr__(self) -> str:
        return f"Op({self.name}, {self.code.hex()}, {self.ins}->{self.outs})"


OPS: dict[str, Op] = {}
_SIG = {"i": I32, "I": I64, "f": F32, "F": F64, "v": V128}


def _code(prefix: int | None, code: int) -> bytes:
    return bytes([code]) if prefix is None else bytes([prefix]) + uleb128(code)


def _ops(code: int, sig: str, names: str, prefix: int | None = None, imm=None, align=0, lanes=0):
    """Register consecutive opcodes from `code`; '-' in `names` skips a reserved opcode.

    sig is "<operands>_<results>" with one letter per type: i=i32 I=i64 f=f32 F=f64 v=v128.
    """
    ins, outs = (tuple(_SIG[c] for c in part) for part in sig.split("_"))
    for name in names.split():
        if name != "-":
            if imm == "lane":  # lane count from the shape, e.g. i8x16 -> 16
                lanes = int(name.split(".")[0].split("x")[1])
            OPS[name] = Op(name, _code(prefix, code), ins, outs, imm, align, lanes)
        code += 1


# parametric, plain numeric (0x45..0xC4)
_ops(0x45, "i_i", "i32.eqz")
_ops(0x46, "ii_i", "i32.eq i32.ne i32.lt_s i32.lt_u i32.gt_s i32.gt_u i32.le_s i32.le_u i32.ge_s i32.ge_u")
_ops(0x50, "I_i", "i64.eqz")
_ops(0x51, "II_i", "i64.eq i64.ne i64.lt_s i64.lt_u i64.gt_s i64.gt_u i64.le_s i64.le_u i64.ge_s i64.ge_u")
_ops(0x5B, "ff_i", "f32.eq f32.ne f32.lt f32.gt f32.le f32.ge")
_ops(0x61, "FF_i", "f64.eq f64.ne f64.lt f64.gt f64.le f64.ge")
_IBIN = "add sub mul div_s div_u rem_s rem_u and or xor shl shr_s shr_u rotl rotr"
_ops(0x67, "i_i", "i32.clz i32.ctz i32.popcnt")
_ops(0x6A, "ii_i", " ".join("i32." + n for n in _IBIN.split()))
_ops(0x79, "I_I", "i64.clz i64.ctz i64.popcnt")
_ops(0x7C, "II_I", " ".join("i64." + n for n in _IBIN.split()))
_FUN, _FBIN = ("abs neg ceil floor trunc nearest sqrt", "add sub mul div min max copysign")
_ops(0x8B, "f_f", " ".join("f32." + n for n in _FUN.split()))
_ops(0x92, "ff_f", " ".join("f32." + n for n in _FBIN.split()))
_ops(0x99, "F_F", " ".join("f64." + n for n in _FUN.split()))
_ops(0xA0, "FF_F", " ".join("f64." + n for n in _FBIN.split()))


def _convs(code: int, names: str, prefix: int | None = None):
    """Conversions are named '<out>.<op>_<in>[_s|_u]': derive their signature from the name."""
    for name in names.split():
        if name != "-":
            out, rest = name.split(".")
            src = next(p for p in rest.split("_") if p in VALTYPE_CODES)
            OPS[name] = Op(name, _code(prefix, code), (src,), (out,))
        code += 1


_convs(
    0xA7,
    "i32.wrap_i64 i32.trunc_f32_s i32.trunc_f32_u i32.trunc_f64_s i32.trunc_f64_u "
    "i64.extend_i32_s i64.extend_i32_u i64.trunc_f32_s i64.trunc_f32_u i64.trunc_f64_s "
    "i64.trunc_f64_u f32.convert_i32_s f32.convert_i32_u f32.convert_i64_s f32.convert_i64_u "
    "f32.demote_f64 f64.convert_i32_s f64.convert_i32_u f64.convert_i64_s f64.convert_i64_u "
    "f64.promote_f32 i32.reinterpret_f32 i64.reinterpret_f64 f32.reinterpret_i32 f64.reinterpret_i64",
)
_ops(0xC0, "i_i", "i32.extend8_s i32.extend16_s")
_ops(0xC2, "I_I", "i64.extend8_s i64.extend16_s i64.extend32_s")
_convs(
    0,
    "i32.trunc_sat_f32_s i32.trunc_sat_f32_u i32.trunc_sat_f64_s i32.trunc_sat_f64_u "
    "i64.trunc_sat_f32_s i64.trunc_sat_f32_u i64.trunc_sat_f64_s i64.trunc_sat_f64_u",
    prefix=0xFC,
)

# memory: (name, opcode, signature, natural alignment as log2)
for _n, _c, _s, _a in [
    ("i32.load", 0x28, "i_i", 2), ("i64.load", 0x29, "i_I", 3),
    ("f32.load", 0x2A, "i_f", 2), ("f64.load", 0x2B, "i_F", 3),
    ("i32.load8_s", 0x2C, "i_i", 0), ("i32.load8_u", 0x2D, "i_i", 0),
    ("i32.load16_s", 0x2E, "i_i", 1), ("i32.load16_u", 0x2F, "i_i", 1),
    ("i64.load8_s", 0x30, "i_I", 0), ("i64.load8_u", 0x31, "i_I", 0),
    ("i64.load16_s", 0x32, "i_I", 1), ("i64.load16_u", 0x33, "i_I", 1),
    ("i64.load32_s", 0x34, "i_I", 2), ("i64.load32_u", 0x35, "i_I", 2),
    ("i32.store", 0x36, "ii_", 2), ("i64.store", 0x37, "iI_", 3),
    ("f32.store", 0x38, "if_", 2), ("f64.store", 0x39, "iF_", 3),
    ("i32.store8", 0x3A, "ii_", 0), ("i32.store16", 0x3B, "ii_", 1),
    ("i64.store8", 0x3C, "iI_", 0), ("i64.store16", 0x3D, "iI_", 1), ("i64.store32", 0x3E, "iI_", 2),
]:  # fmt: skip
    _ops(_c, _s, _n, imm="mem", align=_a)
# memory index 0 is encoded as a trailing zero byte (two for memory.copy)
OPS["memory.size"] = Op("memory.size", b"\x3f\x00", (), (I32,))
OPS["memory.grow"] = Op("memory.grow", b"\x40\x00", (I32,), (I32,))
OPS["memory.copy"] = Op("memory.copy", b"\xfc\x0a\x00\x00", (I32, I32, I32), ())
OPS["memory.fill"] = Op("memory.fill", b"\xfc\x0b\x00", (I32, I32, I32), ())

# fixed-width SIMD (0xFD prefix, LEB128 sub-opcode); loads and stores take a memarg
_V = 0xFD
_ops(0, "i_v", "v128.load", _V, "mem", 4)
_ops(1, "i_v", "v128.load8x8_s v128.load8x8_u v128.load16x4_s v128.load16x4_u", _V, "mem", 3)
_ops(5, "i_v", "v128.load32x2_s v128.load32x2_u", _V, "mem", 3)
for _i, _n in enumerate(["v128.load8_splat", "v128.load16_splat", "v128.load32_splat", "v128.load64_splat"]):
    _ops(7 + _i, "i_v", _n, _V, "mem", _i)
_ops(11, "iv_", "v128.store", _V, "mem", 4)
for _i, _w in enumerate([8, 16, 32, 64]):
    _ops(84 + _i, "iv_v", f"v128.load{_w}_lane", _V, "memlane", _i, 128 // _w)
    _ops(88 + _i, "iv_", f"v128.store{_w}_lane", _V, "memlane", _i, 128 // _w)
_ops(92, "i_v", "v128.load32_zero", _V, "mem", 2)
_ops(93, "i_v", "v128.load64_zero", _V, "mem", 3)
# the others, relaxed SIMD included: (first sub-opcode, signature, names); extract/replace_lane take a lane index
_ICMP = "eq ne lt_s lt_u gt_s gt_u le_s le_u ge_s ge_u"
for _c, _s, _n in [
    (14, "vv_v", "i8x16.swizzle"),
    (15, "i_v", "i8x16.splat i16x8.splat i32x4.splat"),
    (18, "I_v", "i64x2.splat"),
    (19, "f_v", "f32x4.splat"),
    (20, "F_v", "f64x2.splat"),
    (21, "v_i", "i8x16.extract_lane_s i8x16.extract_lane_u"),
    (23, "vi_v", "i8x16.replace_lane"),
    (24, "v_i", "i16x8.extract_lane_s i16x8.extract_lane_u"),
    (26, "vi_v", "i16x8.replace_lane"),
    (27, "v_i", "i32x4.extract_lane"),
    (28, "vi_v", "i32x4.replace_lane"),
    (29, "v_I", "i64x2.extract_lane"),
    (30, "vI_v", "i64x2.replace_lane"),
    (31, "v_f", "f32x4.extract_lane"),
    (32, "vf_v", "f32x4.replace_lane"),
    (33, "v_F", "f64x2.extract_lane"),
    (34, "vF_v", "f64x2.replace_lane"),
    (35, "vv_v", " ".join("i8x16." + n for n in _ICMP.split())),
    (45, "vv_v", " ".join("i16x8." + n for n in _ICMP.split())),
    (55, "vv_v", " ".join("i32x4." + n for n in _ICMP.split())),
    (65, "vv_v", "f32x4.eq f32x4.ne f32x4.lt f32x4.gt f32x4.le f32x4.ge"),
    (71, "vv_v", "f64x2.eq f64x2.ne f64x2.lt f64x2.gt f64x2.le f64x2.ge"),
    (77, "v_v", "v128.not"),
    (78, "vv_v", "v128.and v128.andnot v128.or v128.xor"),
    (82, "vvv_v", "v128.bitselect"),
    (83, "v_i", "v128.any_true"),
    (94, "v_v", "f32x4.demote_f64x2_zero f64x2.promote_low_f32x4 i8x16.abs i8x16.neg i8x16.popcnt"),
    (99, "v_i", "i8x16.all_true i8x16.bitmask"),
    (101, "vv_v", "i8x16.narrow_i16x8_s i8x16.narrow_i16x8_u"),
    (103, "v_v", "f32x4.ceil f32x4.floor f32x4.trunc f32x4.nearest"),
    (107, "vi_v", "i8x16.shl i8x16.shr_s i8x16.shr_u"),
    (110, "vv_v", "i8x16.add i8x16.add_sat_s i8x16.add_sat_u i8x16.sub i8x16.sub_sat_s i8x16.sub_sat_u"),
    (116, "v_v", "f64x2.ceil f64x2.floor"),
    (118, "vv_v", "i8x16.min_s i8x16.min_u i8x16.max_s i8x16.max_u"),
    (122, "v_v", "f64x2.trunc"),
    (123, "vv_v", "i8x16.avgr_u"),
    (124, "v_v", "i16x8.extadd_pairwise_i8x16_s i16x8.extadd_pairwise_i8x16_u i32x4.extadd_pairwise_i16x8_s i32x4.extadd_pairwise_i16x8_u i16x8.abs i16x8.neg"),
    (130, "vv_v", "i16x8.q15mulr_sat_s"),
    (131, "v_i", "i16x8.all_true i16x8.bitmask"),
    (133, "vv_v", "i16x8.narrow_i32x4_s i16x8.narrow_i32x4_u"),
    (135, "v_v", "i16x8.extend_low_i8x16_s i16x8.extend_high_i8x16_s i16x8.extend_low_i8x16_u i16x8.extend_high_i8x16_u"),
    (139, "vi_v", "i16x8.shl i16x8.shr_s i16x8.shr_u"),
    (142, "vv_v", "i16x8.add i16x8.add_sat_s i16x8.add_sat_u i16x8.sub i16x8.sub_sat_s i16x8.sub_sat_u"),
    (148, "v_v", "f64x2.nearest"),
    (149, "vv_v", "i16x8.mul i16x8.min_s i16x8.min_u i16x8.max_s i16x8.max_u - i16x8.avgr_u i16x8.extmul_low_i8x16_s i16x8.extmul_high_i8x16_s i16x8.extmul_low_i8x16_u i16x8.extmul_high_i8x16_u"),
    (160, "v_v", "i32x4.abs i32x4.neg"),
    (163, "v_i", "i32x4.all_true i32x4.bitmask"),
    (167, "v_v", "i32x4.extend_low_i16x8_s i32x4.extend_high_i16x8_s i32x4.extend_low_i16x8_u i32x4.extend_high_i16x8_u"),
    (171, "vi_v", "i32x4.shl i32x4.shr_s i32x4.shr_u"),
    (174, "vv_v", "i32x4.add - - i32x4.sub - - - i32x4.mul i32x4.min_s i32x4.min_u i32x4.max_s i32x4.max_u i32x4.dot_i16x8_s - i32x4.extmul_low_i16x8_s i32x4.extmul_high_i16x8_s i32x4.extmul_low_i16x8_u i32x4.extmul_high_i16x8_u"),
    (192, "v_v", "i64x2.abs i64x2.neg"),
    (195, "v_i", "i64x2.all_true i64x2.bitmask"),
    (199, "v_v", "i64x2.extend_low_i32x4_s i64x2.extend_high_i32x4_s i64x2.extend_low_i32x4_u i64x2.extend_high_i32x4_u"),
    (203, "vi_v", "i64x2.shl i64x2.shr_s i64x2.shr_u"),
    (206, "vv_v", "i64x2.add - - i64x2.sub - - - i64x2.mul i64x2.eq i64x2.ne i64x2.lt_s i64x2.gt_s i64x2.le_s i64x2.ge_s i64x2.extmul_low_i32x4_s i64x2.extmul_high_i32x4_s i64x2.extmul_low_i32x4_u i64x2.extmul_high_i32x4_u"),
    (224, "v_v", "f32x4.abs f32x4.neg - f32x4.sqrt"),
    (228, "vv_v", "f32x4.add f32x4.sub f32x4.mul f32x4.div f32x4.min f32x4.max f32x4.pmin f32x4.pmax"),
    (236, "v_v", "f64x2.abs f64x2.neg - f64x2.sqrt"),
    (240, "vv_v", "f64x2.add f64x2.sub f64x2.mul f64x2.div f64x2.min f64x2.max f64x2.pmin f64x2.pmax"),
    (248, "v_v", "i32x4.trunc_sat_f32x4_s i32x4.trunc_sat_f32x4_u f32x4.convert_i32x4_s f32x4.convert_i32x4_u i32x4.trunc_sat_f64x2_s_zero i32x4.trunc_sat_f64x2_u_zero f64x2.convert_low_i32x4_s f64x2.convert_low_i32x4_u"),
    (0x100, "vv_v", "i8x16.relaxed_swizzle"),
    (0x101, "v_v", "i32x4.relaxed_trunc_f32x4_s i32x4.relaxed_trunc_f32x4_u i32x4.relaxed_trunc_f64x2_s_zero i32x4.relaxed_trunc_f64x2_u_zero"),
    (0x105, "vvv_v", "f32x4.relaxed_madd f32x4.relaxed_nmadd f64x2.relaxed_madd f64x2.relaxed_nmadd i8x16.relaxed_laneselect i16x8.relaxed_laneselect i32x4.relaxed_laneselect i64x2.relaxed_laneselect"),
    (0x10D, "vv_v", "f32x4.relaxed_min f32x4.relaxed_max f64x2.relaxed_min f64x2.relaxed_max"),
    (0x111, "vv_v", "i16x8.relaxed_q15mulr_s i16x8.relaxed_dot_i8x16_i7x16_s"),
    (0x113, "vvv_v", "i32x4.relaxed_dot_i8x16_i7x16_add_s"),
]:  # fmt: skip
    _ops(_c, _s, _n, _V, "lane" if "extract_lane" in _n or "replace_lane" in _n else None)

# threads (0xFE prefix): the few atomics a shared-memory runtime needs
_A = 0xFE
_ops(0x00, "ii_i", "memory.atomic.notify", _A, "atomic", 2)
_ops(0x01, "iiI_i", "memory.atomic.wait32", _A, "atomic", 2)
_ops(0x02, "iII_i", "memory.atomic.wait64", _A, "atomic", 3)
OPS["atomic.fence"] = Op("atomic.fence", b"\xfe\x03\x00", (), ())
_ops(0x10, "i_i", "i32.atomic.load", _A, "atomic", 2)
_ops(0x11, "i_I", "i64.atomic.load", _A, "atomic", 3)
_ops(0x17, "ii_", "i32.atomic.store", _A, "atomic", 2)
_ops(0x18, "iI_", "i64.atomic.store", _A, "atomic", 3)
_ops(0x1E, "ii_i", "i32.atomic.rmw.add", _A, "atomic", 2)
_ops(0x1F, "iI_I", "i64.atomic.rmw.add", _A, "atomic", 3)
_ops(0x48, "iii_i", "i32.atomic.rmw.cmpxchg", _A, "atomic", 2)


# ----------------------------------------------------------------------------- functions


class _Frame:
    __slots__ = ("height", "kind", "params", "results", "unreachable")

    def __init__(self, kind, params, results, height):
        self.kind, self.params, self.results = kind, tuple(params), tuple(results)
        self.height, self.unreachable = height, False

    def label_types(self) -> tuple:
        # a branch to a loop re-enters it (carries params); to anything else exits it
        return self.params if self.kind == "loop" else self.results


class Function:
    """Body builder for one function. Obtain from `Module.function`.

    Each instruction method appends the encoding, checks operand types against the value stack and
    returns `self`, so calls chain: `f.local_get(0).local_get(1).f32_add()`. `block`, `loop` and
    `if_` also work as context managers (`with f.loop(): ...` emits the matching `end`).
    """

    def __init__(self, module: Module, index: int, name: str, params, results):
        self.module, self.index, self.name = module, index, name
        self.params, self.results = tuple(params), tuple(results)
        self.locals: list[str] = list(self.params)  # params, then declared locals
        self.code = bytearray()
        self._stack: list[str | None] = []  # None: unknown type (after unreachable)
        self._frames = [_Frame("func", (), self.results, 0)]
        self._count = 0  # instructions emitted, for error messages
        self._current = "<start>"
        self._undo: list[str | None] = []  # values popped by the current instruction

    # -- bookkeeping

    def local(self, valtype: str) -> int:
        """Declare a local of `valtype` and return its index."""
        _valtype(valtype)
        self.locals.append(valtype)
        return len(self.locals) - 1

    @property
    def finished(self) -> bool:
        return not self._frames

    def _error(self, msg: str) -> WasmValidationError:
        # undo the failed instruction's pops so the builder stays usable after the error
        self._stack.extend(reversed(self._undo))
        self._undo = []
        return WasmValidationError(f"function {self.name!r}, instruction #{self._count} {self._current!r}: {msg}")

    def _begin(self, name: str) -> None:
        if not self._frames:
            raise WasmValidationError(f"function {self.name!r}: {name!r} emitted after the function's final end")
        self._count += 1
        self._current = name
        self._undo = []

    def _push(self, types: Iterable[str | None]) -> None:
        self._stack.extend(types)

    def _pop(self, want: str | None = None) -> str | None:
        frame = self._frames[-1]
        if len(self._stack) == frame.height:
            if frame.unreachable:
                return want
            raise self._error(f"expected {want or 'a value'} on the stack but the stack is empty")
        got = self._stack.pop()
        self._undo.append(got)
        if want is not None and got is not None and got != want:
            raise self._error(f"expected {want} on the stack, found {got}")
        return got if got is not None else want

    def _pop_all(self, types: Sequence[str]) -> None:
        for t in reversed(types):
            self._pop(t)

    def _set_unreachable(self) -> None:
        frame = self._frames[-1]
        del self._stack[frame.height :]
        frame.unreachable = True

    def _emit(self, name: str, code: bytes, ins: Sequence[str], outs: Sequence[str]) -> Function:
        self._begin(name)
        self._pop_all(ins)
        self._push(outs)
        self.code += code
        return self

    def stack(self) -> tuple:
        """Current value-stack types (None = unknown, in unreachable code); handy for debugging."""
        return tuple(self._stack)

    # -- table-driven instructions

    def op(self, name: str, *args: int, offset: int = 0, align: int | None = None) -> Function:
        """Emit the table instruction `name` (e.g. "f32x4.add"); lane ops take the lane as an arg."""
        info = OPS.get(name)
        if info is None:
            raise WasmValidationError(f"function {self.name!r}: unknown instruction {name!r}")
        self._begin(name)
        code = info.code
        if info.imm in ("mem", "memlane", "atomic"):
            if self.module.memory is None:
                raise self._error("memory instruction in a module without memory")
            if align is None:
                align = info.align
            if not 0 <= align <= info.align or (info.imm == "atomic" and align != info.align):
                raise self._error(f"alignment 2**{align} is not allowed (natural is 2**{info.align})")
            if not 0 <= offset < 2**32:
                raise self._error(f"offset {offset} out of range")
            code = code + uleb128(align) + uleb128(offset)
        if info.imm in ("lane", "memlane"):
            if len(args) != 1 or not 0 <= args[0] < info.lanes:
                raise self._error(f"needs one lane index in [0, {info.lanes}), got {args}")
            code = code + bytes([args[0]])
        elif args:
            raise self._error(f"takes no positional immediates, got {args}")
        self._pop_all(info.ins)
        self._push(info.outs)
        self.code += code
        return self

    # -- control

    def _blocktype(self, bt: None | str | tuple) -> tuple[bytes, tuple, tuple]:
        if bt is None:
            return b"\x40", (), ()
        if isinstance(bt, str):
            return _valtype(bt), (), (bt,)
        params, results = tuple(bt[0]), tuple(bt[1])
        if not params and len(results) <= 1:
            return self._blocktype(results[0] if results else None)
        return sleb128(self.module.type_index(params, results)), params, results

    def _open(self, kind: str, code: int, bt: None | str | tuple) -> Function:
        self._begin(kind)
        enc, params, results = self._blocktype(bt)
        if kind == "if":
            self._pop(I32)
        self._pop_all(params)
        self._frames.append(_Frame(kind, params, results, len(self._stack)))
        self._push(params)
        self.code += bytes([code]) + enc
        return self

    def block(self, bt: None | str | tuple = None) -> Function:
        """Open a block; `bt` is None, a result type, or (params, results)."""
        return self._open("block", 0x02, bt)

    def loop(self, bt: None | str | tuple = None) -> Function:
        """Open a loop (a branch to it jumps back to its start)."""
        return self._open("loop", 0x03, bt)

    def if_(self, bt: None | str | tuple = None) -> Function:
        """Open an if on the i32 condition at the top of the stack."""
        return self._open("if", 0x04, bt)

    def else_(self) -> Function:
        self._begin("else")
        frame = self._frames[-1]
        if frame.kind != "if":
            raise self._error(f"else without a matching if (innermost is {frame.kind})")
        self._pop_all(frame.results)
        if len(self._stack) != frame.height:
            raise self._error(f"then-branch leaves {len(self._stack) - frame.height} extra value(s)")
        frame.kind, frame.unreachable = "else", False
        self._push(frame.params)
        self.code.append(0x05)
        return self

    def end(self) -> Function:
        """Close the innermost block, loop, if or (when none is open) the function itself."""
        self._begin("end")
        frame = self._frames[-1]
        self._pop_all(frame.results)
        if len(self._stack) != frame.height:
            extra = self._stack[frame.height :]
            raise self._error(f"{frame.kind} leaves extra value(s) {extra} on the stack")
        if frame.kind == "if" and frame.params != frame.results:
            raise self._error("if without else must have matching params and results")
        self._frames.pop()
        self._push(frame.results)
        self.code.append(0x0B)
        return self

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.end()

    def _label(self, depth: int) -> _Frame:
        if not 0 <= depth < len(self._frames):
            raise self._error(f"branch depth {depth} out of range (open frames: {len(self._frames)})")
        return self._frames[-1 - depth]

    def br(self, depth: int) -> Function:
        self._begin("br")
        self._pop_all(self._label(depth).label_types())
        self._set_unreachable()
        self.code += b"\x0c" + uleb128(depth)
        return self

    def br_if(self, depth: int) -> Function:
        self._begin("br_if")
        self._pop(I32)
        types = self._label(depth).label_types()
        self._pop_all(types)
        self._push(types)
        self.code += b"\x0d" + uleb128(depth)
        return self

    def br_table(self, depths: Sequence[int], default: int) -> Function:
        self._begin("br_table")
        self._pop(I32)
        types = self._label(default).label_types()
        for d in depths:
            if len(self._label(d).label_types()) != len(types):
                raise self._error(f"br_table target {d} has a different arity than the default")
        self._pop_all(types)
        self._set_unreachable()
        self.code += b"\x0e" + _vec(uleb128(d) for d in depths) + uleb128(default)
        return self

    def return_(self) -> Function:
        self._begin("return")
        self._pop_all(self.results)
        self._set_unreachable()
        self.code.append(0x0F)
        return self

    def unreachable(self) -> Function:
        self._begin("unreachable")
        self._set_unreachable()
        self.code.append(0x00)
        return self

    def nop(self) -> Function:
        return self._emit("nop", b"\x01", (), ())

    def call(self, func: int | Function) -> Function:
        """Call a function of this module (index or `Function`)."""
        idx = func.index if isinstance(func, Function) else func
        if not 0 <= idx < len(self.module.func_types):
            raise WasmValidationError(f"function {self.name!r}: call to unknown function index {idx}")
        params, results = self.module.func_types[idx]
        return self._emit("call", b"\x10" + uleb128(idx), params, results)

    def drop(self) -> Function:
        self._begin("drop")
        self._pop()
        self.code.append(0x1A)
        return self

    def select(self, valtype: str | None = None) -> Function:
        """select(a, b, cond) -> cond ? a : b; pass `valtype` for the typed form."""
        self._begin("select")
        self._pop(I32)
        b = self._pop(valtype)
        a = self._pop(valtype if valtype is not None else b)
        t = a if a is not None else b
        if a is not None and b is not None and a != b:
            raise self._error(f"operands differ: {a} and {b}")
        self._push([t])
        self.code += b"\x1c\x01" + _valtype(valtype) if valtype is not None else b"\x1b"
        return self

    # -- variables

    def _local(self, idx: int) -> str:
        if not 0 <= idx < len(self.locals):
            raise self._error(f"local index {idx} out of range ({len(self.locals)} locals)")
        return self.locals[idx]

    def local_get(self, idx: int) -> Function:
        self._begin("local.get")
        self._push([self._local(idx)])
        self.code += b"\x20" + uleb128(idx)
        return self

    def local_set(self, idx: int) -> Function:
        self._begin("local.set")
        self._pop(self._local(idx))
        self.code += b"\x21" + uleb128(idx)
        return self

    def local_tee(self, idx: int) -> Function:
        self._begin("local.tee")
        t = self._local(idx)
        self._pop(t)
        self._push([t])
        self.code += b"\x22" + uleb128(idx)
        return self

    def _global(self, idx: int) -> tuple:
        if not 0 <= idx < len(self.module.globals):
            raise self._error(f"global index {idx} out of range")
        return self.module.globals[idx]

    def global_get(self, idx: int) -> Function:
        self._begin("global.get")
        self._push([self._global(idx)[0]])
        self.code += b"\x23" + uleb128(idx)
        return self

    def global_set(self, idx: int) -> Function:
        self._begin("global.set")
        t, mutable, _ = self._global(idx)
        if not mutable:
            raise self._error(f"global {idx} is immutable")
        self._pop(t)
        self.code += b"\x24" + uleb128(idx)
        return self

    # -- constants

    def i32_const(self, v: int) -> Function:
        """Push a 32-bit integer; accepts signed or unsigned values, wraps to two's complement."""
        if not -(2**31) <= v < 2**32:
            raise WasmValidationError(f"function {self.name!r}: i32.const {v} out of range")
        v = v - 2**32 if v >= 2**31 else v
        return self._emit("i32.const", b"\x41" + sleb128(v), (), (I32,))

    def i64_const(self, v: int) -> Function:
        if not -(2**63) <= v < 2**64:
            raise WasmValidationError(f"function {self.name!r}: i64.const {v} out of range")
        v = v - 2**64 if v >= 2**63 else v
        return self._emit("i64.const", b"\x42" + sleb128(v), (), (I64,))

    def f32_const(self, v: float) -> Function:
        return self._emit("f32.const", b"\x43" + struct.pack("<f", v), (), (F32,))

    def f64_const(self, v: float) -> Function:
        return self._emit("f64.const", b"\x44" + struct.pack("<d", v), (), (F64,))

    def v128_const(self, data: bytes) -> Function:
        """Push 16 raw bytes (e.g. `struct.pack('<4f', ...)`)."""
        if len(data) != 16:
            raise WasmValidationError(f"function {self.name!r}: v128.const needs 16 bytes, got {len(data)}")
        return self._emit("v128.const", b"\xfd\x0c" + bytes(data), (), (V128,))

    def i8x16_shuffle(self, lanes: Sequence[int]) -> Function:
        """Pick 16 bytes out of the 32 bytes of two vectors (indices 0..31)."""
        if len(lanes) != 16 or not all(0 <= i < 32 for i in lanes):
            raise WasmValidationError(f"function {self.name!r}: i8x16.shuffle needs 16 lane indices in [0, 32)")
        return self._emit("i8x16.shuffle", b"\xfd\x0d" + bytes(lanes), (V128, V128), (V128,))

    # -- encoding

    def finish(self) -> None:
        """Emit the function's final `end` if still open; checks that no block is left open."""
        if not self._frames:
            return
        if len(self._frames) > 1:
            kinds = [f.kind for f in self._frames[1:]]
            raise WasmValidationError(f"function {self.name!r}: unclosed {kinds} at the end of the body")
        self.end()

    def body(self) -> bytes:
        self.finish()
        groups: list[list] = []
        for t in self.locals[len(self.params) :]:
            if groups and groups[-1][1] == t:
                groups[-1][0] += 1
            else:
                groups.append([1, t])
        payload = _vec(uleb128(n) + _valtype(t) for n, t in groups) + bytes(self.code)
        return uleb128(len(payload)) + payload


def _method(name: str, info: Op):
    """Build the generated method for a table instruction."""
    if info.imm in ("mem", "atomic"):

        def m(self, offset: int = 0, align: int | None = None):
            return self.op(name, offset=offset, align=align)

    elif info.imm == "memlane":

        def m(self, lane: int, offset: int = 0, align: int | None = None):
            return self.op(name, lane, offset=offset, align=align)

    elif info.imm == "lane":

        def m(self, lane: int):
            return self.op(name, lane)

    else:

        def m(self):
            return self._emit(name, info.code, info.ins, info.outs)

    m.__name__ = name.replace(".", "_")
    m.__doc__ = f"{name}: ({', '.join(info.ins)}) -> ({', '.join(info.outs)})"
    return m


for _n, _info in OPS.items():
    setattr(Function, _n.replace(".", "_"), _method(_n, _info))


# ----------------------------------------------------------------------------- module


class Module:
    """A Wasm module importing one linear memory (`env.memory` by default).

    memory_min/memory_max are in 64 KiB pages; a shared memory needs a maximum. Pass
    `import_memory=None` for a module without memory. Function imports must come before
    the first defined function (imports take the low function indices).
    """

    def __init__(
        self,
        *,
        memory_min: int = 0,
        memory_max: int | None = None,
        shared: bool = False,
        import_memory: tuple[str, str] | None = ("env", "memory"),
    ):
        if shared and memory_max is None:
            raise WasmValidationError("a shared memory needs a maximum size")
        self.memory = None if import_memory is None else (import_memory, memory_min, memory_max, shared)
        self.types: list[tuple] = []
        self.func_types: list[tuple] = []  # (params, results) per function index, imports first
        self.imports: list[tuple] = []  # (module, field, type index)
        self.functions: list[Function] = []
        self.globals: list[tuple] = []  # (valtype, mutable, init)
        self.exports: dict[str, tuple] = {}  # name -> (kind, index)
        self.start: int | None = None
        self.memo: dict = {}  # for helper libraries (e.g. mathlib) to avoid emitting twice

    def type_index(self, params: Sequence[str], results: Sequence[str]) -> int:
        """Index of the function type (params) -> (results), added if new."""
        key = (tuple(params), tuple(results))
        for t in key[0] + key[1]:
            _valtype(t)
        if key not in self.types:
            self.types.append(key)
        return self.types.index(key)

    def import_function(self, module: str, field: str, params: Sequence[str], results: Sequence[str]) -> int:
        if self.functions:
            raise WasmValidationError("import functions before defining any function")
        self.imports.append((module, field, self.type_index(params, results)))
        self.func_types.append((tuple(params), tuple(results)))
        return len(self.func_types) - 1

    def function(
        self, name: str, params: Sequence[str] = (), results: Sequence[str] = (), export: bool | str = False
    ) -> Function:
        """Declare a function and return its body builder; `export=True` exports it as `name`."""
        self.type_index(params, results)
        f = Function(self, len(self.func_types), name, params, results)
        self.func_types.append((tuple(params), tuple(results)))
        self.functions.append(f)
        if export:
            self.export(name if export is True else export, f)
        return f

    def export(self, name: str, func: int | Function) -> None:
        if name in self.exports:
            raise WasmValidationError(f"duplicate export {name!r}")
        self.exports[name] = (0, func.index if isinstance(func, Function) else func)

    def add_global(self, valtype: str, init: float = 0, mutable: bool = True) -> int:
        self.globals.append((valtype, mutable, init))
        return len(self.globals) - 1

    def set_start(self, func: int | Function) -> None:
        idx = func.index if isinstance(func, Function) else func
        if self.func_types[idx] != ((), ()):
            raise WasmValidationError("the start function must take and return nothing")
        self.start = idx

    def _const_expr(self, valtype: str, v) -> bytes:
        if valtype == I32:
            return b"\x41" + sleb128(v - 2**32 if v >= 2**31 else v) + b"\x0b"
        if valtype == I64:
            return b"\x42" + sleb128(v - 2**64 if v >= 2**63 else v) + b"\x0b"
        if valtype == F32:
            return b"\x43" + struct.pack("<f", v) + b"\x0b"
        if valtype == F64:
            return b"\x44" + struct.pack("<d", v) + b"\x0b"
        return b"\xfd\x0c" + bytes(v) + b"\x0b"

    def to_bytes(self, names: bool = True) -> bytes:
        """Encode the module; `names` adds a name section so traps show function names."""
        bodies = [f.body() for f in self.functions]  # finishes functions (may add nothing to types)
        out = bytearray(b"\x00asm\x01\x00\x00\x00")
        out += _section(1, _vec(_functype(p, r) for p, r in self.types))
        imports = []
        if self.memory is not None:
            (mod, field), lo, hi, shared = self.memory
            imports.append(_name(mod) + _name(field) + b"\x02" + _limits(lo, hi, shared))
        imports += [_name(m) + _name(f) + b"\x00" + uleb128(t) for m, f, t in self.imports]
        if imports:
            out += _section(2, _vec(imports))
        if self.functions:
            out += _section(3, _vec(uleb128(self.type_index(f.params, f.results)) for f in self.functions))
        if self.globals:
            entries = (_valtype(t) + bytes([int(m)]) + self._const_expr(t, v) for t, m, v in self.globals)
            out += _section(6, _vec(entries))
        if self.exports:
            out += _section(7, _vec(_name(n) + bytes([k]) + uleb128(i) for n, (k, i) in self.exports.items()))
        if self.start is not None:
            out += _section(8, uleb128(self.start))
        if self.functions:
            out += _section(10, _vec(bodies))
        if names and self.functions:
            fnames = _vec(uleb128(f.index) + _name(f.name) for f in self.functions)
            out += _section(0, _name("name") + b"\x01" + uleb128(len(fnames)) + fnames)
        return bytes(out)
