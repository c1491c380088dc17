"""The concrete Array: a device buffer read through a ShapeTracker, or a host scalar.

Memory is automatic: a Buffer frees its backend slot when the last Array (or pending
program) referencing it is garbage-collected (pyjax.runtime.buffers). Movement ops share the
Buffer with a new view. Everything that touches a backend runs under buffers.LOCK.
"""

from __future__ import annotations

import functools
import math
import struct

from pyjax.compiler.views import ShapeTracker
from pyjax.core import core, dtypes, hooks, minifloat
from pyjax.core.core import ShapedArray
from pyjax.core.dtypes import STRUCT_FORMAT as _FMT
from pyjax.core.lru import LRUCache, cache_size
from pyjax.runtime.buffers import LOCK, Buffer
from pyjax.runtime.device import SingleDeviceSharding

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None


class Shard:
    """One data shard of an Array (jax.Shard): its device, the index it covers in the global array, its
    replica id and data; pyjax arrays have one shard covering everything."""

    def __init__(self, device, sharding, global_shape: tuple, data=None):
        self.device, self.sharding, self.data = device, sharding, data
        self.index = tuple(slice(None) for _ in global_shape)
        self.replica_id = 0

    def __repr__(self):
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data})"


class Array(core.ArrayMethods):
    """A pyjax array: a device buffer seen through a view (its operators and methods: ArrayMethods)."""

    __slots__ = ("aval", "_buf", "_tracker", "_device", "_host", "_committed", "_sharding", "__weakref__")
    __array_priority__ = 100

    def __init__(self, aval: ShapedArray, buf: Buffer | None, tracker: ShapeTracker | None, device, host=None):
        self.aval = aval
        self._buf = buf
        self._tracker = tracker
        self._device = device
        self._host = host  # Python scalar for not-yet-uploaded scalars
        self._committed = False
        self._sharding = None  # a jax.sharding.Sharding given to device_put (one device: layout unchanged)

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: math.prod(self.aval.shape))
    weak_type = property(lambda self: self.aval.weak_type)
    nbytes = property(lambda self: self.size * self.aval.dtype.itemsize)
    itemsize = property(lambda self: self.aval.dtype.itemsize)

    @property
    def device(self):
        return self._device

    def devices(self) -> set:
        return {self._device}

    @property
    def sharding(self):
        return self._sharding or SingleDeviceSharding(self._device)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    # --- host transfer -------------------------------------------------------------------
    def _ensure_buffer(self) -> None:
        if self._buf is None:
            backend = self._device.backend
            d = self.aval.dtype
            raw = _pack_scalar(self._host, d)
            with LOCK:
                buf = _constant_buffer(backend, d, raw)
            if d.kind == "c":  # complex: the view is over (..., 2) real parts (see complex_phys)
                shape = self.aval.shape + (2,)
                self._buf, self._tracker = buf, ShapeTracker.contiguous((2,))
                self._tracker = self._tracker.reshape((1,) * len(shape[:-1]) + (2,)).expand(shape)
                return
            self._buf, self._tracker = buf, _scalar_view(self.aval.shape)

    def _contiguous_bytes(self) -> bytes:
        """The array's elements in C order, as raw bytes."""
        if self._buf is None:
            return _pack_scalar(self._host, self.aval.dtype) * self.size
        arr = complex_phys(self) if self.aval.dtype.kind == "c" else self
        with LOCK:
            if not (arr._tracker.is_contiguous and arr._buf.nbytes == self.nbytes):
                arr = hooks.op("materialize")(arr)
            # a backend's read waits for the work queued before it (webgpu: the queue and the
            # copy go out in one submit); a synchronize() first cost a second GPU round trip
            return arr._buf.backend.read(arr._buf.slot, self.nbytes)

    async def _contiguous_bytes_async(self) -> bytes:
        arr = self
        if self._buf is None:
            return _pack_scalar(self._host, self.aval.dtype) * self.size
        arr = complex_phys(self) if self.aval.dtype.kind == "c" else self
        if not (arr._tracker.is_contiguous and arr._buf.nbytes == self.nbytes):
            arr = hooks.op("materialize")(arr)
        return await arr._buf.backend.read_async(arr._buf.slot, self.nbytes)

    def _numpy(self):
        d = self.aval.dtype
        if self._host is not None and self._buf is None:
            return np.full(self.aval.shape, self._host, dtype=_np_dtype(d))
        raw = self._contiguous_bytes()
        if d.name in dtypes.INTN:  # stored as int8/uint8 values (core/dtypes.py STRUCT_FORMAT)
            return np.frombuffer(raw, dtype=_FMT[d.name]).astype(_np_dtype(d)).reshape(self.aval.shape)
        return np.frombuffer(raw, dtype=_np_dtype(d)).reshape(self.aval.shape).copy()

    def _flat_list(self) -> list:
        d = self.aval.dtype
        if self._host is not None and self._buf is None:
            v = _py_scalar(self._host, d)
            return [v] * self.size
        raw = self._contiguous_bytes()
        if not self.size:
            return []
        return _unpack(raw, self.size, d)

    def tolist(self):
        if np is not None and self.aval.dtype.name not in dtypes.ML_DTYPES:
            return self._numpy().tolist()
        return _nest(self._flat_list(), self.aval.shape)

    def item(self, *args):
        """x.item() of a size-1 array; x.item(k) the k-th element of the flattened array, x.item(i, j) an index."""
        if len(args) == 1:
            k = args[0] if isinstance(args[0], tuple) else (args[0],)
            if len(k) == 1 and self.ndim != 1:
                n, i = self.size, k[0].__index__()
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for size {n}")
                return self.ravel()[i % n].item()
            return self[k].item()
        if args:
            return self[args].item()
        if self.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return self._flat_list()[0]

    def __array__(self, dtype=None, copy=None):
        a = self._numpy()
        return a if dtype is None else a.astype(dtype)

    def __float__(self):
        return float(self._scalar_value("float"))

    def __int__(self):
        return int(self._scalar_value("int"))

    def __complex__(self):
        return complex(self._scalar_value("complex"))

    def __bool__(self):
        if self.size != 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
            )
        return bool(self._flat_list()[0])

    def __index__(self):
        if self.aval.dtype.kind not in "iub" or self.size != 1 or self.ndim:
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._flat_list()[0])

    def _scalar_value(self, what: str):
        if self.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        return self._flat_list()[0]

    def block_until_ready(self):
        if self._buf is not None:
            with LOCK:
                self._buf.backend.synchronize()
        return self

    async def block_until_ready_async(self):
        """Await the computation of this array (use in the browser instead of block_until_ready)."""
        if self._buf is not None:
            await self._buf.backend.synchronize_async()
        return self

    async def tolist_async(self):
        """Like tolist(), but awaits the device readback (browser WebGPU)."""
        d = self.aval.dtype
        raw = await self._contiguous_bytes_async()
        vals = _unpack(raw, self.size, d) if self.size else []
        return _nest(vals, self.aval.shape)

    def copy_to_host_async(self):
        return None

    def is_fully_replicated(self) -> bool:
        return True

    @property
    def addressable_shards(self) -> list:
        """The shards this process holds: one, the whole array on its device."""
        return [Shard(self._device, self.sharding, self.aval.shape, self)]

    global_shards = addressable_shards

    def addressable_data(self, index: int) -> Array:
        """The data of addressable shard index (only 0: the array itself)."""
        if index != 0:
            raise IndexError(f"pyjax arrays have one addressable shard, got index {index}")
        return self

    is_fully_addressable = True

    def __repr__(self):
        from pyjax.runtime.printing import array_repr

        return array_repr(self)

    def __str__(self):
        from pyjax.runtime.printing import array_str

        return array_str(self)

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __hash__(self):
        raise TypeError("unhashable type: 'ArrayImpl'")  # JAX's class name

    def __reduce__(self):
        return (hooks.op("asarray"), (self.tolist(), self.dtype.name))

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __dlpack__(self, *args, **kwargs):
        return self._numpy().__dlpack__(*args, **kwargs)


