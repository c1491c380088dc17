"""Pytrees: nested containers of leaves, flattened to a list plus a hashable PyTreeDef."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple


class _NodeType(NamedTuple):
    to_iter: Callable  # node -> (children, aux_data)
    from_iter: Callable  # (aux_data, children) -> node


_registry: dict[type, _NodeType] = {}
# type -> flatten_with_keys(x) -> ([(key, child), ...], aux); gives the key path entries.
_keys_registry: dict[type, Callable] = {}


def register_pytree_node(nodetype: type, flatten_func: Callable, unflatten_func: Callable) -> None:
    """Register a container type: flatten(x) -> (children, aux); unflatten(aux, children) -> x."""
    if nodetype in _registry:
        raise ValueError(f"Duplicate custom PyTreeDef type registration for {nodetype}.")
    _registry[nodetype] = _NodeType(flatten_func, unflatten_func)


def register_pytree_with_keys(nodetype, flatten_with_keys, unflatten_func, flatten_func=None):
    def flat(x):
        kids, aux = flatten_with_keys(x)
        return [c for _, c in kids], aux

    register_pytree_node(nodetype, flatten_func or flat, unflatten_func)
    _keys_registry[nodetype] = flatten_with_keys


def register_pytree_with_keys_class(cls):
    """Class decorator: cls.tree_flatten_with_keys() and cls.tree_unflatten(aux, children)."""
    flat = getattr(cls, "tree_flatten", None)
    register_pytree_with_keys(
        cls, lambda x: x.tree_flatten_with_keys(), cls.tree_unflatten, (lambda x: x.tree_flatten()) if flat else None
    )
    return cls


def register_static(cls):
    """Register cls as a pytree node with no children: instances live in the treedef."""
    register_pytree_node(cls, lambda x: ((), x), lambda x, _: x)
    return cls


def register_pytree_node_class(cls):
    """Class decorator: cls.tree_flatten() and cls.tree_unflatten(aux, children)."""
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


def register_dataclass(nodetype=None, data_fields=None, meta_fields=None, drop_fields=()):
    """Register a dataclass: data_fields are children, meta_fields go into the treedef."""
    if nodetype is None:
        return lambda cls: register_dataclass(cls, data_fields, meta_fields, drop_fields)
    if data_fields is None:
        meta = set(meta_fields or ())
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        data_fields = [f.name for f in fields if not f.metadata.get("static") and f.name not in meta]
        meta_fields = [f.name for f in fields if f.metadata.get("static") or f.name in meta]
    data_fields, meta_fields = list(data_fields), list(meta_fields or ())

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(aux, children):
        return nodetype(**dict(zip(data_fields, children)), **dict(zip(meta_fields, aux)))

    register_pytree_node(nodetype, flatten, unflatten)
    _keys_registry[nodetype] = lambda x: ([(GetAttrKey(n), getattr(x, n)) for n in data_fields], None)
    return nodetype


# Types that the public tree functions (pyjax.tree_util, pyjax.tree) treat as leaves while
# transformations flatten them further: typed PRNG keys are leaves to users, as in JAX, but jit, vmap
# and grad only trace plain arrays, so they see the keys' uint32 data.
_array_like_nodes: tuple = ()


def register_array_like_node(nodetype: type) -> None:
    """Make nodetype a leaf for public tree functions (it stays a node for transformations)."""
    global _array_like_nodes
    _array_like_nodes = _array_like_nodes + (nodetype,)


def public_is_leaf(is_leaf: Callable | None, takes_path: bool = False) -> Callable | None:
    """is_leaf extended to the array-like node types (for pyjax.tree_util's public functions)."""
    kinds = _array_like_nodes
    if not kinds:
        return is_leaf
    if is_leaf is None:
        return (lambda _p, x: isinstance(x, kinds)) if takes_path else (lambda x: isinstance(x, kinds))
    if takes_path:
        return lambda p, x: isinstance(x, kinds) or is_leaf(p, x)
    return lambda x: isinstance(x, kinds) or is_leaf(x)


def _sorted_keys(d) -> list:
    """A dict's keys in sorted order, as JAX orders them; keys that do not compare raise ValueError."""
    try:
        return sorted(d)
    except TypeError as e:
        raise ValueError("Comparator raised exception while sorting pytree dictionary keys.") from e


def _dict_flatten(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (type(d), tuple(keys))


def _dict_unflatten(aux, children):
    typ, keys = aux
    return typ(zip(keys, children)) if typ is dict else typ(**dict(zip(keys, children)))


register_pytree_node(tuple, lambda t: (list(t), None), lambda _, c: tuple(c))
register_pytree_node(list, lambda x: (list(x), None), lambda _, c: list(c))
register_pytree_node(dict, _dict_flatten, _dict_unflatten)
register_pytree_node(type(None), lambda _: ([], None), lambda _, c: None)

try:  # OrderedDict/defaultdict keep insertion order semantics like JAX
    import collections

    register_pytree_node(
        collections.OrderedDict,
        lambda d: (list(d.values()), tuple(d.keys())),
        lambda keys, c: collections.OrderedDict(zip(keys, c)),
    )
    register_pytree_node(
        collections.defaultdict,
        lambda d: ([d[k] for k in _sorted_keys(d)], (d.default_factory, tuple(_sorted_keys(d)))),
        lambda aux, c: collections.defaultdict(aux[0], zip(aux[1], c)),
    )
    _keys_registry[collections.OrderedDict] = lambda d: ([(DictKey(k), v) for k, v in d.items()], None)
    _keys_registry[collections.defaultdict] = lambda d: ([(DictKey(k), d[k]) for k in _sorted_keys(d)], None)
except ImportError:  # pragma: no cover
    pass


def _node_type(x):
    t = type(x)
    nt = _registry.get(t)
    if nt is not None:
        return nt
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # namedtuple
        return _NAMEDTUPLE
    return None


_NAMEDTUPLE = _NodeType(lambda x: (list(x), None), None)


class PyTreeDef:
    """Structure of a pytree. Leaves are '*'. Hashable and comparable."""

    __slots__ = ("node_type", "node_data", "children", "num_leaves", "_hash")

    def __init__(self, node_type, node_data, children: tuple):
        self.node_type = node_type
        self.node_data = node_data
        self.children = children
        if node_type is None:
            self.num_leaves = 1
        else:
            n = 0
            for c in children:
                n += c.num_leaves
            self.num_leaves = n
        self._hash = None

    @property
    def num_nodes(self) -> int:
        return 1 + sum(c.num_nodes for c in self.children)

    def __eq__(self, other):
        if self is other:
            return True
        return (
            isinstance(other, PyTreeDef)
            and self.node_type == other.node_type
            and self.node_data == other.node_data
            and self.children == other.children
        )

    def __hash__(self):
        if self._hash is None:
            try:
                self._hash = hash((self.node_type, self.node_data, self.children))
            except TypeError:
                self._hash = hash((self.node_type, self.children))
        return self._hash

    def unflatten(self, leaves):
        return tree_unflatten(self, leaves)

    def flatten_up_to(self, tree):
        return _flatten_up_to(self, tree)

    def __repr__(self):
        return f"PyTreeDef({_pp_def(self)})"


def _pp_def(d: PyTreeDef) -> str:
    if d.node_type is None:
        return "*"
    kids = [_pp_def(c) for c in d.children]
    t = d.node_type
    if t is tuple:
        return "(" + ", ".join(kids) + ("," if len(kids) == 1 else "") + ")"
    if t is list:
        return "[" + ", ".join(kids) + "]"
    if t is dict:
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(d.node_data[1], kids)) + "}"
    if t is type(None):
        return "None"
    name = t.__name__ if isinstance(t, type) else str(t)
    if isinstance(t, type) and issubclass(t, tuple) and hasattr(t, "_fields"):  # JAX: namedtuple[Point]
        return f"CustomNode(namedtuple[{name}], [{', '.join(kids)}])"
    return f"CustomNode({name}[{d.node_data}], [{', '.join(kids)}])"


LEAF = PyTreeDef(None, None, ())


def _is_leaf_default(x) -> bool:
    return False


def tree_flatten(tree, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """Flatten a pytree into (leaves, treedef). None is an empty node, as in JAX."""
    leaves: list = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(x, leaves, is_leaf):
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    typ = type(x)
    nt = _registry.get(typ)  # (_node_type, inline: this runs once per node of every jit call's arguments)
    if nt is None:
        if not (isinstance(x, tuple) and hasattr(x, "_fields")):
            leaves.append(x)
            return LEAF
        nt = _NAMEDTUPLE
    children, aux = nt.to_iter(x)
    kids = tuple([_flatten(c, leaves, is_leaf) for c in children])
    if typ in _INTERNED_TYPES and (aux is None or all(type(k) is str for k in aux[1])):
        # one PyTreeDef per structure of builtin containers: a jit call's argument tree is then
        # the very object its cache key holds (hashed once, equal by identity)
        key = (typ, aux, kids)
        d = _interned.get(key)
        if d is None:
            if len(_interned) >= 4096:
                _interned.clear()
            d = _interned[key] = PyTreeDef(typ, aux, kids)
        return d
    return PyTreeDef(typ, aux, kids)


# containers whose node data is None or their keys (only str keys: 1 == 1.0 == True would
# otherwise share one key type): equal structures share one PyTreeDef
_INTERNED_TYPES = frozenset({tuple, list, dict, type(None)})
_interned: dict = {}


def tree_unflatten(treedef: PyTreeDef, leaves):
    if type(leaves) is not list:
        leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        if len(leaves) < treedef.num_leaves:
            raise ValueError("Too few leaves for PyTreeDef.")
        raise ValueError(f"Too many leaves for PyTreeDef; expected {treedef.num_leaves}.")
    return _unflatten(treedef, iter(leaves))


def _unflatten(d: PyTreeDef, it):
    """d's tree on the leaves `it` yields (as many as d has)."""
    if d.node_type is None:
        return next(it)
    children = [next(it) if c.node_type is None else _unflatten(c, it) for c in d.children]
    t = d.node_type
    if t is list:  # (their registrations above: builtins cannot be registered again)
        return children
    if t is tuple:
        return tuple(children)
    nt = _registry.get(t)
    if nt is None:  # namedtuple
        return d.node_type(*children)
    return nt.from_iter(d.node_data, children)


def flatten_fun(fun: Callable, in_tree: PyTreeDef, with_kwargs: bool = True) -> tuple[Callable, list]:
    """(flat_fun, out_trees): fun taking and returning flat leaves, for tracing; in_tree is the tree
    of (args, kwargs) (of args alone without with_kwargs) and each call appends its output tree."""
    out_trees: list = []

    def flat_fun(*leaves):
        ins = tree_unflatten(in_tree, list(leaves))
        out, tree = tree_flatten(fun(*ins[0], **ins[1]) if with_kwargs else fun(*ins))
        out_trees.append(tree)
        return out

    return flat_fun, out_trees


def _flatten_up_to(d: PyTreeDef, tree) -> list:
    if d.node_type is None:
        return [tree]
    if type(tree) is not d.node_type:
        raise ValueError(f"Tree structure mismatch: expected {d.node_type.__name__}, got {type(tree).__name__}")
    nt = _node_type(tree)
    children, aux = nt.to_iter(tree)
    if len(children) != len(d.children) or (d.node_type is dict and aux != d.node_data):
        raise ValueError(f"Tree structure mismatch: {_pp_def(d)} vs {tree!r}")
    out = []
    for sub, c in zip(d.children, children):
        out.extend(_flatten_up_to(sub, c))
    return out


def tree_leaves(tree, is_leaf=None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree, is_leaf=None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree, *rest, is_leaf=None) -> Any:
    """Apply f leafwise; the other trees must have tree's structure (or be deeper at leaves)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    all_leaves = [leaves] + [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(*xs) for xs in zip(*all_leaves)])


def tree_all(tree, is_leaf=None) -> bool:
    return all(tree_leaves(tree, is_leaf))


def tree_reduce(fn, tree, initializer=..., is_leaf=None):
    import functools

    leaves = tree_leaves(tree, is_leaf)
    if initializer is ...:
        return functools.reduce(fn, leaves)
    return functools.reduce(fn, leaves, initializer)


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    return treedef.node_type is None


def all_leaves(iterable, is_leaf=None) -> bool:
    return all(tree_structure(x, is_leaf) == LEAF for x in iterable)


def treedef_children(treedef: PyTreeDef) -> list:
    return list(treedef.children)


def tree_transpose(outer_treedef, inner_treedef, pytree):
    flat = outer_treedef.flatten_up_to(pytree)
    inner = [inner_treedef.flatten_up_to(x) for x in flat]
    transposed = [outer_treedef.unflatten(list(col)) for col in zip(*inner)]
    return inner_treedef.unflatten(transposed)


class Partial:
    """functools.partial that is a pytree (its args are leaves), like jax.tree_util.Partial."""

    def __init__(self, func, *args, **kwargs):
        self.func, self.args, self.keywords = func, args, kwargs

    def __call__(self, *args, **kwargs):
        return self.func(*self.args, *args, **{**self.keywords, **kwargs})


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, c: Partial(func, *c[0], **c[1]),
)


# --- key paths ------------------------------------------------------------------------------------


class _KeyEntry:
    """Base of the path entries: one value, stored in the slot named by `_field`."""

    __slots__ = ()
    _field = ""

    def __init__(self, value):
        setattr(self, self._field, value)

    def __eq__(self, other):
        return type(other) is type(self) and getattr(other, self._field) == getattr(self, self._field)

    def __hash__(self):
        return hash((type(self).__name__, getattr(self, self._field)))

    def __repr__(self):
        return f"{type(self).__name__}({self._field}={getattr(self, self._field)!r})"


def _key_entry(name: str, field: str, shown: str, doc: str) -> type:
    """A path-entry class holding one value in the slot `field`; str() is `shown` formatted with it."""
    body = {"__slots__": (field,), "_field": field, "__match_args__": (field,), "__doc__": doc}
    body["__str__"] = lambda self: shown.format(getattr(self, field))
    return type(name, (_KeyEntry,), {"__module__": __name__, "__qualname__": name, **body})


DictKey = _key_entry("DictKey", "key", "[{!r}]", """Path entry for a mapping key: str -> "['a']".""")
SequenceKey = _key_entry("SequenceKey", "idx", "[{!r}]", """Path entry for a tuple/list position: str -> "[0]".""")
GetAttrKey = _key_entry(
    "GetAttrKey", "name", ".{}", """Path entry for an attribute (namedtuple field, dataclass field): str -> ".x"."""
)
FlattenedIndexKey = _key_entry(
    "FlattenedIndexKey",
    "key",
    "[<flat index {}>]",
    "Path entry for the i-th child of a custom node registered without keys.",
)


KeyEntry = Any
KeyPath = tuple


def _simple_key(k) -> str:
    if isinstance(k, (DictKey, FlattenedIndexKey)):
        return str(k.key)
    if isinstance(k, SequenceKey):
        return str(k.idx)
    if isinstance(k, GetAttrKey):
        return str(k.name)
    return str(k)


def keystr(keys, *, simple: bool = False, separator: str = "") -> str:
    """A key path as a string, e.g. "['a'][0].x"; simple=True drops the brackets."""
    return separator.join(_simple_key(k) if simple else str(k) for k in keys)


def _child_keys(x, typ, children, aux) -> list:
    if typ is tuple or typ is list:
        return [SequenceKey(i) for i in range(len(children))]
    if typ is dict:
        return [DictKey(k) for k in aux[1]]
    fk = _keys_registry.get(typ)
    if fk is not None:
        return [k for k, _ in fk(x)[0]]
    if typ not in _registry and hasattr(x, "_fields"):  # namedtuple
        return [GetAttrKey(f) for f in x._fields]
    return [FlattenedIndexKey(i) for i in range(len(children))]


def _flatten_with_path(x, path, leaves, is_leaf, takes_path):
    if is_leaf is not None and (is_leaf(path, x) if takes_path else is_leaf(x)):
        leaves.append((path, x))
        return LEAF
    nt = _node_type(x)
    if nt is None:
        leaves.append((path, x))
        return LEAF
    children, aux = nt.to_iter(x)
    typ = type(x)
    keys = _child_keys(x, typ, children, aux)
    return PyTreeDef(
        typ,
        aux,
        tuple(_flatten_with_path(c, path + (k,), leaves, is_leaf, takes_path) for k, c in zip(keys, children)),
    )


def tree_flatten_with_path(tree, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False):
    """Like tree_flatten, but each leaf comes with its key path: ([(path, leaf), ...], treedef)."""
    leaves: list = []
    treedef = _flatten_with_path(tree, (), leaves, is_leaf, is_leaf_takes_path)
    return leaves, treedef


def tree_leaves_with_path(tree, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False) -> list:
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(f: Callable, tree, *rest, is_leaf=None, is_leaf_takes_path: bool = False) -> Any:
    """tree_map where f also receives each leaf's key path: f(path, leaf, *others)."""
    path_leaves, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(path_leaves, *others)])


