"""jax.numpy window functions, i0, set operations, polynomials, small helpers and index helpers
(pyjax/numpy/_more.py) against real JAX: values, shapes and dtypes."""

from __future__ import annotations

import jax.numpy as jj
import numpy as np
import pytest

import pyjax.numpy as pj

A = np.array([1, 2, 3, 3, 5])
B = np.array([3, 1, 7])

CASES = {
    "bartlett": lambda L: [L.bartlett(m) for m in (0, 1, 5, 8)],
    "blackman": lambda L: [L.blackman(m) for m in (0, 1, 5, 8)],
    "hamming": lambda L: [L.hamming(m) for m in (1, 6)],
    "hanning": lambda L: [L.hanning(m) for m in (1, 7)],
    "kaiser": lambda L: L.kaiser(7, 4.0),
    "i0": lambda L: L.i0(L.array([0.0, 0.5, -3.0, 14.9, 15.1, 40.0, 80.0])),
    "i0_int": lambda L: L.i0(L.array([1, 2])),
    "diagflat": lambda L: L.diagflat(L.array([[1, 2], [3, 4]]), 1),
    "fromfunction": lambda L: L.fromfunction(lambda i, j: i + 2 * j, (3, 4)),
    "fromfunction_int": lambda L: L.fromfunction(lambda i, j: i + 2 * j, (3, 4), dtype=int),
    "matvec": lambda L: L.matvec(L.ones((2, 3, 4)), L.arange(4.0)),
    "vecmat": lambda L: L.vecmat(L.arange(3.0), L.ones((2, 3, 4))),
    "unstack": lambda L: L.unstack(L.arange(6).reshape(2, 3), axis=1),
    "rollaxis": lambda L: [L.rollaxis(L.ones((2, 3, 4, 5)), 3, 1), L.rollaxis(L.ones((2, 3, 4, 5)), 1, 4)],
    "put": lambda L: L.put(L.zeros(5), L.array([0, 2, 4]), L.array([1.0, 2.0]), inplace=False),
    "place": lambda L: L.place(L.zeros(5), L.array([1, 0, 1, 1, 0], bool), L.array([7.0, 8.0]), inplace=False),
    "union1d": lambda L: [L.union1d(A, B), L.union1d(A, B, size=7, fill_value=0)],
    "intersect1d": lambda L: [L.intersect1d(A, B), L.intersect1d(A, B, size=4)],
    "intersect1d_idx": lambda L: L.intersect1d(A, B, return_indices=True),
    "setdiff1d": lambda L: L.setdiff1d(A, B),
    "setxor1d": lambda L: L.setxor1d(A, B),
    "poly": lambda L: L.poly(L.array([1.0, 2.0, -3.0])),
    "polydiv": lambda L: L.polydiv(L.array([1.0, 3.0, 2.0, 5.0]), L.array([2.0, 1.0])),
    "polyfit": lambda L: L.polyfit(L.arange(6.0), L.arange(6.0) ** 2 - 1, 2),
    "polyfit_full": lambda L: L.polyfit(L.arange(6.0), L.arange(6.0) ** 2 - 1, 1, full=True),
    "frombuffer": lambda L: L.frombuffer(np.arange(4, dtype=np.float32).tobytes(), dtype=L.float32),
    "frombuffer_u8": lambda L: L.frombuffer(bytes([1, 2, 3, 4]), dtype=L.uint8, offset=1),
    "mgrid": lambda L: [L.mgrid[0:3, 0:4], L.mgrid[0:1:5j]],
    "ogrid": lambda L: L.ogrid[0:3, 1:4],
    "r_": lambda L: [L.r_[1:4, 7, L.array([9, 9])], L.r_[0:1:3j, 2.0], L.r_["1", L.ones((2, 2)), L.zeros((2, 1))]],
    "c_": lambda L: L.c_[L.array([1, 2]), L.array([3, 4])],
    "histogram2d": lambda L: L.histogram2d(
        L.array([0.0, 0.5, 1.0, 1.0, 2.0]), L.array([1.0, 2.0, 3.0, 3.0, 3.0]), bins=3
    ),
    "histogramdd": lambda L: [
        *L.histogramdd(L.stack([L.arange(6.0), L.arange(6.0) ** 2], 1), bins=[2, 3], density=True)[:1],
        *L.histogramdd(L.arange(8.0).reshape(4, 2), bins=2, range=[(0, 4), (1, 6)], weights=L.arange(4.0))[1],
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax(backend, name):
    got, want = CASES[name](pj), CASES[name](jj)
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want)
    tol = 1e-3 if name.startswith("polyfit") else 2e-5
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=tol, atol=tol)


def test_helpers_and_errors(backend):
    assert pj.s_[1:2, ::3] == jj.s_[1:2, ::3] and pj.index_exp[3] == jj.index_exp[3]
    assert pj.iterable([1]) and not pj.iterable(3)
    for k in ("real floating", "integral", ("bool", "signed integer"), "numeric"):
        for d in ("float32", "int32", "uint32", "bool"):
            assert pj.isdtype(getattr(pj, d), k) == jj.isdtype(getattr(jj, d), k)
    assert pj.array_str(pj.arange(3)) == "[0 1 2]"
    with pytest.raises(ValueError, match="in-place"):
        pj.put(pj.zeros(3), 0, 1.0)
    with pytest.raises(ValueError, match="in-place"):
        pj.place(pj.zeros(3), pj.ones(3, bool), 1.0)
    with pytest.raises(ValueError):
        pj.unstack(pj.float32(1))
