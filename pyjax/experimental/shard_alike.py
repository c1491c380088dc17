"""pyjax.experimental.shard_alike: give x and y the same sharding. With one device every value has the
same placement already, so (x, y) come back as they are, after JAX's checks of matching structure and shapes."""

from __future__ import annotations

from pyjax.core.core import get_aval
from pyjax.core.pytree import tree_flatten

__all__ = ["shard_alike"]


def shard_alike(x, y):
    """(x, y) with equal shardings: checked like JAX's (same tree, same leaf shapes), unchanged in pyjax."""
    xl, xt = tree_flatten(x)
    yl, yt = tree_flatten(y)
    if xt != yt:
        raise ValueError(f"`x` and `y` should have the same tree structure. Got x: {xt}, y: {yt}")
    for a, b in zip(xl, yl):
        sa, sb = get_aval(a).shape, get_aval(b).shape
        if sa != sb:
            raise ValueError(
                f"The leaves shapes of `x` and `y` should match. Got `x` leaf shape: {sa} and `y` leaf shape: {sb}. "
                "File an issue at https://github.com/jax-ml/jax/issues if you want this feature."
            )
    return x, y
