"""Structured control flow: cond, switch, while_loop, fori_loop, scan, map, associative_scan.

Three primitives carry sub-jaxprs: `cond` (branches), `while` (cond_jaxpr, body_jaxpr) and
`scan` (jaxpr). User functions are traced once with abstract values; whatever they capture from
outside (arrays or tracers of enclosing transformations) becomes an explicit operand, so every
transformation sees all the data flow and the sub-jaxprs are self-contained. The partitioner
turns these equations into HostSteps that `pyjax.runtime.control` runs (reading predicates
back to the host); eagerly the same runtime code runs them.

Transformation rules build new sub-jaxprs by tracing the transformed body (jvp, vmap, or the
joint vjp split into a forward part that saves residuals and a backward part that consumes
them). Derived jaxprs are cached on the original jaxpr.
"""

from __future__ import annotations

import builtins
import functools
import inspect
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from pyjax import ref as _ref
from pyjax.core import core, dtypes
from pyjax.core.core import Jaxpr, ShapedArray, Tracer, Var, bind, get_aval
from pyjax.core.pytree import PyTreeDef, tree_flatten, tree_unflatten
from pyjax.interpreters import ad, batching, staging
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax as _lax
from pyjax.lax._util import _arr

__all__ = [
    "cond",
    "switch",
    "while_loop",
    "fori_loop",
    "scan",
    "map",
    "associative_scan",
    "cond_p",
    "while_p",
    "scan_p",
    "optimization_barrier",
    "platform_dependent",
    "composite",
]


def _host_impl(p: core.Primitive) -> Callable:
    def impl(*args, **params):
        from pyjax.runtime import control  # the runtime runs host control flow (lazy: no upward import)

        return control.run_primitive(p, args, params)

    return impl


cond_p = core.MultiPrimitive("cond")
while_p = core.MultiPrimitive("while")
scan_p = core.MultiPrimitive("scan")
for _p in (cond_p, while_p, scan_p):
    _p.impl = _host_impl(_p)


# --- small helpers ---------------------------------------------------------------------------


def _type_str(a: ShapedArray) -> str:
    return f"{a.dtype.name}[{','.join(str(d) for d in a.shape)}]"


def _same_type(a: ShapedArray, b: ShapedArray) -> bool:
    return a.shape == b.shape and a.dtype is b.dtype


def _is_float(a: ShapedArray) -> bool:
    return a.dtype.kind in "fc"  # complex values are differentiable too


def _batched(a: ShapedArray, size: int, axis: int = 0) -> ShapedArray:
    shape = list(a.shape)
    shape.insert(axis, size)
    return a.update(shape=tuple(shape))


def _zeros(aval: ShapedArray):
    z = _lax.full(aval.shape, 0, aval.dtype)
    return _lax._convert(z, aval.dtype, True) if aval.weak_type else z


def _to_type(x, aval: ShapedArray, weak: bool | None = None):
    """x converted to aval's dtype and (given or aval's) weak type."""
    return _lax._convert(x, aval.dtype, aval.weak_type if weak is None else weak)


def _instantiate(t, aval: ShapedArray):
    """A concrete tangent/cotangent typed exactly like aval (zeros for a symbolic Zero)."""
    if type(t) is Zero:
        return _zeros(aval)
    return _lax._convert(t, aval.dtype, aval.weak_type)


def _slice_axis(x, start: int, stop: int, axis: int, step: int = 1):
    a = get_aval(x)
    starts, limits, strides = [0] * a.ndim, list(a.shape), [1] * a.ndim
    starts[axis], limits[axis], strides[axis] = start, stop, step
    return _lax.slice(x, starts, limits, strides)


def _lift(x):
    """Operands: tracers and arrays pass through, Python scalars become weak scalar arrays."""
    if isinstance(x, Tracer):
        return x
    if isinstance(x, (builtins.bool, builtins.int, builtins.float)):
        return x  # stays a Python scalar so staging keeps it a Literal
    if type(x).__name__ == "Array":
        return x
    if core.valid_jaxtype(x) or (hasattr(x, "dtype") and hasattr(x, "shape")):  # numpy arrays and scalars
        return _arr(x)
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type")


def _fun_name(f) -> str:
    name = getattr(f, "__name__", None) or type(f).__name__
    try:
        src = inspect.getsourcefile(f)
        line = inspect.getsourcelines(f)[1]
        return f"{name} at {src}:{line}"
    except (TypeError, OSError):
        return name


def _leaf_paths(tree: PyTreeDef, prefix: str = "") -> list:
    """keystr-like paths of each leaf of a treedef ('' for a lone leaf)."""
    if tree.node_type is None:
        return [prefix]
    if tree.node_type is dict:
        keys = tree.node_data[1]
        parts = [f"[{k!r}]" for k in keys]
    else:
        parts = [f"[{i}]" for i in range(len(tree.children))]
    out = []
    for p, c in zip(parts, tree.children):
        out.extend(_leaf_paths(c, prefix + p))
    return out


def _mismatch_reason(a: ShapedArray, b: ShapedArray) -> str:
    if a.shape != b.shape and a.dtype is not b.dtype:
        return "so the shapes and dtypes do not match"
    if a.shape != b.shape:
        return "so the shapes do not match"
    return "so the dtypes do not match"


def _tree_kind(t: PyTreeDef) -> str:
    if t.node_type is None:
        return "a pytree leaf"
    return f"a {t.node_type!r}"


def _trace(fun: Callable, in_tree: PyTreeDef, in_avals: list, what: str) -> tuple[Jaxpr, list, PyTreeDef]:
    """Trace fun(*args) (args unflattened from in_tree) to (jaxpr over consts + args, consts, out_tree)."""
    box = []

    def flat(*xs):
        out = fun(*tree_unflatten(in_tree, list(xs)))
        leaves, t = tree_flatten(out)
        box.append(t)
        for v in leaves:
            if not (isinstance(v, Tracer) or core.valid_jaxtype(v)):
                raise TypeError(
                    f"{what} returned a value of type {type(v).__name__}, which is not a valid JAX type: {v!r}"
                )
        return leaves

    jaxpr, consts = staging.trace_to_jaxpr(flat, list(in_avals))
    jaxpr, consts = _inline_host_scalars(jaxpr, list(consts))
    return jaxpr, consts, box[0]


_TRACES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # user function -> {key: trace}


def _memo_trace(fun, key: tuple, trace: Callable, consts_of: Callable):
    """trace() once per (fun, key) while fun lives, as JAX caches its control-flow traces: eager
    loops and conds then reuse their jaxprs (and the programs compiled for them) on every call.
    Traces that close over tracers of an enclosing trace are not kept."""
    if batching.axis_env:
        key += (batching.axis_env_key(),)
    try:
        per = _TRACES.get(fun)
        hit = per.get(key) if per is not None else None
    except TypeError:  # not weakly referable or an unhashable key: trace every time
        return trace()
    if hit is not None:
        return hit
    out = trace()
    if not any(isinstance(c, Tracer) for c in consts_of(out)):
        if per is None:
            per = _TRACES[fun] = {}
        per[key] = out
    return out


def _is_host_scalar(c) -> bool:
    return type(c).__name__ == "Array" and getattr(c, "_buf", 0) is None and not c.aval.shape


def _inline_host_scalars(jaxpr: Jaxpr, consts: list) -> tuple[Jaxpr, list]:
    """Captured scalar constants (not yet on a device) become Literals; the rest stay operands."""
    n = len(consts)
    lits = {v: core.Literal(c, v.aval) for v, c in zip(jaxpr.in_binders[:n], consts) if _is_host_scalar(c)}
    if not lits:
        return jaxpr, consts
    eqns = [
        core.JaxprEqn(e.primitive, [lits.get(x, x) if type(x) is Var else x for x in e.inputs], e.params, e.out_binders)
        for e in jaxpr.eqns
    ]
    outs = [lits.get(x, x) if type(x) is Var else x for x in jaxpr.outs]
    keep = [i for i, v in enumerate(jaxpr.in_binders[:n]) if v not in lits]
    binders = [jaxpr.in_binders[i] for i in keep] + jaxpr.in_binders[n:]
    return Jaxpr(binders, eqns, outs), [consts[i] for i in keep]


