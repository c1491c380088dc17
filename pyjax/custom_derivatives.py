"""User-defined derivatives: `custom_jvp`, `custom_vjp`, and `checkpoint` / `remat`.

A call of a custom-derivative function binds a primitive (`custom_jvp_call` or
`custom_vjp_call`) whose parameters carry the function traced to a jaxpr plus the user's rules
as Python callables on flat lists of leaves. Each interpreter then picks what it needs:

- eager evaluation (no trace at all) simply runs the Python function;
- staging (jit) records the primitive; the partitioner inlines its jaxpr, so the body fuses;
- forward mode (JVPTrace) calls the custom jvp rule;
- reverse mode (the tape) calls fwd/bwd for `custom_vjp`; for `custom_jvp` it records the jvp
  rule (linear in the tangents) on an inner tape at zero tangents and replays that tape
  backwards, which is the transpose of the rule;
- vmap batches the jaxpr and wraps the rules in vmap.

Values the function closes over become explicit leading inputs of the primitive (so closures
over jit or vmap tracers work); the custom rules treat them as constants.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from pyjax.abstract_arrays import _abstractify
from pyjax.core import core
from pyjax.core.core import Tracer, get_aval
from pyjax.core.errors import JAXTypeError
from pyjax.core.pytree import flatten_fun, tree_flatten, tree_map, tree_structure, tree_unflatten
from pyjax.interpreters import ad, batching, staging
from pyjax.interpreters.ad import Zero
from pyjax.lax._util import _arr

__all__ = [
    "CustomVJPPrimal",
    "SymbolicZero",
    "custom_jvp",
    "custom_vjp",
    "checkpoint",
    "remat",
    "custom_jvp_call_p",
    "custom_vjp_call_p",
    "custom_vjp_primal_tree_values",
    "linear_call",
    "zero_from_primal",
    "closure_convert",
    "custom_gradient",
]

custom_jvp_call_p = core.MultiPrimitive("custom_jvp_call")
custom_vjp_call_p = core.MultiPrimitive("custom_vjp_call")


# --- helpers ----------------------------------------------------------------------------------


def _to_jax(x):
    """Leaves given to transformations: Arrays/tracers stay, numpy arrays and scalars convert."""
    if isinstance(x, Tracer):
        return x
    return _arr(x)


def _name(f) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _resolve_args(fun: Callable, sig, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments become positional ones (custom rules see positional args only)."""
    if not kwargs:
        return args
    if sig is None:
        raise TypeError(f"keyword arguments are not supported for custom derivative function {_name(fun)}")
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    if bound.kwargs:
        raise TypeError(
            f"custom derivative function {_name(fun)} does not accept **kwargs parameters: got {sorted(bound.kwargs)}"
        )
    return tuple(bound.args)


def _split_nondiff(args: tuple, nondiff_argnums: tuple) -> tuple[list, list]:
    nondiff = [args[i] for i in nondiff_argnums]
    diff = [a for i, a in enumerate(args) if i not in nondiff_argnums]
    return nondiff, diff


def _merge(nondiff_argnums: tuple, nondiff: list, diff: Sequence, n: int) -> list:
    it_n, it_d = iter(nondiff), iter(diff)
    return [next(it_n) if i in nondiff_argnums else next(it_d) for i in range(n)]


def _normalize_argnums(nums, fname: str) -> tuple:
    nums = (nums,) if isinstance(nums, int) else tuple(nums)
    for i in nums:
        if not isinstance(i, int) or i < 0:
            raise TypeError(f"{fname}: nondiff_argnums must be non-negative integers, got {nums}")
    return tuple(sorted(set(nums)))


def _no_trace_active(leaves: list) -> bool:
    return core.state.dynamic_trace is None and not any(isinstance(x, Tracer) for x in leaves)


def _trace_body(flat_fun: Callable, leaves: list) -> tuple[core.Jaxpr, list]:
    """Trace flat_fun(*leaves) -> list to a jaxpr whose leading binders are its captured consts."""
    avals = [get_aval(x) for x in leaves]
    jaxpr, consts = staging.trace_to_jaxpr(flat_fun, avals)
    return jaxpr, consts


def _concrete_primals(leaves: list) -> list | None:
    """The concrete values under the leaves when only autodiff traces hold them (else None)."""
    if core.state.dynamic_trace is not None:
        return None
    out = []
    for x in leaves:
        while isinstance(x, (ad.JVPTracer, ad.VJPTracer)):
            x = x.primal
        if isinstance(x, Tracer):
            return None
        out.append(x)
    return out


