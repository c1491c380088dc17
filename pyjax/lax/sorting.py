"""Sorting primitives: `sort` (multi-operand, lexicographic keys, stable) and what builds on it.

The sort Routine orders NaNs last and ties -0.0 with 0.0, like JAX. Gradients avoid gather and
scatter: the tangent of a sorted operand is the tangent sorted alongside the same keys, and a
cotangent is scattered back by sorting (permutation, cotangent) by the permutation, which
inverts it in O(n log n).
"""

from __future__ import annotations

import builtins

from pyjax.core import dtypes
from pyjax.core.core import ShapedArray, get_aval
from pyjax.interpreters import ad, batching
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax

sort_p = lax._prim("sort", multi=True)


@sort_p.def_abstract_eval
def _sort_abstract(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort requires at least one operand")
    shape = operands[0].shape
    for o in operands[1:]:
        if o.shape != shape:
            raise TypeError(
                f"sort requires all operands to have the same shape, got {[lax._shape_str(x.shape) for x in operands]}"
            )
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"sort: num_keys={num_keys} must be between 1 and the number of operands ({len(operands)})")
    if not 0 <= dimension < builtins.max(len(shape), 1):
        raise ValueError(f"sort: dimension {dimension} is out of bounds for operand shape {shape}")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _canon_dim(dimension: int, ndim: int, fn: str) -> int:
    if ndim == 0:
        raise TypeError(f"{fn} requires an operand of rank >= 1, got a scalar")
    if not -ndim <= dimension < ndim:
        raise ValueError(f"{fn}: dimension {dimension} is out of bounds for array of rank {ndim}")
    return int(dimension) % ndim


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """lax.sort: sort one array, or several arrays lexicographically by their first num_keys."""
    if isinstance(operand, (list, tuple)):
        ops = [lax._as_array(o) for o in operand]
        if not ops:
            raise TypeError("lax.sort requires at least one operand")
        d = _canon_dim(dimension, get_aval(ops[0]).ndim, "lax.sort")
        out = sort_p.bind(*ops, dimension=d, is_stable=bool(is_stable), num_keys=int(num_keys))
        return tuple(out)
    if num_keys != 1:
        raise ValueError(f"lax.sort: num_keys={num_keys} given for a single operand")
    x = lax._as_array(operand)
    d = _canon_dim(dimension, get_aval(x).ndim, "lax.sort")
    return sort_p.bind(x, dimension=d, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sort `values` by `keys` along `dimension`; returns (sorted keys, values)."""
    k, v = sort((keys, values), dimension=dimension, is_stable=is_stable, num_keys=1)
    return k, v


def _iota_like(x, dimension: int):
    return lax.broadcasted_iota(dtypes.int32, get_aval(x).shape, dimension)


def top_k(operand, k: int):
    """[values, indices] (a list, as JAX): the k largest entries along the last axis (ties: lower index first)."""
    x = lax._as_array(operand)
    a = get_aval(x)
    k = int(k)
    if a.ndim == 0:
        raise TypeError("top_k operand must have >= 1 dimension, got a scalar")
    n = a.shape[-1]
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > n:
        raise ValueError(f"k argument to top_k must be no larger than minor dimension {n}, got {k}")
    last = a.ndim - 1
    idx = _iota_like(x, last)
    # Ascending stable sort on (x, -index), then reversed: values descend, ties keep index order.
    s, neg_idx = sort((x, lax.neg(idx)), dimension=last, num_keys=2)
    s, neg_idx = lax.rev(s, (last,)), lax.rev(neg_idx, (last,))
    start, limit = [0] * a.ndim, list(a.shape)
    limit[-1] = k
    return [lax.slice(s, start, limit), lax.neg(lax.slice(neg_idx, start, limit))]


# --- rules --------------------------------------------------------------------------------------


def _sort_jvp(primals, tangents, dimension, is_stable, num_keys):
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    outs = sort_p.bind(
        *primals, *[tangents[i] for i in live], dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    n = len(primals)
    touts = [Zero(get_aval(o)) for o in outs[:n]]
    for j, i in enumerate(live):
        touts[i] = outs[n + j]
    return outs[:n], touts


def _sort_vjp(primals, needs, dimension, is_stable, num_keys):
    n = len(primals)
    if not builtins.any(needs[i] and get_aval(primals[i]).dtype.kind == "f" for i in range(n)):
        return sort_p.bind(*primals, dimension=dimension, is_stable=is_stable, num_keys=num_keys), (_no_grad(n))
    outs = sort_p.bind(
        *primals, _iota_like(primals[0], dimension), dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    perm = outs[n]

    def backward(cts):
        live = [i for i in range(n) if needs[i] and type(cts[i]) is not Zero]
        res = [None] * n
        if not live:
            return res
        back = sort_p.bind(perm, *[cts[i] for i in live], dimension=dimension, is_stable=True, num_keys=1)
        for j, i in enumerate(live):
            res[i] = back[1 + j]
        return res

    backward.multiple_results = True
    return outs[:n], backward


def _sort_transpose(cts, *args, dimension, is_stable, num_keys):
    """sort with constant keys permutes its other operands (e.g. a tangent carried along): undo the permutation."""
    if builtins.any(ad.is_undefined_primal(k) for k in args[:num_keys]):
        raise NotImplementedError("sort is linear only in its non-key operands")
    keys = args[:num_keys]
    lin = [i for i in range(num_keys, len(args)) if ad.is_undefined_primal(args[i])]
    perm = sort_p.bind(
        *keys, _iota_like(keys[0], dimension), dimension=dimension, is_stable=is_stable, num_keys=num_keys
    )
    back = sort_p.bind(perm[num_keys], *[cts[i] for i in lin], dimension=dimension, is_stable=True, num_keys=1)
    res = [None] * len(args)
    for j, i in enumerate(lin):
        res[i] = back[1 + j]
    return res


def _no_grad(n):
    def backward(cts):
        return [None] * n

    backward.multiple_results = True
    return backward


def _sort_batch(size, vals, dims, dimension, is_stable, num_keys):
    vals = [batching.move_to(v, d, 0, size) for v, d in zip(vals, dims)]
    outs = sort_p.bind(*vals, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


ad.jvp_rules[sort_p] = _sort_jvp
ad.vjp_rules[sort_p] = _sort_vjp  # its jvp sorts primals and tangents in one op: not linearizable
ad.transpose_rules[sort_p] = _sort_transpose
batching.batch_rules[sort_p] = _sort_batch


def argsort_lax(x, dimension: int, descending: bool = False):
    """Stable argsort along `dimension` (int32 indices); descending keeps ties in index order."""
    a = get_aval(x)
    n = a.shape[dimension]
    idx = _iota_like(x, dimension)
    if not descending:
        return sort((x, idx), dimension=dimension, num_keys=1)[1]
    r = sort((lax.rev(x, (dimension,)), idx), dimension=dimension, num_keys=1)[1]
    return lax.sub(lax.full_like(r, n - 1), lax.rev(r, (dimension,)))


__all__ = ["sort", "sort_key_val", "top_k", "sort_p"]
