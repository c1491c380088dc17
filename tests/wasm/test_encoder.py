"""Wasm encoder: byte-exact against wat2wasm, modules validate and run, stack errors raise."""

import struct

import pytest

from pyjax.backends.wasm.encoder import F32, F64, I32, I64, OPS, V128, Module, WasmValidationError, sleb128, uleb128

wasmtime = pytest.importorskip("wasmtime")

_CONST_WAT = {
    I32: "i32.const 0",
    I64: "i64.const 0",
    F32: "f32.const 0",
    F64: "f64.const 0",
    V128: "v128.const i64x2 0 0",
}


def _push_zero(f, t):
    {
        I32: lambda: f.i32_const(0),
        I64: lambda: f.i64_const(0),
        F32: lambda: f.f32_const(0.0),
        F64: lambda: f.f64_const(0.0),
        V128: lambda: f.v128_const(bytes(16)),
    }[t]()


def _wat(text: str) -> bytes:
    return bytes(wasmtime.wat2wasm(text))


def _engine():
    cfg = wasmtime.Config()
    cfg.wasm_relaxed_simd = True
    cfg.wasm_threads = True
    return wasmtime.Engine(cfg)


ENGINE = _engine()


def _validate(wasm: bytes) -> None:
    wasmtime.Module.validate(ENGINE, wasm)


def test_leb128():
    assert uleb128(0) == b"\x00"
    assert uleb128(127) == b"\x7f"
    assert uleb128(128) == b"\x80\x01"
    assert uleb128(624485) == bytes([0xE5, 0x8E, 0x26])
    assert sleb128(-1) == b"\x7f"
    assert sleb128(63) == b"\x3f"
    assert sleb128(64) == b"\xc0\x00"
    assert sleb128(-64) == b"\x40"
    assert sleb128(-123456) == bytes([0xC0, 0xBB, 0x78])
    with pytest.raises(ValueError):
        uleb128(-1)


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_table_op_matches_wat2wasm(name):
    """Each table instruction encodes exactly like wat2wasm, and the module validates."""
    op = OPS[name]
    atomic = op.imm == "atomic"
    m = Module(memory_min=1 if atomic else 0, memory_max=1 if atomic else None, shared=atomic)
    f = m.function("f", [], list(op.outs))
    for t in op.ins:
        _push_zero(f, t)
    lane = (1,) if op.imm in ("lane", "memlane") else ()
    has_mem = op.imm in ("mem", "memlane", "atomic")
    f.op(name, *lane, offset=8 if has_mem else 0)
    imm = (" offset=8" if has_mem else "") + (" 1" if lane else "")
    mem = "1 1 shared" if atomic else "0"
    result = f"(result {' '.join(op.outs)})" if op.outs else ""
    args = " ".join(_CONST_WAT[t] for t in op.ins)
    wat = f'(module (memory (import "env" "memory") {mem}) (func {result} {args} {name}{imm}))'
    ours = m.to_bytes(names=False)
    assert ours == _wat(wat)
    _validate(ours)


def _add_loop_module():
    m = Module(memory_min=1)
    f = m.function("add", [I32, I32, I32, I32], [], export=True)
    a, b, c, n = 0, 1, 2, 3
    i = f.local(I32)
    with f.block(), f.loop():
        f.local_get(i).local_get(n).i32_ge_u().br_if(1)
        f.local_get(c).local_get(i).i32_const(2).i32_shl().i32_add()
        f.local_get(a).local_get(i).i32_const(2).i32_shl().i32_add().f32_load()
        f.local_get(b).local_get(i).i32_const(2).i32_shl().i32_add().f32_load()
        f.f32_add().f32_store()
        f.local_get(i).i32_const(1).i32_add().local_set(i)
        f.br(0)
    return m


def test_module_add_loop_matches_wat2wasm():
    wat = """(module
      (memory (import "env" "memory") 1)
      (func (export "add") (param i32 i32 i32 i32) (local i32)
        block loop
          local.get 4 local.get 3 i32.ge_u br_if 1
          local.get 2 local.get 4 i32.const 2 i32.shl i32.add
          local.get 0 local.get 4 i32.const 2 i32.shl i32.add f32.load
          local.get 1 local.get 4 i32.const 2 i32.shl i32.add f32.load
          f32.add f32.store
          local.get 4 i32.const 1 i32.add local.set 4
          br 0
        end end))"""
    assert _add_loop_module().to_bytes(names=False) == _wat(wat)