def _trace_or_evaluate(flat_fun: Callable, leaves: list) -> tuple[core.Jaxpr | None, list, list]:
    """(jaxpr, consts, out_avals) of flat_fun. A function with Python control flow on its inputs cannot be
    traced abstractly; where only grad/jvp/vjp are active over concrete values, JAX runs it on those values
    instead (its rules see concrete primals): then it is evaluated once for its output avals, jaxpr None."""
    try:
        jaxpr, consts = _trace_body(flat_fun, leaves)
        return jaxpr, consts, jaxpr.out_avals
    except JAXTypeError:
        concrete = _concrete_primals(leaves)
        if concrete is None:
            raise
    return None, [], [get_aval(o) for o in flat_fun(*concrete)]


def _check_aval(what: str, got, want) -> None:
    ga = get_aval(got)
    if ga.shape != want.shape or ga.dtype is not want.dtype:
        raise TypeError(
            f"{what} must produce primal and tangent outputs with corresponding shapes and dtypes. "
            f"Expected {want.str_short()} (tangent type of {want.str_short()}) but got "
            f"{ga.str_short()}."
        )


def _cast_like(x, aval):
    """Python scalars and weakly typed values from user rules take the expected dtype."""
    from pyjax.lax import lax

    if not isinstance(x, Tracer) and not hasattr(x, "aval"):
        x = _to_jax(x)
    a = get_aval(x)
    if a.dtype is not aval.dtype and a.weak_type:
        x = lax.convert_element_type(x, aval.dtype)
        a = get_aval(x)
    if a.shape != aval.shape and a.shape == () and a.weak_type:
        x = lax.broadcast_in_dim(x, aval.shape, ())
    return x


def _zeros_like(x):
    from pyjax.lax import lax

    a = get_aval(x)
    return lax.full(a.shape, 0, a.dtype)


class CustomFunction:
    """What custom_jvp, custom_vjp and custom_vmap share: wrapping `fun`, and binding as a method."""

    def __init__(self, fun: Callable, kind: str):
        if not callable(fun):
            raise TypeError(f"{kind} requires a callable, got {fun!r}")
        functools.update_wrapper(self, fun)
        self.fun = fun
        try:
            self._sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self._sig = None

    def __get__(self, obj, objtype=None):
        return self if obj is None else functools.partial(self, obj)

    def _split_args(self, kind: str, args: tuple, kwargs: dict) -> tuple:
        """(positional args, the nondiff_argnums values, the differentiated ones, their leaves and
        tree);
        leaves is None when no transformation is tracing them (the rule is not needed)."""
        args = _resolve_args(self.fun, self._sig, args, kwargs)
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise TypeError(
                    f"{kind} function {_name(self.fun)}: nondiff_argnums={self.nondiff_argnums} "
                    f"but only {len(args)} positional arguments were given"
                )
        nondiff, diff = _split_nondiff(args, self.nondiff_argnums)
        diff = [tree_map(_to_jax, d) for d in diff]
        leaves, in_tree = tree_flatten(tuple(diff))
        return args, nondiff, diff, None if _no_trace_active(leaves) else leaves, in_tree

    def _trace_fun(self, args: tuple, nondiff: list, leaves: list, in_tree) -> tuple:
        """(flat fun, jaxpr, consts, out_avals, out_tree) of fun over the differentiated leaves (the nondiff
        values closed over), as _trace_or_evaluate gives them."""
        n, nums = len(args), self.nondiff_argnums
        flat_fun, out_trees = flatten_fun(lambda *d: self.fun(*_merge(nums, nondiff, d, n)), in_tree, False)

        def jax_fun(*xs):
            return [_to_jax(o) for o in flat_fun(*xs)]

        jaxpr, consts, out_avals = _trace_or_evaluate(jax_fun, leaves)
        return jax_fun, jaxpr, consts, out_avals, out_trees[0]


# --- custom_jvp -------------------------------------------------------------------------------


@dataclasses.dataclass
class CustomVJPPrimal:
    """What a `defvjp(fwd, bwd, symbolic_zeros=True)` fwd rule receives per input: the value, and
    whether it is being differentiated."""

    value: Any
    perturbed: bool


class SymbolicZero:
    """A zero tangent that was never materialized: what a `defjvp(rule, symbolic_zeros=True)` rule
    receives for inputs that are not being differentiated (and may return for zero outputs).
    Reads shape, dtype, ndim, ... from its aval."""

    def __init__(self, aval):
        self.aval = aval

    def __getattr__(self, name):
        if name == "aval":
            raise AttributeError(name)
        return getattr(self.aval, name)

    def __repr__(self):
        return "SymbolicZero"

    @staticmethod
    def from_primal_value(val) -> SymbolicZero:
        return SymbolicZero(ad.tangent_aval(get_aval(val)))


