"""jax._src.traceback_util under alias_jax: libraries register their source paths as excluded from
user-facing tracebacks (equinox and flax do, at import) and ask whether a frame is the user's.
pyjax does not rewrite tracebacks, so `api_boundary` returns the function as it is."""

from __future__ import annotations

import types
from collections.abc import Callable

_exclude_paths: list[str] = []  # JAX's name: flax edits this list directly


def register_exclusion(path: str) -> None:
    """Frames from files under path count as library frames, not the user's."""
    _exclude_paths.append(path)


def include_filename(filename: str) -> bool:
    return not any(filename.startswith(p) for p in _exclude_paths)


def include_frame(f: types.FrameType) -> bool:
    """Is this frame user code (not under a registered exclusion)?"""
    return include_filename(f.f_code.co_filename)


def api_boundary(fun: Callable) -> Callable:
    """Marks a library entry point (JAX filters the frames below it from tracebacks; pyjax keeps them)."""
    return fun
