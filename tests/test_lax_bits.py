"""lax.mulhi and lax.reduce_precision (pyjax/lax/bits.py) against real JAX."""

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
