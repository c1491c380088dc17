"""User-defined batching: `custom_vmap` and `sequential_vmap` (JAX's jax.custom_batching).

A call binds the primitive `custom_vmap_call` holding the function traced to a jaxpr and the
user's rule on flat leaves. Evaluation and jit run the jaxpr (the partitioner inlines it); vmap
calls the rule once, with the batched arguments' batch axis moved to the front; forward mode
binds another `custom_vmap_call` for (primals, tangents) whose rule is the JVP of the user's rule,
so vmap of jvp still batches through the rule. Reverse mode is refused, as in JAX.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyjax.core import core
from pyjax.core.core import get_aval
from pyjax.core.pytree import flatten_fun, tree_flatten, tree_map, tree_unflatten
from pyjax.custom_derivatives import CustomFunction, _name, _no_trace_active, _resolve_args, _to_jax, _trace_body
from pyjax.interpreters import ad, batching
from pyjax.interpreters.ad import Zero

__all__ = ["custom_vmap", "sequential_vmap", "custom_vmap_call_p"]

custom_vmap_call_p = core.MultiPrimitive("custom_vmap_call")


class custom_vmap(CustomFunction):
    """Wrap `fun` so that vmap calls a user rule instead of batching fun's operations.

    Set the rule with `f.def_vmap(rule)`: rule(axis_size, in_batched, *args) -> (out, out_batched),
    where in_batched holds one pytree of bools per argument (batched leaves have the batch axis
    first) and out_batched has the structure of out.
    """

    def __init__(self, fun: Callable):
        super().__init__(fun, "custom_vmap")
        self.vmap_rule: Callable | None = None

    def def_vmap(self, rule: Callable) -> Callable:
        """Set the batching rule (usable as a decorator)."""
        self.vmap_rule = rule
        return rule

    def __call__(self, *args, **kwargs) -> Any:
        name = _name(self.fun)
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        if self._sig is not None:  # the rule sees every parameter, defaults included (as in JAX)
            bound = self._sig.bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        args = tuple(tree_map(_to_jax, _resolve_args(self.fun, self._sig, args, kwargs)))
        leaves, in_tree = tree_flatten(args)
        if _no_trace_active(leaves):
            return self.fun(*args)
        flat_fun, out_trees = flatten_fun(self.fun, in_tree, with_kwargs=False)
        jaxpr, consts = _trace_body(lambda *xs: [_to_jax(o) for o in flat_fun(*xs)], leaves)
        out_tree = out_trees[0]
        rule = self.vmap_rule

        def flat_rule(axis_size: int, in_batched: list, xs: list) -> tuple[list, list]:
            res = rule(axis_size, list(tree_unflatten(in_tree, in_batched)), *tree_unflatten(in_tree, xs))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise ValueError(
                    f"custom vmap rule ({_name(rule)}) must return a pair (output, output batched), got {res!r}"
                )
            out_leaves, vals_tree = tree_flatten(res[0])
            spec, spec_tree = tree_flatten(res[1])
            if vals_tree != spec_tree:
                raise ValueError(
                    f"structure of output value and output batching specification returned by custom "
                    f"vmap rule ({_name(rule)}) do not match.\nOutput values: {vals_tree}\nBatching spec: {spec_tree}"
                )
            if vals_tree != out_tree:
                raise ValueError(
                    f"custom vmap rule ({_name(rule)}) must return outputs with the structure of "
                    f"{name}'s: expected {out_tree}, got {vals_tree}"
                )
            return [_to_jax(o) for o in out_leaves], [bool(b) for b in spec]

        flat_rule.__name__ = _name(rule)
        outs = custom_vmap_call_p.bind(
            *consts, *leaves, call_jaxpr=jaxpr, rule=flat_rule, num_consts=len(consts), fun_name=name
        )
        return tree_unflatten(out_tree, outs)


def sequential_vmap(f: Callable) -> custom_vmap:
    """f under vmap runs once per batch element (lax.map) instead of on batched operations."""
    from pyjax.lax import control_flow

    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        leaves, tree = tree_flatten(args)
        flags = tree_flatten(in_batched)[0]
        if not any(flags):
            out = f.fun(*args)
            return out, tree_map(lambda _: False, out)

        def one(batched: list):
            it = iter(batched)
            return f.fun(*tree_unflatten(tree, [next(it) if b else x for x, b in zip(leaves, flags)]))

        out = control_flow.map(one, [x for x, b in zip(leaves, flags) if b])
        return out, tree_map(lambda _: True, out)

    return f


def _impl(*args, call_jaxpr, **_):
    return core.eval_jaxpr(call_jaxpr, list(args))


def _abstract(*avals, call_jaxpr, **_):
    return call_jaxpr.out_avals


custom_vmap_call_p.impl = _impl
custom_vmap_call_p.abstract_eval = _abstract


def _batch(size, vals, dims, *, call_jaxpr, rule, num_consts, fun_name):
    if any(d is not None for d in dims[:num_consts]):  # JAX fails on this too (an assertion)
        raise ValueError(
            f"custom_vmap function {fun_name} closes over a value batched by this vmap, which its rule "
            "cannot see: pass that value as an argument"
        )
    xs = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(vals[num_consts:], dims[num_consts:])]
    outs, out_batched = rule(size, [d is not None for d in dims[num_consts:]], xs)
    for o, b, a in zip(outs, out_batched, call_jaxpr.out_avals):
        want = ((size,) if b else ()) + a.shape
        got = get_aval(o)
        if got.shape != want or got.dtype is not a.dtype:
            raise ValueError(
                f"custom vmap rule ({_name(rule)}) for {fun_name} returned {got.str_short()} for an output "
                f"of type {a.str_short()} declared {'batched' if b else 'unbatched'} (batch size {size})"
            )
    return outs, [0 if b else None for b in out_batched]


def _broadcast_front(x, size: int):
    return batching.move_to(x, None, 0, size)


def _jvp(primals, tangents, *, call_jaxpr, rule, num_consts, fun_name):
    nc = num_consts
    fun = core.jaxpr_as_fun(call_jaxpr)
    if any(type(t) is not Zero for t in tangents[:nc]):
        # Tangents through closed-over values: differentiate the body (no custom batching).
        return ad.jvp_flat(fun, list(primals), [ad.instantiate(t) for t in tangents])
    consts, xs = list(primals[:nc]), list(primals[nc:])
    ts = [ad.instantiate(t) for t in tangents[nc:]]
    m = len(xs)

    def jvp_fun(*a):
        po, to = ad.jvp_flat(lambda *x: fun(*consts, *x), list(a[:m]), list(a[m:]))
        return list(po) + [ad.instantiate(t) for t in to]

    jaxpr, jconsts = _trace_body(jvp_fun, xs + ts)

    def jvp_rule(axis_size: int, in_batched: list, args: list) -> tuple[list, list]:
        both = [p or t for p, t in zip(in_batched[:m], in_batched[m:])]
        args = [
            _broadcast_front(x, axis_size) if b and not ib else x for x, b, ib in zip(args, both + both, in_batched)
        ]
        box = []

        def f(*x):
            outs, ob = rule(axis_size, both, list(x))
            box.append(ob)
            return outs

        po, to = ad.jvp_flat(f, args[:m], args[m:])
        ob = list(box[0])
        to = [ad.instantiate(t) for t in to]
        for i, (p, t) in enumerate(zip(po, to)):
            if not ob[i] and get_aval(t).ndim > get_aval(p).ndim:  # a batched tangent reached it
                po[i], ob[i] = _broadcast_front(p, axis_size), True
        return list(po) + to, ob + ob

    jvp_rule.__name__ = f"jvp_of_{_name(rule)}"
    outs = custom_vmap_call_p.bind(
        *jconsts, *xs, *ts, call_jaxpr=jaxpr, rule=jvp_rule, num_consts=len(jconsts), fun_name=fun_name
    )
    n = len(outs) // 2
    return outs[:n], outs[n:]


def _vjp(primals, needs, *, fun_name, **_):
    raise ValueError(
        f"Reverse-mode differentiation (grad, vjp) of custom_vmap function {fun_name} is not supported "
        "(as in JAX): use jax.jvp, or give the function a custom_vjp rule"
    )


batching.batch_rules[custom_vmap_call_p] = _batch
ad.jvp_rules[custom_vmap_call_p] = _jvp
ad.vjp_rules[custom_vmap_call_p] = _vjp
