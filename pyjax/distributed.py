"""jax.distributed for one process: initialize/is_initialized/shutdown as JAX behaves with a single process.

A browser tab is one process with no coordinator to reach, so initialize accepts only a one-process
configuration (num_processes None or 1, process_id None or 0) and raises otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["initialize", "is_initialized", "shutdown"]

_state = {"initialized": False}


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids: int | Sequence[int] | None = None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
    slice_index: int | None = None,
    partition_index: int | None = None,
) -> None:
    """Start the (one-process) distributed runtime; more than one process raises NotImplementedError."""
    if _state["initialized"]:
        raise RuntimeError("jax.distributed.initialize should only be called once.")
    if num_processes not in (None, 1) or process_id not in (None, 0):
        raise NotImplementedError(
            "pyjax runs in one process (a browser tab or one Python process): jax.distributed.initialize "
            f"supports num_processes=1 only, got num_processes={num_processes}, process_id={process_id}"
        )
    _state["initialized"] = True


def is_initialized() -> bool:
    """Whether initialize was called (and shutdown was not)."""
    return _state["initialized"]


def shutdown() -> None:
    """Stop the distributed runtime (a no-op when it was not started)."""
    _state["initialized"] = False
