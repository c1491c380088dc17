"""pyjax.experimental.random: JAX's stateful generator (stateful_rng, StatefulPRNG), a numpy-like API
over jax.random whose state is a Ref counter: each draw folds the counter into the base key and
increments it, so draws are JAX's bit for bit and keep updating under jit.
"""

from __future__ import annotations

import dataclasses
import operator
import secrets
from collections.abc import Sequence

from pyjax import numpy as jnp
from pyjax import random
from pyjax import ref as _ref
from pyjax.core import core
from pyjax.core.pytree import register_dataclass

__all__ = ["StatefulPRNG", "stateful_rng"]


def _size(size, *args) -> tuple:
    """The sample shape: the broadcast of the parameters' shapes when size is None, else size."""
    if size is None:
        return tuple(jnp.broadcast_shapes(*(jnp.shape(a) for a in args))) if args else ()
    if isinstance(size, int) or hasattr(size, "__index__"):
        return (operator.index(size),)
    return tuple(operator.index(s) for s in size)


@dataclasses.dataclass(frozen=True)
class StatefulPRNG:
    """A stateful generator: a typed base key and a Ref counter of the draws made (create with stateful_rng)."""

    _base_key: object
    _counter: object

    def key(self, shape: int | Sequence[int] = ()):
        """A fresh key (or keys of `shape`): the base key folded with the counter, which then advances."""
        if getattr(self._base_key, "shape", ()):
            raise ValueError("cannot operate on split stateful generator")
        k = random.fold_in(self._base_key, self._counter[...])
        _ref.addupdate(self._counter, ..., 1)
        shape = _size(shape)
        return random.split(k, shape) if shape else k

    def random(self, size=None, dtype=float):
        """Floats in [0, 1)."""
        return random.uniform(self.key(), shape=_size(size), dtype=dtype)

    def uniform(self, low=0, high=1, size=None, *, dtype=float):
        """Floats uniform in [low, high)."""
        return random.uniform(self.key(), _size(size, low, high), minval=low, maxval=high, dtype=dtype)

    def normal(self, loc=0, scale=1, size=None, *, dtype=float):
        """Normal samples with mean loc and standard deviation scale."""
        z = random.normal(self.key(), _size(size, loc, scale), dtype)
        return (jnp.asarray(loc) + jnp.asarray(scale) * z).astype(dtype)

    def integers(self, low, high=None, size=None, *, dtype=int):
        """Integers in [low, high) (or [0, low) when high is None)."""
        if high is None:
            low, high = 0, low
        return random.randint(self.key(), _size(size, low, high), minval=low, maxval=high, dtype=dtype)

    def split(self, num) -> StatefulPRNG:
        """One generator holding `num` independent ones (for vmap)."""
        return StatefulPRNG(self.key(num), _ref.new_ref(jnp.zeros(num, dtype=int)))

    def spawn(self, n_children: int) -> list[StatefulPRNG]:
        """A list of n_children independent generators."""
        return [StatefulPRNG(k, _ref.new_ref(0)) for k in self.key(n_children)]


register_dataclass(StatefulPRNG, data_fields=["_base_key", "_counter"], meta_fields=[])


def stateful_rng(seed=None, *, impl=None) -> StatefulPRNG:
    """A StatefulPRNG seeded with seed (fresh OS entropy when None, outside transformations only)."""
    if seed is None:
        if core.state.dynamic_trace is not None:
            raise TypeError(
                "When used within transformed code, jax.experimental.random.stateful_rng() requires an explicit seed to be set."
            )
        seed = secrets.randbits(63)
    return StatefulPRNG(random.key(seed, impl=impl), _ref.new_ref(0))
