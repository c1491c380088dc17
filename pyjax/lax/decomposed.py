"""Primitives JAX exports that pyjax writes as compositions of its own ops: clamp_p, conj_p,
igamma_p, zeta_p, top_k_p, split_p, fft_p, eigh_p, svd_p, ... (the tables live with the functions:
lax/__init__.py and lax/linalg.py, with JAX's operands and parameters).

lax's functions do not bind them: they bind the decomposition, which jit fuses. Binding one
directly (interpreters of jaxprs, custom rules written against JAX's primitives) runs its
decomposition eagerly, stages one equation under JAX's name, and is differentiated and batched by
transforming the decomposition; under jit the equation runs on the host (runtime/control.py), as
a user primitive does. Complex operands run the decomposition inline.
"""

from __future__ import annotations

import functools

from pyjax.core import core
from pyjax.interpreters import ad, batching, staging
from pyjax.lax._util import _arr
from pyjax.runtime import control


def make_table(table: dict, namespace: dict | None = None) -> dict:
    """{name + "_p": primitive} for a table name -> (decomposition, multiple results); a decomposition
    given as a string is that function of namespace."""
    return {
        f"{n.replace('-', '_')}_p": composed_primitive(n, namespace[fn] if isinstance(fn, str) else fn, multi)
        for n, (fn, multi) in table.items()
    }


def scatter_meaning(scatter):
    """A scatter-<op> primitive's meaning: lax.scatter_<op> with JAX's params (update_jaxpr unused)."""

    def meaning(
        operand,
        indices,
        updates,
        *,
        dimension_numbers,
        indices_are_sorted=False,
        unique_indices=False,
        mode=None,
        update_jaxpr=None,
        update_consts=(),
    ):
        return scatter(
            operand,
            indices,
            updates,
            dimension_numbers,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
        )

    return meaning


def reduce_meaning(reduce):
    """reduce_p's meaning: operands then init values, reduced with the `computation` param."""

    def meaning(*args, computation, dimensions, jaxpr=None):
        n = len(args) // 2
        if n == 1:
            return [reduce(args[0], args[1], computation, dimensions)]
        return list(reduce(tuple(args[:n]), tuple(args[n:]), computation, dimensions))

    return meaning


def reduce_window_meaning(reduce_window):
    """reduce_window_p's meaning: operands then init values, windows combined by evaluating the `jaxpr`
    param (on consts, then the accumulators, then the values)."""

    def meaning(*args, jaxpr, consts=(), window_dimensions, window_strides, padding, base_dilation, window_dilation):
        n = len(args) // 2
        inner, consts = (jaxpr.jaxpr, [*jaxpr.consts, *consts]) if hasattr(jaxpr, "jaxpr") else (jaxpr, list(consts))

        def computation(a, b):
            outs = core.eval_jaxpr(inner, [*consts, *(a if n > 1 else [a]), *(b if n > 1 else [b])])
            return tuple(outs) if n > 1 else outs[0]

        ops, inits = (tuple(args[:n]), tuple(args[n:])) if n > 1 else (args[0], args[1])
        out = reduce_window(
            ops, inits, computation, window_dimensions, window_strides, padding,
            base_dilation=base_dilation, window_dilation=window_dilation,
        )  # fmt: skip
        return list(out) if n > 1 else [out]

    return meaning


def approx_top_k_meaning(max_k, min_k):
    """approx_top_k_p's meaning: approx_max_k or approx_min_k by is_max_k."""

    def meaning(
        x,
        *,
        k,
        reduction_dimension=-1,
        recall_target=0.95,
        is_max_k=True,
        reduction_input_size_override=-1,
        aggregate_to_topk=True,
    ):
        return (max_k if is_max_k else min_k)(
            x, k, reduction_dimension, recall_target, reduction_input_size_override, aggregate_to_topk
        )

    return meaning


def device_put_meaning(*xs, devices, srcs=None, copy_semantics=None):
    """device_put_p's meaning: each x on its device or its sharding's one device (None: where it is)."""
    from pyjax.runtime import device as devmod
    from pyjax.runtime.array import Array
    from pyjax.runtime.execute import transfer

    def put(x, d):
        x = x if isinstance(x, core.Tracer) else _arr(x)
        if d is None or type(x) is not Array:
            return x
        if not isinstance(d, devmod.Device):
            (d,) = d.device_set
        return transfer(x, d)

    return [put(x, d) for x, d in zip(xs, devices)]


def top_k_along(x, *, k, axis=-1, top_k=None, transpose=None):
    """top_k_p's meaning: the k largest along `axis`, from a top_k over the last axis."""
    nd = len(x.shape)
    axis %= nd
    if axis == nd - 1:
        return top_k(x, k)
    moved = transpose(x, tuple(d for d in range(nd) if d != axis) + (axis,))
    back = tuple(range(axis)) + (nd - 1,) + tuple(range(axis, nd - 1))
    return [transpose(o, back) for o in top_k(moved, k)]


def composed_primitive(name: str, fn, multi: bool = False) -> core.Primitive:
    """A primitive named `name` whose meaning is fn(*operands, **params) (a list when multi)."""
    p = core.MultiPrimitive(name) if multi else core.Primitive(name)

    def flat(*args, **params):
        out = fn(*args, **params)
        return list(out) if multi else [out]

    p.impl = flat if multi else fn
    p.complex_rule = p.impl

    def abstract_eval(*avals, **params):
        jaxpr, _ = staging.trace_to_jaxpr(functools.partial(flat, **params), list(avals))
        outs = [o.aval for o in jaxpr.outs]
        return outs if multi else outs[0]

    def jvp(primals, tangents, **params):
        outs, touts = ad.jvp_flat(functools.partial(flat, **params), list(primals), list(tangents))
        return (outs, touts) if multi else (outs[0], touts[0])

    def batch(size, vals, dims, **params):
        outs, odims = batching.vmap_flat(functools.partial(flat, **params), size, list(dims), list(vals))
        return (outs, odims) if multi else (outs[0], odims[0])

    p.abstract_eval = abstract_eval
    ad.jvp_rules[p] = jvp
    batching.batch_rules[p] = batch
    control.register_host_primitive(name, lambda arrays, **params: flat(*arrays, **params))
    return p


class CallingPrimitive(core.Primitive):
    """A JAX primitive whose operands are not arrays (tokens, axis names): binding it, under any trace, is
    calling its function, which binds pyjax's own primitives."""

    def __init__(self, name: str, fn, multiple_results: bool = False):
        super().__init__(name)
        self.impl = fn
        self.multiple_results = multiple_results

    def bind(self, *args, **params):
        return self.impl(*args, **params)
