"""Staging: trace a Python function into a Jaxpr, and split jaxprs into known/unknown parts.

JaxprTrace is installed as the dynamic trace while tracing, so every bind lands in the
builder even when no argument is a tracer (constants created inside `jit` are staged too).
Concrete Arrays captured from outside become constvars; Python scalars become Literals.
"""

from __future__ import annotations

from collections.abc import Callable

from pyjax.core import core, hooks
from pyjax.core.core import Jaxpr, JaxprEqn, Literal, ShapedArray, Trace, Tracer, Var, get_aval
from pyjax.core.errors import UnexpectedTracerError


class JaxprTracer(Tracer):
    __slots__ = ("_aval",)

    def __init__(self, trace, aval: ShapedArray):
        self._trace = trace
        self._aval = aval

    @property
    def aval(self):
        return self._aval

    def _short_repr(self):
        return f"JitTracer({core.aval_str(self._aval)})"


class JaxprBuilder:
    def __init__(self):
        self.eqns: list = []
        self.tracer_to_var: dict = {}
        self.const_tracers: dict = {}  # id(value) -> tracer
        self.constvals: dict = {}  # var -> value
        self.tracers: list = []

    def new_tracer(self, trace, aval) -> JaxprTracer:
        t = JaxprTracer(trace, aval)
        self.tracers.append(t)
        return t

    def add_var(self, tracer) -> Var:
        v = self.tracer_to_var.get(id(tracer))
        if v is None:
            v = self.tracer_to_var[id(tracer)] = Var(tracer.aval)
        return v

    def getvar(self, tracer) -> Var:
        v = self.tracer_to_var.get(id(tracer))
        if v is None:
            raise UnexpectedTracerError(
                "Encountered an unexpected tracer: a value from an outer transformation leaked "
                "into a traced function (e.g. stored in a global and reused after its jit ended)."
            )
        return v

    def add_const(self, tracer, val) -> Var:
        var = self.add_var(tracer)
        self.constvals[var] = val
        return var

    def build(self, in_tracers: list, out_tracers: list) -> tuple[Jaxpr, list]:
        constvars, constvals = list(self.constvals), list(self.constvals.values())
        in_binders = constvars + [self.getvar(t) for t in in_tracers]
        outs = [self.getvar(t) for t in out_tracers]
        jaxpr = Jaxpr(in_binders, self.eqns, outs)
        return _inline_literals(jaxpr, constvals)


class JaxprTrace(Trace):
    __slots__ = ()

    @property
    def builder(self) -> JaxprBuilder:
        return self.main.global_data

    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        t = self.builder.new_tracer(self, aval)
        self.builder.add_var(t)
        return t

    def pure(self, val):
        if isinstance(val, (int, float, bool)) and not isinstance(val, Tracer):
            t = self.builder.new_tracer(self, get_aval(val))
            var = self.builder.add_var(t)
            self.builder.constvals[var] = val
            return t
        b = self.builder
        t = b.const_tracers.get(id(val))
        if t is None:
            t = b.new_tracer(self, get_aval(val))
            b.add_const(t, val)
            b.const_tracers[id(val)] = t
            b.tracers.append(val)  # keep val alive so id() stays unique
        return t

    def process_primitive(self, primitive, tracers, params):
        b = self.builder
        avals_in = [t.aval for t in tracers]
        avals_out = primitive.abstract_eval(*avals_in, **params)
        multi = primitive.multiple_results
        out_list = avals_out if multi else [avals_out]
        out_tracers = [b.new_tracer(self, a) for a in out_list]
        inputs = [b.getvar(t) for t in tracers]
        outvars = [b.add_var(t) for t in out_tracers]
        b.eqns.append(JaxprEqn(primitive, inputs, params, outvars))
        return out_tracers if multi else out_tracers[0]


def _inline_literals(jaxpr: Jaxpr, consts: list) -> tuple[Jaxpr, list]:
    """Python-scalar constants become Literals; the rest stay constvars."""
    n = len(consts)
    constvars = jaxpr.in_binders[:n]
    # numpy arrays given to lax ops become device arrays, captured like any closed-over array
    consts = [hooks.op("asarray")(c) if _is_numpy_array(c) else c for c in consts]
    scalar = [isinstance(c, (int, float, bool)) or _is_host_scalar(c) or _is_numpy_scalar(c) for c in consts]
    new_constvars = [v for v, s in zip(constvars, scalar) if not s]
    new_consts = [c for c, s in zip(consts, scalar) if not s]
    lits = {
        v: Literal(c.item() if _is_numpy_scalar(c) else c, v.aval) for v, c, s in zip(constvars, consts, scalar) if s
    }
    if not lits:
        return jaxpr, consts
    eqns = [
        JaxprEqn(e.primitive, [lits.get(x, x) if type(x) is Var else x for x in e.inputs], e.params, e.out_binders)
        for e in jaxpr.eqns
    ]
    outs = [lits.get(x, x) for x in jaxpr.outs]
    return Jaxpr(new_constvars + jaxpr.in_binders[n:], eqns, outs), new_consts


