"""The partitioner: turns a jaxpr into a Program of fused Kernels and Routines.

Values stay lazy (fused into their consumers) unless they must become buffers: program
outputs (unless they are views of a buffer), inputs of Routines and host control flow,
reductions consumed by movement ops or other reductions, and values used several times whose
recomputation would be expensive. Eager mode compiles one-equation jaxprs the same way.
"""

from __future__ import annotations

import math
import os

from pyjax.compiler import ir, lowering, lowering_conv, lowering_indexing, lowering_linalg  # noqa: F401  (they add their rules to lowering.rules)
from pyjax.compiler.lowering import Lazy, source_load
from pyjax.compiler.views import ShapeTracker
from pyjax.core.core import Jaxpr, Literal, ShapedArray

MAX_FUSED_NODES = int(os.environ.get("PYJAX_MAX_FUSED_NODES", "160"))


class KernelStep:
    __slots__ = ("kernel", "srcs", "out", "nbytes", "exe")

    def __init__(self, kernel, srcs, out, nbytes):
        self.kernel, self.srcs, self.out, self.nbytes, self.exe = kernel, srcs, out, nbytes, None


class RoutineStep:
    __slots__ = ("routine", "srcs", "outs", "nbytes", "exe")

    def __init__(self, routine, srcs, outs, nbytes):
        self.routine, self.srcs, self.outs, self.nbytes, self.exe = routine, srcs, outs, nbytes, None


class HostStep:
    """A control-flow primitive run by the runtime on materialized buffers (cond/while/scan)."""

    __slots__ = ("eqn", "srcs", "src_trackers", "outs", "out_avals", "plan")

    def __init__(self, eqn, srcs, src_trackers, outs, out_avals):
        self.eqn, self.srcs, self.src_trackers, self.outs, self.out_avals = eqn, srcs, src_trackers, outs, out_avals
        self.plan = None  # the runtime's compiled loop for it (pyjax.runtime.plans), made at first run


class Program:
    """Steps over numbered buffers: 0..n_inputs-1 are inputs, later ids are temporaries.

    outputs: per output, ("buf", id, tracker) or ("const", value, aval).
    frees: after step i, the ids whose last use it was.
    """

    def __init__(self, n_inputs, steps, outputs, frees, n_ids=None):
        self.n_inputs, self.steps, self.outputs, self.frees = n_inputs, steps, outputs, frees
        self.plan = None  # the runtime's plan of the whole program (pyjax.runtime.plans), made at first run
        ids = [n_inputs] + [s.out + 1 for s in steps if isinstance(s, KernelStep)]
        ids += [max(s.outs) + 1 for s in steps if not isinstance(s, KernelStep) and s.outs]
        self.n_ids = max(ids) if n_ids is None else n_ids

    def __repr__(self):
        lines = [f"Program({self.n_inputs} inputs)"]
        for s in self.steps:
            if isinstance(s, KernelStep):
                lines.append(f"  t{s.out} = {s.kernel!r} srcs={s.srcs}".replace("\n", "\n    "))
            elif isinstance(s, RoutineStep):
                lines.append(f"  {s.outs} = {s.routine!r} srcs={s.srcs}")
            else:
                lines.append(f"  {s.outs} = host {s.eqn.primitive.name} srcs={s.srcs}")
        lines.append(f"  outputs: {self.outputs}")
        return "\n".join(lines)


HOST_PRIMITIVES = {"cond", "while", "scan"}
# Call-like primitives inlined into the enclosing program: name -> the param holding the jaxpr.
INLINE_CALLS = {
    "pjit": "jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vmap_call": "call_jaxpr",
}


class Partitioner(lowering.Context):
    def __init__(self, n_inputs: int):
        self.next_id = n_inputs
        self.n_inputs = n_inputs
        self.steps: list = []
        # (kernel, sources) -> the buffer it wrote: a lazy value used by several consumers that
        # each need a buffer (two matmuls reading one activation) is computed once, not per consumer
        self._made: dict = {}

    def _new_id(self) -> int:
        i = self.next_id
        self.next_id += 1
        return i

    def materialize(self, x: Lazy, fresh: bool = False) -> Lazy:
        """x computed into a contiguous buffer (fresh: a new one even if x was computed before)."""
        kernel, srcs = lowering.to_kernel(x, name=f"k{len(self.steps)}")
        key = (kernel, tuple(srcs))
        out = None if fresh else self._made.get(key)
        if out is None:
            out = self._new_id()
            nbytes = math.prod(x.shape) * x.dtype.itemsize
            self.steps.append(KernelStep(kernel, srcs, out, nbytes))
            self._made.setdefault(key, out)
        return source_load(out, ShapeTracker.contiguous(x.shape), x.dtype)

    def buffer_of(self, x: Lazy, contiguous: bool = True) -> tuple[int, ShapeTracker]:
        """A buffer id holding x (contiguous unless allowed otherwise)."""
        if x.red is None and x.expr.op == "load":
            src, tr = x.expr.arg
            if not contiguous or tr.is_contiguous:
                return src, tr
        m = self.materialize(x)
        return m.expr.arg

    def routine(self, routine, inputs):
        if all(_empty(a.shape) for a in routine.out_avals):  # nothing to compute: no step, no dispatch
            return [lowering.constant(0, a.dtype, a.shape) for a in routine.out_avals]
        srcs = [self.buffer_of(x)[0] for x in inputs]
        outs = [self._new_id() for _ in routine.out_avals]
        nbytes = [math.prod(a.shape) * a.dtype.itemsize for a in routine.out_avals]
        self.steps.append(RoutineStep(routine, srcs, outs, nbytes))
        return [source_load(o, ShapeTracker.contiguous(a.shape), a.dtype) for o, a in zip(outs, routine.out_avals)]

    def host(self, eqn, inputs: list) -> list:
        ids = [self.buffer_of(x, contiguous=False) for x in inputs]
        outs = [self._new_id() for _ in eqn.out_binders]
        avals = [v.aval for v in eqn.out_binders]
        self.steps.append(HostStep(eqn, [i for i, _ in ids], [t for _, t in ids], outs, avals))
        return [source_load(o, ShapeTracker.contiguous(a.shape), a.dtype) for o, a in zip(outs, avals)]


