"""backends layer: one folder per backend, found through REGISTRY.

A backend is a Backend subclass (base.py: the contract) in its own folder. It joins pyjax with
one line in REGISTRY; the runtime creates backends only through `create`, lazily, so a
platform whose host package is missing costs nothing until it is asked for.
"""

from __future__ import annotations

import importlib

# platform -> (its Backend class as "module:Class", the repr of its device). The order is the
# order in which error messages list the platforms.
REGISTRY: dict[str, tuple[str, str]] = {
    "webgpu": ("pyjax.backends.webgpu:WebGPUBackend", "WebGPUDevice"),
    "wasm": ("pyjax.backends.wasm:WasmBackend", "WasmDevice"),
    "cpu": ("pyjax.backends.cpu:CpuBackend", "CpuDevice"),
}


def backend_class(platform: str) -> type:
    """The Backend subclass of a registered platform (imports its folder on first use)."""
    entry = REGISTRY.get(platform)
    if entry is None:
        raise RuntimeError(f"Unknown backend {platform!r}; known platforms: {', '.join(REGISTRY)}")
    module, _, name = entry[0].partition(":")
    return getattr(importlib.import_module(module), name)


def create(platform: str, **kwargs):
    """A new backend of a registered platform (opening its host; raises when that fails)."""
    return backend_class(platform)(**kwargs)


def device_repr(platform: str) -> str:
    return REGISTRY[platform][1]
