"""Browser hosts (Pyodide): the page's WebAssembly and navigator.gpu, through the JavaScript in shims/.

The wheel carries that JavaScript (shims/*.js, package data) and evaluates it itself the first
time a browser backend starts (`js_shims`), so `micropip.install(wheel)` + `import pyjax` is the
whole set-up in any Pyodide page or Web Worker; nothing needs registering by the page. It is
evaluated synchronously (`pyodide.code.run_js`) so that a sync `pyjax.devices("wasm")` works, and
the wasm thread pool's workers start from a Blob URL of their source, so no file is fetched and
the page needs no particular layout. These classes mirror the native hosts (WasmtimeHost,
WgpuHost) method for method, so the wasm and webgpu backends run unchanged. FFI crossings stay
coarse: one call per kernel (wasm) or per dispatch batch (webgpu); bytes move as typed-array
copies; no Python object is handed to JS (so no PyProxy can leak).

WebGPU start-up and readback are asynchronous in the browser. `await pyjax.init_async("webgpu")`
and `read_async` await them; the synchronous `read` uses JSPI (`pyodide.ffi.run_sync`) when the
caller runs under `runPythonAsync` or `callPromising` (Chromium has JSPI), and otherwise raises
an error saying what to await instead.
"""

from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Sequence
from pathlib import Path
from typing import Any

PAGE_SIZE = 65536


_SHIMS = Path(__file__).with_name("shims")
_shims = None


def js_shims():
    """The JavaScript side of the browser hosts: an object with WasmManager, WebGPUManager,
    prestartWorkers, threadsAvailable and defaultThreads, evaluated once per interpreter from
    shims/*.js in one function scope. WORKER_SOURCE, the wasm pool worker's script, is
    wasm-threads.js (shared with the caller) followed by wasm-worker.js."""
    global _shims
    if _shims is None:
        from pyodide.code import run_js

        src = {
            name: (_SHIMS / name).read_text() for name in ("wasm-threads.js", "wasm-worker.js", "wasm.js", "webgpu.js")
        }
        worker = json.dumps(src["wasm-threads.js"] + src["wasm-worker.js"])
        _shims = run_js(
            f"""(() => {{
"use strict";
const WORKER_SOURCE = {worker};
{src["wasm-threads.js"]}
{src["wasm.js"]}
{src["webgpu.js"]}
return {{ WasmManager, WebGPUManager, prestartWorkers, threadsAvailable, defaultThreads }};
}})()"""
        )
    return _shims


def _to_js_bytes(data) -> Any:
    from pyodide.ffi import to_js

    mv = memoryview(data).cast("B")
    return to_js(mv)


def run_sync_or_explain(awaitable, what: str):
    """Block on a JS promise through JSPI, or raise a clear error when JSPI cannot be used here."""
    from pyodide.ffi import can_run_sync, run_sync

    if can_run_sync():
        return run_sync(awaitable)
    if hasattr(awaitable, "close"):
        awaitable.close()  # a coroutine never awaited
    raise RuntimeError(
        f"{what} has to wait for the browser (WebGPU answers asynchronously), and this code cannot block: "
        "blocking needs JSPI (Chromium) and code run by pyodide.runPythonAsync (or a function called with "
        "callPromising), not runPython. Await instead: `await pyjax.init_async('webgpu')` to start the device, "
        "`await x.block_until_ready_async()`, `await x.tolist_async()` or `await pyjax.device_get_async(x)` "
        "to read results."
    )


class WasmTrap(RuntimeError):
    def __init__(self, function: str, message: str, code: str | None = None):
        super().__init__(f"wasm trap in {function!r}: {message}")
        self.function, self.message, self.code = function, message, code


_VALTYPES = {0x7F: "i32", 0x7E: "i64", 0x7D: "f32", 0x7C: "f64", 0x7B: "v128"}


