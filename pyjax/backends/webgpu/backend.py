"""The webgpu backend: Kernels and Routines as WGSL compute shaders, run by a WebGPU host.

Buffers are host handles holding the same bytes as the cpu backend (sizes rounded up to 16
bytes so vec4 and packed-word stores stay inside). Dispatches are queued, not submitted: the
queue is flushed as ONE `host.dispatch(steps)` (one command encoder, one submit) when the
runtime reads a buffer, synchronizes, or the queue grows long. Buffers freed while queued work
still uses them are released only after that work is submitted, and copies run as compute
steps in the same encoder, so the order of work is always the program's order.

64-bit dtypes (WGSL has no f64/i64) and routines without a GPU implementation run on the host
through the cpu reference evaluator, after the queue is flushed: correct, but a sync point.
"""

from __future__ import annotations

import os
import struct
import time

from pyjax import backends
from pyjax.backends import limits
from pyjax.backends.base import Backend
from pyjax.backends.webgpu import replay as _replay
from pyjax.backends.webgpu import routines as _routines
from pyjax.backends.webgpu.gpu_kernel import Caps, GPUKernel
from pyjax.backends.webgpu.renderer import DEBUG, render_kernel
from pyjax.backends.webgpu.wgsl import copy_shader
from pyjax.compiler.ir import Kernel, Routine
from pyjax.core.lru import LRUCache, cache_size
from pyjax.hosts.webgpu_contract import Replay

_MAX_QUEUE = int(os.environ.get("PYJAX_WEBGPU_MAX_QUEUE", "256"))
# Flush once this many workgroups are queued and _MIN_FLUSH_GAP seconds passed since the last
# flush: the GPU starts on big work while Python records the next calls, and a kernel of many
# workgroups is not submitted alone each call (submits cost the host too). H200, 8192^2 f32
# sums, 100 calls back to back, column/full/row: flushing at a fixed 4096 gave 3,317-3,411 /
# 2,664-3,520 / 2,347-3,028 GB/s, a fixed 65536 2,021-2,059 / 2,579-2,610 / 3,468-3,498.
_MAX_QUEUED_WORKGROUPS = 4096
_MIN_FLUSH_GAP = 150e-6
_SCRATCH_BYTES = 256 << 20  # scratch kept across calls (WebGPUBackend.scratch)


def _round16(n: int) -> int:
    return (n + 15) & ~15


_COPY_WGSL = copy_shader()


class HostExe:
    """A Kernel or Routine run on the host by the cpu reference evaluator."""

    __slots__ = ("ir",)

    def __init__(self, ir_obj):
        self.ir = ir_obj


