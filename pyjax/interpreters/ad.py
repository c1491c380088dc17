"""Automatic differentiation: forward mode (JVPTrace) and reverse mode (a tape, VJPTrace).

Forward mode carries (primal, tangent) pairs. Reverse mode records, for every primitive
applied to a value that depends on the inputs, a backward function; `vjp` then walks the
records in reverse. Primals are computed eagerly by the next trace down, so Python control
flow on primal values works under grad exactly as in JAX, and under jit everything is staged.
Tangents/cotangents may be `Zero` (symbolic zero) to skip work.

Reverse mode comes from linearity, as in JAX: a primitive without a hand-written vjp rule runs
its jvp rule on symbolic tangents (LinearTracer, one level up); the tangent map is linear, so
each primitive it applies to tangents is recorded on the tape with that primitive's transpose
rule as its backward function. Only linear primitives carry transpose rules; vjp_rules holds
the few that cannot be linearized this way (control flow, custom rules, callbacks) or where a
hand-written rule is measurably faster.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from pyjax.core import core, hooks
from pyjax.core.core import ShapedArray, Trace, Tracer, bind, get_aval, new_main

jvp_rules: dict = {}
vjp_rules: dict = {}  # primitive -> rule(primals, needs, **params) -> (outs, backward(cts) -> in cts)
transpose_rules: dict = {}  # linear primitive -> rule(ct, *args, **params) -> a cotangent per arg


class _AvalOnly:
    """A placeholder of which only the aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"{type(self).__name__}({self.aval})"


class Zero(_AvalOnly):
    """A symbolic zero tangent/cotangent with a known aval."""

    __slots__ = ()


class UndefinedPrimal(_AvalOnly):
    """A transpose rule's linear input: only its aval is known."""

    __slots__ = ()


core.pytype_aval_mappings[UndefinedPrimal] = lambda u: u.aval


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


def zeros_like_aval(aval: ShapedArray):
    return hooks.op("full")(aval.shape, 0, aval.dtype)


def instantiate(t, aval=None):
    if type(t) is Zero:
        return zeros_like_aval(t.aval)
    return t


def tangent_aval(aval: ShapedArray) -> ShapedArray:
    """Integer and bool values have float0 tangents in JAX; we use a Zero of the same aval."""
    return aval


def add_tangents(a, b):
    if type(a) is Zero:
        return b
    if type(b) is Zero:
        return a
    return bind(_add_any_p, a, b)


_add_any_p = core.Primitive("add_any")


def sum_of_terms(z, tangents, terms):
    """(z, sum of term(t) over the tangents t that are not Zero): the jvp of a function whose
    tangent is one term per argument (mul, div, max, a product rule)."""
    out = Zero(get_aval(z))
    for t, term in zip(tangents, terms):
        if type(t) is not Zero:
            out = add_tangents(out, term(t))
    return z, out


def bilinear_jvp(prim):
    """The jvp rule of a primitive bilinear in its two operands (dot_general, conv)."""

    def jvp(primals, tangents, **params):
        x, y = primals
        z = bind(prim, x, y, **params)
        return sum_of_terms(z, tangents, (lambda t: bind(prim, t, y, **params), lambda t: bind(prim, x, t, **params)))

    return jvp


# --- forward mode -------------------------------------------------------------------------


class _PrimalTracer(Tracer):
    """An AD tracer carrying its primal value (its aval is the primal's). Python control flow on it
    reads the primal (concrete unless staged below), as in JAX; float() still raises there, like JAX."""

    __slots__ = ("primal",)

    def __init__(self, trace, primal):
        self._trace = trace
        self.primal = primal

    @property
    def aval(self):
        return get_aval(self.primal)

    def __bool__(self):
        return bool(self.primal)

    def __int__(self):
        return int(self.primal)

    def __index__(self):
        return self.primal.__index__()

    def item(self, *args):
        return self.primal.item(*args)


class JVPTracer(_PrimalTracer):
    __slots__ = ("tangent",)

    def __init__(self, trace, primal, tangent):
        super().__init__(trace, primal)
        self.tangent = tangent

    def _short_repr(self):
        return f"JVPTracer(primal={core.short_repr(self.primal)}, tangent={core.short_repr(self.tangent)})"


class JVPTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        return JVPTracer(self, val, Zero(get_aval(val)))

    def process_primitive(self, primitive, tracers, params):
        primals = [t.primal for t in tracers]
        tangents = [t.tangent for t in tracers]
        if all(type(t) is Zero for t in tangents):
            return self.bind_pure(primitive, primals, params)
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Differentiation rule for '{primitive.name}' not implemented")
        primal_out, tangent_out = rule(primals, tangents, **params)
        return self.outputs(primitive, functools.partial(JVPTracer, self), primal_out, tangent_out)


def jvp_flat(f: Callable, primals: list, tangents: list) -> tuple[list, list]:
    with new_main(JVPTrace) as main:
        trace = JVPTrace(main)
        tracers_in = [JVPTracer(trace, x, t) for x, t in zip(primals, tangents)]
        outs = f(*tracers_in)
        tracers_out = [trace.full_raise(o) for o in outs]
        primals_out = [t.primal for t in tracers_out]
        tangents_out = [t.tangent for t in tracers_out]
    return primals_out, tangents_out


# --- reverse mode (tape) --------------------------------------------------------------------


class _Node:
    """One recorded primitive application: parents are (node, output_index) or None."""

    __slots__ = ("backward", "parents", "out_avals", "order", "multi")

    def __init__(self, backward, parents, out_avals, order, multi=False):
        self.backward = backward
        self.parents = parents
        self.out_avals = out_avals
        self.order = order
        self.multi = multi


class VJPTracer(_PrimalTracer):
    __slots__ = ("ref",)  # ref: (node, output index) or None when independent of inputs

    def __init__(self, trace, primal, ref):
        super().__init__(trace, primal)
        self.ref = ref

    def _short_repr(self):  # JAX's grad tracer (its tangent is only a type here, as there)
        return f"GradTracer(primal={core.short_repr(self.primal)}, typeof(tangent)={self.aval.str_short()})"


class _Tape:
    __slots__ = ("count",)

    def __init__(self):
        self.count = 0


class VJPTrace(Trace):
    __slots__ = ()

    def pure(self, val):
        return VJPTracer(self, val, None)

    def process_primitive(self, primitive, tracers, params):
        primals = [t.primal for t in tracers]
        refs = [t.ref for t in tracers]
        if all(r is None for r in refs):
            return self.bind_pure(primitive, primals, params)
        rule = vjp_rules.get(primitive)
        if rule is None:
            return self.linearize(primitive, primals, refs, params)
        needs = [r is not None for r in refs]
        outs, backward = rule(primals, needs, **params)
        multi = primitive.multiple_results
        out_list = outs if multi else [outs]
        tape = self.main.global_data
        tape.count += 1
        n = _Node(backward, refs, [get_aval(o) for o in out_list], tape.count, multi)
        if multi:
            return [VJPTracer(self, o, (n, i)) for i, o in enumerate(out_list)]
        return VJPTracer(self, outs, (n, 0))

    def linearize(self, primitive, primals, refs, params):
        """Run the jvp rule on symbolic tangents: its tangent ops land on the tape as transposes."""
        rule = jvp_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Reverse-mode differentiation rule for '{primitive.name}' not implemented")
        # A level above this one, pushed by hand (new_main's bookkeeping costs more than a small op:
        # this runs for every primitive under grad, and a trace is already open).
        stack = core.state.trace_stack
        lmain = core.MainTrace(len(stack), LinearTrace, self.main.global_data)
        stack.append(lmain)
        try:
            lin = LinearTrace(lmain)
            tangents = [
                Zero(get_aval(p)) if r is None else LinearTracer(lin, get_aval(p), r) for p, r in zip(primals, refs)
            ]
            outs, touts = rule(primals, tangents, **params)
        finally:
            stack.pop()
        if not primitive.multiple_results:
            return VJPTracer(self, _primal_of(outs, lmain, primitive), _ref_of(touts, lmain))
        return [VJPTracer(self, _primal_of(o, lmain, primitive), _ref_of(t, lmain)) for o, t in zip(outs, touts)]


def _primal_of(x, lmain, primitive):
    if isinstance(x, LinearTracer) and x._trace.main is lmain:
        raise TypeError(f"the jvp rule of '{primitive.name}' computes its primal output from tangents")
    return x


def _ref_of(t, lmain):
    """A tangent output's tape position; None when it depends on no input tangent (a zero)."""
    if isinstance(t, LinearTracer) and t._trace.main is lmain:
        return t.ref
    return None


class LinearTracer(Tracer):
    """A symbolic tangent inside a jvp rule run by reverse mode: its aval and its tape position."""

    __slots__ = ("_aval", "ref", "const")

    def __init__(self, trace, aval, ref, const=None):
        self._trace = trace
        self._aval = aval
        self.ref = ref  # (node, output index); None for a constant lifted into this trace
        self.const = const

    @property
    def aval(self):
        return self._aval


