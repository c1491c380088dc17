"""pyjax.extend.core (jax.extend.core, and jax.core under alias_jax): primitives, avals and jaxprs.

A Primitive made here runs its impl eagerly and as a host step under jit, and takes part in grad
and vmap through the rules registered in pyjax.extend.interpreters (ad, batching).
"""

from __future__ import annotations

from typing import Any

from pyjax.core import core as _core
from pyjax.core import dtypes as _dtypes
from pyjax.core.core import (  # noqa: F401
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    Trace,
    Tracer,
    Var,
    concrete_or_error,
    get_aval,
    jaxpr_as_fun,
    valid_jaxtype,
)
from pyjax.core.errors import ConcretizationTypeError  # noqa: F401
from pyjax.runtime import control as _control

__all__ = [
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Primitive",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Var",
    "concrete_or_error",
    "eval_jaxpr",
    "get_aval",
    "get_opaque_trace_state",
    "jaxpr_as_fun",
    "mapped_aval",
    "unmapped_aval",
    "valid_jaxtype",
]


class _ShapedArrayType(type):
    """isinstance(x, ShapedArray) means pyjax's aval; calling it normalizes the dtype (numpy's, a scalar type)."""

    def __instancecheck__(cls, x):
        return isinstance(x, _core.ShapedArray)

    def __subclasscheck__(cls, c):
        return issubclass(c, _core.ShapedArray)

    def __call__(cls, shape, dtype, weak_type: bool = False, **_):
        return _core.ShapedArray(tuple(int(d) for d in shape), _dtypes.canonicalize(_dtypes.dtype(dtype)), weak_type)


class ShapedArray(metaclass=_ShapedArrayType):
    """JAX's ShapedArray(shape, dtype, weak_type=False): makes (and matches) pyjax's abstract values."""


def _as_aval(a: Any) -> _core.ShapedArray:
    if isinstance(a, _core.ShapedArray):
        return a
    if hasattr(a, "shape") and hasattr(a, "dtype"):  # ShapeDtypeStruct and the like
        return ShapedArray(a.shape, a.dtype, getattr(a, "weak_type", False))
    raise TypeError(f"abstract evaluation rule must return ShapedArrays, got {a!r}")


class Primitive(_core.Primitive):
    """A named operation with user rules: def_impl, def_abstract_eval; ad/batching tables for the rest."""

    def __init__(self, name: str):
        super().__init__(name)
        self.impl = self._no_impl

    def _no_impl(self, *args, **params):
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")

    def def_impl(self, impl):
        self.impl = impl
        multiple = lambda: self.multiple_results  # noqa: E731  (read when run: set after def_impl too)
        _control.register_host_primitive(
            self.name,
            lambda arrays, **params: list(impl(*arrays, **params)) if multiple() else [impl(*arrays, **params)],
        )
        return impl

    def def_abstract_eval(self, abstract_eval):
        def rule(*avals, **params):
            out = abstract_eval(*avals, **params)
            return [_as_aval(a) for a in out] if self.multiple_results else _as_aval(out)

        self.abstract_eval = rule
        return abstract_eval

    def def_effectful_abstract_eval(self, abstract_eval):
        """abstract_eval returns (avals, effects); pyjax keeps no effect sets."""
        return self.def_abstract_eval(lambda *a, **p: abstract_eval(*a, **p)[0])


def eval_jaxpr(jaxpr: Jaxpr, consts: list, *args: Any) -> list:
    """JAX's eval_jaxpr(jaxpr, consts, *args): interpret with bind (enclosing transformations apply)."""
    return _core.eval_jaxpr(jaxpr, [*consts, *args])


class OpaqueTraceState:
    """Which transformations are active (the interpreter stack): equal only to a state taken under
    the same ones. Libraries compare two to notice a value crossing a transformation boundary."""

    def __init__(self, mains: tuple):
        self._mains = mains

    def __eq__(self, other):
        return (
            isinstance(other, OpaqueTraceState)
            and len(self._mains) == len(other._mains)
            and all(a is b for a, b in zip(self._mains, other._mains))
        )

    def __hash__(self):
        return hash(tuple(id(m) for m in self._mains))


def get_opaque_trace_state(convention: str | None = None) -> OpaqueTraceState:
    """The current interpreter stack, as an opaque comparable value (JAX's get_opaque_trace_state)."""
    return OpaqueTraceState((*_core.state.trace_stack, _core.state.dynamic_trace))


def mapped_aval(size: int, axis: int | None, aval: _core.ShapedArray) -> _core.ShapedArray:
    """The aval of one slice of `aval` along a mapped axis of length size (vmap's per-example view)."""
    if axis is None:
        return aval
    if aval.shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} has size {aval.shape[axis]}, not {size}")
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1 :])


def unmapped_aval(size: int, axis: int | None, aval: _core.ShapedArray, explicit_mesh_axis=None) -> _core.ShapedArray:
    """The aval with a mapped axis of length size inserted at axis (the inverse of mapped_aval)."""
    if axis is None:
        return aval
    return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=None, source_info=None) -> JaxprEqn:
    return JaxprEqn(primitive, list(invars), dict(params), list(outvars))
