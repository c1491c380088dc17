"""jax.shard_map on one device: the function runs once, on the whole (one-shard) values, with the mesh
axes bound as named axes of size 1, so collectives (psum, all_gather, axis_index, ...) see them.

pyjax has one device per platform, so every mesh axis has size 1 and the one shard is the whole
array. Each manual mesh axis becomes a vmap of size 1 named after it: a value varies along an axis
exactly when it is batched along that vmap, which gives JAX's varying-manual-axes check on outputs
(out_specs that claim replication of a varying value raise JAX's ValueError) for free.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from pyjax.core.core import Tracer, get_aval
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.interpreters import batching
from pyjax.lax import lax
from pyjax.runtime.array import Array
from pyjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec, broadcast_prefix, get_mesh

__all__ = ["Infer", "shard_map", "smap"]


class _InferFromArgs:
    """in_specs default: take each argument's spec from its sharding (Explicit mesh axes only)."""

    def __repr__(self) -> str:
        return "jax.sharding.Infer"


Infer = _InferFromArgs()


def _fun_name(f: Callable) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _pad(spec: PartitionSpec, ndim: int) -> PartitionSpec:
    return PartitionSpec(*spec, *[None] * (ndim - len(spec)))


def _aval_str(x: Any) -> str:
    aval = get_aval(x)
    return f"{aval.dtype.name}[{','.join(str(d) for d in aval.shape)}]"


def _check_spec(spec: Any, x: Any, manual: frozenset, what: str, fname: str, where: str) -> PartitionSpec:
    """A leaf of in_specs/out_specs: a PartitionSpec naming manual axes, no longer than x's rank."""
    if spec is None:
        spec = PartitionSpec()
    if not isinstance(spec, PartitionSpec):
        raise TypeError(
            f"shard_map {what} argument must be a pytree of `jax.sharding.PartitionSpec` instances, but it "
            f"contained {spec!r}"
        )
    for name in spec._axis_names():
        if name not in manual:
            raise ValueError(
                f"shard_map {what} argument must refer to an axis marked as manual ({manual}), but:\n\n"
                f"  {what} refers to {name!r}\n\nCheck the {what} values passed to shard_map."
            )
    nd = get_aval(x).ndim
    if len(spec) > nd:
        kind = "input" if what == "in_specs" else "output"
        raise ValueError(
            f"shard_map applied to the function '{fname}' was given an {what} entry which is too long to be "
            f"compatible with the corresponding {kind} value from the function:\n\n{what} is {spec!r} which "
            f"has length {len(spec)}, but {where} has shape {_aval_str(x)}, which has rank {nd} (and "
            f"{nd} < {len(spec)})\n\nEntries in {what} must be of length no greater than the number of axes "
            f"in the corresponding {kind} value."
        )
    return spec


def _arg_spec(x: Any) -> PartitionSpec | None:
    """The spec x was placed with (device_put with a NamedSharding), None when unknown (a tracer)."""
    if isinstance(x, Tracer):
        return None
    s = getattr(x, "sharding", None)
    nd = get_aval(x).ndim
    return _pad(s.spec, nd) if isinstance(s, NamedSharding) else PartitionSpec(*[None] * nd)


def _in_specs(in_specs: Any, args: tuple, flat: list, mesh: Mesh, manual: frozenset) -> list:
    explicit = [n for n in manual if mesh.axis_types[mesh.axis_names.index(n)] is AxisType.Explicit]
    if in_specs is Infer:
        if not explicit:
            raise TypeError(
                "shard_map in_specs argument must be a pytree of `jax.sharding.PartitionSpec` instances, but it "
                f"was `None` when axis_names={manual} are of type AxisType.Auto"
            )
        return [_arg_spec(x) or PartitionSpec() for x in flat]
    specs = [s for s, _ in broadcast_prefix(in_specs, args, "shard_map in_specs")]
    if explicit:
        for s, x in zip(specs, flat):
            have = _arg_spec(x)
            if isinstance(s, PartitionSpec) and have is not None and _pad(s, len(have)) != have:
                raise ValueError(
                    f"in_specs passed to shard_map: {_pad(s, len(have))!r} does not match the specs of the input: "
                    f"{have!r} for arg: {_aval_str(x)}. `in_specs` is an optional argument so you can omit "
                    "specifying it and shard_map will infer the in_specs from the arguments. If you want to "
                    "reshard your inputs, you can use `jax.reshard` on the arguments and then pass those args to "
                    "shard_map."
                )
    return specs


def _as_value(x: Any) -> Any:
    return x if isinstance(x, (Tracer, Array)) else lax._as_array(x)


def _run(f: Callable, in_tree, names: tuple, xs: list, sets: list, varying: dict, out_box: list) -> list:
    """f on xs under one vmap of size 1 per manual axis, outermost first; records per axis which
    outputs come back batched (varying along it)."""
    level = len(varying)
    if level == len(names):
        leaves, tree = tree_flatten(f(*tree_unflatten(in_tree, xs)))
        out_box.append(tree)
        return [_as_value(v) for v in leaves]
    name = names[level]
    varying[name] = None
    dims = [0 if name in s else None for s in sets]
    outs, odims = batching.vmap_flat(
        lambda *ys: _run(f, in_tree, names, list(ys), sets, varying, out_box), 1, dims, xs, name
    )
    varying[name] = [d is not None for d in odims]
    return [o if d is None else lax.squeeze(o, (d,)) for o, d in zip(outs, odims)]


