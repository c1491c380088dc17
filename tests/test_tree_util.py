"""jax.tree_util against real JAX: mixed dict keys, key classes (keystr, DictKey, SequenceKey,
GetAttrKey, FlattenedIndexKey), tree_*_with_path, register_static and the other additions.
"""

from __future__ import annotations

import collections
import dataclasses
from typing import NamedTuple

import jax
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax import tree_util as ptu

# --- tree_util -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tree",
    [{"b": 1, 2: 2}, {None: 1, "a": 2}, {1.5: 1, 1: 2}, {(2,): 1, (1, "a"): 2}, {"b": {"z": 1, 0: 2}}],
)
def test_tree_flatten_mixed_keys(tree):
    try:
        jleaves, jdef = jax.tree_util.tree_flatten(tree)
    except ValueError as e:
        with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
            pyjax.tree_util.tree_flatten(tree)
        with pytest.raises(ValueError):
            pyjax.tree_util.tree_leaves_with_path(tree)
        assert isinstance(e.__cause__, TypeError)
        return
    pleaves, pdef = pyjax.tree_util.tree_flatten(tree)
    assert pleaves == jleaves and str(pdef) == str(jdef)


class _Pair(NamedTuple):
    lo: int
    hi: float


@pytest.mark.parametrize(
    "tree",
    [
        _Pair(1, (2.0, 3)),
        [collections.namedtuple("Span", "start stop")(0, {"k": 1})],
        collections.OrderedDict(b=1, a=2),
    ],
)
def test_treedef_repr_of_library_nodes(tree):
    assert str(pyjax.tree.structure(tree)) == str(jax.tree.structure(tree))


def test_tree_util_additions():
    tree = {"a": 1, "b": [2, (3, 4)]}
    for name in ("flatten_one_level", "flatten_one_level_with_keys"):
        assert repr(getattr(pyjax.tree_util, name)(tree)) == repr(getattr(jax.tree_util, name)(tree))
    with pytest.raises(ValueError):
        pyjax.tree_util.flatten_one_level(1)
    for t in (int, list, dict, type(None), tuple):
        assert pyjax.tree_util.is_tree_node(t) == jax.tree_util.is_tree_node(t)
    for tu in (jax.tree_util, pyjax.tree_util):
        assert tu.tree_broadcast([1, {"a": 2}], [[1, 2], {"a": [3, (4, 5)]}]) == [[1, 1], {"a": [2, (2, 2)]}]
        assert tu.tree_reduce_associative(lambda a, b: a + b, [1, [2, 3], {"a": 4}]) == 10
        assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError):
        pyjax.tree_util.tree_reduce_associative(lambda a, b: a + b, [])
    s = [pyjax.tree_util.tree_structure(1), pyjax.tree_util.tree_structure((1, 2))]
    assert str(pyjax.tree_util.treedef_tuple(s)) == "PyTreeDef((*, (*, *)))"
    for t in (jax.tree, pyjax.tree):
        assert [(str(k), v) for k, v in t.leaves_with_path(tree)] == [
            (str(k), v) for k, v in jax.tree.leaves_with_path(tree)
        ]
        assert t.map_with_path(lambda p, v: len(p) * v, tree) == {"a": 1, "b": [4, (9, 12)]}
        assert t.broadcast(1, (0, [0])) == (1, [1])
        assert t.reduce_associative(max, [3, 9, 2]) == 9
        assert len(t.flatten_with_path(tree)[0]) == 4
    Op = pyjax.tree_util.register_dataclass(
        dataclasses.make_dataclass("Op", [("x", object), ("op", str, pyjax.tree.static(default="add"))])
    )
    leaves, tdef = pyjax.tree.flatten(Op(x=pjnp.ones(2)))
    assert len(leaves) == 1 and pyjax.tree.unflatten(tdef, leaves).op == "add"


jtu = jax.tree_util


class Pt(NamedTuple):
    x: object
    y: object


def _tree():
    return {
        "b": [1, (2, 3.5)],
        "a": Pt(4, None),
        "c": collections.OrderedDict([("z", 5), ("y", 6)]),
        "d": collections.defaultdict(int, {"q": 7, "p": 8}),
        "e": [],
        "f": None,
    }


def _keys(tu, tree, **kw):
    return [(tu.keystr(p), v) for p, v in tu.tree_leaves_with_path(tree, **kw)]


# --- key classes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda tu: tu.DictKey("a"),
        lambda tu: tu.DictKey(3),
        lambda tu: tu.SequenceKey(0),
        lambda tu: tu.GetAttrKey("x"),
        lambda tu: tu.FlattenedIndexKey(2),
    ],
)
def test_key_classes_repr_str(make):
    j, p = make(jtu), make(ptu)
    assert repr(p) == repr(j)
    assert str(p) == str(j)
    assert p == make(ptu) and hash(p) == hash(make(ptu))


def test_key_fields_and_equality():
    assert ptu.DictKey("a").key == "a" and ptu.SequenceKey(1).idx == 1
    assert ptu.GetAttrKey("x").name == "x" and ptu.FlattenedIndexKey(2).key == 2
    assert ptu.DictKey(0) != ptu.SequenceKey(0)
    assert ptu.DictKey("a") != ptu.DictKey("b")
    match ptu.DictKey("k"):
        case ptu.DictKey(key=k):
            assert k == "k"


