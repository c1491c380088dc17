"""pyjax.experimental: io_callback (jax.experimental)."""

from pyjax._callback import io_callback  # noqa: F401

__all__ = ["io_callback"]