# --- one-level flattening, broadcasting and associative reduction ---------------------------------


def is_tree_node(typ) -> bool:
    """True when values of type typ are pytree nodes (not leaves)."""
    if not isinstance(typ, type):
        raise TypeError(f"is_tree_node expects a type, got {typ!r}")
    return typ in _registry or (issubclass(typ, tuple) and hasattr(typ, "_fields"))


def flatten_one_level(tree) -> tuple[list, Any]:
    """The immediate children of a pytree node and its auxiliary data (leaves raise ValueError)."""
    nt = _node_type(tree)
    if nt is None:
        raise ValueError(f"can't tree-flatten type: {type(tree)}")
    children, aux = nt.to_iter(tree)
    if type(tree) is dict:  # JAX's auxiliary data of a dict is its sorted keys
        aux = aux[1]
    return tuple(children), aux


def flatten_one_level_with_keys(tree) -> tuple[tuple, Any]:
    """Like flatten_one_level, pairing each child with its key entry."""
    children, aux = flatten_one_level(tree)
    keys = _child_keys(tree, type(tree), children, (dict, aux) if type(tree) is dict else aux)
    return tuple(zip(keys, children)), aux


def treedef_tuple(treedefs) -> PyTreeDef:
    """The treedef of a tuple whose elements have the given treedefs."""
    return PyTreeDef(tuple, None, tuple(treedefs))


def tree_broadcast(prefix_tree, full_tree, is_leaf: Callable | None = None):
    """Replicate each leaf of prefix_tree over the matching subtree of full_tree."""
    treedef = tree_structure(prefix_tree, is_leaf)
    subtrees = treedef.flatten_up_to(full_tree)
    leaves = tree_leaves(prefix_tree, is_leaf)
    return tree_unflatten(treedef, [tree_map(lambda _, v=v: v, sub) for v, sub in zip(leaves, subtrees)])


_UNSPECIFIED = object()


def tree_reduce_associative(operation: Callable, tree, *, identity=_UNSPECIFIED, is_leaf: Callable | None = None):
    """Reduce the leaves of tree with an associative operation, pairwise (a balanced tree of calls)."""
    items = tree_leaves(tree, is_leaf)
    if not items:
        if identity is _UNSPECIFIED:
            raise TypeError("Must specify identity for parallel reduction of empty sequence.")
        return identity
    while len(items) > 1:
        paired = [operation(a, b) for a, b in zip(items[::2], items[1::2])]
        items = paired + ([items[-1]] if len(items) % 2 else [])
    return items[0]