class WebGPUBackend(Backend):
    """IR -> WGSL, dispatched in batches through a WebGPU host (wgpu-py natively, navigator.gpu
    in the browser)."""

    name = "webgpu"

    @classmethod
    async def prepare_async(cls) -> None:
        """The browser requests its GPU device asynchronously: open the host before creating."""
        from pyjax import hosts

        await hosts.webgpu_host_async()

    def __init__(self, host=None):
        super().__init__()
        if host is None:
            from pyjax import hosts

            host = hosts.webgpu_host()
        self.host = host
        # SwiftShader's plans (Caps.cpu_adapter) only there: lavapipe (also a CPU) keeps the
        # plans that real GPUs take, so CI tests those.
        adapter = str(getattr(host, "adapter_info", {}).get("device", "")).lower()
        self.caps = Caps(getattr(host, "limits", {}), bool(getattr(host, "has_f16", False)), "swiftshader" in adapter)
        lim = getattr(host, "limits", {})
        sizes = [lim.get(k) for k in ("max-buffer-size", "maxBufferSize")]
        sizes += [lim.get(k) for k in ("max-storage-buffer-binding-size", "maxStorageBufferBindingSize")]
        sizes = [int(v) for v in sizes if v]
        self.max_buffer_bytes = min(sizes) if sizes else None
        self.limit_reason = "the adapter's maxBufferSize / maxStorageBufferBindingSize"
        self._nbytes: dict[int, int] = {}
        self._queue: list = []
        self._queued_wgs = 0  # workgroups of the queued steps (int grids)
        self._replayed = 0  # dispatches queued inside Replays beyond one each
        self._flushed_at = 0.0  # perf_counter() of the last flush
        self._read_in_dispatch = bool(getattr(host, "reads_in_dispatch", False))  # dispatch(steps, read=...)
        self._records = hasattr(host, "record")  # plans replay host recordings (see replay.py)
        self.dead_recordings: list = []  # of plans gone: released by the host after the next flush
        self._busy: set = set()
        self._dead: list = []
        self._recycle: dict = {}  # padded size -> freed handles still used by queued work
        self._temps: list = []
        self._scratch: dict = {}  # (padded size, j) -> buffer kept for kernels' partial results
        self._pipes = LRUCache(cache_size("wgsl", 2048))  # WGSL text -> host pipeline handle
        self._cpu = None
        self._sentinel = None
        self.stats = {"flushes": 0, "steps": 0, "host_fallbacks": 0}

    # --- memory ---------------------------------------------------------------------------
    def malloc(self, nbytes: int) -> int:
        size = _round16(max(nbytes, 1))
        free = self._recycle.get(size)
        if free:
            # A buffer freed while queued work still reads it: later dispatches in the same
            # command encoder are ordered after that work, so it can hold a new output now.
            # (It stays busy, so a host write to it flushes the queue first.)
            h = free.pop()
        else:
            h = self.host.create_buffer(size)
        self._nbytes[h] = nbytes
        return h

    def free(self, slot: int) -> None:
        n = self._nbytes.pop(slot, None)
        if n is None:
            return
        if slot in self._busy:
            self._recycle.setdefault(_round16(max(n, 1)), []).append(slot)
        else:
            self.host.release_buffer(slot)

    def nbytes(self, slot: int) -> int:
        return self._nbytes[slot]

    def write(self, slot: int, data) -> None:
        if slot in self._busy:
            self.flush()
        mv = memoryview(data).cast("B")
        n = mv.nbytes
        if n == 0:
            return
        if n % 4:
            mv = bytes(mv) + bytes(4 - n % 4)
        self.host.write(slot, mv)

    def read(self, slot: int, nbytes: int) -> bytes:
        if nbytes > 0 and self._queue and self._read_in_dispatch:
            return bytes(self.flush(read=(slot, nbytes, 0)))  # the queued work and the copy: one submit
        self.flush()
        if nbytes <= 0:
            return b""
        return bytes(self.host.read(slot, nbytes))

    async def read_async(self, slot: int, nbytes: int) -> bytes:
        self.flush()
        if nbytes <= 0:
            return b""
        return bytes(await self.host.read_async(slot, nbytes))

    def copy(self, src: int, src_off: int, dst: int, dst_off: int, nbytes: int) -> None:
        if nbytes <= 0:
            return
        if src == dst:
            tmp = self.temp(nbytes)
            self._copy_step(src, src_off, tmp, 0, nbytes)
            self._copy_step(tmp, 0, dst, dst_off, nbytes)
        else:
            self._copy_step(src, src_off, dst, dst_off, nbytes)
        self._maybe_flush()

    def _copy_step(self, src, src_off, dst, dst_off, nbytes) -> None:
        words = -(-(dst_off + nbytes) // 4) - dst_off // 4
        self.step(self.copy_pipeline(), [src, dst], struct.pack("<4I", src_off, dst_off, nbytes, 0), -(-words // 256))

    def copy_pipeline(self) -> int:
        """The pipeline of copies: uniforms (src offset, dst offset, bytes, 0), one workgroup per 1 KiB."""
        return self.pipeline(_COPY_WGSL)

    def live_buffers(self) -> int:
        return len(self._nbytes) - len(self.dead) - self.constants  # dead: collected, freed at the next allocation

    def synchronize(self) -> None:
        self.flush()
        self.host.sync()

    async def synchronize_async(self) -> None:
        self.flush()
        sync_async = getattr(self.host, "sync_async", None)
        if sync_async is not None:  # the browser host
            await sync_async()
            return
        if self._sentinel is None:
            self._sentinel = self.host.create_buffer(16)
        await self.host.read_async(self._sentinel, 4)

    def clear_caches(self) -> None:
        super().clear_caches()
        self._pipes.clear()
        self._dead.extend(self._scratch.values())  # freed after the next flush (queued work may use them)
        self._scratch.clear()

    # --- queue ----------------------------------------------------------------------------
    def pipeline(self, wgsl_text: str) -> int:
        """A pipeline handle for WGSL text (cached here and by the host)."""
        p = self._pipes.get(wgsl_text)
        if p is None:
            if DEBUG and os.environ.get("PYJAX_DEBUG") == "wgsl":
                print(f"[pyjax webgpu] WGSL:\n{wgsl_text}")
            p = self._pipes[wgsl_text] = self.host.pipeline(wgsl_text)
        return p

    def step(self, pipeline: int, buffers: list, uniforms: bytes | None, grid) -> None:
        """Queue one dispatch (recorded into the next flush's command encoder)."""
        if isinstance(grid, int) and grid <= 0:
            return
        self._queue.append((pipeline, list(buffers), uniforms, grid))
        self._busy.update(buffers)
        if type(grid) is int:
            self._queued_wgs += grid

    def temp(self, nbytes: int) -> int:
        """A scratch buffer released after the next flush (only queued work may use it)."""
        h = self.host.create_buffer(_round16(max(nbytes, 4)))
        self._temps.append(h)
        self._busy.add(h)
        return h

    def scratch(self, nbytes: int, j: int) -> int:
        """A kernel's j-th scratch buffer (partial sums, sort passes), kept across calls.

        Queued dispatches run in order (and are queued under the runtime's lock), so every
        kernel can share it; a fresh temp per call cost a buffer and new bind groups each time
        (a full sum of 2^26 floats spent more time on that than on the GPU). At most 16 buffers
        and 256 MiB are kept (the newest always); an evicted one is freed after the next flush.
        """
        key = (_round16(max(nbytes, 4)), j)
        h = self._scratch.pop(key, None)
        if h is None:  # a new one makes room (a kept one, moved to the newest end, already fit)
            h = self.host.create_buffer(key[0])
            kept = sum(size for size, _ in self._scratch)
            while self._scratch and (len(self._scratch) >= 16 or kept + key[0] > _SCRATCH_BYTES):
                old = next(iter(self._scratch))  # least recently used first
                kept -= old[0]
                self._dead.append(self._scratch.pop(old))
        self._scratch[key] = h
        self._busy.add(h)
        return h

    def _maybe_flush(self) -> None:
        if len(self._queue) + self._replayed >= _MAX_QUEUE or (
            self._queued_wgs >= _MAX_QUEUED_WORKGROUPS and time.perf_counter() - self._flushed_at >= _MIN_FLUSH_GAP
        ):
            self.flush()

    def flush(self, read: tuple | None = None):
        """Submit all queued dispatches in one command encoder, then release dead buffers.
        read: (slot, nbytes, offset) copied out in the same submit (hosts that take `read`)."""
        if not self._queue:
            self._release()
            return None
        steps, self._queue = self._queue, []
        self._queued_wgs = 0
        self._replayed = 0
        self._flushed_at = time.perf_counter()
        try:
            return self.host.dispatch(steps, read=read) if read is not None else self.host.dispatch(steps)
        finally:
            self.stats["flushes"] += 1
            self.stats["steps"] += len(steps)
            self._release()

    def _release(self) -> None:
        for hs in self._recycle.values():
            self._dead.extend(hs)
        self._recycle.clear()
        dead, self._dead = self._dead, []
        temps, self._temps = self._temps, []
        self._busy.clear()
        for h in dead + temps:
            try:
                self.host.release_buffer(h)
            except Exception:  # device lost: the buffer is gone already
                pass
        while self.dead_recordings:
            self.host.release_recording(self.dead_recordings.pop())

    # --- compute --------------------------------------------------------------------------
    def compile_kernel(self, kernel: Kernel):
        limits.check_kernel(kernel, self.name)
        gk = render_kernel(kernel, self.caps)
        if gk.host_fallback:
            return HostExe(kernel)
        for launch in gk.launches:
            launch.pipeline = self.pipeline(launch.wgsl)
        return gk

    def compile_routine(self, routine: Routine):
        limits.check_routine(routine, self.name)
        exe = _routines.compile_routine(routine, self)
        return HostExe(routine) if exe is None else exe

    def dispatch(self, exe, in_slots: list, out_slots: list) -> None:
        if type(exe) is GPUKernel:
            self.run_kernel(exe, in_slots, out_slots)
        elif type(exe) is HostExe:
            self._host_run(exe.ir, in_slots, out_slots)
        else:
            exe.enqueue(self, list(in_slots), list(out_slots))
        self._maybe_flush()

    def run_plan(self, plan, slots: list) -> None:
        """Queue a Plan: its recorded runs of kernels as one Replay each (replay.py), the rest
        walked as the base Backend does."""
        nodes = plan.cache
        if nodes is None:
            nodes = plan.cache = _replay.build(self, plan) if self._records else False
        if nodes is False:
            return super().run_plan(plan, slots)
        counters = None
        for node in nodes:
            if type(node) is _replay.Recorded:
                self._queue_replay(node, slots)
                self._maybe_flush()
            elif type(node) is _replay.Speculative:
                self._run_speculative(node, slots)
            elif type(node) is _replay.Chunked:
                self._run_chunked(node, slots)
            else:
                if counters is None:
                    counters = [0] * plan.levels
                self._run_steps([node], slots, counters)

    def _queue_replay(self, node, slots: list) -> None:
        hs = [slots[p] for p in node.params]
        if node.scratch:
            hs += [self.scratch(n, j) for n, j in node.scratch]
        hs += node.fixed
        self._queue.append(Replay(node.recording, hs))
        self._busy.update(hs)
        self._queued_wgs += node.workgroups
        self._replayed += node.steps - 1

    def _run_speculative(self, spec, slots: list) -> None:
        """A while loop k trips per read back of the predicates (replay.Speculative); with while
        loops nested in it, trip i's overflow word comes back in the same read."""
        k = _replay.FIRST_TRIPS
        while True:
            k = min(k, spec.limit())
            if k < 1:  # a nested loop needs more trips than a recording holds: walk the rest
                return self._run_steps([spec.loop], slots, [0] * spec.levels)
            self._queue_replay(spec.trips(k, self), slots)
            if not spec.scope.trips:
                preds = self.read(spec.preds, k)
            else:
                got = self.read(spec.preds, spec.overflow_at + 4 * k)
                preds, ovf = got[:k], got[spec.overflow_at :]
            j = next((i for i, b in enumerate(preds) if not b), -1)
            if spec.scope.trips:
                words = struct.unpack(f"<{k}I", ovf[: 4 * k])
                o = next((i for i in range(j if j >= 0 else k) if words[i]), -1)
                if o >= 0:  # trip o's nested loop did not finish: rerun from trip o, more trips
                    self._restore(spec, o, slots)
                    spec.scope.grow(words[o])
                    spec.recorded.clear()
                    continue
            if j >= 0:
                self._restore(spec, j, slots)
                self._maybe_flush()
                return
            k = min(2 * k, spec.max_trips)

    def _restore(self, spec, trip: int, slots: list) -> None:
        """The loop state as trip `trip` of a Speculative began (its snapshot slot)."""
        for (p, n), off in zip(spec.carry, spec.offsets):
            self._copy_step(spec.snap, trip * spec.stride + off, slots[p], 0, n)

    def _run_chunked(self, node, slots: list) -> None:
        """A fixed-trip loop as Replays of chunks of trips (replay.Chunked); with while loops
        nested in it, one read of the overflow word and the nested trips run per chunk."""
        rep, i = node.rep, 0
        while i < rep.count:
            n = (_replay.MAX_STEPS - len(node.state) - 1) // node.per_trip()
            if (
                n < 1 or node.walk
            ):  # walk the rest: a nested loop needs more trips than a recording holds, or wastes them
                counters = [0] * node.levels
                for t in range(i, rep.count):
                    counters[rep.level] = t
                    self._run_steps(rep.body, slots, counters)
                return
            n = min(n, rep.count - i)
            self._queue_replay(node.chunk(i, n, self), slots)
            if node.scope.trips:
                ovf, ran = struct.unpack("<2I", self.read(node.buf, 8))
                if ovf:  # back to the chunk's start, more trips per loop
                    for p, nbytes, off in node.state:
                        if nbytes:
                            self._copy_step(node.buf, off, slots[p], 0, nbytes)
                    node.scope.grow(ovf)
                    node.recorded.clear()
                    continue
                node.walk = node.trips[(i if node.varies else 0, n)] > _replay.WASTE * ran + n
            self._maybe_flush()
            i += n

    def run_kernel(self, gk: GPUKernel, in_slots: list, out_slots: list) -> None:
        """Queue the launches of a compiled kernel."""
        temps = [self.scratch(n, j) for j, n in enumerate(gk.temps)]
        for launch in gk.launches:
            grid = launch.grid
            if type(grid) is tuple and grid[0] == "tmp":  # counts an earlier launch wrote there
                grid = ("indirect", temps[grid[1]])
            mrg = None
            uniforms = launch.uniforms
            if launch.merged:  # the merged inputs' bases come first in the uniform struct
                mrg, bases = self._merge([in_slots[i] for i in launch.merged])
                uniforms = bases + (uniforms or b"")
            bufs = []
            for role in launch.roles:
                kind = role[0]
                if kind == "in":
                    bufs.append(in_slots[role[1]])
                elif kind == "out":
                    bufs.append(out_slots[role[1]])
                elif kind == "tmp":
                    bufs.append(temps[role[1]])
                else:
                    bufs.append(mrg)
            self.step(launch.pipeline, bufs, uniforms, grid)

    def _merge(self, slots: list) -> tuple:
        """Copy several inputs into one scratch buffer; (handle, uniform bytes of word bases)."""
        bases, total = [], 0
        for s in slots:
            bases.append(total // 4)
            total += _round16(max(self._nbytes.get(s, 4), 4))
        mrg = self.temp(total)
        for s, base in zip(slots, bases):
            n = self._nbytes.get(s, 0)
            if n:
                self._copy_step(s, 0, mrg, base * 4, n)
        bases += [0] * (-len(bases) % 4)
        return mrg, struct.pack(f"<{len(bases)}I", *bases)

    def _host_run(self, ir_obj, in_slots: list, out_slots: list) -> None:
        """Run a Kernel/Routine with the cpu reference evaluator (inputs read back, outputs written)."""
        if self._cpu is None:
            self._cpu = backends.create("cpu")
        cpu = self._cpu
        self.stats["host_fallbacks"] += 1
        self.flush()
        cin, couts = [], []
        try:
            for s in in_slots:
                n = self._nbytes[s]
                c = cpu.malloc(max(n, 1))
                cin.append(c)
                if n:
                    cpu.write(c, self.host.read(s, n))
            for s in out_slots:
                couts.append(cpu.malloc(max(self._nbytes[s], 1)))
            exe = cpu.prepare_kernel(ir_obj) if isinstance(ir_obj, Kernel) else cpu.prepare_routine(ir_obj)
            cpu.dispatch(exe, cin, couts)
            for s, c in zip(out_slots, couts):
                n = self._nbytes[s]
                if n:
                    self.write(s, cpu.read(c, n))
        finally:
            for c in cin + couts:
                cpu.free(c)

    def __repr__(self) -> str:
        return f"WebGPUBackend({self.host!r})"
