"""Native WebGPU host over wgpu-py: buffers, pipelines and batched dispatch by integer handle.

This is the only pyjax code that touches wgpu-py. Its API is deliberately small, coarse and
handle-based (ints, bytes, WGSL text) so that the browser host (JavaScript through Pyodide)
can mirror it call for call:

    host = WgpuHost()
    a = host.create_buffer(4 * n); host.write(a, data)
    p = host.pipeline(wgsl)                       # cached by WGSL text
    host.dispatch([Step(p, [a, b], uniforms, grid)])   # one encoder, one submit
    out = host.read(b)

Binding convention for every pipeline: storage buffers at ``@group(0) @binding(0..n-1)`` in
the order a step lists them (``var<storage, read>`` or ``var<storage, read_write>``), then an
optional ``var<uniform>`` at ``@binding(n)`` holding the step's packed scalars. The access mode
of each binding is read from the WGSL declarations, so steps pass plain handles.

Device limits are requested explicitly: by default the WebGPU spec defaults, so kernels that run
here also run in Chrome; ``adapter_limits=True`` takes everything the adapter offers.

Large 1-D launches: at most 65535 workgroups per dimension; ``grid_2d(n)`` splits n workgroups
into (x, y, 1) and the kernel linearizes with ``wid.x + wid.y * num_workgroups.x`` and guards
against the few extra workgroups.

wgpu is imported lazily (in the constructor) so importing this module needs nothing.
"""

from __future__ import annotations

import os
import re
import time
from collections import OrderedDict
from collections.abc import Sequence

from pyjax.hosts.webgpu_contract import (
    DeviceLostError,
    GPUOutOfMemoryError,
    HostError,
    Replay,
    Step,
    WGSLCompileError,
    append_uniforms,
    check_recorded_step,
    grid_2d,
    number_lines,
    parse_bindings,
)

__all__ = [
    "WEBGPU_DEFAULT_LIMITS",
    "DeviceLostError",
    "GPUOutOfMemoryError",
    "HostError",
    "Replay",
    "Step",
    "WGSLCompileError",
    "WgpuHost",
    "grid_2d",
    "number_lines",
]

# WebGPU spec default limits (what a browser grants unless more is requested).
WEBGPU_DEFAULT_LIMITS: dict[str, int] = {
    "max-texture-dimension-1d": 8192,
    "max-texture-dimension-2d": 8192,
    "max-texture-dimension-3d": 2048,
    "max-texture-array-layers": 256,
    "max-bind-groups": 4,
    "max-bindings-per-bind-group": 1000,
    "max-dynamic-uniform-buffers-per-pipeline-layout": 8,
    "max-dynamic-storage-buffers-per-pipeline-layout": 4,
    "max-sampled-textures-per-shader-stage": 16,
    "max-samplers-per-shader-stage": 16,
    "max-storage-buffers-per-shader-stage": 8,
    "max-storage-textures-per-shader-stage": 4,
    "max-uniform-buffers-per-shader-stage": 12,
    "max-uniform-buffer-binding-size": 65536,
    "max-storage-buffer-binding-size": 134217728,
    "min-uniform-buffer-offset-alignment": 256,
    "min-storage-buffer-offset-alignment": 256,
    "max-vertex-buffers": 8,
    "max-buffer-size": 268435456,
    "max-vertex-attributes": 16,
    "max-vertex-buffer-array-stride": 2048,
    "max-inter-stage-shader-variables": 16,
    "max-color-attachments": 8,
    "max-color-attachment-bytes-per-sample": 32,
    "max-compute-workgroup-storage-size": 16384,
    "max-compute-invocations-per-workgroup": 256,
    "max-compute-workgroup-size-x": 256,
    "max-compute-workgroup-size-y": 256,
    "max-compute-workgroup-size-z": 64,
    "max-compute-workgroups-per-dimension": 65535,
}

_DEFAULT_POOL_BYTES = 256 << 20  # free buffers kept for reuse, per host
_BIND_GROUP_CACHE = 4096  # entries; cleared wholesale when full (cheap to rebuild)
# Compiled pipelines kept alive (least recently used out): a driver's compiled shader costs ~1 MB
# (lavapipe); an evicted pipeline keeps its handle and is rebuilt from its WGSL on its next use.
_LIVE_PIPELINES = int(os.environ.get("PYJAX_PIPELINE_CACHE", 256))
# A read back polls without blocking for this long before it blocks (0: block at once). H200, tiny
# jitted call awaited (bench/webgpu.py, medians of 7x300): blocking at once 122-128 us, 150 us of
# spinning first 86-90 us.
_SPIN_ENV = os.environ.get("PYJAX_WEBGPU_SPIN_US")
_SPIN_S = float(_SPIN_ENV or 200) * 1e-6


