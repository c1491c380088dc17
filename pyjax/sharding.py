"""jax.sharding on one device: Mesh, PartitionSpec, NamedSharding and friends.

pyjax runs on one device per platform, so every mesh has size 1 and every sharding is the
identity. The classes exist (with JAX's validation errors) so that code written for JAX's
sharding API runs unchanged; nothing here splits or moves data.
"""

from __future__ import annotations

import enum
import math
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from pyjax.core import hooks as _hooks
from pyjax.core.pytree import tree_flatten, tree_leaves
from pyjax.core.value import ByValue
from pyjax.runtime import device as _devmod
from pyjax.runtime.device import Sharding, SingleDeviceSharding

try:
    import numpy as _np
except ImportError:  # Pyodide without numpy: meshes keep their devices as nested lists
    _np = None

__all__ = [
    "AbstractMesh",
    "AxisType",
    "DuplicateSpecError",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "AbstractDevice",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "make_single_device_sharding",
    "use_abstract_mesh",
    "get_mesh",
    "reshard",
    "set_mesh",
]


class MemorySpace(enum.Enum):
    """Where an array lives (jax.memory.Space): pyjax keeps every array in its device's memory."""

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    __str__ = __repr__


class AxisType(enum.Enum):
    """How a mesh axis is sharded: by the compiler (Auto), in the types (Explicit), or by hand (Manual)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name


class ManualAxisType:
    """Which manual mesh axes a value varies over, is unreduced over or is reduced over (JAX's type of a
    value inside shard_map). Interned, as in JAX: equal sets give the same object."""

    __slots__ = ("varying", "unreduced", "reduced", "__weakref__")
    _interned: dict = {}

    def __new__(cls, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        for other, what in ((unreduced, "unreduced"), (reduced, "reduced")):
            if varying & other:
                raise ValueError(
                    f"varying and {what} cannot have common mesh axes. Got varying={varying} and {what}={other}"
                )
        key = (frozenset(varying), frozenset(unreduced), frozenset(reduced))
        obj = cls._interned.get(key)
        if obj is None:
            obj = object.__new__(cls)
            for name, v in zip(cls.__slots__, key):
                object.__setattr__(obj, name, v)
            cls._interned[key] = obj
        return obj

    def __setattr__(self, name, value):
        raise AttributeError(f"ManualAxisType is immutable: cannot set {name}")

    def __repr__(self) -> str:
        return f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, reduced={self.reduced})"

    def __reduce__(self):
        return _manual_axis_type, (self.varying, self.unreduced, self.reduced)

    def update(self, **kwargs) -> ManualAxisType:
        return ManualAxisType(
            **{"varying": self.varying, "unreduced": self.unreduced, "reduced": self.reduced, **kwargs}
        )

    def to_ct_mat(self) -> ManualAxisType:
        """The type of a cotangent: unreduced and reduced swap."""
        return self.update(unreduced=self.reduced, reduced=self.unreduced)

    @property
    def empty(self) -> bool:
        return self is ManualAxisType()

    def invarying(self, mesh) -> frozenset:
        return frozenset(getattr(mesh, "manual_axes", ())) - self.vur

    @property
    def vur(self) -> frozenset:
        return self.varying | self.unreduced | self.reduced


def _manual_axis_type(varying, unreduced, reduced) -> ManualAxisType:
    return ManualAxisType(varying=varying, unreduced=unreduced, reduced=reduced)


class DuplicateSpecError(Exception):
    """A PartitionSpec uses one mesh axis for more than one array dimension."""


class _Unconstrained:
    def __repr__(self) -> str:
        return "UNCONSTRAINED"


class PartitionSpec(ByValue):
    """Per array dimension, the mesh axis name(s) it is split over (None: not split)."""

    UNCONSTRAINED = _Unconstrained()

    def __init__(self, *partitions: Any, unreduced: Any = frozenset(), reduced: Any = frozenset()):
        self._partitions = tuple(tuple(p) if isinstance(p, list) else p for p in partitions)
        self.unreduced = frozenset(unreduced)
        self.reduced = frozenset(reduced)

    def __len__(self) -> int:
        return len(self._partitions)

    def __iter__(self):
        return iter(self._partitions)

    def __getitem__(self, i):
        return self._partitions[i]

    def count(self, value: Any) -> int:
        """How many dimensions have this entry."""
        return self._partitions.count(value)

    def index(self, value: Any) -> int:
        """The first dimension with this entry."""
        return self._partitions.index(value)

    def update(self, **kwargs: Any) -> PartitionSpec:
        """A copy with partitions/unreduced/reduced replaced."""
        return PartitionSpec(
            *kwargs.get("partitions", self._partitions),
            unreduced=kwargs.get("unreduced", self.unreduced),
            reduced=kwargs.get("reduced", self.reduced),
        )

    def _axis_names(self) -> list:
        out = []
        for p in self._partitions:
            if isinstance(p, tuple):
                out.extend(p)
            elif p is not None and p is not PartitionSpec.UNCONSTRAINED:
                out.append(p)
        return out

    def _key(self):
        return (self._partitions, self.unreduced, self.reduced)

    def __repr__(self):
        parts = [repr(p) for p in self._partitions]
        if len(parts) == 1 and not (self.unreduced or self.reduced):
            parts[0] += ","
        if self.unreduced:
            parts.append(f"unreduced={set(sorted(self.unreduced))!r}")
        if self.reduced:
            parts.append(f"reduced={set(sorted(self.reduced))!r}")
        return f"P({', '.join(parts)})"


P = PartitionSpec


def _nested_shape(devices: Any) -> tuple:
    if _np is not None and isinstance(devices, _np.ndarray):
        return tuple(devices.shape)
    if isinstance(devices, (list, tuple)):
        return (len(devices),) + (_nested_shape(devices[0]) if devices else ())
    return ()


def _flat(devices: Any) -> list:
    if _np is not None and isinstance(devices, _np.ndarray):
        return list(devices.flat)
    if isinstance(devices, (list, tuple)):
        return [d for sub in devices for d in _flat(sub)]
    return [devices]


def _grid(flat: list, shape: tuple) -> Any:
    """flat laid out in shape: a numpy object array where numpy exists, else nested lists."""
    if _np is not None:
        arr = _np.empty(len(flat), dtype=object)
        arr[:] = flat
        return arr.reshape(shape)

    def nest(xs, sh):
        if not sh:
            return xs[0]
        step = math.prod(sh[1:])
        return [nest(xs[i * step : (i + 1) * step], sh[1:]) for i in range(sh[0])]

    return nest(flat, shape)


_mesh_stack: list = []  # meshes entered with `with mesh:` or set with set_mesh


class Mesh(ByValue):
    """A grid of devices with named axes; in pyjax it holds the one device of a platform."""

    def __init__(self, devices: Any, axis_names: str | Sequence[str], axis_types: Any = None):
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        self.axis_names = tuple(axis_names)
        shape = _nested_shape(devices)
        if len(shape) != len(self.axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
                f"argument (`axis_names`), but got devices.ndim == {len(shape)} and "
                f"len(axis_names) == {len(self.axis_names)}."
            )
        self._flat_devices = _flat(devices)
        self.axis_sizes = shape
        if axis_types is None:
            axis_types = (AxisType.Auto,) * len(shape)
        elif isinstance(axis_types, AxisType):
            axis_types = (axis_types,) * len(shape)
        self.axis_types = tuple(axis_types)
        if len(self.axis_types) != len(shape):
            raise ValueError(
                f"Number of axis names should match the number of axis_types. Got axis_names={self.axis_names} "
                f"and axis_types={self.axis_types}"
            )

    devices = property(lambda self: _grid(self._flat_devices, self.axis_sizes))
    device_ids = property(lambda self: _grid([d.id for d in self._flat_devices], self.axis_sizes))
    shape = property(lambda self: OrderedDict(zip(self.axis_names, self.axis_sizes)))
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: math.prod(self.axis_sizes))
    empty = property(lambda self: not self._flat_devices)
    local_devices = property(lambda self: list(self._flat_devices))
    local_mesh = property(lambda self: self)
    abstract_mesh = property(lambda self: AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types))
    is_multi_process = False

    def __enter__(self) -> Mesh:
        _mesh_stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _mesh_stack.pop()

    def _key(self):
        return (self.axis_names, self.axis_sizes, self.axis_types, tuple(id(d) for d in self._flat_devices))

    def __repr__(self):
        types = ", ".join(repr(t) for t in self.axis_types)
        types = f"({types},)" if len(self.axis_types) == 1 else f"({types})"
        return f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, axis_types={types})"

    def __str__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        types = ", ".join(repr(t) for t in self.axis_types)
        types = f"({types},)" if len(self.axis_types) == 1 else f"({types})"
        return f"Mesh({axes}, axis_types={types})"


class AbstractMesh(ByValue):
    """A mesh's shape without devices: axis sizes, names and types (what tracing-time code reads)."""

    def __init__(self, axis_sizes: Sequence[int], axis_names: str | Sequence[str], axis_types: Any = None):
        self.axis_sizes = tuple(int(n) for n in axis_sizes)
        self.axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(f"AbstractMesh: {len(self.axis_sizes)} axis sizes for {len(self.axis_names)} axis names")
        if axis_types is None or isinstance(axis_types, AxisType):
            axis_types = (axis_types or AxisType.Auto,) * len(self.axis_sizes)
        self.axis_types = tuple(axis_types)

    shape = property(lambda self: OrderedDict(zip(self.axis_names, self.axis_sizes)))
    shape_tuple = property(lambda self: tuple(zip(self.axis_names, self.axis_sizes)))
    size = property(lambda self: math.prod(self.axis_sizes))
    empty = property(lambda self: not self.axis_sizes)
    abstract_mesh = property(lambda self: self)

    def _key(self):
        return (self.shape_tuple, self.axis_types)

    def __repr__(self):
        axes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        return f"AbstractMesh({axes}, axis_types=({', '.join(t.name for t in self.axis_types)},))"


