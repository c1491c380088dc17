"""pyjax.numpy extras vs JAX: values, dtypes, gradients where differentiable, and errors."""

from __future__ import annotations

import math

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from jax_compare import check

R = dict(rtol=2e-5, atol=2e-5)


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _grad_check(fn, *args, argnums=0, rtol=1e-4, atol=1e-4):
    """grad of sum(fn(...)**2) (or of fn if scalar) matches JAX."""

    def make(lib):
        def loss(*a):
            out = fn(lib, *a)
            return lib.numpy.sum(out * out)

        return lib.grad(loss, argnums=argnums)

    pj = make(pyjax)(*[pjnp.asarray(a) for a in args])
    jx = make(jax)(*[jjnp.asarray(a) for a in args])
    if isinstance(jx, tuple):
        for p, j in zip(pj, jx):
            np.testing.assert_allclose(np.asarray(p), np.asarray(j), rtol=rtol, atol=atol)
    else:
        np.testing.assert_allclose(np.asarray(pj), np.asarray(jx), rtol=rtol, atol=atol)


X = _rand((4, 5), 1)
XI = np.arange(20, dtype=np.int32).reshape(4, 5) % 7
V = _rand((7,), 2)


# --- differences and integrals ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "kw",
    [
        {},
        dict(n=2),
        dict(axis=0),
        dict(n=0),
        dict(prepend=1.0),
        dict(append=[[1.0], [2.0], [3.0], [4.0]]),
        dict(n=3, axis=0, prepend=0.5, append=2.0),
        dict(n=-1),
        dict(axis=2),
    ],
)
def test_diff(backend, kw):
    check(lambda lib, np_, x: np_.diff(x, **kw), X, **R)
    if ("n" not in kw or kw["n"] >= 0) and not isinstance(kw.get("append"), list):
        if kw.get("axis", 0) != 2:
            _grad_check(lambda lib, x: lib.numpy.diff(x, **kw), X)


def test_diff_dtypes(backend):
    check(lambda lib, np_, x: np_.diff(x), XI)
    check(lambda lib, np_, x: np_.diff(x > 3, axis=0), XI)
    check(lambda lib, np_, x: np_.diff(x[0, 0]), XI)
    check(lambda lib, np_, x: np_.ediff1d(x), XI)
    check(lambda lib, np_, x: np_.ediff1d(x, to_begin=-1, to_end=[7, 8]), XI)
    check(lambda lib, np_, x: np_.ediff1d(x, to_end=np_.array([0.5])), X, **R)


@pytest.mark.parametrize(
    "args,kw",
    [
        ((), {}),
        ((2.0,), {}),
        ((0.5, 2.0), {}),
        ((), dict(axis=1)),
        ((), dict(axis=(0,))),
        (("coords",), dict(axis=1)),
        ((), dict(axis=())),
        ((), dict(edge_order=2)),
    ],
)
def test_gradient(backend, args, kw):
    coords = np.array([0.0, 0.5, 1.5, 3.0, 3.2], np.float32)
    args = tuple(coords if a == "coords" else a for a in args)
    check(lambda lib, np_, x, *a: np_.gradient(x, *a, **kw), X, *args, **R)
    check(lambda lib, np_, x: np_.gradient(x[0]), XI, **R)
    if "edge_order" not in kw and kw.get("axis") != ():
        _grad_check(
            lambda lib, x: (
                lib.numpy.stack(lib.numpy.gradient(x, *args, **kw))
                if not isinstance(lib.numpy.gradient(x, *args, **kw), lib.Array)
                else lib.numpy.gradient(x, *args, **kw)
            ),
            X,
        )


