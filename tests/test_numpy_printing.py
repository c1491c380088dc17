"""Print options, array_str / array_repr and fromstring against real JAX."""

from __future__ import annotations

import pytest

import pyjax.numpy as pjnp

from jax_compare import printed


def test_printoptions_and_strings(backend, capsys):
    def run(jx, jnp):
        x = jnp.array([1.23456789, 1e-9, 3.0])
        with jnp.printoptions(precision=3, suppress=True):
            print(x, repr(x))
            jx.debug.print("{}", x)
            print(jnp.get_printoptions()["precision"])
        print(x)
        print(jnp.fromstring("1 2  3", dtype=jnp.int32, sep=" "), jnp.fromstring("1.5, -2", sep=","))

    out = printed(capsys, run)
    assert out["pyjax"] == out["jax"]
    with pytest.raises(NotImplementedError):
        pjnp.fromiter(iter([1, 2]), dtype=float)
    old = pjnp.get_printoptions()["threshold"]
    pjnp.set_printoptions(threshold=5)
    try:
        assert "..." in str(pjnp.arange(10))
    finally:
        pjnp.set_printoptions(threshold=old)
    assert "..." not in str(pjnp.arange(10))
