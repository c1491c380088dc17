"""lax.rng_bit_generator (pyjax/lax/rng.py)."""

from __future__ import annotations

import pytest

import pyjax


def test_rng_bit_generator_not_implemented():
    with pytest.raises(NotImplementedError, match="pyjax.random"):
        pyjax.lax.rng_bit_generator(pyjax.numpy.zeros(4, "uint32"), (3,))
