"""pyjax.lax: the primitive operations (JAX's lax API)."""

from pyjax.lax.lax import *  # noqa: F401,F403
from pyjax.lax.lax import abs, max, min, pow, round  # noqa: F401
