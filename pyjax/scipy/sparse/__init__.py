"""pyjax.scipy.sparse: JAX's iterative linear solvers (scipy.sparse.linalg)."""

from pyjax.scipy.sparse import linalg  # noqa: F401
