"""lax shape helpers and reductions (collapse, split, stack, tile, broadcast_to_rank, reduce, ...;
pyjax/lax/shapes.py, reductions.py) against real JAX.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

M = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp, m: (jx.lax.broadcast_shapes((2, 1), (3,), (1, 1, 1)), jx.lax.broadcast_to_rank(m[0, 0], 3)),
        lambda jx, jnp, m: jx.lax.broadcast_shapes((2, 3), (4,)),
        lambda jx, jnp, m: (jx.lax.collapse(m, 1, 3), jx.lax.collapse(m, 0), jx.lax.broadcast_like(m[0, 0], m)),
        lambda jx, jnp, m: jx.lax.batch_matmul(m, jnp.swapaxes(m, 1, 2)),
        lambda jx, jnp, m: jx.lax.split(m, [1, 3], axis=2),
        lambda jx, jnp, m: jx.lax.split(m, [1, 1], axis=2),
        lambda jx, jnp, m: (jx.lax.stack([m[0], m[1]], 1), jx.lax.unstack(m, 2), jx.lax.tile(m, [1, 2, 1])),
        lambda jx, jnp, m: (jx.lax.empty((2, 3), jnp.int32).shape, str(jx.lax.dtype(m)), str(jx.lax.dtype(1.0))),
        lambda jx, jnp, m: jx.lax.index_take(m, jnp.array([[0, 1], [1, 3]]), (0, 2)),
        lambda jx, jnp, m: jx.lax.reduce(m, 0.0, jx.lax.add, (0, 2)),
        lambda jx, jnp, m: jx.lax.reduce(m.astype(jnp.int32), jnp.int32(-1000), jx.lax.max, (1,)),
        lambda jx, jnp, m: jx.lax.reduce(m, 1.0, jx.lax.mul, ()),
        lambda jx, jnp, m: jx.lax.reduce(
            (m[0, 0], jnp.arange(4)),
            (-jnp.inf, 0),
            lambda a, b: (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1])),
            (0,),
        ),
        lambda jx, jnp, m: jx.jit(lambda v: jx.lax.reduce(v, 0.0, jx.lax.add, (1,)))(m),
        lambda jx, jnp, m: jx.grad(lambda v: jx.lax.reduce(v, 0.0, jx.lax.add, (0, 1, 2)))(m),
        lambda jx, jnp, m: (jx.lax.approx_max_k(m, 2), jx.lax.approx_min_k(m, 1, reduction_dimension=1)),
        lambda jx, jnp, m: jx.lax.optimization_barrier((m, 2.0)),
        lambda jx, jnp, m: jx.grad(lambda v: jnp.sum(jx.lax.optimization_barrier(v) ** 2))(m),
    ],
)
def test_lax_shapes(backend, fn):
    check(fn, M)
