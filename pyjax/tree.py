"""pyjax.tree: the short pytree API of `jax.tree` (`pyjax.tree.map(f, tree)` and friends)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from pyjax import tree_util as _pt  # its public functions: typed PRNG keys are leaves
from pyjax.core import pytree as _core_pt
from pyjax.core.pytree import PyTreeDef

__all__ = ["all", "flatten", "leaves", "map", "reduce", "structure", "transpose", "unflatten", "broadcast"]
__all__ += ["flatten_with_path", "leaves_with_path", "map_with_path", "reduce_associative", "static"]


def map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:  # noqa: A001
    """Apply f leafwise over tree (and the matching leaves of each tree in rest)."""
    return _pt.tree_map(f, tree, *rest, is_leaf=is_leaf)


def leaves(tree: Any, is_leaf: Callable | None = None) -> list:
    """The leaves of tree, left to right."""
    return _pt.tree_leaves(tree, is_leaf=is_leaf)


def flatten(tree: Any, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
    """(leaves, treedef) of tree; unflatten(treedef, leaves) rebuilds it."""
    return _pt.tree_flatten(tree, is_leaf=is_leaf)


def unflatten(treedef: PyTreeDef, leaves: Any) -> Any:
    """Rebuild a tree of structure treedef from leaves."""
    return _pt.tree_unflatten(treedef, leaves)


def structure(tree: Any, is_leaf: Callable | None = None) -> PyTreeDef:
    """The treedef of tree."""
    return _pt.tree_structure(tree, is_leaf=is_leaf)


def reduce(function: Callable, tree: Any, initializer: Any = ..., is_leaf: Callable | None = None) -> Any:
    """functools.reduce over the leaves of tree."""
    return _pt.tree_reduce(function, tree, initializer, is_leaf=is_leaf)


def all(tree: Any, *, is_leaf: Callable | None = None) -> bool:  # noqa: A001
    """True when every leaf of tree is truthy."""
    return _pt.tree_all(tree, is_leaf=is_leaf)


def transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any) -> Any:
    """Swap the outer and inner structure of a tree of trees (inner_treedef None: taken from the first subtree)."""
    if inner_treedef is None:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not subtrees:
            raise ValueError("tree.transpose needs inner_treedef when the outer tree has no leaves")
        inner_treedef = _pt.tree_structure(subtrees[0])
    return _pt.tree_transpose(outer_treedef, inner_treedef, pytree_to_transpose)


def broadcast(prefix_tree: Any, full_tree: Any, is_leaf: Callable | None = None) -> Any:
    """Replicate each leaf of prefix_tree over the matching subtree of full_tree."""
    return _pt.tree_broadcast(prefix_tree, full_tree, is_leaf=is_leaf)


def flatten_with_path(tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False):
    """([(key path, leaf), ...], treedef) of tree."""
    return _pt.tree_flatten_with_path(tree, is_leaf=is_leaf, is_leaf_takes_path=is_leaf_takes_path)


def leaves_with_path(tree: Any, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False) -> list:
    """[(key path, leaf), ...] of tree."""
    return _pt.tree_leaves_with_path(tree, is_leaf=is_leaf, is_leaf_takes_path=is_leaf_takes_path)


def map_with_path(
    f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None, is_leaf_takes_path: bool = False
) -> Any:
    """Apply f(path, leaf, *others) leafwise."""
    return _pt.tree_map_with_path(f, tree, *rest, is_leaf=is_leaf, is_leaf_takes_path=is_leaf_takes_path)


def reduce_associative(
    operation: Callable, tree: Any, *, identity: Any = _core_pt._UNSPECIFIED, is_leaf: Callable | None = None
) -> Any:
    """Reduce the leaves of tree with an associative operation."""
    return _pt.tree_reduce_associative(operation, tree, identity=identity, is_leaf=is_leaf)


def static(**kwargs: Any):
    """A dataclasses.field marked static: register_dataclass keeps it in the treedef, not the leaves."""
    metadata = {"static": True, **(kwargs.pop("metadata", None) or {})}
    return dataclasses.field(metadata=metadata, **kwargs)
