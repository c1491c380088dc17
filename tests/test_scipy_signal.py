"""jax.scipy.signal / integrate / fft against real JAX: n-d convolution and correlation (all
modes and methods), fftconvolve, detrend, the type-2 DCTs, stft/istft, welch and csd."""

from __future__ import annotations

import warnings

import jax
import jax.scipy.fft as jfft
import jax.scipy.integrate as jint
import jax.scipy.signal as jsig
import numpy as np
import pytest

import pyjax
import pyjax.scipy.fft as pfft
import pyjax.scipy.integrate as pint
import pyjax.scipy.signal as psig

F = np.float32
RNG = np.random.default_rng(0)


def _r(*shape):
    return RNG.standard_normal(shape).astype(F)


def _close(got, want, tol=1e-4):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w, tol)
        return
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def _same(name_p, name_j, *args, tol=1e-4, **kw):
    _close(name_p(*args, **kw), name_j(*args, **kw), tol)


# ---------------------------------------------------------------- integrate


def test_trapezoid(backend):
    y = np.array([1, 2, 3, 2, 3, 2, 1])
    x = np.array([0, 2, 5, 7, 10, 15, 20], F)
    _same(pint.trapezoid, jint.trapezoid, y)
    _same(pint.trapezoid, jint.trapezoid, y, x)
    _same(pint.trapezoid, jint.trapezoid, _r(3, 4), dx=0.5, axis=0)
    _same(pint.trapezoid, jint.trapezoid, _r(3, 4), _r(3, 4), axis=1)


# ---------------------------------------------------------------- convolution

PAIRS = [
    ((7,), (3,)),
    ((6,), (4,)),
    ((3,), (8,)),
    ((5,), (5,)),
    ((5, 4), (2, 3)),
    ((2, 3), (5, 6)),
    ((4, 5, 3), (2, 2, 3)),
]


