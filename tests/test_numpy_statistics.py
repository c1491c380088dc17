"""pyjax.numpy bincount, histograms, digitize, cov and corrcoef (pyjax/numpy/_statistics.py) against real JAX: values, dtypes, gradients where
differentiable, and errors.
"""

from __future__ import annotations

import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from jax_compare import assert_case_matches, check, grad_check, rand

R = dict(rtol=2e-5, atol=2e-5)


X = rand((4, 5), 1)


XI = np.arange(20, dtype=np.int32).reshape(4, 5) % 7


V = rand((7,), 2)


def test_bincount(backend):
    x = np.array([0, 1, 1, 3, 2, 1, 7], np.int32)
    w = rand((7,), 5)
    check(lambda lib, np_, a: np_.bincount(a), x)
    check(lambda lib, np_, a: np_.bincount(a, minlength=10), x)
    check(lambda lib, np_, a, b: np_.bincount(a, b), x, w, **R)
    check(lambda lib, np_, a: np_.bincount(a, length=4), x)
    check(lambda lib, np_, a: np_.bincount(a - 2, length=5), x)
    check(lambda lib, np_, a: lib.jit(lambda u: np_.bincount(u, length=9))(a), x)
    check(lambda lib, np_, a: np_.bincount(a.astype(np_.float32)), x)
    check(lambda lib, np_, a: np_.bincount(a > 1, length=3), x)  # booleans count as 0 and 1
    grad_check(lambda lib, b: lib.numpy.bincount(pjnp.asarray(x) if lib is pyjax else jjnp.asarray(x), b, length=8), w)
    with pytest.raises(Exception):
        pyjax.jit(lambda u: pjnp.bincount(u))(pjnp.asarray(x))


@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(bins=4),
        dict(bins=5, range=(-1.0, 1.0)),
        dict(bins=[-2.0, -0.5, 0.0, 3.0]),
        dict(bins=3, density=True),
        dict(bins=6, weights="w"),
    ],
)
def test_histogram(backend, kw):
    a = rand((40,), 6)
    w = np.abs(rand((40,), 7))
    kw = {k: (w if v == "w" else v) for k, v in kw.items()}
    if isinstance(kw.get("bins"), list):
        kw["bins"] = np.array(kw["bins"], np.float32)

    def f(lib, np_, x):
        k = {key: (np_.asarray(v) if isinstance(v, np.ndarray) else v) for key, v in kw.items()}
        return np_.histogram(x, **k)

    check(f, a, **R)
    check(
        lambda lib, np_, x: np_.histogram_bin_edges(
            x, bins=kw.get("bins", 10) if not isinstance(kw.get("bins"), np.ndarray) else 7
        ),
        a,
        **R,
    )
    check(lambda lib, np_, x: np_.histogram(x.astype(np_.int32), bins=3), a * 3, **R)
    check(lambda lib, np_, x: np_.histogram(x * 0 + 1.0, bins=4), a, **R)


def test_digitize_searchsorted_exist(backend):
    check(lambda lib, np_, x: np_.digitize(x, np_.array([-1.0, 0.0, 1.0])), V)


# --- statistics -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(rowvar=False),
        dict(bias=True),
        dict(ddof=2),
        dict(y="y"),
        dict(fweights="f"),
        dict(aweights="a"),
        dict(fweights="f", aweights="a", ddof=0),
        dict(fweights="f", aweights="a"),
    ],
)
def test_cov_corrcoef(backend, kw):
    y = rand((2, 5), 8)
    f = np.array([1, 2, 1, 3, 1], np.int32)
    aw = np.abs(rand((5,), 9)) + 0.1

    def args(np_):
        return {k: {"y": np_.asarray(y), "f": np_.asarray(f), "a": np_.asarray(aw)}.get(v, v) for k, v in kw.items()}

    check(lambda lib, np_, x: np_.cov(x, **args(np_)), X, rtol=1e-4, atol=1e-5)
    grad_check(lambda lib, x: lib.numpy.cov(x, **args(lib.numpy)), X)
    if set(kw) <= {"rowvar", "y"}:
        check(lambda lib, np_, x: np_.corrcoef(x, **args(np_)), X, rtol=1e-4, atol=1e-5)
        grad_check(lambda lib, x: lib.numpy.corrcoef(x, **args(lib.numpy)), X)


def test_cov_shapes_and_dtypes(backend):
    check(lambda lib, np_, x: np_.cov(x[0]), X, **R)
    check(lambda lib, np_, x: np_.cov(x), XI, **R)
    check(lambda lib, np_, x: np_.corrcoef(x[0]), X, **R)
    check(lambda lib, np_, x: np_.cov(x, dtype=np_.float32), XI, **R)
    check(lambda lib, np_, x: np_.cov(x[None]), X)


CASES = {
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
    assert_case_matches(CASES[name])
