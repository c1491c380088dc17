"""pyjax.numpy frexp, ldexp, modf, spacing and i0 (pyjax/numpy/_floating.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from jax_compare import assert_case_matches, check, grad_check


def test_frexp_ldexp_modf_spacing(backend):
    # (subnormal inputs are left out: XLA on CPU flushes them, numpy does not)
    x = np.array([0.0, -0.0, 1.0, -3.5, 0.3, 1.5e-38, -2e-30, 6e37, np.inf, -np.inf, np.nan, 1024.0], np.float32)
    check(lambda lib, np_, a: np_.frexp(a), x)
    check(lambda lib, np_, a: np_.frexp(a.astype(np_.float16)), x[[0, 2, 3, 4, 8, 10]])
    check(lambda lib, np_, a: np_.frexp(a), np.array([0, 3, -12], np.int32))
    m = np.array([0.5, -0.75, 0.3, 1.0, 0.0, 1.5], np.float32)
    e = np.array([1, -3, 130, -140, 5, 127], np.int32)
    check(lambda lib, np_, a, b: np_.ldexp(a, b), m, e)
    check(lambda lib, np_, a, b: np_.ldexp(a, b), np.array([1, 2, 3], np.int32), np.array([2, -1, 0], np.int32))
    check(lambda lib, np_, a: np_.ldexp(a, 1.5), m)
    grad_check(lambda lib, a: lib.numpy.ldexp(a, lib.numpy.asarray(e[:4] % 5)), m[:4])
    y = np.array([1.5, -2.25, 0.0, -0.0, 3.0, -7.75, 1e10], np.float32)
    check(lambda lib, np_, a: np_.modf(a), y)
    check(lambda lib, np_, a: np_.modf(a), np.array([3, -4], np.int32))
    grad_check(lambda lib, a: lib.numpy.modf(a)[0], y)
    check(lambda lib, np_, a: np_.spacing(a), np.array([1.0, -1.0, 1e10, -3.5, 1e-3], np.float32))


CASES = {
    "i0": lambda L: L.i0(L.array([0.0, 0.5, -3.0, 14.9, 15.1, 40.0, 80.0])),
    "i0_int": lambda L: L.i0(L.array([1, 2])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name])