def _from_symbolic(t, aval):
    return ad.zeros_like_aval(aval) if isinstance(t, SymbolicZero) else t


class custom_jvp(CustomFunction):
    """Wrap `fun` so that forward- and reverse-mode autodiff use a user-supplied JVP rule.

    Use `f.defjvp(rule)` with `rule(primals, tangents) -> (primal_out, tangent_out)`, or
    `f.defjvps(*per_argument_rules)`. With `nondiff_argnums`, those arguments are passed first to
    the rule and are not differentiated.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, "custom_jvp")
        self.nondiff_argnums = _normalize_argnums(nondiff_argnums, "custom_jvp")
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the JVP rule: jvp(*nondiff_args, primals, tangents) -> (primal_out, tangent_out)."""
        self.jvp = jvp
        self.symbolic_zeros = bool(symbolic_zeros)
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """Set one rule per argument: jvps[i](tangent_i, primal_out, *primals) -> its tangent contribution."""
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            contribs = []
            for rule, t in zip(jvps, tangents):
                if rule is None:
                    continue
                contribs.append(rule(t, primal_out, *primals))
            if not contribs:
                return primal_out, tree_map(_zeros_like, primal_out)
            total = contribs[0]
            for c in contribs[1:]:
                total = tree_map(lambda a, b: a + b, total, c)
            return primal_out, total

        jvp.__name__ = f"jvps_of_{_name(self.fun)}"
        self.defjvp(jvp)

    def __call__(self, *args, **kwargs) -> Any:
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {_name(self.fun)} using defjvp.")
        args, nondiff, _, leaves, in_tree = self._split_args("custom_jvp", args, kwargs)
        if leaves is None:
            return self.fun(*args)
        flat_fun, jaxpr, consts, out_avals, out_tree = self._trace_fun(args, nondiff, leaves, in_tree)
        rule, fun_name = self.jvp, _name(self.fun)
        nondiff_argnums = self.nondiff_argnums

        symbolic = self.symbolic_zeros

        def flat_jvp(primals: list, tangents: list) -> tuple[list, list]:
            # zero tangents arrive as ad.Zero: SymbolicZero for a symbolic_zeros rule, else zeros
            tangents = [
                (SymbolicZero(t.aval) if symbolic else ad.instantiate(t)) if type(t) is ad.Zero else t for t in tangents
            ]
            p = tree_unflatten(in_tree, list(primals))
            t = tree_unflatten(in_tree, list(tangents))
            res = rule(*nondiff, tuple(p), tuple(t))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"Custom JVP rule {_name(rule)} for function {fun_name} must produce a pair "
                    f"(list or tuple of length two) representing primal and tangent outputs, "
                    f"but got {res}."
                )
            po, to = res
            if symbolic:  # the rule may answer SymbolicZero for a zero output tangent
                to = tree_map(
                    lambda t, a: _from_symbolic(t, ad.tangent_aval(get_aval(a))),
                    to,
                    po,
                    is_leaf=lambda t: isinstance(t, SymbolicZero),
                )
            po_leaves, po_tree = tree_flatten(po)
            to_leaves, to_tree = tree_flatten(to)
            if po_tree != out_tree:
                raise TypeError(
                    f"Custom JVP rule {_name(rule)} for function {fun_name} must produce a primal "
                    f"output with the same container (pytree) structure as the primal function, "
                    f"but got {po_tree} and {out_tree} respectively."
                )
            if to_tree != po_tree:
                raise TypeError(
                    f"Custom JVP rule {_name(rule)} for function {fun_name} must produce primal and "
                    f"tangent outputs with equal container (pytree) structures, but got {po_tree} "
                    f"and {to_tree} respectively."
                )
            po_leaves = [_cast_like(x, a) for x, a in zip(po_leaves, out_avals)]
            to_leaves = [_cast_like(x, a) for x, a in zip(to_leaves, out_avals)]
            for x, a in zip(po_leaves, out_avals):
                ga = get_aval(x)
                if ga.shape != a.shape or ga.dtype is not a.dtype:
                    raise TypeError(
                        f"Custom JVP rule must produce primal outputs with the same shapes and dtypes "
                        f"as the primal function: expected {a.str_short()} but got {ga.str_short()}."
                    )
            for x, a in zip(to_leaves, out_avals):
                _check_aval("Custom JVP rule", x, a)
            return po_leaves, to_leaves

        flat_jvp.__name__ = _name(rule)
        del nondiff_argnums
        direct = {} if jaxpr is not None else {"fun": flat_fun}  # no jaxpr: the impl calls the function
        outs = custom_jvp_call_p.bind(
            *consts, *leaves, call_jaxpr=jaxpr, jvp=flat_jvp, num_consts=len(consts), **direct
        )
        return tree_unflatten(out_tree, outs)


