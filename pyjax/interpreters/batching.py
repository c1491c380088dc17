"""vmap: BatchTrace carries a value plus the axis (or None) along which it is batched.

A vmap may name its axis (`axis_name`): the named axes in scope form `axis_env` (innermost last),
which collectives (lax.psum, all_gather, ...) consult. Collectives have their own rule table,
`collective_rules`, whose rules see the trace's AxisData (size and name) and run even for unbatched
operands, so a collective over this trace's axis is always resolved here, never staged below.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from pyjax.core import core, hooks
from pyjax.core.core import Trace, Tracer, get_aval, new_main

batch_rules: dict = {}
collective_rules: dict = {}  # primitive -> rule(axis: AxisData, vals, dims, **params)
not_mapped = None


class AxisData:
    """What one vmap level knows about its axis: size, optional name, and its MainTrace."""

    __slots__ = ("size", "name", "main")

    def __init__(self, size: int, name, main=None):
        self.size = size
        self.name = name
        self.main = main


axis_env: list[AxisData] = []  # named axes in scope, innermost last
_rule_axis: list = [None]  # the AxisData of the BatchTrace whose rule is running (for re-vmaps)


def lookup_axis(name) -> AxisData:
    """The innermost vmap/pmap axis called name; JAX's NameError when none is in scope."""
    for a in reversed(axis_env):
        if a.name == name:
            return a
    raise NameError(f"unbound axis name: {name}")


def rule_axis_name():
    """Name of the axis whose batching rule is running: rules that re-vmap a sub-jaxpr pass it on,
    so collectives inside it still see their axis."""
    a = _rule_axis[-1]
    return None if a is None else a.name


def axis_env_key() -> tuple:
    """The named axes in scope, for caches of traced jaxprs (they may depend on the sizes)."""
    return tuple((a.name, a.size) for a in axis_env)


class BatchTracer(Tracer):
    __slots__ = ("val", "batch_dim")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self):
        aval = get_aval(self.val)
        if self.batch_dim is None:
            return aval
        shape = list(aval.shape)
        del shape[self.batch_dim]
        return aval.update(shape=tuple(shape))

    def _short_repr(self):
        return f"VmapTracer(aval={core.aval_str(self.aval)}, batched={core.aval_str(get_aval(self.val))})"

    def full_lower(self):
        if self.batch_dim is None:
            return self.val
        return self


class BatchTrace(Trace):
    __slots__ = ()

    @property
    def axis_size(self) -> int:
        return self.main.global_data.size

    def pure(self, val):
        return BatchTracer(self, val, None)

    def process_primitive(self, primitive, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.batch_dim for t in tracers]
        crule = collective_rules.get(primitive)
        if crule is not None:
            out, out_dim = crule(self.main.global_data, vals, dims, **params)
            return BatchTracer(self, out, out_dim)
        if all(d is None for d in dims):
            return self.bind_pure(primitive, vals, params)
        rule = batch_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
        axis = self.main.global_data
        if axis.name is None:
            out, out_dim = rule(axis.size, vals, dims, **params)
        else:
            _rule_axis.append(axis)
            try:
                out, out_dim = rule(axis.size, vals, dims, **params)
            finally:
                _rule_axis.pop()
        return self.outputs(primitive, functools.partial(BatchTracer, self), out, out_dim)


def moveaxis(x, src: int, dst: int):
    if src == dst:
        return x
    nd = get_aval(x).ndim
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return hooks.op("transpose")(x, perm)


def move_to(x, bdim, dst: int, axis_size: int):
    """Put the batch axis of x at dst, broadcasting an unbatched x."""
    if bdim is None:
        aval = get_aval(x)
        shape = list(aval.shape)
        shape.insert(dst, axis_size)
        dims = [i for i in range(len(shape)) if i != dst]
        return hooks.op("broadcast_in_dim")(x, tuple(shape), tuple(dims))
    return moveaxis(x, bdim, dst)


def batched_avals(avals: list, dims: list, size: int) -> list:
    """The avals with an axis of `size` inserted at each one's batch dim (None: unbatched)."""
    out = []
    for a, d in zip(avals, dims):
        if d is None:
            out.append(a)
        else:
            shape = list(a.shape)
            shape.insert(d, size)
            out.append(a.update(shape=tuple(shape)))
    return out


def batched_jaxpr_fun(jaxpr, dims: list, size: int, axis_name) -> Callable:
    """jaxpr vmapped over its inputs' batch dims, every output batched at axis 0 (to trace)."""

    def f(*args):
        outs, odims = vmap_flat(core.jaxpr_as_fun(jaxpr), size, list(dims), list(args), axis_name)
        return [move_to(o, d, 0, size) for o, d in zip(outs, odims)]

    return f


def vmap_flat(f: Callable, axis_size: int, in_dims: list, args: list, axis_name=None) -> tuple[list, list]:
    """Run f on BatchTracers; returns (values, batch dims). Batching rules that re-vmap a sub-jaxpr
    pass axis_name=rule_axis_name()."""
    axis = AxisData(axis_size, axis_name)
    with new_main(BatchTrace, axis) as main:
        axis.main = main
        if axis_name is not None:
            axis_env.append(axis)
        try:
            trace = BatchTrace(main)
            tracers_in = [BatchTracer(trace, x, d) if d is not None else x for x, d in zip(args, in_dims)]
            outs = f(*tracers_in)
            tracers_out = [trace.full_raise(o) for o in outs]
            vals = [t.val for t in tracers_out]
            dims = [t.batch_dim for t in tracers_out]
        finally:
            if axis_name is not None:
                axis_env.remove(axis)
    return vals, dims
