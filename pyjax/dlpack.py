"""jax.dlpack: arrays from other libraries through the DLPack protocol (copied onto pyjax's device)."""

from __future__ import annotations

from typing import Any

__all__ = ["from_dlpack", "is_supported_dtype"]

_SUPPORTED = {
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
}


def from_dlpack(external_array: Any, device: Any = None, copy: bool | None = None) -> Any:
    """A pyjax array with the data of an object that implements __dlpack__ (jnp.from_dlpack)."""
    from pyjax import numpy as jnp

    return jnp.from_dlpack(external_array, device=device, copy=copy)


def is_supported_dtype(dtype: Any) -> bool:
    """Whether arrays of dtype can travel through DLPack."""
    import numpy as np

    return np.dtype(dtype).name in _SUPPORTED
