"""pyjax.experimental.multihost_utils for pyjax's single process: JAX's results when jax.process_count() is 1.

Gathers and broadcasts return host (numpy) copies of the inputs, stacked along a new leading process
axis where JAX stacks; barriers and equality checks across hosts hold trivially; host-local and
global arrays coincide, so the conversions place each leaf with NamedSharding(mesh, spec).
"""

from __future__ import annotations

import contextlib
import zlib
from typing import Any

from pyjax.api import device_put
from pyjax.core.pytree import tree_flatten, tree_map, tree_unflatten
from pyjax.distributed import is_initialized
from pyjax.sharding import NamedSharding, PartitionSpec, broadcast_prefix

__all__ = [
    "ProcessFailureError",
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "live_devices",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]


class ProcessFailureError(Exception):
    """A process of the job failed (JAX raises it from live_devices); pyjax has no other process to lose."""

    def __init__(self, failed_devices):
        super().__init__(f"processes of devices {failed_devices} failed")
        self.failed_devices = failed_devices


def _host(x):
    import numpy as np

    return np.asarray(x)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """in_tree as host arrays: with one process, the source's data is the caller's."""
    return tree_map(_host, in_tree)


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Every leaf gathered over the one process: stacked on a new axis 0, or as is when tiled."""
    import numpy as np

    return tree_map(lambda x: _host(x) if tiled else np.expand_dims(_host(x), 0), in_tree)


def assert_equal(in_tree, fail_message: str = "") -> None:
    """All processes hold the same values: true of one process (leaves are still read, as JAX does)."""
    process_allgather(in_tree, tiled=True)


def sync_global_devices(name: str) -> None:
    """A barrier across processes: nothing to wait for with one."""
    assert_equal(zlib.crc32(name.encode()), f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
    """False: no coordination service runs, so no preemption notice can arrive (JAX without a client)."""
    return False


@contextlib.contextmanager
def live_devices(devices):
    """JAX's context of the devices still alive; it needs the distributed runtime, as in JAX."""
    if not is_initialized():
        raise RuntimeError("Distributed JAX not initialized.")
    yield list(devices)


def _place(local_inputs: Any, global_mesh, pspecs: Any, what: str) -> Any:
    leaves, tree = tree_flatten(local_inputs)
    pairs = broadcast_prefix(pspecs, local_inputs, what)
    out = []
    for (spec, _), x in zip(pairs, leaves):
        if spec is None:
            raise ValueError(
                "`None` is not a valid input to the pspecs argument. Please use "
                "jax.sharding.PartitionSpec() if you wanted to replicate your input."
            )
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"{what} must be PartitionSpecs, got {spec!r}")
        out.append(device_put(x, NamedSharding(global_mesh, spec)))
    return tree_unflatten(tree, out)


def host_local_array_to_global_array(local_inputs: Any, global_mesh, pspecs: Any) -> Any:
    """The host-local values as global arrays sharded by pspecs over global_mesh (the same data here)."""
    return _place(local_inputs, global_mesh, pspecs, "input pspecs")


def global_array_to_host_local_array(global_inputs: Any, global_mesh, pspecs: Any) -> Any:
    """The global arrays as this host's local arrays (all of them, with one process)."""
    return _place(global_inputs, global_mesh, pspecs, "output pspecs")
