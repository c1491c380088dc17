"""`pyjax.Array` / `jnp.ndarray` for isinstance checks: concrete arrays and tracers alike."""

from __future__ import annotations

from pyjax._prng import PRNGKeyArray
from pyjax.core.core import Tracer
from pyjax.runtime.array import Array as _ConcreteArray

# Typed PRNG key arrays are jax.Array instances in JAX too.
_ARRAY_TYPES = (_ConcreteArray, Tracer, PRNGKeyArray)


class _ArrayMeta(type):
    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, _ARRAY_TYPES)

    def __subclasscheck__(cls, sub) -> bool:
        return issubclass(sub, _ARRAY_TYPES)


class Array(metaclass=_ArrayMeta):
    """The type of pyjax arrays (JAX's jax.Array): isinstance is true for arrays and tracers."""

    def __init__(self, *args, **kwargs):
        raise TypeError("pyjax.Array cannot be instantiated; use pyjax.numpy.array")


ArrayLike = (Array, int, float, bool)