def export_signatures(wasm: bytes) -> dict:
    """name -> (params, results) of each exported function, read from the module's type, import,
    function and export sections (a driver module imports kernels by these types)."""
    mv, p = memoryview(wasm), 8

    def uleb() -> int:
        nonlocal p
        v = shift = 0
        while True:
            b = mv[p]
            p += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                return v

    def name() -> str:
        nonlocal p
        n = uleb()
        p += n
        return bytes(mv[p - n : p]).decode()

    def limits() -> None:
        flags = uleb()
        uleb()
        if flags & 1:
            uleb()

    types: list = []
    funcs: list = []  # type index of each function, imported ones first
    out: dict = {}
    while p < len(mv):
        sid = mv[p]
        p += 1
        end = uleb()
        end += p
        if sid == 1:
            for _ in range(uleb()):
                p += 1  # 0x60
                params = tuple(_VALTYPES[mv[p + k]] for k in range(uleb()))
                p += len(params)
                results = tuple(_VALTYPES[mv[p + k]] for k in range(uleb()))
                p += len(results)
                types.append((params, results))
        elif sid == 2:
            for _ in range(uleb()):
                name(), name()
                kind = mv[p]
                p += 1
                if kind == 0:
                    funcs.append(uleb())
                elif kind == 1:
                    p += 1
                    limits()
                elif kind == 2:
                    limits()
                else:  # a global: valtype, mutability
                    p += 2
        elif sid == 3:
            funcs += [uleb() for _ in range(uleb())]
        elif sid == 7:
            for _ in range(uleb()):
                n = name()
                kind = mv[p]
                p += 1
                index = uleb()
                if kind == 0:
                    out[n] = types[funcs[index]]
            return out
        p = end
    return out


class BrowserWasmFunction:
    """An exported function of an instance; calling it crosses the FFI once. `params`/`results`
    (its wasm types) and `instance`/`export` let a driver module import it (BrowserWasmHost.link)."""

    def __init__(self, fn, name: str, instance: int = -1, signature: tuple = ((), ())):
        self._fn, self.name, self.instance, self.export = fn, name, instance, name
        self.params, self.results = signature
        self.is_fast = True

    def __call__(self, *args):
        try:
            return self._fn(*args)
        except Exception as e:  # (the import only when something went wrong: not per call)
            from pyodide.ffi import JsException

            if isinstance(e, JsException):
                raise WasmTrap(self.name, str(e)) from None
            raise

    unchecked = __call__


class BrowserWasmInstance:
    def __init__(self, host: BrowserWasmHost, index: int, key: str, module: str = ""):
        self.host, self.index, self.key, self.module = host, index, key, module or key
        self._funcs: dict = {}

    def function(self, name: str, fast: bool = True) -> BrowserWasmFunction:
        f = self._funcs.get(name)
        if f is None:
            sig = self.host._signatures.get(self.module, {}).get(name, ((), ()))
            f = BrowserWasmFunction(self.host.mgr.getExport(self.index, name), name, self.index, sig)
            self._funcs[name] = f
        return f

    def __getitem__(self, name: str) -> BrowserWasmFunction:
        return self.function(name)

    def names(self) -> list[str]:
        return list(self.host.mgr.exportNames(self.index).to_py())


class BrowserSplitFunction:
    """A kernel's `run` export whose calls the shim may split over its worker threads; a driver
    module imports it as the shim's split call of job `job` (BrowserWasmHost.link)."""

    def __init__(self, run_split, job: int, name: str, signature: tuple = ((), ())):
        self._run, self._job, self.name = run_split, job, name
        self.params, self.results = signature
        self.is_fast = True

    def __call__(self, *args):
        try:
            return self._run(self._job, *args)
        except Exception as e:  # (the import only when something went wrong: not per call)
            from pyodide.ffi import JsException

            if isinstance(e, JsException):
                raise WasmTrap(self.name, str(e)) from None
            raise

    unchecked = __call__


