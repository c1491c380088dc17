"""pyjax.numpy logspace, geomspace, diagflat, fromfunction and frombuffer (pyjax/numpy/_creation.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from jax_compare import assert_case_matches, check

# --- spaced sequences and float decomposition -----------------------------------------------------


@pytest.mark.parametrize("dtype", ["bfloat16", "int32", "float8_e5m2", "float4_e2m1fn", "float32"])
def test_linspace_rounds_as_jax(backend, dtype):
    # JAX computes start * (1 - t) + stop * t in the dtype itself: narrow floats and integers come out
    # bit for bit; float32 within an ulp (XLA fuses its products)
    import jax.numpy as jnp

    import pyjax.numpy as pjnp

    for args, kw in (((0, 6, 7), {}), ((-1.0, 3.0, 9), {}), ((0.1, 100.0, 5), dict(endpoint=False)), ((2, 9, 1), {})):
        want, wstep = jnp.linspace(*args, dtype=dtype, retstep=True, **kw)
        got, gstep = pjnp.linspace(*args, dtype=dtype, retstep=True, **kw)
        assert got.dtype == want.dtype and gstep.dtype == wstep.dtype
        np.testing.assert_array_equal(np.asarray(gstep, np.float32), np.asarray(wstep, np.float32))
        g, w = np.asarray(got, np.float32), np.asarray(want, np.float32)
        if dtype == "float32":
            np.testing.assert_allclose(g, w, rtol=2e-7)
        else:
            np.testing.assert_array_equal(g, w)


def test_logspace_geomspace(backend):
    for kw in (
        {},
        dict(num=5),
        dict(num=4, endpoint=False),
        dict(num=6, base=2.0),
        dict(num=3, dtype=np.int32),
        dict(num=1),
        dict(num=0),
    ):
        check(lambda lib, np_: np_.logspace(0.0, 2.0, **kw), rtol=1e-5, atol=1e-6)
    check(lambda lib, np_: np_.logspace(np_.array([0.0, 1.0]), np_.array([2.0, 3.0]), 4, axis=1), rtol=1e-5)
    for start, stop in ((1.0, 1000.0), (-1.0, -16.0), (2, 50), (1000.0, 1.0)):
        for kw in ({}, dict(num=5), dict(num=4, endpoint=False), dict(num=3, dtype=np.float32)):
            check(lambda lib, np_: np_.geomspace(start, stop, **kw), rtol=1e-5, atol=1e-6)
    check(lambda lib, np_: np_.geomspace(np_.array([1.0, 2.0]), np_.array([8.0, 32.0]), 4, axis=1), rtol=1e-5)


@pytest.mark.parametrize(
    "bounds",
    [(np.int64(6),), (np.int32(3), np.int64(9)), (np.float64(2.5),), (np.int64(0), 7, np.int64(2)), (np.uint8(4),)]
    + [(np.int16(3), 7.5), (np.float32(1), 4), ("int16", 5), ("array", 4), (np.array(3),), (2, 9, 3), (0, 1, 0.25)],
)
def test_arange_bounds_keep_their_dtypes(bounds):
    """NumPy scalars (np.prod's int64) and JAX scalars as arange bounds: their dtype, not an error."""

    def prog(lib, np_):
        b = (
            (np_.int16(bounds[1]),)
            if bounds[0] == "int16"
            else (np_.array(bounds[1]),)
            if bounds[0] == "array"
            else bounds
        )
        return np_.arange(*b), lib.jit(lambda: np_.arange(*b))()

    check(prog)


def test_array_namespace():
    import jax

    import pyjax

    for lib in (jax, pyjax):
        x = lib.numpy.arange(3.0)
        assert x.__array_namespace__() is lib.numpy
        seen = []
        lib.jit(lambda x: seen.append(x.__array_namespace__()) or x)(x)
        assert seen == [lib.numpy]


CASES = {
    "diagflat": lambda L: L.diagflat(L.array([[1, 2], [3, 4]]), 1),
    "fromfunction": lambda L: L.fromfunction(lambda i, j: i + 2 * j, (3, 4)),
    "fromfunction_int": lambda L: L.fromfunction(lambda i, j: i + 2 * j, (3, 4), dtype=int),
    "frombuffer": lambda L: L.frombuffer(np.arange(4, dtype=np.float32).tobytes(), dtype=L.float32),
    "frombuffer_u8": lambda L: L.frombuffer(bytes([1, 2, 3, 4]), dtype=L.uint8, offset=1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name])
