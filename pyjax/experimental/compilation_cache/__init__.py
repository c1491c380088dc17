"""jax.experimental.compilation_cache: the persistent compilation cache's settings."""

from pyjax.experimental.compilation_cache import compilation_cache  # noqa: F401
