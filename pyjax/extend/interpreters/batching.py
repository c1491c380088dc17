"""jax.interpreters.batching for custom primitives: primitive_batchers, not_mapped, defvectorized, defbroadcasting.

A rule is JAX's rule(batched_args, batch_dims, **params) -> (out, out_dim); an unbatched input has
batch dim `not_mapped` (None). Rules that need the axis (size, name) register in
fancy_primitive_batchers (rule(axis_data, args, dims, **params)) or, in the older form equinox uses,
axis_primitive_batchers (rule(size, name, trace_type, args, dims, **params)).
"""

from __future__ import annotations

from pyjax.interpreters import batching as _batching
from pyjax.interpreters.batching import moveaxis  # noqa: F401

__all__ = [
    "axis_primitive_batchers",
    "defbroadcasting",
    "defvectorized",
    "fancy_primitive_batchers",
    "moveaxis",
    "not_mapped",
    "primitive_batchers",
]

not_mapped = None


class _Batchers(dict):
    def __setitem__(self, prim, rule):
        super().__setitem__(prim, rule)
        _batching.batch_rules[prim] = lambda size, vals, dims, **params: rule(list(vals), list(dims), **params)


primitive_batchers = _Batchers()


class _AxisBatchers(dict):
    """Rules that also take the mapped axis: `call(rule, axis, vals, dims, params)` says how."""

    def __init__(self, call):
        super().__init__()
        self._call = call

    def __setitem__(self, prim, rule):
        super().__setitem__(prim, rule)

        def batch_rule(size, vals, dims, **params):
            axis = _batching.AxisData(size, _batching.rule_axis_name())
            return self._call(rule, axis, list(vals), list(dims), params)

        _batching.batch_rules[prim] = batch_rule


fancy_primitive_batchers = _AxisBatchers(lambda rule, axis, vals, dims, params: rule(axis, vals, dims, **params))
axis_primitive_batchers = _AxisBatchers(
    lambda rule, axis, vals, dims, params: rule(axis.size, axis.name, None, vals, dims, **params)
)


def _dims_to_front(vals, dims):
    from pyjax.lax import lax

    ndim = max(v.ndim - (d is not None) for v, d in zip(vals, dims))
    out = []
    for v, d in zip(vals, dims):
        if d is None:
            out.append(lax.expand_dims(v, tuple(range(ndim + 1 - v.ndim))))  # broadcasts against the batch
        else:
            v = moveaxis(v, d, 0)
            out.append(lax.expand_dims(v, tuple(range(1, ndim + 1 - (v.ndim - 1)))) if v.ndim - 1 < ndim else v)
    return out


def defvectorized(prim) -> None:
    """prim acts on each element of its single operand: the batch dim passes through."""
    primitive_batchers[prim] = lambda vals, dims, **params: (prim.bind(*vals, **params), dims[0])


def defbroadcasting(prim) -> None:
    """prim broadcasts its operands (numpy style): move batch dims to the front, align ranks, apply."""
    primitive_batchers[prim] = lambda vals, dims, **params: (prim.bind(*_dims_to_front(vals, dims), **params), 0)
