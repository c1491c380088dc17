"""The wasm backend: kernels and routines compiled to WebAssembly and run by a Wasm host.

Buffers live in the host's single linear memory; a slot is the byte address of its block (from
`Allocator`), so a dispatch passes slots straight to the kernel as i32 pointers. The host is
anything with the WasmtimeHost interface (`nbytes`, `grow`, `read`, `write`, `load(bytes)` ->
instance with `function(name).unchecked`): natively `pyjax.hosts.wasmtime_host.WasmtimeHost`,
in the browser `pyjax.hosts.browser.BrowserWasmHost`, picked by `pyjax.hosts.wasm_host()`.

Set PYJAX_WASM_DUMP=<dir> to write every generated module there (inspect with wasm2wat).
"""

from __future__ import annotations

import array
import functools
import math
import os
import time

from pyjax.backends import limits
from pyjax.backends.base import Backend
from pyjax.backends.wasm import matmul
from pyjax.backends.wasm.allocator import Allocator, WasmOutOfMemory
from pyjax.backends.wasm.codegen import compile_kernel_bytes
from pyjax.backends.wasm.encoder import I32, Module
from pyjax.compiler.ir import Kernel, Routine

__all__ = ["WasmBackend", "WasmKernelError"]

_DUMP = os.environ.get("PYJAX_WASM_DUMP", "")
# a host with threads (the browser's, see BrowserWasmHost) splits a kernel over its outermost
# axis when each chunk gets at least this many elements of the kernel's iteration space
SPLIT_WORK = int(os.environ.get("PYJAX_WASM_SPLIT_WORK", str(1 << 16)))
TUNE_N = 512  # the matmul autotune's product: 512^3 (268 MFLOP, about 10 ms a run natively)
TUNE_MARGIN = 0.95  # a candidate replaces the engine's table tile when at least 5% faster
_TUNED: dict = {}  # engine name -> the autotuned (MR, NV), once per process


class WasmKernelError(RuntimeError):
    """A generated kernel or routine trapped (a bug in pyjax: please report it with the kernel)."""


class _Exe:
    """A compiled kernel/routine: `run(in_slots, out_slots)` makes one host call.

    `what` is the Kernel or Routine (rendered only for error messages: rendering big kernels is slow).
    `func` (the Wasm function, or the host's split call of it; None when allocating per call) and `layout`
    (its arguments: ("in", k), ("out", k), ("const", v), ("len", k, itemsize)) let a driver
    module call it (see pyjax.backends.wasm.driver).
    """

    __slots__ = ("run", "what", "size", "func", "layout")

    def __init__(self, run, what, size: int, func=None, layout=()):
        self.run, self.what, self.size, self.func, self.layout = run, what, size, func, layout

    def describe(self) -> str:
        w = self.what
        if isinstance(w, Kernel):
            nodes = len(_walk(w.epilogue)) + (len(_walk(w.body)) if w.body is not None else 0)
            red = f", {w.reduce_op} over axes {w.reduce_axes}" if w.reduce_op else ""
            return f"kernel {w.name} (shape {w.shape}{red}, {nodes} nodes)"
        return f"routine {w!r}"


def _util_module() -> bytes:
    m = Module()
    f = m.function("copy", [I32, I32, I32], [], export=True)
    f.local_get(0).local_get(1).local_get(2).memory_copy()
    f.finish()
    return m.to_bytes()


def _relaxed_probe() -> bytes:
    m = Module(import_memory=None)
    f = m.function("probe", [], [], export=True)
    for _ in range(3):
        f.v128_const(bytes(16))
    f.f32x4_relaxed_madd().drop()
    f.finish()
    return m.to_bytes()


