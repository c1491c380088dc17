"""jax.export for pyjax: export(jit(f))(*arg_specs) -> Exported, with call, in/out avals and trees, and
serialize/deserialize of pyjax's own format (not StableHLO: pyjax has no XLA).

The exported program is f's jaxpr with call-like equations (jit, custom_jvp/custom_vjp calls) inlined, so
it holds only primitives and data: its serialized form (JSON with arrays as base64) names each primitive
and spells out its parameters, and deserialize rebuilds the jaxpr from lax's primitives. Exported.call
runs that jaxpr under jit (grad, vmap and jit of it work, as for any pyjax function). Shape polymorphism
(symbolic_shape) and multi-device exports are not supported.
"""

from __future__ import annotations

import base64
import dataclasses
import enum
import importlib
import json
from collections.abc import Callable, Sequence
from typing import Any

from pyjax import api
from pyjax.core import core
from pyjax.core import dtypes as _dtypes
from pyjax.core.core import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, ShapedArray, Var
from pyjax.core.pytree import PyTreeDef, tree_flatten, tree_structure, tree_unflatten
from pyjax.interpreters import staging
from pyjax.runtime.device import default_backend

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "SymbolicScope",
    "is_symbolic_dim",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "symbolic_args_specs",
    "default_export_platform",
    "deserialize",
    "export",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "symbolic_shape",
]

minimum_supported_calling_convention_version = 1
maximum_supported_calling_convention_version = 1
_FORMAT = "pyjax.export/1"
_INLINE = {
    "pjit": "jaxpr",
    "custom_jvp_call": "call_jaxpr",
    "custom_vjp_call": "call_jaxpr",
    "custom_vmap_call": "call_jaxpr",
}


class DisabledSafetyCheck:
    """A safety check to skip when calling an Exported (pyjax runs no such checks)."""

    def __init__(self, name: str):
        self._name = name

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        return cls(f"custom_call:{target_name}")

    def __eq__(self, other):
        return isinstance(other, DisabledSafetyCheck) and self._name == other._name

    def __hash__(self):
        return hash(self._name)


def default_export_platform() -> str:
    """The platform export targets by default: the default backend's."""
    return default_backend()


_SHAPE_POLY = "pyjax.export: shape polymorphism (symbolic dimensions) is not supported"


def symbolic_shape(*args: Any, **kwargs: Any):
    """Symbolic dimensions: not supported (pyjax exports concrete shapes)."""
    raise NotImplementedError(_SHAPE_POLY)


def symbolic_args_specs(args: Any, shapes_specs: Any, constraints: Sequence[str] = (), scope: Any = None):
    """Argument specs with symbolic dimensions: not supported (pyjax exports concrete shapes)."""
    raise NotImplementedError(_SHAPE_POLY)


