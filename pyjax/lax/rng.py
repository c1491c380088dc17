"""rng_bit_generator and RandomAlgorithm."""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any

from pyjax.core import dtypes

__all__ = ["RandomAlgorithm", "rng_bit_generator"]


class RandomAlgorithm(enum.IntEnum):
    """Bit-generator algorithms of XLA's RngBitGenerator (for rng_bit_generator)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


# --- rng_bit_generator ----------------------------------------------------------------------------


def rng_bit_generator(
    key: Any, shape: Sequence[int], dtype: Any = dtypes.uint32, algorithm: RandomAlgorithm = RandomAlgorithm.RNG_DEFAULT
) -> tuple:
    """XLA's RngBitGenerator: not available in pyjax, since its bits could not be matched with
    XLA's (Philox 4x32-10 on CPU) bit for bit; use pyjax.random, which is bit-exact with JAX."""
    RandomAlgorithm(algorithm)
    raise NotImplementedError(
        f"lax.rng_bit_generator ({RandomAlgorithm(algorithm)}) is not implemented in pyjax: its output "
        "could not be made bit-exact with XLA's. Use pyjax.random (bit-exact with jax.random) instead."
    )
