"""pyjax.serialization (safetensors) against the `safetensors` package: files written by one load in the
other with the same names, dtypes, shapes, values and metadata; malformed files raise ValueError."""

from __future__ import annotations

import json
import struct

import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import serialization

np = pytest.importorskip("numpy")
st = pytest.importorskip("safetensors.numpy")

DTYPES = ["bool", "uint8", "int8", "uint16", "int16", "float16", "uint32", "int32", "float32", "complex64"]


def _sample(dtype: str, shape=(2, 3)):
    values = np.arange(np.prod(shape)).reshape(shape) * 3 - 5
    if dtype == "complex64":
        values = values + 0.5j * values
    elif dtype in ("float16", "float32"):
        values = values / 4
    elif dtype == "bool":
        values = values % 2 == 0
    return np.asarray(values, dtype=dtype)  # an array even for shape ()


@pytest.mark.parametrize("dtype", DTYPES)
def test_pyjax_writes_what_safetensors_reads(dtype, backend):
    arrays = {"x": _sample(dtype), "scalar": _sample(dtype, ()), "empty": _sample(dtype, (0, 4))}
    with pyjax.default_device(pyjax.devices(backend)[0]):
        data = serialization.save({k: jnp.asarray(v) for k, v in arrays.items()}, metadata={"who": "pyjax"})
    got = st.load(data)
    assert sorted(got) == sorted(arrays)
    for k, v in arrays.items():
        assert got[k].dtype == v.dtype and got[k].shape == v.shape and np.array_equal(got[k], v), k
    assert json.loads(data[8 : 8 + struct.unpack("<Q", data[:8])[0]])["__metadata__"] == {"who": "pyjax"}
    assert serialization.load_metadata(data) == {"who": "pyjax"}


@pytest.mark.parametrize("dtype", DTYPES)
def test_pyjax_reads_what_safetensors_writes(dtype, backend):
    arrays = {"a": _sample(dtype), "b": _sample(dtype, (5,)), "c": _sample(dtype, ())}
    with pyjax.default_device(pyjax.devices(backend)[0]):
        got = serialization.load(st.save(arrays))
        assert sorted(got) == sorted(arrays)
        for k, v in arrays.items():
            assert got[k].dtype == v.dtype and got[k].shape == v.shape, k
            assert got[k].device.platform == backend
            assert np.array_equal(np.asarray(got[k]), v), k


def test_files_and_64_bit_narrowing(tmp_path):
    """64-bit tensors load as 32-bit without x64, wrapped and rounded as jnp.asarray(numpy array) does in JAX."""
    jax_jnp = pytest.importorskip("jax.numpy")
    arrays = {
        "i": np.array([2**40 + 5, -3, 2**31], np.int64),
        "u": np.array([2**33 + 7, 1], np.uint64),
        "f": np.array([1.1, -2.5e-3, 1e40], np.float64),
    }
    path = tmp_path / "w.safetensors"
    st.save_file(arrays, str(path))
    got = serialization.load_file(str(path))
    for k, v in arrays.items():
        want = jax_jnp.asarray(v)
        assert got[k].dtype == want.dtype and got[k].tolist() == want.tolist(), (k, got[k], want)
    serialization.save_file(got, str(tmp_path / "back.safetensors"))
    back = st.load_file(str(tmp_path / "back.safetensors"))
    assert back["i"].dtype == np.int32 and back["i"].tolist() == got["i"].tolist()


def test_bfloat16_round_trip():
    """safetensors' numpy API has no bfloat16: check the stored bits against JAX's rounding instead."""
    jax_jnp = pytest.importorskip("jax.numpy")
    values = [1.0, -2.5, 3.14159, 1e-3, 65504.0]
    data = serialization.save({"h": jnp.array(values, jnp.bfloat16)})
    header_len = struct.unpack("<Q", data[:8])[0]
    assert json.loads(data[8 : 8 + header_len])["h"] == {"dtype": "BF16", "shape": [5], "data_offsets": [0, 10]}
    assert data[8 + header_len :] == np.asarray(jax_jnp.array(values, jax_jnp.bfloat16)).tobytes()
    back = serialization.load(data)["h"]
    assert back.dtype == jnp.bfloat16 and back.tolist() == jnp.array(values, jnp.bfloat16).tolist()


def test_header_is_aligned_and_tensors_ordered():
    data = serialization.save({"b": jnp.ones(3, jnp.int8), "a": jnp.ones(2), "c": jnp.ones(1, jnp.int16)})
    n = struct.unpack("<Q", data[:8])[0]
    assert n % 8 == 0
    header = json.loads(data[8 : 8 + n])
    assert [header[k]["data_offsets"] for k in "acb"] == [[0, 8], [8, 10], [10, 13]]  # larger items first


@pytest.mark.parametrize(
    "data, match",
    [
        (b"abc", "not a safetensors file"),
        (struct.pack("<Q", 100) + b"{}", "runs past the end"),
        (struct.pack("<Q", 2) + b"{]", "not valid JSON"),
        (struct.pack("<Q", 2) + b"[]", "must be a JSON object"),
    ],
)
def test_malformed_files(data, match):
    with pytest.raises(ValueError, match=match):
        serialization.load(data)


def _file(header: dict, body: bytes) -> bytes:
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + body


def test_bad_tensor_entries():
    with pytest.raises(ValueError, match="unsupported dtype 'F8_E4M3'"):
        serialization.load(_file({"x": {"dtype": "F8_E4M3", "shape": [1], "data_offsets": [0, 1]}}, b"\0"))
    with pytest.raises(ValueError, match=r"data_offsets \[0, 4\], expected \[0, 8\]"):
        serialization.load(_file({"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"\0" * 4))
    with pytest.raises(ValueError, match="cover 4 bytes of data but the file has 8"):
        serialization.load(_file({"x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"\0" * 8))


def test_bad_arguments():
    with pytest.raises(TypeError, match="save: tensors must be a dict"):
        serialization.save([jnp.ones(2)])
    with pytest.raises(TypeError, match="tensor names must be str"):
        serialization.save({1: jnp.ones(2)})
    with pytest.raises(ValueError, match="'__metadata__' is reserved"):
        serialization.save({"__metadata__": jnp.ones(2)})
    with pytest.raises(TypeError, match="metadata must map str to str"):
        serialization.save({"x": jnp.ones(2)}, metadata={"n": 1})


def test_64_bit_tensors_with_x64():
    arrays = {"f": np.array([1.1, -2.0]), "i": np.array([2**40, -1], np.int64), "u": np.array([2**63], np.uint64)}
    with pyjax.enable_x64(True):
        got = serialization.load(st.save(arrays))
        for k, v in arrays.items():
            assert got[k].dtype == v.dtype and got[k].tolist() == v.tolist(), k
        back = st.load(serialization.save(got))
    assert all(back[k].dtype == v.dtype and np.array_equal(back[k], v) for k, v in arrays.items())