def _empty(shape) -> bool:
    return math.prod(shape) == 0


def _expensive(x: Lazy) -> bool:
    if x.red is not None:
        return True
    nodes = ir.walk(x.expr)
    return len(nodes) > 24 or any(n.op in ir.TRANSCENDENTAL or n.op == "gather" for n in nodes)


def compile_jaxpr(jaxpr: Jaxpr, input_specs: list, literal_fn, fresh_outputs: bool = False) -> Program:
    """input_specs: (dtype, tracker) per jaxpr input. literal_fn(val, aval) -> Lazy for Literals.

    fresh_outputs: every output is its own contiguous buffer written by a step of the program
    (no constants, no inputs or views passed through): a loop body's outputs then feed the next
    trip by plain copies."""
    part = Partitioner(len(input_specs))
    env: dict = {}
    for i, (v, (dtype, tr)) in enumerate(zip(jaxpr.in_binders, input_specs)):
        env[v] = source_load(i, tr, dtype)
    uses: dict = {}
    _count_uses(jaxpr, uses)
    _lower_eqns(part, jaxpr, env, uses, literal_fn)
    outputs = []
    for o in jaxpr.outs:
        if type(o) is Literal:
            x = literal_fn(o.val, o.aval)
        else:
            x = env[o]
        if _empty(x.shape):  # an output without elements needs no kernel
            outputs.append(("const", 0, ShapedArray(x.shape, x.dtype)))
            continue
        if fresh_outputs:
            if x.red is None and x.expr.op == "load":
                src, tr = x.expr.arg
                if src >= part.n_inputs and tr.is_contiguous and all(o[1] != src for o in outputs):
                    outputs.append(("buf", src, tr))
                    continue
            m = part.materialize(x, fresh=True)
            outputs.append(("buf",) + m.expr.arg)
            continue
        if x.red is None and x.expr.op == "const":
            outputs.append(("const", x.expr.arg, ShapedArray(x.shape, x.dtype)))
            continue
        if x.red is None and x.expr.op == "load":
            src, tr = x.expr.arg
            outputs.append(("buf", src, tr))
            continue
        m = part.materialize(x)
        outputs.append(("buf",) + m.expr.arg)
    frees = _liveness(part.steps, outputs, part.n_inputs)
    return Program(part.n_inputs, part.steps, outputs, frees)


def _count_uses(jaxpr: Jaxpr, uses: dict) -> None:
    for e in jaxpr.eqns:
        for x in e.inputs:
            if type(x) is not Literal:
                uses[x] = uses.get(x, 0) + 1
    for o in jaxpr.outs:
        if type(o) is not Literal:
            uses[o] = uses.get(o, 0) + 1


def _lower_eqns(part: Partitioner, jaxpr: Jaxpr, env: dict, uses: dict, literal_fn) -> None:
    for eqn in jaxpr.eqns:
        ins = [literal_fn(x.val, x.aval) if type(x) is Literal else env[x] for x in eqn.inputs]
        name = eqn.primitive.name
        if name in INLINE_CALLS:  # nested jit, custom derivatives: inline the jaxpr
            inner = eqn.params[INLINE_CALLS[name]]
            inner_env = dict(zip(inner.in_binders, ins))
            _count_uses(inner, uses)
            _lower_eqns(part, inner, inner_env, uses, literal_fn)
            outs = [literal_fn(o.val, o.aval) if type(o) is Literal else inner_env[o] for o in inner.outs]
        elif name in HOST_PRIMITIVES or name not in lowering.rules:
            outs = part.host(eqn, ins)
        else:
            res = lowering.rules[name](part, *ins, **eqn.params)
            outs = res if eqn.primitive.multiple_results else [res]
        for v, x in zip(eqn.out_binders, outs):
            n = uses.get(v, 0)
            if x.red is not None or (x.expr.op != "load" and x.expr.op != "const"):
                if (n > 1 and _expensive(x)) or lowering.expr_size(x) > MAX_FUSED_NODES:
                    x = part.materialize(x)
            env[v] = x


def _liveness(steps, outputs, n_inputs) -> list:
    last: dict = {}
    for i, s in enumerate(steps):
        for src in s.srcs:
            last[src] = i
    keep = {o[1] for o in outputs if o[0] == "buf"}
    frees = [[] for _ in steps]
    for src, i in last.items():
        if src >= n_inputs and src not in keep:
            frees[i].append(src)
    return frees
