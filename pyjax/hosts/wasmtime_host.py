"""Native Wasm host on wasmtime-py: one engine, one store, one linear memory for all modules.

Every kernel module imports the same memory as `env.memory`, so tensors live in one heap and a
kernel call only passes pointers. Compiled modules are cached by the hash of their bytes.

A wasmtime Store frees nothing it instantiated until the store itself goes, and every compiled
module holds its own executable mapping (two entries of the process's ~65k `vm.max_map_count`).
So after `max_modules` instantiations the host recycles: a new store and memory (the bytes
copied, addresses unchanged), the old store and unused modules dropped. Functions handed out
earlier re-instantiate their module in the new store on their next call (a generation check).

Calls go through a fast path: `Func.__call__` re-reads the function type and boxes every value on
each call (about 20 µs); `WasmFunction` calls `wasmtime_func_call_unchecked` directly with a
reused raw-value buffer (about 2 µs). That uses private parts of wasmtime-py
(`wasmtime._bindings._wasmtime_func_call_unchecked`, `Func._func`, `Store._context()`), checked
against wasmtime-py 50.0.1: the supported range is `wasmtime>=50,<51`. When those parts are
missing, or for v128 parameters, calls fall back to `Func.__call__`.

wasmtime (and numpy, for `view`) are imported lazily so that importing this module needs neither.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
from typing import Any

__all__ = ["MAX_PAGES", "PAGE_SIZE", "WasmFunction", "WasmInstance", "WasmTrap", "WasmtimeHost"]

PAGE_SIZE = 65536
MAX_PAGES = 65536  # 4 GiB, the memory32 limit
SUPPORTED_WASMTIME = ">=50,<51"

# wasmtime_val_raw_t is a 16-byte union; arguments and results share one array of them
_SLOT = 16
_FAST_KINDS = ("i32", "i64", "f32", "f64")


class _TrapHandlers:
    """wasmtime turns a trap (out-of-bounds access, `unreachable`, division by zero) into an error
    from its SIGSEGV/SIGBUS/SIGILL/SIGFPE handlers, installed with the first engine. A handler
    installed over them later turns every trap into a crash of the process: `faulthandler.enable()`
    after pyjax started (a debugging session, a test runner) did exactly that (a pytest worker died
    of SIGSEGV in a trap test). faulthandler is the one Python-level way to do it, and its state
    is cheap to read, so each dispatch compares it with the state at the snapshot and, when it was
    switched on since, puts wasmtime's handlers back (faulthandler's report of a real crash is lost
    then; a trap raising WasmTrap matters more). C libraries that install handlers are not watched.
    """

    SIGNALS = ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE")

    def __init__(self) -> None:
        import faulthandler
        import signal

        self.enabled = faulthandler.is_enabled
        self.was_enabled = faulthandler.is_enabled()
        self.saved: list = []
        try:
            self.sigaction = ctypes.CDLL(None, use_errno=True).sigaction
        except (OSError, AttributeError):  # no POSIX signals (Windows uses exception handlers)
            self.sigaction = None
            return
        for name in self.SIGNALS:
            num = getattr(signal, name, None)
            if num is not None:
                action = ctypes.create_string_buffer(512)  # >= any platform's struct sigaction
                self.sigaction(num, None, action)
                self.saved.append((num, action))

    def keep(self) -> None:
        if self.enabled() is self.was_enabled:
            return
        self.was_enabled = self.enabled()
        if self.was_enabled and self.sigaction is not None:
            for num, action in self.saved:
                self.sigaction(num, action, None)


_trap_handlers: _TrapHandlers | None = None  # wasmtime's handlers, read after its first engine


class WasmTrap(RuntimeError):
    """A Wasm function trapped (out-of-bounds access, unreachable, integer divide by zero, ...)."""

    def __init__(self, function: str, message: str, code: str | None = None):
        super().__init__(f"wasm trap in {function!r}: {message}")
        self.function, self.message, self.code = function, message, code


def _valtype_name(t: Any) -> str:
    return str(t).lower()


class WasmFunction:
    """A callable exported Wasm function. Calls use the unchecked fast path when available."""

    def __init__(
        self, host: WasmtimeHost, func: Any, name: str, fast: bool = True, instance: WasmInstance | None = None
    ):
        self.host, self.func, self.name, self.instance = host, func, name, instance
        self.generation = host.generation
        ty = func.type(host.store)
        self.params = tuple(_valtype_name(t) for t in ty.params)
        self.results = tuple(_valtype_name(t) for t in ty.results)
        self._call = self._make_fast() if fast else None
        if self._call is None:
            self._call = self._slow_call

    @property
    def is_fast(self) -> bool:
        return self._call != self._slow_call

    @property
    def unchecked(self):
        """The raw call (no argument-count check): for a dispatch loop that already knows."""
        return self._call

    def __call__(self, *args: Any) -> Any:
        if len(args) != len(self.params):
            raise TypeError(f"{self.name} takes {len(self.params)} argument(s), got {len(args)}")
        return self._call(*args)

    def _rebind(self) -> None:
        """Point at this function in the host's current store (after the host recycled its store)."""
        if self.instance is None:
            raise RuntimeError(f"{self.name}: made without an instance, so it cannot follow a recycled store")
        self.func = self.instance.current()._exports[self.name]
        self.generation = self.host.generation

    def _slow_call(self, *args: Any) -> Any:
        import wasmtime

        if self.generation != self.host.generation:
            self._rebind()
        try:
            out = self.func(self.host.store, *args)
        except wasmtime.Trap as e:
            code = e.trap_code.name if e.trap_code is not None else None
            raise WasmTrap(self.name, e.message, code) from None
        except wasmtime.WasmtimeError as e:
            raise WasmTrap(self.name, str(e)) from None
        return tuple(out) if isinstance(out, list) else out

    def _make_fast(self):
        """Build a closure that fills a raw-value buffer and calls wasmtime_func_call_unchecked."""
        if not all(t in _FAST_KINDS for t in self.params + self.results):
            return None
        try:
            from wasmtime import _bindings, _ffi

            raw_call = _bindings._wasmtime_func_call_unchecked
            addr = ctypes.cast(raw_call, ctypes.c_void_p).value
            trap_type = ctypes.POINTER(_ffi.wasm_trap_t)
            err_type = ctypes.POINTER(_ffi.wasmtime_error_t)
        except (ImportError, AttributeError, TypeError):
            return None
        # void* args avoid ctypes' per-call pointer type checks; ctypes still releases the GIL
        proto = ctypes.CFUNCTYPE(
            ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p
        )
        cfunc = proto(addr)
        n = max(len(self.params), len(self.results), 1)
        buf = ctypes.create_string_buffer(_SLOT * n)
        views = {
            "i32": (ctypes.c_int32 * (4 * n)).from_buffer(buf),
            "i64": (ctypes.c_int64 * (2 * n)).from_buffer(buf),
            "f32": (ctypes.c_float * (4 * n)).from_buffer(buf),
            "f64": (ctypes.c_double * (2 * n)).from_buffer(buf),
        }
        stride = {"i32": 4, "f32": 4, "i64": 2, "f64": 2}
        # ctypes truncates ints silently, which is Wasm's two's-complement wrap (pointers >= 2 GiB work)
        setters = [(views[t], stride[t] * i) for i, t in enumerate(self.params)]
        getters = [(views[t], stride[t] * i) for i, t in enumerate(self.results)]
        trap = ctypes.c_void_p()
        trap_addr, buf_addr = ctypes.addressof(trap), ctypes.addressof(buf)
        name, host, wf = self.name, self.host, self
        # The store is the host's to keep (not the closure's: a recycled one must be freed), so a
        # call first checks the host's generation and rebinds to the current store if it changed.
        gen = ctx = func_addr = None

        def bind() -> None:
            nonlocal gen, ctx, func_addr
            if wf.generation != host.generation:
                wf._rebind()
            gen = host.generation
            ctx = ctypes.cast(host.store._context(), ctypes.c_void_p).value
            func_addr = ctypes.addressof(wf.func._func)

        try:
            bind()
        except (AttributeError, TypeError):  # wasmtime-py without the private parts used here
            return None

        def fail(err: int | None) -> None:
            import wasmtime

            if trap.value:
                ptr = ctypes.cast(trap.value, trap_type)
                trap.value = None
                t = wasmtime.Trap._from_ptr(ptr)
                code = t.trap_code.name if t.trap_code is not None else None
                raise WasmTrap(name, t.message, code)
            raise WasmTrap(name, str(wasmtime.WasmtimeError._from_ptr(ctypes.cast(err, err_type))))

        def call(*args: Any) -> Any:
            if gen != host.generation:
                bind()
            for (view, i), a in zip(setters, args):
                view[i] = a
            err = cfunc(ctx, func_addr, buf_addr, n, trap_addr)
            if err or trap.value:
                fail(err)
            if not getters:
                return None
            if len(getters) == 1:
                view, i = getters[0]
                return view[i]
            return tuple(view[i] for view, i in getters)

        call._keepalive = (buf, views, cfunc)  # type: ignore[attr-defined]
        return call