def _convert_outs(jaxpr: Jaxpr, out_avals: list) -> Jaxpr:
    """The same jaxpr with its outputs converted (weak type only) to out_avals."""
    if all(a == b for a, b in zip(jaxpr.out_avals, out_avals)):
        return jaxpr

    def f(*args):
        outs = core.eval_jaxpr(jaxpr, list(args))
        return [_to_type(o, a) for o, a in zip(outs, out_avals)]

    return staging.trace_closed(f, jaxpr.in_avals)


def _with_inputs(jaxpr: Jaxpr, in_binders: list) -> Jaxpr:
    """jaxpr with a new binder list (a permutation, possibly with extra unused binders)."""
    return Jaxpr(list(in_binders), jaxpr.eqns, jaxpr.outs)


def _permute(jaxpr: Jaxpr, in_order: list, out_order: list) -> Jaxpr:
    return Jaxpr([jaxpr.in_binders[i] for i in in_order], jaxpr.eqns, [jaxpr.outs[i] for i in out_order])


def _join_avals(avals: list) -> ShapedArray:
    a = avals[0]
    return a.update(weak_type=all(x.weak_type for x in avals))


def _promote_weak_init(init_flat: list, init_avals: list, out_avals: list) -> tuple[list, bool]:
    """Weakly typed initial carries take the body's output dtype (JAX's rule), non-weak."""
    changed = False
    new = list(init_flat)
    if len(init_avals) != len(out_avals):
        return new, False
    for i, (a, b) in enumerate(zip(init_avals, out_avals)):
        if a.weak_type and not _same_type(a, b) and a.shape == b.shape:
            d, _ = dtypes.promote([(a.dtype, True), (b.dtype, b.weak_type)])
            new[i] = _lax._convert(new[i], d, False)
            changed = True
    return new, changed


def _check_carry(
    what: str, arg_name: str, in_tree: PyTreeDef, in_avals: list, out_tree: PyTreeDef, out_avals: list
) -> None:
    if in_tree != out_tree:
        raise TypeError(
            f"{what} function carry input and carry output must have the same pytree structure, but they "
            f"differ:\n\nThe input carry {arg_name} is {_tree_kind(in_tree)} but the corresponding component "
            f"of the carry output is {_tree_kind(out_tree)}, so their Python types differ.\n\nRevise the "
            f"function so that the carry output has the same pytree structure as the carry input."
        )
    paths = _leaf_paths(in_tree)
    for p, a, b in zip(paths, in_avals, out_avals):
        if not _same_type(a, b):
            comp = f"{arg_name}" if p == "" else f"component {arg_name}{p}"
            raise TypeError(
                f"{what} function carry input and carry output must have equal types, but they differ:\n\n"
                f"The input carry {comp} has type {_type_str(a)} but the corresponding output carry component "
                f"has type {_type_str(b)}, {_mismatch_reason(a, b)}.\n\nRevise the function so that all output "
                f"types match the corresponding input types."
            )


def _first_param_name(f, index: int, default: str) -> str:
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return default
    if index < len(params) and params[index].kind in (
        params[index].POSITIONAL_ONLY,
        params[index].POSITIONAL_OR_KEYWORD,
    ):
        return params[index].name
    return default


# --- derived jaxprs: jvp, vmap and the vjp split (cached on the source jaxpr) ------------------


def _jvp_jaxpr(jaxpr: Jaxpr, nz_in: tuple, instantiate: tuple) -> tuple[Jaxpr, tuple]:
    """(primals, nonzero tangents) -> (outs, tangents of nz_out outputs) and nz_out.

    Only floating inputs/outputs carry tangents; instantiate forces a tangent output."""
    key = ("cf_jvp", nz_in, instantiate)
    hit = jaxpr._cache.get(key)
    if hit is not None:
        return hit
    in_avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
    n = len(in_avals)
    t_avals = [a for a, nz in zip(in_avals, nz_in) if nz]
    box = []

    def f(*args):
        it = iter(args[n:])
        ts = [next(it) if nz else Zero(a) for a, nz in zip(in_avals, nz_in)]
        outs, touts = ad.jvp_flat(core.jaxpr_as_fun(jaxpr), list(args[:n]), ts)
        nz_out, tl = [], []
        for t, inst, a in zip(touts, instantiate, out_avals):
            keep = _is_float(a) and (inst or type(t) is not Zero)
            nz_out.append(keep)
            if keep:
                tl.append(_instantiate(t, a))
        box.append(tuple(nz_out))
        return list(outs) + tl

    jj = staging.trace_closed(f, list(in_avals) + t_avals)
    hit = jaxpr._cache[key] = (jj, box[0])
    return hit


def _batch_jaxpr(jaxpr: Jaxpr, size: int, in_b: tuple, instantiate: tuple) -> tuple[Jaxpr, tuple]:
    """vmap of a jaxpr: batched inputs/outputs carry the batch axis first; returns out_batched."""
    axis_name = batching.rule_axis_name()  # collectives inside still see the named axis
    key = ("cf_vmap", size, in_b, instantiate, axis_name)
    hit = jaxpr._cache.get(key)
    if hit is not None:
        return hit
    in_avals = [_batched(a, size) if b else a for a, b in zip(jaxpr.in_avals, in_b)]
    box = []

    def f(*args):
        outs, dims = batching.vmap_flat(
            core.jaxpr_as_fun(jaxpr), size, [0 if b else None for b in in_b], list(args), axis_name
        )
        res, ob = [], []
        for o, d, inst in zip(outs, dims, instantiate):
            if d is not None or inst:
                res.append(batching.move_to(o, d, 0, size))
                ob.append(True)
            else:
                res.append(o)
                ob.append(False)
        box.append(tuple(ob))
        return res

    bj = staging.trace_closed(f, in_avals)
    hit = jaxpr._cache[key] = (bj, box[0])
    return hit


def _vjp_split(jaxpr: Jaxpr, needs: tuple):
    """Joint vjp of jaxpr split into known (forward) and unknown (backward) parts.

    The joint function maps (ins, cts of floating outputs) -> outs + cts of the needed inputs.
    Returns (known, unknown, in_ct_unknown, ct_mask) where known(ins) -> outs + known in_cts +
    residuals, unknown(residuals + cts) -> unknown in_cts, and in_ct_unknown says which needed
    input cotangent comes from which part."""
    key = ("cf_vjp", needs)
    hit = jaxpr._cache.get(key)
    if hit is not None:
        return hit
    in_avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
    n_in, n_out = len(in_avals), len(out_avals)
    ct_mask = tuple(_is_float(a) for a in out_avals)
    ct_avals = [a for a, m in zip(out_avals, ct_mask) if m]
    idx = [i for i, nd in enumerate(needs) if nd]

    def joint(*args):
        xs = list(args[:n_in])
        it = iter(args[n_in:])
        cts = [next(it) if m else Zero(a) for a, m in zip(out_avals, ct_mask)]

        def f(*diff):
            full = list(xs)
            for i, d in zip(idx, diff):
                full[i] = d
            return core.eval_jaxpr(jaxpr, full), None

        outs, backward, _ = ad.vjp_flat(f, [xs[i] for i in idx])
        in_cts = backward(cts)
        return list(outs) + [_instantiate(c, in_avals[i]) for c, i in zip(in_cts, idx)]

    joint_jaxpr = staging.trace_closed(joint, list(in_avals) + ct_avals)
    known, unknown, out_unknown = staging.split_known(joint_jaxpr, [False] * n_in + [True] * len(ct_avals))
    hit = jaxpr._cache[key] = (known, unknown, tuple(out_unknown[n_out:]), ct_mask)
    return hit