def _call_impl(*args, call_jaxpr, fun=None, **_):
    return core.eval_jaxpr(call_jaxpr, list(args)) if call_jaxpr is not None else fun(*args)


def _call_abstract(*avals, call_jaxpr, **_):
    return call_jaxpr.out_avals


custom_jvp_call_p.impl = _call_impl
custom_jvp_call_p.abstract_eval = _call_abstract


def _custom_jvp_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, fun=None):
    xs = primals[num_consts:]
    return jvp(list(xs), list(tangents[num_consts:]))  # the rule's wrapper turns zeros into what it expects


def _custom_jvp_vjp(primals, needs, *, call_jaxpr, jvp, num_consts, fun=None):
    xs = list(primals[num_consts:])
    # linearize in the inputs being differentiated; the others' tangents are zero (symbolic, as in JAX)
    idx = [i for i, n in enumerate(needs[num_consts:]) if n] or list(range(len(xs)))

    def linear(*ts):
        full = [Zero(ad.tangent_aval(get_aval(x))) for x in xs]
        for i, t in zip(idx, ts):
            full[i] = t
        po, to = jvp(xs, full)
        return [ad.instantiate(t) for t in to], po

    _, backward_t, primal_out = ad.vjp_flat(linear, [_zeros_like(xs[i]) for i in idx])

    def backward(cts):
        in_cts = backward_t([ad.instantiate(c) for c in cts])
        out = [None] * (num_consts + len(xs))
        for i, ct in zip(idx, in_cts):
            x = xs[i]
            out[num_consts + i] = None if type(ct) is Zero or get_aval(x).dtype.kind not in "fc" else ct
        return out

    backward.multiple_results = True
    return primal_out, backward


ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_jvp
ad.vjp_rules[custom_jvp_call_p] = _custom_jvp_vjp


def _batch_jaxpr(jaxpr: core.Jaxpr, dims: list, size: int) -> core.Jaxpr:
    name = batching.rule_axis_name()  # collectives inside still see the named axis
    f = batching.batched_jaxpr_fun(jaxpr, dims, size, name)
    bj, consts = staging.trace_to_jaxpr(f, batching.batched_avals(jaxpr.in_avals, dims, size))
    return staging.close_over_consts(bj, consts) if not any(isinstance(c, Tracer) for c in consts) else None


def _vmapped(fn: Callable, size: int, in_dims: list) -> Callable:
    """fn(*flat) -> flat list, vmapped with the given input dims; outputs batched on axis 0."""

    name = batching.rule_axis_name()

    def run(*args):
        outs, odims = batching.vmap_flat(lambda *a: list(fn(*a)), size, list(in_dims), list(args), name)
        return [batching.move_to(o, d, 0, size) for o, d in zip(outs, odims)]

    return run


def _custom_jvp_batch(size, vals, dims, *, call_jaxpr, jvp, num_consts):
    bj = _batch_jaxpr(call_jaxpr, dims, size)
    if bj is None:  # the batched body captured outer tracers: evaluate it directly
        outs, odims = batching.vmap_flat(
            core.jaxpr_as_fun(call_jaxpr), size, list(dims), list(vals), batching.rule_axis_name()
        )
        return outs, odims
    xdims = list(dims[num_consts:])
    n = len(xdims)

    def jvp_flat_both(*args):
        po, to = jvp(list(args[:n]), list(args[n:]))
        return list(po) + list(to)

    batched = _vmapped(jvp_flat_both, size, xdims + xdims)

    def batched_jvp(primals, tangents):
        outs = batched(*primals, *[ad.instantiate(t) for t in tangents])
        m = len(outs) // 2
        return outs[:m], outs[m:]

    batched_jvp.__name__ = getattr(jvp, "__name__", "jvp")
    outs = custom_jvp_call_p.bind(*vals, call_jaxpr=bj, jvp=batched_jvp, num_consts=num_consts)
    return outs, [0] * len(outs)


batching.batch_rules[custom_jvp_call_p] = _custom_jvp_batch


# --- custom_vjp -------------------------------------------------------------------------------