class BrowserWasmHost:
    """WasmtimeHost's interface over the page's WebAssembly API (one linear memory).

    `threads` (default: the PYJAX_WASM_THREADS environment variable, else what
    `loadPyjax({wasmThreads})` set, else min(navigator.hardwareConcurrency, 8) where the page is
    cross-origin isolated and 1 elsewhere) > 1 makes the memory a shared one with a pool of worker
    threads; `self.threads` is the count in effect (1 without threads). The wasm backend then
    registers big kernels through `split_function`, whose calls run their [lo, hi) range in
    chunks on every thread. Workers start once the caller returns to the event loop: `await
    start_async()` (which `pyjax.init_async("wasm")` does) waits until they run; a sync start
    works too, with workers joining the calls once they are up.
    """

    engine = "v8"  # compiles modules to machine code (the wasm backend tunes its matmul tile to it)

    def __init__(self, pages: int = 16, max_pages: int = 65536, threads: int | None = None):
        import os

        if threads is None:
            threads = int(os.environ.get("PYJAX_WASM_THREADS", "0") or 0)
        self.mgr = js_shims().WasmManager.new()
        self.mgr.init(pages, max_pages, threads)
        self.max_pages = max_pages
        self.threads = int(self.mgr.threads)
        self._instances: dict = {}
        self._signatures: dict = {}  # module key -> export_signatures
        self.links = 0  # modules instantiated by link() (driver modules)
        self._run_split = self.mgr.runSplit if self.threads > 1 else None

    def keep_trap_handlers(self) -> None:
        """Nothing to keep: the browser's engine owns its trap handling (see WasmtimeHost)."""

    async def start_async(self) -> int:
        """Start the worker pool and wait until its workers run (at most 10 s); returns how many do."""
        return int(await self.mgr.ready())

    @staticmethod
    def key(wasm: bytes) -> str:
        return hashlib.sha256(wasm).hexdigest()

    def validate(self, wasm: bytes) -> bool:
        return bool(self.mgr.validate(_to_js_bytes(wasm)))

    def compile(self, wasm: bytes) -> str:
        from pyodide.ffi import JsException

        key = self.key(wasm)
        try:
            self.mgr.compile(key, _to_js_bytes(wasm))
        except JsException as e:
            raise ValueError(f"invalid wasm module: {e}") from None
        if key not in self._signatures:
            self._signatures[key] = export_signatures(wasm)
        return key

    def instantiate(self, module: str, key: str = "") -> BrowserWasmInstance:
        return BrowserWasmInstance(self, self.mgr.instantiate(module), key or module, module)

    def link(self, wasm: bytes, funcs: dict) -> BrowserWasmInstance:
        """Instantiate a module that imports other modules' functions (`k.<name>` -> funcs[name],
        functions from load() or split_function()), as a driver calling kernels does: the page's
        WebAssembly calls them directly (split ones through the shim's thread pool), so the
        driver's loops never come back to Python. Not cached (the caller keeps the instance)."""
        from pyodide.ffi import JsException, to_js

        names = list(funcs)
        # an instance's export, or -1 - job for a split call
        refs = [f.instance if isinstance(f, BrowserWasmFunction) else -1 - f._job for f in funcs.values()]
        exports = [getattr(f, "export", "run") for f in funcs.values()]
        module = self.compile(wasm)
        try:
            index = self.mgr.link(module, to_js(names), to_js(refs), to_js(exports))
        except JsException as e:
            raise ValueError(f"cannot instantiate module: {e}") from None
        self.links += 1
        return BrowserWasmInstance(self, index, module, module)

    def load(self, wasm: bytes) -> BrowserWasmInstance:
        key = self.key(wasm)
        inst = self._instances.get(key)
        if inst is None:
            inst = self._instances[key] = self.instantiate(self.compile(wasm), key)
        return inst

    def call(self, instance: BrowserWasmInstance, name: str, *args):
        return instance.function(name)(*args)

    def split_function(
        self,
        instance: BrowserWasmInstance,
        name: str,
        lo_arg: int,
        align: int = 1,
        min_rows: int = 1,
        scratch_arg: int = -1,
        scratch_stride: int = 0,
    ):
        """`name` of `instance` (a kernel `run(..., lo, hi, ...)` with lo at argument `lo_arg`)
        as a function whose calls split [lo, hi) over the threads in chunks of at least
        `min_rows` rows (a multiple of `align`). Thread t gets the scratch pointer argument
        `scratch_arg` (-1: none) plus t * `scratch_stride` bytes. Single-threaded: the plain export."""
        if self._run_split is None:
            return instance.function(name)
        job = int(self.mgr.splitKernel(instance.index, name, lo_arg, align, min_rows, scratch_arg, scratch_stride))
        f = instance.function(name)
        return BrowserSplitFunction(self._run_split, job, name, (f.params, f.results))

    def thread_stats(self) -> dict:
        """threads, shared (memory), workers (started), chunks (run per thread, caller first)."""
        return self.mgr.threadStats().to_py()

    @property
    def pages(self) -> int:
        return int(self.mgr.pages())

    @property
    def nbytes(self) -> int:
        return self.pages * PAGE_SIZE

    def grow(self, pages: int) -> int:
        if pages < 0 or self.pages + pages > self.max_pages:
            raise MemoryError(f"cannot grow wasm memory by {pages} pages (now {self.pages}, max {self.max_pages})")
        old = int(self.mgr.grow(pages))
        if old < 0:
            raise MemoryError(f"cannot grow wasm memory by {pages} pages: the browser refused")
        return old

    def read(self, ptr: int, nbytes: int) -> bytes:
        return self.mgr.read(ptr, nbytes).to_bytes()

    def write(self, ptr: int, data) -> None:
        self.mgr.write(ptr, _to_js_bytes(data))

    def view(self, dtype: Any = "uint8", ptr: int = 0, count: int = -1):
        raise NotImplementedError("zero-copy views of wasm memory need numpy, which the browser lacks")


