"""jax.version: the version strings (pyjax's own, and the JAX release whose API it follows)."""

from pyjax import __version__  # noqa: F401
from pyjax._alias import JAX_API_VERSION as jax_api_version  # noqa: F401

_version = __version__