def test_trapezoid_unwrap(backend):
    xs = np.cumsum(np.abs(_rand((5,), 3))).astype(np.float32)
    check(lambda lib, np_, y: np_.trapezoid(y), X, **R)
    check(lambda lib, np_, y: np_.trapezoid(y, dx=0.3, axis=0), X, **R)
    check(lambda lib, np_, y, x: np_.trapezoid(y, x), X, xs, **R)
    check(lambda lib, np_, y, x: np_.trapezoid(y, np_.broadcast_to(x, y.shape)), X, xs, **R)
    check(lambda lib, np_, y: np_.trapezoid(y), XI, **R)
    _grad_check(lambda lib, y, x: lib.numpy.trapezoid(y, x), X, xs, argnums=(0, 1))
    ph = np.cumsum(_rand((3, 12), 4) * 2.5, axis=1).astype(np.float32)
    check(lambda lib, np_, p: np_.unwrap(p), ph, **R)
    check(lambda lib, np_, p: np_.unwrap(p, axis=0), ph, **R)
    check(lambda lib, np_, p: np_.unwrap(p, discont=4.0, period=5.0), ph, **R)
    check(lambda lib, np_, p: np_.unwrap(p), (ph * 3).astype(np.int32), **R)
    _grad_check(lambda lib, p: lib.numpy.unwrap(p), ph)


# --- membership, counting, histograms ---------------------------------------------------------------


def test_isin(backend):
    check(lambda lib, np_, x: np_.isin(x, np_.array([1, 3, 6])), XI)
    check(lambda lib, np_, x: np_.isin(x, np_.array([[1.0, 3.5]]), invert=True), XI)
    check(lambda lib, np_, x: np_.isin(x, np_.array([], dtype=np_.int32)), XI)
    check(lambda lib, np_, x: np_.isin(x[0, 0], x), XI)
    check(lambda lib, np_, x: lib.jit(lambda a, b: np_.isin(a, b))(x, x[1:2, :2]), XI)


def test_bincount(backend):
    x = np.array([0, 1, 1, 3, 2, 1, 7], np.int32)
    w = _rand((7,), 5)
    check(lambda lib, np_, a: np_.bincount(a), x)
    check(lambda lib, np_, a: np_.bincount(a, minlength=10), x)
    check(lambda lib, np_, a, b: np_.bincount(a, b), x, w, **R)
    check(lambda lib, np_, a: np_.bincount(a, length=4), x)
    check(lambda lib, np_, a: np_.bincount(a - 2, length=5), x)
    check(lambda lib, np_, a: lib.jit(lambda u: np_.bincount(u, length=9))(a), x)
    check(lambda lib, np_, a: np_.bincount(a.astype(np_.float32)), x)
    _grad_check(lambda lib, b: lib.numpy.bincount(pjnp.asarray(x) if lib is pyjax else jjnp.asarray(x), b, length=8), w)
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
    a = _rand((40,), 6)
    w = np.abs(_rand((40,), 7))
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


# --- polynomials -------------------------------------------------------------------------------------


def test_polynomials(backend):
    p = np.array([1.5, -2.0, 0.5, 3.0], np.float32)
    q = np.array([2.0, 1.0], np.float32)
    check(lambda lib, np_, c, x: np_.polyval(c, x), p, X, **R)
    check(lambda lib, np_, c: np_.polyval(c, 2), np.array([1, 2, 3], np.int32))
    check(lambda lib, np_, c, x: np_.polyval(c, x), p, np.float32(0.3), **R)
    _grad_check(lambda lib, c, x: lib.numpy.polyval(c, x), p, X, argnums=(0, 1))
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
    _grad_check(lambda lib, a: lib.numpy.polyint(a, 2, 1.0), p)
    for N, inc in ((None, False), (3, True), (6, False), (0, False)):
        check(lambda lib, np_, x: np_.vander(x, N, increasing=inc), V[:4], **R)
    check(lambda lib, np_, x: np_.vander(x), np.array([2, 3, -1], np.int32))
    check(lambda lib, np_, x: np_.vander(x), X)
    _grad_check(lambda lib, x: lib.numpy.vander(x, 4), V[:4])


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
    y = _rand((2, 5), 8)
    f = np.array([1, 2, 1, 3, 1], np.int32)
    aw = np.abs(_rand((5,), 9)) + 0.1

    def args(np_):
        return {k: {"y": np_.asarray(y), "f": np_.asarray(f), "a": np_.asarray(aw)}.get(v, v) for k, v in kw.items()}

    check(lambda lib, np_, x: np_.cov(x, **args(np_)), X, rtol=1e-4, atol=1e-5)
    _grad_check(lambda lib, x: lib.numpy.cov(x, **args(lib.numpy)), X)
    if set(kw) <= {"rowvar", "y"}:
        check(lambda lib, np_, x: np_.corrcoef(x, **args(np_)), X, rtol=1e-4, atol=1e-5)
        _grad_check(lambda lib, x: lib.numpy.corrcoef(x, **args(lib.numpy)), X)


