"""Ahead-of-time compilation stages (jax.stages): jit(f).trace(...) -> Traced, .lower() -> Lowered,
.compile() -> Compiled.

Every stage reuses what a jit call would use: the traced jaxpr comes from the jitted function's
cache and a Compiled runs it through the same pjit primitive, so the Program it prepared ahead of
time (per backend, for contiguous inputs) is the one the call finds in the cache. pyjax has no
StableHLO: the "lowered" text is the jaxpr and the "compiled" text is the Program of fused kernels.
"""

from __future__ import annotations

from typing import Any

from pyjax.abstract_arrays import ShapeDtypeStruct
from pyjax.core import core
from pyjax.core.core import ShapedArray, Tracer
from pyjax.core.pytree import PyTreeDef, tree_flatten, tree_unflatten
from pyjax.core.value import ByValue
from pyjax.lax._util import _arr
from pyjax.pjit import pjit_p

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]

CompilerOptions = dict  # JAX: a mapping of compiler option names to values (pyjax takes none)


class Wrapped:
    """A function wrapped by jit: call it, or stage it with .trace(...) / .lower(...)."""

    def trace(self, *args: Any, **kwargs: Any) -> Traced:
        """Trace for these arguments (arrays or ShapeDtypeStructs)."""
        raise NotImplementedError

    def lower(self, *args: Any, **kwargs: Any) -> Lowered:
        """Trace and lower for these arguments."""
        return self.trace(*args, **kwargs).lower()


class ArgInfo(ByValue):
    """One argument of a staged function: its abstract value and whether it is donated."""

    def __init__(self, aval: ShapedArray, donated: bool):
        self._aval = aval
        self.donated = donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def _key(self):
        return (self._aval, self.donated)

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"


class _Stage:
    """What every stage knows: the jitted function, its argument/output trees and avals."""

    def __init__(self, jitted: Any, in_tree: PyTreeDef, avals: list, entry: tuple, donated: list):
        self._jitted = jitted
        self.in_tree = in_tree
        self.in_avals_flat = list(avals)
        self._jaxpr, self._consts, self.out_tree = entry[0], entry[1], entry[2]
        self._donated = donated

    fun_name = property(lambda self: self._jitted.__name__)
    donate_argnums = property(lambda self: tuple(self._jitted.donate_argnums))

    @property
    def in_avals(self) -> Any:
        """The arguments' abstract values, as the (args, kwargs) pytree."""
        return tree_unflatten(self.in_tree, self.in_avals_flat)

    @property
    def out_avals(self) -> Any:
        """The outputs' abstract values, as the output pytree."""
        return tree_unflatten(self.out_tree, list(self._jaxpr.out_avals))

    @property
    def args_info(self) -> Any:
        """ArgInfo per argument leaf, as the (args, kwargs) pytree (static arguments left out)."""
        infos = [ArgInfo(a, d) for a, d in zip(self.in_avals_flat, self._donated)]
        return tree_unflatten(self.in_tree, infos)

    @property
    def out_info(self) -> Any:
        """ShapeDtypeStruct per output leaf, as the output pytree."""
        outs = [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in self._jaxpr.out_avals]
        return tree_unflatten(self.out_tree, outs)


class Traced(_Stage):
    """A jitted function traced for given argument types: its jaxpr and output types."""

    @property
    def jaxpr(self) -> core.ClosedJaxpr:
        """The traced program (printable, JAX's format)."""
        return core.ClosedJaxpr(self._jaxpr, [])

    def lower(self, *, lowering_platforms: tuple | None = None, _private_parameters: Any = None) -> Lowered:
        """Lower for the default device (or the first of lowering_platforms)."""
        from pyjax.runtime import device as devmod

        if any(isinstance(c, Tracer) for c in self._consts):
            raise TypeError(f"{self.fun_name}: cannot lower a function traced under a transformation")
        dev = devmod.get_device(lowering_platforms[0]) if lowering_platforms else devmod.default_device()
        out = Lowered(self._jitted, self.in_tree, self.in_avals_flat, (self._jaxpr, self._consts, self.out_tree), [])
        out._donated, out._device = self._donated, dev
        return out


_TRANSCENDENTAL = {
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "asinh",
    "acosh",
    "atanh",
    "logistic",
    "pow",
    "erf",
    "erfc",
    "erf_inv",
    "lgamma",
    "digamma",
    "sqrt",
    "rsqrt",
    "cbrt",
}


def _size(aval: Any) -> int:
    n = 1
    for d in getattr(aval, "shape", ()):
        n *= d
    return n