def make_mesh(
    axis_shapes: Sequence[int], axis_names: Sequence[str], *, devices: Sequence | None = None, axis_types: Any = None
) -> Mesh:
    """A Mesh of axis_shapes over the default platform's devices (pyjax: their product must be 1)."""
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if devices is None:
        devices = _devmod.devices()
    devices = _flat(devices)
    n = math.prod(axis_shapes)
    if n > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product of mesh_shape {axis_shapes}")
    if n < len(devices):
        raise ValueError(
            f"pyjax meshes must use all {len(devices)} device(s) of the platform; the product of mesh_shape "
            f"{axis_shapes} is {n}"
        )
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(axis_shapes)  # JAX's default for make_mesh
    if isinstance(axis_names, str):
        axis_names = (axis_names,)
    if len(axis_names) != len(axis_shapes):
        raise ValueError(
            "Mesh requires the ndim of its first argument (`devices`) to equal the length of its second "
            f"argument (`axis_names`), but got devices.ndim == {len(axis_shapes)} and "
            f"len(axis_names) == {len(axis_names)}."
        )
    return Mesh(_grid(devices, axis_shapes), axis_names, axis_types=axis_types)


class NamedSharding(ByValue, Sharding):
    """A sharding given by a Mesh and a PartitionSpec naming, per dimension, the mesh axes it is split over."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec, *, memory_kind: str | None = None):
        if not isinstance(spec, PartitionSpec):
            raise TypeError(f"NamedSharding's spec must be a PartitionSpec, got {spec!r} of type {type(spec)}")
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding's mesh must be a Mesh, got {type(mesh)}")
        self.mesh = mesh
        self.spec = spec
        self.memory_kind = memory_kind or "device"
        seen = set()
        for name in spec._axis_names():
            if name not in mesh.axis_names:
                raise ValueError(f"Resource axis: {name} of {spec!r} is not found in mesh: {mesh.axis_names}.")
            if name in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to at most one "
                    f"positional dimension, but {spec!r} has duplicate entries for `{name}`"
                )
            seen.add(name)

    device_set = property(lambda self: set(self.mesh._flat_devices))
    is_fully_replicated = property(
        lambda self: all(s == 1 for s in self.mesh.axis_sizes) or not self.spec._axis_names()
    )

    def with_memory_kind(self, kind: str) -> NamedSharding:
        """A copy in memory kind."""
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def _key(self):
        return (self.mesh, self.spec, self.memory_kind)

    def __repr__(self):
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec!r}, memory_kind={self.memory_kind})"


# --- the mesh in context -------------------------------------------------------------------------


class set_mesh:  # noqa: N801  (JAX's name; usable as a call or a context manager)
    """Make mesh the current mesh now; as a context manager, restore the previous one on exit."""

    def __init__(self, mesh: Mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a Mesh, got {type(mesh)}")
        self.prev = list(_mesh_stack)
        _mesh_stack.append(mesh)
        self.mesh = mesh

    def __enter__(self) -> Mesh:
        return self.mesh

    def __exit__(self, *exc) -> None:
        _mesh_stack[:] = self.prev


def _empty_mesh() -> Mesh:
    m = Mesh.__new__(Mesh)
    m.axis_names, m.axis_sizes, m.axis_types, m._flat_devices = (), (), (), []
    return m


def make_single_device_sharding(device: Any, *, memory_kind: str | None = None) -> SingleDeviceSharding:
    """The sharding that puts a whole array on device."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class use_abstract_mesh(set_mesh):  # noqa: N801  (JAX's name)
    """Make mesh (abstract or concrete) the mesh in context inside the block."""

    def __init__(self, mesh: Any):
        self.prev = list(_mesh_stack)
        _mesh_stack.append(mesh)
        self.mesh = mesh