def _merge_cts(in_ct_unknown: tuple, known_cts: list, unknown_cts: list) -> list:
    it_k, it_u = iter(known_cts), iter(unknown_cts)
    return [next(it_u) if u else next(it_k) for u in in_ct_unknown]


# --- cond / switch -------------------------------------------------------------------------------


def _cond_abstract(index, *ops, branches):
    if index.shape != () or index.dtype.kind not in "iu":
        raise TypeError(f"cond index must be an integer scalar, got {_type_str(index)}")
    for b in branches:
        if len(b.in_binders) != len(ops) or not all(_same_type(a, o) for a, o in zip(b.in_avals, ops)):
            raise TypeError(
                f"cond branch takes {[_type_str(a) for a in b.in_avals]} but got operands {[_type_str(o) for o in ops]}"
            )
    outs0 = branches[0].out_avals
    for b in branches[1:]:
        if len(b.outs) != len(outs0) or not all(_same_type(a, o) for a, o in zip(b.out_avals, outs0)):
            raise TypeError("cond branches must have equal output types")
    return [_join_avals([b.out_avals[j] for b in branches]) for j in range(len(outs0))]


cond_p.abstract_eval = _cond_abstract


def _trace_branches(branches: Sequence[Callable], ops: list, names: list, what: str) -> tuple[list, list, PyTreeDef]:
    """Trace each branch on the operands; returns (branch jaxprs over all consts + ops, consts, out_tree)."""
    flat_ops, in_tree = tree_flatten(tuple(ops))
    avals = [get_aval(x) for x in flat_ops]
    traced = [_trace(b, in_tree, avals, f"{what} branch") for b in branches]
    t0 = traced[0][2]
    for (_, _, t), name in zip(traced[1:], names[1:]):
        if t != t0:
            raise TypeError(
                f"{what} branch outputs must have the same pytree structure, but they differ:\n\n"
                f"{names[0]} is {_fun_name(branches[0])}\n{names[1]} is {_fun_name(branches[names.index(name)])}\n\n"
                f"{names[0]} output is {_tree_kind(t0)} but {name} output is {_tree_kind(t)}, so their Python types "
                f"differ.\n\nRevise {names[0]} and/or {name} so that they have the same pytree structure."
            )
    outs0 = traced[0][0].out_avals
    paths = _leaf_paths(t0)
    for k, ((j, _, _), name) in enumerate(zip(traced[1:], names[1:]), 1):
        for p, a, b in zip(paths, outs0, j.out_avals):
            if not _same_type(a, b):
                where = "" if p == "" else f" at output path {p}"
                raise TypeError(
                    f"{what} branches must have equal output types but they differ.\n\n"
                    f"{names[0]} is {_fun_name(branches[0])}\n{name} is {_fun_name(branches[k])}\n\n"
                    f"The output of {names[0]}{where} has type {_type_str(a)} but the corresponding output of "
                    f"{name} has type {_type_str(b)}, {_mismatch_reason(a, b)}.\n\n"
                    f"Revise {names[0]} and/or {name} so that all output types match."
                )
    # All branches take the union of every branch's captured values, then the operands.
    all_consts, pos = [], {}
    for _, consts, _ in traced:
        for c in consts:
            if id(c) not in pos:
                pos[id(c)] = len(all_consts)
                all_consts.append(c)
    joined = [_join_avals([j.out_avals[k] for j, _, _ in traced]) for k in range(len(outs0))]
    jaxprs = []
    for j, consts, _ in traced:
        n = len(consts)
        mine = {pos[id(c)]: v for c, v in zip(consts, j.in_binders[:n])}
        binders = [mine.get(i) or Var(get_aval(c)) for i, c in enumerate(all_consts)] + j.in_binders[n:]
        jaxprs.append(_convert_outs(_with_inputs(j, binders), joined))
    return jaxprs, all_consts + flat_ops, t0


def _check_index_type(index, what: str):
    a = get_aval(index)
    if a.shape != ():
        raise TypeError(f"{what} must be a scalar, got {index} of shape {a.shape}.")
    return a


def switch(index, branches: Sequence[Callable], *operands, operand=None) -> Any:
    """Apply branches[clamp(0, index, len(branches) - 1)] to operands (lax.switch)."""
    if operand is not None:
        operands = operands + (operand,)
    branches = tuple(branches)
    if len(branches) == 0:
        raise ValueError("Empty branch sequence")
    for b in branches:
        if not callable(b):
            raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    index = _lift(index)
    a = _check_index_type(index, "Index")
    if a.dtype.kind not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {a.dtype.name}")
    if len(branches) == 1:
        return branches[0](*operands)
    index = _lax.convert_element_type(index, dtypes.int32)
    index = _lax.clamp(0, index, len(branches) - 1)
    names = ["branch 0"] + [f"branch{i}" for i in range(1, len(branches))]
    return _bind_cond(index, branches, operands, names, "switch")


_NO_OPERAND = object()  # cond's operand= default: operand=None passes None to the branches, as in JAX


def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=_NO_OPERAND) -> Any:
    """true_fun(*operands) if pred else false_fun(*operands), staged so it works under jit (lax.cond)."""
    if operand is not _NO_OPERAND:
        if operands:
            raise TypeError("if 'operand' keyword is passed then no positional operands can be passed.")
        operands = (operand,)
    if not (callable(true_fun) and callable(false_fun)):
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    try:
        pred = _lift(pred)
        a = get_aval(pred)
    except TypeError:
        raise TypeError(f"Pred type must be either boolean or number, got {pred}.") from None
    if a.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {a.shape}.")
    if a.dtype.kind not in "biuf":
        raise TypeError(f"Pred type must be either boolean or number, got {a.dtype.name}.")
    if a.dtype.kind != "b":
        pred = _lax.ne(pred, _lax._convert(0, a.dtype, a.weak_type))
    index = _lax.convert_element_type(pred, dtypes.int32)
    return _bind_cond(index, (false_fun, true_fun), operands, ["false_fun", "true_fun"], "cond")


def _bind_cond(index, branches, operands, names, what):
    def run(refs):
        if not refs:
            return _bind_cond_plain(index, branches, operands, names, what)

        def wrap(b):
            def b2(ops, vals):
                with _ref.stand_ins(refs, vals) as cells:
                    out = b(*ops)
                return out, cells.values()

            return b2

        out, vals = _bind_cond_plain(index, [wrap(b) for b in branches], (operands, _ref.read_all(refs)), names, what)
        _ref.write_all(refs, vals)
        return out

    return _ref.threading_refs(run)


def _bind_cond_plain(index, branches, operands, names, what):
    ops = [_lift_tree(o) for o in operands]
    # Report in JAX's order (true_fun first) for cond.
    order = [1, 0] if what == "cond" else list(range(len(branches)))
    flat, in_tree = tree_flatten(tuple(ops))
    key = (what, tuple(branches), in_tree, tuple(get_aval(x) for x in flat))

    def trace():  # the jaxprs and captured constants, not the operands
        js, consts_and_ops, t = _trace_branches([branches[i] for i in order], ops, [names[i] for i in order], what)
        return js, consts_and_ops[: len(consts_and_ops) - len(flat)], t

    jaxprs, consts, out_tree = _memo_trace(branches[0], key, trace, lambda r: r[1])
    flat_ops = consts + flat
    inv = [order.index(i) for i in range(len(branches))]
    outs = cond_p.bind(index, *flat_ops, branches=tuple(jaxprs[i] for i in inv))
    return tree_unflatten(out_tree, outs)


