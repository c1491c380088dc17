"""lax special functions (igamma, igammac, betainc, zeta, polygamma, bessel_i0e / i1e; pyjax/lax/special.py)
against real JAX: values and gradients.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

# --- jax.debug.print / jax.debug.callback -------------------------------------------------------------


def _loop_print(jx, jnp):
    def body(i, c):
        jx.debug.print("i={i} c={c:.2f}", i=i, c=c)
        return c * 1.5 + i

    return jx.jit(lambda x: jx.lax.fori_loop(0, 3, body, x))(jnp.float32(1.0))


PRINT_CASES = {
    "eager": lambda jx, jnp: jx.debug.print(
        "x={x} y={} {z:.3f}", jnp.arange(3.0), x=jnp.float32(1.5), z=jnp.float32(2)
    ),
    "jit": lambda jx, jnp: jx.jit(lambda x: jx.debug.print("x={x} y={}", x * 2, x=x))(jnp.arange(3.0)),
    "jit_twice": lambda jx, jnp: [jx.jit(lambda x: jx.debug.print("{}", x + 1))(jnp.float32(v)) for v in (1, 2)],
    "vmap": lambda jx, jnp: jx.vmap(lambda x, y: jx.debug.print("v={} {}", x, y), in_axes=(0, None))(
        jnp.arange(3.0), 7
    ),
    "grad": lambda jx, jnp: jx.grad(lambda x: (jx.debug.print("g={}", x), x * x)[1])(3.0),
    "jit_grad": lambda jx, jnp: jx.jit(jx.grad(lambda x: (jx.debug.print("jg={}", x), jnp.sin(x))[1]))(0.5),
    "grad_jit": lambda jx, jnp: jx.grad(jx.jit(lambda x: (jx.debug.print("gj={}", x), x**3)[1]))(2.0),
    "jvp": lambda jx, jnp: jx.jvp(lambda x: (jx.debug.print("p={}", x), x * 2)[1], (1.0,), (1.0,)),
    "fori_loop": _loop_print,
    "no_placeholder": lambda jx, jnp: jx.debug.print("plain"),
    "static_str": lambda jx, jnp: jx.debug.print("{} and {}", "text", jnp.int32(4)),
    "two_call": lambda jx, jnp: jx.debug.print(ordered=True)("two {}", jnp.ones(2)),
}


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