def _pass_through(kind: str, f: Any, axes: Any) -> Any:
    if f is None:
        return lambda g: _pass_through(kind, g, axes)
    if not callable(f):
        raise TypeError(f"{kind} requires a callable, got {f!r}")
    return f  # one device: computing with the axes Auto or Explicit gives the same arrays


def auto_axes(f: Any = None, /, *, axes: Any = None, out_sharding: Any = None) -> Any:
    """f with the mesh axes `axes` treated as Auto inside (one device: f itself)."""
    return _pass_through("auto_axes", f, axes)


def explicit_axes(f: Any = None, /, *, axes: Any = None, in_sharding: Any = None) -> Any:
    """f with the mesh axes `axes` treated as Explicit inside (one device: f itself)."""
    return _pass_through("explicit_axes", f, axes)


class AbstractDevice(ByValue):
    """A device described without a backend: its kind, core count and platform."""

    def __init__(self, device_kind: str, num_cores: int | None, platform: str):
        self.device_kind, self.num_cores, self.platform = device_kind, num_cores, platform

    def _key(self):
        return (self.device_kind, self.num_cores, self.platform)

    def __repr__(self):
        return (
            f"AbstractDevice(device_kind={self.device_kind!r}, num_cores={self.num_cores}, platform={self.platform!r})"
        )