def _lift_tree(x):
    leaves, t = tree_flatten(x)
    return tree_unflatten(t, [_lift(v) for v in leaves])


def _cond_jvp(primals, tangents, *, branches):
    index, *ops = primals
    avals = [get_aval(o) for o in ops]
    nz_in = tuple(type(t) is not Zero and _is_float(a) for t, a in zip(tangents[1:], avals))
    n_out = len(branches[0].outs)
    nz_out = [False] * n_out
    for b in branches:
        _, nzb = _jvp_jaxpr(b, nz_in, (False,) * n_out)
        nz_out = [x or y for x, y in zip(nz_out, nzb)]
    nz_out = tuple(nz_out)
    new = tuple(_jvp_jaxpr(b, nz_in, nz_out)[0] for b in branches)
    ts = [_instantiate(t, a) for t, a, nz in zip(tangents[1:], avals, nz_in) if nz]
    outs = cond_p.bind(index, *ops, *ts, branches=new)
    it = iter(outs[n_out:])
    out_avals = branches[0].out_avals
    return outs[:n_out], [next(it) if nz else Zero(a) for nz, a in zip(nz_out, out_avals)]


def _cond_vjp_jaxprs(branches: tuple, needs: tuple):
    key = ("cf_cond_vjp", branches, needs)
    hit = branches[0]._cache.get(key)
    if hit is not None:
        return hit
    n_out = len(branches[0].outs)
    parts = [_vjp_split(b, needs) for b in branches]
    ct_mask = parts[0][3]
    r_avals = [known.out_avals[n_out:] for known, _, _, _ in parts]
    offsets = [0]
    for r in r_avals:
        offsets.append(offsets[-1] + len(r))
    all_r = [a for r in r_avals for a in r]
    in_avals = branches[0].in_avals
    out_avals = _cond_abstract(ShapedArray((), dtypes.int32), *in_avals, branches=branches)
    ct_avals = [a for a, m in zip(out_avals, ct_mask) if m]
    fwd, bwd = [], []
    for b, (known, unknown, in_ct_unknown, _) in enumerate(parts):
        k = sum(1 for u in in_ct_unknown if not u)

        def f(*ops, known=known, b=b):
            res = core.eval_jaxpr(known, list(ops))
            outs = [_to_type(o, a) for o, a in zip(res[:n_out], out_avals)]
            mine = [_to_type(r, a) for r, a in zip(res[n_out:], r_avals[b])]
            fill = [_zeros(a) for a in all_r]
            fill[offsets[b] : offsets[b + 1]] = mine
            return outs + fill

        def g(*args, unknown=unknown, b=b, k=k, in_ct_unknown=in_ct_unknown):
            rs = list(args[offsets[b] : offsets[b + 1]])
            cts = list(args[len(all_r) :])
            unk = core.eval_jaxpr(unknown, rs[k:] + cts)
            return _merge_cts(in_ct_unknown, rs[:k], unk)

        fwd.append(staging.trace_closed(f, in_avals))
        bwd.append(staging.trace_closed(g, all_r + ct_avals))
    hit = (tuple(fwd), tuple(bwd), len(all_r), ct_mask)
    branches[0]._cache[key] = hit
    return hit


def _cond_vjp(primals, needs, *, branches):
    index, *ops = primals
    avals = branches[0].in_avals
    op_needs = tuple(bool(nd) and _is_float(a) for nd, a in zip(needs[1:], avals))
    n_out = len(branches[0].outs)
    if not any(op_needs):
        outs = cond_p.bind(index, *ops, branches=branches)
        return outs, _no_cts(len(primals))
    fwd, bwd, n_res, ct_mask = _cond_vjp_jaxprs(branches, op_needs)
    res_outs = cond_p.bind(index, *ops, branches=fwd)
    outs, res = res_outs[:n_out], res_outs[n_out:]
    out_avals = [get_aval(o) for o in outs]

    def backward(cts):
        cts = [_instantiate(c, a) for c, a, m in zip(cts, out_avals, ct_mask) if m]
        in_cts = cond_p.bind(index, *res, *cts, branches=bwd)
        it = iter(in_cts)
        return [None] + [next(it) if nd else None for nd in op_needs]

    backward.multiple_results = True
    return outs, backward


def _no_cts(n):
    def backward(cts):
        return [None] * n

    backward.multiple_results = True
    return backward


def _cond_batch(size, vals, dims, *, branches):
    index, *ops = vals
    idx_d, *op_d = dims
    n_out = len(branches[0].outs)
    in_b = tuple(d is not None for d in op_d)
    ops0 = [batching.moveaxis(v, d, 0) if d is not None else v for v, d in zip(ops, op_d)]
    if idx_d is not None:
        # A batched predicate: evaluate every branch and select per example (as JAX does).
        per = [core.eval_jaxpr(_batch_jaxpr(b, size, in_b, (True,) * n_out)[0], ops0) for b in branches]
        idx0 = batching.moveaxis(index, idx_d, 0)
        res = []
        for j in range(n_out):
            cases = [p[j] for p in per]
            shape = get_aval(cases[0]).shape
            which = _lax.broadcast_in_dim(idx0, shape, (0,))
            res.append(bind(_lax.select_n_p, which, *[_lax._as_array(c) for c in cases]))
        return res, [0] * n_out
    out_b = [False] * n_out
    for b in branches:
        _, ob = _batch_jaxpr(b, size, in_b, (False,) * n_out)
        out_b = [x or y for x, y in zip(out_b, ob)]
    out_b = tuple(out_b)
    new = tuple(_batch_jaxpr(b, size, in_b, out_b)[0] for b in branches)
    outs = cond_p.bind(index, *ops0, branches=new)
    return outs, [0 if b else None for b in out_b]


ad.jvp_rules[cond_p] = _cond_jvp
ad.vjp_rules[cond_p] = _cond_vjp
batching.batch_rules[cond_p] = _cond_batch


# --- while_loop ----------------------------------------------------------------------------------