def _is_numpy_scalar(c) -> bool:
    """A numpy scalar (np.float32(1.0), ...) given to a lax op: a Literal of its value (its aval keeps the dtype)."""
    return type(c).__module__ == "numpy" and getattr(c, "shape", None) == () and hasattr(c, "item")


def _is_numpy_array(c) -> bool:
    return type(c).__module__ == "numpy" and bool(getattr(c, "shape", ()))


def _is_host_scalar(c) -> bool:
    """A concrete scalar not yet on a device (pyjax's typed Python scalars) is a Literal."""
    return getattr(c, "_host", None) is not None and getattr(c, "_buf", 1) is None and not c.aval.shape


def trace_to_jaxpr(f: Callable, in_avals: list) -> tuple[Jaxpr, list]:
    """Trace f(*tracers) -> list of outputs into (jaxpr, consts)."""
    builder = JaxprBuilder()
    with core.new_main(JaxprTrace, builder) as main:
        with core.new_dynamic(main):
            trace = JaxprTrace(main)
            tracers_in = [trace.new_arg(a) for a in in_avals]
            outs = f(*tracers_in)
            tracers_out = [trace.full_raise(o) for o in outs]
            jaxpr, consts = builder.build(tracers_in, tracers_out)
    return jaxpr, consts


def close_over_consts(jaxpr: Jaxpr, consts: list) -> Jaxpr:
    """Turn constvars into Literals so the jaxpr is self-contained (consts are concrete)."""
    n = len(consts)
    if not n:
        return jaxpr
    lits = {v: Literal(c, v.aval) for v, c in zip(jaxpr.in_binders[:n], consts)}
    eqns = [
        JaxprEqn(e.primitive, [lits.get(x, x) if type(x) is Var else x for x in e.inputs], e.params, e.out_binders)
        for e in jaxpr.eqns
    ]
    outs = [lits.get(x, x) if type(x) is Var else x for x in jaxpr.outs]
    return Jaxpr(jaxpr.in_binders[n:], eqns, outs)


def trace_closed(f: Callable, in_avals: list) -> Jaxpr:
    """Trace to a self-contained jaxpr; captured constants live inside it as Literals."""
    jaxpr, consts = trace_to_jaxpr(f, in_avals)
    return close_over_consts(jaxpr, consts)


# --- dead code elimination and known/unknown splitting --------------------------------------


def dce(jaxpr: Jaxpr, used_outs: list | None = None) -> Jaxpr:
    outs = jaxpr.outs if used_outs is None else [o for o, u in zip(jaxpr.outs, used_outs) if u]
    live = {v for v in outs if type(v) is Var}
    eqns = []
    for e in reversed(jaxpr.eqns):
        if any(v in live for v in e.out_binders) or e.params.get("_effect"):
            eqns.append(e)
            live.update(x for x in e.inputs if type(x) is Var)
    eqns.reverse()
    return Jaxpr(jaxpr.in_binders, eqns, outs)


def split_known(jaxpr: Jaxpr, unknown_ins: list) -> tuple[Jaxpr, Jaxpr, int]:
    """Split a jaxpr by which inputs are unknown (e.g. cotangents).

    Returns (known, unknown, num_res): known(known_ins) -> known_outs + residuals, and
    unknown(residuals + unknown_ins) -> unknown_outs. Outputs depending on nothing unknown
    are known outputs; the rest are unknown outputs (positions kept by the caller).
    """
    unknown = set()
    for v, u in zip(jaxpr.in_binders, unknown_ins):
        if u:
            unknown.add(v)
    known_eqns, unknown_eqns = [], []
    for e in jaxpr.eqns:
        if any(type(x) is Var and x in unknown for x in e.inputs):
            unknown_eqns.append(e)
            unknown.update(e.out_binders)
        else:
            known_eqns.append(e)
    out_unknown = [type(o) is Var and o in unknown for o in jaxpr.outs]
    # Residuals: known vars read by unknown eqns or returned as unknown... (known vars only)
    defined_known = {v for v, u in zip(jaxpr.in_binders, unknown_ins) if not u}
    for e in known_eqns:
        defined_known.update(e.out_binders)
    residuals, seen = [], set()
    for e in unknown_eqns:
        for x in e.inputs:
            if type(x) is Var and x in defined_known and x not in seen:
                seen.add(x)
                residuals.append(x)
    known_ins = [v for v, u in zip(jaxpr.in_binders, unknown_ins) if not u]
    unknown_ins_v = [v for v, u in zip(jaxpr.in_binders, unknown_ins) if u]
    known_outs = [o for o, u in zip(jaxpr.outs, out_unknown) if not u]
    unknown_outs = [o for o, u in zip(jaxpr.outs, out_unknown) if u]
    known = dce(Jaxpr(known_ins, known_eqns, known_outs + residuals))
    # Fresh binders for residuals in the unknown jaxpr keep the two jaxprs independent.
    unk = dce(Jaxpr(residuals + unknown_ins_v, unknown_eqns, unknown_outs))
    return known, unk, out_unknown


def eval_jaxpr_consts(jaxpr: Jaxpr, consts: list, args: list) -> list:
    return core.eval_jaxpr(jaxpr, list(consts) + list(args))
