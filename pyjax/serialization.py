"""Arrays to and from the safetensors format, in pure Python (no numpy, so it runs in Pyodide).

The functions mirror `safetensors.flax`: `save(tensors, metadata=None) -> bytes`, `load(data) -> dict`,
`save_file(tensors, filename, metadata=None)` and `load_file(filename) -> dict`, plus
`load_metadata(data)` for the header's str -> str metadata. A file is an 8-byte
little-endian header length, a JSON header naming each tensor's dtype, shape and byte range, then the raw
little-endian data. As in JAX, 64-bit tensors load as 32-bit arrays unless jax_enable_x64 is on.
"""

from __future__ import annotations

import json
import math
import struct

from pyjax.core import dtypes
from pyjax.core.core import ShapedArray
from pyjax.runtime.array import Array
from pyjax.runtime.execute import from_bytes

__all__ = ["save", "load", "save_file", "load_file", "load_metadata"]

# safetensors dtype code <-> pyjax dtype name
_CODES = {
    "BOOL": "bool",
    "U8": "uint8",
    "I8": "int8",
    "U16": "uint16",
    "I16": "int16",
    "F16": "float16",
    "BF16": "bfloat16",
    "U32": "uint32",
    "I32": "int32",
    "F32": "float32",
    "C64": "complex64",
    "U64": "uint64",
    "I64": "int64",
    "F64": "float64",
}
_NAMES = {v: k for k, v in _CODES.items()}
_STRUCT = {"uint64": "Q", "int64": "q", "float64": "d"}  # 64-bit types narrowed through Python values


def save(tensors: dict, metadata: dict | None = None) -> bytes:
    """The safetensors bytes of a dict of arrays (and an optional str -> str metadata dict)."""
    if not isinstance(tensors, dict):
        raise TypeError(f"save: tensors must be a dict of name -> array, got {type(tensors).__name__}")
    import pyjax.numpy as jnp

    arrays = {}
    for name, value in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"save: tensor names must be str, got {name!r}")
        if name == "__metadata__":
            raise ValueError("save: '__metadata__' is reserved and cannot name a tensor")
        arr = jnp.asarray(value)
        if arr.dtype.name not in _NAMES:
            raise TypeError(f"save: dtype {arr.dtype.name} of tensor {name!r} has no safetensors code")
        arrays[name] = arr
    header, chunks, offset = {}, [], 0
    if metadata is not None:
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
            raise TypeError("save: metadata must map str to str")
        header["__metadata__"] = dict(metadata)
    # Larger items first keeps every tensor aligned to its item size (after the 8-byte-aligned header).
    for name in sorted(arrays, key=lambda n: (-arrays[n].dtype.itemsize, n)):
        arr = arrays[name]
        raw = arr._contiguous_bytes() if arr.size else b""
        code = _NAMES[arr.dtype.name]
        header[name] = {"dtype": code, "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(chunks)


def load(data: bytes) -> dict:
    """The dict of arrays stored in safetensors bytes."""
    return _parse(data, "load")[0]


def save_file(tensors: dict, filename, metadata: dict | None = None) -> None:
    """Write a dict of arrays to a .safetensors file."""
    data = save(tensors, metadata)
    with open(filename, "wb") as f:
        f.write(data)


def load_file(filename) -> dict:
    """The dict of arrays stored in a .safetensors file."""
    with open(filename, "rb") as f:
        data = f.read()
    return _parse(data, "load_file")[0]


def load_metadata(data: bytes) -> dict | None:
    """The str -> str metadata of safetensors bytes (None when the file has none)."""
    return _parse(data, "load_metadata", header_only=True)[1]


def _parse(data, fn: str, header_only: bool = False) -> tuple[dict, dict | None]:
    data = memoryview(data).cast("B")
    if len(data) < 8:
        raise ValueError(f"{fn}: not a safetensors file ({len(data)} bytes, the header length alone takes 8)")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"{fn}: header length {n} runs past the end of the {len(data)}-byte file")
    try:
        header = json.loads(bytes(data[8 : 8 + n]).decode())
    except (UnicodeDecodeError, ValueError) as e:
        raise ValueError(f"{fn}: the header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{fn}: the header must be a JSON object")
    metadata = header.pop("__metadata__", None)
    if header_only:
        return {}, metadata
    body = data[8 + n :]
    out, end = {}, 0
    for name, info in sorted(header.items(), key=lambda kv: kv[1].get("data_offsets", [0])[0]):
        dtype = _CODES.get(info.get("dtype"))
        if dtype is None:
            raise ValueError(f"{fn}: tensor {name!r} has unsupported dtype {info.get('dtype')!r}")
        d = dtypes.dtype(dtype)
        shape = tuple(info["shape"])
        begin, stop = info["data_offsets"]
        if begin != end or stop - begin != math.prod(shape) * d.itemsize:
            raise ValueError(
                f"{fn}: tensor {name!r} has data_offsets [{begin}, {stop}], expected [{end}, "
                f"{end + math.prod(shape) * d.itemsize}] for shape {list(shape)} of {dtype}"
            )
        out[name] = _array(bytes(body[begin:stop]), shape, d)
        end = stop
    if end != len(body):
        raise ValueError(f"{fn}: the tensors cover {end} bytes of data but the file has {len(body)}")
    return out, metadata


def _array(raw: bytes, shape: tuple, d) -> Array:
    """An array of dtype d (narrowed to 32 bits without x64, as jnp.asarray does) from little-endian bytes."""
    import pyjax.numpy as jnp

    target = dtypes.canonicalize(d)
    if target is d:
        return from_bytes(raw, ShapedArray(shape, d, False))
    values = list(struct.unpack(f"<{math.prod(shape)}{_STRUCT[d.name]}", raw))
    if d.kind in "iu":  # wrap to 32 bits as a C cast does
        bits = 1 << 32
        values = [v % bits - (bits if d.kind == "i" and v % bits >= bits >> 1 else 0) for v in values]
    return jnp.asarray(values, dtype=target).reshape(shape)
