"""jax.experimental.mesh_utils and multihost_utils for one process, against JAX's single-process results."""

from __future__ import annotations

import re

import jax
import jax.experimental.mesh_utils as jmu
import jax.experimental.multihost_utils as jmh
import numpy as np
import pytest

import pyjax
import pyjax.experimental.mesh_utils as pmu
import pyjax.experimental.multihost_utils as pmh
from tests.jax_compare import assert_close


def _host_tree_equal(a, b):
    la, ta = pyjax.tree_util.tree_flatten(a)
    lb, tb = jax.tree_util.tree_flatten(b)
    assert str(ta) == str(tb)
    for x, y in zip(la, lb):
        assert type(x) is type(y) and x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x, y)


def test_device_meshes():
    for shape in [(1,), (1, 1), ()]:
        p, j = pmu.create_device_mesh(shape), jmu.create_device_mesh(shape)
        assert p.shape == j.shape and p.dtype == object and list(p.flat) == pyjax.devices()
    assert pmu.create_hybrid_device_mesh((1, 1), (1, 1), process_is_granule=True).shape == (1, 1)
    for f in ("create_device_mesh((2,))", "create_hybrid_device_mesh((1,), (1,))", "create_hybrid_device_mesh((1,), (2,), process_is_granule=True)"):  # fmt: skip
        with pytest.raises(ValueError) as ej:
            eval("jmu." + f)
        with pytest.raises(ValueError) as ep:
            eval("pmu." + f)
        assert re.sub(r"\w+:0", "dev", str(ep.value)) == re.sub(r"\w+:0", "dev", str(ej.value))  # device names differ
    mesh = pyjax.sharding.Mesh(pmu.create_device_mesh((1,)), ("d",))
    assert mesh.shape == {"d": 1}


def test_multihost_one_process():
    tree = {"a": np.float32(3), "b": 2, "c": np.ones((2, 3), np.float32)}
    _host_tree_equal(pmh.broadcast_one_to_all(tree), jmh.broadcast_one_to_all(tree))
    for tiled in (False, True):
        _host_tree_equal(pmh.process_allgather(tree, tiled=tiled), jmh.process_allgather(tree, tiled=tiled))
    assert pmh.sync_global_devices("step") is None and pmh.assert_equal(tree) is None
    assert pmh.reached_preemption_sync_point(3) is jmh.reached_preemption_sync_point(3) is False
    P = pyjax.sharding.PartitionSpec
    mesh = pyjax.make_mesh((1,), ("d",))
    local = {"u": np.arange(4.0, dtype=np.float32), "v": np.ones((2, 2), np.float32)}
    g = pmh.host_local_array_to_global_array(local, mesh, {"u": P("d"), "v": P()})
    assert g["u"].sharding == pyjax.sharding.NamedSharding(mesh, P("d"))
    back = pmh.global_array_to_host_local_array(g, mesh, P())
    jmesh = jax.make_mesh((1,), ("d",))
    assert_close(back, jmh.global_array_to_host_local_array(jmh.host_local_array_to_global_array(local, jmesh, jax.sharding.PartitionSpec()), jmesh, jax.sharding.PartitionSpec()))  # fmt: skip
    with pytest.raises(ValueError, match="PartitionSpec()"):
        pmh.host_local_array_to_global_array(local["u"], mesh, None)
    with pytest.raises(RuntimeError, match="not initialized"):
        with pmh.live_devices(pyjax.devices()):
            pass