class WasmInstance:
    """An instantiated module: exported functions by name."""

    def __init__(self, host: WasmtimeHost, instance: Any, key: str, wasm: bytes | None = None, funcs=None):
        self.host, self.instance, self.key, self.wasm, self.funcs = host, instance, key, wasm, funcs
        self.generation = host.generation
        self._exports = instance.exports(host.store)
        self._funcs: dict[str, WasmFunction] = {}

    def __getitem__(self, name: str) -> WasmFunction:
        return self.function(name)

    def function(self, name: str, fast: bool = True) -> WasmFunction:
        """The export `name` as a callable (cached)."""
        key = name if fast else name + "\0slow"
        f = self._funcs.get(key)
        if f is None:
            f = self._funcs[key] = WasmFunction(self.host, self.current()._exports[name], name, fast, self)
        return f

    def current(self) -> WasmInstance:
        """This module's instance in the host's current store (itself unless the store was recycled)."""
        if self.generation == self.host.generation:
            return self
        if self.wasm is None:
            raise RuntimeError("an instance not made by load() does not survive a recycled store")
        if self.funcs is not None:
            return self.host.link(self.wasm, self.funcs)
        return self.host.load(self.wasm)

    def names(self) -> list[str]:
        return [name for name, _ in self._exports.items()]


