"""jax.experimental.compilation_cache.compilation_cache: where compiled programs persist across processes.

pyjax compiles kernels in milliseconds and keeps them in memory only (bounded caches per process), so
set_cache_dir records the path for code that reads it back and reset_cache forgets it."""

from __future__ import annotations

__all__ = ["reset_cache", "set_cache_dir"]

_state: dict = {"path": None}


def set_cache_dir(path) -> None:
    """Record path as the persistent cache directory (pyjax writes nothing there)."""
    _state["path"] = None if path is None else str(path)


def reset_cache() -> None:
    """Forget the cache directory."""
    _state["path"] = None
