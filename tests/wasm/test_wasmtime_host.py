"""Native wasmtime host: fast call path, traps, memory, caching."""

import pathlib
import subprocess
import sys

import pytest

from pyjax.backends.wasm.encoder import F32, F64, I32, I64, Module

pytest.importorskip("wasmtime")
from pyjax.hosts.wasmtime_host import WasmtimeHost, WasmTrap


@pytest.fixture()
def host():
    return WasmtimeHost(pages=2, max_pages=64)


def _module():
    m = Module(memory_min=1)
    f = m.function("ident", [I32], [I32], export=True)
    f.local_get(0)
    f = m.function("mix", [I32, I64, F32, F64], [F64], export=True)
    f.local_get(0).f64_convert_i32_s().local_get(1).f64_convert_i64_s().f64_add()
    f.local_get(2).f64_promote_f32().f64_add().local_get(3).f64_add()
    f = m.function("swap", [I64, F32], [F32, I64], export=True)
    f.local_get(1).local_get(0)
    f = m.function("store", [I32, I32], [], export=True)
    f.local_get(0).local_get(1).i32_store()
    f = m.function("load_u", [I32], [I32], export=True)
    f.local_get(0).i32_load8_u()
    f = m.function("boom", [], [], export=True)
    f.unreachable()
    f = m.function("div", [I32, I32], [I32], export=True)
    f.local_get(0).local_get(1).i32_div_s()
    f = m.function("grow", [I32], [I32], export=True)
    f.local_get(0).memory_grow()
    return m.to_bytes()


def test_import_does_not_need_wasmtime_or_numpy():
    """Pyodide has no wasmtime and may lack numpy: neither may be imported at module level."""
    import ast
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[2]
    files = ["pyjax/hosts/wasmtime_host.py"]
    files += [f"pyjax/backends/wasm/{n}.py" for n in ("encoder", "allocator")]
    for name in files:
        tree = ast.parse((root / name).read_text())
        for node in tree.body:
            mods = []
            if isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                mods = [node.module or ""]
            assert not any(m.split(".")[0] in ("numpy", "wasmtime") for m in mods), (name, mods)
    code = (
        "import sys; sys.modules['wasmtime'] = None\n"
        "import pyjax.hosts.wasmtime_host, pyjax.backends.wasm.encoder, "
        "pyjax.backends.wasm.allocator\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root)


def test_fast_and_slow_paths_agree(host):
    inst = host.load(_module())
    for fast in (True, False):
        ident = inst.function("ident", fast=fast)
        assert ident.is_fast is fast
        assert ident(41) == 41
        assert ident(-5) == -5
        assert ident(2**32 - 1) == -1  # u32 arguments wrap like Wasm i32
        assert inst.function("mix", fast=fast)(1, 2**40, 0.5, 0.25) == 1 + 2**40 + 0.75
        assert inst.function("swap", fast=fast)(-7, 1.5) == (1.5, -7)
        assert inst.function("store", fast=fast)(64, 0x01020304) is None
    assert host.read(64, 4) == bytes([4, 3, 2, 1])
    assert inst["load_u"](64) == 4
    with pytest.raises(TypeError, match="takes 1 argument"):
        inst["ident"]()
    assert sorted(inst.names()) == sorted(["ident", "mix", "swap", "store", "load_u", "boom", "div", "grow"])


def test_pointer_above_2gib_is_passed_unsigned(host):
    """Pointers >= 2**31 wrap to negative i32 and back: the bits are what Wasm sees."""
    inst = host.load(_module())
    assert inst["ident"](3 * 2**30) & 0xFFFFFFFF == 3 * 2**30


@pytest.mark.parametrize("fast", [True, False])
def test_traps_raise_wasmtrap_naming_the_function(host, fast):
    inst = host.load(_module())
    with pytest.raises(WasmTrap, match="'boom'") as e:
        inst.function("boom", fast=fast)()
    assert e.value.function == "boom" and "unreachable" in e.value.message.lower()
    assert isinstance(e.value, RuntimeError)
    with pytest.raises(WasmTrap, match="(?s)'load_u'.*out of bounds"):
        inst.function("load_u", fast=fast)(host.nbytes)
    with pytest.raises(WasmTrap, match="'div'") as e:
        inst.function("div", fast=fast)(1, 0)
    assert e.value.code == "INTEGER_DIVISION_BY_ZERO"
    assert inst.function("ident", fast=fast)(3) == 3  # the store is still usable after a trap


def test_traps_raise_after_faulthandler_is_enabled_later():
    """faulthandler.enable() after the first engine put its handlers over wasmtime's, and the next
    trap crashed the process (SIGSEGV, once a pytest worker) instead of raising."""
    code = (
        "import faulthandler, sys\n"
        "sys.path.insert(0, 'tests/wasm')\n"
        "from test_wasmtime_host import _module\n"
        "from pyjax.backends.wasm.backend import WasmBackend, WasmKernelError, _Exe\n"
        "from pyjax.hosts.wasmtime_host import WasmtimeHost\n"
        "faulthandler.disable()\n"
        "b = WasmBackend(WasmtimeHost(pages=2, max_pages=64))\n"
        "inst = b.host.load(_module())\n"
        "faulthandler.enable()\n"
        "for name, args in (('load_u', (b.host.nbytes,)), ('boom', ())):\n"
        "    f = inst[name]\n"
        "    try:\n"
        "        b.dispatch(_Exe(lambda ins, outs: f(*args), name, 1), [], [])\n"
        "    except WasmKernelError:\n"
        "        print('raised', name)\n"
    )
    root = pathlib.Path(__file__).resolve().parents[2]
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, timeout=300)
    assert r.returncode == 0 and r.stdout.split() == ["raised", "load_u", "raised", "boom"], r.stderr[-3000:]


