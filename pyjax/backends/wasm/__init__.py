"""The wasm backend: the IR compiled to WebAssembly in pure Python, run by wasmtime or the browser."""

from pyjax.backends.wasm.backend import WasmBackend, WasmKernelError

__all__ = ["WasmBackend", "WasmKernelError"]