def get_mesh() -> Mesh:
    """The mesh in context (an empty Mesh when none is set)."""
    return _mesh_stack[-1] if _mesh_stack else _empty_mesh()


def get_abstract_mesh() -> Mesh:
    """The mesh in context; pyjax has no abstract meshes, so it is get_mesh()."""
    return get_mesh()


# --- validation shared by device_put, with_sharding_constraint and jit ------------------------------


def _is_spec_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def resolve(s: Any, what: str, argname: str) -> Sharding:
    """s as a Sharding: a PartitionSpec takes the mesh in context (an error without one)."""
    if isinstance(s, PartitionSpec):
        if not _mesh_stack or _mesh_stack[-1].empty:
            raise RuntimeError(
                f"{what} requires a non-empty mesh in context if you are passing `PartitionSpec`s to {argname}. "
                "You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to "
                f"{argname} and then the mesh context manager is not required."
            )
        return NamedSharding(_mesh_stack[-1], s)
    if isinstance(s, Sharding):
        return s
    raise TypeError(f"{argname} leaf specifications are expected to be PartitionSpec instances or None, but got {s}")


def check_leaf_types(shardings: Any, argname: str) -> None:
    """Every leaf of shardings is a Sharding, a PartitionSpec or None (TypeError otherwise)."""
    for s in tree_leaves(shardings, is_leaf=_is_spec_leaf):
        if not _is_spec_leaf(s):
            raise TypeError(
                f"{argname} leaf specifications are expected to be PartitionSpec instances or None, but got {s}"
            )


