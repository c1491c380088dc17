"""The webgpu backend: the kernel IR rendered as WGSL compute shaders, run by a WebGPU host
(wgpu-py natively, navigator.gpu in the browser). Importing this package needs neither wgpu nor
numpy; creating the backend opens the device."""

from pyjax.backends.webgpu.backend import WebGPUBackend

__all__ = ["WebGPUBackend"]