def test_trap_message_has_function_name_from_name_section(host):
    m = Module()
    inner = m.function("inner_kernel")
    inner.unreachable()
    outer = m.function("outer", export=True)
    outer.call(inner)
    with pytest.raises(WasmTrap) as e:
        host.load(m.to_bytes())["outer"]()
    assert "inner_kernel" in str(e.value)  # wasmtime's backtrace uses the name section


def test_compile_cache_and_invalid_modules(host, tmp_path):
    wasm = _module()
    assert host.load(wasm) is host.load(wasm)
    assert host.compile(wasm) is host.compile(wasm)
    with pytest.raises(ValueError, match="invalid wasm"):
        host.compile(b"\x00asm\x01\x00\x00\x00\x99")
    disk = WasmtimeHost(cache_dir=str(tmp_path))
    disk.compile(wasm)
    assert len(list(tmp_path.glob("*.cwasm"))) == 1
    again = WasmtimeHost(cache_dir=str(tmp_path))  # a new process would find it the same way
    assert again.load(wasm)["ident"](9) == 9


def test_memory_read_write_grow(host):
    np = pytest.importorskip("numpy")
    assert host.pages == 2 and host.nbytes == 2 * 65536
    host.write(100, b"hello")
    host.write(105, bytearray(b" wasm"))
    host.write(110, memoryview(b"!!"))
    assert host.read(100, 12) == b"hello wasm!!"
    arr = np.arange(10, dtype=np.float32)
    host.write(1024, arr)
    assert np.array_equal(np.frombuffer(host.read(1024, 40), np.float32), arr)
    with pytest.raises(IndexError):
        host.read(host.nbytes - 2, 4)
    with pytest.raises(IndexError):
        host.write(-1, b"x")
    assert host.grow(3) == 2
    assert host.pages == 5
    assert host.read(100, 5) == b"hello"  # contents survive growth
    host.write(5 * 65536 - 4, b"tail")
    with pytest.raises(MemoryError):
        host.grow(100)  # past max_pages
    assert host.pages == 5


def test_wasm_side_grow_is_seen_by_host(host):
    inst = host.load(_module())
    assert inst["grow"](1) == 2
    assert host.nbytes == 3 * 65536
    host.write(3 * 65536 - 1, b"z")


