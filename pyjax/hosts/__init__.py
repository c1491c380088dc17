"""hosts layer: the only code that touches a platform.

Natively: wasmtime (wasm) and wgpu-py (webgpu). In the browser (Pyodide, sys.platform ==
"emscripten"): the page's WebAssembly and navigator.gpu through shims/*.mjs. Backends get
their host from these factories, so both platforms run the same backend code; which host
serves which platform is the table FACTORIES.
"""

from __future__ import annotations

import importlib
import sys

IN_BROWSER = sys.platform == "emscripten"

# (host kind, in the browser?) -> "module:factory". "webgpu_async" is the browser's
# asynchronous device request (natively the plain factory needs no waiting).
FACTORIES: dict[tuple[str, bool], str] = {
    ("wasm", False): "pyjax.hosts.wasmtime_host:WasmtimeHost",
    ("wasm", True): "pyjax.hosts.browser:BrowserWasmHost",
    ("webgpu", False): "pyjax.hosts.wgpu_host:WgpuHost",
    ("webgpu", True): "pyjax.hosts.browser:BrowserWebGPUHost.create_sync",
    ("webgpu_async", True): "pyjax.hosts.browser:BrowserWebGPUHost.create",
}


def factory(kind: str):
    """This platform's factory of a host kind (None where the platform has none)."""
    entry = FACTORIES.get((kind, IN_BROWSER))
    if entry is None:
        return None
    module, _, path = entry.partition(":")
    obj = importlib.import_module(module)
    for name in path.split("."):
        obj = getattr(obj, name)
    return obj


def wasm_host(**kwargs):
    """The Wasm host for this platform (one linear memory)."""
    return factory("wasm")(**kwargs)


_webgpu_host = None  # one per process: every WebGPU backend shares the device


def set_webgpu_host(host) -> None:
    """Install an already-created WebGPU host (the browser creates one asynchronously)."""
    global _webgpu_host
    _webgpu_host = host


def webgpu_host(**kwargs):
    """The WebGPU host for this platform (natively created on demand; in the browser created by
    `await pyjax.init_async("webgpu")`, or synchronously through JSPI where the page allows it)."""
    global _webgpu_host
    if _webgpu_host is None:
        _webgpu_host = factory("webgpu")(**kwargs)
    return _webgpu_host


async def webgpu_host_async() -> None:
    """Create the WebGPU host where the platform can only wait for it (the browser), again when
    the last one's device was lost; natively nothing to do."""
    create = factory("webgpu_async")
    if create is not None and (_webgpu_host is None or getattr(_webgpu_host, "lost", False)):
        set_webgpu_host(await create())