@pytest.mark.parametrize("method", ["auto", "direct", "fft"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", PAIRS, ids=str)
def test_convolve_correlate(backend, shapes, mode, method):
    a, b = _r(*shapes[0]), _r(*shapes[1])
    _same(psig.convolve, jsig.convolve, a, b, mode=mode, method=method)
    _same(psig.correlate, jsig.correlate, a, b, mode=mode, method=method)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", [((5, 4), (2, 3)), ((2, 3), (5, 4)), ((3, 3), (3, 3)), ((4, 6), (4, 1))], ids=str)
def test_2d(backend, shapes, mode):
    a, b = _r(*shapes[0]), _r(*shapes[1])
    _same(psig.convolve2d, jsig.convolve2d, a, b, mode=mode)
    _same(psig.correlate2d, jsig.correlate2d, a, b, mode=mode)


def test_convolve_dtypes(backend):
    a, b = np.arange(6, dtype=np.int32), np.array([1, -2, 1], np.int32)
    _same(psig.convolve, jsig.convolve, a, b)
    _same(psig.convolve, jsig.convolve, a, b, method="fft")
    ca = (_r(5) + 1j * _r(5)).astype(np.complex64)
    cb = (_r(3) + 1j * _r(3)).astype(np.complex64)
    for mode in ("full", "same", "valid"):
        _same(psig.convolve, jsig.convolve, ca, cb, mode=mode)
        _same(psig.correlate, jsig.correlate, ca, cb, mode=mode)
        _same(psig.convolve, jsig.convolve, ca, cb, mode=mode, method="fft")
    c2a = (_r(3, 4) + 1j * _r(3, 4)).astype(np.complex64)
    c2b = (_r(4, 5) + 1j * _r(4, 5)).astype(np.complex64)
    for mode in ("full", "same", "valid"):
        _same(psig.correlate2d, jsig.correlate2d, c2a, c2b, mode=mode)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_axes(backend, mode):
    a, b = _r(3, 8), _r(3, 4)
    _same(psig.fftconvolve, jsig.fftconvolve, a, b, mode=mode, axes=1)
    _same(psig.fftconvolve, jsig.fftconvolve, a, b, mode=mode, axes=[-1])
    _same(psig.fftconvolve, jsig.fftconvolve, _r(5, 6), _r(2, 3), mode=mode)
    _same(psig.fftconvolve, jsig.fftconvolve, _r(4, 1), _r(1, 1), mode=mode)


def test_convolve_errors():
    a, b = np.ones(4, F), np.ones(2, F)
    cases = [
        (lambda m: m.convolve(a, b, method="bogus"), ValueError),
        (lambda m: m.convolve(a, b, mode="bogus"), ValueError),
        (lambda m: m.convolve(a, np.ones((2, 2), F)), ValueError),
        (lambda m: m.convolve(np.ones((4, 2), F), np.ones((2, 3), F)), ValueError),
        (lambda m: m.fftconvolve(a, b, mode="bogus"), ValueError),
        (lambda m: m.fftconvolve(np.ones((4, 2), F), np.ones((2, 3), F), mode="valid"), ValueError),
        (lambda m: m.fftconvolve(np.ones((4, 2), F), np.ones((3, 3), F), axes=0), ValueError),
        (lambda m: m.convolve2d(a, b), ValueError),
        (lambda m: m.convolve2d(np.ones((2, 2), F), np.ones((2, 2), F), boundary="wrap"), NotImplementedError),
        (lambda m: m.correlate2d(np.ones((2, 2), F), np.ones((2, 2), F), fillvalue=1), NotImplementedError),
        (lambda m: m.detrend(a, type="bogus"), ValueError),
        (lambda m: m.detrend(a, bp=7), ValueError),
    ]
    for fn, err in cases:
        with pytest.raises(err):
            fn(jsig)
        with pytest.raises(err):
            fn(psig)


def test_convolve_grad(backend):
    a, b = _r(6), _r(3)

    def loss(m):
        return lambda x, k: (m.convolve(x, k, mode="same") ** 2).sum() + m.correlate(x, k, method="fft").sum()

    _close(pyjax.grad(loss(psig), argnums=(0, 1))(a, b), jax.grad(loss(jsig), argnums=(0, 1))(a, b), 1e-3)
    x2, k2 = _r(4, 4), _r(2, 3)

    def loss2(m):
        return lambda x: (m.correlate2d(x, k2, mode="valid") ** 2).sum()

    _close(pyjax.grad(loss2(psig))(x2), jax.grad(loss2(jsig))(x2), 1e-3)


# ---------------------------------------------------------------- detrend


@pytest.mark.parametrize(
    "kw",
    [{}, {"type": "constant"}, {"axis": 0}, {"bp": 3}, {"bp": [2, 5]}, {"type": "constant", "axis": 0}],
    ids=str,
)
def test_detrend(backend, kw):
    x = _r(7, 3) if kw.get("axis") == 0 else _r(3, 7)
    _same(psig.detrend, jsig.detrend, x, tol=2e-4, **kw)


def test_detrend_int_and_1pt(backend):
    _same(psig.detrend, jsig.detrend, np.array([1, 4, 2, 8, 5], np.int32), tol=2e-4)
    _same(psig.detrend, jsig.detrend, _r(6), bp=5, tol=2e-4)


# ---------------------------------------------------------------- DCT


@pytest.mark.parametrize("norm", [None, "ortho", "backward"])
@pytest.mark.parametrize("func", ["dct", "idct"])
def test_dct_1d(backend, func, norm):
    p, j = getattr(pfft, func), getattr(jfft, func)
    for x in (_r(8), _r(7), _r(3, 5)):
        _same(p, j, x, norm=norm)
    _same(p, j, _r(4, 5), axis=0, norm=norm)
    _same(p, j, _r(6), n=9, norm=norm)
    _same(p, j, _r(6), n=4, norm=norm)
    _same(p, j, np.arange(5), norm=norm)
    _same(p, j, (_r(5) + 1j * _r(5)).astype(np.complex64), norm=norm)


@pytest.mark.parametrize("norm", [None, "ortho"])
@pytest.mark.parametrize("func", ["dctn", "idctn"])
def test_dctn(backend, func, norm):
    p, j = getattr(pfft, func), getattr(jfft, func)
    _same(p, j, _r(4, 5), norm=norm, tol=2e-4)
    _same(p, j, _r(3, 4, 5), norm=norm, tol=2e-4)
    _same(p, j, _r(3, 4, 5), axes=(0, 2), norm=norm, tol=2e-4)
    _same(p, j, _r(3, 4, 5), axes=[1], norm=norm, tol=2e-4)
    _same(p, j, _r(4, 5), s=(6, 3), norm=norm, tol=2e-4)
    _same(p, j, _r(4, 5), s=7, norm=norm, tol=2e-4)


def test_dct_roundtrip_and_grad(backend):
    x = _r(6)
    _close(pfft.idct(pfft.dct(x)), x, 1e-4)
    _close(pfft.idctn(pfft.dctn(_r(3, 4) * 0 + x[:4], norm="ortho"), norm="ortho"), _r(3, 4) * 0 + x[:4], 1e-4)

    def loss(m):
        return lambda v: (m.dct(v, norm="ortho") * np.arange(6, dtype=F)).sum() + m.idct(v).sum()

    _close(pyjax.grad(loss(pfft))(x), jax.grad(loss(jfft))(x), 1e-4)


def test_dct_errors():
    for m in (jfft, pfft):
        for f in (m.dct, m.idct, m.dctn, m.idctn):
            with pytest.raises(NotImplementedError):
                f(np.ones(4, F), type=1)
            with pytest.raises(ValueError):
                f(np.ones(4, F), norm="forward")
        with pytest.raises(ValueError):
            m.dctn(np.ones(4, F), s=(2, 2))


# ---------------------------------------------------------------- spectral


def _both(name, *args, tol=1e-4, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(getattr(psig, name)(*args, **kw), getattr(jsig, name)(*args, **kw), tol)


@pytest.mark.parametrize(
    "kw",
    [
        {"nperseg": 16},
        {"nperseg": 15, "noverlap": 5, "nfft": 20},
        {"nperseg": 16, "boundary": None, "padded": False, "return_onesided": False},
        {"nperseg": 8, "boundary": "even", "detrend": "linear", "fs": 10.0},
        {"nperseg": 8, "boundary": "odd", "window": np.hamming(8).astype(F)},
        {"nperseg": 8, "boundary": "constant", "axis": 0},
    ],
    ids=str,
)
def test_stft(backend, kw):
    x = _r(50, 2) if kw.get("axis") == 0 else _r(2, 50)
    _both("stft", x, tol=2e-4, **kw)


def test_stft_complex(backend):
    _both("stft", (_r(40) + 1j * _r(40)).astype(np.complex64), nperseg=8, tol=2e-4)


@pytest.mark.parametrize(
    "kw",
    [{}, {"nperseg": 16}, {"nperseg": 15, "noverlap": 3, "nfft": 15}, {"input_onesided": False}, {"boundary": False}],
    ids=str,
)
def test_istft(backend, kw):
    nperseg = kw.get("nperseg", 16)
    onesided = kw.get("input_onesided", True)
    _, _, z = jsig.stft(
        _r(3, 60), nperseg=nperseg, noverlap=kw.get("noverlap"), nfft=kw.get("nfft"), return_onesided=onesided
    )
    z = np.asarray(z)
    _both("istft", z, tol=2e-4, **kw)
    _both("istft", np.moveaxis(z, -1, 0), time_axis=0, freq_axis=-1, tol=2e-4, **kw)


@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"nperseg": 16},
        {"nperseg": 16, "average": "median", "scaling": "spectrum"},
        {"nperseg": 10, "noverlap": 2, "nfft": 13, "detrend": "linear"},
        {"nperseg": 16, "return_onesided": False, "detrend": False},
        {"nperseg": 8, "axis": 0, "window": "hann"},
    ],
    ids=str,
)
def test_welch_csd(backend, kw):
    x = _r(64, 2) if kw.get("axis") == 0 else _r(2, 64)
    y = _r(64, 2) if kw.get("axis") == 0 else _r(2, 64)
    _both("welch", x, tol=2e-4, **kw)
    _both("csd", x, y, tol=2e-4, **kw)
    _both("csd", x, x[..., :50] if kw.get("axis") != 0 else x[:50], tol=2e-4, **kw)