def test_zero_copy_view_shared_across_modules(host):
    np = pytest.importorskip("numpy")
    a = host.load(_module())
    m = Module(memory_min=1)
    f = m.function("double", [I32, I32], [], export=True)  # in-place x[i] *= 2 over n f32
    i, addr = f.local(I32), f.local(I32)
    with f.block(), f.loop():
        f.local_get(i).local_get(1).i32_ge_u().br_if(1)
        f.local_get(0).local_get(i).i32_const(2).i32_shl().i32_add().local_tee(addr)
        f.local_get(addr).f32_load().f32_const(2.0).f32_mul().f32_store()
        f.local_get(i).i32_const(1).i32_add().local_set(i)
        f.br(0)
    b = host.load(m.to_bytes())
    view = host.view(np.float32, 4096, 8)
    view[:] = np.arange(8)
    b["double"](4096, 8)
    assert list(view) == [0, 2, 4, 6, 8, 10, 12, 14]  # wasm wrote, the view sees it
    view[0] = 7.0
    a["store"](4096 + 4, 0x40400000)  # other module, same memory: 3.0f
    assert view[0] == 7.0 and view[1] == 3.0
    assert host.read(4096, 4) == np.float32(7).tobytes()


def _const_module(k: int) -> bytes:
    m = Module(memory_min=1)
    f = m.function("k", [I32], [I32], export=True)  # stores k at the pointer, returns k + load
    f.local_get(0).i32_const(k).i32_store()
    f.i32_const(k).local_get(0).i32_load().i32_add()
    return m.to_bytes()


def _maps() -> int:
    with open("/proc/self/maps") as fh:
        return sum(1 for _ in fh)


@pytest.mark.parametrize("fast", [True, False])
def test_recycled_store_keeps_memory_and_rebinds_functions(fast):
    """After max_modules instantiations the host moves to a new store: memory keeps its bytes at
    the same addresses, and functions handed out before rebind to the new store when called."""
    host = WasmtimeHost(pages=2, max_pages=64, max_modules=3)
    host.write(70000, b"kept")
    first = host.load(_const_module(1)).function("k", fast=fast)
    calls = [host.load(_const_module(k)).function("k", fast=fast) for k in range(2, 12)]
    assert host.generation >= 3
    assert host.read(70000, 4) == b"kept"
    assert first(64) == 2 and host.read(64, 4) == (1).to_bytes(4, "little")
    for k, f in zip(range(2, 12), calls):
        assert f(128) == 2 * k
    inst = host.load(_const_module(5))
    assert inst["k"](256) == 10
    stale = host.load(_const_module(20))  # an instance from before a recycle gives new functions too
    for k in range(30, 36):
        host.load(_const_module(k))
    assert stale.generation != host.generation and stale["k"](256) == 40


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts /proc/self/maps")
def test_many_modules_do_not_exhaust_process_mappings():
    """Every compiled module maps its code (two of the ~65k mappings a Linux process may have);
    without recycling, a long session or test run dies in mmap. 400 modules over a store of 16."""
    host = WasmtimeHost(pages=2, max_pages=64, max_modules=16)
    before = _maps()
    for k in range(400):
        assert host.load(_const_module(k))["k"](64) == 2 * k
    assert _maps() - before < 200


def test_fast_path_bypasses_func_call(host, monkeypatch):
    """The fast path (about 2 µs a call against 20) never goes through Func.__call__; the slow one
    does. Checked by breaking Func.__call__, not by timing (machines are shared and noisy)."""
    import wasmtime

    inst = host.load(_module())
    fast, slow = inst.function("ident"), inst.function("ident", fast=False)
    assert fast.is_fast and not slow.is_fast

    def broken(*a, **k):
        raise AssertionError("Func.__call__ used")

    monkeypatch.setattr(wasmtime.Func, "__call__", broken)
    assert fast(7) == 7
    with pytest.raises(AssertionError, match="Func.__call__ used"):
        slow(7)


def test_f64_and_f32_params_fast_path(host):
    m = Module()
    f = m.function("fma", [F32, F32, F32], [F32], export=True)
    f.local_get(0).local_get(1).f32_mul().local_get(2).f32_add()
    inst = host.load(m.to_bytes())
    assert inst["fma"].is_fast
    assert inst["fma"](1.5, 2.0, 0.25) == 3.25
