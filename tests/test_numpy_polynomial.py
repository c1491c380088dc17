"""pyjax.numpy polynomials: polyval, polyadd/sub/mul/div, polyder, polyint, poly, polyfit, vander (pyjax/numpy/_polynomial.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from jax_compare import assert_case_matches, check, grad_check, rand

R = dict(rtol=2e-5, atol=2e-5)


X = rand((4, 5), 1)


V = rand((7,), 2)


# --- polynomials -------------------------------------------------------------------------------------


def test_polynomials(backend):
    p = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
    q = np.array([2.0, 1.0], np.float32)
    check(lambda lib, np_, c, x: np_.polyval(c, x), p, X, **R)
    check(lambda lib, np_, c: np_.polyval(c, 2), np.array([1, 2, 3], np.int32))
    check(lambda lib, np_, c, x: np_.polyval(c, x), p, np.float32(0.3), **R)
    grad_check(lambda lib, c, x: lib.numpy.polyval(c, x), p, X, argnums=(0, 1))
    for fn in ("polyadd", "polysub", "polymul"):
        check(lambda lib, np_, a, b: getattr(np_, fn)(a, b), p, q, **R)
        check(lambda lib, np_, a, b: getattr(np_, fn)(b, a), p, q, **R)
    check(lambda lib, np_, a, b: np_.polymul(a, b), np.array([1, 2], np.int32), np.array([3, 0, 1], np.int32))
    check(lambda lib, np_, a: np_.polymul(np_.array([0.0, 0.0, 1.0, 2.0]), a, trim_leading_zeros=True), q, **R)
    for m in (0, 1, 2, 3, 5):
        check(lambda lib, np_, a: np_.polyder(a, m), p, **R)
    check(lambda lib, np_, a: np_.polyder(a, 2), np.array([1, 2, 3, 4], np.int32))
    for m, k in ((1, None), (2, None), (2, 3.0), (2, [1.0, 2.0]), (0, None)):
        check(lambda lib, np_, a: np_.polyint(a, m, k), p, **R)
    grad_check(lambda lib, a: lib.numpy.polyint(a, 2, 1.0), p)
    for N, inc in ((None, False), (3, True), (6, False), (0, False)):
        check(lambda lib, np_, x: np_.vander(x, N, increasing=inc), V[:4], **R)
    check(lambda lib, np_, x: np_.vander(x), np.array([2, 3, -1], np.int32))
    check(lambda lib, np_, x: np_.vander(x), X)
    grad_check(lambda lib, x: lib.numpy.vander(x, 4), V[:4])


CASES = {
    "poly": lambda L: L.poly(L.array([1.0, 2.0, -3.0])),
    "polydiv": lambda L: L.polydiv(L.array([1.0, 3.0, 2.0, 5.0]), L.array([2.0, 1.0])),
    "polyfit": lambda L: L.polyfit(L.arange(6.0), L.arange(6.0) ** 2 - 1, 2),
    "polyfit_full": lambda L: L.polyfit(L.arange(6.0), L.arange(6.0) ** 2 - 1, 1, full=True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    assert_case_matches(CASES[name], tol=1e-3 if name.startswith("polyfit") else 2e-5)
