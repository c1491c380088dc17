"""Collectives over named axes (JAX's lax.psum, pmean, pmax, pmin, all_gather, ppermute, psum_scatter,
all_to_all, pswapaxes, axis_index, axis_size, pbroadcast, ragged_all_to_all) for vmap(axis_name=...) and
pmap; psend/precv raise as JAX does off GPU.

pyjax has one device, so every named axis is a vmap axis and a collective over it is a reduction or a
data movement along that batch dimension, done by the BatchTrace of the axis (its rule in
batching.collective_rules, which runs even for unbatched operands). A collective equation evaluated
outside the BatchTrace of its axis therefore has an operand that does not vary along it (rules that
re-vmap sub-jaxprs keep the axis name, so anything batched reaches that trace): its impl applies the
invariant formula (psum: x * n) with the axis size recorded at bind time. ppermute, psum_scatter and
all_to_all give per-member results even for an invariant operand, so they make it batched first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pyjax.core import core, dtypes
from pyjax.core.core import get_aval
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.interpreters import ad, batching
from pyjax.interpreters.batching import BatchTrace, BatchTracer, lookup_axis
from pyjax.lax import lax
from pyjax.lax.decomposed import CallingPrimitive
from pyjax.lax.slicing import dynamic_index_in_dim, dynamic_slice_in_dim, index_in_dim

__all__ = [
    "all_gather",
    "all_to_all",
    "axis_index",
    "axis_size",
    "pcast",
    "pmax",
    "pmean",
    "pmin",
    "ppermute",
    "pshuffle",
    "psum",
    "psum_scatter",
    "pswapaxes",
    "psum_p",
    "pmax_p",
    "pmin_p",
    "all_gather_p",
    "all_to_all_p",
    "ppermute_p",
    "axis_index_p",
    "pbroadcast",
    "psend",
    "precv",
    "ragged_all_to_all",
    "ragged_all_to_all_p",
]

psum_p = core.Primitive("psum")
pmax_p = core.Primitive("pmax")
pmin_p = core.Primitive("pmin")
all_gather_p = core.Primitive("all_gather")
ppermute_p = core.Primitive("ppermute")
psum_scatter_p = core.Primitive("reduce_scatter")
all_to_all_p = core.Primitive("all_to_all")
COLLECTIVES = (psum_p, pmax_p, pmin_p, all_gather_p, ppermute_p, psum_scatter_p, all_to_all_p)


# --- names, routing ----------------------------------------------------------------------------------


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _one_name(axis_name, what: str):
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"pyjax's {what} takes a single axis name, got {axis_name!r}")
    return names[0]


def _no_groups(axis_index_groups) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError("axis_index_groups not supported in vmap collectives. Please open a feature request!")


def _level(x) -> int:
    lv = -1 if core.state.dynamic_trace is None else core.state.dynamic_trace.level
    if isinstance(x, core.Tracer):
        lv = max(lv, x._trace.main.level)
    return lv


def _bind(prim, x, names: tuple, **params):
    """Bind a collective so that the innermost named axis' BatchTrace sees it: an operand from below
    that trace (a constant, an outer value) is handed to it as an unbatched tracer."""
    x = lax._as_array(x)
    axes = []
    for n in names:
        try:
            a = lookup_axis(n)
        except NameError:  # replaying a jaxpr whose axes are gone: the recorded sizes are used
            continue
        if a.main is not None:  # (make_jaxpr's axis_env names have no vmap behind them)
            axes.append(a)
    if axes:
        inner = max(axes, key=lambda a: a.main.level)
        if _level(x) < inner.main.level:
            x = BatchTracer(BatchTrace(inner.main), x, None)
    return prim.bind(x, **params)


def _bind_axis(prim, x, name, size: int, **params):
    """Bind a collective over the one named axis `name` of `size` members."""
    return _bind(prim, x, (name,), axis_name=(name,), axis_size=size, **params)


def _check_split(what: str, n: int, size: int, tiled: bool, untiled_note: str = "") -> None:
    """The dimension split over the members (length n) holds a multiple of `size` (tiled) or exactly `size`."""
    if tiled and n % size:
        raise ValueError(f"{what} ({n}) must be divisible by the axis size ({size})")
    if not tiled and n != size:
        raise ValueError(f"{what} ({n}) must equal the axis size ({size}){untiled_note}")


def _varying(x, axis: batching.AxisData):
    """x made batched along axis when a staging trace sits above it (its value may be invariant)."""
    if axis.main is None or _level(x) <= axis.main.level:
        return x
    with core.new_base_main():
        which = lax.broadcast_in_dim(lax.full((), True, dtypes.bool_), (axis.size,), ())
    which = BatchTracer(BatchTrace(axis.main), which, 0)
    return lax.select_n(which, x, x)


# --- invariant (unbatched) formulas and batched rules -------------------------------------------------


def _times(x, n: int):
    return x * n  # a weak Python int keeps x's dtype


def _move(x, src: int, dst: int):
    return batching.moveaxis(x, src, dst)


def _gather_stack(x, dim: int, tiled: bool):
    """(n, ...) -> the stack along dim (or concatenation when tiled)."""
    y = _move(x, 0, dim)
    if not tiled:
        return y
    s = get_aval(y).shape
    return lax.reshape(y, s[:dim] + (s[dim] * s[dim + 1],) + s[dim + 2 :])


def _bcast0(x, n: int):
    a = get_aval(x)
    return lax.broadcast_in_dim(x, (n,) + a.shape, tuple(range(1, a.ndim + 1)))


def _ppermute_batched(x0, perm: tuple, n: int):
    """Member dst gets member src's value; members no pair sends to get zeros. x0: (n, ...)."""
    src: list = [None] * n
    for s, d in perm:
        src[d] = s
    a = get_aval(x0)
    rest = a.shape[1:]
    zero = lax.full((1,) + rest, 0, a.dtype)
    rows = [zero if s is None else lax.slice(x0, (s,) + (0,) * len(rest), (s + 1,) + rest) for s in src]
    return rows[0] if n == 1 else lax.concatenate(rows, 0)


