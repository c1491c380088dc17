"""jax.experimental.shard_map: the older spelling of jax.shard_map (positional mesh and specs, check_rep)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyjax import _shard_map

__all__ = ["shard_map"]


def shard_map(f: Callable, mesh: Any, in_specs: Any, out_specs: Any, check_rep: bool = True) -> Callable:
    """jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep)."""
    return _shard_map.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_rep)