def test_module_control_and_sections_match_wat2wasm():
    m = Module(memory_min=2, memory_max=10)
    log = m.import_function("env", "log", [F64], [])
    g = m.add_global(I32, 7, mutable=True)
    c = m.add_global(F64, 1.5, mutable=False)
    f = m.function("pick", [I32, F64], [F64], export="pick")
    x = f.local(I64)
    f.local(I64)
    f.local(F32)
    f.local_get(0)
    with f.if_(F64):
        f.local_get(1).global_get(c).f64_mul()
        f.else_()
        f.f64_const(-2.0)
    f.local_get(0).i64_extend_i32_u().local_set(x)
    f.global_get(g).i32_const(1).i32_add().global_set(g)
    with f.block(F64):
        f.f64_const(3.0).local_get(0).br_if(0).drop()
        f.f64_const(4.0)
    f.f64_add()
    s = m.function("start")
    s.f64_const(0.0).call(log)
    m.set_start(s)
    wat = """(module
      (memory (import "env" "memory") 2 10)
      (import "env" "log" (func (param f64)))
      (global (mut i32) (i32.const 7))
      (global f64 (f64.const 1.5))
      (func (export "pick") (param i32 f64) (result f64) (local i64 i64 f32)
        local.get 0
        if (result f64) local.get 1 global.get 1 f64.mul else f64.const -2 end
        local.get 0 i64.extend_i32_u local.set 2
        global.get 0 i32.const 1 i32.add global.set 0
        block (result f64) f64.const 3 local.get 0 br_if 0 drop f64.const 4 end
        f64.add)
      (func f64.const 0 call 0)
      (start 2))"""
    assert m.to_bytes(names=False) == _wat(wat)


def test_multivalue_block_br_table_select_simd_match_wat2wasm():
    m = Module(memory_min=1, memory_max=4, shared=True)
    f = m.function("f", [I32, I32], [I32, I32], export=True)
    f.local_get(0).local_get(1)
    with f.block(([I32, I32], [I32, I32])):
        f.nop()
    with f.block():
        with f.block():
            f.local_get(0).br_table([0, 1], 1)
        f.i32_const(5).i32_const(6).local_get(1).select().drop()
    f.i64_const(1).i64_const(2).local_get(0).select(I64).drop()
    f.v128_const(struct.pack("<4f", 1, 2, 3, 4)).v128_const(bytes(16))
    f.i8x16_shuffle(list(range(8, 24))).f32x4_extract_lane(3).drop()
    f.i32_const(0).i32_const(1).i32_atomic_rmw_add().drop()
    wat = """(module
      (memory (import "env" "memory") 1 4 shared)
      (type (func (param i32 i32) (result i32 i32)))
      (func (export "f") (type 0)
        local.get 0 local.get 1
        block (type 0) nop end
        block block local.get 0 br_table 0 1 1 end
          i32.const 5 i32.const 6 local.get 1 select drop end
        i64.const 1 i64.const 2 local.get 0 select (result i64) drop
        v128.const f32x4 1 2 3 4 v128.const i64x2 0 0
        i8x16.shuffle 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23
        f32x4.extract_lane 3 drop
        i32.const 0 i32.const 1 i32.atomic.rmw.add drop))"""
    assert m.to_bytes(names=False) == _wat(wat)


def test_name_section_and_validation():
    wasm = _add_loop_module().to_bytes()
    _validate(wasm)
    assert b"\x04name" in wasm and b"add" in wasm


def test_modules_run():
    """Build a few modules and execute them in wasmtime."""
    store = wasmtime.Store(ENGINE)
    mem = wasmtime.Memory(store, wasmtime.MemoryType(wasmtime.Limits(1, None)))
    m = Module(memory_min=1)
    fac = m.function("fac", [I64], [I64], export=True)
    acc = fac.local(I64)
    fac.i64_const(1).local_set(acc)
    with fac.block(), fac.loop():
        fac.local_get(0).i64_const(1).i64_le_s().br_if(1)
        fac.local_get(acc).local_get(0).i64_mul().local_set(acc)
        fac.local_get(0).i64_const(1).i64_sub().local_set(0)
        fac.br(0)
    fac.local_get(acc)
    mv = m.function("divmod", [I32, I32], [I32, I32], export=True)
    mv.local_get(0).local_get(1).i32_div_u().local_get(0).local_get(1).i32_rem_u()
    simd = m.function("madd", [F32, F32, F32], [F32], export=True)
    simd.local_get(0).f32x4_splat().local_get(1).f32x4_splat().local_get(2).f32x4_splat()
    simd.f32x4_relaxed_madd().f32x4_extract_lane(2)
    dot = m.function("sum4", [I32], [F32], export=True)  # horizontal sum of 4 f32 at ptr
    v = dot.local(V128)
    dot.local_get(0).v128_load().local_tee(v)
    dot.local_get(v).local_get(v).i8x16_shuffle(list(range(8, 16)) + list(range(8))).f32x4_add()
    dot.local_tee(v).local_get(v).local_get(v).i8x16_shuffle(list(range(4, 8)) + list(range(4)) * 3)
    dot.f32x4_add().f32x4_extract_lane(0)
    mod = wasmtime.Module(ENGINE, m.to_bytes())
    ex = wasmtime.Instance(store, mod, [mem]).exports(store)
    assert ex["fac"](store, 20) == 2432902008176640000
    assert ex["divmod"](store, 17, 5) == [3, 2]
    assert ex["madd"](store, 2.0, 3.0, 1.0) == 7.0
    mem.write(store, struct.pack("<4f", 1.0, 2.0, 3.0, 4.5), 64)
    assert ex["sum4"](store, 64) == 10.5


