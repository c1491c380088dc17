"""pyjax.tree_util: pytree utilities (JAX's names).

Typed PRNG keys are leaves here, as in JAX (transformations, which use pyjax.core.pytree directly,
flatten them to their uint32 data instead)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyjax.core import pytree as _pt
from pyjax.core.pytree import (  # noqa: F401
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    KeyEntry,
    KeyPath,
    Partial,
    PyTreeDef,
    SequenceKey,
    flatten_one_level,
    flatten_one_level_with_keys,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    register_pytree_with_keys,
    register_pytree_with_keys_class,
    register_static,
    tree_transpose,
    tree_unflatten,
    treedef_children,
    treedef_is_leaf,
    treedef_tuple,
)

_leaf = _pt.public_is_leaf


def tree_flatten(tree: Any, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """(leaves, treedef) of tree; None is an empty node."""
    return _pt.tree_flatten(tree, _leaf(is_leaf))


def tree_leaves(tree: Any, is_leaf: Callable | None = None) -> list:
    """The leaves of tree, left to right."""
    return _pt.tree_leaves(tree, _leaf(is_leaf))


def tree_structure(tree: Any, is_leaf: Callable | None = None) -> PyTreeDef:
    """The treedef of tree."""
    return _pt.tree_structure(tree, _leaf(is_leaf))


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    """Apply f leafwise over tree (and the matching leaves of each tree in rest)."""
    return _pt.tree_map(f, tree, *rest, is_leaf=_leaf(is_leaf))


def tree_all(tree: Any, is_leaf: Callable | None = None) -> bool:
    """True when every leaf is truthy."""
    return _pt.tree_all(tree, _leaf(is_leaf))


def tree_reduce(function: Callable, tree: Any, initializer: Any = ..., is_leaf: Callable | None = None) -> Any:
    """functools.reduce over the leaves of tree."""
    return _pt.tree_reduce(function, tree, initializer, _leaf(is_leaf))


def tree_reduce_associative(operation: Callable, tree: Any, *, identity: Any = _pt._UNSPECIFIED, is_leaf=None) -> Any:
    """Reduce the leaves of tree with an associative operation, pairwise."""
    return _pt.tree_reduce_associative(operation, tree, identity=identity, is_leaf=_leaf(is_leaf))


def tree_broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """Replicate each leaf of prefix_tree over the matching subtree of full_tree."""
    return _pt.tree_broadcast(prefix_tree, full_tree, _leaf(is_leaf))


def all_leaves(iterable: Any, is_leaf: Callable | None = None) -> bool:
    """True when every element of iterable is a leaf."""
    return _pt.all_leaves(iterable, _leaf(is_leaf))


def tree_flatten_with_path(tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False):
    """Like tree_flatten, each leaf paired with its key path."""
    return _pt.tree_flatten_with_path(tree, _leaf(is_leaf, is_leaf_takes_path), is_leaf_takes_path)


def tree_leaves_with_path(tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False) -> list:
    """The (path, leaf) pairs of tree."""
    return _pt.tree_leaves_with_path(tree, _leaf(is_leaf, is_leaf_takes_path), is_leaf_takes_path)


def tree_map_with_path(f: Callable, tree: Any, *rest: Any, is_leaf=None, is_leaf_takes_path: bool = False) -> Any:
    """tree_map where f also receives each leaf's key path."""
    return _pt.tree_map_with_path(
        f, tree, *rest, is_leaf=_leaf(is_leaf, is_leaf_takes_path), is_leaf_takes_path=is_leaf_takes_path
    )


def is_tree_node(typ: Any) -> bool:
    """True when values of type typ are pytree nodes (not leaves)."""
    return _pt.is_tree_node(typ) and not (isinstance(typ, type) and issubclass(typ, _pt._array_like_nodes))


class PyTreeRegistry:
    """jax.tree_util.default_registry: the pytree node registry as an object (flatten, register_node, ...)."""

    def flatten(self, tree: Any, leaf_predicate: Callable | None = None) -> tuple[list, PyTreeDef]:
        """tree_flatten(tree, is_leaf=leaf_predicate)."""
        return tree_flatten(tree, is_leaf=leaf_predicate)

    def flatten_one_level(self, tree: Any) -> tuple | None:
        """(children, aux data) of a node; None for a leaf."""
        try:
            return flatten_one_level(tree)
        except ValueError:
            return None

    def flatten_one_level_with_keys(self, tree: Any) -> tuple | None:
        """((key, child) pairs, aux data) of a node; None for a leaf."""
        try:
            return flatten_one_level_with_keys(tree)
        except ValueError:
            return None

    def flatten_with_path(self, tree: Any, leaf_predicate: Callable | None = None) -> tuple:
        """tree_flatten_with_path(tree, is_leaf=leaf_predicate)."""
        return tree_flatten_with_path(tree, is_leaf=leaf_predicate)

    def is_node(self, x: Any) -> bool:
        """Whether x is a pytree node (not a leaf)."""
        return is_tree_node(type(x))

    def register_node(self, type_: type, to_iter: Callable, from_iter: Callable, to_iter_with_keys=None) -> None:
        """register_pytree_node (with keys when to_iter_with_keys is given)."""
        if to_iter_with_keys is None:
            register_pytree_node(type_, to_iter, from_iter)
        else:
            register_pytree_with_keys(type_, to_iter_with_keys, from_iter, to_iter)

    def register_dataclass_node(self, type_: type, data_fields: list, meta_fields: list) -> None:
        """register_dataclass(type_, data_fields, meta_fields)."""
        register_dataclass(type_, data_fields, meta_fields)


default_registry = PyTreeRegistry()
