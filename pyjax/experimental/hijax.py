"""jax.experimental.hijax: JAX's experimental user-defined ("high-level") types and primitives.

pyjax has no hi-types: its tracers carry ShapedArrays only. The names exist so that libraries which
define hijax classes at import time (flax.nnx's hijax Variables, off by default) load; registering a
hi-type is recorded, and binding a HiPrimitive or making a hi-type's aval raises NotImplementedError.
"""

from __future__ import annotations

from typing import Any

from pyjax.core.core import ShapedArray
from pyjax.interpreters import ad
from pyjax.interpreters.ad import Zero
from pyjax.ref import AbstractRef

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "HiPrimitive",
    "HiType",
    "MutableHiType",
    "ShapedArray",
    "VJPHiPrimitive",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "instantiate_zeros",
    "is_undefined_primal",
    "register_hitype",
]

_WHY = "pyjax: hijax types and primitives (jax.experimental.hijax) are not supported; its tracers carry arrays only"

AbstractValue = ShapedArray  # the abstract values pyjax has


class HiType:
    """The base of a user-defined abstract type."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError(_WHY)


class MutableHiType(HiType):
    """A hi-type whose value may change (quasi-dynamic data)."""


class AvalQDD:
    """An abstract value with its quasi-dynamic data."""

    def __init__(self, aval: Any, qdd: Any):
        self.aval, self.qdd = aval, qdd


class AvalMutableQDD(AvalQDD):
    """AvalQDD whose quasi-dynamic data may be updated."""


class HiPrimitive:
    """A primitive on hi-types; subclasses define its rules. Binding one is not supported."""

    multiple_results = False

    def __init__(self, name: str):
        self.name = name

    def bind(self, *args: Any, **params: Any) -> Any:
        raise NotImplementedError(_WHY)

    def __repr__(self) -> str:
        return self.name


class VJPHiPrimitive(HiPrimitive):
    """A hi-primitive with a user VJP rule."""


class HiPspec:
    """A partition spec of a hi-type's leaves."""


class _EffectTypes(set):
    def add_type(self, t: type) -> None:
        """Allow effects of type t in control-flow bodies."""
        self.add(t)


control_flow_allowed_effects = _EffectTypes()
_hitypes: dict = {}


def register_hitype(cls: type, to_aval: Any) -> None:
    """Record cls as a hi-type with its aval maker (pyjax never traces hi-types)."""
    _hitypes[cls] = to_aval


def aval_method(f: Any) -> Any:
    """Mark f as a method available on tracers of a hi-type (here: the plain function)."""
    return f


def aval_property(fget: Any = None) -> property:
    """A property available on tracers of a hi-type."""
    return property(fget)


def instantiate_zeros(x: Any) -> Any:
    """x, with a symbolic Zero made into an array of zeros."""
    return ad.instantiate(x)


def is_undefined_primal(x: Any) -> bool:
    """Whether x stands for a linear input during transposition."""
    return isinstance(x, ad.UndefinedPrimal)
