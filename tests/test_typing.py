"""pyjax.typing as JAX's jax.typing: unions usable in annotations and isinstance checks."""

from __future__ import annotations

import jax.typing
import numpy as np

import pyjax
import pyjax.numpy as jnp
import pyjax.typing as pt


def test_array_like_and_dtype_like():
    def f(x: pt.ArrayLike, d: pt.DTypeLike | None = None) -> pyjax.Array:
        return jnp.asarray(x, dtype=d)

    assert f.__annotations__  # annotations evaluate
    values = [np.ones(2), np.float32(1), True, 3, 2.5, 1j, [1, 2], "x", None]
    for v in values:
        assert isinstance(v, pt.ArrayLike) == isinstance(v, jax.typing.ArrayLike), v
    assert isinstance(jnp.ones(2), pt.ArrayLike) and isinstance(pyjax.jit(lambda v: v)(jnp.ones(2)), pt.ArrayLike)
    # (JAX's DTypeLike holds type[Any], which isinstance rejects: checked here by its definition)
    good = ["float32", np.float32, np.dtype("int8"), np.ones(2), jnp.float32, jnp.dtype("int8"), jnp.ones(2)]
    assert all(isinstance(d, pt.DTypeLike) for d in good)
    assert not any(isinstance(d, pt.DTypeLike) for d in [3, None, 2.5])
