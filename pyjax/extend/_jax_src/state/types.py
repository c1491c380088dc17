"""jax._src.state.types under alias_jax: AbstractRef, the type of a Ref (flax.nnx checks isinstance against it)."""

from pyjax.ref import AbstractRef  # noqa: F401

__all__ = ["AbstractRef"]
