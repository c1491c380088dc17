"""pyjax.numpy matvec and vecmat (pyjax/numpy/_products.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import pytest

from jax_compare import assert_case_matches

CASES = {
    "matvec": lambda L: L.matvec(L.ones((2, 3, 4)), L.arange(4.0)),
    "vecmat": lambda L: L.vecmat(L.arange(3.0), L.ones((2, 3, 4))),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name])
