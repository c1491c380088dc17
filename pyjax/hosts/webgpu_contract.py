"""What every WebGPU host shares: its errors, the dispatch Step, the 2-D grid split and the
binding convention read from WGSL (see wgpu_host's docstring). The native host (wgpu_host) and
the browser host (browser) both build on it, so neither imports the other."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple


class HostError(RuntimeError):
    """A WebGPU operation failed (validation error or misuse of the host API)."""


class WGSLCompileError(HostError):
    """WGSL failed to compile or validate; carries the numbered source and compiler message."""

    def __init__(self, message: str, source: str, entry: str = "main"):
        self.message = message
        self.source = source
        self.entry = entry
        super().__init__(
            f"WGSL shader (entry point {entry!r}) failed to compile:\n{message.strip()}\n"
            f"--- WGSL source ---\n{number_lines(source)}"
        )


class DeviceLostError(HostError):
    """The GPU device was lost; the next host call creates a new device (buffers are gone)."""


class GPUOutOfMemoryError(HostError, MemoryError):
    """A GPU allocation failed or exceeds the device's buffer limits."""


def append_uniforms(blob: bytearray, uniforms, align: int) -> tuple[int, int]:
    """Append a step's uniform bytes to a batch's uniform blob at the next `align`-byte offset,
    padded to a multiple of 16 bytes: (offset, padded size), or (0, 0) for no uniforms."""
    if uniforms is None:
        return 0, 0
    data = bytes(memoryview(uniforms).cast("B"))
    size = max(16, -(-len(data) // 16) * 16)
    offset = -(-len(blob) // align) * align
    blob += bytes(offset - len(blob)) + data + bytes(size - len(data))
    return offset, size


class Step(NamedTuple):
    """One compute dispatch inside a ``WgpuHost.dispatch`` batch.

    buffers: storage-buffer handles bound at @binding(0..n-1) in this order.
    uniforms: packed scalars for the optional ``var<uniform>`` at @binding(n), or None.
    grid: workgroup counts (x, y, z), or an int n of workgroups that the host splits
    with ``grid_2d`` (the kernel must then linearize the 2-D workgroup id), or
    ("indirect", handle) or ("indirect", handle, offset): the three u32 counts an earlier step
    wrote at that byte offset of the buffer (its start by default; a multiple of 4).
    """

    pipeline: int
    buffers: Sequence[int]
    uniforms: bytes | None = None
    grid: tuple[int, int, int] | tuple[str, int] | int = (1, 1, 1)


class Replay(NamedTuple):
    """A recording (``WgpuHost.record``) inside a ``dispatch`` batch, its buffer positions bound
    to these handles: a jitted program's steps validated, packed and bound once, replayed per call."""

    recording: int
    buffers: Sequence[int]


def check_recorded_step(i: int, p: int, refs, uniforms, bindings: tuple, nbuffers: int) -> None:
    """Raise ValueError where step i of a recording (pipeline p with `bindings`, its
    (writable flags, has uniform)) does not fit p or refers outside positions 0..nbuffers-1."""
    writable, has_uniform = bindings
    if len(refs) != len(writable) or (uniforms is not None) != has_uniform:
        raise ValueError(f"step {i}: pipeline {p} takes {len(writable)} buffers, uniforms {has_uniform}")
    if any(not 0 <= r < nbuffers for r in refs):
        raise ValueError(f"step {i}: buffer positions {list(refs)} outside 0..{nbuffers - 1}")


def number_lines(source: str) -> str:
    """Prefix each line of WGSL with its 1-based line number (for error messages)."""
    lines = source.splitlines()
    width = len(str(len(lines)))
    return "\n".join(f"{i:>{width}} | {line}" for i, line in enumerate(lines, 1))


def grid_2d(n_workgroups: int, max_per_dim: int = 65535) -> tuple[int, int, int]:
    """Workgroup counts (x, y, z) covering n_workgroups with every count <= max_per_dim.

    x * y * z >= n with little waste; kernels compute ``wid.x + wid.y * nwg.x
    (+ wid.z * nwg.x * nwg.y)`` and skip ids >= n.
    """
    if n_workgroups < 0:
        raise ValueError(f"negative workgroup count {n_workgroups}")
    if n_workgroups <= max_per_dim:
        return (n_workgroups, 1, 1)
    if n_workgroups > max_per_dim**3:
        raise ValueError(f"{n_workgroups} workgroups exceed {max_per_dim}^3")
    z = -(-n_workgroups // (max_per_dim * max_per_dim))
    per_z = -(-n_workgroups // z)
    y = -(-per_z // max_per_dim)
    x = -(-per_z // y)
    return (x, y, z)


# Binding declarations: `@group(g) @binding(b) var<storage, read_write> name` (either order).
_BINDING_RE = re.compile(
    r"@(group|binding)\s*\(\s*(\d+)\s*\)\s*@(group|binding)\s*\(\s*(\d+)\s*\)\s*"
    r"var\s*<\s*(storage|uniform)\s*(?:,\s*(read_write|read)\s*)?>"
)


def parse_bindings(wgsl: str) -> tuple[tuple[bool, ...], bool] | None:
    """(writable flag per storage binding, has uniform) if the WGSL follows the host's
    binding convention, else None (then the pipeline uses layout 'auto')."""
    code = re.sub(r"//[^\n]*", "", wgsl)
    found: dict[int, tuple[str, str]] = {}
    for m in _BINDING_RE.finditer(code):
        attrs = {m.group(1): int(m.group(2)), m.group(3): int(m.group(4))}
        if set(attrs) != {"group", "binding"} or attrs["group"] != 0:
            return None
        found[attrs["binding"]] = (m.group(5), m.group(6) or "read")
    if sorted(found) != list(range(len(found))):
        return None
    kinds = [found[i] for i in range(len(found))]
    has_uniform = bool(kinds) and kinds[-1][0] == "uniform"
    storage = kinds[:-1] if has_uniform else kinds
    if any(k != "storage" for k, _ in storage):
        return None
    return tuple(mode == "read_write" for _, mode in storage), has_uniform
