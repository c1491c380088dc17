"""jax.interpreters.batching for custom primitives: primitive_batchers, not_mapped, defvectorized, defbroadcasting.

A rule is JAX's rule(batched_args, batch_dims, **params) -> (out, out_dim); an unbatched input has
batch dim `not_mapped` (None).
"""

from __future__ import annotations

from pyjax.interpreters import batching as _batching
from pyjax.interpreters.batching import moveaxis  # noqa: F401

__all__ = ["defbroadcasting", "defvectorized", "moveaxis", "not_mapped", "primitive_batchers"]

not_mapped = None


class _Batchers(dict):
    def __setitem__(self, prim, rule):
        super().__setitem__(prim, rule)
        _batching.batch_rules[prim] = lambda size, vals, dims, **params: rule(list(vals), list(dims), **params)


primitive_batchers = _Batchers()


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
