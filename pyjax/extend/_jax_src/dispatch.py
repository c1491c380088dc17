"""jax._src.dispatch under alias_jax: `wait_for_tokens` (equinox calls it at exit) waits for pending work."""

from pyjax.api import effects_barrier as wait_for_tokens  # noqa: F401