class SymbolicScope:
    """A scope for symbolic dimensions: not supported (pyjax exports concrete shapes)."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError(_SHAPE_POLY)


def is_symbolic_dim(p: Any) -> bool:
    """Whether p is a symbolic dimension (never, in pyjax)."""
    return False


_serialized_names: dict = {}  # pytree node types registered for serialization -> their names


def register_pytree_node_serialization(
    nodetype: type,
    *,
    serialized_name: str,
    serialize_auxdata: Callable,
    deserialize_auxdata: Callable,
    from_children: Callable | None = None,
) -> type:
    """Accept nodetype for serialization (pyjax's format names node types by module and class already)."""
    if serialized_name in _serialized_names.values():
        raise ValueError(f"Duplicate serialization registration for serialized_name {serialized_name!r}")
    _serialized_names[nodetype] = serialized_name
    return nodetype


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Accept a namedtuple type for serialization."""
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=None, deserialize_auxdata=None
    )


# --- a flat jaxpr: call-like equations inlined, sub-jaxprs flattened -------------------------------


def _flatten_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    def run(*args):
        return _inline_eval(jaxpr, list(args))

    flat, consts = staging.trace_to_jaxpr(run, list(jaxpr.in_avals))
    return staging.close_over_consts(flat, consts)


def _flat_param(v: Any) -> Any:
    if isinstance(v, ClosedJaxpr):
        return ClosedJaxpr(_flatten_jaxpr(staging.close_over_consts(v.jaxpr, list(v.consts))), [])
    if isinstance(v, Jaxpr):
        return _flatten_jaxpr(v)
    if isinstance(v, (tuple, list)) and any(isinstance(x, (Jaxpr, ClosedJaxpr)) for x in v):
        return type(v)(_flat_param(x) for x in v)
    return v


def _inline_eval(jaxpr: Jaxpr, args: list) -> list:
    env: dict = {}

    def read(x):
        return x.val if isinstance(x, Literal) else env[x]

    for v, a in zip(jaxpr.in_binders, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        ins = [read(x) for x in eqn.inputs]
        name = eqn.primitive.name
        if name in _INLINE:
            sub = eqn.params[_INLINE[name]]
            if isinstance(sub, ClosedJaxpr):
                sub = staging.close_over_consts(sub.jaxpr, list(sub.consts))
            outs = _inline_eval(sub, ins)
        else:
            params = {k: _flat_param(v) for k, v in eqn.params.items()}
            outs = eqn.primitive.bind(*ins, **params)
            if not eqn.primitive.multiple_results:
                outs = [outs]
        for v, o in zip(eqn.out_binders, outs):
            env[v] = o
    return [read(x) for x in jaxpr.outs]


# --- Exported --------------------------------------------------------------------------------------


class Exported:
    """An exported function: its flat jaxpr, argument/result types and pytree structures."""

    def __init__(
        self,
        fun_name: str,
        in_tree: PyTreeDef,
        in_avals: tuple,
        out_tree: PyTreeDef,
        out_avals: tuple,
        jaxpr: Jaxpr,
        platforms: tuple,
    ):
        self.fun_name = fun_name
        self.in_tree, self.in_avals = in_tree, tuple(in_avals)
        self.out_tree, self.out_avals = out_tree, tuple(out_avals)
        self.platforms = tuple(platforms)
        self._jaxpr = jaxpr
        self._fun = None
        self.nr_devices = 1
        self.calling_convention_version = maximum_supported_calling_convention_version
        self.disabled_safety_checks = ()
        self.ordered_effects = self.unordered_effects = ()
        self.in_shardings_hlo = (None,) * len(self.in_avals)
        self.out_shardings_hlo = (None,) * len(self.out_avals)
        self.module_kept_var_idx = tuple(range(len(self.in_avals)))
        self.uses_global_constants = False

    def __str__(self):
        return f"Exported(fun_name={self.fun_name}, in_avals={self.in_avals}, out_avals={self.out_avals})"

    __repr__ = __str__

    @property
    def mlir_module_serialized(self) -> bytes:
        raise NotImplementedError("pyjax.export: pyjax has no MLIR/StableHLO; use Exported.serialize()")

    def mlir_module(self) -> str:
        raise NotImplementedError("pyjax.export: pyjax has no MLIR/StableHLO; use Exported.serialize()")

    def in_shardings_jax(self, mesh: Any) -> tuple:
        return (None,) * len(self.in_avals)

    def out_shardings_jax(self, mesh: Any) -> tuple:
        return (None,) * len(self.out_avals)

    def has_vjp(self) -> bool:
        """pyjax differentiates the exported jaxpr itself, so every Exported has a VJP."""
        return True

    def vjp(self) -> Exported:
        raise NotImplementedError("pyjax.export: differentiate Exported.call with jax.vjp/grad instead")

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """The exported program as bytes (pyjax's JSON format; read back with deserialize)."""
        doc = {
            "format": _FORMAT,
            "fun_name": self.fun_name,
            "platforms": list(self.platforms),
            "in_tree": _enc_tree(self.in_tree),
            "out_tree": _enc_tree(self.out_tree),
            "in_avals": [_enc_aval(a) for a in self.in_avals],
            "out_avals": [_enc_aval(a) for a in self.out_avals],
            "jaxpr": _enc_jaxpr(self._jaxpr),
        }
        return bytearray(json.dumps(doc, separators=(",", ":")).encode())

    def call(self, *args: Any, **kwargs: Any) -> Any:
        """Run the exported program on args of the exported types (JAX's ValueError otherwise)."""
        flat, tree = tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when the function "
                f"'{self.fun_name}' was exported, but they have the following structural differences: "
                f"{tree} vs {self.in_tree}"
            )
        for i, (x, want) in enumerate(zip(flat, self.in_avals)):
            have = api._abstractify(x)
            if tuple(have.shape) != tuple(want.shape):
                raise ValueError(
                    f"Shape mismatch for args[{i}].shape (expected same constant): expected {tuple(want.shape)} "
                    f"and called with {tuple(have.shape)}"
                )
            if have.dtype != want.dtype:
                raise ValueError(
                    f"Dtype mismatch for args[{i}]: expected {want.dtype.name} and called with {have.dtype.name}"
                )
        if self._fun is None:
            self._fun = api.jit(core.jaxpr_as_fun(self._jaxpr))
        outs = self._fun(*flat)
        return tree_unflatten(self.out_tree, list(outs))


def export(fun_jit: Any, *, platforms: Sequence[str] | None = None, disabled_checks: Sequence = ()) -> Callable:
    """export(jit(f))(*args, **kwargs) -> Exported; args may be arrays or ShapeDtypeStructs."""
    if not isinstance(fun_jit, api._Jitted):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")

    def do_export(*args: Any, **kwargs: Any) -> Exported:
        closed, out_shape = api.make_jaxpr(fun_jit, return_shape=True)(*args, **kwargs)
        flat = _flatten_jaxpr(staging.close_over_consts(closed.jaxpr, list(closed.consts)))
        in_tree = tree_structure((args, kwargs))
        out_leaves, out_tree = tree_flatten(out_shape)
        exp = Exported(
            fun_jit.__name__,
            in_tree,
            tuple(flat.in_avals),
            out_tree,
            tuple(flat.out_avals),
            flat,
            tuple(platforms) if platforms is not None else (default_export_platform(),),
        )
        exp.disabled_safety_checks = tuple(disabled_checks)
        return exp

    return do_export


def deserialize(blob: bytes | bytearray) -> Exported:
    """The Exported that Exported.serialize wrote."""
    doc = json.loads(bytes(blob).decode())
    if doc.get("format") != _FORMAT:
        raise ValueError(f"pyjax.export.deserialize: not a {_FORMAT} serialization")
    return Exported(
        doc["fun_name"],
        _dec_tree(doc["in_tree"]),
        tuple(_dec_aval(a) for a in doc["in_avals"]),
        _dec_tree(doc["out_tree"]),
        tuple(_dec_aval(a) for a in doc["out_avals"]),
        _dec_jaxpr(doc["jaxpr"]),
        tuple(doc["platforms"]),
    )


# --- the serialized form -----------------------------------------------------------------------------


def _enc_aval(a: ShapedArray) -> list:
    return [list(a.shape), a.dtype.name, bool(a.weak_type)]


def _dec_aval(d: list) -> ShapedArray:
    return ShapedArray(tuple(d[0]), _dtypes.dtype(d[1]), d[2])


def _enc_tree(t: PyTreeDef) -> Any:
    """A treedef node by node: its type (by module and name), its data, its children."""
    if t.node_type is None:
        return "*"
    return {
        "t": _class_path(t.node_type),
        "d": _enc_param(t.node_data, "pytree"),
        "c": [_enc_tree(c) for c in t.children],
    }


def _dec_tree(d: Any) -> PyTreeDef:
    if d == "*":
        return PyTreeDef(None, None, ())
    return PyTreeDef(_load_class(d["t"]), _dec_param(d["d"]), tuple(_dec_tree(c) for c in d["c"]))


def _enc_array(x: Any) -> dict:
    import numpy as np

    a = np.asarray(x)
    aval = core.get_aval(x)
    return {"a": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode(), "v": _enc_aval(aval), "np": a.dtype.str}


def _dec_array(d: dict) -> Any:
    import numpy as np

    from pyjax.lax import lax

    aval = _dec_aval(d["v"])
    a = np.frombuffer(base64.b64decode(d["a"]), dtype=np.dtype(d["np"])).reshape(aval.shape)
    return lax._convert(api.device_put(a), aval.dtype, aval.weak_type)


def _class_path(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _qualname(obj: Any) -> str:
    return _class_path(type(obj))


def _load_class(path: str) -> type:
    mod, _, qual = path.partition(":")
    obj: Any = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _enc_param(v: Any, prim: str) -> Any:
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int) and not isinstance(v, enum.Enum):
        return {"i": v}
    if isinstance(v, float):
        return {"f": repr(v)}
    if isinstance(v, _dtypes.DType):
        return {"dt": v.name}
    if isinstance(v, type):
        return {"ty": _class_path(v)}
    if isinstance(v, enum.Enum):
        return {"en": _qualname(v), "n": v.name}
    if isinstance(v, Jaxpr):
        return {"jx": _enc_jaxpr(v)}
    if isinstance(v, ClosedJaxpr):
        return {"cj": _enc_jaxpr(v.jaxpr), "cs": [_enc_array(c) for c in v.consts]}
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return {"nt": _qualname(v), "c": [_enc_param(x, prim) for x in v]}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        fields = {f.name: _enc_param(getattr(v, f.name), prim) for f in dataclasses.fields(v)}
        return {"dc": _qualname(v), "c": fields}
    if isinstance(v, (tuple, list)):
        return {"tu" if isinstance(v, tuple) else "li": [_enc_param(x, prim) for x in v]}
    if isinstance(v, frozenset):
        return {"fs": [_enc_param(x, prim) for x in sorted(v, key=repr)]}
    if isinstance(v, dict):
        return {"di": [[_enc_param(k, prim), _enc_param(x, prim)] for k, x in v.items()]}
    if hasattr(v, "shape") and hasattr(v, "dtype"):
        return {"ar": _enc_array(v)}
    raise TypeError(f"pyjax.export: cannot serialize parameter {v!r} of primitive {prim!r}")


def _dec_param(d: Any) -> Any:
    if d is None or isinstance(d, (bool, str)):
        return d
    (tag,) = [k for k in d if k not in ("n", "c", "cs")] or ["c"]
    if tag == "i":
        return d["i"]
    if tag == "f":
        return float(d["f"])
    if tag == "dt":
        return _dtypes.dtype(d["dt"])
    if tag == "ty":
        return _load_class(d["ty"])
    if tag == "en":
        return _load_class(d["en"])[d["n"]]
    if tag == "jx":
        return _dec_jaxpr(d["jx"])
    if tag == "cj":
        return ClosedJaxpr(_dec_jaxpr(d["cj"]), [_dec_array(c) for c in d["cs"]])
    if tag == "nt":
        return _load_class(d["nt"])(*[_dec_param(x) for x in d["c"]])
    if tag == "dc":
        return _load_class(d["dc"])(**{k: _dec_param(x) for k, x in d["c"].items()})
    if tag == "tu":
        return tuple(_dec_param(x) for x in d["tu"])
    if tag == "li":
        return [_dec_param(x) for x in d["li"]]
    if tag == "fs":
        return frozenset(_dec_param(x) for x in d["fs"])
    if tag == "di":
        return {_dec_param(k): _dec_param(x) for k, x in d["di"]}
    if tag == "ar":
        return _dec_array(d["ar"])
    raise ValueError(f"pyjax.export.deserialize: unknown parameter encoding {d!r}")


def _enc_jaxpr(j: Jaxpr) -> dict:
    ids: dict = {}

    def var(v: Var) -> int:
        return ids.setdefault(id(v), len(ids))

    def atom(x: Any) -> Any:
        if isinstance(x, Literal):
            return {"lit": _enc_array(x.val)}
        return var(x)

    return {
        "in": [[var(v), _enc_aval(v.aval)] for v in j.in_binders],
        "eqns": [
            {
                "p": e.primitive.name,
                "in": [atom(x) for x in e.inputs],
                "out": [[var(v), _enc_aval(v.aval)] for v in e.out_binders],
                "params": {k: _enc_param(v, e.primitive.name) for k, v in e.params.items()},
            }
            for e in j.eqns
        ],
        "out": [atom(x) for x in j.outs],
    }


def _primitive(name: str) -> core.Primitive:
    """The primitive called name among those pyjax's loaded modules define."""
    import sys

    for mod_name, mod in list(sys.modules.items()):
        if mod_name == "pyjax" or mod_name.startswith("pyjax."):
            for p in list(vars(mod).values()):
                if isinstance(p, core.Primitive) and p.name == name:
                    return p
    raise ValueError(f"pyjax.export.deserialize: unknown primitive {name!r}")


def _dec_jaxpr(d: dict) -> Jaxpr:
    env: dict = {}

    def binder(pair: list) -> Var:
        v = env[pair[0]] = Var(_dec_aval(pair[1]))
        return v

    def atom(x: Any) -> Any:
        if isinstance(x, dict):
            val = _dec_array(x["lit"])
            return Literal(val, core.get_aval(val))
        return env[x]

    ins = [binder(p) for p in d["in"]]
    eqns = []
    for e in d["eqns"]:
        inputs = [atom(x) for x in e["in"]]
        params = {k: _dec_param(v) for k, v in e["params"].items()}
        outs = [binder(p) for p in e["out"]]
        eqns.append(JaxprEqn(_primitive(e["p"]), inputs, params, outs))
    return Jaxpr(ins, eqns, [atom(x) for x in d["out"]])
