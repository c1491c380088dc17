"""pyjax.debug: print, log and call back from traced code (jax.debug), breakpoint, and the sharding
inspectors (one device: every array is whole on it)."""

from __future__ import annotations

import functools
import sys
import warnings
from typing import Any

from pyjax._callback import debug_callback as callback  # noqa: F401
from pyjax._callback import debug_print as print  # noqa: F401
from pyjax.extend.core import Effect

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "breakpoint",
    "callback",
    "inspect_array_sharding",
    "log",
    "print",
    "visualize_array_sharding",
    "visualize_sharding",
]

log = functools.partial(print, _use_logging=True)  # jax.debug.log: print's message to logging at INFO


class DebugEffect(Effect):
    """The effect of debug callbacks (pyjax keeps them in program order in any case)."""


class OrderedDebugEffect(Effect):
    """The effect of ordered debug callbacks."""


def _sharding_of(x: Any) -> Any:
    from pyjax.core.core import Tracer
    from pyjax.runtime import device as devmod

    s = None if isinstance(x, Tracer) else getattr(x, "sharding", None)
    return s if s is not None else devmod.SingleDeviceSharding(devmod.default_device())


def inspect_array_sharding(value: Any, *, callback: Any) -> None:
    """callback(sharding) for each array of value (inside jit too: called while tracing, as JAX)."""
    from pyjax.core.pytree import tree_leaves

    for leaf in tree_leaves(value):
        callback(_sharding_of(leaf))


def visualize_sharding(shape: Any, sharding: Any, *, use_color: bool = True, scale: float = 1.0, **kwargs) -> None:
    """Print which device holds which block of an array of shape: one device holds all of it."""
    devs = sorted(getattr(sharding, "device_set", ()) or [], key=lambda d: d.id)
    label = " ".join(f"{d.platform.upper()} {d.id}" for d in devs) or "device"
    width = max(len(label) + 4, 9)
    sys.stdout.write("┌" + "─" * width + "┐\n│" + label.center(width) + "│\n└" + "─" * width + "┘\n")


def visualize_array_sharding(arr: Any, **kwargs) -> None:
    """visualize_sharding of arr's shape and sharding."""
    visualize_sharding(tuple(arr.shape), _sharding_of(arr), **kwargs)


def breakpoint(
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token: Any = None,
    **kwargs,
) -> Any:
    """jax.debug.breakpoint: opens pdb in the caller's frame when run eagerly in an interactive native
    session; elsewhere (under jit/grad/vmap tracing, in the browser, without a terminal) it warns once
    and continues, since there is no console to stop at. Returns token unchanged."""
    from pyjax.core import core

    interactive = sys.platform != "emscripten" and getattr(sys.stdin, "isatty", lambda: False)()
    if interactive and core.state.dynamic_trace is None and not core.state.trace_stack:
        import pdb

        pdb.Pdb().set_trace(sys._getframe(1))
    else:
        warnings.warn(
            "pyjax: jax.debug.breakpoint() has no interactive debugger here (traced code, browser or no "
            "terminal); continuing. Use jax.debug.print or jax.debug.callback to inspect values.",
            RuntimeWarning,
            stacklevel=2,
        )
    return token
