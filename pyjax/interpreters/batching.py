"""vmap: BatchTrace carries a value plus the axis (or None) along which it is batched."""

from __future__ import annotations

from collections.abc import Callable

from pyjax.core.core import Trace, Tracer, bind, get_aval, new_main

batch_rules: dict = {}
not_mapped = None


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

    def full_lower(self):
        if self.batch_dim is None:
            return self.val
        return self


class BatchTrace(Trace):
    __slots__ = ()

    @property
    def axis_size(self) -> int:
        return self.main.global_data

    def pure(self, val):
        return BatchTracer(self, val, None)

    lift = pure

    def process_primitive(self, primitive, tracers, params):
        vals = [t.val for t in tracers]
        dims = [t.batch_dim for t in tracers]
        if all(d is None for d in dims):
            outs = bind(primitive, *vals, **params)
            if primitive.multiple_results:
                return [BatchTracer(self, o, None) for o in outs]
            return BatchTracer(self, outs, None)
        rule = batch_rules.get(primitive)
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
        out, out_dim = rule(self.axis_size, vals, dims, **params)
        if primitive.multiple_results:
            return [BatchTracer(self, o, d) for o, d in zip(out, out_dim)]
        return BatchTracer(self, out, out_dim)


def moveaxis(x, src: int, dst: int):
    from pyjax.lax import lax

    if src == dst:
        return x
    nd = get_aval(x).ndim
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return lax.transpose(x, perm)


def move_to(x, bdim, dst: int, axis_size: int):
    """Put the batch axis of x at dst, broadcasting an unbatched x."""
    from pyjax.lax import lax

    if bdim is None:
        aval = get_aval(x)
        shape = list(aval.shape)
        shape.insert(dst, axis_size)
        dims = [i for i in range(len(shape)) if i != dst]
        return lax.broadcast_in_dim(x, tuple(shape), tuple(dims))
    return moveaxis(x, bdim, dst)


def vmap_flat(f: Callable, axis_size: int, in_dims: list, args: list) -> tuple[list, list]:
    with new_main(BatchTrace, axis_size) as main:
        trace = BatchTrace(main)
        tracers_in = [BatchTracer(trace, x, d) if d is not None else x for x, d in zip(args, in_dims)]
        outs = f(*tracers_in)
        tracers_out = [trace.full_raise(o) for o in outs]
        vals = [t.val for t in tracers_out]
        dims = [t.batch_dim for t in tracers_out]
    return vals, dims