class LinearTrace(Trace):
    """Records each primitive applied to tangents on the tape; its backward is the transpose rule."""

    __slots__ = ()

    def pure(self, val):
        return LinearTracer(self, get_aval(val), None, val)

    def process_primitive(self, primitive, tracers, params):
        if all(t.ref is None for t in tracers):
            return self.bind_pure(primitive, [t.const for t in tracers], params)
        rule = transpose_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(
                f"Reverse-mode differentiation: '{primitive.name}' is applied to tangents in a jvp rule but has "
                "no transpose rule (it is not linear)"
            )
        args = [t.const if t.ref is None else UndefinedPrimal(t.aval) for t in tracers]
        multi = primitive.multiple_results
        avals = primitive.abstract_eval(*[t.aval for t in tracers], **params)
        out_avals = list(avals) if multi else [avals]

        def backward(ct):
            if multi:
                ct = [instantiate(c) for c in ct]
            return rule(ct, *args, **params)

        tape = self.main.global_data
        tape.count += 1
        n = _Node(backward, [t.ref for t in tracers], out_avals, tape.count, multi)
        outs = [LinearTracer(self, a, (n, i)) for i, a in enumerate(out_avals)]
        return outs if multi else outs[0]


def backward_pass(out_refs: list, cts: list, in_refs: list) -> list:
    """Propagate output cotangents back to the inputs' refs; returns input cotangents."""
    ct_env: dict = {}  # node -> list of cotangents per output
    nodes: dict = {}
    for ref, ct in zip(out_refs, cts):
        if ref is None or type(ct) is Zero:
            continue
        node, i = ref
        slot = ct_env.setdefault(node, [None] * len(node.out_avals))
        slot[i] = ct if slot[i] is None else add_tangents(slot[i], ct)
        nodes[node] = True
    # Visit nodes in reverse creation order; collect parents as we go.
    import heapq

    heap = [(-n.order, id(n), n) for n in nodes]
    heapq.heapify(heap)
    seen = set(id(n) for n in nodes)
    while heap:
        _, _, node = heapq.heappop(heap)
        if node.backward is None:  # an input leaf
            continue
        slots = ct_env.pop(node)
        cts_out = [Zero(a) if c is None else c for c, a in zip(slots, node.out_avals)]
        cts_in = node.backward(cts_out if node.multi else cts_out[0])
        for parent, ct in zip(node.parents, cts_in):
            if parent is None or ct is None or type(ct) is Zero:
                continue
            pnode, pi = parent
            slot = ct_env.setdefault(pnode, [None] * len(pnode.out_avals))
            slot[pi] = ct if slot[pi] is None else add_tangents(slot[pi], ct)
            if id(pnode) not in seen:
                seen.add(id(pnode))
                heapq.heappush(heap, (-pnode.order, id(pnode), pnode))
    out = []
    for ref in in_refs:
        node, _ = ref
        slot = ct_env.get(node)
        ct = slot[0] if slot else None
        out.append(Zero(node.out_avals[0]) if ct is None else ct)
    return out


def vjp_flat(f: Callable, primals: list):
    """Run f with a tape; returns (outputs, backward(cts) -> input cotangents, aux).

    f returns (list of outputs, aux)."""
    tape = _Tape()
    with new_main(VJPTrace, tape) as main:
        trace = VJPTrace(main)
        in_refs = []
        tracers_in = []
        for x in primals:
            tape.count += 1
            leaf = _Node(None, [], [get_aval(x)], tape.count)
            in_refs.append((leaf, 0))
            tracers_in.append(VJPTracer(trace, x, (leaf, 0)))
        outs, aux = f(*tracers_in)
        tracers_out = [trace.full_raise(o) for o in outs]
        primals_out = [t.primal for t in tracers_out]
        out_refs = [t.ref for t in tracers_out]
        aux = _lower_aux(aux, main)

    def backward(cts):
        return backward_pass(out_refs, cts, in_refs)

    return primals_out, backward, aux


def _lower_aux(aux, main):
    from pyjax.core.pytree import tree_map

    def low(x):
        if isinstance(x, VJPTracer) and x._trace.main is main:
            return x.primal
        return x

    return tree_map(low, aux)


def add_any_transpose(ct, x, y):
    return [ct, ct]


transpose_rules[_add_any_p] = add_any_transpose