class custom_vjp(CustomFunction):
    """Wrap `fun` so that reverse-mode autodiff uses user-supplied `fwd` and `bwd` rules.

    `f.defvjp(fwd, bwd)`: fwd(*args) -> (out, residuals); bwd(*nondiff_args, residuals, out_ct)
    -> a tuple with one cotangent (or None) per differentiable argument. Forward mode (jvp) is
    not available for such functions, as in JAX.
    """

    def __init__(self, fun: Callable, nondiff_argnums: Sequence[int] = ()):
        super().__init__(fun, "custom_vjp")
        self.nondiff_argnums = _normalize_argnums(nondiff_argnums, "custom_vjp")
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False, optimize_remat: bool = False) -> None:
        """Set the forward (returns output and residuals) and backward (cotangents) rules."""
        self.fwd = fwd
        self.bwd = bwd
        self.symbolic_zeros = bool(symbolic_zeros)

    def __call__(self, *args, **kwargs) -> Any:
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {_name(self.fun)} using defvjp.")
        args, nondiff, diff, leaves, in_tree = self._split_args("custom_vjp", args, kwargs)
        if leaves is None:
            return self.fun(*args)
        flat_fun, jaxpr, consts, out_avals, out_tree = self._trace_fun(args, nondiff, leaves, in_tree)
        n, nums = len(args), self.nondiff_argnums
        fwd, bwd, fun_name = self.fwd, self.bwd, _name(self.fun)
        symbolic = getattr(self, "symbolic_zeros", False)

        def flat_fwd(*xs, perturbed: list | None = None) -> tuple[list, list]:
            if symbolic:  # each input as CustomVJPPrimal(value, perturbed); unknown (vmapped): perturbed
                flags = perturbed if perturbed is not None else [True] * len(xs)
                xs = [CustomVJPPrimal(x, bool(p)) for x, p in zip(xs, flags)]
            d = tree_unflatten(in_tree, list(xs))
            res = fwd(*_merge(nums, nondiff, d, n))
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError(
                    f"Custom VJP fwd rule {_name(fwd)} for function {fun_name} must produce a pair "
                    f"(list or tuple of length two) where the first element represents the primal "
                    f"output (equal to the output of the custom_vjp-decorated function {fun_name}) and "
                    f"the second element represents residuals (i.e. values stored from the forward "
                    f"pass for use on the backward pass), but instead the fwd rule output was {res}."
                )
            out, residuals = res
            o_leaves, o_tree = tree_flatten(out)
            if o_tree != out_tree:
                raise TypeError(
                    f"Custom VJP fwd rule {_name(fwd)} for function {fun_name} must produce a pair "
                    f"(list or tuple of length two) where the first element represents the primal "
                    f"output (equal in value to the output of the custom_vjp-decorated function "
                    f"{fun_name}, and in particular of the same container/pytree structure), but "
                    f"instead the fwd rule output's first element had container/pytree structure "
                    f"{o_tree} while the custom_vjp-decorated function {fun_name} had output "
                    f"container/pytree structure {out_tree}."
                )
            o_leaves = [_cast_like(x, a) for x, a in zip(o_leaves, out_avals)]
            r_leaves, r_tree = tree_flatten(residuals)
            res_tree_box[:] = [r_tree]
            return o_leaves, r_leaves

        res_tree_box: list = []
        in_avals = [get_aval(x) for x in leaves]

        def flat_bwd(res_leaves: list, cts: list) -> list:
            # zero cotangents arrive as ad.Zero: SymbolicZero for a symbolic_zeros rule, else zeros
            cts = [(SymbolicZero(c.aval) if symbolic else ad.instantiate(c)) if type(c) is Zero else c for c in cts]
            r = tree_unflatten(res_tree_box[0], list(res_leaves))
            ct = tree_unflatten(out_tree, list(cts))
            got = bwd(*nondiff, r, ct)
            n_diff = len(diff)
            if not isinstance(got, (tuple, list)) or len(got) != n_diff:
                got_tree = tree_structure(got, is_leaf=lambda x: x is None) if got is not None else "None"
                raise TypeError(
                    f"Custom VJP bwd rule must produce an output with the same container (pytree) "
                    f"structure as the args tuple of the primal function, and in particular must "
                    f"produce a tuple of length equal to the number of arguments to the primal "
                    f"function, but got bwd output structure {got_tree} for primal input structure "
                    f"{tree_structure(tuple(diff))}."
                )
            flat_cts = []
            for g, d in zip(got, diff):
                d_leaves, d_tree = tree_flatten(d)
                if g is None:
                    flat_cts.extend([None] * len(d_leaves))
                    continue
                g_leaves, g_tree = tree_flatten(g, is_leaf=lambda x: x is None or isinstance(x, SymbolicZero))
                if g_tree != d_tree:
                    raise TypeError(
                        f"Custom VJP bwd rule must produce an output with the same container (pytree) "
                        f"structure as the args tuple of the primal function, but got {g_tree} for "
                        f"argument structure {d_tree}."
                    )
                flat_cts.extend(g_leaves)
            out = []
            for g, a in zip(flat_cts, in_avals):
                if g is None or isinstance(g, SymbolicZero) or a.dtype.kind not in "fc":
                    out.append(None)
                    continue
                g = _cast_like(g, a)
                ga = get_aval(g)
                if ga.shape != a.shape:
                    raise ValueError(
                        f"Custom VJP bwd rule must produce an output with the same shape/dtypes as the "
                        f"args tuple of the primal function, but got {ga.str_short()} for an argument "
                        f"of type {a.str_short()}."
                    )
                out.append(g)
            return out

        direct = {} if jaxpr is not None else {"fun": flat_fun}  # no jaxpr: the impl calls the function
        outs = custom_vjp_call_p.bind(
            *consts, *leaves, call_jaxpr=jaxpr, fwd=flat_fwd, bwd=flat_bwd, num_consts=len(consts), **direct
        )
        return tree_unflatten(out_tree, outs)


