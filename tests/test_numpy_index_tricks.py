"""pyjax.numpy mgrid, ogrid, r_ and c_ (pyjax/numpy/_index_tricks.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import pytest

from jax_compare import assert_case_matches, check

CASES = {
    "mgrid": lambda L: [L.mgrid[0:3, 0:4], L.mgrid[0:1:5j]],
    "ogrid": lambda L: L.ogrid[0:3, 1:4],
    "r_": lambda L: [L.r_[1:4, 7, L.array([9, 9])], L.r_[0:1:3j, 2.0], L.r_["1", L.ones((2, 2)), L.zeros((2, 1))]],
    "c_": lambda L: L.c_[L.array([1, 2]), L.array([3, 4])],
    "mgrid_empty": lambda L: [L.mgrid[()], L.mgrid[3:0:-1]],
    # string directives "axis,ndmin,trans1d" (JAX's rotation rule for trans1d) and the matrix directives
    "r_directives": lambda L: [
        L.r_["-1", L.array([1, 2]), L.array([3])],
        L.r_["0,2", [1, 2, 3], [4, 5, 6]],
        L.r_["0,2,0", [1, 2, 3], [4, 5, 6]],
        L.r_["0,2,-2", [1, 2, 3], [4, 5, 6]],
        L.r_["1,3,1", [1, 2], [3, 4]],
        L.r_["0,3,0", L.ones((2, 3))],
        L.r_["0,2,0,7", [1, 2], [3, 4]],  # fields after the third are ignored
        L.r_["r", [1, 2, 3], [4, 5, 6]],
        L.r_["c", [1, 2, 3], [4, 5, 6]],
        L.r_["r", L.ones((2, 2)), L.zeros((1, 2))],
        L.r_[0:1:5j],
        L.r_[-1:5:1, 0, 0, L.array([1, 2, 3])],
    ],
    "c_directives": lambda L: [
        L.c_[L.arange(6).reshape(2, 3), L.arange(6).reshape(2, 3)],
        L.c_[L.array([1, 2, 3]), L.array([4, 5, 6])],
        L.c_["0,2", [1, 2, 3], [4, 5, 6]],
        L.c_["0,2,-1", [1, 2, 3], [4, 5, 6]],
        L.c_["r", [1, 2, 3], [4, 5, 6]],
        L.c_["c", [1, 2, 3], [4, 5, 6]],
        L.c_["0,3,1", L.ones((2, 3))],
        L.c_[0:3, 4:7],
        L.c_[0:1:3j, L.array([1, 2, 3])],
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name])


@pytest.mark.parametrize(
    "case",
    [
        lambda L: L.r_["a,b", L.ones(2)],  # could not understand directive
        lambda L: L.r_[L.ones(2), "0", L.ones(2)],  # string directive must be placed at the beginning
        lambda L: L.r_["0,2"],  # nothing to concatenate
        lambda L: L.c_[L.array([1, 2]), 0],  # a scalar becomes (1, 1): shapes differ
    ],
)
def test_errors_match_jax(case):
    check(lambda jax, jnp: case(jnp))


def test_jit_and_len():
    import jax

    import pyjax

    for np_ in (jax.numpy, pyjax.numpy):
        assert len(np_.r_) == 0 and len(np_.c_) == 0
    check(lambda jax, jnp: jax.jit(lambda x, y: jnp.c_["r", x, y])(jnp.ones(3), jnp.zeros(3)))
    check(lambda jax, jnp: jax.jit(lambda x: jnp.r_["0,2,0", x, x])(jnp.arange(3.0)))
