"""lax.mulhi and lax.reduce_precision (pyjax/lax/bits.py) against real JAX."""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

X4 = np.array([0.3, 1.2, 2.0, 9.0], np.float32)


INTS = np.array([-7, 123456789, -(2**31), 2**31 - 1, 0, -1], np.int32)


FLOATS = np.array([1.0, 3.14159, 65504.0, 1e-8, -1e30, np.nan, np.inf, 70000.0, -0.0, 1e-40], np.float32)


@pytest.mark.parametrize(
    "fn,args",
    [
        (lambda jx, jnp, i: jx.lax.mulhi(i, i[::-1]), (INTS,)),
        (lambda jx, jnp, i: jx.lax.mulhi(i.astype(jnp.uint32), jnp.uint32(4000000000)), (INTS,)),
        (lambda jx, jnp, i: jx.lax.mulhi(i.astype(jnp.int8), jnp.int8(100)), (INTS,)),
        (lambda jx, jnp, i: jx.lax.mulhi(i.astype(jnp.uint16), i.astype(jnp.uint16)), (INTS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f, 5, 10), (FLOATS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f, 8, 7), (FLOATS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f, 4, 3), (FLOATS,)),
        (lambda jx, jnp, f: jx.jit(lambda v: jx.lax.reduce_precision(v, 8, 23))(f), (FLOATS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f.astype(jnp.int32), 8, 7), (X4,)),
    ],
)
def test_lax_bits(backend, fn, args):
    check(fn, *args)
