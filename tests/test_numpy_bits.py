"""jnp.packbits / unpackbits (pyjax/numpy/_bits.py) against real JAX."""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

# --- jax.numpy ----------------------------------------------------------------------------------


BITS = np.array(
    [[1, 0, 1, 1, 0, 0, 0, 0, 1, 1], [0, 1, 1, 0, 1, 0, 1, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]], np.int32
)


BYTES = np.array([[3, 255, 0], [128, 17, 64]], np.uint8)


@pytest.mark.parametrize(
    "fn,arg",
    [
        (lambda jx, jnp, a: jnp.packbits(a), BITS),
        (lambda jx, jnp, a: jnp.packbits(a, axis=1, bitorder="little"), BITS),
        (lambda jx, jnp, a: jnp.packbits(a > 0, axis=0), BITS),
        (lambda jx, jnp, a: jnp.packbits(a[0, 0]), BITS),
        (lambda jx, jnp, a: jnp.packbits(a.astype(jnp.float32)), BITS),
        (lambda jx, jnp, a: jnp.packbits(a, bitorder="middle"), BITS),
        (lambda jx, jnp, a: jnp.unpackbits(a), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, axis=0, bitorder="little"), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, axis=1, count=5), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, axis=-1, count=-3), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, count=60), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a.astype(jnp.int32)), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(jnp.packbits(a, axis=1), axis=1, count=10), BITS),
        (lambda jx, jnp, a: jx.jit(lambda b: jnp.packbits(b, axis=1))(a), BITS),
        (lambda jx, jnp, a: jx.vmap(lambda b: jnp.unpackbits(b))(a), BYTES),
    ],
)
def test_packbits_unpackbits(backend, fn, arg):
    check(fn, arg)
