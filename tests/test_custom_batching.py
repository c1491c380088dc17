"""jax.custom_batching (custom_vmap, sequential_vmap) against real JAX on every backend: the rule
runs under vmap (once, for nested vmaps too), jit, jvp and vmap of jvp go through it, reverse mode
and malformed rules raise as in JAX."""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

X = np.arange(3.0, dtype=np.float32)


def _f(jax):
    """sin(x) * y, whose vmap rule computes cos(x) * y instead (so the rule's use shows)."""

    @jax.custom_batching.custom_vmap
    def f(x, y):
        return jax.numpy.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, x, y):
        assert axis_size == 3
        return jax.numpy.cos(x) * y, in_batched[0] or in_batched[1]

    return f


CASES = {
    "call": lambda jax, f, x: f(x, 2.0),
    "vmap": lambda jax, f, x: jax.vmap(f, (0, None))(x, 2.0),
    "vmap_y": lambda jax, f, x: jax.vmap(f, (None, 0))(1.5, x),
    "jit_vmap": lambda jax, f, x: jax.jit(jax.vmap(f, (0, None)))(x, 2.0),
    "nested_vmap": lambda jax, f, x: jax.vmap(jax.vmap(f, (0, None)), (None, 0))(x, x + 1.0),
    "jvp": lambda jax, f, x: jax.jvp(f, (1.0, 2.0), (1.0, 0.5)),
    "vmap_of_jvp": lambda jax, f, x: jax.vmap(lambda a: jax.jvp(f, (a, 2.0), (1.0, 0.0)))(x),
    "vmap_of_jvp_tangent": lambda jax, f, x: jax.vmap(lambda t: jax.jvp(f, (1.0, 2.0), (t, 0.0)))(x),
    "jit_vmap_of_jvp": lambda jax, f, x: jax.jit(jax.vmap(lambda a: jax.jvp(f, (a, 2.0), (1.0, 0.0))))(x),
    "grad": lambda jax, f, x: jax.grad(f)(1.0, 2.0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_custom_vmap(backend, case):
    check(lambda jax, jnp, x: CASES[case](jax, _f(jax), x), X)


def test_sequential_vmap(backend):
    def prog(jax, jnp, x):
        g = jax.custom_batching.sequential_vmap(lambda v, s: {"a": v * s, "b": jnp.sum(v)})
        return jax.vmap(g, (0, None))(x, 3.0), jax.vmap(g, (None, 0))(x[0], x[:, 0]), g(x[0], 2.0)

    check(prog, np.arange(12.0, dtype=np.float32).reshape(3, 4))


@pytest.mark.parametrize("bad", ["no_rule", "spec_structure", "not_a_pair"])
def test_custom_vmap_errors(backend, bad):
    def prog(jax, jnp, x):
        @jax.custom_batching.custom_vmap
        def k(v):
            return v * 2

        if bad != "no_rule":

            @k.def_vmap
            def rule(n, batched, v):
                if bad == "spec_structure":
                    return v, [True]
                return v

        return jax.vmap(k)(x)

    check(prog, X)


def test_custom_vmap_keywords_and_closure(backend):
    def prog(jax, jnp, x):
        @jax.custom_batching.custom_vmap
        def kw(v, scale=3.0):
            return v * scale + x[1]  # closes over an unbatched array

        @kw.def_vmap
        def rule(n, batched, v, scale):
            return v * scale + 1, batched[0]

        return jax.vmap(lambda v: kw(v, scale=2.0))(x), kw(x, scale=2.0), jax.jit(jax.vmap(kw))(x)

    check(prog, X)


@pytest.mark.parametrize("bad", ["wrong_shape", "batched_closure"])
def test_custom_vmap_rule_misuse(bad):
    """Where JAX fails inside (IndexError, AssertionError), pyjax names the function and the problem."""
    import pyjax
    import pyjax.numpy as jnp

    x = jnp.arange(3.0)

    def outer(a):
        @pyjax.custom_batching.custom_vmap
        def k(v):
            return v * 2 + (a if bad == "batched_closure" else 1.0)

        k.def_vmap(lambda n, b, v: (v[0], True) if bad == "wrong_shape" else (v, b[0]))
        return k(a * 2)

    msg = "declared batched" if bad == "wrong_shape" else "closes over a value batched"
    with pytest.raises(ValueError, match=msg):
        pyjax.vmap(outer)(x)