def test_cov_shapes_and_dtypes(backend):
    check(lambda lib, np_, x: np_.cov(x[0]), X, **R)
    check(lambda lib, np_, x: np_.cov(x), XI, **R)
    check(lambda lib, np_, x: np_.corrcoef(x[0]), X, **R)
    check(lambda lib, np_, x: np_.cov(x, dtype=np_.float32), XI, **R)
    check(lambda lib, np_, x: np_.cov(x[None]), X)


# --- array editing ---------------------------------------------------------------------------------------


def test_append_resize_block(backend):
    check(lambda lib, np_, x: np_.append(x, 1.0), X, **R)
    check(lambda lib, np_, x: np_.append(x, x[:1], axis=0), X, **R)
    check(lambda lib, np_, x: np_.append(x, np_.array([1, 2]).astype(np_.int32)), XI)
    check(lambda lib, np_, x: np_.append(x, x[:1], axis=1), X)
    for shape in ((3, 7), 11, (2, 2), (0,), (2, 0, 3)):
        check(lambda lib, np_, x: np_.resize(x, shape), X)
    check(lambda lib, np_, x: np_.resize(x, (-1, 2)), X)
    check(lambda lib, np_, x: np_.block([[x, x[:, :2]], [x[:2], x[:2, :2]]]), X)
    check(lambda lib, np_, x: np_.block([x[0], x[1], 1.0]), X)
    check(lambda lib, np_, x: np_.block([[x[0]], [x[1]]]), X)
    check(lambda lib, np_, x: np_.block(x), X)
    check(lambda lib, np_, x: np_.block([[[x]]]), X)
    check(lambda lib, np_, x: np_.block([[x], x]), X)
    check(lambda lib, np_, x: np_.block([]), X)
    check(lambda lib, np_, x: np_.block((x, x)), X)
    _grad_check(lambda lib, x: lib.numpy.block([[x, x], [x * 2, x]]), X)


@pytest.mark.parametrize("obj", [2, -1, 5, [1, 3], [3, 1, 1], [0], slice(1, 4, 2), np.array([4, 0]), 6, [7]])
@pytest.mark.parametrize("axis", [None, 1])
def test_insert(backend, obj, axis):
    check(lambda lib, np_, x: np_.insert(x, obj, 9.5, axis=axis), X, **R)
    check(lambda lib, np_, x: np_.insert(x, obj, np_.array([7, 8], np_.int32)[:1], axis=axis), XI)
    if axis == 1 and not isinstance(obj, (slice, np.ndarray)):
        n = 1 if isinstance(obj, int) else len(obj)
        check(
            lambda lib, np_, x: np_.insert(
                x, obj, np_.arange(4.0 * n).reshape(4, n) if not isinstance(obj, int) else np_.arange(4.0), axis=axis
            ),
            X,
            **R,
        )


def test_insert_values_and_grad(backend):
    check(lambda lib, np_, x: np_.insert(x, 1, np_.arange(3.0)[:, None], axis=1), X)
    check(lambda lib, np_, x: np_.insert(x, [1], np_.arange(2.0)[:, None], axis=1), X[:2])
    check(lambda lib, np_, x: np_.insert(x, 2, [[1.0], [2.0]], axis=0), X)
    _grad_check(
        lambda lib, x, v: lib.numpy.insert(x, lib.numpy.asarray([1, 3]), v, axis=0), X, np.float32(2.0), argnums=(0, 1)
    )


