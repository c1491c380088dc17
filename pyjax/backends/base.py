"""The Backend contract: what the runtime asks of a device. Backends never see primitives.

Buffers are integer slots of raw bytes. Executables come from prepare_kernel/prepare_routine
and are cached by the IR's structural hash, so the same Kernel built twice compiles once. The
caches are bounded (least recently used out; sizes from PYJAX_KERNEL_CACHE / PYJAX_ROUTINE_CACHE,
default 1024 / 256): a program that holds an evicted executable keeps it alive itself.
"""

from __future__ import annotations

from collections import deque

from pyjax.compiler.ir import Kernel, Routine
from pyjax.core.lru import LRUCache, cache_size


class Backend:
    name = "?"
    max_buffer_bytes: int | None = None  # largest buffer the device holds (None: no limit)
    limit_reason = ""  # why, for the error message (see pyjax.backends.limits)

    @classmethod
    async def prepare_async(cls) -> None:
        """Asynchronous platform setup before the backend is created (the browser can request
        its GPU device only asynchronously); raises when the platform is unavailable."""

    async def start_async(self) -> None:
        """Await the host's own start (the browser's wasm host starts its thread pool)."""
        start = getattr(getattr(self, "host", None), "start_async", None)
        if start is not None:
            await start()

    @property
    def lost(self) -> bool:
        """Has the device gone away (a lost GPU device)? Its buffers are gone with it."""
        return bool(getattr(getattr(self, "host", None), "lost", False))

    def __init__(self):
        self._kernel_cache = LRUCache(cache_size("kernel", 1024))
        self._routine_cache = LRUCache(cache_size("routine", 256))
        # weak references of garbage-collected runtime Buffers, queued by the collector; the
        # runtime frees their slots at its next allocation (see pyjax.runtime.buffers)
        self.dead: deque = deque()

    # --- memory ---
    def malloc(self, nbytes: int) -> int:
        raise NotImplementedError

    def free(self, slot: int) -> None:
        raise NotImplementedError

    def write(self, slot: int, data) -> None:
        """Copy bytes (or a buffer-protocol object) into the slot."""
        raise NotImplementedError

    def read(self, slot: int, nbytes: int) -> bytes:
        raise NotImplementedError

    async def read_async(self, slot: int, nbytes: int) -> bytes:
        return self.read(slot, nbytes)

    def copy(self, src: int, src_off: int, dst: int, dst_off: int, nbytes: int) -> None:
        raise NotImplementedError

    def live_buffers(self) -> int:
        raise NotImplementedError

    def synchronize(self) -> None:
        """Block until all dispatched work is done."""

    async def synchronize_async(self) -> None:
        """Await all dispatched work (the browser's WebGPU can only wait asynchronously)."""
        self.synchronize()

    # --- compute ---
    def prepare_kernel(self, kernel: Kernel):
        exe = self._kernel_cache.get(kernel)
        if exe is None:
            exe = self._kernel_cache[kernel] = self.compile_kernel(kernel)
        return exe

    def clear_caches(self) -> None:
        """Drop the cached executables (programs that hold one keep it)."""
        self._kernel_cache.clear()
        self._routine_cache.clear()

    def prepare_routine(self, routine: Routine):
        exe = self._routine_cache.get(routine)
        if exe is None:
            exe = self._routine_cache[routine] = self.compile_routine(routine)
        return exe

    def compile_kernel(self, kernel: Kernel):
        raise NotImplementedError

    def compile_routine(self, routine: Routine):
        raise NotImplementedError

    def dispatch(self, exe, in_slots: list, out_slots: list) -> None:
        raise NotImplementedError
