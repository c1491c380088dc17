"""lax special functions (igamma, igammac, betainc, zeta, polygamma, bessel_i0e / i1e; pyjax/lax/special.py)
against real JAX: values and gradients.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

# --- lax extras ----------------------------------------------------------------------------------------

A4 = np.array([0.5, 1.0, 2.5, 7.0], np.float32)


X4 = np.array([0.3, 1.2, 2.0, 9.0], np.float32)


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp, a, x: (jx.lax.igamma(a, x), jx.lax.igammac(a, x)),
        lambda jx, jnp, a, x: jx.lax.igamma_grad_a(a, x),
        lambda jx, jnp, a, x: jx.lax.random_gamma_grad(a, x),
        lambda jx, jnp, a, x: jx.lax.betainc(a, a + 1.0, x / 10.0),
        lambda jx, jnp, a, x: jx.lax.polygamma(jnp.array([1.0, 2.0, 0.0, 3.0]), x + 0.5),
        lambda jx, jnp, a, x: jx.lax.polygamma(jnp.array([0.5, -1.0, 1.5, 2.0]), x + 0.5),  # non-integer: NaN
        lambda jx, jnp, a, x: jx.lax.zeta(x + 1.5, a),
        lambda jx, jnp, a, x: (jx.lax.bessel_i0e(x - 3.0), jx.lax.bessel_i1e(3.0 - x)),
        lambda jx, jnp, a, x: jx.grad(lambda v: jnp.sum(jx.lax.igamma(a, v) + jx.lax.bessel_i0e(v)))(x),
        lambda jx, jnp, a, x: jx.grad(lambda v: jnp.sum(jx.lax.igammac(v, x)))(a),
        lambda jx, jnp, a, x: jx.grad(lambda v: jnp.sum(jx.lax.betainc(2.0, 1.5, v / 10.0)))(x),
        lambda jx, jnp, a, x: jx.lax.igamma(a.astype(jnp.int32), x),
        lambda jx, jnp, a, x: jx.lax.zeta(a, x.astype(jnp.float16)),
    ],
)
def test_lax_special(backend, fn):
    check(fn, A4, X4, rtol=2e-4, atol=1e-5)
