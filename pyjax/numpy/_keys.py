"""jnp's shape functions over typed PRNG key arrays (dtype key<fry>), which JAX lets them move like
any array: they act on the keys' uint32 data, whose trailing key-word axis stays last, and wrap the
result back into keys. Arithmetic on keys stays a TypeError (see pyjax/_prng.py).

Each function here takes the jnp function it lifts (`fn`) from its caller, the topic module that
defines it, so this module sits below them all and imports only _promotion (asarray, broadcasting,
stacking)."""

from __future__ import annotations

import functools
from typing import Any

from pyjax._prng import KEY_DTYPE, PRNGKeyArray  # noqa: F401  (re-exported for the numpy topic modules)
from pyjax._prng import key_words as _data
from pyjax.core.pytree import tree_map
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.numpy._promotion import _stack, asarray, broadcast_to


def any_key(*xs: Any) -> bool:
    """True when one of xs (or of the sequence xs[0]) is a typed key array."""
    if len(xs) == 1 and isinstance(xs[0], (list, tuple)):
        xs = tuple(xs[0])
    return any(isinstance(x, PRNGKeyArray) for x in xs)


def concatenate(arrays, axis, fn) -> PRNGKeyArray:
    """fn: jnp.concatenate."""
    if axis is None:
        arrays, axis = [a.ravel() for a in arrays], 0
    if arrays[0].ndim == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    datas = [_data(a) for a in arrays]
    return PRNGKeyArray(fn(datas, axis=canonical_axis(axis, arrays[0].ndim, "concatenate")))


def where(condition, x, y, fn) -> PRNGKeyArray:
    """fn: jnp.where."""
    c = asarray(condition)
    c = lax.expand_dims(c, [c.ndim])  # over the key-word axis too (jnp.expand_dims(c, -1))
    return PRNGKeyArray(fn(c, _data(x), _data(y)))


def expand_dims(a: PRNGKeyArray, axis, fn) -> PRNGKeyArray:
    """fn: jnp.expand_dims."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = a.ndim + len(axes)
    return PRNGKeyArray(fn(a._data, tuple(canonical_axis(x, nd, "expand_dims") for x in axes)))


def take(a: PRNGKeyArray, indices, axis, fn, **kwargs) -> PRNGKeyArray:
    """fn: jnp.take."""
    if axis is None:
        a, axis = a.ravel(), 0
    return PRNGKeyArray(fn(a._data, indices, axis=canonical_axis(axis, a.ndim, "take"), **kwargs))


def lifted(fn):
    """fn, which only moves elements (flip, roll, tile, ...), also over a typed key array as its first
    argument: applied to each of the two key words, and the results restacked into keys."""

    @functools.wraps(fn)
    def wrapper(a, *args, **kwargs):
        if not isinstance(a, PRNGKeyArray):
            return fn(a, *args, **kwargs)
        w0, w1 = (fn(a._data[..., i], *args, **kwargs) for i in range(2))
        return tree_map(lambda x, y: PRNGKeyArray(_stack([x, y], axis=-1)), w0, w1)

    return wrapper


def full_like(a: PRNGKeyArray, fill: Any, dtype: Any, shape: Any, fn) -> Any:
    """zeros_like/ones_like/full_like/empty_like of keys: keys whose two words are `fill` (or the
    key `fill`); with a dtype, an ordinary array of that dtype. fn: jnp.full."""
    shape = a.shape if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
    if dtype is not None and dtype != KEY_DTYPE:
        return fn(shape, fill, dtype)
    if isinstance(fill, PRNGKeyArray):
        return broadcast_to(fill, shape)
    return PRNGKeyArray(fn(shape + (2,), fill, "uint32"))


def comparing(fn, op):
    """jnp.equal / not_equal: over keys, the key comparison of the == and != operators."""

    @functools.wraps(fn)
    def wrapper(x, y, /):
        return op(x, y) if any_key(x, y) else fn(x, y)

    return wrapper
