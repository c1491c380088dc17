"""pyjax.experimental.mesh_utils: device meshes as jax.experimental.mesh_utils builds them, for pyjax's
one process (a browser tab or one Python process): the devices laid out in mesh_shape, row-major.

There is no physical topology (TPU slices, ICI rings) to follow, so contiguous_submeshes and
allow_split_physical_axes change nothing; a hybrid mesh needs process_is_granule=True (devices carry
no slice_index, as JAX's CPU devices do not) and then has one granule, this process.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pyjax.runtime import device as _device

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]

device_kind_handler_dict: dict = {}  # JAX's per-device-kind mesh builders: none apply to pyjax's devices


def _layout(devices: list, shape: tuple) -> Any:
    """devices (row-major) shaped as `shape`: a numpy object array as in JAX, nested lists without numpy."""
    try:
        import numpy as np
    except ImportError:
        out: Any = list(devices)
        for d in reversed(shape[1:]):
            out = [out[i : i + d] for i in range(0, len(out), d)]
        return out[0] if not shape else out
    arr = np.empty(len(devices), dtype=object)
    arr[:] = devices
    return arr.reshape(shape)


def _flat_devices(devices) -> list:
    if devices is None:
        return list(_device.devices())
    if hasattr(devices, "flat"):
        return list(devices.flat)
    return list(devices)


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> Any:
    """The devices (default: all of the default platform's) laid out in mesh_shape."""
    shape = tuple(int(s) for s in mesh_shape)
    devs = _flat_devices(devices)
    if math.prod(shape) != len(devs):
        raise ValueError(f"Number of devices {len(devs)} must equal the product of mesh_shape {tuple(mesh_shape)}")
    return _layout(devs, shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> Any:
    """A mesh of granules (here: processes, so one) each laid out in mesh_shape; axes multiply per dimension."""
    devs = _flat_devices(devices)
    if not process_is_granule:
        name = devs[0] if devs else "device"
        raise ValueError(f"Device {name} does not have attribute slice_index. See `process_is_granule` option.")
    dcn = tuple(int(s) for s in dcn_mesh_shape)
    if math.prod(dcn) != 1:
        raise ValueError(f"Number of slices 1 must equal the product of dcn_mesh_shape {tuple(dcn_mesh_shape)}")
    mesh = create_device_mesh(mesh_shape, devs)
    shape = tuple(int(a) * b for a, b in zip(mesh_shape, dcn))
    return _layout(_flat_devices(mesh) if hasattr(mesh, "flat") else devs, shape)