@pytest.mark.parametrize(
    "obj",
    [
        2,
        -1,
        [1, 3],
        [3, 1, 1],
        slice(1, 4, 2),
        slice(None),
        np.array([4, 0]),
        9,
        np.array([True, False, True, False, False]),
        [],
    ],
)
@pytest.mark.parametrize("axis", [None, 1])
def test_delete(backend, obj, axis):
    check(lambda lib, np_, x: np_.delete(x, obj, axis=axis), X, **R)
    if isinstance(obj, int) and obj != 9:
        _grad_check(lambda lib, x: lib.numpy.delete(x, obj, axis=axis), X)


def test_trim_zeros_fill_diagonal(backend):
    z = np.array([0, 0, 1, 2, 0, 3, 0], np.int32)
    for trim in ("fb", "f", "b", "FB"):
        check(lambda lib, np_, x: np_.trim_zeros(x, trim), z)
    check(lambda lib, np_, x: np_.trim_zeros(x * 0), z)
    check(lambda lib, np_, x: np_.trim_zeros(x.astype(np_.float32)), z)
    m = np.zeros((4, 5), np.float32)
    m[1:3, 1:4] = 1.0
    check(lambda lib, np_, x: np_.trim_zeros(x), m)
    check(lambda lib, np_, x: np_.trim_zeros(x, axis=0), m)
    check(lambda lib, np_, x: np_.trim_zeros(x, "b", axis=-1), m)
    for shape, wrap in (((4, 4), False), ((7, 3), False), ((7, 3), True), ((3, 5), False), ((3, 3, 3), False)):
        a = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
        check(lambda lib, np_, x: np_.fill_diagonal(x, -1.0, wrap=wrap, inplace=False), a)
        check(lambda lib, np_, x: np_.fill_diagonal(x, np_.array([-1.0, -2.0]), wrap=wrap, inplace=False), a)
    check(lambda lib, np_, x: np_.fill_diagonal(x, 1.0), X)
    check(lambda lib, np_, x: np_.fill_diagonal(x[0], 1.0, inplace=False), X)
    _grad_check(lambda lib, x, v: lib.numpy.fill_diagonal(x, v, inplace=False), X, np.float32(3.0), argnums=(0, 1))


# --- spaced sequences and float decomposition -----------------------------------------------------


def test_logspace_geomspace(backend):
    for kw in (
        {},
        dict(num=5),
        dict(num=4, endpoint=False),
        dict(num=6, base=2.0),
        dict(num=3, dtype=np.int32),
        dict(num=1),
        dict(num=0),
    ):
        check(lambda lib, np_: np_.logspace(0.0, 2.0, **kw), rtol=1e-5, atol=1e-6)
    check(lambda lib, np_: np_.logspace(np_.array([0.0, 1.0]), np_.array([2.0, 3.0]), 4, axis=1), rtol=1e-5)
    for start, stop in ((1.0, 1000.0), (-1.0, -16.0), (2, 50), (1000.0, 1.0)):
        for kw in ({}, dict(num=5), dict(num=4, endpoint=False), dict(num=3, dtype=np.float32)):
            check(lambda lib, np_: np_.geomspace(start, stop, **kw), rtol=1e-5, atol=1e-6)
    check(lambda lib, np_: np_.geomspace(np_.array([1.0, 2.0]), np_.array([8.0, 32.0]), 4, axis=1), rtol=1e-5)


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
    _grad_check(lambda lib, a: lib.numpy.ldexp(a, lib.numpy.asarray(e[:4] % 5)), m[:4])
    y = np.array([1.5, -2.25, 0.0, -0.0, 3.0, -7.75, 1e10], np.float32)
    check(lambda lib, np_, a: np_.modf(a), y)
    check(lambda lib, np_, a: np_.modf(a), np.array([3, -4], np.int32))
    _grad_check(lambda lib, a: lib.numpy.modf(a)[0], y)
    check(lambda lib, np_, a: np_.spacing(a), np.array([1.0, -1.0, 1e10, -3.5, 1e-3], np.float32))


# --- functional helpers -----------------------------------------------------------------------------


