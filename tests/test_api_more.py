"""More of JAX's API against real JAX: key paths in tree_util (keystr, DictKey, SequenceKey, GetAttrKey,
FlattenedIndexKey, tree_*_with_path, register_static) and disable_jit, named_call, clear_caches,
typeof, ensure_compile_time_eval."""

from __future__ import annotations

import collections
import dataclasses
from typing import NamedTuple

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax import tree_util as ptu

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


# --- top-level helpers ----------------------------------------------------------------------------------


def test_disable_jit_runs_python_each_call():
    def run(jx, n):
        seen = []

        @jx.jit
        def f(x):
            seen.append(type(x).__name__ if isinstance(x, jx.Array) else "other")
            seen.append(float(x.sum()))  # concrete under disable_jit
            return x * 2

        with jx.disable_jit():
            outs = [np.asarray(f(n.ones(3) * i)) for i in range(3)]
        return seen, outs

    pseen, pouts = run(pyjax, pjnp)
    jseen, jouts = run(jax, jjnp)
    assert [s for s in pseen if isinstance(s, float)] == [s for s in jseen if isinstance(s, float)] == [0.0, 3.0, 6.0]
    for a, b in zip(pouts, jouts):
        np.testing.assert_array_equal(a, b)


def test_disable_jit_restores_and_traces_again():
    calls = []

    @pyjax.jit
    def f(x):
        calls.append(1)
        return x + 1

    with pyjax.disable_jit():
        f(pjnp.ones(2))
        f(pjnp.ones(2))
    assert len(calls) == 2
    f(pjnp.ones(2))
    f(pjnp.ones(2))
    assert len(calls) == 3  # traced once, then cached
    with pyjax.disable_jit(False):
        f(pjnp.ones(2))
    assert len(calls) == 3
    with pyjax.disable_jit():
        g = pyjax.grad(lambda x: f(x).sum())(pjnp.ones(2))
    np.testing.assert_array_equal(np.asarray(g), np.asarray(jax.grad(lambda x: (x + 1).sum())(jjnp.ones(2))))


def test_clear_caches_retraces():
    calls = []

    @pyjax.jit
    def f(x):
        calls.append(1)
        return x * 3

    f(pjnp.ones(2))
    f(pjnp.ones(2))
    assert len(calls) == 1
    assert pyjax.clear_caches() is None
    np.testing.assert_array_equal(np.asarray(f(pjnp.ones(2))), [3, 3])
    assert len(calls) == 2


def test_named_call():
    def g(x):
        return x * 2 + 1

    h = pyjax.named_call(g, name="my_g")
    np.testing.assert_allclose(
        np.asarray(h(pjnp.arange(3.0))), np.asarray(jax.named_call(g, name="my_g")(jjnp.arange(3.0)))
    )
    np.testing.assert_allclose(np.asarray(pyjax.jit(h)(pjnp.arange(3.0))), [1, 3, 5])


@pytest.mark.parametrize(
    "make",
    [
        lambda n: n.ones((2, 3)),
        lambda n: n.arange(4),
        lambda n: 1.0,
        lambda n: 3,
        lambda n: np.zeros(2, np.float32),
        lambda n: n.array(True),
    ],
)
def test_typeof(make):
    p, j = pyjax.typeof(make(pjnp)), jax.typeof(make(jjnp))
    assert (p.shape, str(p.dtype), p.weak_type) == (j.shape, str(j.dtype), j.weak_type)


def test_typeof_under_trace():
    box = []

    def f(x):
        box.append(pyjax.typeof(x))
        return x

    pyjax.jit(f)(pjnp.ones((2, 2), pjnp.int32))
    assert box[0].shape == (2, 2) and str(box[0].dtype) == "int32"


def test_ensure_compile_time_eval():
    @pyjax.jit
    def f(x):
        with pyjax.ensure_compile_time_eval():
            c = pjnp.arange(3.0) * 2
        return x + c

    np.testing.assert_allclose(np.asarray(f(pjnp.ones(3))), [1, 3, 5])