@pytest.mark.parametrize("simple,sep", [(False, ""), (True, "/"), (True, ""), (False, "|")])
def test_keystr(simple, sep):
    def path(tu):
        return (tu.DictKey("a"), tu.SequenceKey(1), tu.GetAttrKey("x"), tu.FlattenedIndexKey(0))

    assert ptu.keystr(path(ptu), simple=simple, separator=sep) == jtu.keystr(path(jtu), simple=simple, separator=sep)
    assert ptu.keystr(()) == jtu.keystr(())


# --- *_with_path ----------------------------------------------------------------------------------------


def test_tree_flatten_with_path_matches_jax():
    pl, pdef = ptu.tree_flatten_with_path(_tree())
    jl, jdef = jtu.tree_flatten_with_path(_tree())
    assert [(ptu.keystr(k), v) for k, v in pl] == [(jtu.keystr(k), v) for k, v in jl]
    assert [repr(k) for k, _ in pl] == [repr(k) for k, _ in jl]
    assert pdef == ptu.tree_structure(_tree())
    assert pdef.unflatten([v for _, v in pl]) == _tree()


@pytest.mark.parametrize("tree", [5, None, (), [None, 1], {"x": {"y": [1, 2]}}, (Pt(1, 2),)])
def test_leaves_with_path_simple(tree):
    assert _keys(ptu, tree) == _keys(jtu, tree)


def test_custom_nodes_paths():
    class Box:
        def __init__(self, a, b):
            self.a, self.b = a, b

    class KBox(Box):
        pass

    @dataclasses.dataclass
    class DC:
        u: object
        v: object

    for tu in (ptu, jtu):
        tu.register_pytree_node(Box, lambda b: ((b.a, b.b), None), lambda _, c: Box(*c))
        tu.register_pytree_with_keys(
            KBox,
            lambda b: (((tu.GetAttrKey("a"), b.a), (tu.DictKey("bee"), b.b)), None),
            lambda _, c: KBox(*c),
        )
        tu.register_dataclass(DC, data_fields=["u", "v"], meta_fields=[])

    def tree():
        return [Box(1, [2]), KBox(3, 4), DC(5, (6,)), ptu.Partial(max, 9)]

    pk = _keys(ptu, tree())
    jtree = tree()
    jtree[3] = jtu.Partial(max, 9)
    assert pk == _keys(jtu, jtree)


def test_register_static():
    class Cfg:
        def __init__(self, n):
            self.n = n

    for tu in (ptu, jtu):
        tu.register_static(Cfg)
    c = Cfg(3)
    pl, pdef = ptu.tree_flatten([1, c])
    jl, _ = jtu.tree_flatten([1, c])
    assert pl == jl == [1]
    assert pdef.unflatten([2])[1] is c
    assert pyjax.jit(lambda x, cfg: x * cfg.n)(pjnp.float32(2), c) == 6


def test_tree_map_with_path():
    def f(tu):
        return lambda p, x, y: (tu.keystr(p), x + y)

    t = {"w": [1, 2], "b": Pt(3, 4)}
    t2 = {"w": [10, 20], "b": Pt(30, 40)}
    assert ptu.tree_map_with_path(f(ptu), t, t2) == jtu.tree_map_with_path(f(jtu), t, t2)


def test_with_path_is_leaf():
    t = {"a": [1, 2], "b": (3, [4])}
    leaf = lambda x: isinstance(x, list)  # noqa: E731
    assert _keys(ptu, t, is_leaf=leaf) == _keys(jtu, t, is_leaf=leaf)

    def f(tu):
        return lambda p, x: tu.keystr(p, simple=True, separator=".")

    assert ptu.tree_map_with_path(f(ptu), t, is_leaf=leaf) == jtu.tree_map_with_path(f(jtu), t, is_leaf=leaf)

    def leaf_p(tu):
        return lambda p, x: len(p) == 1

    assert _keys(ptu, t, is_leaf=leaf_p(ptu), is_leaf_takes_path=True) == _keys(
        jtu, t, is_leaf=leaf_p(jtu), is_leaf_takes_path=True
    )


def test_default_registry_as_jax():
    @dataclasses.dataclass
    class Pt:
        x: float
        y: float

    for j in (jax, pyjax):
        r = j.tree_util.default_registry
        leaves, tree = r.flatten({"a": (1, 2), "b": None})
        assert leaves == [1, 2] and j.tree_util.tree_unflatten(tree, [3, 4]) == {"a": (3, 4), "b": None}
        assert r.flatten_one_level((1, [2]))[0] == (1, [2]) and r.flatten_one_level(3) is None
        assert [str(k) for k, _ in r.flatten_with_path([5, {"k": 6}])[0]] == [
            str(k) for k, _ in jax.tree_util.default_registry.flatten_with_path([5, {"k": 6}])[0]
        ]
        cls = type(f"Pt{j.__name__}", (Pt,), {})
        cls = dataclasses.dataclass(cls)
        r.register_dataclass_node(cls, ["x", "y"], [])
        assert j.tree_util.tree_leaves(cls(1.0, 2.0)) == [1.0, 2.0]