def test_apply_along_over_axes(backend):
    x3 = _rand((3, 4, 5), 10)
    for axis in (0, 1, 2, -1):
        check(lambda lib, np_, a: np_.apply_along_axis(np_.sum, axis, a), x3, **R)
        check(lambda lib, np_, a: np_.apply_along_axis(lambda v: v[::-1] * 2, axis, a), x3, **R)
        check(lambda lib, np_, a: np_.apply_along_axis(lambda v, s: np_.outer(v, v) * s, axis, a, 2.0), x3, **R)
    _grad_check(lambda lib, a: lib.numpy.apply_along_axis(lambda v: lib.numpy.cumsum(v) ** 2, 1, a), x3)
    check(lambda lib, np_, a: np_.apply_over_axes(np_.sum, a, [0, 2]), x3, **R)
    check(lambda lib, np_, a: np_.apply_over_axes(lambda v, ax: np_.mean(v, ax, keepdims=True), a, (1,)), x3, **R)


def test_vectorize(backend):
    def f(a, b):
        return a * 2 + b

    check(lambda lib, np_, a, b: np_.vectorize(f)(a, b), X, X[0], **R)
    check(lambda lib, np_, a: np_.vectorize(lambda u: u if u.ndim == 0 else u[0])(a), X)
    check(lambda lib, np_, a, b: np_.vectorize(np_.dot, signature="(n),(n)->()")(a, b), X, X[1], **R)
    check(lambda lib, np_, a: np_.vectorize(lambda v: (v.sum(), v * 2), signature="(n)->(),(n)")(a), X, **R)
    check(lambda lib, np_, a: np_.vectorize(lambda u, p: u**p, excluded={1})(a, 2), X, **R)
    check(lambda lib, np_, a: np_.vectorize(lambda u, p=1: u**p, excluded={"p"})(a, p=3), X, **R)
    check(lambda lib, np_, a: np_.vectorize(lambda m: m @ m.T, signature="(m,n)->(m,m)")(a.reshape(2, 2, 5)), X, **R)
    check(lambda lib, np_, a, b: np_.vectorize(np_.dot, signature="(n),(n)->()")(a, b), X, X[:, :3])
    check(lambda lib, np_, a: np_.vectorize(f, signature="(n)->()")(a, a), X)
    check(lambda lib, np_, a: np_.vectorize(f, signature="bad")(a, a), X)
    _grad_check(lambda lib, a: lib.numpy.vectorize(lambda u: lib.numpy.sin(u) * u)(a), X)


def test_piecewise(backend):
    x = np.linspace(-2, 2, 9).astype(np.float32)
    check(lambda lib, np_, a: np_.piecewise(a, [a < 0, a >= 0], [lambda v: -v, lambda v: v**2]), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a, [a < -1, a > 1], [0.0, 1.0, lambda v: v * 3]), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a, [a < 0, a < 1], [1, 2]), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a, a > 0, [lambda v, k: v * k], 3.0), x, **R)
    check(lambda lib, np_, a: np_.piecewise(a.astype(np_.int32), [a > 0], [lambda v: v * 2, 7]), x)
    check(lambda lib, np_, a: np_.piecewise(a, [a < 0, a > 0], [1.0]), x)
    _grad_check(lambda lib, a: lib.numpy.piecewise(a, [a < 0], [lambda v: v**3, lambda v: lib.numpy.sin(v)]), x)


def test_errors(backend):
    check(lambda lib, np_, x: np_.vander(x), X)
    check(lambda lib, np_, x: np_.vander(x[0], -1), X)
    check(lambda lib, np_, x: np_.fill_diagonal(x.reshape(2, 2, 5), 1.0, inplace=False), X)
    check(lambda lib, np_, x: np_.polyder(x[0], -1), X)
    check(lambda lib, np_, x: np_.gradient(x[:1], axis=0), X)
    check(lambda lib, np_, x: np_.bincount(x), XI)
    check(lambda lib, np_, x: np_.insert(x, 5, 1, axis=0), XI)
    check(lambda lib, np_, x: np_.delete(x, 4, axis=0), XI)
    check(lambda lib, np_, x: np_.convolve(x, x), X)
    check(lambda lib, np_, x: np_.trim_zeros(x[0, 0]), X)
