"""jax.scipy.spatial: rotations (transform.Rotation, transform.Slerp)."""

from pyjax.scipy.spatial import transform  # noqa: F401