custom_vjp_call_p.impl = _call_impl
custom_vjp_call_p.abstract_eval = _call_abstract


def _custom_vjp_jvp(primals, tangents, **_):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_vjp_vjp(primals, needs, *, call_jaxpr, fwd, bwd, num_consts, fun=None):
    xs = list(primals[num_consts:])
    outs, res = fwd(*xs, perturbed=list(needs[num_consts:]))

    def backward(cts):  # bwd turns zero cotangents into what its rule expects
        return [None] * num_consts + list(bwd(res, list(cts)))

    backward.multiple_results = True
    return outs, backward


ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_jvp
ad.vjp_rules[custom_vjp_call_p] = _custom_vjp_vjp


def _custom_vjp_batch(size, vals, dims, *, call_jaxpr, fwd, bwd, num_consts):
    bj = _batch_jaxpr(call_jaxpr, dims, size)
    if bj is None:
        outs, odims = batching.vmap_flat(
            core.jaxpr_as_fun(call_jaxpr), size, list(dims), list(vals), batching.rule_axis_name()
        )
        return outs, odims
    xdims = list(dims[num_consts:])
    n_out = len(call_jaxpr.outs)

    def fwd_joint(*xs):
        o, r = fwd(*xs)
        return list(o) + list(r)

    batched_fwd = _vmapped(fwd_joint, size, xdims)

    def b_fwd(*xs, perturbed=None):
        flat = batched_fwd(*xs)
        return flat[:n_out], flat[n_out:]

    def b_bwd(res, cts):
        cts = [ad.instantiate(c) for c in cts]
        nr = len(res)

        def bwd_joint(*a):
            got = bwd(list(a[:nr]), list(a[nr:]))
            return [_zeros_like(x) if g is None else g for g, x in zip(got, dummy_in)]

        # cotangents for unbatched inputs are summed over the batch by the caller's transpose
        outs = _vmapped(bwd_joint, size, [0] * (nr + len(cts)))(*res, *cts)
        result = []
        for g, d, x in zip(outs, xdims, dummy_in):
            if get_aval(x).dtype.kind not in "fc":
                result.append(None)
            else:
                result.append(_sum_axis0(g) if d is None else batching.moveaxis(g, 0, d))
        return result

    dummy_in = [_unbatched_example(v, d) for v, d in zip(vals[num_consts:], xdims)]
    outs = custom_vjp_call_p.bind(*vals, call_jaxpr=bj, fwd=b_fwd, bwd=b_bwd, num_consts=num_consts)
    return outs, [0] * len(outs)


def _unbatched_example(v, d):
    from pyjax.lax import lax

    if d is None:
        return v
    a = get_aval(v)
    shape = a.shape[:d] + a.shape[d + 1 :]
    return lax.full(shape, 0, a.dtype)


def _sum_axis0(x):
    from pyjax.lax import lax

    return lax.reduce_sum(x, (0,))


batching.batch_rules[custom_vjp_call_p] = _custom_vjp_batch


# --- checkpoint / remat -------------------------------------------------------------------------


def checkpoint(
    fun: Callable | None = None,
    *,
    prevent_cse: bool = True,
    policy: Callable | None = None,
    static_argnums: int | Sequence[int] = (),
) -> Callable:
    """jax.checkpoint: under reverse mode, keep only fun's inputs and recompute its forward pass in the
    backward pass (rematerialization), trading compute for the memory of its residuals.

    Built as a custom_vjp whose fwd saves the (closure-converted) inputs and whose bwd runs vjp(fun)
    again. policy: everything_saveable keeps every residual (no recompute); any other policy
    (nothing_saveable, dots_saveable, ...) recomputes everything, dots included, so values and gradients
    are always those of fun. Forward mode and plain evaluation call fun directly.
    """
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy, static_argnums=static_argnums)
    if not callable(fun):
        raise TypeError(f"checkpoint requires a callable, got {fun!r}")
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    save_all = policy is not None and policy is checkpoint_policies.everything_saveable

    @functools.wraps(fun)
    def remat_fun(*args, **kwargs):
        if save_all or not _under_reverse_mode(tree_flatten((args, kwargs))[0]):
            return fun(*args, **kwargs)
        return _remat_call(fun, args, kwargs, static)

    return remat_fun