def _count(jaxpr: core.Jaxpr, acc: dict) -> None:
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        inner = [p for p in eqn.params.values() if isinstance(p, (core.Jaxpr, core.ClosedJaxpr))]
        if inner:
            for p in inner:
                _count(p.jaxpr if isinstance(p, core.ClosedJaxpr) else p, acc)
            continue
        out = sum(_size(v.aval) for v in eqn.out_binders)
        if name == "dot_general":
            (lc, _), _ = eqn.params["dimension_numbers"]
            k = 1
            for d in lc:
                k *= eqn.inputs[0].aval.shape[d]
            acc["flops"] += 2.0 * out * k
        elif name.startswith("reduce_") or name in ("argmax", "argmin", "cumsum", "cumprod"):
            acc["flops"] += float(sum(_size(x.aval) for x in eqn.inputs))
        elif name in _TRANSCENDENTAL:
            acc["transcendentals"] += float(out)
        elif len(eqn.inputs) >= 1 and name not in ("convert_element_type", "broadcast_in_dim", "reshape"):
            acc["flops"] += float(out)


def _nbytes(avals: list) -> float:
    return float(sum(_size(a) * a.dtype.itemsize for a in avals))


class Lowered(_Stage):
    """A traced function lowered for one device; .compile() prepares its kernels."""

    _device: Any = None

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The lowered program as text: pyjax's jaxpr (pyjax has no StableHLO)."""
        return str(self.compiler_ir(dialect))

    def compiler_ir(self, dialect: str | None = None) -> core.ClosedJaxpr:
        """The lowered program: a ClosedJaxpr ('jaxpr' dialect, the only one pyjax has)."""
        if dialect not in (None, "jaxpr"):
            raise ValueError(f"unknown dialect: {dialect} (pyjax lowers to its jaxpr only)")
        return core.ClosedJaxpr(self._jaxpr, [])

    def cost_analysis(self) -> dict:
        """A rough estimate (not XLA's): flops, transcendentals and bytes of the inputs and outputs."""
        acc = {"flops": 0.0, "transcendentals": 0.0}
        _count(self._jaxpr, acc)
        acc["bytes accessed"] = _nbytes(self.in_avals_flat) + _nbytes(self._jaxpr.out_avals)
        return acc

    def compile(self, compiler_options: dict | None = None) -> Compiled:
        """Prepare the jitted program's kernels on the device now (the same cached Program a call runs)."""
        from pyjax.runtime import execute

        program = execute.compile_ahead(self._jaxpr, self._device)
        out = Compiled(self._jitted, self.in_tree, self.in_avals_flat, (self._jaxpr, self._consts, self.out_tree), [])
        out._donated, out._device, out._program = self._donated, self._device, program
        return out


class Compiled(_Stage):
    """A compiled function: callable on arguments of the shapes and dtypes it was lowered for."""

    _device: Any = None
    _program: Any = None

    def as_text(self) -> str:
        """The compiled Program: its fused kernels and routines, step by step."""
        return repr(self._program)

    def runtime_executable(self) -> Any:
        """The backend Program this function runs."""
        return self._program

    def cost_analysis(self) -> dict:
        """The same rough estimate as Lowered.cost_analysis."""
        return Lowered.cost_analysis(self)

    def memory_analysis(self) -> None:
        """Not available in pyjax (JAX also returns None where the backend cannot tell)."""
        return None

    @property
    def input_shardings(self) -> Any:
        """The sharding of each argument leaf, as the (args, kwargs) pytree."""
        ins, _ = self._jitted._shardings_for(self.in_tree, self.in_avals_flat, self.out_tree, [], self._device)
        return tree_unflatten(self.in_tree, ins)

    @property
    def output_shardings(self) -> Any:
        """The sharding of each output leaf, as the output pytree."""
        _, outs = self._jitted._shardings_for(
            self.in_tree, self.in_avals_flat, self.out_tree, list(self._jaxpr.out_avals), self._device
        )
        return tree_unflatten(self.out_tree, outs)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        flat, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was called with: "
                f"compiled for {self.in_tree}, called with {tree}"
            )
        for x in flat:
            if isinstance(x, Tracer):
                raise TypeError(
                    "Cannot apply JAX transformations to a function lowered and compiled for a particular "
                    f"signature. Detected argument of Tracer type {type(x)}."
                )
        flat = [x if type(x).__name__ == "Array" else _arr(x) for x in flat]  # tracers were refused above
        bad = []
        for i, (x, a) in enumerate(zip(flat, self.in_avals_flat)):
            if x.shape != a.shape or x.dtype != a.dtype:
                bad.append(f"Argument {i} compiled with {a.str_short()} and called with {x.aval.str_short()}")
        if bad:
            raise TypeError(
                "Argument types differ from the types for which this computation was compiled. The mismatches "
                "are:\n" + "\n".join(bad)
            )
        outs = pjit_p.bind(*self._consts, *flat, jaxpr=self._jaxpr, name=self.fun_name)
        return tree_unflatten(self.out_tree, outs)

    call = __call__
