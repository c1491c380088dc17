"""pyjax.scipy: JAX's scipy-compatible linear algebra, special functions and distributions."""

from pyjax.scipy import linalg  # noqa: F401
from pyjax.scipy import sparse  # noqa: F401
from pyjax.scipy import special  # noqa: F401
from pyjax.scipy import stats  # noqa: F401