def _under_reverse_mode(leaves: list) -> bool:
    """Rematerialization pays only when a reverse-mode trace will record fun (and is the top trace)."""
    if not any(m.trace_type is ad.VJPTrace for m in core.state.trace_stack):
        return False
    top = core.find_top_trace([x for x in leaves if isinstance(x, Tracer)])
    return top is not None and not isinstance(top, ad.JVPTrace)


def _remat_call(fun: Callable, args: tuple, kwargs: dict, static: tuple):
    n = len(args)
    static = {i % n for i in static} if n else set()
    leaves, tree = tree_flatten([None if i in static else a for i, a in enumerate(args)])
    # array leaves are the inputs; anything else (flags, strings, static args) stays closed over
    dyn_pos = [k for k, v in enumerate(leaves) if core.valid_jaxtype(v)]
    dyn = [_to_jax(leaves[k]) for k in dyn_pos]

    def call(dyn_leaves):
        ls = list(leaves)
        for k, v in zip(dyn_pos, dyn_leaves):
            ls[k] = v
        full = tree_unflatten(tree, ls)
        return fun(*[args[i] if i in static else full[i] for i in range(n)], **kwargs)

    # closed-over tracers (parameters of an enclosing grad, traced kwargs) become explicit inputs, so
    # they get gradients too
    conv, consts = closure_convert(call, dyn)

    @custom_vjp
    def rematerialized(dyn_leaves, cs):
        return conv(dyn_leaves, *cs)

    def fwd(dyn_leaves, cs):
        return conv(dyn_leaves, *cs), (dyn_leaves, cs)  # only the inputs are saved

    def bwd(res, ct):
        d, c = res
        n_d = len(d)
        out_tree = []

        def flat_fun(*xs):
            leaves, t = tree_flatten(conv(list(xs[:n_d]), *xs[n_d:]))
            out_tree.append(t)
            return leaves, None

        outs, backward, _ = ad.vjp_flat(flat_fun, [*d, *c])  # the forward pass again
        cts = out_tree[0].flatten_up_to(ct)
        cts = [Zero(get_aval(o)) if get_aval(o).dtype.kind in "biu" else g for g, o in zip(cts, outs)]
        grads = [None if type(g) is Zero else g for g in backward(cts)]
        return grads[:n_d], grads[n_d:]

    rematerialized.defvjp(fwd, bwd)
    return rematerialized(dyn, list(consts))


remat = checkpoint


class _CheckpointPolicies:
    """jax.checkpoint_policies names: everything_saveable turns rematerialization off; the others
    rematerialize everything (see checkpoint)."""

    @staticmethod
    def everything_saveable(*_, **__) -> bool:
        return True

    @staticmethod
    def nothing_saveable(*_, **__) -> bool:
        return False

    dots_saveable = everything_saveable
    checkpoint_dots = everything_saveable
    dots_with_no_batch_dims_saveable = everything_saveable
    checkpoint_dots_with_no_batch_dims = everything_saveable

    @staticmethod
    def save_only_these_names(*names):
        return lambda *_, **__: True

    save_any_names_but_these = save_only_these_names
    save_anything_except_these_names = save_only_these_names

    @staticmethod
    def save_and_offload_only_these_names(*, names_which_can_be_saved=(), names_which_can_be_offloaded=(), **_):
        return lambda *_, **__: True

    @staticmethod
    def offload_dot_with_no_batch_dims(offload_src="device", offload_dst="pinned_host"):
        return lambda *_, **__: True

    @staticmethod
    def save_from_both_policies(policy_1, policy_2):
        return lambda *a, **k: policy_1(*a, **k) or policy_2(*a, **k)


checkpoint_policies = _CheckpointPolicies()


# --- linear_call, zero_from_primal ----------------------------------------------------------------