def _while_abstract(*avals, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    carry = avals[cond_nconsts + body_nconsts :]
    outs = body_jaxpr.out_avals
    if len(outs) != len(carry) or not all(_same_type(a, b) for a, b in zip(carry, outs)):
        raise TypeError("while_loop body carry output types must match the carry input types")
    (p,) = cond_jaxpr.out_avals
    if p.shape != () or p.dtype.kind != "b":
        raise TypeError(f"while cond_jaxpr must return a boolean scalar, got {p}")
    return list(outs)


while_p.abstract_eval = _while_abstract


def while_loop(cond_fun: Callable, body_fun: Callable, init_val) -> Any:
    """Repeat val = body_fun(val) while cond_fun(val); the predicate is read on the host each step."""
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: body_fun and cond_fun arguments should be callable.")

    def run(refs):
        if not refs:
            return _while_loop(cond_fun, body_fun, init_val)

        def cond2(carry):
            with _ref.stand_ins(refs, carry[1]):
                return cond_fun(carry[0])

        def body2(carry):
            with _ref.stand_ins(refs, carry[1]) as cells:
                out = body_fun(carry[0])
            return out, cells.values()

        out, vals = _while_loop(cond2, body2, (init_val, _ref.read_all(refs)))
        _ref.write_all(refs, vals)
        return out

    return _ref.threading_refs(run)


def _while_loop(cond_fun: Callable, body_fun: Callable, init_val) -> Any:
    init_flat, in_tree = tree_flatten(init_val)
    init_flat = [_lift(x) for x in init_flat]

    def trace_both(init_flat):
        avals = [get_aval(x) for x in init_flat]
        carry_tree = tree_flatten((tree_unflatten(in_tree, init_flat),))[1]

        def trace():
            cj, cconsts, ctree = _trace(cond_fun, carry_tree, avals, "while_loop cond_fun")
            bj, bconsts, btree = _trace(body_fun, carry_tree, avals, "while_loop body_fun")
            return avals, cj, cconsts, ctree, bj, bconsts, btree

        key = ("while", cond_fun, carry_tree, tuple(avals))
        return _memo_trace(body_fun, key, trace, lambda r: r[2] + r[5])

    avals, cj, cconsts, ctree, bj, bconsts, btree = trace_both(init_flat)
    if btree == in_tree:
        init_flat, changed = _promote_weak_init(init_flat, avals, bj.out_avals[: len(avals)])
        if changed:
            avals, cj, cconsts, ctree, bj, bconsts, btree = trace_both(init_flat)
    pa = cj.out_avals
    if len(pa) != 1 or pa[0].shape != () or pa[0].dtype.kind != "b":
        raise TypeError(f"cond_fun must return a boolean scalar, but got output type(s) {pa}.")
    _check_carry("while_loop body", _first_param_name(body_fun, 0, "carry"), in_tree, avals, btree, bj.out_avals)
    outs = while_p.bind(
        *cconsts,
        *bconsts,
        *init_flat,
        cond_jaxpr=cj,
        body_jaxpr=bj,
        cond_nconsts=len(cconsts),
        body_nconsts=len(bconsts),
    )
    return tree_unflatten(in_tree, outs)


def _carry_fixpoint(fn, start: list) -> list:
    cur = list(start)
    while True:
        new = [a or b for a, b in zip(cur, fn(tuple(cur)))]
        if new == cur:
            return cur
        cur = new


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    avals = [get_aval(x) for x in primals]
    nz = [type(t) is not Zero and _is_float(a) for t, a in zip(tangents, avals)]
    bc_nz, k_nz0 = nz[nc : nc + nb], nz[nc + nb :]
    nk = len(k_nz0)
    k_nz = _carry_fixpoint(lambda k: _jvp_jaxpr(body_jaxpr, tuple(bc_nz) + k, (False,) * nk)[1], k_nz0)
    jj, _ = _jvp_jaxpr(body_jaxpr, tuple(bc_nz + k_nz), tuple(k_nz))
    n_bt, n_kt = sum(bc_nz), sum(k_nz)
    # jj inputs: bconsts, carry, bconst tangents, carry tangents -> bconsts, bconst tangents, carry, carry t.
    order = (
        list(range(nb))
        + list(range(nb + nk, nb + nk + n_bt))
        + list(range(nb, nb + nk))
        + list(range(nb + nk + n_bt, nb + nk + n_bt + n_kt))
    )
    body = _permute(jj, order, list(range(len(jj.outs))))
    k_avals = avals[nc + nb :]
    extra = [Var(a) for a, z in zip(k_avals, k_nz) if z]
    cj = _with_inputs(cond_jaxpr, cond_jaxpr.in_binders + extra)
    bts = [_instantiate(t, a) for t, a, z in zip(tangents[nc : nc + nb], avals[nc : nc + nb], bc_nz) if z]
    kts = [_instantiate(t, a) for t, a, z in zip(tangents[nc + nb :], k_avals, k_nz) if z]
    outs = while_p.bind(
        *primals[:nc],
        *primals[nc : nc + nb],
        *bts,
        *primals[nc + nb :],
        *kts,
        cond_jaxpr=cj,
        body_jaxpr=body,
        cond_nconsts=nc,
        body_nconsts=nb + n_bt,
    )
    it = iter(outs[nk:])
    return outs[:nk], [next(it) if z else Zero(a) for z, a in zip(k_nz, body_jaxpr.out_avals)]


def _while_vjp(primals, needs, **params):
    raise ValueError(
        "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
        "start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
    )


def _while_batch(size, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    nc, nb = cond_nconsts, body_nconsts
    b = [d is not None for d in dims]
    cc_b, bc_b, k_b0 = tuple(b[:nc]), tuple(b[nc : nc + nb]), b[nc + nb :]
    nk = len(k_b0)
    k_b = _carry_fixpoint(lambda k: _batch_jaxpr(body_jaxpr, size, bc_b + k, (False,) * nk)[1], k_b0)
    _, (pred_b,) = _batch_jaxpr(cond_jaxpr, size, cc_b + tuple(k_b), (False,))
    if pred_b:
        k_b = [True] * nk
    k_b = tuple(k_b)
    consts = [batching.moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals[: nc + nb], dims[: nc + nb])]
    carry = [batching.move_to(v, d, 0, size) if kb else v for v, d, kb in zip(vals[nc + nb :], dims[nc + nb :], k_b)]
    bj, _ = _batch_jaxpr(body_jaxpr, size, bc_b + k_b, k_b)
    cj, _ = _batch_jaxpr(cond_jaxpr, size, cc_b + k_b, (False,))
    if not pred_b:
        outs = while_p.bind(*consts, *carry, cond_jaxpr=cj, body_jaxpr=bj, cond_nconsts=nc, body_nconsts=nb)
        return outs, [0 if x else None for x in k_b]
    key = ("cf_while_sel", size, cc_b, bc_b, k_b, body_jaxpr, batching.rule_axis_name())
    hit = cond_jaxpr._cache.get(key)
    if hit is None:

        def cond2(*args):
            (p,) = core.eval_jaxpr(cj, list(args))
            return [_lax.reduce_or(p, (0,))]

        def body2(*args):
            cc, bc, kk = list(args[:nc]), list(args[nc : nc + nb]), list(args[nc + nb :])
            (p,) = core.eval_jaxpr(cj, cc + kk)
            new = core.eval_jaxpr(bj, bc + kk)
            res = []
            for old, nw in zip(kk, new):
                a = get_aval(old)
                which = _lax.broadcast_in_dim(p, a.shape, (0,))
                res.append(bind(_lax.select_n_p, which, old, _to_type(nw, a)))
            return res

        hit = (staging.trace_closed(cond2, cj.in_avals), staging.trace_closed(body2, cj.in_avals[:nc] + bj.in_avals))
        cond_jaxpr._cache[key] = hit
    c2, b2 = hit
    outs = while_p.bind(
        *consts[:nc],
        *consts[:nc],
        *consts[nc:],
        *carry,
        cond_jaxpr=c2,
        body_jaxpr=b2,
        cond_nconsts=nc,
        body_nconsts=nc + nb,
    )
    return outs, [0] * nk


ad.jvp_rules[while_p] = _while_jvp
ad.vjp_rules[while_p] = _while_vjp
batching.batch_rules[while_p] = _while_batch


# --- fori_loop -----------------------------------------------------------------------------------


_FORI_STEPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # body_fun -> its scan step


def _fori_step(body_fun: Callable) -> Callable:
    """The scan step of fori_loop(body_fun), one per body_fun so that its trace is cached (it holds
    body_fun weakly: a strong reference from the value would keep the key alive)."""
    try:
        step = _FORI_STEPS.get(body_fun)
        ref = weakref.ref(body_fun)
    except TypeError:
        step, ref = None, lambda: body_fun
    if step is None:

        def step(c, _):
            i, x = c
            return (_lax.add(i, 1), ref()(i, x)), None

        try:
            _FORI_STEPS[body_fun] = step
        except TypeError:
            pass
    return step


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll: int | bool | None = None) -> Any:
    """Loop body_fun(i, val) for i in [lower, upper). With concrete bounds it is a scan (so reverse-mode
    differentiation works); with traced bounds a while_loop (JAX's rule)."""
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    la, ua = get_aval(lower), get_aval(upper)
    if la.dtype is not ua.dtype:
        # Only a weak (Python) signed integer bound adopts the other bound's signed integer type.
        d = None
        if la.dtype.kind == "i" and ua.dtype.kind == "i":
            if la.weak_type and not ua.weak_type:
                d = ua.dtype
            elif ua.weak_type and not la.weak_type:
                d = la.dtype
        if d is None:
            raise TypeError(
                f"lower and upper arguments to fori_loop must have equal types, got {la.dtype.name} and {ua.dtype.name}"
            )
    try:
        lo, hi = int(lower), int(upper)
    except TypeError:
        use_scan = False
    else:
        use_scan = True
    if use_scan:
        (_, out), _ = scan(
            _fori_step(body_fun),
            (lo, init_val),
            None,
            length=builtins.max(hi - lo, 0),
            unroll=1 if unroll is None else unroll,
        )
        return out
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically known.")
    if la.dtype is not ua.dtype:
        lower = _lax._convert(_lift(lower), d, False) if la.dtype is not d else lower
        upper = _lax._convert(_lift(upper), d, False) if ua.dtype is not d else upper

    def cond_fn(c):
        i, u, _ = c
        return _lax.lt(i, u)

    def body_fn(c):
        i, u, x = c
        return _lax.add(i, 1), u, body_fun(i, x)

    _, _, out = while_loop(cond_fn, body_fn, (_lift(lower), _lift(upper), init_val))
    return out


