"""pyjax.scipy: JAX's scipy-compatible special functions and distributions."""

from pyjax.scipy import special  # noqa: F401
from pyjax.scipy import stats  # noqa: F401
