"""jnp.save / jnp.load (.npy, pure Python) against numpy's and JAX's files."""

from __future__ import annotations

import io

import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax.numpy as jnp

CASES = [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array(3.5, np.float32),
    np.array([True, False]),
    np.arange(-3, 3, dtype=np.int8),
    np.arange(5, dtype=np.uint16),
    np.array([1.5, -2.25], np.float16),
    np.array([1 + 2j, -3j], np.complex64),
    np.zeros((0, 3), np.int32),
    np.arange(6, dtype=np.int32).reshape(3, 2).T,
]


@pytest.mark.parametrize("x", CASES, ids=lambda x: f"{x.dtype}{list(x.shape)}")
def test_round_trips(x, backend):
    f = io.BytesIO()
    jnp.save(f, jnp.asarray(x))
    assert np.array_equal(np.load(io.BytesIO(f.getvalue())), x)  # numpy reads pyjax's file
    y = jnp.load(io.BytesIO(f.getvalue()))
    assert y.dtype == x.dtype and y.shape == x.shape and np.array_equal(np.asarray(y), x)
    g = io.BytesIO()
    np.save(g, np.asfortranarray(x) if x.ndim else x)  # numpy's file (Fortran order too) read by pyjax
    g.seek(0)
    z = jnp.load(g)
    assert z.dtype == x.dtype and np.array_equal(np.asarray(z), x)


def test_bfloat16_and_paths(tmp_path, backend):
    x = jnp.array([2, 4, 6.5, -1e30], dtype=jnp.bfloat16)
    f = io.BytesIO()
    jjnp.save(f, jjnp.asarray(np.asarray(x)))  # JAX's file
    f.seek(0)
    y = jnp.load(f)
    assert y.dtype == jnp.bfloat16 and np.array_equal(np.asarray(y, np.float32), np.asarray(x, np.float32))
    g = io.BytesIO()
    jnp.save(g, x)
    g.seek(0)
    w = jjnp.load(g)
    assert w.dtype == jjnp.bfloat16 and np.array_equal(np.asarray(w, np.float32), np.asarray(x, np.float32))
    jnp.save(tmp_path / "a", jnp.arange(3))  # ".npy" appended, as numpy does
    assert jnp.load(tmp_path / "a.npy").tolist() == [0, 1, 2]
    np.savez(tmp_path / "b.npz", a=np.ones(2))
    assert np.array_equal(jnp.load(tmp_path / "b.npz")["a"], np.ones(2))
    with pytest.raises(ValueError, match="load"):
        jnp.load(io.BytesIO(b"not an array"))


def test_savez_and_fromfile(tmp_path):
    """jnp.savez writes an .npz numpy and jnp.load read back (positional arr_i, then keywords); fromfile
    raises JAX's NotImplementedError."""
    jnp.savez(tmp_path / "a", jnp.arange(3), w=jnp.ones((2, 2), jnp.float32))
    with np.load(tmp_path / "a.npz") as got:
        assert sorted(got.files) == ["arr_0", "w"]
        np.testing.assert_array_equal(got["arr_0"], np.arange(3, dtype=np.int32))
        assert got["w"].dtype == np.float32 and got["w"].shape == (2, 2)
    with pytest.raises(NotImplementedError, match="fromfile"):
        jnp.fromfile(tmp_path / "a.npz")


def test_numpy_abstract_and_warning_types_as_jax():
    for name in ("character", "flexible", "object_", "ComplexWarning"):
        assert getattr(jnp, name) is getattr(jjnp, name), name
    for a, b in ((jnp.float32, jnp.flexible), (jnp.int32, jnp.object_), (jnp.bool_, jnp.character)):
        assert jnp.issubdtype(a, b) == jjnp.issubdtype(a, b)