class WasmtimeHost:
    """One wasmtime Engine/Store with one linear memory shared by every module.

    pages/max_pages size the memory in 64 KiB pages (max 65536 = 4 GiB). `cache_dir`, if given,
    keeps compiled modules on disk (Module.serialize) across processes; use only a directory you
    own, since deserializing is trusted code loading.
    """

    engine = "cranelift"  # compiles modules to machine code (the wasm backend tunes its matmul tile to it)

    def __init__(
        self, pages: int = 16, max_pages: int = MAX_PAGES, cache_dir: str | None = None, max_modules: int = 2048
    ):
        import wasmtime

        cfg = wasmtime.Config()
        cfg.wasm_simd = True
        cfg.wasm_relaxed_simd = True
        cfg.wasm_multi_value = True
        cfg.wasm_bulk_memory = True
        self.wasm_engine = wasmtime.Engine(cfg)  # (`engine` names the compiler)
        global _trap_handlers
        if _trap_handlers is None:
            _trap_handlers = _TrapHandlers()
        self.keep_trap_handlers = _trap_handlers.keep
        self.max_pages = max_pages
        self.max_modules = max_modules
        self.cache_dir = cache_dir
        self.generation = 0  # bumped when the store is recycled
        self.store = wasmtime.Store(self.wasm_engine)
        self.memory = self._new_memory(pages)
        self._mem = (None,)  # (memory, its size, its address) while unchanged (see _base)
        self._modules: dict[str, Any] = {}
        self._instances: dict[str, WasmInstance] = {}
        self._links = 0  # instances made by link() in this store (they count toward max_modules)

    def _new_memory(self, pages: int) -> Any:
        import wasmtime

        return wasmtime.Memory(self.store, wasmtime.MemoryType(wasmtime.Limits(pages, self.max_pages)))

    def recycle(self) -> None:
        """Move to a fresh store and memory (same bytes at the same addresses), freeing every
        module not in use; functions handed out earlier rebind on their next call."""
        import wasmtime

        old_store, old_memory = self.store, self.memory
        size = old_memory.data_len(old_store)
        self.store = wasmtime.Store(self.wasm_engine)
        self.memory = self._new_memory(old_memory.size(old_store))
        ctypes.memmove(
            ctypes.addressof(self.memory.data_ptr(self.store).contents),
            ctypes.addressof(old_memory.data_ptr(old_store).contents),
            size,
        )
        self._modules.clear()
        self._instances.clear()
        self._links = 0
        self.generation += 1

    # -- modules

    @staticmethod
    def key(wasm: bytes) -> str:
        return hashlib.sha256(wasm).hexdigest()

    def compile(self, wasm: bytes) -> Any:
        """Compile (or fetch from cache) a module; raises ValueError for an invalid module."""
        import wasmtime

        key = self.key(wasm)
        mod = self._modules.get(key)
        if mod is not None:
            return mod
        path = os.path.join(self.cache_dir, key + ".cwasm") if self.cache_dir else None
        if path and os.path.exists(path):
            try:
                with open(path, "rb") as fh:
                    mod = wasmtime.Module.deserialize(self.wasm_engine, fh.read())
            except wasmtime.WasmtimeError:
                mod = None  # stale cache (other wasmtime version): recompile
        if mod is None:
            try:
                mod = wasmtime.Module(self.wasm_engine, wasm)
            except wasmtime.WasmtimeError as e:
                if "os error 12" in str(e):  # ENOMEM: out of memory or of mappings, not a bad module
                    raise MemoryError(f"cannot compile a wasm module: {e}") from None
                raise ValueError(f"invalid wasm module: {e}") from None
            if path:
                os.makedirs(self.cache_dir, exist_ok=True)
                tmp = path + f".{os.getpid()}.tmp"
                with open(tmp, "wb") as fh:
                    fh.write(mod.serialize())
                os.replace(tmp, path)
        self._modules[key] = mod
        return mod

    def instantiate(self, module: Any, key: str = "", wasm: bytes | None = None, funcs=None) -> WasmInstance:
        """Instantiate a compiled module, giving it the shared memory for its `env.memory` import
        and funcs[name] for its `k.<name>` imports (`wasm`, its bytes, lets its functions follow
        the host to a recycled store)."""
        import wasmtime

        imports = []
        for imp in module.imports:
            if imp.module == "env" and imp.name == "memory":
                imports.append(self.memory)
            elif imp.module == "k" and funcs is not None and imp.name in funcs:
                wf = funcs[imp.name]
                if wf.generation != self.generation:
                    wf._rebind()
                imports.append(wf.func)
            else:
                raise ValueError(f"unsupported import {imp.module}.{imp.name}")
        try:
            inst = wasmtime.Instance(self.store, module, imports)
        except wasmtime.Trap as e:
            raise WasmTrap("<start>", e.message) from None
        except wasmtime.WasmtimeError as e:
            raise ValueError(f"cannot instantiate module: {e}") from None
        return WasmInstance(self, inst, key, wasm, funcs)

    def link(self, wasm: bytes, funcs: dict) -> WasmInstance:
        """Instantiate a module that imports other modules' functions (`k.<name>` -> funcs[name],
        WasmFunctions from load()), as a driver calling kernels does; not cached."""
        if len(self._instances) + self._links >= self.max_modules:
            self.recycle()
        self._links += 1
        return self.instantiate(self.compile(wasm), self.key(wasm), wasm, funcs)

    def load(self, wasm: bytes) -> WasmInstance:
        """Compile and instantiate once per distinct module bytes (modules keep no state here)."""
        key = self.key(wasm)
        inst = self._instances.get(key)
        if inst is None:
            if len(self._instances) + self._links >= self.max_modules:
                self.recycle()
            inst = self._instances[key] = self.instantiate(self.compile(wasm), key, wasm)
        return inst

    def call(self, instance: WasmInstance, name: str, *args: Any) -> Any:
        return instance.function(name)(*args)

    # -- memory

    @property
    def pages(self) -> int:
        return self.memory.size(self.store)

    @property
    def nbytes(self) -> int:
        return self.memory.data_len(self.store)

    def grow(self, pages: int) -> int:
        """Grow the memory by `pages`; return the old size in pages. Raises MemoryError on failure."""
        import wasmtime

        if pages < 0 or self.pages + pages > self.max_pages:
            raise MemoryError(f"cannot grow wasm memory by {pages} pages (now {self.pages}, max {self.max_pages})")
        self._mem = (None,)
        try:
            return self.memory.grow(self.store, pages)
        except wasmtime.WasmtimeError as e:
            raise MemoryError(f"cannot grow wasm memory by {pages} pages: {e}") from None

    def _base(self, ptr: int, nbytes: int) -> int:
        # (memory, size, address) asked of wasmtime once, not per read or write (its two C calls
        # cost more than a small write): grow() and a new memory reset it, and a range past the
        # known size asks again (a module may grow the memory itself; the 64-bit engine reserves
        # the whole 4 GiB up front, so growing never moves it)
        mem = self._mem
        if mem[0] is not self.memory or ptr + nbytes > mem[1]:
            size = self.memory.data_len(self.store)
            mem = self._mem = (self.memory, size, ctypes.addressof(self.memory.data_ptr(self.store).contents))
        size = mem[1]
        if ptr < 0 or nbytes < 0 or ptr + nbytes > size:
            raise IndexError(f"range [{ptr}, {ptr + nbytes}) outside wasm memory of {size} bytes")
        return mem[2]

    def read(self, ptr: int, nbytes: int) -> bytes:
        """Copy `nbytes` at `ptr` out of linear memory."""
        # (string_at takes a C int size: it fails for reads of 2 GiB and more)
        return bytes((ctypes.c_char * nbytes).from_address(self._base(ptr, nbytes) + ptr))

    def write(self, ptr: int, data: Any) -> None:
        """Copy a bytes-like object (bytes, bytearray, memoryview, C-contiguous array) to `ptr`."""
        if not isinstance(data, bytes):
            mv = memoryview(data)
            if not mv.c_contiguous:
                raise ValueError("write needs a C-contiguous buffer")
            mv = mv.cast("B")
            data = mv.tobytes() if mv.readonly else (ctypes.c_char * mv.nbytes).from_buffer(mv)
        n = len(data) if isinstance(data, bytes) else ctypes.sizeof(data)
        ctypes.memmove(self._base(ptr, n) + ptr, data, n)

    def view(self, dtype: Any = "uint8", ptr: int = 0, count: int = -1) -> Any:
        """Zero-copy numpy view of linear memory (needs numpy). Invalid after `grow`: re-create it."""
        import numpy as np

        dt = np.dtype(dtype)
        size = self.memory.data_len(self.store)
        if count < 0:
            count = (size - ptr) // dt.itemsize
        base = self._base(ptr, count * dt.itemsize)
        raw = (ctypes.c_ubyte * size).from_address(base)
        return np.frombuffer(raw, dtype=dt, count=count, offset=ptr)
