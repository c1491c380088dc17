"""pyjax.debug: print and call back from traced code (jax.debug)."""

from pyjax._callback import debug_callback as callback  # noqa: F401
from pyjax._callback import debug_print as print  # noqa: F401

__all__ = ["callback", "print"]