def _check_navigator_gpu() -> None:
    """A clear error, at once, where the browser has no WebGPU (no waiting on a missing adapter)."""
    import js

    if not getattr(js.navigator, "gpu", None):
        raise RuntimeError(
            "WebGPU is not available in this browser (navigator.gpu is missing; it needs a secure context "
            "and a browser with WebGPU): use pyjax.devices('wasm') instead"
        )


def _device_lost(e: Exception, what: str) -> Exception | None:
    """The shim's 'DeviceLost: reason' error as DeviceLostError saying what to do, else None."""
    msg = str(e)
    if "DeviceLost: " not in msg:
        return None
    from pyjax.hosts.webgpu_contract import DeviceLostError

    return DeviceLostError(
        f"{what}: the GPU device was lost ({msg.split('DeviceLost: ', 1)[1]}); its arrays are gone. "
        "Call `await pyjax.init_async('webgpu')` for a new device, or compute on wasm."
    )


def _lost_guard(what: str):
    """Decorator: a lost device surfaces as DeviceLostError from sync and async methods alike."""
    import functools
    import inspect

    def wrap(fn):
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args, **kwargs):
                try:
                    return await fn(*args, **kwargs)
                except Exception as e:
                    if (lost := _device_lost(e, what)) is not None:
                        raise lost from None
                    raise

            return run_async

        @functools.wraps(fn)
        def run(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except Exception as e:
                if (lost := _device_lost(e, what)) is not None:
                    raise lost from None
                raise

        return run

    return wrap


class BrowserWebGPUHost:
    """WgpuHost's interface over navigator.gpu. Create it with `await BrowserWebGPUHost.create()`."""

    def __init__(self, mgr, info: dict):
        self.mgr = mgr
        self.has_f16 = bool(info.get("hasF16"))
        self.features = tuple(info.get("features", ()))
        self.limits = dict(info.get("limits", {}))
        self.adapter_info = {"device": info.get("adapter", "?"), "fallback": info.get("isFallbackAdapter")}
        self._ualign = int(self.limits.get("minUniformBufferOffsetAlignment", 256))
        self._max_wg = int(self.limits.get("maxComputeWorkgroupsPerDimension", 65535))
        self._pipeline_bindings: dict = {}
        self.generation = 0
        self.stats = {"dispatches": 0, "submits": 0}
        self._recorded: dict = {}  # recording -> (steps, buffer positions)

    @property
    def lost(self) -> bool:
        """Whether the GPU device was lost (its buffers are gone; create a new host)."""
        return bool(self.mgr.lost)

    @classmethod
    async def create(cls, adapter_limits: bool = False) -> BrowserWebGPUHost:
        from pyodide.ffi import to_js

        _check_navigator_gpu()
        mgr = js_shims().WebGPUManager.new()
        opts = to_js({"adapterLimits": adapter_limits}, dict_converter=_js_object)
        info = await mgr.init(opts)
        return cls(mgr, info.to_py())

    @classmethod
    def create_sync(cls, adapter_limits: bool = False) -> BrowserWebGPUHost:
        _check_navigator_gpu()
        return run_sync_or_explain(cls.create(adapter_limits), "Initializing WebGPU")

    # --- buffers ---
    @_lost_guard("create_buffer")
    def create_buffer(self, nbytes: int) -> int:
        return int(self.mgr.createBuffer(nbytes))

    def release_buffer(self, h: int) -> None:
        self.mgr.releaseBuffer(h)

    def buffer_size(self, h: int) -> int:
        return int(self.mgr.bufferSize(h))

    def live_buffers(self) -> int:
        return int(self.mgr.liveBuffers())

    def memory_stats(self) -> dict:
        """GPU memory the shim holds: live, pooled and total buffers/bytes, pipelines."""
        return self.mgr.memoryStats().to_py()

    @_lost_guard("write")
    def write(self, h: int, data, offset: int = 0) -> None:
        self.mgr.write(h, _to_js_bytes(data), offset)

    @_lost_guard("copy")
    def copy(self, src: int, dst: int, nbytes: int | None = None, src_offset: int = 0, dst_offset: int = 0) -> None:
        if nbytes is None:
            nbytes = self.buffer_size(src) - src_offset
        self.mgr.copy(src, dst, nbytes, src_offset, dst_offset)

    @_lost_guard("read")
    async def read_async(self, h: int, nbytes: int | None = None, offset: int = 0) -> bytes:
        if nbytes is None:
            nbytes = self.buffer_size(h) - offset
        return (await self.mgr.read(h, nbytes, offset)).to_bytes()

    def read(self, h: int, nbytes: int | None = None, offset: int = 0) -> bytes:
        return run_sync_or_explain(self.read_async(h, nbytes, offset), "Reading a WebGPU array back")

    def sync(self) -> None:
        run_sync_or_explain(self.sync_async(), "Synchronizing with the GPU")

    @_lost_guard("sync")
    async def sync_async(self) -> None:
        await self.mgr.sync()

    # --- pipelines and dispatch ---
    def pipeline(
        self, wgsl: str, entry: str = "main", writable: Sequence[bool] | None = None, has_uniform: bool = False
    ) -> int:
        from pyodide.ffi import JsException, can_run_sync, run_sync, to_js

        from pyjax.hosts.webgpu_contract import parse_bindings

        if writable is None:
            parsed = parse_bindings(wgsl)
            if parsed is None:
                raise ValueError("WGSL outside the binding convention needs explicit flags (writable=...)")
            writable, has_uniform = parsed
        flags = to_js([bool(w) for w in writable])
        try:
            if can_run_sync():  # wait for the compiler's verdict: WGSL errors raise here
                h = int(run_sync(self.mgr.pipeline(wgsl, entry, flags, bool(has_uniform))))
            else:  # cannot wait: errors surface from a later call (the next read at the latest)
                h = int(self.mgr.pipelineNow(wgsl, entry, flags, bool(has_uniform)))
        except JsException as e:
            from pyjax.hosts.webgpu_contract import WGSLCompileError

            raise (_device_lost(e, "pipeline") or WGSLCompileError(str(e), wgsl, entry)) from None
        self._pipeline_bindings[h] = (tuple(bool(w) for w in writable), bool(has_uniform))
        return h

    def pipeline_bindings(self, p: int):
        return self._pipeline_bindings[p]

    def max_workgroups(self) -> int:
        return self._max_wg

    def _grid(self, grid, where) -> list[int]:
        """A step's grid as the shim's (x, y, z); an indirect one as (-1, where(buffer), offset)."""
        from pyjax.hosts.webgpu_contract import grid_2d

        if isinstance(grid, int):
            return list(grid_2d(grid, self._max_wg))
        if grid[0] == "indirect":  # counts an earlier step wrote into that buffer
            return [-1, where(grid[1]), grid[2] if len(grid) > 2 else 0]
        return list((tuple(grid) + (1, 1))[:3])

    @_lost_guard("record")
    def record(self, steps, nbuffers: int) -> int:
        """Validate and pack steps once for replaying (as WgpuHost.record): their buffers are
        positions 0..nbuffers-1 of the handles a ``Replay`` gives. The shim keeps the packed steps,
        writes their uniforms once into a buffer of the recording's own and caches its bind groups
        (rebuilding only those whose buffers changed), so a replay crosses the FFI as its handles."""
        from pyodide.ffi import to_js

        from pyjax.hosts.webgpu_contract import append_uniforms, check_recorded_step

        ints: list[int] = []
        blob = bytearray()
        for i, (p, refs, uniforms, grid) in enumerate(steps):
            check_recorded_step(i, p, refs, uniforms, self._pipeline_bindings[p], nbuffers)
            if not isinstance(grid, int) and grid[0] == "indirect" and not 0 <= grid[1] < nbuffers:
                raise ValueError(f"step {i}: indirect grid position {grid[1]} outside 0..{nbuffers - 1}")
            uoff, usize = append_uniforms(blob, uniforms, self._ualign)
            ints += [p, len(refs), *refs, uoff, usize, *self._grid(grid, int)]
        steps_js = to_js(memoryview(struct.pack(f"<{len(ints)}i", *ints)).cast("i"))
        r = int(self.mgr.record(steps_js, to_js(memoryview(bytes(blob))), nbuffers))
        self._recorded[r] = (len(steps), nbuffers)
        return r

    def release_recording(self, r: int) -> None:
        """Forget a recording (its uniform buffer and bind groups go with it)."""
        if self._recorded.pop(r, None) is not None:
            self.mgr.releaseRecording(r)

    @_lost_guard("dispatch")
    def dispatch(self, steps) -> None:
        """steps: (pipeline, buffers, uniforms bytes or None, grid) each, or a Replay of a
        recording; one encoder, one submit, one crossing."""
        from pyodide.ffi import to_js

        from pyjax.hosts.webgpu_contract import Replay, append_uniforms

        ints: list[int] = []
        blob = bytearray()
        count = 0
        for s in steps:
            if type(s) is Replay:  # [-1 - recording, nbuf, handles...]
                n, nbuf = self._recorded[s.recording]
                if len(s.buffers) != nbuf:
                    raise ValueError(f"replay of recording {s.recording} gives {len(s.buffers)} buffers, needs {nbuf}")
                ints += [-1 - s.recording, nbuf, *s.buffers]
                count += n
                continue
            pipeline, buffers, uniforms, grid = tuple(s)
            uoff, usize = append_uniforms(blob, uniforms, self._ualign)
            ints += [pipeline, len(buffers), *buffers, uoff, usize, *self._grid(grid, lambda h: h)]
            count += 1
        steps_js = to_js(memoryview(struct.pack(f"<{len(ints)}i", *ints)).cast("i"))
        self.mgr.dispatch(steps_js, to_js(memoryview(bytes(blob))))
        self.stats["submits"] += 1
        self.stats["dispatches"] += count


def proxy_counts() -> dict:
    """Pyodide's FFI bookkeeping: live JS references held by Python (`js_refs`) and, once
    `pyodide._module.enable_pyproxy_allocation_tracing()` ran, live PyProxies (`pyproxies`)."""
    import pyodide_js

    m = pyodide_js._module
    return {"js_refs": int(m._hiwire_num_refs()), "pyproxies": int(m.pyproxy_alloc_map.size)}


def _js_object(items):
    import js

    return js.Object.fromEntries(items)
