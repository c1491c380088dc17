"""lax.fft and FftType (pyjax/lax/fft.py) against real JAX on every backend: values, gradients, errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
from tests.jax_compare import check

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def _c(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


TOL = dict(rtol=1e-4, atol=1e-4)


# --- fft ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ftype,x,lengths",
    [
        ("fft", _c(3, 4), (4,)),
        ("FFT", _c(3, 4), (3, 4)),
        ("ifft", _c(2, 3, 5), (3, 5)),
        ("rfft", _r(3, 6), (6,)),
        ("rfft", _r(3, 5), (3, 5)),
        ("irfft", _c(3, 3), (4,)),
        ("irfft", _c(3, 3), (3, 5)),
        ("fft", _r(3, 4), (4,)),  # real input to a complex transform
        ("irfft", _r(3, 3), (4,)),
        ("fft", _c(3, 4), ()),
        ("fft", np.arange(4), (4,)),
    ],
)
def test_fft(backend, ftype, x, lengths):
    check(lambda jx, jnp, x: jx.lax.fft(x, ftype, lengths), x, **TOL)
    enum_t = ftype.upper()
    check(lambda jx, jnp, x: jx.lax.fft(x, getattr(jx.lax.FftType, enum_t), lengths), x, **TOL)


def test_fft_grads(backend):
    x, c = _r(3, 4), _c(3, 3)
    check(lambda jx, jnp, x: jx.grad(lambda x: jnp.sum(jnp.abs(jx.lax.fft(x, "rfft", (4,))) ** 2))(x), x, **TOL)
    check(lambda jx, jnp, c: jx.grad(lambda c: jnp.sum(jx.lax.fft(c, "irfft", (4,)) ** 2))(c), c, **TOL)
    check(lambda jx, jnp, c: jx.grad(lambda c: jnp.sum(jx.lax.fft(c, "ifft", (3, 3)).real))(c), c, **TOL)
    check(lambda jx, jnp, c: jx.jit(lambda c: jx.lax.fft(c, jx.lax.FftType.FFT, (3,)))(c), c, **TOL)


@pytest.mark.parametrize(
    "ftype,x,lengths",
    [
        ("jax_fft", _c(3, 4), (4,)),
        (7, _c(3, 4), (4,)),
        ("rfft", _c(3, 4), (4,)),
        ("rfft", _r(3, 4).astype(np.float16), (4,)),
        ("fft", _c(3, 4), (5,)),
        ("fft", _c(3, 4), (2, 4)),
        ("fft", _c(3, 4), (1, 2, 3, 4)),
    ],
)
def test_fft_errors(ftype, x, lengths):
    check(lambda jx, jnp, x: jx.lax.fft(x, ftype, lengths), x)


def test_fft_type_enum():
    for t in jax.lax.FftType:
        p = getattr(pyjax.lax.FftType, t.name)
        assert int(p) == int(t) and str(p) == str(t) and repr(p) == repr(t)
