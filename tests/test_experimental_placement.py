"""jax.experimental's placement and annotation helpers on one device (compute_on, shard_alike,
xla_metadata, custom_partitioning): JAX's values and JAX's argument checks."""

from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest

import pyjax


def _mods(name):
    return [importlib.import_module(f"{lib}.experimental.{name}") for lib in ("jax", "pyjax")]


def test_placement_helpers_match_jax():
    x = np.arange(3.0, dtype=np.float32)
    for lib, co, sa, xm, cp in zip((jax, pyjax), *map(_mods, ("compute_on", "shard_alike", "xla_metadata", "custom_partitioning"))):  # fmt: skip
        with co.compute_on("device_host"):
            np.testing.assert_array_equal(lib.jit(lambda v: v * 2)(x), x * 2)
        np.testing.assert_array_equal(lib.jit(co.compute_on("device")(lambda v: v + 1))(x), x + 1)
        with pytest.raises(ValueError, match="Invalid compute type gpu"):
            with co.compute_on("gpu"):
                pass
        a, b = lib.jit(sa.shard_alike)(x, x * 2)
        np.testing.assert_array_equal(b, x * 2)
        with pytest.raises(ValueError, match="leaves shapes of `x` and `y` should match"):
            sa.shard_alike(x, np.ones(2, np.float32))
        with xm.set_xla_metadata(stage="one"):
            np.testing.assert_array_equal(lib.jit(lambda v: xm.set_xla_metadata(v + 1, tag="t"))(x), x + 1)

        f = cp.custom_partitioning(lambda v: lib.numpy.sin(v) * 2)
        f.def_partition(
            partition=lambda mesh, arg_shapes, result_shape: None,
            infer_sharding_from_operands=lambda mesh, arg_shapes, result_shape: None,
            sharding_rule=cp.SdyShardingRule((cp.ArrayMapping("i"),), (cp.ArrayMapping("i"),)),
        )
        np.testing.assert_allclose(lib.jit(f)(x), np.sin(x) * 2, rtol=1e-6)
    assert _mods("custom_partitioning")[1].BATCHING == jax.experimental.custom_partitioning.BATCHING