def _replication_error(fname: str, mesh: Mesh, spec: PartitionSpec, name: str) -> ValueError:
    return ValueError(
        f"shard_map applied to the function '{fname}' was given out_specs which require replication which "
        f"can't be statically inferred given the mesh:\n\nThe mesh given has shape {mesh.axis_sizes} with "
        f"corresponding axis names {mesh.axis_names}.\n\nout_specs is {spec!r} which implies that the "
        f"corresponding output value is replicated across mesh axis {name!r}, but could not infer replication "
        "over any axes\n\nCheck if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider disabling the check by "
        "passing the check_vma=False argument to `jax.shard_map`."
    )


def shard_map(
    f: Callable | None = None,
    /,
    *,
    out_specs: Any,
    in_specs: Any = Infer,
    mesh: Mesh | None = None,
    axis_names: Any = frozenset(),
    check_vma: bool = True,
) -> Callable:
    """Map f over the shards of its arguments on a mesh (JAX's jax.shard_map; one device: one shard).

    Without f, a decorator."""
    if f is None:
        return lambda g: shard_map(
            g, out_specs=out_specs, in_specs=in_specs, mesh=mesh, axis_names=axis_names, check_vma=check_vma
        )
    if not callable(f):
        raise TypeError(f"shard_map requires a callable for its first argument, but got {f!r} of type {type(f)}.")
    fname = _fun_name(f)

    @functools.wraps(f)
    def wrapped(*args):
        m = get_mesh() if mesh is None else mesh
        if not isinstance(m, Mesh) and not hasattr(m, "axis_names"):
            raise TypeError(f"shard_map requires a Mesh for its mesh argument, got {m!r}")
        if m.empty:
            raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to enter into a mesh context")
        mesh_names = frozenset(m.axis_names)
        manual = frozenset(axis_names) or mesh_names
        if not manual <= mesh_names:
            raise ValueError(
                f"jax.shard_map requires axis_names={frozenset(axis_names)} to be a subset of "
                f"mesh.axis_names={mesh_names}"
            )
        names = tuple(n for n in m.axis_names if n in manual)
        big = [n for n in names if m.shape[n] != 1]
        if big:
            raise NotImplementedError(f"pyjax runs on one device: shard_map over mesh axes {big} of size > 1")
        flat, in_tree = tree_flatten(args)
        flat = [_as_value(x) for x in flat]
        specs = _in_specs(in_specs, args, flat, m, manual)
        params = list(getattr(getattr(f, "__code__", None), "co_varnames", ()))
        sets = []
        for i, (s, x) in enumerate(zip(specs, flat)):
            where = f"the passed args[{i}]"
            if i < len(params) and len(flat) == len(args):
                where += f", where args[{i}] is bound to {fname}'s parameter {params[i]!r},"
            s = _check_spec(s, x, manual, "in_specs", fname, where)
            sets.append(set(s._axis_names()))
        xs = []
        for x, s in zip(flat, sets):
            k = sum(1 for n in names if n in s)
            xs.append(lax.reshape(x, (1,) * k + get_aval(x).shape) if k else x)
        varying: dict = {}
        out_box: list = []
        outs = _run(f, in_tree, names, xs, sets, varying, out_box)
        out_tree = out_box[0]
        result = tree_unflatten(out_tree, outs)
        specs = out_specs(result) if callable(out_specs) else out_specs  # (smap: specs from the outputs)
        out_list = broadcast_prefix(specs, result, "shard_map out_specs")
        final = []
        for i, ((s, _), o) in enumerate(zip(out_list, outs)):
            s = _check_spec(s, o, manual, "out_specs", fname, f"{fname}(*args)")
            named = set(s._axis_names())
            for n in names:
                if check_vma and varying[n][i] and n not in named:
                    raise _replication_error(fname, m, s, n)
            if type(o) is Array:
                o = Array(o.aval, o._buf, o._tracker, o._device, o._host)
                o._committed, o._sharding = True, NamedSharding(m, s)
            final.append(o)
        return tree_unflatten(out_tree, final)

    return wrapped


def _axis_spec(axis: Any, ndim: int, name: Any) -> PartitionSpec:
    if axis is None:
        return PartitionSpec()
    axis = axis % ndim if ndim else axis
    return PartitionSpec(*[None] * axis, name)


def _specs_for(axes: Any, tree: Any, name: Any) -> Any:
    """Per leaf of tree, the spec splitting the leaf's axis given by axes (a tree prefix: ints or None)."""
    pairs = broadcast_prefix(axes, tree, "smap axes")
    leaves, t = tree_flatten(tree)
    return tree_unflatten(t, [_axis_spec(a, get_aval(_as_value(x)).ndim, name) for (a, _), x in zip(pairs, leaves)])


def smap(f: Callable | None = None, /, *, in_axes: Any = Infer, out_axes: Any, axis_name: Any) -> Callable:
    """shard_map over the one mesh axis axis_name of the context mesh, with the split axis of each argument
    (in_axes) and output (out_axes) given as an int or None (replicated), as in vmap."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)

    @functools.wraps(f)
    def wrapped(*args):
        if in_axes is Infer:
            in_specs = Infer
        else:
            axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
            in_specs = tuple(_specs_for(a, x, axis_name) for a, x in zip(axes, args))
        out_specs = functools.partial(_specs_for, out_axes, name=axis_name)
        return shard_map(f, in_specs=in_specs, out_specs=out_specs, axis_names={axis_name})(*args)

    return wrapped
