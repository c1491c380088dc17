"""pyjax.experimental: io_callback, shard_map (jax.experimental)."""

from pyjax._callback import io_callback  # noqa: F401
from pyjax.experimental import shard_map  # noqa: F401  (the module, as in JAX)

__all__ = ["io_callback", "shard_map"]