def linear_call(fun: Callable, fun_transpose: Callable, residual_args, linear_args):
    """fun(residual_args, linear_args), linear in linear_args, whose transpose (reverse mode,
    linear_transpose) is fun_transpose(residual_args, cotangent) instead of fun's own.

    Forward mode applies fun to the tangents of linear_args; the transpose is itself a linear_call
    (of fun_transpose, transposed by fun), so transposing twice gives fun back."""

    @custom_vjp
    def apply(res, lin):
        return fun(res, lin)

    def apply_fwd(res, lin):
        return fun(res, lin), res

    def apply_bwd(res, ct):
        return tree_map(_zeros_like, res), linear_call(fun_transpose, fun, res, ct)

    apply.defvjp(apply_fwd, apply_bwd)

    @custom_jvp
    def call(res, lin):
        return fun(res, lin)

    def call_jvp(primals, tangents):
        res, lin = primals
        if any(not isinstance(t, SymbolicZero) for t in tree_flatten(tangents[0])[0]):
            raise NotImplementedError("linear_call: differentiation with respect to residual_args")
        lin_dot = tree_map(_from_symbolic_leaf, tangents[1], lin)
        return apply(res, lin), apply(res, lin_dot)

    call.defjvp(call_jvp, symbolic_zeros=True)
    return tree_map(lambda v: v if isinstance(v, Tracer) else _arr(v), call(residual_args, linear_args))


def _from_symbolic_leaf(t, x):
    return _zeros_like(x) if isinstance(t, SymbolicZero) else t


def zero_from_primal(val, symbolic_zeros: bool = False):
    """Zero tangents shaped like val's leaves (float0 for integer and bool leaves); SymbolicZero
    objects instead when symbolic_zeros."""
    from pyjax.dtypes import float0_zeros

    def one(x):
        aval = get_aval(_arr(x))
        if symbolic_zeros:
            return SymbolicZero(ad.tangent_aval(aval))
        if aval.dtype.kind in "biu":
            return float0_zeros(tuple(aval.shape))
        from pyjax.lax import lax

        return lax._convert(lax.full(aval.shape, 0, aval.dtype), aval.dtype, aval.weak_type)

    return tree_map(one, val)


def custom_vjp_primal_tree_values(tree):
    """The values of a symbolic_zeros fwd rule's CustomVJPPrimal leaves (other leaves unchanged)."""
    return tree_map(
        lambda x: x.value if isinstance(x, CustomVJPPrimal) else x,
        tree,
        is_leaf=lambda x: isinstance(x, CustomVJPPrimal),
    )


# --- closure conversion and custom_gradient ------------------------------------------------------


def _check_callable(fun, name):
    if not callable(fun):
        raise TypeError(f"{name} requires a callable argument, got {fun!r} of type {type(fun).__name__}")


def custom_gradient(fun: Callable) -> Callable:
    """Define a function and its gradient together: fun(*args) returns (value, vjp_rule).

    vjp_rule(cotangent) returns the cotangents of the positional arguments (a tuple, or a
    single value when there is one argument). Built on custom_vjp.
    """
    _check_callable(fun, "custom_gradient")

    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        ans, rule = fun(*args)
        if not callable(rule):
            raise TypeError(f"custom_gradient: {getattr(fun, '__name__', fun)} must return (value, vjp_rule)")
        return ans, _Rule(rule)

    def bwd(res, ct):
        cts = res.rule(ct)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    wrapped.defvjp(fwd, bwd)
    functools.update_wrapper(wrapped, fun, updated=())
    return wrapped


class _Rule:
    """A residual holding a Python function (a pytree leaf that custom_vjp carries to bwd)."""

    __slots__ = ("rule",)

    def __init__(self, rule):
        self.rule = rule


def closure_convert(fun: Callable, *example_args) -> tuple[Callable, list]:
    """Hoist the traced values fun closes over into explicit arguments.

    Returns (converted, consts): converted(*args, *consts) computes fun(*args). Only values of
    enclosing transformations (tracers) are hoisted; concrete constants stay closed over.
    """
    _check_callable(fun, "closure_convert")
    flat, in_tree = tree_flatten(example_args)
    flat_fun, out_trees = flatten_fun(fun, in_tree, with_kwargs=False)
    jaxpr, consts = staging.trace_to_jaxpr(
        lambda *xs: [_to_jax(x) for x in flat_fun(*xs)], [_abstractify(x) for x in flat]
    )
    out_tree = out_trees[0]
    hoisted = [isinstance(c, Tracer) for c in consts]
    closed = [c for c, h in zip(consts, hoisted) if not h]
    lifted = [c for c, h in zip(consts, hoisted) if h]

    def converted(*args):
        n = len(args) - len(lifted)
        if n < 0:
            raise TypeError(f"closure_convert: expected the arguments followed by {len(lifted)} hoisted constants")
        lifted_in = iter(args[n:])
        closed_in = iter(closed)
        cs = [next(lifted_in) if h else next(closed_in) for h in hoisted]
        xs, tree = tree_flatten(args[:n])
        if tree != in_tree:
            raise TypeError(f"closure_convert: arguments {tree} do not match the example arguments {in_tree}")
        return tree_unflatten(out_tree, core.eval_jaxpr(jaxpr, cs + xs))

    return converted, lifted
