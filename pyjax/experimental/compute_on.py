"""pyjax.experimental.compute_on: JAX's placement of a computation on the host, a device or a stream.

pyjax runs every computation on its one device, so a compute type changes where nothing runs: the values
are the ones JAX computes, and the compute type is checked as JAX checks it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

__all__ = ["compute_on", "compute_on2"]


def _check_valid(compute_type) -> None:
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    if compute_type not in {"device_host", "device", "tpu_sparsecore"} and not compute_type.startswith("gpu_stream:"):
        raise ValueError(
            f"Invalid compute type {compute_type}. Current supported values "
            "are `device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`."
        )


@contextlib.contextmanager
def compute_on(compute_type: str):
    """Run the enclosed computation on compute_type (one device in pyjax: where everything runs)."""
    _check_valid(compute_type)
    yield


def compute_on2(f: Callable | None = None, *, compute_type, out_memory_spaces, compiler_options=None):
    """f (or a decorator for it) with its compute type and output memory spaces checked; runs on the device."""
    _check_valid(compute_type)
    return (lambda g: g) if f is None else f