def _np_dtype(d):
    """numpy dtype for a pyjax dtype; bfloat16 needs ml_dtypes (installed with JAX), as in JAX."""
    try:
        return d.dtype
    except AttributeError:
        raise TypeError(f"converting a {d.name} array to numpy needs the ml_dtypes package") from None


def _nest(flat: list, shape: tuple):
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return flat
    step = math.prod(shape[1:])
    return [_nest(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _unpack(raw: bytes, n: int, d) -> list:
    """n elements of dtype d from little-endian bytes, as Python scalars."""
    if d.name == "bfloat16":
        return _bf16_unpack(raw, n)
    if d.name in dtypes.FLOAT8:
        return [minifloat.decode(c, d.name) for c in raw[:n]]
    if d.kind == "c":
        parts = struct.unpack(f"<{2 * n}{_FMT[dtypes.real_dtype(d).name]}", raw)
        return [complex(parts[2 * i], parts[2 * i + 1]) for i in range(n)]
    return list(struct.unpack(f"<{n}{_FMT[d.name]}", raw))


def complex_phys(a: Array) -> Array:
    """The real (..., 2) array of (re, im) pairs that stores complex array a (a view, no copy)."""
    rd = dtypes.real_dtype(a.aval.dtype)
    aval = ShapedArray(a.aval.shape + (2,), rd, a.aval.weak_type)
    if a._buf is None:
        h = complex(a._host)
        if h.real == h.imag or (h.real != h.real and h.imag != h.imag):  # one value fills both parts
            return Array(aval, None, None, a._device, host=h.real)
        a._ensure_buffer()
    return Array(aval, a._buf, a._tracker, a._device)


def complex_from_phys(p: Array, dtype) -> Array:
    """The complex array of dtype stored by the real (..., 2) array p (a view, no copy)."""
    aval = ShapedArray(p.aval.shape[:-1], dtype, p.aval.weak_type)
    if p._buf is None:
        return Array(aval, None, None, p._device, host=complex(p._host, p._host))
    return Array(aval, p._buf, p._tracker, p._device)


def _py_scalar(v, d):
    if d.kind == "c":
        rd = dtypes.real_dtype(d)
        v = complex(v)
        return complex(_py_scalar(v.real, rd), _py_scalar(v.imag, rd))
    if d.kind == "b":
        return bool(v)
    if d.kind in "iu":
        return int(v)
    if d.name == "bfloat16":
        return _bf16_unpack(_pack_scalar(v, d), 1)[0]
    if d.name in dtypes.FLOAT8:
        return minifloat.round_to(float(v), d.name)
    return struct.unpack(_FMT[d.name], _pack_scalar(v, d))[0]


def _bf16_unpack(raw: bytes, n: int) -> list:
    halves = struct.unpack(f"<{n}H", raw[: 2 * n])
    return list(struct.unpack(f"<{n}f", struct.pack(f"<{n}I", *[h << 16 for h in halves])))


# Host scalars met eagerly (the 1 of x + 1) are uploaded once per (backend, dtype, bytes) and
# shared: reading a constant never writes it, and an op with a Python scalar then allocates
# and writes nothing for it (a Buffer and a host write each time, a third of a small eager
# op). Backend.constants counts the kept ones, which live_buffers() leaves out.
_constants = LRUCache(cache_size("constants", 64))


def _constant_buffer(backend, dtype, raw: bytes) -> Buffer:
    """A buffer holding raw (one element of dtype) on backend, shared (call under LOCK)."""
    key = (backend, dtype, raw)
    buf = _constants.get(key)
    if buf is None:
        buf = Buffer(backend, dtype.itemsize)
        backend.write(buf.slot, raw)
        if len(_constants) >= _constants.maxsize:
            _, old = _constants.popitem(last=False)
            old.backend.constants -= 1
        _constants[key] = buf
        backend.constants += 1
    return buf


def clear_constants() -> None:
    """Let go of the shared host-scalar buffers (freed once no Array holds them)."""
    with LOCK:
        while _constants:
            _, buf = _constants.popitem()
            buf.backend.constants -= 1


@functools.lru_cache(maxsize=1024)
def _scalar_view(shape: tuple) -> ShapeTracker:
    """One element read at every index of shape (a host scalar uploaded once, broadcast)."""
    tracker = ShapeTracker.contiguous(())
    return tracker.reshape((1,) * len(shape)).expand(shape) if shape else tracker


def _pack_scalar(v, d) -> bytes:
    if d.kind == "c":
        rd = dtypes.real_dtype(d)
        v = complex(v)
        return _pack_scalar(v.real, rd) + _pack_scalar(v.imag, rd)
    if isinstance(v, complex):  # a complex value stored into a real dtype keeps its real part
        v = v.real
    if d.name == "bfloat16":
        return struct.pack("<H", minifloat.bfloat16_bits(float(v)))
    if d.name in dtypes.FLOAT8:
        return bytes((minifloat.encode(float(v), d.name),))
    fmt = _FMT[d.name]
    if d.kind in "iu":
        v = int(v)
        bits = d.bits
        v &= (1 << bits) - 1
        if d.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
    elif d.kind == "b":
        v = bool(v)
    else:
        v = float(v)
        if d.itemsize == 4 and math.isfinite(v) and abs(v) > 3.4028234663852886e38:
            v = (
                math.copysign(math.inf, v)
                if abs(v) >= 3.4028235677973366e38
                else math.copysign(3.4028234663852886e38, v)
            )
        if d.itemsize == 2:
            try:
                return struct.pack("<e", v)
            except OverflowError:
                return struct.pack("<e", math.copysign(math.inf, v))
    return struct.pack("<" + fmt, v)


def _array_aval(x: Array) -> ShapedArray:
    return x.aval


core.pytype_aval_mappings[Array] = _array_aval
if np is not None:
    # numpy arrays and scalars are valid JAX values: they get strong (non-weak) canonical dtypes.
    def _numpy_aval(x) -> ShapedArray:
        return ShapedArray(tuple(np.shape(x)), dtypes.canonicalize(x.dtype))

    core.pytype_aval_mappings[np.ndarray] = _numpy_aval
    core.pytype_aval_mappings[np.generic] = _numpy_aval
dtypes = dtypes
