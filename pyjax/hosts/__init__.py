"""hosts layer: the only code that touches a platform.

Natively: wasmtime (wasm) and wgpu-py (webgpu). In the browser (Pyodide, sys.platform ==
"emscripten"): the page's WebAssembly and navigator.gpu through shims/*.mjs. Backends get
their host from these factories, so both platforms run the same backend code.
"""

from __future__ import annotations

import sys

IN_BROWSER = sys.platform == "emscripten"


def wasm_host(**kwargs):
    """The Wasm host for this platform (one linear memory)."""
    if IN_BROWSER:
        from pyjax.hosts.browser import BrowserWasmHost

        return BrowserWasmHost(**kwargs)
    from pyjax.hosts.wasmtime_host import WasmtimeHost

    return WasmtimeHost(**kwargs)


_webgpu_host = None


def set_webgpu_host(host) -> None:
    """Install an already-created WebGPU host (the browser creates one asynchronously)."""
    global _webgpu_host
    _webgpu_host = host


def webgpu_host(**kwargs):
    """The WebGPU host for this platform (natively created on demand; in the browser created by
    `await pyjax.init_async("webgpu")`, or synchronously through JSPI where the page allows it)."""
    global _webgpu_host
    if _webgpu_host is None:
        if IN_BROWSER:
            from pyjax.hosts.browser import BrowserWebGPUHost

            _webgpu_host = BrowserWebGPUHost.create_sync(**kwargs)
        else:
            from pyjax.hosts.wgpu_host import WgpuHost

            _webgpu_host = WgpuHost(**kwargs)
    return _webgpu_host