def check_rank(s: Sharding, ndim: int, what: str) -> None:
    """A NamedSharding's spec must not be longer than the rank of the value it applies to."""
    if isinstance(s, NamedSharding) and len(s.spec) > ndim:
        raise ValueError(
            f"One of {what} is incompatible with its sharding annotation {s!r}: Sharding {s!r} is only valid "
            f"for values of rank at least {len(s.spec)}, but was applied to a value of rank {ndim}."
        )


def broadcast_prefix(shardings: Any, tree: Any, what: str) -> list:
    """(sharding, leaf) for every leaf of tree, shardings being a tree prefix of it (ValueError if not)."""
    s_leaves, s_tree = tree_flatten(shardings, is_leaf=_is_spec_leaf)
    if s_tree.num_leaves == 1 and s_tree.node_type is None:
        return [(s_leaves[0], x) for x in tree_leaves(tree)]
    try:
        subtrees = s_tree.flatten_up_to(tree)
    except (ValueError, TypeError) as e:
        raise ValueError(
            f"{what} specification must be a tree prefix of the corresponding value; got {s_tree} for {e}"
        ) from None
    return [(s, x) for s, sub in zip(s_leaves, subtrees) for x in tree_leaves(sub)]


def _ndim(x: Any) -> int:
    shape = getattr(x, "shape", None)
    if shape is None:
        aval = getattr(x, "aval", None)
        shape = getattr(aval, "shape", ())
    return len(shape)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """Constrain the sharding of x (a pytree) inside jit; on one device it validates and returns x."""
    for s, leaf in broadcast_prefix(shardings, x, "with_sharding_constraint shardings"):
        if s is None:
            raise ValueError(
                "One of with_sharding_constraint arguments got sharding None which is not allowed. Please only "
                "pass `jax.sharding.Sharding` instances."
            )
        s = resolve(s, "with_sharding_constraint", "shardings")
        if isinstance(s, NamedSharding):
            for name in s.spec._axis_names():
                if s.mesh.shape and s.mesh.axis_types[s.mesh.axis_names.index(name)] is not AxisType.Auto:
                    raise ValueError(
                        "The spec of NamedSharding passed to with_sharding_constraint can only refer to Auto axes "
                        f"of the mesh. Got spec={s.spec!r} and mesh={s.mesh}. You probably meant to use `reshard` "
                        "API?"
                    )
        check_rank(s, _ndim(leaf), "with_sharding_constraint arguments")
    return x


def reshard(xs: Any, out_shardings: Any) -> Any:
    """Reshard xs to out_shardings (Explicit mesh axes); on one device it validates and returns xs."""
    for s, leaf in broadcast_prefix(out_shardings, xs, "reshard out_shardings"):
        if isinstance(s, PartitionSpec) and not _mesh_stack:
            raise ValueError(
                "Using PartitionSpec when you are not under a mesh context is not allowed. Please pass a "
                f"NamedSharding instance or enter into a mesh context via `jax.set_mesh`. Got {s!r}"
            )
        s = resolve(s, "reshard", "out_shardings")
        if isinstance(s, NamedSharding):
            for name in s.spec._axis_names():
                t = s.mesh.axis_types[s.mesh.axis_names.index(name)]
                if t is not AxisType.Explicit:
                    raise ValueError(
                        "PartitionSpec passed to reshard cannot contain axis names that are of type Auto or "
                        f"Manual. Got PartitionSpec: {s.spec!r} with axis name: {name} of type: AxisType.{t.name}."
                    )
        check_rank(s, _ndim(leaf), "reshard arguments")
    return xs


def device_of(s: Sharding):
    """The device a sharding places data on (the one device of its mesh)."""
    devs = list(s.device_set)
    if len(devs) != 1:
        raise ValueError(f"pyjax runs on one device, but {s!r} spans {len(devs)} devices")
    return devs[0]


def _aval_sharding(aval: Any) -> NamedSharding:
    """jax.typeof(x).sharding: pyjax keeps every value whole on one device (the empty mesh, no dimension split)."""
    return NamedSharding(_empty_mesh(), PartitionSpec(*[None] * len(aval.shape)))


_hooks.register(aval_sharding=_aval_sharding)  # read by core.ShapedArray.sharding
