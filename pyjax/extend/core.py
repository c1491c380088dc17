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
    "AbstractToken",
    "InconclusiveDimensionOperation",
    "array_types",
    "DebugInfo",
    "DropVar",
    "Effect",
    "Effects",
    "JaxprTypeError",
    "Token",
    "check_jaxpr",
    "find_top_trace",
    "gensym",
    "jaxprs_in_params",
    "new_jaxpr_eqn",
    "no_effects",
    "primal_dtype_to_tangent_dtype",
    "subjaxprs",
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


# --- effects, tokens, variables: the names flax.nnx and other libraries define classes against --------


class Effect:
    """The base of side-effect kinds a primitive may declare (pyjax's jaxprs carry no effect sets)."""


Effects = set  # a set of Effect instances
no_effects: frozenset = frozenset()


class InconclusiveDimensionOperation(Exception):
    """A comparison of symbolic dimensions has no definite answer (pyjax has no symbolic dimensions)."""


def _array_types() -> set:
    from pyjax.runtime.array import Array

    out = {Array, bool, int, float, complex}
    try:
        import numpy as np

        out |= {np.ndarray, np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32}
        out |= {np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128}
    except ImportError:
        pass
    return out


array_types = _array_types()  # the Python types that are array values


class JaxprTypeError(TypeError):
    """A jaxpr is ill-typed (check_jaxpr)."""


class AbstractToken:
    """The type of a Token."""

    def str_short(self, short_dtypes: bool = False) -> str:
        return "Tok"

    def __repr__(self) -> str:
        return "AbstractToken()"


class Token:
    """An ordering token value (JAX threads these through effectful computations)."""

    def __init__(self, buf: Any = None):
        self._buf = buf

    aval = property(lambda self: AbstractToken())


class DropVar(Var):
    """An equation output that nothing reads (printed `_`)."""

    def __repr__(self):
        return "_"


class DebugInfo:
    """Where a traced function came from: what traced it, its source, argument names, result paths."""

    def __init__(self, traced_for: str, func_src_info: str | None, arg_names: tuple, result_paths: tuple | None):
        self.traced_for = traced_for
        self.func_src_info = func_src_info
        self.arg_names = tuple(arg_names)
        self.result_paths = result_paths

    def __repr__(self):
        return (
            f"DebugInfo(traced_for={self.traced_for!r}, func_src_info={self.func_src_info!r}, "
            f"arg_names={self.arg_names!r}, result_paths={self.result_paths!r})"
        )


def gensym(suffix: str = "") -> Any:
    """A maker of fresh variables: gensym()(aval) -> Var."""
    return lambda aval: Var(aval)


def find_top_trace(xs) -> Any:
    """The innermost trace among xs' tracers and the current staging trace (None when evaluating eagerly)."""
    return _core.find_top_trace(list(xs))


def primal_dtype_to_tangent_dtype(primal_dtype: Any) -> Any:
    """float0 for integer and bool primals, the dtype itself for inexact ones."""
    from pyjax import dtypes as _public_dtypes

    d = _dtypes.dtype(primal_dtype)
    return _public_dtypes.float0 if d.kind in "biu" else d


def jaxprs_in_params(params: dict):
    """The jaxprs among an equation's parameters (ClosedJaxprs give their jaxpr), also inside tuples and lists."""
    for v in params.values():
        for x in v if isinstance(v, (tuple, list)) else (v,):
            if isinstance(x, ClosedJaxpr):
                yield x.jaxpr
            elif isinstance(x, Jaxpr):
                yield x


def subjaxprs(jaxpr: Jaxpr | ClosedJaxpr):
    """The jaxprs that jaxpr's equations carry (one level deep)."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def _same_type(a: Any, b: Any) -> bool:
    return tuple(a.shape) == tuple(b.shape) and a.dtype == b.dtype


def check_jaxpr(jaxpr: Jaxpr | ClosedJaxpr) -> None:
    """Type-check jaxpr: every variable is bound before use, and each equation's outputs have the types
    its primitive's abstract evaluation gives (JaxprTypeError otherwise); sub-jaxprs are checked too."""
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    bound = {id(v) for v in jaxpr.in_binders}

    def read(x, where):
        if isinstance(x, Literal):
            return x.aval
        if id(x) not in bound:
            raise JaxprTypeError(f"Variable '{x}' not defined\n\nin {where}")
        return x.aval

    for i, eqn in enumerate(jaxpr.eqns):
        where = f"equation {i}: {eqn.primitive.name}"
        avals = [read(x, where) for x in eqn.invars]
        rule = getattr(eqn.primitive, "abstract_eval", None)
        if rule is not None:
            try:
                out = rule(*avals, **eqn.params)
            except (TypeError, ValueError) as e:
                raise JaxprTypeError(f"{where}: {e}") from None
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(eqn.outvars) or not all(_same_type(a, v.aval) for a, v in zip(outs, eqn.outvars)):
                raise JaxprTypeError(
                    f"{where}: the primitive gives {[str(a) for a in outs]} but the equation binds "
                    f"{[str(v.aval) for v in eqn.outvars]}"
                )
        for sub in jaxprs_in_params(eqn.params):
            check_jaxpr(sub)
        bound.update(id(v) for v in eqn.outvars)
    for x in jaxpr.outs:
        read(x, "the jaxpr's outputs")


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:  # noqa: N802  (JAX's name)
    """Whether a jit (or another staging transformation) is tracing right now."""
    return _core.state.dynamic_trace is not None


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:  # noqa: N802  (JAX's name)
    """Whether a vmap is active."""
    from pyjax.interpreters import batching

    return any(m.trace_type is batching.BatchTrace for m in _core.state.trace_stack)


def unsafe_get_axis_names_DO_NOT_USE() -> list:  # noqa: N802  (JAX's name)
    """The named axes in scope (vmap/pmap/shard_map axis names)."""
    from pyjax.interpreters import batching

    return [a.name for a in batching.axis_env]


def nonempty_axis_env_DO_NOT_USE() -> bool:  # noqa: N802  (JAX's name)
    """Whether any named axis is in scope."""
    return bool(unsafe_get_axis_names_DO_NOT_USE())


def __getattr__(name: str):
    """`primitives`: the module of lax's primitive objects (loaded on first use)."""
    if name == "primitives":
        import importlib

        return importlib.import_module("pyjax.extend.primitives")
    raise AttributeError(f"module 'pyjax.extend.core' has no attribute {name!r}")
