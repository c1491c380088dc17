"""The cpu backend: the reference interpreter of the kernel IR.

With numpy it evaluates kernels vectorized (numpy_eval); without numpy (Pyodide offline) it
interprets element by element in pure Python (python_eval). It is the correctness baseline for
the wasm and webgpu backends, not the fast path.
"""

from __future__ import annotations

import math
import struct

from pyjax.backends.base import Backend
from pyjax.compiler.ir import Kernel, Routine
from pyjax.core import minifloat
from pyjax.core.dtypes import STRUCT_FORMAT as _FMT

try:
    import numpy as _np
except ImportError:  # pragma: no cover - exercised by the no-numpy test in a subprocess
    _np = None


class CpuBackend(Backend):
    name = "cpu"

    def __init__(self, use_numpy: bool | None = None):
        super().__init__()
        self.use_numpy = (_np is not None) if use_numpy is None else use_numpy
        self._bufs: dict[int, object] = {}  # slot -> bytearray (python) or np.ndarray[uint8]
        self._next = 0
        if self.use_numpy:
            from pyjax.backends.cpu import numpy_eval

            self._ev = numpy_eval
        else:
            from pyjax.backends.cpu import python_eval

            self._ev = python_eval

    # --- memory: slots hold raw bytes ---
    def malloc(self, nbytes: int) -> int:
        # numpy mode allocates lazily: a kernel's result array becomes the slot's storage.
        self._next += 1
        self._bufs[self._next] = _Lazy(nbytes) if self.use_numpy else bytearray(nbytes)
        return self._next

    def _raw(self, slot):
        """The slot's bytes as a uint8 array (allocating a lazy slot)."""
        buf = self._bufs[slot]
        if type(buf) is _Lazy:
            buf = self._bufs[slot] = _np.zeros(buf.nbytes, _np.uint8)
        elif buf.dtype != _np.uint8:
            buf = buf.view(_np.uint8)
        return buf

    def free(self, slot: int) -> None:
        self._bufs.pop(slot, None)

    def write(self, slot: int, data) -> None:
        buf = self._raw(slot) if self.use_numpy else self._bufs[slot]
        mv = memoryview(data).cast("B")
        if self.use_numpy:
            buf[: mv.nbytes] = _np.frombuffer(mv, _np.uint8)
        else:
            buf[: mv.nbytes] = mv

    def read(self, slot: int, nbytes: int) -> bytes:
        buf = self._raw(slot) if self.use_numpy else self._bufs[slot]
        return bytes(memoryview(buf)[:nbytes])

    def copy(self, src: int, src_off: int, dst: int, dst_off: int, nbytes: int) -> None:
        if self.use_numpy:
            self._raw(dst)[dst_off : dst_off + nbytes] = self._raw(src)[src_off : src_off + nbytes]
        else:
            self._bufs[dst][dst_off : dst_off + nbytes] = self._bufs[src][src_off : src_off + nbytes]

    def live_buffers(self) -> int:
        return len(self._bufs) - len(self.dead) - self.constants  # dead: collected, freed at the next allocation

    def numpy_view(self, slot: int, dtype, count: int):
        """Zero-copy typed view of a slot (numpy mode only)."""
        return self._raw(slot)[: count * dtype.itemsize].view(self._ev.np_dtype(dtype))

    # --- compute ---
    def compile_kernel(self, kernel: Kernel):
        if self.use_numpy:
            return ("k", kernel, self._ev.KernelExe(kernel))
        return ("k", kernel, None)

    def compile_routine(self, routine: Routine):
        return ("r", routine, None)

    def dispatch(self, exe, in_slots: list, out_slots: list) -> None:
        kind, ir_obj, fn = exe
        if kind == "k":
            ins = [self._typed(s, d) for s, d in zip(in_slots, ir_obj.in_dtypes)]
            outs = [fn(ins) if fn is not None else self._ev.run_kernel(ir_obj, ins)]
            out_dtypes = [ir_obj.out_dtype]
        else:
            ins = [self._typed(s, a.dtype) for s, a in zip(in_slots, ir_obj.in_avals)]
            outs = self._ev.run_routine(ir_obj, ins)
            out_dtypes = [a.dtype for a in ir_obj.out_avals]
        for slot, val, d in zip(out_slots, outs, out_dtypes):
            self._store(slot, val, d, ins)

    def _typed(self, slot, dtype):
        if self.use_numpy:
            buf = self._bufs[slot]
            t = self._ev.np_dtype(dtype)
            if type(buf) is not _Lazy and buf.dtype == t:
                return buf
            buf = self._raw(slot)
            n = len(buf) // dtype.itemsize
            return buf[: n * dtype.itemsize].view(t)
        return _unpack(self._bufs[slot], dtype)

    def _store(self, slot, val, dtype, ins=()):
        if self.use_numpy:
            t = self._ev.np_dtype(dtype)
            arr = _np.asarray(val)
            # Slots never alias: a result that views an input (or is read-only) is copied.
            if (
                arr.dtype != t
                or not arr.flags.writeable
                or not arr.flags.c_contiguous
                or any(_np.may_share_memory(arr, i) for i in ins)
            ):
                arr = _np.array(arr, dtype=t, copy=True)
            self._bufs[slot] = arr.reshape(-1)
        else:
            buf = self._bufs[slot]
            data = _pack(val, dtype)
            buf[: len(data)] = data


class _Lazy:
    """A numpy-mode slot not yet written: only its size."""

    __slots__ = ("nbytes",)

    def __init__(self, nbytes: int):
        self.nbytes = nbytes


def _unpack(buf, dtype) -> list:
    n = len(buf) // dtype.itemsize
    raw = memoryview(buf)[: n * dtype.itemsize]
    if dtype.name == "bfloat16":  # the top half of a float32
        halves = raw.cast("H")
        return list(struct.unpack(f"<{n}f", struct.pack(f"<{n}I", *[h << 16 for h in halves])))
    if dtype.name in minifloat.FORMATS:
        return [minifloat.decode(c, dtype.name) for c in raw]
    fmt = _FMT[dtype.name]
    if fmt == "e":  # memoryview.cast cannot produce half floats
        return list(struct.unpack(f"<{n}e", raw))
    return list(raw.cast(fmt))


def _pack(vals, dtype) -> bytes:
    if not vals:
        return b""
    if dtype.name == "bfloat16":
        from pyjax.core.minifloat import bfloat16_bits

        return struct.pack(f"<{len(vals)}H", *[bfloat16_bits(v) for v in vals])
    if dtype.name in minifloat.FORMATS:
        return bytes(minifloat.encode(v, dtype.name) for v in vals)
    fmt = _FMT[dtype.name]
    return struct.pack(f"<{len(vals)}{fmt}", *vals)


math = math
