"""Browser hosts (Pyodide): the page's WebAssembly and navigator.gpu, through shims/*.mjs.

The shims are registered by web/pyjax.mjs as the JS module `pyjax_shims`. These classes mirror
the native hosts (WasmtimeHost, WgpuHost) method for method, so the wasm and webgpu backends
run unchanged. FFI crossings stay coarse: one call per kernel (wasm) or per dispatch batch
(webgpu); bytes move as typed-array copies; no Python object is handed to JS (so no PyProxy can leak).

WebGPU readback is asynchronous in the browser. `read_async` awaits it; the synchronous `read`
uses JSPI (`pyodide.ffi.run_sync`) when the caller runs under `runPythonAsync` or
`callPromising` (Chromium has JSPI), and otherwise raises an error saying how to call it.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from typing import Any

PAGE_SIZE = 65536


def _js():
    import js  # noqa: F401  (Pyodide only)
    import pyjax_shims

    return pyjax_shims


def _to_js_bytes(data) -> Any:
    from pyodide.ffi import to_js

    mv = memoryview(data).cast("B")
    return to_js(mv)


def run_sync_or_explain(awaitable, what: str):
    """Block on a JS promise through JSPI, or raise a clear error when JSPI cannot be used here."""
    from pyodide.ffi import can_run_sync, run_sync

    if can_run_sync():
        return run_sync(awaitable)
    raise RuntimeError(
        f"{what} needs to wait for the GPU, which the browser only allows asynchronously. Run this code with "
        "pyodide.runPythonAsync (or a function called with callPromising) so pyjax can wait through JSPI, "
        "or use the async API: `await x.block_until_ready_async()` / `await pyjax.device_get_async(x)`."
    )


class WasmTrap(RuntimeError):
    def __init__(self, function: str, message: str, code: str | None = None):
        super().__init__(f"wasm trap in {function!r}: {message}")
        self.function, self.message, self.code = function, message, code


class BrowserWasmFunction:
    """An exported function of an instance; calling it crosses the FFI once."""

    def __init__(self, fn, name: str):
        self._fn, self.name = fn, name
        self.is_fast = True

    def __call__(self, *args):
        from pyodide.ffi import JsException

        try:
            return self._fn(*args)
        except JsException as e:
            raise WasmTrap(self.name, str(e)) from None

    unchecked = __call__


class BrowserWasmInstance:
    def __init__(self, host: BrowserWasmHost, index: int, key: str):
        self.host, self.index, self.key = host, index, key
        self._funcs: dict = {}

    def function(self, name: str, fast: bool = True) -> BrowserWasmFunction:
        f = self._funcs.get(name)
        if f is None:
            f = self._funcs[name] = BrowserWasmFunction(self.host.mgr.getExport(self.index, name), name)
        return f

    def __getitem__(self, name: str) -> BrowserWasmFunction:
        return self.function(name)

    def names(self) -> list[str]:
        return list(self.host.mgr.exportNames(self.index).to_py())


class BrowserWasmHost:
    """WasmtimeHost's interface over the page's WebAssembly API (one shared memory)."""

    def __init__(self, pages: int = 16, max_pages: int = 65536):
        self.mgr = _js().WasmManager.new()
        self.mgr.init(pages, max_pages)
        self.max_pages = max_pages
        self._instances: dict = {}

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
        return key

    def instantiate(self, module: str, key: str = "") -> BrowserWasmInstance:
        return BrowserWasmInstance(self, self.mgr.instantiate(module), key or module)

    def load(self, wasm: bytes) -> BrowserWasmInstance:
        key = self.key(wasm)
        inst = self._instances.get(key)
        if inst is None:
            inst = self._instances[key] = self.instantiate(self.compile(wasm), key)
        return inst

    def call(self, instance: BrowserWasmInstance, name: str, *args):
        return instance.function(name)(*args)

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

    @classmethod
    async def create(cls, adapter_limits: bool = False) -> BrowserWebGPUHost:
        from pyodide.ffi import to_js

        mgr = _js().WebGPUManager.new()
        opts = to_js({"adapterLimits": adapter_limits}, dict_converter=_js_object)
        info = await mgr.init(opts)
        return cls(mgr, info.to_py())

    @classmethod
    def create_sync(cls, adapter_limits: bool = False) -> BrowserWebGPUHost:
        return run_sync_or_explain(cls.create(adapter_limits), "Initializing WebGPU")

    # --- buffers ---
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

    def write(self, h: int, data, offset: int = 0) -> None:
        self.mgr.write(h, _to_js_bytes(data), offset)

    def copy(self, src: int, dst: int, nbytes: int | None = None, src_offset: int = 0, dst_offset: int = 0) -> None:
        if nbytes is None:
            nbytes = self.buffer_size(src) - src_offset
        self.mgr.copy(src, dst, nbytes, src_offset, dst_offset)

    async def read_async(self, h: int, nbytes: int | None = None, offset: int = 0) -> bytes:
        if nbytes is None:
            nbytes = self.buffer_size(h) - offset
        return (await self.mgr.read(h, nbytes, offset)).to_bytes()

    def read(self, h: int, nbytes: int | None = None, offset: int = 0) -> bytes:
        return run_sync_or_explain(self.read_async(h, nbytes, offset), "Reading a WebGPU array back")

    def sync(self) -> None:
        run_sync_or_explain(self.mgr.sync(), "Waiting for the GPU")

    async def sync_async(self) -> None:
        await self.mgr.sync()

    # --- pipelines and dispatch ---
    def pipeline(
        self, wgsl: str, entry: str = "main", writable: Sequence[bool] | None = None, has_uniform: bool = False
    ) -> int:
        from pyodide.ffi import JsException, to_js

        from pyjax.hosts.wgpu_host import _parse_bindings

        if writable is None:
            parsed = _parse_bindings(wgsl)
            if parsed is None:
                raise ValueError("WGSL outside the binding convention needs explicit flags (writable=...)")
            writable, has_uniform = parsed
        flags = to_js([bool(w) for w in writable])
        try:
            h = int(run_sync_or_explain(self.mgr.pipeline(wgsl, entry, flags, bool(has_uniform)), "Compiling WGSL"))
        except JsException as e:
            from pyjax.hosts.wgpu_host import WGSLCompileError

            raise WGSLCompileError(str(e), wgsl, entry) from None
        self._pipeline_bindings[h] = (tuple(bool(w) for w in writable), bool(has_uniform))
        return h

    def pipeline_bindings(self, p: int):
        return self._pipeline_bindings[p]

    def max_workgroups(self) -> int:
        return self._max_wg

    def dispatch(self, steps) -> None:
        """steps: (pipeline, buffers, uniforms bytes or None, grid) each; one encoder, one submit."""
        from pyodide.ffi import to_js

        from pyjax.hosts.wgpu_host import grid_2d

        ints: list[int] = []
        blob = bytearray()
        for s in steps:
            pipeline, buffers, uniforms, grid = tuple(s)
            ints.append(pipeline)
            ints.append(len(buffers))
            ints.extend(buffers)
            uoff = usize = 0
            if uniforms is not None:
                data = bytes(memoryview(uniforms).cast("B"))
                usize = max(16, -(-len(data) // 16) * 16)
                uoff = -(-len(blob) // self._ualign) * self._ualign
                blob += bytes(uoff - len(blob)) + data + bytes(usize - len(data))
            x, y, z = grid_2d(grid, self._max_wg) if isinstance(grid, int) else (tuple(grid) + (1, 1))[:3]
            ints += [uoff, usize, x, y, z]
        steps_js = to_js(memoryview(struct.pack(f"<{len(ints)}i", *ints)).cast("i"))
        self.mgr.dispatch(steps_js, to_js(memoryview(bytes(blob))))
        self.stats["submits"] += 1
        self.stats["dispatches"] += len(steps)


def proxy_counts() -> dict:
    """Pyodide's FFI bookkeeping: live JS references held by Python (`js_refs`) and, once
    `pyodide._module.enable_pyproxy_allocation_tracing()` ran, live PyProxies (`pyproxies`)."""
    import pyodide_js

    m = pyodide_js._module
    return {"js_refs": int(m._hiwire_num_refs()), "pyproxies": int(m.pyproxy_alloc_map.size)}


def _js_object(items):
    import js

    return js.Object.fromEntries(items)
