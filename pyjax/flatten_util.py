"""`ravel_pytree`: a pytree of arrays as one flat vector and back (JAX's jax.flatten_util), for
optimizers and solvers that work on vectors."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pyjax import numpy as jnp
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.lax import lax

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """(flat, unravel): the leaves raveled and concatenated in one 1-D array of their common dtype,
    and the function that maps such a vector back to the pytree (leaves cast back to their dtypes)."""
    leaves, tree = tree_flatten(pytree)
    leaves = [jnp.asarray(x) for x in leaves]
    shapes = [x.shape for x in leaves]
    dts = [x.dtype for x in leaves]
    dt = jnp.result_type(*leaves) if leaves else jnp.float32
    flat = jnp.concatenate([jnp.ravel(x).astype(dt) for x in leaves]) if leaves else jnp.zeros((0,), dt)
    sizes = [math.prod(s) for s in shapes]
    total = sum(sizes)

    def unravel(vec: Any) -> Any:
        vec = jnp.asarray(vec)
        if vec.shape != (total,):
            raise ValueError(f"The unravel function expected an array of shape {(total,)}, got shape {vec.shape}.")
        out, start = [], 0
        for shape, size, d in zip(shapes, sizes, dts):
            piece = lax.slice(vec, (start,), (start + size,)).reshape(shape)
            out.append(piece if piece.dtype == d else piece.astype(d))
            start += size
        return tree_unflatten(tree, out)

    return flat, unravel
