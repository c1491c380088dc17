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

# --- plans: whole loops handed to the backend at once ---------------------------------------------
#
# A Plan is a tree of steps over numbered buffer slots ("params"): `run_plan(plan, slots)` runs it
# with slots[p] the backend slot of param p. Loop counters are numbered by nesting depth; a Copy's
# offset may move with one counter (scan slices xs and stacks ys that way). Backends run plans in
# generated code where they can (wasm: one driver module); `Backend.run_plan` is the default, a
# Python walk of the tree (no Array, jaxpr or allocation work per trip).


class Call:
    """Run an executable: ins/outs are params."""

    __slots__ = ("exe", "ins", "outs")

    def __init__(self, exe, ins, outs):
        self.exe, self.ins, self.outs = exe, tuple(ins), tuple(outs)


class Copy:
    """nbytes from param src at src_off to param dst at dst_off; an offset moves by its stride times
    counter `level` (level None: fixed)."""

    __slots__ = ("dst", "dst_off", "src", "src_off", "nbytes", "level", "dst_stride", "src_stride")

    def __init__(self, dst, dst_off, src, src_off, nbytes, level=None, dst_stride=0, src_stride=0):
        self.dst, self.dst_off, self.src, self.src_off, self.nbytes = dst, dst_off, src, src_off, nbytes
        self.level, self.dst_stride, self.src_stride = level, dst_stride, src_stride


class Repeat:
    """body `count` times with counter `level` = 0, 1, ..., count - 1."""

    __slots__ = ("count", "level", "body")

    def __init__(self, count, level, body):
        self.count, self.level, self.body = count, level, body


class While:
    """Run cond, then while the bool at param pred is true: body, cond."""

    __slots__ = ("cond", "pred", "body")

    def __init__(self, cond, pred, body):
        self.cond, self.pred, self.body = cond, pred, body


class Switch:
    """Run branches[clamp(int32 at param index)]."""

    __slots__ = ("index", "branches")

    def __init__(self, index, branches):
        self.index, self.branches = index, branches


class Plan:
    """steps over params; nbytes[p] is param p's size. Params below n_external are bound per run
    (a call's inputs and outputs), the others to buffers fixed for the plan's life."""

    __slots__ = ("steps", "nbytes", "levels", "n_external", "cache")

    def __init__(self, steps, nbytes, levels, n_external):
        self.steps, self.nbytes, self.levels, self.n_external = steps, list(nbytes), levels, n_external
        self.cache = None  # the backend's compiled form


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
        # buffers the runtime keeps for reuse (shared host-scalar constants): live_buffers()
        # leaves them out, as they outlive every Array on purpose
        self.constants = 0

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

    def run_plan(self, plan: Plan, slots: list) -> None:
        """Run a Plan (see Call, Copy, Repeat, While, Switch) on these slots: the default walks it
        in Python, reading a while loop's predicate back each trip."""
        self._run_steps(plan.steps, slots, [0] * plan.levels)

    def _run_steps(self, steps, slots, counters) -> None:
        for s in steps:
            t = type(s)
            if t is Call:
                self.dispatch(s.exe, [slots[p] for p in s.ins], [slots[p] for p in s.outs])
            elif t is Copy:
                k = counters[s.level] if s.level is not None else 0
                self.copy(
                    slots[s.src], s.src_off + k * s.src_stride, slots[s.dst], s.dst_off + k * s.dst_stride, s.nbytes
                )
            elif t is Repeat:
                for i in range(s.count):
                    counters[s.level] = i
                    self._run_steps(s.body, slots, counters)
            elif t is While:
                self._run_steps(s.cond, slots, counters)
                while self.read(slots[s.pred], 1)[0]:
                    self._run_steps(s.body, slots, counters)
                    self._run_steps(s.cond, slots, counters)
            else:
                i = int.from_bytes(self.read(slots[s.index], 4), "little", signed=True)
                self._run_steps(s.branches[min(max(i, 0), len(s.branches) - 1)], slots, counters)