# --- scan ----------------------------------------------------------------------------------------


def _scan_abstract(*avals, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    if len(avals) != len(jaxpr.in_binders):
        raise TypeError(f"scan got {len(avals)} operands but its body takes {len(jaxpr.in_binders)}")
    for a, b in zip(avals[: nc + nk], jaxpr.in_avals[: nc + nk]):
        if not _same_type(a, b):
            raise TypeError(f"scan operand type {_type_str(a)} does not match the body's {_type_str(b)}")
    for a, b in zip(avals[nc + nk :], jaxpr.in_avals[nc + nk :]):
        if a.shape[1:] != b.shape or a.dtype is not b.dtype or a.shape[0] != length:
            raise TypeError(f"scan xs type {_type_str(a)} does not match length {length} and slice {_type_str(b)}")
    outs = jaxpr.out_avals
    return list(outs[:nk]) + [_batched(a, length) for a in outs[nk:]]


scan_p.abstract_eval = _scan_abstract


def scan(
    f: Callable,
    init,
    xs=None,
    length: int | None = None,
    reverse: bool = False,
    unroll: int | bool = 1,
    _split_transpose: bool = False,
) -> tuple[Any, Any]:
    """Loop carry, y = f(carry, x) over the leading axis of xs, stacking the ys (lax.scan)."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be a callable.")

    def run(refs):
        if not refs:
            return _scan(f, init, xs, length, reverse, unroll)

        def f2(carry, x):
            with _ref.stand_ins(refs, carry[1]) as cells:
                c, y = f(carry[0], x)
            return (c, cells.values()), y

        (c, vals), ys = _scan(f2, (init, _ref.read_all(refs)), xs, length, reverse, unroll)
        _ref.write_all(refs, vals)
        return c, ys

    return _ref.threading_refs(run)


def _scan(f: Callable, init, xs, length: int | None, reverse: bool, unroll: int | bool) -> tuple[Any, Any]:
    xs_flat, xs_tree = tree_flatten(xs)
    xs_flat = [_lift(x) for x in xs_flat]
    lengths = []
    for x in xs_flat:
        a = get_aval(x)
        if a.ndim == 0:
            raise ValueError(f"scan got value with no leading axis to scan over: {_type_str(a)}.")
        lengths.append(a.shape[0])
    if length is not None:
        length = int(core.concrete_or_error(length, "The length argument to scan must be concrete."))
        if any(n != length for n in lengths):
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading axis sizes {lengths}."
            )
    else:
        if not lengths:
            raise ValueError("scan got no values to scan over and `length` not provided.")
        if len(set(lengths)) > 1:
            raise ValueError(
                f"scan got values with different leading axis sizes: {', '.join(str(n) for n in lengths)}."
            )
        length = lengths[0]
    init_flat, init_tree = tree_flatten(init)
    init_flat = [_lift(x) for x in init_flat]
    x_avals = [get_aval(x).update(shape=get_aval(x).shape[1:]) for x in xs_flat]

    def trace_body(init_flat):
        avals = [get_aval(x) for x in init_flat]
        in_tree = tree_flatten((tree_unflatten(init_tree, init_flat), tree_unflatten(xs_tree, xs_flat)))[1]
        key = ("scan", in_tree, tuple(avals), tuple(x_avals))
        return _memo_trace(f, key, lambda: trace(avals, in_tree), lambda r: r[2])

    def trace(avals, in_tree):
        box = []

        def body(c, x):
            out = f(c, x)
            if not (isinstance(out, (tuple, list)) and len(out) == 2):
                _, t = tree_flatten(out)
                raise TypeError(f"scan body output must be a pair, got {t}.")
            c2, y = out
            ct, yt = tree_flatten(c2)[1], tree_flatten(y)[1]
            box.append((ct, yt))
            return out

        j, consts, _ = _trace(body, in_tree, avals + x_avals, "scan body")
        return avals, j, consts, box[0]

    avals, j, consts, (ctree, ytree) = trace_body(init_flat)
    nk = len(avals)
    if ctree == init_tree:
        init_flat, changed = _promote_weak_init(init_flat, avals, j.out_avals[:nk])
        if changed:
            avals, j, consts, (ctree, ytree) = trace_body(init_flat)
    _check_carry("scan body", _first_param_name(f, 0, "carry"), init_tree, avals, ctree, j.out_avals[:nk])
    outs = scan_p.bind(
        *consts,
        *init_flat,
        *xs_flat,
        jaxpr=j,
        length=length,
        reverse=builtins.bool(reverse),
        num_consts=len(consts),
        num_carry=nk,
        unroll=unroll,
    )
    return tree_unflatten(init_tree, outs[:nk]), tree_unflatten(ytree, outs[nk:])


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    n = len(primals)
    ny = len(jaxpr.outs) - nk
    in_avals = jaxpr.in_avals
    nz = [type(t) is not Zero and _is_float(a) for t, a in zip(tangents, in_avals)]
    c_nz, k_nz0, x_nz = tuple(nz[:nc]), nz[nc : nc + nk], tuple(nz[nc + nk :])
    k_nz = tuple(_carry_fixpoint(lambda k: _jvp_jaxpr(jaxpr, c_nz + k + x_nz, (False,) * (nk + ny))[1][:nk], k_nz0))
    jj, nz_out = _jvp_jaxpr(jaxpr, c_nz + k_nz + x_nz, k_nz + (False,) * ny)
    y_nz = nz_out[nk:]
    n_ct, n_kt, n_xt, n_yt = sum(c_nz), sum(k_nz), sum(x_nz), sum(y_nz)
    # jj: [c, k, x, c_t, k_t, x_t] -> [k, y, k_t, y_t]; scan wants [c, c_t, k, k_t, x, x_t] -> [k, k_t, y, y_t].
    base = n
    in_order = (
        list(range(nc))
        + list(range(base, base + n_ct))
        + list(range(nc, nc + nk))
        + list(range(base + n_ct, base + n_ct + n_kt))
        + list(range(nc + nk, n))
        + list(range(base + n_ct + n_kt, base + n_ct + n_kt + n_xt))
    )
    m = nk + ny
    out_order = list(range(nk)) + list(range(m, m + n_kt)) + list(range(nk, m)) + list(range(m + n_kt, m + n_kt + n_yt))
    body = _permute(jj, in_order, out_order)
    avals = [get_aval(p) for p in primals]
    ts = [_instantiate(t, a) if z else None for t, a, z in zip(tangents, avals, c_nz + k_nz + x_nz)]
    cs, ks, xs = primals[:nc], primals[nc : nc + nk], primals[nc + nk :]
    cts = [t for t in ts[:nc] if t is not None]
    kts = [t for t in ts[nc : nc + nk] if t is not None]
    xts = [t for t in ts[nc + nk :] if t is not None]
    outs = scan_p.bind(
        *cs,
        *cts,
        *ks,
        *kts,
        *xs,
        *xts,
        jaxpr=body,
        length=length,
        reverse=reverse,
        num_consts=nc + n_ct,
        num_carry=nk + n_kt,
        unroll=unroll,
    )
    k_out, kt_out = outs[:nk], outs[nk : nk + n_kt]
    y_out, yt_out = outs[nk + n_kt : nk + n_kt + ny], outs[nk + n_kt + ny :]
    out_avals = _scan_abstract(
        *avals, jaxpr=jaxpr, length=length, reverse=reverse, num_consts=nc, num_carry=nk, unroll=unroll
    )
    itk, ity = iter(kt_out), iter(yt_out)
    t_out = [next(itk) if z else Zero(a) for z, a in zip(k_nz, out_avals[:nk])]
    t_out += [next(ity) if z else Zero(a) for z, a in zip(y_nz, out_avals[nk:])]
    return list(k_out) + list(y_out), t_out


def _scan_vjp_jaxprs(jaxpr: Jaxpr, needs: tuple, nc: int, nk: int):
    key = ("cf_scan_vjp", needs, nc, nk)
    hit = jaxpr._cache.get(key)
    if hit is not None:
        return hit
    known, unknown, in_ct_unknown, ct_mask = _vjp_split(jaxpr, needs)
    in_avals, out_avals = jaxpr.in_avals, jaxpr.out_avals
    n_out = len(out_avals)
    k = sum(1 for u in in_ct_unknown if not u)
    r_vars = known.outs[n_out:]
    r_avals = known.out_avals[n_out:]
    const_pos = {v: i for i, v in enumerate(known.in_binders[:nc])}
    kinds, n_stack = [], 0
    for r in r_vars:
        if type(r) is Var and r in const_pos:
            kinds.append(("const", const_pos[r]))
        else:
            kinds.append(("stack", n_stack))
            n_stack += 1
    const_res = sorted({kd[1] for kd in kinds if kd[0] == "const"})
    stack_avals = [a for a, kd in zip(r_avals, kinds) if kd[0] == "stack"]

    def fwd(*args):
        res = core.eval_jaxpr(known, list(args))
        outs = [_to_type(o, a) for o, a in zip(res[:n_out], out_avals)]
        return outs + [_to_type(r, a) for r, a, kd in zip(res[n_out:], r_avals, kinds) if kd[0] == "stack"]

    fwd_body = staging.trace_closed(fwd, in_avals)
    need_c = needs[:nc]
    need_k = needs[nc : nc + nk]
    n_nc, n_nk = sum(need_c), sum(need_k)
    ctk_mask = ct_mask[:nk]
    cty_mask = ct_mask[nk:]
    acc_avals = [a for a, nd in zip(in_avals[:nc], need_c) if nd]
    ctk_avals = [a for a, m in zip(out_avals[:nk], ctk_mask) if m]
    cty_avals = [a for a, m in zip(out_avals[nk:], cty_mask) if m]
    cres_avals = [in_avals[i] for i in const_res]

    def bwd(*args):
        it = iter(args)
        cmap = {i: next(it) for i in const_res}
        acc = [next(it) for _ in acc_avals]
        ctk = [next(it) for _ in ctk_avals]
        rst = [next(it) for _ in stack_avals]
        cty = [next(it) for _ in cty_avals]
        rs = [cmap[kd[1]] if kd[0] == "const" else rst[kd[1]] for kd in kinds]
        unk = core.eval_jaxpr(unknown, rs[k:] + ctk + cty)
        in_cts = _merge_cts(in_ct_unknown, rs[:k], unk)
        c_cts, k_cts, x_cts = in_cts[:n_nc], in_cts[n_nc : n_nc + n_nk], in_cts[n_nc + n_nk :]
        return [_lax.add(a, c) for a, c in zip(acc, c_cts)] + list(k_cts) + list(x_cts)

    bwd_body = staging.trace_closed(bwd, cres_avals + acc_avals + ctk_avals + stack_avals + cty_avals)
    hit = (fwd_body, bwd_body, const_res, len(stack_avals), acc_avals, ct_mask)
    jaxpr._cache[key] = hit
    return hit


def _scan_vjp(primals, needs, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    in_avals = jaxpr.in_avals
    flt = [_is_float(a) for a in in_avals]
    need_c = [bool(needs[i]) and flt[i] for i in range(nc)]
    need_x = [bool(needs[i]) and flt[i] for i in range(nc + nk, len(primals))]
    if not (any(need_c) or any(need_x) or any(bool(needs[i]) and flt[i] for i in range(nc, nc + nk))):
        return scan_p.bind(
            *primals, jaxpr=jaxpr, length=length, reverse=reverse, num_consts=nc, num_carry=nk, unroll=unroll
        ), _no_cts(len(primals))
    need_k = [flt[i] for i in range(nc, nc + nk)]
    body_needs = tuple(need_c + need_k + need_x)
    fwd_body, bwd_body, const_res, n_stack, acc_avals, ct_mask = _scan_vjp_jaxprs(jaxpr, body_needs, nc, nk)
    outs = scan_p.bind(
        *primals, jaxpr=fwd_body, length=length, reverse=reverse, num_consts=nc, num_carry=nk, unroll=unroll
    )
    ny = len(jaxpr.outs) - nk
    carry_out, ys, stacked = outs[:nk], outs[nk : nk + ny], outs[nk + ny :]
    out_avals = [get_aval(o) for o in carry_out + ys]
    consts = primals[:nc]

    def backward(cts):
        ctk = [_instantiate(c, a) for c, a, m in zip(cts[:nk], out_avals[:nk], ct_mask[:nk]) if m]
        cty = [_instantiate(c, a) for c, a, m in zip(cts[nk:], out_avals[nk:], ct_mask[nk:]) if m]
        acc0 = [_zeros(a) for a in acc_avals]
        res = scan_p.bind(
            *[consts[i] for i in const_res],
            *acc0,
            *ctk,
            *stacked,
            *cty,
            jaxpr=bwd_body,
            length=length,
            reverse=not reverse,
            num_consts=len(const_res),
            num_carry=len(acc0) + len(ctk),
            unroll=unroll,
        )
        it = iter(res)
        c_cts = [next(it) if nd else None for nd in need_c]
        k_cts = [next(it) if nd else None for nd in need_k]
        x_cts = [next(it) if nd else None for nd in need_x]
        out = c_cts + k_cts + x_cts
        return [c if needs[i] else None for i, c in enumerate(out)]

    backward.multiple_results = True
    return outs[: nk + ny], backward


def _scan_batch(size, vals, dims, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    nc, nk = num_consts, num_carry
    ny = len(jaxpr.outs) - nk
    b = [d is not None for d in dims]
    c_b, k_b0, x_b = tuple(b[:nc]), b[nc : nc + nk], tuple(b[nc + nk :])
    k_b = tuple(_carry_fixpoint(lambda k: _batch_jaxpr(jaxpr, size, c_b + k + x_b, (False,) * (nk + ny))[1][:nk], k_b0))
    bj, out_b = _batch_jaxpr(jaxpr, size, c_b + k_b + x_b, k_b + (False,) * ny)
    consts = [batching.moveaxis(v, d, 0) if d is not None else v for v, d in zip(vals[:nc], dims[:nc])]
    carry = [
        batching.move_to(v, d, 0, size) if kb else v for v, d, kb in zip(vals[nc : nc + nk], dims[nc : nc + nk], k_b)
    ]
    xs = [batching.moveaxis(v, d, 1) if d is not None else v for v, d in zip(vals[nc + nk :], dims[nc + nk :])]
    outs = scan_p.bind(
        *consts, *carry, *xs, jaxpr=bj, length=length, reverse=reverse, num_consts=nc, num_carry=nk, unroll=unroll
    )
    return outs, [0 if x else None for x in k_b] + [1 if x else None for x in out_b[nk:]]


ad.jvp_rules[scan_p] = _scan_jvp
ad.vjp_rules[scan_p] = _scan_vjp
batching.batch_rules[scan_p] = _scan_batch


# --- map -----------------------------------------------------------------------------------------


def map(f: Callable, xs, *, batch_size: int | None = None) -> Any:
    """Map f over the leading axis of xs sequentially (a scan); batch_size vmaps f over chunks."""
    if not callable(f):
        raise TypeError("lax.map: f argument should be a callable.")
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    flat, tree = tree_flatten(xs)
    flat = [_lift(x) for x in flat]
    if not flat:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    n = get_aval(flat[0]).shape[0]
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise ValueError(f"lax.map batch_size must be positive, got {batch_size}")
    n_full, rem = divmod(n, batch_size)
    outs_main = None
    if n_full:
        main = [
            _lax.reshape(_slice_axis(x, 0, n_full * batch_size, 0), (n_full, batch_size) + get_aval(x).shape[1:])
            for x in flat
        ]
        _, outs_main = scan(lambda _, xb: ((), _vmap_tree(f, tree_unflatten(tree, list(xb)))), (), main)
        outs_main = _tree_map(lambda y: _lax.reshape(y, (n_full * batch_size,) + get_aval(y).shape[2:]), outs_main)
    if not rem:
        return outs_main
    outs_tail = _vmap_tree(f, tree_unflatten(tree, [_slice_axis(x, n_full * batch_size, n, 0) for x in flat]))
    if outs_main is None:
        return outs_tail
    return _tree_map(lambda a, b: _lax.concatenate([a, b], 0), outs_main, outs_tail)


def _tree_map(fn, tree, *rest):
    leaves, t = tree_flatten(tree)
    others = [t.flatten_up_to(r) for r in rest]
    return tree_unflatten(t, [fn(*xs) for xs in zip(leaves, *others)])


def _vmap_tree(f: Callable, xs):
    """vmap of f over the leading axis of every leaf of xs."""
    flat, tree = tree_flatten(xs)
    size = get_aval(flat[0]).shape[0]
    box = []

    def flat_f(*leaves):
        out = f(tree_unflatten(tree, list(leaves)))
        o, t = tree_flatten(out)
        box.append(t)
        return o

    outs, dims = batching.vmap_flat(flat_f, size, [0] * len(flat), flat)
    outs = [batching.move_to(o, d, 0, size) for o, d in zip(outs, dims)]
    return tree_unflatten(box[0], outs)


# --- associative_scan ----------------------------------------------------------------------------


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0) -> Any:
    """Inclusive prefix scan of an associative fn along axis, in O(log n) parallel steps."""
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be a callable.")
    flat, tree = tree_flatten(elems)
    flat = [_lift(x) for x in flat]
    if not flat:
        return elems
    nd = get_aval(flat[0]).ndim
    if not -nd <= axis < nd:
        raise ValueError(f"associative_scan axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    sizes = {get_aval(x).shape[axis] for x in flat}
    if len(sizes) != 1:
        raise ValueError(
            f"Array inputs to associative_scan must have the same first dimension. (saw: "
            f"{[get_aval(x).shape for x in flat]})"
        )
    sizes.pop()
    if reverse:
        flat = [_lax.rev(x, (axis,)) for x in flat]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        o, t = tree_flatten(out)
        if t != tree:
            raise TypeError(
                f"associative_scan fn must return a pytree with the same structure as elems, got {t} for {tree}"
            )
        return [_lift(v) for v in o]

    def sl(x, start, stop, step=1):
        return _slice_axis(x, start, stop, axis, step)

    def interleave(a, b):
        # a has ceil(m/2) entries along axis, b floor(m/2): the result is a0 b0 a1 b1 ... (views only).
        aa = get_aval(a)
        na, nb = aa.shape[axis], get_aval(b).shape[axis]
        if nb < na:
            cfg = [(0, 0, 0)] * aa.ndim
            cfg[axis] = (0, na - nb, 0)
            b = _lax.pad(b, _lax._convert(0, aa.dtype, False), cfg)
        both = _lax.concatenate([_lax.expand_dims(a, (axis + 1,)), _lax.expand_dims(b, (axis + 1,))], axis + 1)
        shape = list(aa.shape)
        shape[axis] = 2 * na
        return sl(_lax.reshape(both, tuple(shape)), 0, na + nb)

    def rec(elems):
        m = get_aval(elems[0]).shape[axis]
        if m < 2:
            return elems
        reduced = combine([sl(x, 0, m - 1, 2) for x in elems], [sl(x, 1, m, 2) for x in elems])
        odd = rec(reduced)
        first = [sl(x, 0, 1) for x in elems]
        if m == 2:
            even = first
        else:
            prev = odd if m % 2 else [sl(x, 0, m // 2 - 1) for x in odd]
            rest = combine(prev, [sl(x, 2, m, 2) for x in elems])
            even = [_lax.concatenate([f, e], axis) for f, e in zip(first, rest)]
        return [interleave(e, o) for e, o in zip(even, odd)]

    out = rec(flat)
    if reverse:
        out = [_lax.rev(x, (axis,)) for x in out]
    return tree_unflatten(tree, out)


def _cumulative_extreme_jvp(prim, combine: Callable):
    """cummax/cummin's JVP as JAX defines it: the JVP of associative_scan(combine), whose tree of
    max/min decides how ties share the tangent (a running extreme's other positions get none)."""

    def jvp(primals, tangents, axis, reverse):
        (x,), (t,) = primals, tangents
        if type(t) is Zero:
            z = bind(prim, x, axis=axis, reverse=reverse)
            return z, Zero(get_aval(z))
        scan = functools.partial(associative_scan, combine, axis=axis, reverse=reverse)
        (z,), (dz,) = ad.jvp_flat(lambda v: [scan(v)], [x], [t])
        return z, dz

    return jvp


ad.jvp_rules[_lax.cummax_p] = _cumulative_extreme_jvp(_lax.cummax_p, _lax.max)
ad.jvp_rules[_lax.cummin_p] = _cumulative_extreme_jvp(_lax.cummin_p, _lax.min)


def optimization_barrier(operand: Any, /) -> Any:
    """Identity on a pytree of arrays (pyjax does not reorder across it; nothing to prevent)."""
    from pyjax.core.pytree import tree_map

    return tree_map(lambda x: x if isinstance(x, core.Tracer) else _arr(x), operand)


def platform_dependent(*args: Any, default: Callable | None = None, **per_platform: Callable) -> Any:
    """Call the function registered for the current default platform (cpu, wasm, webgpu), else default."""
    from pyjax.runtime.device import default_backend

    fn = per_platform.get(default_backend(), default)
    if fn is None:
        raise NotImplementedError(
            f"platform_dependent: no implementation for platform {default_backend()!r} and no default; "
            f"given: {sorted(per_platform)}"
        )
    return fn(*args)


# --- composite ------------------------------------------------------------------------------------


def composite(decomposition: Callable, name: str, version: int = 0) -> Callable:
    """Mark a function as the named composite op `name`: pyjax has no compiler that matches
    composites, so it always runs the decomposition (name, version and attributes are recorded)."""

    @functools.wraps(decomposition)
    def _composite(*args, **kwargs):
        return decomposition(*args, **kwargs)

    _composite.composite_name = name
    _composite.composite_version = version
    return _composite
