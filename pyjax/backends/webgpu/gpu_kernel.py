"""What the WebGPU renderers produce and share: the device limits they respect (Caps), a compute dispatch
(Launch), a rendered kernel (GPUKernel), and the binding of a kernel's inputs to WGSL buffers (_Bindings,
merging inputs past the storage-buffer limit). Below renderer.py and matmul.py, which both render kernels."""

from __future__ import annotations

from pyjax.backends.webgpu import wgsl
from pyjax.backends.webgpu.wgsl import Emitter, Input
from pyjax.backends.webgpu.wgsl_math import helpers_for as helper_code
from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel

SIZES_FIELD = "n: vec4<u32>,"  # the `u.n` uniform of kernels whose sizes are not literals (renderer._sizes)


class Caps:
    """Device limits the renderer must respect (WebGPU spec defaults unless the host grants more)."""

    def __init__(self, limits: dict | None = None, has_f16: bool = False, cpu_adapter: bool = False):
        limits = limits or {}
        # cpu_adapter (SwiftShader) changes two plans. It emulates workgroup barriers slowly: a
        # sum of 2^20 floats took 125 ms with cooperative threads, 11 ms with one thread per
        # partial sum (serial reductions). And matmul wants the largest register tiles, not many
        # workgroups.
        self.cpu_adapter = cpu_adapter

        def get(name, default):
            camel = "".join(w.capitalize() if i else w for i, w in enumerate(name.split("-")))
            return int(limits.get(name, limits.get(camel, default)))

        self.max_invocations = min(get("max-compute-invocations-per-workgroup", 256), 1024)
        self.max_wg_x = get("max-compute-workgroup-size-x", 256)
        self.max_wg_y = get("max-compute-workgroup-size-y", 256)
        self.max_shared = get("max-compute-workgroup-storage-size", 16384)
        self.max_storage = get("max-storage-buffers-per-shader-stage", 8)
        self.max_wg_per_dim = get("max-compute-workgroups-per-dimension", 65535)
        self.has_f16 = has_f16
        self.wg = min(256, self.max_invocations, self.max_wg_x)

    def key(self):
        return (self.max_invocations, self.max_shared, self.max_storage, self.wg, self.cpu_adapter)


class Launch:
    """One compute dispatch: WGSL, buffer roles, workgroup count (int: split by the host)."""

    __slots__ = ("wgsl", "roles", "grid", "uniforms", "pipeline", "merged")

    def __init__(self, wgsl_text: str, roles: list, grid, uniforms: bytes | None = None, merged: list | None = None):
        self.wgsl = wgsl_text
        self.roles = roles  # ("in", k) | ("out", k) | ("tmp", j) | ("mrg",)
        self.grid = grid
        self.uniforms = uniforms
        self.pipeline = None
        self.merged = merged or []  # inputs read from the merged buffer, in base order


class GPUKernel:
    """A compiled Kernel: launches in order, temp buffer sizes, inputs merged into one buffer."""

    __slots__ = ("kernel", "launches", "temps", "host_fallback")

    def __init__(self, kernel, launches: list, temps: list | None = None):
        self.kernel = kernel
        self.launches = launches
        self.temps = temps or []
        self.host_fallback = False


def _used_inputs(roots) -> set:
    used = set()
    for r in roots:
        if r is None:
            continue
        for n in ir.walk(r):
            if n.op == "load":
                used.add(n.arg[0])
            elif n.op == "gather":
                used.add(n.arg)
    return used


class _Bindings:
    """Kernel inputs -> WGSL bindings, merging inputs past the storage-buffer limit."""

    def __init__(
        self, k: Kernel, caps: Caps, used: set, extra: list, vec_inputs: set = frozenset(), sizes: bool = False
    ):
        """extra: [(name, elem type, writable, role)] bound after the inputs (outputs, temps);
        sizes: declare the `u.n` uniform (after the merged bases, see `_sizes`)."""
        self.inputs: dict = {}
        self.decls: list = []
        self.roles: list = []
        ins = sorted(used)
        room = caps.max_storage - len(extra)
        merged = []
        if len(ins) > room:
            keep, merged = ins[: room - 1], ins[room - 1 :]
        else:
            keep = ins
        for i in keep:
            d = k.in_dtypes[i]
            vec = i in vec_inputs and not wgsl.packed(d)
            ty = f"vec4<{wgsl.storage_type(d)}>" if vec else wgsl.storage_type(d)
            self.decls.append((f"in{i}", ty, False))
            self.roles.append(("in", i))
            self.inputs[i] = Input(f"in{i}", d, vec4=vec)
        self.merged = merged
        self.uniform = None
        if merged:
            self.decls.append(("mrg", "u32", False))
            self.roles.append(("mrg",))
            for j, i in enumerate(merged):
                self.inputs[i] = Input("mrg", k.in_dtypes[i], base=f"u.b[{j // 4}][{j % 4}]")
            self.uniform = f"b: array<vec4<u32>, {max(1, -(-len(merged) // 4))}>,"
        if sizes:
            self.uniform = (self.uniform or "") + SIZES_FIELD
        for name, ty, w, role in extra:
            self.decls.append((name, ty, w))
            self.roles.append(role)

    def header(self) -> str:
        return wgsl.header(self.decls, self.uniform)


def _finish(em: Emitter, head: str, body: str, shared: str = "") -> str:
    helpers = helper_code(em.helpers) if em.helpers else ""
    return head + shared + helpers + body
