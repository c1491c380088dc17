"""Generic and approximate reductions: reduce (any monoid over pytrees of operands) and
approx_max_k / approx_min_k (exact top-k, as JAX's CPU backend computes them).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.lax import lax
from pyjax.lax._util import _arr

__all__ = ["reduce", "approx_max_k", "approx_min_k"]


# --- reductions and barriers ---------------------------------------------------------------------


def reduce(
    operands: Any, init_values: Any, computation: Callable, dimensions: Sequence[int], out_sharding: Any = None
) -> Any:
    """Reduce operands over `dimensions` with a binary computation and its identity init_values.

    operands and init_values may be matching pytrees (a variadic reduction); computation maps
    (accumulators, values) -> accumulators and must be associative and elementwise (it is
    applied to whole arrays, pairwise in a balanced tree).
    """
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"reduce: operands {tree} and init_values {init_tree} must have the same structure")
    ops = [_arr(o) for o in flat_ops]
    shape = ops[0].shape
    if builtins.any(o.shape != shape for o in ops):
        raise ValueError("reduce: all operands must have the same shape")
    nd = len(shape)
    dims = sorted({d % nd for d in dimensions}) if nd else []
    keep = [d for d in range(nd) if d not in dims]
    n = math.prod(shape[d] for d in dims)
    xs = [lax.reshape(lax.transpose(o, tuple(dims + keep)), (n,) + tuple(shape[d] for d in keep)) for o in ops]
    inits = [lax.convert_element_type(_arr(i), o.dtype) for i, o in zip(flat_init, ops)]

    def combine(a: list, b: list) -> list:
        out = computation(tree_unflatten(tree, a), tree_unflatten(tree, b))
        return tree_flatten(out)[0]

    while n > 1:
        h = n // 2
        pairs = combine([x[:h] for x in xs], [x[h : 2 * h] for x in xs])
        xs = [lax.concatenate([p, x[2 * h :]], 0) if n % 2 else p for p, x in zip(pairs, xs)]
        n = h + n % 2
    rest = tuple(shape[d] for d in keep)
    if n == 0:
        res = [lax.full(rest, i, i.dtype) for i in inits]
    else:
        res = combine([lax.broadcast(i, rest) for i in inits], [x[0] for x in xs])
    res = [lax.convert_element_type(r, o.dtype) for r, o in zip(res, ops)]
    return tree_unflatten(tree, res)


def _approx_k(name: str, largest: bool, doc: str) -> Callable:
    """approx_max_k / approx_min_k with JAX's signature; pyjax answers exactly, so the recall and
    aggregation hints are accepted and unused."""

    def approx_k(
        operand: Any,
        k: int,
        reduction_dimension: int = -1,
        recall_target: float = 0.95,
        reduction_input_size_override: int = -1,
        aggregate_to_topk: bool = True,
    ) -> list:
        return _top_k_along(operand, k, reduction_dimension, largest=largest)

    approx_k.__name__ = approx_k.__qualname__ = name
    approx_k.__doc__ = doc
    return approx_k


def _top_k_along(operand, k, axis, largest: bool):
    from pyjax.lax.sorting import top_k

    x = _arr(operand)
    axis = axis % x.ndim
    moved = lax.moveaxis_lax(x, axis, -1)
    vals, idx = top_k(moved if largest else lax.neg(moved), int(k))
    if not largest:
        vals = lax.neg(vals)
    return [lax.moveaxis_lax(vals, -1, axis), lax.moveaxis_lax(idx, -1, axis)]


approx_max_k = _approx_k(
    "approx_max_k", True, "The k largest values along reduction_dimension and their indices (exact in pyjax)."
)
approx_min_k = _approx_k(
    "approx_min_k", False, "The k smallest values along reduction_dimension and their indices (exact in pyjax)."
)