def test_i32_const_accepts_unsigned():
    m = Module(import_memory=None)
    f = m.function("k", [], [I32], export=True)
    f.i32_const(0xFFFFFFFF)
    assert f.code == bytearray(b"\x41\x7f")
    with pytest.raises(WasmValidationError):
        f.i32_const(2**32)


# ----------------------------------------------------------------------------- stack checks


def _fn(params=(), results=()):
    return Module(memory_min=1).function("kern", list(params), list(results))


def test_error_wrong_operand_type_names_function_and_instruction():
    f = _fn([F32], [I32])
    f.local_get(0).i32_const(1)
    with pytest.raises(WasmValidationError, match=r"'kern'.*'i32.add'.*expected i32.*found f32"):
        f.i32_add()


def test_error_stack_underflow():
    f = _fn()
    with pytest.raises(WasmValidationError, match="f32.neg.*stack is empty"):
        f.f32_neg()


@pytest.mark.parametrize(
    "build, pattern",
    [
        (lambda f: f.f32_const(1.0), "expected i32 on the stack, found f32"),  # wrong result
        (lambda f: f.i32_const(1).i32_const(2), "extra value"),
        (lambda f: f.block(), "unclosed"),
        (lambda f: None, "stack is empty"),
    ],
)
def test_error_function_end(build, pattern):
    m = Module()
    f = m.function("g", [], [I32])
    build(f)
    with pytest.raises(WasmValidationError, match=pattern):
        m.to_bytes()


def test_error_messages_for_immediates_and_indices():
    f = _fn([I32, F32])
    with pytest.raises(WasmValidationError, match="local index 5"):
        f.local_get(5)
    with pytest.raises(WasmValidationError, match="expected f32"):
        f.i32_const(0).local_set(1)
    f.drop()
    with pytest.raises(WasmValidationError, match="branch depth 3"):
        f.br(3)
    with pytest.raises(WasmValidationError, match="lane"):
        f.v128_const(bytes(16)).f32x4_extract_lane(4)
    f.drop()
    with pytest.raises(WasmValidationError, match="alignment"):
        f.local_get(0).f32_load(align=3)
    f.drop()
    with pytest.raises(WasmValidationError, match="else without"):
        f.else_()
    with pytest.raises(WasmValidationError, match="unknown instruction"):
        f.op("f32.frobnicate")
    with pytest.raises(WasmValidationError, match="16 bytes"):
        f.v128_const(b"1234")


def test_error_if_without_else_with_result_and_block_results():
    f = _fn([I32])
    f.local_get(0).if_(I32).i32_const(1)
    with pytest.raises(WasmValidationError, match="if without else"):
        f.end()
    g = _fn([I32])
    g.block(F64).i32_const(1)
    with pytest.raises(WasmValidationError, match="expected f64"):
        g.end()


def test_error_call_and_globals_and_select():
    m = Module()
    callee = m.function("callee", [F64, I32], [I32])
    callee.local_get(1)
    g = m.add_global(F32, 0.0, mutable=False)
    f = m.function("caller", [], [])
    with pytest.raises(WasmValidationError, match="'call'.*expected i32"):
        f.f64_const(1.0).f64_const(2.0).call(callee)
    f2 = m.function("caller2")
    with pytest.raises(WasmValidationError, match="immutable"):
        f2.f32_const(1.0).global_set(g)
    f3 = m.function("caller3")
    with pytest.raises(WasmValidationError, match="operands differ|expected"):
        f3.i32_const(1).f32_const(1.0).i32_const(0).select()
    with pytest.raises(WasmValidationError, match="unknown function index"):
        m.function("caller4").call(99)


def test_error_after_final_end_and_memory_less_module():
    m = Module()
    f = m.function("done", [], [])
    f.end()
    with pytest.raises(WasmValidationError, match="after the function's final end"):
        f.nop()
    f2 = Module(import_memory=None).function("nomem", [I32], [I32])
    with pytest.raises(WasmValidationError, match="without memory"):
        f2.local_get(0).i32_load()
    with pytest.raises(WasmValidationError, match="shared memory needs a maximum"):
        Module(shared=True)


def test_unreachable_code_is_polymorphic():
    """After br/return/unreachable anything type-checks, like the spec's validation algorithm."""
    m = Module()
    f = m.function("poly", [], [F32], export=True)
    with f.block():
        f.br(0)
        f.i32_add().drop()  # operands come from the polymorphic stack
    f.unreachable().f64_neg().drop()
    f.f32_const(1.0)
    _validate(m.to_bytes())
    g = m.function("ret", [], [I64])
    g.i64_const(1).return_()
    g.f32_const(0.0).drop()  # dead code with a different type is fine
    _validate(m.to_bytes())


def test_function_import_after_definition_is_rejected():
    m = Module()
    m.function("a")
    with pytest.raises(WasmValidationError, match="import functions before"):
        m.import_function("env", "f", [], [])
