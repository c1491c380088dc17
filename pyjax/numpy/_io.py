"""jnp.save / jnp.load: arrays in numpy's .npy format, written and read in pure Python (no numpy needed).

Format 1.0: the magic b"\\x93NUMPY", version, a little-endian uint16 header length, a Python-literal
header {'descr', 'fortran_order', 'shape'} padded to a multiple of 64 bytes, then the raw C-order
data. bfloat16 is stored as two-byte void ('|V2'), as numpy saves JAX's bfloat16, and read back as
bfloat16, as jnp.load does. A .npz archive is handed to numpy.load when numpy is present.
"""

from __future__ import annotations

import ast
import os
import struct
from typing import Any

from pyjax.core import dtypes
from pyjax.core.minifloat import bfloat16_bits
from pyjax.numpy import _manipulation
from pyjax.numpy._promotion import asarray

__all__ = ["load", "save", "savez", "fromfile"]

_MAGIC = b"\x93NUMPY"
# dtype -> (npy descr without byte order, struct code per element)
_FORMATS = {
    "bool": ("b1", "?"),
    "int8": ("i1", "b"),
    "uint8": ("u1", "B"),
    "int16": ("i2", "h"),
    "uint16": ("u2", "H"),
    "int32": ("i4", "i"),
    "uint32": ("u4", "I"),
    "int64": ("i8", "q"),
    "uint64": ("u8", "Q"),
    "float16": ("f2", "e"),
    "float32": ("f4", "f"),
    "float64": ("f8", "d"),
    "complex64": ("c8", "f"),
    "complex128": ("c16", "d"),
}
_BY_DESCR = {descr: name for name, (descr, _) in _FORMATS.items()}


def _flat_values(a) -> list:
    values = a.ravel().tolist() if a.ndim else [a.item()]
    if a.dtype.kind == "c":
        return [part for v in values for part in (v.real, v.imag)]
    return values


def save(file: Any, arr: Any, allow_pickle: bool = True) -> None:
    """Write arr to file (a path, ".npy" appended as numpy does, or a binary file object) in .npy format."""
    a = asarray(arr)
    name = a.dtype.name
    if name == "bfloat16":
        descr = "|V2"
        data = struct.pack(f"<{a.size}H", *(bfloat16_bits(v) for v in _flat_values(a.astype("float32"))))
    else:
        base, code = _FORMATS[name]
        descr = ("|" if base[1:] == "1" else "<") + base
        values = _flat_values(a)
        data = struct.pack(f"<{len(values)}{code}", *values)
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(a.shape)!r}, }}"
    pad = 64 - (len(_MAGIC) + 4 + len(header) + 1) % 64
    header_bytes = (header + " " * (pad % 64) + "\n").encode("latin1")
    blob = _MAGIC + b"\x01\x00" + struct.pack("<H", len(header_bytes)) + header_bytes + data
    if hasattr(file, "write"):
        file.write(blob)
        return
    path = os.fspath(file)
    if not path.endswith(".npy"):
        path += ".npy"
    with open(path, "wb") as f:
        f.write(blob)


def savez(file: Any, *args: Any, **kwds: Any) -> None:
    """Write arrays to an uncompressed .npz archive (a zip of .npy files: arr_0, arr_1, ... then the
    keyword names), ".npz" appended to a path as numpy does."""
    import io
    import zipfile

    arrays = {f"arr_{i}": a for i, a in enumerate(args)}
    for k, a in kwds.items():
        if k in arrays:
            raise ValueError(f"Cannot use un-named variables and keyword {k}")
        arrays[k] = a
    if not hasattr(file, "write"):
        file = os.fspath(file)
        if not file.endswith(".npz"):
            file += ".npz"
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED) as zf:
        for k, a in arrays.items():
            buf = io.BytesIO()
            save(buf, a)
            zf.writestr(k + ".npy", buf.getvalue())


def fromfile(*args: Any, **kwargs: Any) -> Any:
    """Not in JAX either: reading files is not a pure function."""
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use with JIT and "
        "other JAX transformations. Consider using jnp.asarray(np.fromfile(...)) instead, although care "
        "should be taken if np.fromfile is used within a jax transformations because of its potential side-effect "
        "of consuming the file object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions"
    )


def _read_header(raw: bytes) -> tuple[dict, int]:
    if raw[:6] != _MAGIC:
        raise ValueError("load: not a .npy file (missing the \\x93NUMPY magic)")
    major = raw[6]
    if major == 1:
        n, start = struct.unpack("<H", raw[8:10])[0], 10
    elif major in (2, 3):
        n, start = struct.unpack("<I", raw[8:12])[0], 12
    else:
        raise ValueError(f"load: unsupported .npy format version {major}")
    header = ast.literal_eval(raw[start : start + n].decode("utf-8" if major == 3 else "latin1"))
    return header, start + n


def load(file: Any, *args: Any, **kwargs: Any) -> Any:
    """Read an array saved in .npy format (a path or a binary file object) as a pyjax array."""
    if hasattr(file, "read"):
        raw = file.read()
    else:
        with open(os.fspath(file), "rb") as f:
            raw = f.read()
    if raw[:2] == b"PK":  # a .npz archive: numpy's loader, numpy arrays (as jnp.load returns them)
        import io

        import numpy

        return numpy.load(io.BytesIO(raw), *args, **kwargs)
    header, offset = _read_header(raw)
    descr, shape = header["descr"], tuple(header["shape"])
    if not isinstance(descr, str):
        raise ValueError(f"load: structured dtypes are not supported (descr {descr!r})")
    order, base = descr[0], descr[1:]
    endian = ">" if order == ">" else "<"
    count = 1
    for d in shape:
        count *= d
    if base == "V2":
        bits = struct.unpack_from(f"{endian}{count}H", raw, offset)
        values = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
        out = asarray(values, "float32").astype(dtypes.bfloat16)
    else:
        name = _BY_DESCR.get(base)
        if name is None:
            raise ValueError(f"load: unsupported dtype {descr!r}")
        code = _FORMATS[name][1]
        n = count * (2 if name.startswith("complex") else 1)
        values = list(struct.unpack_from(f"{endian}{n}{code}", raw, offset))
        if name.startswith("complex"):
            values = [complex(values[i], values[i + 1]) for i in range(0, n, 2)]
        out = asarray(values, dtypes.canonicalize(dtypes.dtype(name)))
    if header.get("fortran_order"):
        return _manipulation.transpose(_manipulation.reshape(out, shape[::-1]))
    return _manipulation.reshape(out, shape)
