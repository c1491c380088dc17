"""jax.scipy.cluster: vector quantisation (vq)."""

from pyjax.scipy.cluster import vq  # noqa: F401