def test_spectral_errors():
    x = np.ones(32, F)
    cases = [
        lambda m: m.welch(x, nperseg=8, noverlap=8),
        lambda m: m.welch(x, nperseg=8, nfft=4),
        lambda m: m.welch(x, nperseg=0),
        lambda m: m.welch(x, scaling="bogus"),
        lambda m: m.welch(x, nperseg=8, average="bogus"),
        lambda m: m.stft(x, boundary="bogus"),
        lambda m: m.istft(x),
        lambda m: m.istft(np.ones((5, 4), np.complex64), time_axis=0, freq_axis=0),
    ]
    for fn in cases:
        for m in (jsig, psig):
            with pytest.raises(ValueError):
                fn(m)


def test_jit_vmap_grad(backend):
    x = _r(2, 24)
    cases = [
        (lambda m: lambda a: m.convolve(a, np.ones((1,) * (a.ndim - 1) + (3,), F), mode="same")),
        (lambda m: lambda a: m.stft(a, nperseg=8)[2]),
        (lambda m: lambda a: m.welch(a, nperseg=8, average="median")[1]),
        (lambda m: lambda a: m.detrend(a, bp=[5, 12])),
    ]
    for make in cases:
        _close(pyjax.jit(make(psig))(x), jax.jit(make(jsig))(x), 2e-4)
        _close(pyjax.vmap(make(psig))(x), jax.vmap(make(jsig))(x), 2e-4)
    _close(pyjax.jit(lambda a: pfft.dctn(a, norm="ortho"))(x), jax.jit(lambda a: jfft.dctn(a, norm="ortho"))(x), 2e-4)

    def loss(m):
        return lambda a: (m.istft(m.stft(a[0], nperseg=8)[2])[1] ** 2).sum() + m.welch(a, nperseg=8)[1].sum()

    _close(pyjax.grad(loss(psig))(x), jax.grad(loss(jsig))(x), 1e-3)
