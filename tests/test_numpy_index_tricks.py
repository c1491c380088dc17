"""pyjax.numpy mgrid, ogrid, r_ and c_ (pyjax/numpy/_index_tricks.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import pytest

from jax_compare import assert_case_matches

CASES = {
    "mgrid": lambda L: [L.mgrid[0:3, 0:4], L.mgrid[0:1:5j]],
    "ogrid": lambda L: L.ogrid[0:3, 1:4],
    "r_": lambda L: [L.r_[1:4, 7, L.array([9, 9])], L.r_[0:1:3j, 2.0], L.r_["1", L.ones((2, 2)), L.zeros((2, 1))]],
    "c_": lambda L: L.c_[L.array([1, 2]), L.array([3, 4])],
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name])
