"""jax.flatten_util.ravel_pytree and the jax.errors module against real JAX."""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

TREE = {
    "w": np.arange(6.0, dtype=np.float32).reshape(2, 3),
    "b": (np.ones(2, np.int32), 2.5),
    "h": np.ones(3, np.float16),
    "none": None,
}


def _flatten_util(jax):
    import importlib

    return importlib.import_module(jax.__name__ + ".flatten_util")


def test_ravel_round_trip(backend):
    def prog(jax, jnp, tree):
        flat, unravel = _flatten_util(jax).ravel_pytree(tree)
        return flat, unravel(flat * 2), _flatten_util(jax).ravel_pytree([])[0]

    check(prog, TREE)


def test_ravel_under_jit_and_grad(backend):
    def prog(jax, jnp, w):
        params = {"w": w, "b": jnp.zeros(3)}
        flat, unravel = _flatten_util(jax).ravel_pytree(params)

        def loss(v):
            p = unravel(v)
            return jnp.sum(jnp.tanh(p["w"]) ** 2) + jnp.sum(p["b"] + 1.0)

        return jax.jit(jax.grad(loss))(flat), jax.jit(lambda v: _flatten_util(jax).ravel_pytree(unravel(v))[0])(flat)

    check(prog, TREE["w"])


def test_unravel_bad_shape(backend):
    def prog(jax, jnp, w):
        _, unravel = _flatten_util(jax).ravel_pytree({"w": w})
        return unravel(jnp.ones(5))

    check(prog, TREE["w"])


def test_errors_module():
    import jax.errors as je

    import pyjax
    import pyjax.errors as pe
    import pyjax.numpy as jnp

    def bases(cls):
        return [b.__name__ for b in cls.__mro__ if not b.__name__.startswith("_")]

    for name in dir(je):
        if isinstance(getattr(je, name), type):
            assert bases(getattr(pe, name)) == bases(getattr(je, name)), name
    with pytest.raises(pe.TracerBoolConversionError):
        pyjax.jit(lambda x: 1 if x > 0 else 0)(jnp.ones(()))
    with pytest.raises(pe.ConcretizationTypeError):
        pyjax.jit(lambda x: jnp.zeros(int(x)))(jnp.ones(()))
