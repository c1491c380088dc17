"""pyjax.debug: print and call back from traced code (jax.debug), and breakpoint."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from pyjax._callback import debug_callback as callback  # noqa: F401
from pyjax._callback import debug_print as print  # noqa: F401

__all__ = ["breakpoint", "callback", "print"]


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
