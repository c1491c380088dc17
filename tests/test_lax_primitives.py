"""The primitive objects jax.lax exports (`*_p`): pyjax's exist under JAX's names with JAX's
primitive names, bind like any primitive and show in jaxprs under that name."""

from __future__ import annotations

import jax
import numpy as np

import pyjax
from pyjax.core.core import Primitive


def test_exported_primitives_are_named_as_jax():
    names = [n for n in dir(pyjax.lax) if n.endswith("_p") and hasattr(jax.lax, n)]
    assert {"gather_p", "scatter_p", "dynamic_slice_p", "psum_p", "all_gather_p", "ppermute_p"} <= set(names)
    for n in names:
        p = getattr(pyjax.lax, n)
        assert isinstance(p, Primitive) and p.name == getattr(jax.lax, n).name, n
    for n in (n for n in dir(pyjax.lax.linalg) if n.endswith("_p")):
        assert getattr(pyjax.lax.linalg, n).name == getattr(jax.lax.linalg, n).name, n


def test_bind_shows_in_jaxpr():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = lambda x: pyjax.lax.dynamic_slice_p.bind(x, np.int32(1), np.int32(1), slice_sizes=(1, 2))  # noqa: E731
    assert "dynamic_slice[slice_sizes=(1, 2)]" in str(pyjax.make_jaxpr(f)(x))
    np.testing.assert_array_equal(f(x), x[1:, 1:])