class WasmBackend(Backend):
    """Backend contract over one Wasm linear memory (see pyjax.backends.base)."""

    name = "wasm"

    def __init__(self, host=None, simd: bool = True):
        super().__init__()
        if host is None:
            from pyjax import hosts

            host = hosts.wasm_host()
        self.host = host
        self.simd = simd
        self.engine = getattr(host, "engine", "cranelift")
        self._matmul_tile = None if matmul.tunable(self.engine) else matmul.tile_for(self.engine)
        self.alloc = Allocator(host.nbytes, grow=host.grow)
        self.max_buffer_bytes = self.alloc.max_size - self.alloc.base  # wasm32: one 4 GiB memory
        self.limit_reason = "wasm32's linear memory is at most 4 GiB"
        self._sizes: dict[int, int] = {}
        self._copy = host.load(_util_module()).function("copy").unchecked
        try:
            host.compile(_relaxed_probe())
            self.relaxed_simd = True
        except Exception:  # the host's engine has no relaxed SIMD: plain mul + add
            self.relaxed_simd = False

    # --- memory ---
    def clear_caches(self) -> None:
        super().clear_caches()
        recycle = getattr(self.host, "recycle", None)  # wasmtime: a store frees its modules only when replaced
        if recycle is not None:
            recycle()

    def malloc(self, nbytes: int) -> int:
        try:
            ptr = self.alloc.malloc(nbytes)
        except WasmOutOfMemory as e:
            raise MemoryError(f"wasm backend: out of memory allocating {nbytes} bytes: {e}") from None
        self._sizes[ptr] = nbytes
        return ptr

    def free(self, slot: int) -> None:
        if self._sizes.pop(slot, None) is not None:
            self.alloc.free(slot)

    def write(self, slot: int, data) -> None:
        self.host.write(slot, data)

    def read(self, slot: int, nbytes: int) -> bytes:
        return self.host.read(slot, nbytes)

    def copy(self, src: int, src_off: int, dst: int, dst_off: int, nbytes: int) -> None:
        if nbytes > 0:
            self._copy(dst + dst_off, src + src_off, nbytes)

    def live_buffers(self) -> int:
        return len(self._sizes) - len(self.dead) - self.constants  # dead: collected, freed at the next allocation

    def numpy_view(self, slot: int, dtype, count: int):
        """Zero-copy numpy view of a slot (native host only; invalid after the memory grows)."""
        import numpy as np

        return self.host.view(np.dtype(dtype.name), slot, count)

    # --- matmul register tile ---
    @property
    def matmul_tile(self) -> tuple[int, int]:
        """(MR, NV): the engine's autotuned tile (timed at the first matmul), else its table's."""
        if self._matmul_tile is None:
            tile = _TUNED.get(self.engine)
            if tile is None:
                tile = _TUNED[self.engine] = self._tune_matmul_tile()
            self._matmul_tile = tile
        return self._matmul_tile

    @matmul_tile.setter
    def matmul_tile(self, tile: tuple[int, int]) -> None:
        self._matmul_tile = tuple(tile)

    def _tune_matmul_tile(self) -> tuple[int, int]:
        """Time a TUNE_N^3 product with each candidate tile (2 interleaved rounds after a warm-up,
        the best of each; 0.15-0.3 s once per process) and keep the fastest (see TUNE_MARGIN)."""
        kernel = matmul.tuning_kernel(TUNE_N)
        n2 = TUNE_N * TUNE_N
        ones = array.array("f", [0.5]) * n2
        slots = [self.alloc.malloc(4 * n2) for _ in range(3)]
        runs = {}
        try:
            for s in slots[:2]:
                self.write(s, ones.tobytes())
            for tile in matmul.CANDIDATES[self.engine]:
                wasm, scratch = compile_kernel_bytes(kernel, relaxed_simd=self.relaxed_simd, simd=self.simd, tile=tile)
                sp = self.alloc.malloc(scratch)
                slots.append(sp)
                runs[tile] = functools.partial(self._load(wasm, "kernel-tune"), *slots[:3], 0, TUNE_N, sp)
            best = dict.fromkeys(runs, math.inf)
            for _ in range(3):  # the first round warms up; this thread's CPU time (steadier on a busy machine)
                for tile, run in runs.items():
                    t0 = time.thread_time()
                    run()
                    best[tile] = min(best[tile], time.thread_time() - t0)
        finally:
            for s in slots:
                self.alloc.free(s)
        # another tile must beat the engine's table tile clearly: timing noise on a busy machine
        # must not pick a slower one
        tile = matmul.tile_for(self.engine)
        fastest = min(best, key=best.get)
        if best[fastest] < TUNE_MARGIN * best.get(tile, math.inf):
            tile = fastest
        if os.environ.get("PYJAX_DEBUG") == "1":
            print(f"pyjax wasm: matmul tile {tile} ({', '.join(f'{t}: {1e3 * s:.2f} ms' for t, s in best.items())})")
        return tile

    # --- compute ---
    def _load(self, wasm: bytes, what: str, split: dict | None = None):
        return self._load_function(wasm, what, split).unchecked

    def _load_function(self, wasm: bytes, what: str, split: dict | None = None):
        if _DUMP:
            os.makedirs(_DUMP, exist_ok=True)
            with open(os.path.join(_DUMP, f"{what}-{abs(hash(wasm)):x}.wasm"), "wb") as fh:
                fh.write(wasm)
        inst = self.host.load(wasm)
        if split:
            kw = {k: v for k, v in split.items() if k != "threads"}
            return self.host.split_function(inst, "run", **kw)
        return inst.function("run")

    def _split(self, kernel: Kernel, nk: int, hi: int, scratch: int, n_gathers: int) -> dict | None:
        """How a threaded host may split this kernel's calls (None: run it whole).

        `run` computes output rows lo <= i0 < hi of axis 0 and writes nothing else, so any split
        of an output axis 0 is valid (nk == 0, a reduction to a scalar, has no such axis). Each
        thread needs its own scratch (matmul packing, row-stream accumulators)."""
        threads = getattr(self.host, "threads", 1)
        if threads < 2 or nk < 1 or hi < 2:
            return None
        min_rows = -(-SPLIT_WORK * hi // max(1, math.prod(kernel.shape)))
        if scratch and nk == 2:
            # a tiled matmul packs all of B in every call (about 2% of a 1024² product each time,
            # measured in wasmtime): one chunk per thread, of at least 32 rows
            min_rows = max(min_rows, 32, hi // threads)
        if hi < 2 * min_rows:
            return None
        # 1-D: axis 0 is the SIMD axis (4 lanes, unrolled); a 2-D tiled matmul's rows come in
        # tiles of MR
        align = 16 if nk == 1 else self.matmul_tile[0] if scratch and nk == 2 else 4 if kernel.reduce_op else 1
        n_in = len(kernel.in_dtypes)
        stride = -(-scratch // 64) * 64
        return {
            "lo_arg": n_in + 1,
            "align": align,
            "min_rows": min_rows,
            "scratch_arg": n_in + 3 + n_gathers if scratch else -1,
            "scratch_stride": stride,
            "threads": threads,
        }

    def compile_kernel(self, kernel: Kernel) -> _Exe:
        limits.check_kernel(kernel, self.name)
        tile = self.matmul_tile if matmul.may_match(kernel) else matmul.tile_for(self.engine)
        wasm, scratch = compile_kernel_bytes(kernel, relaxed_simd=self.relaxed_simd, simd=self.simd, tile=tile)
        nk = len(kernel.shape) - (len(kernel.reduce_axes) if kernel.reduce_op else 0)
        hi = kernel.shape[0] if nk >= 1 else 1
        size = kernel.out_size
        gathers = sorted(
            {x.arg for r in (kernel.epilogue, kernel.body) if r is not None for x in _walk(r) if x.op == "gather"}
        )
        split = self._split(kernel, nk, hi, scratch, len(gathers))
        func = self._load_function(wasm, f"kernel-{kernel.name}", split)
        fn = func.unchecked
        if split and scratch:
            scratch = split["scratch_stride"] * split["threads"]
        # kernels that need scratch keep it for the executable's lifetime (not a user buffer)
        extra = (self.alloc.malloc(scratch),) if scratch else ()
        if gathers:
            sizes, itemsizes = self._sizes, [d.itemsize for d in kernel.in_dtypes]

            def run(ins, outs):
                fn(*ins, outs[0], 0, hi, *[sizes[ins[g]] // itemsizes[g] for g in gathers], *extra)

        elif extra:
            (sp,) = extra

            def run(ins, outs):
                fn(*ins, outs[0], 0, hi, sp)

        else:

            def run(ins, outs):
                fn(*ins, outs[0], 0, hi)

        n_in = len(kernel.in_dtypes)
        layout = [("in", k) for k in range(n_in)] + [("out", 0), ("const", 0), ("const", hi)]
        layout += [("len", g, kernel.in_dtypes[g].itemsize) for g in gathers] + [("const", x) for x in extra]
        return _Exe(run, kernel, size, func, tuple(layout))

    def compile_routine(self, routine: Routine) -> _Exe:
        from pyjax.backends.wasm import routines

        limits.check_routine(routine, self.name)
        wasm, make_run, scratch = routines.compile_routine(routine, self)
        func = self._load_function(wasm, f"routine-{routine.name}")
        size = sum(math.prod(a.shape) for a in routine.out_avals)
        n_in, n_out = len(routine.in_avals), len(routine.out_avals)
        layout = tuple([("in", k) for k in range(n_in)] + [("out", k) for k in range(n_out)] + [("const", 0)])
        return _Exe(make_run(func.unchecked), routine, size, None if scratch else func, layout)

    def dispatch(self, exe: _Exe, in_slots: list, out_slots: list) -> None:
        if exe.size == 0:
            return
        self.host.keep_trap_handlers()
        try:
            exe.run(in_slots, out_slots)
        except MemoryError:
            raise
        except RuntimeError as e:
            if type(e).__name__ != "WasmTrap":
                raise
            raise WasmKernelError(f"wasm backend: {exe.describe()} trapped: {e}") from None

    def run_plan(self, plan, slots: list) -> None:
        """The plan as one call of a generated driver module (pyjax.backends.wasm.driver) when
        the host links modules; else the default walk."""
        drv = plan.cache
        if drv is None or (drv is not False and drv.inner != tuple(slots[plan.n_external :])):
            drv = plan.cache = self._driver(plan, slots)
        if drv is False:
            return super().run_plan(plan, slots)
        args = slots[: plan.n_external]
        if drv.lengths:
            sizes = self._sizes
            args = args + [sizes[slots[p]] // itemsize for p, itemsize in drv.lengths]
        self.host.keep_trap_handlers()
        try:
            drv.fn(*args)
        except RuntimeError as e:
            if type(e).__name__ != "WasmTrap":
                raise
            raise WasmKernelError(f"wasm backend: a compiled program or loop trapped: {e}") from None

    def _driver(self, plan, slots: list):
        from pyjax.backends.wasm import driver

        link = getattr(self.host, "link", None)
        if link is None:
            return False
        try:
            drv = driver.render(plan, slots, self._sizes)
        except driver.Unsupported:
            return False
        drv.fn = link(drv.wasm, drv.funcs).function("run").unchecked
        return drv


def _walk(n):
    from pyjax.compiler import ir

    return ir.walk(n)
