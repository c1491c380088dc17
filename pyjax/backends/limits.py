"""Size limits of the wasm and webgpu devices, checked before anything is allocated or run.

Both compile kernels that index elements with 32-bit integers, so a kernel's iteration space
(or a routine's operand) holds at most 2^31 - 1 elements; buffers are bounded by wasm32's 4 GiB
linear memory and by WebGPU's maxBufferSize / maxStorageBufferBindingSize. Beyond them pyjax
raises ResourceExhaustedError up front (JAX: RESOURCE_EXHAUSTED), never a wrong or stale result.
"""

from __future__ import annotations

import math

from pyjax.compiler import ir
from pyjax.core.errors import JaxRuntimeError

INDEX_LIMIT = 2**31 - 1  # elements a 32-bit signed index reaches


class ResourceExhaustedError(JaxRuntimeError, MemoryError):
    """An array or kernel too large for the device; raised before allocating (JAX: RESOURCE_EXHAUSTED)."""


def check_kernel(kernel, platform: str) -> None:
    """Refuse a Kernel that needs 64-bit indices: an axis, its output or an operand's view spans
    more than INDEX_LIMIT elements. Its whole iteration space may be larger: a 2048^3 matmul
    makes 8.6e9 products with every index below 2^22."""
    n = max([kernel.out_size, *kernel.shape, *(_span(x.arg[1]) for x in _loads(kernel))])
    if n > INDEX_LIMIT:
        raise _index_error(f"a kernel over shape {tuple(kernel.shape)} ({n} elements)", platform)


def _loads(kernel) -> set:
    roots = [r for r in (kernel.epilogue, kernel.body) if r is not None]
    return {x for r in roots for x in ir.walk(r) if x.op == "load"}


def _span(tracker) -> int:
    """Elements a load's views address: the furthest offset each view reaches, plus one."""
    return max(v.offset + sum((s - 1) * abs(st) for s, st in zip(v.shape, v.strides)) + 1 for v in tracker.views)


def check_routine(routine, platform: str) -> None:
    """Refuse a Routine with an operand or result of more than INDEX_LIMIT elements."""
    for a in tuple(routine.in_avals) + tuple(routine.out_avals):
        n = math.prod(a.shape)
        if n > INDEX_LIMIT:
            raise _index_error(f"{routine.name} of an operand of shape {tuple(a.shape)} ({n} elements)", platform)


def check_bytes(nbytes: int, limit: int | None, platform: str, why: str) -> None:
    """Refuse a buffer of nbytes beyond the device's limit (None: no limit)."""
    if limit is not None and nbytes > limit:
        raise ResourceExhaustedError(
            f"RESOURCE_EXHAUSTED: Out of memory allocating {nbytes} bytes: the {platform} device holds "
            f"at most {limit} bytes in one buffer ({why})."
        )


def _index_error(what: str, platform: str) -> ResourceExhaustedError:
    return ResourceExhaustedError(
        f"RESOURCE_EXHAUSTED: {what} exceeds the {platform} backend's 32-bit indexing "
        f"(at most {INDEX_LIMIT} elements per kernel operand)."
    )