def _scatter_split(s, dim: int, n: int, tiled: bool):
    """psum_scatter: the summed value s, split along dim into the member's share (batch dim = dim)."""
    shape = get_aval(s).shape
    if tiled:
        s = lax.reshape(s, shape[:dim] + (n, shape[dim] // n) + shape[dim + 1 :])
    return s, dim


def _a2a_batched(x0, split: int, concat: int, n: int, tiled: bool):
    """all_to_all on (n, ...): member j receives chunk j of every member, stacked along concat."""
    if tiled:
        s = get_aval(x0).shape
        x0 = lax.reshape(x0, s[: 1 + split] + (n, s[1 + split] // n) + s[2 + split :])
    y = _move(x0, 1 + split, 0)  # (dst j, src i, rest)
    y = _move(y, 1, 1 + concat)
    if tiled:
        s = get_aval(y).shape
        c = 1 + concat
        y = lax.reshape(y, s[:c] + (s[c] * s[c + 1],) + s[c + 2 :])
    return y


def _reduce_rule(prim, reduce, invariant):
    def rule(axis, vals, dims, *, axes, axis_sizes, axis_index_groups=None):
        (x,), (d,) = vals, dims
        if axis.name not in axes:  # another axis' collective: per member, along our batch dim
            return prim.bind(x, axes=axes, axis_sizes=axis_sizes, axis_index_groups=None), d
        x = invariant(x, axis.size) if d is None else reduce(x, (d,))
        rest = [(a, s) for a, s in zip(axes, axis_sizes) if a != axis.name]
        if rest:
            names, sizes = tuple(a for a, _ in rest), tuple(s for _, s in rest)
            x = _bind(prim, x, names, axes=names, axis_sizes=sizes, axis_index_groups=None)
        return x, None

    return rule


def _reduce_impl(invariant):
    def impl(x, *, axes, axis_sizes, axis_index_groups=None):
        return invariant(x, math.prod(axis_sizes))

    return impl


for _p, _red, _inv in (
    (psum_p, lax.reduce_sum, _times),
    (pmax_p, lax.reduce_max, lambda x, n: x),
    (pmin_p, lax.reduce_min, lambda x, n: x),
):
    _p.def_abstract_eval(lambda a, **_: a)
    _p.def_impl(_reduce_impl(_inv))
    batching.collective_rules[_p] = _reduce_rule(_p, _red, _inv)


def _single_rule(prim, batched):
    """Rule for a one-name collective: batched(x0 with the batch axis first, n, **params) -> (out, dim)."""

    def rule(axis, vals, dims, *, axis_name, axis_size, **params):
        (x,), (d,) = vals, dims
        if axis.name != axis_name[0]:
            return prim.bind(x, axis_name=axis_name, axis_size=axis_size, **params), d
        x0 = _bcast0(x, axis.size) if d is None else _move(x, d, 0)
        return batched(x0, axis.size, **params)

    return rule


def _invariant_impl(prim, invariant):
    def impl(x, *, axis_name, axis_size, **params):
        out = invariant(x, axis_size, **params)
        if out is None:
            raise NotImplementedError(
                f"pyjax: {prim.name} over axis {axis_name[0]!r} of a value that does not vary along it, "
                "outside the vmap of that axis; pass a value computed from the mapped arguments"
            )
        return out

    return impl


# all_gather
def _ag_abstract(a, *, axis_name, axis_size, all_gather_dimension, tiled, axis_index_groups=None):
    dim = all_gather_dimension
    if tiled:
        return a.update(shape=a.shape[:dim] + (a.shape[dim] * axis_size,) + a.shape[dim + 1 :])
    return a.update(shape=a.shape[:dim] + (axis_size,) + a.shape[dim:])


def _ag_batched(x0, n, *, all_gather_dimension, tiled, axis_index_groups=None):
    return _gather_stack(x0, all_gather_dimension, tiled), None


all_gather_p.def_abstract_eval(_ag_abstract)


def _ag_invariant(x, n, *, all_gather_dimension, tiled, axis_index_groups=None):
    return _gather_stack(_bcast0(x, n), all_gather_dimension, tiled)


all_gather_p.def_impl(_invariant_impl(all_gather_p, _ag_invariant))
batching.collective_rules[all_gather_p] = _single_rule(all_gather_p, _ag_batched)


# ppermute
def _pp_batched(x0, n, *, perm):
    return _ppermute_batched(x0, perm, n), 0


def _pp_invariant(x, n, *, perm):
    return x if sorted(d for _, d in perm) == list(range(n)) else None


ppermute_p.def_abstract_eval(lambda a, **_: a)
ppermute_p.def_impl(_invariant_impl(ppermute_p, _pp_invariant))
batching.collective_rules[ppermute_p] = _single_rule(ppermute_p, _pp_batched)


# psum_scatter
def _ps_abstract(a, *, axis_name, axis_size, scatter_dimension, tiled, axis_index_groups=None):
    dim = scatter_dimension
    if tiled:
        return a.update(shape=a.shape[:dim] + (a.shape[dim] // axis_size,) + a.shape[dim + 1 :])
    return a.update(shape=a.shape[:dim] + a.shape[dim + 1 :])


def _ps_batched(x0, n, *, scatter_dimension, tiled, axis_index_groups=None):
    return _scatter_split(lax.reduce_sum(x0, (0,)), scatter_dimension, n, tiled)


psum_scatter_p.def_abstract_eval(_ps_abstract)
psum_scatter_p.def_impl(_invariant_impl(psum_scatter_p, lambda x, n, **_: None))
batching.collective_rules[psum_scatter_p] = _single_rule(psum_scatter_p, _ps_batched)


# all_to_all
def _a2a_abstract(a, *, axis_name, axis_size, split_axis, concat_axis, tiled, axis_index_groups=None):
    s = list(a.shape)
    if tiled:
        s[split_axis] //= axis_size
        s[concat_axis] *= axis_size
        return a.update(shape=tuple(s))
    del s[split_axis]
    s.insert(concat_axis, axis_size)
    return a.update(shape=tuple(s))


def _a2a_rule_batched(x0, n, *, split_axis, concat_axis, tiled, axis_index_groups=None):
    return _a2a_batched(x0, split_axis, concat_axis, n, tiled), 0


all_to_all_p.def_abstract_eval(_a2a_abstract)
all_to_all_p.def_impl(_invariant_impl(all_to_all_p, lambda x, n, **_: None))
batching.collective_rules[all_to_all_p] = _single_rule(all_to_all_p, _a2a_rule_batched)


# --- autodiff: the linear collectives transpose into each other (pmax/pmin have no rule, as in JAX) ----


def _linear(prim, transpose):
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        names = params.get("axes", params.get("axis_name"))
        return prim.bind(x, **params), _bind(prim, ad.instantiate(t), names, **params)

    def vjp(primals, needs, **params):
        (x,) = primals
        return prim.bind(x, **params), lambda ct: [transpose(ad.instantiate(ct), **params)]

    ad.jvp_rules[prim] = jvp
    ad.vjp_rules[prim] = vjp


def _transpose_as(prim, renames: dict):
    """A transpose that binds `prim` on the cotangent with the primal's parameters, keys renamed
    (old -> new); groups are not carried over."""

    def transpose(ct, **params):
        q = {renames.get(k, k): v for k, v in params.items()}
        q["axis_index_groups"] = None
        return _bind(prim, ct, params["axis_name"], **q)

    return transpose


_linear(psum_p, lambda ct, **p: _bind(psum_p, ct, p["axes"], **p))
_linear(all_gather_p, _transpose_as(psum_scatter_p, {"all_gather_dimension": "scatter_dimension"}))
_linear(psum_scatter_p, _transpose_as(all_gather_p, {"scatter_dimension": "all_gather_dimension"}))
_linear(
    ppermute_p,
    lambda ct, *, axis_name, axis_size, perm: _bind(
        ppermute_p, ct, axis_name, axis_name=axis_name, axis_size=axis_size, perm=tuple((d, s) for s, d in perm)
    ),
)
_linear(all_to_all_p, _transpose_as(all_to_all_p, {"split_axis": "concat_axis", "concat_axis": "split_axis"}))


# --- public API -----------------------------------------------------------------------------------


def _tree_apply(fn, x):
    leaves, tree = tree_flatten(x)
    return tree_unflatten(tree, [fn(v) for v in leaves])


def _reduce_api(prim, x, axis_name, axis_index_groups):
    _no_groups(axis_index_groups)
    names = _names(axis_name)
    sizes = tuple(lookup_axis(n).size for n in names)

    def one(v):
        return _bind(prim, v, names, axes=names, axis_sizes=sizes, axis_index_groups=None)

    return _tree_apply(one, x)


def psum(x: Any, axis_name, *, axis_index_groups=None) -> Any:
    """Sum x over the named mapped axis (or tuple of axes); every member gets the total."""
    return _reduce_api(psum_p, x, axis_name, axis_index_groups)


def pmax(x: Any, axis_name, *, axis_index_groups=None) -> Any:
    """Maximum of x over the named mapped axis (or axes)."""
    return _reduce_api(pmax_p, x, axis_name, axis_index_groups)


def pmin(x: Any, axis_name, *, axis_index_groups=None) -> Any:
    """Minimum of x over the named mapped axis (or axes)."""
    return _reduce_api(pmin_p, x, axis_name, axis_index_groups)


def pmean(x: Any, axis_name, *, axis_index_groups=None) -> Any:
    """Mean of x over the named mapped axis (or axes): psum divided by the number of members."""
    n = axis_size(axis_name)
    return _tree_apply(lambda v: psum(v, axis_name, axis_index_groups=axis_index_groups) / n, x)


def axis_size(axis_name) -> int:
    """The size of the named mapped axis (the product over a tuple of names)."""
    return math.prod(lookup_axis(n).size for n in _names(axis_name))


def axis_index(axis_name) -> Any:
    """This member's int32 index along the named mapped axis (row-major over a tuple of names)."""
    out = None
    for n in _names(axis_name):
        a = lookup_axis(n)
        if a.main is None:
            raise NotImplementedError("pyjax: axis_index under make_jaxpr(axis_env=...) is not supported")
        with core.new_base_main():  # a concrete iota: it is this axis' batched value, not staged above
            iota = lax.iota(dtypes.int32, a.size)
        idx = BatchTracer(BatchTrace(a.main), iota, 0)
        out = idx if out is None else out * a.size + idx
    return out


def _axis_and_size(axis_name, what: str):
    name = _one_name(axis_name, what)
    return name, lookup_axis(name)


def all_gather(x: Any, axis_name, *, axis_index_groups=None, axis: int = 0, tiled: bool = False) -> Any:
    """Every member gets the stack (or, tiled, the concatenation) along `axis` of all members' x."""
    _no_groups(axis_index_groups)
    name, a = _axis_and_size(axis_name, "all_gather")

    def one(v):
        v = lax._as_array(v)
        nd = get_aval(v).ndim
        limit = nd if tiled else nd + 1
        if not -limit <= axis < limit:
            raise ValueError(f"all_gather axis {axis} is out of bounds for an operand of rank {nd}")
        if tiled and nd == 0:
            raise ValueError("all_gather with tiled=True requires an operand of rank >= 1")
        return _bind_axis(
            all_gather_p, v, name, a.size, all_gather_dimension=axis % limit, tiled=bool(tiled), axis_index_groups=None
        )

    return _tree_apply(one, x)


def ppermute(x: Any, axis_name, perm: Sequence[tuple[int, int]]) -> Any:
    """Send member src's x to member dst for each (src, dst) in perm; members nobody sends to get zeros."""
    name, a = _axis_and_size(axis_name, "ppermute")
    perm = tuple((int(s), int(d)) for s, d in perm)
    srcs, dsts = [s for s, _ in perm], [d for _, d in perm]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
    if any(not 0 <= i < a.size for i in srcs + dsts):
        raise ValueError(f"ppermute permutation indices must be in [0, {a.size}), got {perm}.")
    return _tree_apply(
        lambda v: _bind_axis(ppermute_p, _varying(lax._as_array(v), a), name, a.size, perm=perm),
        x,
    )


def pshuffle(x: Any, axis_name, perm: Sequence[int]) -> Any:
    """Member i gets the x of member perm[i]."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def psum_scatter(x: Any, axis_name, *, scatter_dimension: int = 0, axis_index_groups=None, tiled: bool = False) -> Any:
    """psum, then member i keeps the i-th block of the result along scatter_dimension."""
    _no_groups(axis_index_groups)
    name, a = _axis_and_size(axis_name, "psum_scatter")

    def one(v):
        v = lax._as_array(v)
        shape = get_aval(v).shape
        if not -len(shape) <= scatter_dimension < len(shape):
            raise ValueError(f"psum_scatter scatter_dimension {scatter_dimension} is out of bounds for shape {shape}")
        dim = scatter_dimension % len(shape)
        _check_split("psum_scatter: the scatter dimension", shape[dim], a.size, tiled, " when tiled=False")
        return _bind_axis(
            psum_scatter_p,
            _varying(v, a),
            name,
            a.size,
            scatter_dimension=dim,
            tiled=bool(tiled),
            axis_index_groups=None,
        )

    return _tree_apply(one, x)


def all_to_all(
    x: Any, axis_name, split_axis: int, concat_axis: int, *, axis_index_groups=None, tiled: bool = False
) -> Any:
    """Split x along split_axis into one chunk per member; member j receives chunk j of every member,
    stacked (or, tiled, concatenated) along concat_axis."""
    _no_groups(axis_index_groups)
    name, a = _axis_and_size(axis_name, "all_to_all")

    def one(v):
        v = lax._as_array(v)
        shape = get_aval(v).shape
        nd = len(shape)
        if not (-nd <= split_axis < nd and -nd <= concat_axis < nd):
            raise ValueError(f"all_to_all: split_axis/concat_axis out of bounds for shape {shape}")
        s, c = split_axis % nd, concat_axis % nd
        _check_split("all_to_all: the split axis", shape[s], a.size, tiled)
        return _bind_axis(
            all_to_all_p,
            _varying(v, a),
            name,
            a.size,
            split_axis=s,
            concat_axis=c,
            tiled=bool(tiled),
            axis_index_groups=None,
        )

    return _tree_apply(one, x)


def pswapaxes(x: Any, axis_name, axis: int, *, axis_index_groups=None) -> Any:
    """Swap the named mapped axis with positional axis `axis` of x (an all_to_all)."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


_PCAST_TO = {"varying", "reduced", "unreduced"}


def pcast(x: Any, axis_name, *, to: str) -> Any:
    """Cast x's varying-manual-axes type under shard_map: to='varying' makes an invariant x vary along the
    named axes (the values are unchanged); 'reduced'/'unreduced' belong to Explicit meshes pyjax lacks."""
    if to not in _PCAST_TO:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: {_PCAST_TO}")
    if to != "varying":
        raise NotImplementedError(f"pyjax: pcast(to={to!r}) needs Explicit-mesh reductions, which one device lacks")
    names = _names(axis_name)
    try:
        axes = [lookup_axis(n) for n in names]
    except NameError:
        raise ValueError("pvary should be called under jax.shard_map.") from None

    def one(v):
        v = lax._as_array(v)
        for a in axes:
            if a.main is None:
                continue
            if isinstance(v, BatchTracer) and v._trace.main is a.main and v.batch_dim is not None:
                raise ValueError("Unsupported pcast from=varying, to='varying'")
            with core.new_base_main():
                which = lax.broadcast_in_dim(lax.full((), True, dtypes.bool_), (a.size,), ())
            v = lax.select_n(BatchTracer(BatchTrace(a.main), which, 0), v, v)
        return v

    return _tree_apply(one, x)


def host_runner(prim):
    """A runner for compiled programs (runtime HostStep): the invariant formula on concrete arrays."""
    return lambda arrays, **params: [prim.impl(*arrays, **params)]


axis_index_p = CallingPrimitive("axis_index", lambda *, axis_name, **_: axis_index(axis_name))


def pbroadcast(x: Any, axis_name, source: int) -> Any:
    """Every member gets member `source`'s x."""
    name, a = _axis_and_size(axis_name, "pbroadcast")
    source = int(source)
    if not 0 <= source < a.size:
        raise ValueError(f"pbroadcast source {source} is out of range for axis {name!r} of size {a.size}")
    return _tree_apply(lambda v: index_in_dim(all_gather(v, name), source, 0, keepdims=False), x)


def psend(x: Any, axis_name, perm) -> Any:
    """JAX implements psend on GPU only; pyjax (one device, no GPU collectives) not at all."""
    raise NotImplementedError("psend is currently only implemented on GPU (JAX); pyjax does not implement it")


def precv(token: Any, out_shape: Any, axis_name, perm) -> Any:
    """JAX implements precv on GPU only; pyjax (one device, no GPU collectives) not at all."""
    raise NotImplementedError("precv is currently only implemented on GPU (JAX); pyjax does not implement it")


def ragged_all_to_all(
    operand, output, input_offsets, send_sizes, output_offsets, recv_sizes, *, axis_name, axis_index_groups=None
):
    """Each member sends slices operand[input_offsets[i] : + send_sizes[i]] to member i // (N / axis size),
    which writes them into its `output` at the sender's output_offsets[i] (JAX's semantics; JAX's CPU
    backend cannot run it, pyjax composes it from all_gather and masked windows)."""
    _no_groups(axis_index_groups)
    name, a = _axis_and_size(axis_name, "ragged_all_to_all")
    operand, output = lax._as_array(operand), lax._as_array(output)
    n_slices = get_aval(input_offsets).shape[0]
    per, left = divmod(n_slices, a.size)
    if left:
        raise ValueError(f"ragged_all_to_all: {n_slices} offsets do not divide among the {a.size} members of {name!r}")
    rows, m = get_aval(operand).shape[0], get_aval(output).shape[0]
    i32 = dtypes.int32
    me = lax.mul(lax.convert_element_type(axis_index(name), i32), lax.full((), per, i32))
    ops, in_offs, out_offs = (all_gather(v, name) for v in (operand, input_offsets, output_offsets))
    zeros = [(m, m, 0)] + [(0, 0, 0)] * (len(get_aval(operand).shape) - 1)
    row = lax.broadcasted_iota(i32, get_aval(output).shape, 0)
    result = output
    for k in range(a.size):
        padded = lax.pad(index_in_dim(ops, k, 0, keepdims=False), lax.full((), 0, get_aval(operand).dtype), zeros)
        for s in range(per):
            slot = lax.add(me, lax.full((), s, i32))
            src = lax.convert_element_type(
                dynamic_index_in_dim(index_in_dim(in_offs, k, 0, False), slot, 0, False), i32
            )
            dst = lax.convert_element_type(
                dynamic_index_in_dim(index_in_dim(out_offs, k, 0, False), slot, 0, False), i32
            )
            size = lax.convert_element_type(dynamic_index_in_dim(recv_sizes, k * per + s, 0, False), i32)
            start = lax.clamp(
                lax.full((), 0, i32), lax.add(lax.sub(src, dst), lax.full((), m, i32)), lax.full((), rows + m, i32)
            )
            window = dynamic_slice_in_dim(padded, start, m, 0)
            inside = lax.bitwise_and(lax.ge(row, dst), lax.lt(row, lax.add(dst, size)))
            result = lax.select(inside, window, result)
    return result


ragged_all_to_all_p = CallingPrimitive(  # its collectives need the named axes: binding is calling
    "ragged_all_to_all",
    lambda *args, axis_name, axis_index_groups=None: ragged_all_to_all(
        *args, axis_name=axis_name, axis_index_groups=axis_index_groups
    ),
)