def _size_class(nbytes: int) -> int:
    """Round a byte size up to a pool class: >= 256, four classes per power of two (<= 25% waste)."""
    if nbytes <= 256:
        return 256
    step = 1 << ((nbytes - 1).bit_length() - 3)  # a quarter of the power of two below
    return -(-nbytes // step) * step


def _round4(n: int) -> int:
    return (n + 3) & ~3


# wgpu-native's wording when the device is gone ("Parent device is lost", "Device lost").
_LOST_RE = re.compile(r"\bdevice (?:is |was )?lost\b", re.IGNORECASE)


class _Buffer:
    __slots__ = ("capacity", "generation", "gpu", "key", "nbytes")

    def __init__(self, gpu, nbytes: int, capacity: int, generation: int):
        self.gpu = gpu
        self.nbytes = nbytes
        self.capacity = capacity
        self.generation = generation
        self.key = (id(gpu), nbytes)  # what a bind group binds (gpu is kept alive here, so its id is unique)


class _Pipeline:
    __slots__ = (
        "entry",
        "generation",
        "gpu",
        "has_uniform",
        "layout_key",
        "wgsl",
        "writable",
    )

    def __init__(self, wgsl: str, entry: str, parsed):
        self.wgsl = wgsl
        self.entry = entry
        self.writable, self.has_uniform = parsed if parsed else ((), False)
        # Pipelines with the same binding signature share one bind group layout, so bind groups
        # are shared too; None means layout 'auto' (bind groups are then per pipeline).
        self.layout_key = (self.writable, self.has_uniform) if parsed else None
        self.gpu = None
        self.generation = -1


class _Recording:
    """Steps over buffer positions, validated and packed once (WgpuHost.record)."""

    __slots__ = (
        "binds",
        "blob",
        "distinct",
        "gps",
        "gps_keep",
        "grids",
        "groups",
        "has_u",
        "indirect",
        "last",
        "nbuffers",
        "pipe_set",
        "pipes",
        "steps",
        "uoffs",
    )

    def __init__(self, nbuffers: int):
        self.nbuffers = nbuffers
        self.steps: list = []  # (pipeline, positions, uniforms, grid) as given
        self.pipes: list = []  # pipeline handle per step
        self.pipe_set: list = []
        self.binds: list = []  # index into distinct per step
        self.distinct: list = []  # (layout key, positions, uniform size) of each bind group
        self.grids: list = []
        self.indirect: list = []  # steps whose grid is ("indirect", position)
        self.uoffs: list = []
        self.has_u: list = []
        self.blob = b""
        self.gps = None  # compiled pipelines' pointers per step (see _replay_pipelines)
        self.gps_keep = None
        self.groups: dict = {}  # bound buffers -> (bind groups, their pointers per step)
        self.last = None  # (key, value) of the last replay's entry in groups


class WgpuHost:
    """A WebGPU device over wgpu-py with handle-based buffers, cached pipelines and batched dispatch.

    adapter_limits: request the adapter's full limits instead of the WebGPU spec defaults.
    limits: extra limits to request (names like "max-buffer-size"), applied last.
    pool_bytes: how many bytes of released buffers to keep for reuse.
    """

    reads_in_dispatch = True  # dispatch(steps, read=(handle, nbytes, offset)) returns the bytes

    def __init__(
        self,
        *,
        adapter_limits: bool = False,
        limits: dict[str, int] | None = None,
        power_preference: str = "high-performance",
        pool_bytes: int = _DEFAULT_POOL_BYTES,
    ):
        import wgpu  # lazy: importing pyjax must not need wgpu

        self._wgpu = wgpu
        try:  # wgpu-native's C functions, for recording compute passes without wgpu-py's wrappers
            from wgpu.backends.wgpu_native._api import libf
            from wgpu.backends.wgpu_native._ffi import ffi, lib

            self._raw = (ffi, lib) if hasattr(lib, "wgpuComputePassEncoderDispatchWorkgroups") else None
            self._libf = libf  # the same functions, raising wgpu-native's errors (wgpu-py's wrappers)
        except ImportError:  # pragma: no cover - other wgpu-py versions
            self._raw = None
        self._usage_storage = (
            wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST | wgpu.BufferUsage.INDIRECT
        )
        self._usage_staging = wgpu.BufferUsage.MAP_READ | wgpu.BufferUsage.COPY_DST
        self._usage_uniform = wgpu.BufferUsage.UNIFORM | wgpu.BufferUsage.COPY_DST
        self._gpu_errors = (wgpu.GPUError, wgpu.GPUPipelineError)
        self._map_info = None  # the raw map callback's struct (built on the first read)
        self._map_done: list = []
        self._want_adapter_limits = adapter_limits
        self._extra_limits = dict(limits or {})
        self._power_preference = power_preference
        self.pool_bytes = pool_bytes
        self._buffers: dict[int, _Buffer] = {}
        self._pipelines: list[_Pipeline] = []
        self._pipeline_ids: dict[tuple[str, str], int] = {}
        self._recordings: list = []
        self._next_buffer = 1
        self.generation = -1  # bumped for every (re)created device
        self._closed = False
        self.stats = {
            "buffers_created": 0,
            "pool_hits": 0,
            "pipelines_compiled": 0,
            "submits": 0,
            "dispatches": 0,
            "device_losses": 0,
        }
        self._open_device()

    # ---- device -------------------------------------------------------------------------

    def _open_device(self) -> None:
        wgpu = self._wgpu
        adapter = wgpu.gpu.request_adapter_sync(power_preference=self._power_preference)
        if adapter is None:
            raise HostError("no WebGPU adapter available")
        alimits = adapter.limits
        if self._want_adapter_limits:
            required = dict(alimits)
        else:
            required = {}
            for name, value in WEBGPU_DEFAULT_LIMITS.items():
                if name in alimits:
                    # Never ask for more than the adapter has ("min-" limits: smaller is more).
                    have = alimits[name]
                    required[name] = max(value, have) if name.startswith("min-") else min(value, have)
        required.update(self._extra_limits)
        features = [f for f in ("shader-f16", "subgroup") if f in adapter.features]
        self._device = adapter.request_device_sync(required_features=features, required_limits=required)
        self._queue = self._device.queue
        self.adapter_info: dict = dict(adapter.info)
        # spinning on a CPU adapter (lavapipe) takes the cycles its own threads need: not by default
        cpu = self.adapter_info.get("adapter_type") == "CPU"
        self._spin_s = 0.0 if cpu and _SPIN_ENV is None else _SPIN_S
        self.limits: dict[str, int] = dict(self._device.limits)
        self.features: frozenset[str] = frozenset(self._device.features)
        self.has_f16: bool = "shader-f16" in self.features
        # wgpu-native's subgroup operations (WGSL without `enable subgroups;`): the radix sort's
        # workgroup scans use them when present
        self.has_subgroups: bool = "subgroup" in self.features
        self._max_binding = min(
            self.limits["max-storage-buffer-binding-size"],
            self.limits["max-buffer-size"],
        )
        self._max_wg = self.limits["max-compute-workgroups-per-dimension"]
        self._ualign = self.limits["min-uniform-buffer-offset-alignment"]
        self._lost = False
        self.generation += 1
        self._pool: dict[int, list] = {}
        self._pool_used = 0
        self._staging_pool: dict[int, list] = {}
        self._ubuf = None
        self._ubuf_size = 0
        self._ubuf_gen = 0
        self._ublob = None  # (uniform buffer, bytes) of the last raw write
        self._bgls: dict = {}
        self._bind_groups: dict = {}
        self._bg_epoch = getattr(self, "_bg_epoch", 0) + 1  # bumped whenever cached bind groups may be stale
        self._live: OrderedDict[int, _Pipeline] = OrderedDict()  # handles with a compiled pipeline, oldest first
        # the recording whose pipelines (its pipe_set, in order) are the newest entries of _live, all
        # built on this device, with _live unchanged since: its replays leave _live as it is
        self._live_tail = None

    def _ensure_device(self) -> None:
        if self._closed:
            raise HostError("this WgpuHost was destroyed")
        if self._lost:
            self.stats["device_losses"] += 1
            self._buffers.clear()  # their memory went with the device
            self._open_device()

    def _translate(self, err: Exception, what: str) -> HostError:
        """Map a wgpu exception to the host's error types (device loss sets up re-creation)."""
        msg = str(err)
        if _LOST_RE.search(msg):
            self._lost = True
            return DeviceLostError(
                f"{what}: the GPU device was lost; a new one will be created "
                f"on the next call and existing buffers are gone.\n{msg}"
            )
        if isinstance(err, MemoryError):
            return GPUOutOfMemoryError(f"{what}: {msg}")
        return HostError(f"{what}: {msg}")

    def sync(self) -> None:
        """Block until all submitted GPU work has finished."""
        self._ensure_device()
        # on_submitted_work_done is broken in wgpu-py 0.32 (wgpu-py#834); poll instead.
        try:
            poll = getattr(self._device, "_poll_wait", None)
            if poll is not None:
                poll()
            else:  # pragma: no cover - other wgpu-py versions
                self._queue.on_submitted_work_done_sync()
        except self._gpu_errors as e:
            raise self._translate(e, "sync") from e

    def destroy(self) -> None:
        """Free every GPU resource of this host; the host is unusable afterwards."""
        self._buffers.clear()
        self._pool.clear()
        self._staging_pool.clear()
        self._bind_groups.clear()
        self._closed = True
        self._device.destroy()

    # ---- buffers ------------------------------------------------------------------------

    def create_buffer(self, nbytes: int) -> int:
        """Allocate a storage buffer of nbytes (contents undefined) and return its handle.

        Buffers come from a pool keyed by size class; the binding covers exactly
        round_up(nbytes, 4) bytes, so ``arrayLength`` sees the requested size, not the class.
        """
        self._ensure_device()
        if nbytes < 0:
            raise ValueError(f"negative buffer size {nbytes}")
        if nbytes > self._max_binding:
            raise GPUOutOfMemoryError(
                f"buffer of {nbytes} bytes exceeds the device limit of {self._max_binding} bytes "
                "(max-storage-buffer-binding-size / max-buffer-size; WgpuHost(adapter_limits=True) "
                "raises them where the adapter allows)"
            )
        cap = _size_class(nbytes)
        if cap > self._max_binding:
            cap = max(4, _round4(nbytes))
        free = self._pool.get(cap)
        if free:
            gpu = free.pop()
            self._pool_used -= cap
            self.stats["pool_hits"] += 1
        else:
            gpu = self._alloc(cap, self._usage_storage, "create_buffer")
            self.stats["buffers_created"] += 1
        h = self._next_buffer
        self._next_buffer += 1
        self._buffers[h] = _Buffer(gpu, nbytes, cap, self.generation)
        return h

    def _alloc(self, size: int, usage, what: str):
        try:
            return self._device.create_buffer(size=size, usage=usage)
        except self._gpu_errors as e:
            err = self._translate(e, what)
            if not isinstance(err, GPUOutOfMemoryError):
                raise err from e
        # Out of memory: give the pooled buffers back and try once more.
        self.trim_pool()
        try:
            return self._device.create_buffer(size=size, usage=usage)
        except self._gpu_errors as e:
            raise self._translate(e, what) from e

    def _buf(self, h: int) -> _Buffer:
        self._ensure_device()
        try:
            return self._buffers[h]
        except KeyError:
            raise KeyError(f"unknown or released buffer handle {h} (buffers do not survive device loss)") from None

    def release_buffer(self, h: int) -> None:
        """Return a buffer to the pool. Work already submitted keeps using it safely: WebGPU
        orders later writes to the reused buffer after that work on the queue."""
        buf = self._buffers.pop(h, None)
        if buf is None or buf.generation != self.generation or self._lost:
            return
        if self._pool_used + buf.capacity <= self.pool_bytes:
            self._pool.setdefault(buf.capacity, []).append(buf.gpu)
            self._pool_used += buf.capacity
        else:
            self._drop_gpu_buffer(buf.gpu)

    def _drop_gpu_buffer(self, gpu) -> None:
        # Cached bind groups may reference it; rebuilding them is cheap.
        self._bind_groups.clear()
        self._bg_epoch += 1
        gpu.destroy()

    def trim_pool(self) -> None:
        """Destroy every pooled (released) buffer and staging buffer."""
        for bufs in list(self._pool.values()) + list(self._staging_pool.values()):
            for gpu in bufs:
                self._drop_gpu_buffer(gpu)
        self._pool.clear()
        self._staging_pool.clear()
        self._pool_used = 0

    def buffer_size(self, h: int) -> int:
        """The size in bytes a buffer was created with."""
        return self._buf(h).nbytes

    def write(self, h: int, data, offset: int = 0) -> None:
        """Copy bytes (any C-contiguous buffer-protocol object) into buffer h at offset."""
        buf = self._buf(h)
        mv = memoryview(data).cast("B")
        n = mv.nbytes
        if offset < 0 or offset + n > buf.nbytes:
            raise ValueError(f"write of {n} bytes at offset {offset} exceeds buffer size {buf.nbytes}")
        if n == 0:
            return
        start, end = offset & ~3, _round4(offset + n)
        try:
            if start == offset and end == offset + n:
                self._queue.write_buffer(buf.gpu, offset, mv)
            elif start == offset and offset + n == buf.nbytes:
                # Tail of the buffer: pad into the slack past nbytes.
                self._queue.write_buffer(buf.gpu, offset, bytes(mv) + bytes(end - offset - n))
            else:
                # Unaligned middle: read-modify-write the covering 4-byte words.
                span = bytearray(self._read_span(buf, start, end - start))
                span[offset - start : offset - start + n] = mv
                self._queue.write_buffer(buf.gpu, start, span)
        except self._gpu_errors as e:
            raise self._translate(e, "write") from e

    def copy(
        self,
        src: int,
        dst: int,
        nbytes: int | None = None,
        src_offset: int = 0,
        dst_offset: int = 0,
    ) -> None:
        """Copy bytes between buffers on the GPU, ordered after earlier dispatches.

        Offsets must be multiples of 4, and so must nbytes unless the copy runs to the end of
        both buffers (WebGPU copies whole 4-byte words).
        """
        s, d = self._buf(src), self._buf(dst)
        n = s.nbytes - src_offset if nbytes is None else nbytes
        tail = src_offset + n == s.nbytes and dst_offset + n == d.nbytes
        if src_offset % 4 or dst_offset % 4 or (n % 4 and not tail):
            raise ValueError("copy offsets and size must be multiples of 4")
        if src_offset + n > s.nbytes or dst_offset + n > d.nbytes:
            raise ValueError("copy range exceeds a buffer")
        if n == 0:
            return
        try:
            enc = self._device.create_command_encoder()
            enc.copy_buffer_to_buffer(s.gpu, src_offset, d.gpu, dst_offset, _round4(n))
            self._queue.submit([enc.finish()])
        except self._gpu_errors as e:
            raise self._translate(e, "copy") from e
        self.stats["submits"] += 1

    def _range(self, buf: _Buffer, nbytes: int | None, offset: int) -> int:
        n = buf.nbytes - offset if nbytes is None else nbytes
        if offset < 0 or n < 0 or offset + n > buf.nbytes:
            raise ValueError(f"read of {n} bytes at offset {offset} exceeds buffer size {buf.nbytes}")
        return n

    def _stage(self, buf: _Buffer, start: int, size: int, enc=None):
        """Copy [start, start+size) into a pooled staging buffer (submitted; not yet mapped).
        enc: record the copy there instead (the caller submits it)."""
        cls = _size_class(size)
        free = self._staging_pool.get(cls)
        st = free.pop() if free else self._alloc(cls, self._usage_staging, "read")
        if enc is not None:
            enc.copy_buffer_to_buffer(buf.gpu, start, st, 0, size)
            return st, cls
        enc = self._device.create_command_encoder()
        enc.copy_buffer_to_buffer(buf.gpu, start, st, 0, size)
        self._queue.submit([enc.finish()])
        self.stats["submits"] += 1
        return st, cls

    def _unstage(self, st, cls: int, size: int, skip: int, n: int) -> bytes:
        out = bytes(st.read_mapped(0, size, copy=False)[skip : skip + n])
        st.unmap()
        self._staging_pool.setdefault(cls, []).append(st)
        return out

    def _read_span(self, buf: _Buffer, start: int, size: int, skip: int = 0, n: int | None = None) -> bytes:
        """Bytes [start + skip, start + skip + n) of buf; [start, start + size) is 4-byte aligned."""
        if self._raw is not None:
            st, cls = self._stage_buffer(size)
            self._submit_raw(b"", (), (), (), (), (), (buf, start, size, st))
            self.stats["submits"] += 1
            out = self._map_read_raw(st, size)[skip : skip + (size if n is None else n)]
            self._staging_pool.setdefault(cls, []).append(st)
            return out
        st, cls = self._stage(buf, start, size)  # pragma: no cover - other wgpu-py versions
        st.map_sync(self._wgpu.MapMode.READ, 0, size)
        return self._unstage(st, cls, size, skip, size if n is None else n)

    def _map_read_raw(self, st, size: int) -> bytes:
        """Map, copy out and unmap a staging buffer whose copy was just submitted, waiting in
        this thread through wgpu-native's C functions: map_sync waits for wgpu-py's poll thread
        to see the map done and wake this one (a tiny awaited call took 290-410 us on the
        H200, torch 25-40 us)."""
        ffi, lib = self._raw
        if self._map_info is None:
            done = self._map_done

            @ffi.callback("void(WGPUMapAsyncStatus, WGPUStringView, void *, void *)")
            def mapped(status, message, u1, u2):
                done.append(status)

            self._map_info = ffi.new(
                "WGPUBufferMapCallbackInfo *", {"mode": lib.WGPUCallbackMode_AllowProcessEvents, "callback": mapped}
            )
            self._map_keep = mapped
        self._map_done.clear()
        lib.wgpuBufferMapAsync(st._internal, lib.WGPUMapMode_Read, 0, size, self._map_info[0])
        dev = self._device._internal
        poll = lib.wgpuDevicePoll
        if self._spin_s > 0:  # non-blocking polls first: a blocking wait sleeps, waking takes longer than a tiny result
            until = time.perf_counter() + self._spin_s
            while not self._map_done and time.perf_counter() < until:
                poll(dev, False, ffi.NULL)
        for _ in range(1000):  # the blocking poll waits for the copy; the callback runs in it
            if self._map_done:
                break
            poll(dev, True, ffi.NULL)
        if not self._map_done or self._map_done[0] != lib.WGPUMapAsyncStatus_Success:
            raise HostError(f"could not map a staging buffer for reading (status {self._map_done})")
        out = bytes(ffi.buffer(lib.wgpuBufferGetConstMappedRange(st._internal, 0, size), size))
        lib.wgpuBufferUnmap(st._internal)
        return out

    def _read_range(self, h: int, nbytes: int | None, offset: int) -> tuple:
        """(buffer, aligned start, aligned size, n) covering the n bytes a read asks for."""
        buf = self._buf(h)
        n = self._range(buf, nbytes, offset)
        start = offset & ~3
        return buf, start, _round4(offset + n) - start, n

    def read(self, h: int, nbytes: int | None = None, offset: int = 0) -> bytes:
        """Wait for pending work, then return nbytes (default: to the end) from offset."""
        buf, start, size, n = self._read_range(h, nbytes, offset)
        try:
            return self._read_span(buf, start, size, offset - start, n) if n else b""
        except self._gpu_errors as e:
            raise self._translate(e, "read") from e

    async def read_async(self, h: int, nbytes: int | None = None, offset: int = 0) -> bytes:
        """Awaitable ``read``: the browser host can only read back asynchronously."""
        buf, start, size, n = self._read_range(h, nbytes, offset)
        if n == 0:
            return b""
        try:
            st, cls = self._stage(buf, start, size)
            await st.map_async(self._wgpu.MapMode.READ, 0, size)
            return self._unstage(st, cls, size, offset - start, n)
        except self._gpu_errors as e:
            raise self._translate(e, "read_async") from e

    # ---- pipelines ----------------------------------------------------------------------

    def pipeline(
        self,
        wgsl: str,
        entry: str = "main",
        writable: Sequence[bool] | None = None,
        has_uniform: bool = False,
    ) -> int:
        """Compile a compute pipeline (cached by WGSL text and entry) and return its handle.

        The bind group layout is explicit: taken from ``writable`` (one flag per storage
        binding) and ``has_uniform`` when given, else parsed from the WGSL declarations; WGSL
        outside the binding convention gets layout 'auto'. Raises WGSLCompileError with the
        numbered source if the shader does not validate. Handles stay valid across device loss
        (the pipeline is rebuilt on the new device).
        """
        key = (wgsl, entry)
        p = self._pipeline_ids.get(key)
        if p is not None:
            return p
        self._ensure_device()
        if writable is not None:
            parsed = (tuple(bool(w) for w in writable), bool(has_uniform))
        else:
            parsed = parse_bindings(wgsl)
        pipe = _Pipeline(wgsl, entry, parsed)
        self._build(pipe)
        self._pipelines.append(pipe)
        p = self._pipeline_ids[key] = len(self._pipelines) - 1
        self._live[p] = pipe
        self._live_tail = None
        self._evict_pipelines()
        return p

    def _evict_pipelines(self) -> None:
        """Release the compiled objects of the least recently used pipelines beyond _LIVE_PIPELINES."""
        while len(self._live) > _LIVE_PIPELINES:
            self._live_tail = None
            _, old = self._live.popitem(last=False)
            old.gpu, old.generation = None, -1

    def live_pipelines(self) -> int:
        return len(self._live)

    def pipeline_bindings(self, p: int) -> tuple[tuple[bool, ...], bool]:
        """(writable flag per storage binding, has uniform) of pipeline p; ((), False) if the
        WGSL does not follow the binding convention (layout 'auto')."""
        pipe = self._pipelines[p]
        return pipe.writable, pipe.has_uniform

    def _layout(self, key):
        bgl = self._bgls.get(key)
        if bgl is None:
            writable, has_uniform = key
            compute = self._wgpu.ShaderStage.COMPUTE
            entries = [
                {
                    "binding": i,
                    "visibility": compute,
                    "buffer": {"type": "storage" if w else "read-only-storage"},
                }
                for i, w in enumerate(writable)
            ]
            if has_uniform:
                entries.append(
                    {
                        "binding": len(writable),
                        "visibility": compute,
                        "buffer": {"type": "uniform", "has_dynamic_offset": True},
                    }
                )
            group = self._device.create_bind_group_layout(entries=entries)
            layout = self._device.create_pipeline_layout(bind_group_layouts=[group])
            bgl = self._bgls[key] = (group, layout)
        return bgl

    def _build(self, pipe: _Pipeline) -> None:
        if os.environ.get("PYJAX_DEBUG") == "1":
            print(f"[pyjax wgpu] compiling pipeline (entry {pipe.entry!r}):\n{number_lines(pipe.wgsl)}")
        dev = self._device
        try:
            module = dev.create_shader_module(code=pipe.wgsl)
            layout = self._layout(pipe.layout_key)[1] if pipe.layout_key else "auto"
            pipe.gpu = dev.create_compute_pipeline(layout=layout, compute={"module": module, "entry_point": pipe.entry})
        except self._gpu_errors as e:
            err = self._translate(e, "pipeline")
            if isinstance(err, DeviceLostError):
                raise err from e
            raise WGSLCompileError(str(e), pipe.wgsl, pipe.entry) from e
        pipe.generation = self.generation
        self.stats["pipelines_compiled"] += 1

    # ---- dispatch -----------------------------------------------------------------------

    def _uniform_buffer(self, size: int):
        if size > self._ubuf_size:
            if self._ubuf is not None:
                self._ubuf.destroy()
            cap = max(4096, 1 << (size - 1).bit_length())
            self._ubuf = self._alloc(cap, self._usage_uniform, "dispatch")
            self._ubuf_size = cap
            self._ubuf_gen += 1
            self._bg_epoch += 1
            self._bind_groups.clear()  # they reference the old uniform buffer
        return self._ubuf

    def _entries(self, bufs: list[_Buffer], uoff: int, usize: int) -> list[dict]:
        """Bind-group entries: buffer i at binding i, then the uniform slice (if any) after them."""
        entries = [
            {"binding": i, "resource": {"buffer": b.gpu, "offset": 0, "size": max(4, _round4(b.nbytes))}}
            for i, b in enumerate(bufs)
        ]
        if usize:
            entries.append({"binding": len(bufs), "resource": {"buffer": self._ubuf, "offset": uoff, "size": usize}})
        return entries

    def _bind_group(self, layout_key, bufs: list[_Buffer], usize: int):
        key = (layout_key, tuple([b.key for b in bufs]), usize, self._ubuf_gen)  # b.key: (id(b.gpu), b.nbytes)
        bg = self._bind_groups.get(key)
        if bg is not None:
            return bg
        entries = self._entries(bufs, 0, usize)
        group = self._layout(layout_key)[0]
        if len(self._bind_groups) >= _BIND_GROUP_CACHE:
            self._bind_groups.clear()
        bg = self._bind_groups[key] = self._device.create_bind_group(layout=group, entries=entries)
        return bg

    def _auto_bind_group(self, pipe: _Pipeline, bufs: list[_Buffer], uoff: int, usize: int):
        # Fallback for WGSL outside the binding convention: layout 'auto' drops bindings the
        # shader does not use, so such shaders must use every binding they declare.
        entries = self._entries(bufs, uoff, usize)
        return self._device.create_bind_group(layout=pipe.gpu.get_bind_group_layout(0), entries=entries)

    def _grid(self, grid) -> tuple:
        if isinstance(grid, int):
            return grid_2d(grid, self._max_wg)
        if grid[0] == "indirect":  # ("indirect", buffer[, offset]): counts an earlier step wrote there
            return ("indirect", self._buf(grid[1]).gpu, grid[2] if len(grid) > 2 else 0)
        x, y, z = (tuple(grid) + (1, 1))[:3]
        if max(x, y, z) > self._max_wg:
            raise ValueError(
                f"workgroup counts {(x, y, z)} exceed max-compute-workgroups-per-"
                f"dimension {self._max_wg}; pass an int count or use grid_2d()"
            )
        return x, y, z

    def record(self, steps: Sequence[Step | tuple], nbuffers: int) -> int:
        """Validate and pack steps once for replaying: their buffers (and an indirect grid's
        buffer) are positions 0..nbuffers-1 of the handle list a ``Replay`` gives. Returns the
        recording's handle. A replay costs no per-step Python work: pipelines, uniforms, grids
        and bind groups (cached per set of bound buffers) are all ready."""
        rec = _Recording(nbuffers)
        distinct: dict = {}
        blob = bytearray()
        for i, s in enumerate(steps):
            p, refs, uniforms, grid = s
            pipe = self._pipelines[p]
            if pipe.layout_key is None:
                raise ValueError(f"pipeline {p} does not follow the binding convention: it cannot be recorded")
            check_recorded_step(i, p, refs, uniforms, (pipe.writable, pipe.has_uniform), nbuffers)
            uoff, usize = append_uniforms(blob, uniforms, self._ualign)
            if type(grid) is int or grid[0] != "indirect":
                g = self._grid(grid)
            else:
                g = grid
                rec.indirect.append(i)
            rec.steps.append((p, tuple(refs), uniforms, grid))
            rec.pipes.append(p)
            rec.binds.append(distinct.setdefault((pipe.layout_key, tuple(refs), usize), len(distinct)))
            rec.grids.append(g)
            rec.uoffs.append(uoff)
            rec.has_u.append(bool(usize))
        rec.distinct = list(distinct)
        rec.blob = bytes(blob)
        rec.pipe_set = sorted(set(rec.pipes))
        self._recordings.append(rec)
        return len(self._recordings) - 1

    def release_recording(self, r: int) -> None:
        """Forget a recording (its cached bind groups go with it)."""
        if 0 <= r < len(self._recordings):
            self._recordings[r] = None

    def _expand(self, rp: Replay) -> list:
        """A replay as plain steps (for the wrapped path)."""
        rec = self._recordings[rp.recording]
        hs = rp.buffers
        out = []
        for p, refs, uniforms, grid in rec.steps:
            if type(grid) is not int and grid[0] == "indirect":
                grid = ("indirect", hs[grid[1]], *grid[2:])
            out.append(Step(p, [hs[r] for r in refs], uniforms, grid))
        return out

    def dispatch(self, steps: Sequence[Step | Replay | tuple], read: tuple | None = None) -> bytes | None:
        """Record all steps in one command encoder (one compute pass) and submit once.

        read: (handle, nbytes, offset): also copy those bytes out in the same submit and return
        them, as ``read`` would after the dispatch (one submit less for a jitted call's result).

        Each step is Step(pipeline, buffers, uniforms, grid), the same 4-tuple, or a Replay of a
        recording. The uniform bytes of all steps go into one uniform buffer with one write,
        each at an offset aligned to min-uniform-buffer-offset-alignment and bound through a
        dynamic offset. WebGPU orders the steps: a step sees the writes of the steps before it.
        """
        self._ensure_device()
        if not steps:
            return None if read is None else self.read(*read)
        if read is not None:
            buf, start, size, n = self._read_range(*read)
            if not n:
                self.dispatch(steps)
                return self.read(*read)
        if self._raw is None:
            return self._dispatch_wrapped(steps, read)
        gps, grids, uoffs, has_u, items = [], [], [], [], []
        blob = bytearray()
        count = 0
        live = self._live
        buffers = self._buffers
        for s in steps:
            if type(s) is Replay:
                rec = self._recordings[s.recording]
                if len(s.buffers) != rec.nbuffers:
                    raise ValueError(
                        f"replay of recording {s.recording} gives {len(s.buffers)} buffers, needs {rec.nbuffers}"
                    )
                try:  # (_buf's lookup; the device was checked above)
                    bufs = [buffers[h] for h in s.buffers]
                except KeyError:
                    bufs = [self._buf(h) for h in s.buffers]
                gp = self._replay_pipelines(rec)
                base = -(-len(blob) // self._ualign) * self._ualign if rec.blob else len(blob)
                if rec.blob:
                    blob += bytes(base - len(blob)) + rec.blob
                gps.extend(gp)
                uoffs.extend(rec.uoffs if not base else [base + o for o in rec.uoffs])
                has_u.extend(rec.has_u)
                if rec.indirect:
                    g = list(rec.grids)
                    for i in rec.indirect:
                        g[i] = ("indirect", bufs[g[i][1]].gpu, g[i][2] if len(g[i]) > 2 else 0)
                    grids.extend(g)
                else:
                    grids.extend(rec.grids)
                items.append((rec, bufs, None))
                count += len(rec.pipes)
                continue
            p, handles, uniforms, grid = s
            pipe = self._pipelines[p]
            if pipe.layout_key is None:  # layout 'auto': wgpu-py's objects record it
                return self._dispatch_wrapped(steps, read)
            self._live_tail = None
            if pipe.generation != self.generation:
                self._build(pipe)
                live[p] = pipe
            else:
                live.move_to_end(p)
            bufs = [self._buf(h) for h in handles]
            self._check_step(p, pipe, handles, bufs, uniforms)
            uoff, usize = append_uniforms(blob, uniforms, self._ualign)
            gps.append(pipe.gpu._internal)
            grids.append(self._grid(grid))
            uoffs.append(uoff)
            has_u.append(bool(usize))
            items.append((pipe, bufs, usize))
            count += 1
        staged = None
        try:
            if read is not None:
                staged = self._stage_buffer(size)
            self._submit_raw(blob, gps, items, grids, uoffs, has_u, staged and (buf, start, size, staged[0]))
        except self._gpu_errors as e:
            raise self._translate(e, "dispatch") from e
        self.stats["submits"] += 1
        self.stats["dispatches"] += count
        self._evict_pipelines()  # after the submit: this batch's pipelines were all in use
        if staged is None:
            return None
        return self._take_read(staged, size, read[2] - start, n)

    def _take_read(self, staged, size: int, skip: int, n: int) -> bytes:
        st, cls = staged
        try:
            out = self._map_read_raw(st, size)[skip : skip + n]
        except self._gpu_errors as e:
            raise self._translate(e, "read") from e
        self._staging_pool.setdefault(cls, []).append(st)
        return out

    def _check_step(self, p: int, pipe: _Pipeline, handles, bufs: list, uniforms) -> None:
        if len(bufs) != len(pipe.writable):
            raise ValueError(f"pipeline {p} binds {len(pipe.writable)} storage buffers, step gives {len(bufs)}")
        if (uniforms is not None) != pipe.has_uniform:
            raise ValueError(f"pipeline {p} {'needs' if pipe.has_uniform else 'has no'} uniforms")
        if len(set(handles)) != len(bufs):
            for h, b, w in zip(handles, bufs, pipe.writable):
                if w and sum(o is b for o in bufs) > 1:
                    # WebGPU rejects a writable binding aliased with another binding.
                    raise ValueError(f"buffer {h} is bound read_write and also bound again in the same step")

    def _replay_pipelines(self, rec: _Recording) -> list:
        """The recording's compiled pipelines per step (rebuilt where evicted or the device is new)."""
        if self._live_tail is rec and rec.gps is not None:  # moving them to the end again changes nothing
            return rec.gps
        self._live_tail = None
        live = self._live
        stale = False
        for p in rec.pipe_set:
            pipe = self._pipelines[p]
            if pipe.generation != self.generation:
                self._build(pipe)
                live[p] = pipe
                stale = True
            else:
                live.move_to_end(p)
        if stale or rec.gps is None:
            rec.gps = [self._pipelines[p].gpu._internal for p in rec.pipes]
            rec.gps_keep = [self._pipelines[p].gpu for p in rec.pipe_set]
        self._live_tail = rec
        return rec.gps

    def _replay_groups(self, rec: _Recording, bufs: list) -> tuple:
        """(bind groups, the pointer of every step's) of a replay on these buffers. Cached per set
        of buffers; on a new set only the bind groups of positions bound to other buffers than
        the last replay's are looked up again (a program's own buffers stay, its outputs vary)."""
        ids = tuple([b.key for b in bufs])  # (id(b.gpu), b.nbytes) each
        key = (ids, self._bg_epoch)
        hit = rec.groups.get(key)
        if hit is not None:
            return hit
        last = rec.last
        if last is None or last[0][1] != self._bg_epoch:
            objs = [None] * len(rec.distinct)
            changed = None
        else:
            objs = list(last[1][0])
            changed = {i for i, (x, y) in enumerate(zip(ids, last[0][0])) if x != y}
        for d, (layout_key, refs, usize) in enumerate(rec.distinct):
            if changed is None or any(r in changed for r in refs):
                objs[d] = self._bind_group(layout_key, [bufs[r] for r in refs], usize)
        ptrs = [objs[k]._internal for k in rec.binds]
        if len(rec.groups) >= 64:
            rec.groups.clear()
        hit = rec.groups[key] = (objs, ptrs)
        rec.last = (key, hit)
        return hit

    def _dispatch_wrapped(self, steps, read):
        """dispatch's recording and submit through wgpu-py's objects (any pipeline layout)."""
        flat = []
        for s in steps:
            flat.extend(self._expand(s) if type(s) is Replay else [s if isinstance(s, Step) else Step(*s)])
        pipes, bufsets, grids, uoffs, usizes = [], [], [], [], []
        blob = bytearray()
        self._live_tail = None
        for s in flat:
            pipe = self._pipelines[s.pipeline]
            if pipe.generation != self.generation:
                self._build(pipe)
                self._live[s.pipeline] = pipe
            else:
                self._live.move_to_end(s.pipeline)
            bufs = [self._buf(h) for h in s.buffers]
            if pipe.layout_key is not None:
                self._check_step(s.pipeline, pipe, s.buffers, bufs, s.uniforms)
            uoff, usize = append_uniforms(blob, s.uniforms, self._ualign)
            pipes.append(pipe)
            bufsets.append(bufs)
            grids.append(self._grid(s.grid))
            uoffs.append(uoff)
            usizes.append(usize)
        staged = None
        if read is not None:
            buf, start, size, n = self._read_range(*read)
        try:
            if blob:
                self._queue.write_buffer(self._uniform_buffer(len(blob)), 0, blob)
                self._ublob = None
            enc = self._device.create_command_encoder()
            cpass = enc.begin_compute_pass()
            for pipe, bufs, grid, uoff, usize in zip(pipes, bufsets, grids, uoffs, usizes):
                cpass.set_pipeline(pipe.gpu)
                if pipe.layout_key is not None:
                    bg = self._bind_group(pipe.layout_key, bufs, usize)
                    cpass.set_bind_group(0, bg, [uoff] if usize else [])
                else:
                    cpass.set_bind_group(0, self._auto_bind_group(pipe, bufs, uoff, usize))
                if grid[0] == "indirect":
                    cpass.dispatch_workgroups_indirect(grid[1], grid[2])
                else:
                    cpass.dispatch_workgroups(*grid)
            cpass.end()
            if read is not None:
                staged = self._stage(buf, start, size, enc)
            self._queue.submit([enc.finish()])
        except self._gpu_errors as e:
            raise self._translate(e, "dispatch") from e
        self.stats["submits"] += 1
        self.stats["dispatches"] += len(flat)
        self._evict_pipelines()
        if staged is None:
            return None
        st, cls = staged
        st.map_sync(self._wgpu.MapMode.READ, 0, size)
        return self._unstage(st, cls, size, read[2] - start, n)

    def _stage_buffer(self, size: int):
        """(a pooled staging buffer of at least size bytes, its size class)."""
        cls = _size_class(size)
        free = self._staging_pool.get(cls)
        return (free.pop() if free else self._alloc(cls, self._usage_staging, "read")), cls

    def _submit_raw(self, blob, gps, items, grids, uoffs, has_u, copy) -> None:
        """Write the uniforms, record the steps (and the copy (buf, start, size, staging) if
        any) and submit, through wgpu-native's C functions: wgpu-py's objects and descriptors
        cost ~45% of a tiny awaited call's host time on the H200. finish() and submit go through
        wgpu-py's error-capturing wrappers (libf), so validation errors still raise."""
        ffi, lib = self._raw
        libf = self._libf
        if blob:
            ub = self._uniform_buffer(len(blob))
            if (ub, blob) != self._ublob:  # the same uniforms as the last submit: still there
                libf.wgpuQueueWriteBuffer(self._queue._internal, ub._internal, 0, ffi.from_buffer(blob), len(blob))
                self._ublob = (ub, bytes(blob))
        bgs, keep = [], []  # after the uniform buffer is sized (bind groups bind it); kept alive until recorded
        for a, bufs, usize in items:
            if usize is None:  # a replay
                objs, ptrs = self._replay_groups(a, bufs)
                keep.append(objs)
                bgs.extend(ptrs)
            else:
                bg = self._bind_group(a.layout_key, bufs, usize)
                keep.append(bg)
                bgs.append(bg._internal)
        enc = lib.wgpuDeviceCreateCommandEncoder(self._device._internal, ffi.NULL)
        try:
            cp = lib.wgpuCommandEncoderBeginComputePass(enc, ffi.NULL)
            try:
                if gps:
                    self._record_raw(cp, gps, bgs, grids, uoffs, has_u)
                lib.wgpuComputePassEncoderEnd(cp)
            finally:
                lib.wgpuComputePassEncoderRelease(cp)
            if copy is not None:
                b, start, size, st = copy
                lib.wgpuCommandEncoderCopyBufferToBuffer(enc, b.gpu._internal, start, st._internal, 0, size)
            cb = libf.wgpuCommandEncoderFinish(enc, ffi.NULL)
        finally:
            lib.wgpuCommandEncoderRelease(enc)
        try:
            libf.wgpuQueueSubmit(self._queue._internal, 1, ffi.new("WGPUCommandBuffer[1]", [cb]))
        finally:
            lib.wgpuCommandBufferRelease(cb)

    def _record_raw(self, cp, gps, bgs, grids, uoffs, has_u) -> None:
        """The steps' pipeline/bind group/dispatch commands through wgpu-native's C functions.

        wgpu-py's wrappers capture errors around every call (~5 us each on the H200's host, three
        calls a dispatch: most of an MLP train step's 250 us of Python); recording errors are
        reported by the encoder's finish() all the same. The pass keeps what it binds alive.
        """
        ffi, lib = self._raw
        set_pipeline = lib.wgpuComputePassEncoderSetPipeline
        set_group = lib.wgpuComputePassEncoderSetBindGroup
        run = lib.wgpuComputePassEncoderDispatchWorkgroups
        run_indirect = lib.wgpuComputePassEncoderDispatchWorkgroupsIndirect
        offs = ffi.new("uint32_t[]", uoffs)
        null = ffi.NULL
        last = None
        for i, (gp, bg, grid, u) in enumerate(zip(gps, bgs, grids, has_u)):
            if gp != last:
                set_pipeline(cp, gp)
                last = gp
            if u:
                set_group(cp, 0, bg, 1, offs + i)
            else:
                set_group(cp, 0, bg, 0, null)
            if grid[0] == "indirect":
                run_indirect(cp, grid[1]._internal, grid[2])
            else:
                run(cp, grid[0], grid[1], grid[2])

    def max_workgroups(self) -> int:
        """max-compute-workgroups-per-dimension of the device (65535 by default)."""
        return self._max_wg

    def __repr__(self) -> str:
        desc = self.adapter_info.get("device") or self.adapter_info.get("description", "?")
        return f"WgpuHost({desc!r}, {self.adapter_info.get('backend_type', '?')}, f16={self.has_f16})"
