"""pyjax.experimental: io_callback, shard_map (jax.experimental)."""

from pyjax._callback import io_callback  # noqa: F401
from pyjax.experimental import compilation_cache, shard_map  # noqa: F401  (modules, as in JAX)

__all__ = ["compilation_cache", "io_callback", "shard_map"]
