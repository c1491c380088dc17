"""jax.numpy.fft against real JAX on every backend: all 18 functions, lengths that take each path
(radix-2 stages, small odd lengths by DFT matmul, large odd lengths by Bluestein, mixed),
n / axis / s / axes / norm arguments, dtypes (float32 -> complex64, ints), jit, vmap, grad,
jvp and vjp, and the errors JAX raises for bad arguments."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from tests.jax_compare import check

rng = np.random.default_rng(3)


def _c(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


TOL = dict(rtol=1e-4, atol=2e-4)
NORMS = [None, "backward", "ortho", "forward"]


# --- one-dimensional transforms over lengths that take every code path -----------------------------

LENGTHS = [1, 2, 3, 4, 5, 6, 8, 12, 16, 17, 30, 64, 96, 97, 128, 200, 256]


@pytest.mark.parametrize("n", LENGTHS)
def test_fft_lengths(backend, n):
    tol = dict(rtol=1e-4, atol=1e-5 * max(n, 8))
    check(lambda jx, jnp, x: jnp.fft.fft(x), _c(2, n), **tol)
    check(lambda jx, jnp, x: jnp.fft.ifft(x), _c(2, n), **tol)
    check(lambda jx, jnp, x: jnp.fft.rfft(x), _r(2, n), **tol)
    if n > 1:
        check(lambda jx, jnp, x: jnp.fft.irfft(x), _c(2, n), **tol)


def test_fft_long(backend):
    # 1000 = 8 x 125 (radix-2 stages, then Bluestein over 125); 1024 pure radix-2
    for n in (1000, 1024):
        check(lambda jx, jnp, x: jnp.fft.fft(x), _c(n), rtol=1e-3, atol=5e-3)


# --- every function with its arguments --------------------------------------------------------------

C34 = _c(3, 4)
C56 = _c(5, 6)
R56 = _r(5, 6)
C234 = _c(2, 3, 4)
R234 = _r(2, 3, 4)

CASES = {
    "fft": (lambda jx, jnp, x, norm: jnp.fft.fft(x, norm=norm), C56),
    "fft_n_pad": (lambda jx, jnp, x, norm: jnp.fft.fft(x, n=9, norm=norm), C56),
    "fft_n_trunc": (lambda jx, jnp, x, norm: jnp.fft.fft(x, n=4, axis=0, norm=norm), C56),
    "fft_real_input": (lambda jx, jnp, x, norm: jnp.fft.fft(x, norm=norm), R56),
    "fft_int_input": (lambda jx, jnp, x, norm: jnp.fft.fft(jnp.arange(6), norm=norm), R56),
    "fft_list_input": (lambda jx, jnp, x, norm: jnp.fft.fft([1.0, 2.0, 0.5], norm=norm), R56),
    "ifft": (lambda jx, jnp, x, norm: jnp.fft.ifft(x, axis=0, norm=norm), C56),
    "ifft_n": (lambda jx, jnp, x, norm: jnp.fft.ifft(x, n=7, norm=norm), C56),
    "fft2": (lambda jx, jnp, x, norm: jnp.fft.fft2(x, norm=norm), C234),
    "fft2_s": (lambda jx, jnp, x, norm: jnp.fft.fft2(x, s=(4, 2), norm=norm), C234),
    "fft2_axes": (lambda jx, jnp, x, norm: jnp.fft.fft2(x, axes=(0, 2), norm=norm), C234),
    "ifft2": (lambda jx, jnp, x, norm: jnp.fft.ifft2(x, norm=norm), C234),
    "fftn": (lambda jx, jnp, x, norm: jnp.fft.fftn(x, norm=norm), C234),
    "fftn_s": (lambda jx, jnp, x, norm: jnp.fft.fftn(x, s=(5, 6), norm=norm), C234),
    "fftn_axes": (lambda jx, jnp, x, norm: jnp.fft.fftn(x, axes=(1,), norm=norm), C234),
    "fftn_s_axes": (lambda jx, jnp, x, norm: jnp.fft.fftn(x, s=(3, 3), axes=(2, 0), norm=norm), C234),
    "ifftn": (lambda jx, jnp, x, norm: jnp.fft.ifftn(x, norm=norm), C234),
    "ifftn_s": (lambda jx, jnp, x, norm: jnp.fft.ifftn(x, s=(2, 8), axes=(0, 1), norm=norm), C234),
    "rfft": (lambda jx, jnp, x, norm: jnp.fft.rfft(x, norm=norm), R56),
    "rfft_n": (lambda jx, jnp, x, norm: jnp.fft.rfft(x, n=9, axis=0, norm=norm), R56),
    "rfft_int": (lambda jx, jnp, x, norm: jnp.fft.rfft(jnp.arange(5), norm=norm), R56),
    "irfft": (lambda jx, jnp, x, norm: jnp.fft.irfft(x, norm=norm), C56),
    "irfft_n_odd": (lambda jx, jnp, x, norm: jnp.fft.irfft(x, n=11, norm=norm), C56),
    "irfft_n_short": (lambda jx, jnp, x, norm: jnp.fft.irfft(x, n=4, axis=0, norm=norm), C56),
    "irfft_real_input": (lambda jx, jnp, x, norm: jnp.fft.irfft(x, norm=norm), R56),
    "rfft2": (lambda jx, jnp, x, norm: jnp.fft.rfft2(x, norm=norm), R234),
    "rfft2_s": (lambda jx, jnp, x, norm: jnp.fft.rfft2(x, s=(5, 7), norm=norm), R234),
    "irfft2": (lambda jx, jnp, x, norm: jnp.fft.irfft2(x, norm=norm), C234),
    "irfft2_s": (lambda jx, jnp, x, norm: jnp.fft.irfft2(x, s=(4, 5), norm=norm), C234),
    "rfftn": (lambda jx, jnp, x, norm: jnp.fft.rfftn(x, norm=norm), R234),
    "rfftn_axes": (lambda jx, jnp, x, norm: jnp.fft.rfftn(x, axes=(0, 1), norm=norm), R234),
    "irfftn": (lambda jx, jnp, x, norm: jnp.fft.irfftn(x, norm=norm), C234),
    "irfftn_s": (lambda jx, jnp, x, norm: jnp.fft.irfftn(x, s=(3, 2, 6), norm=norm), C234),
    "hfft": (lambda jx, jnp, x, norm: jnp.fft.hfft(x, norm=norm), C56),
    "hfft_n": (lambda jx, jnp, x, norm: jnp.fft.hfft(x, n=7, axis=0, norm=norm), C56),
    "ihfft": (lambda jx, jnp, x, norm: jnp.fft.ihfft(x, norm=norm), R56),
    "ihfft_n": (lambda jx, jnp, x, norm: jnp.fft.ihfft(x, n=8, norm=norm), R56),
}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("name", list(CASES))
def test_fft_functions(backend, name, norm):
    fn, x = CASES[name]
    check(fn, x, norm, **TOL)


HELPERS = {
    "fftfreq": lambda jx, jnp: jnp.fft.fftfreq(8),
    "fftfreq_odd_d": lambda jx, jnp: jnp.fft.fftfreq(7, d=0.25),
    "fftfreq_array_d": lambda jx, jnp: jnp.fft.fftfreq(5, d=jnp.float32(2.0)),
    "fftfreq_dtype": lambda jx, jnp: jnp.fft.fftfreq(4, dtype=jnp.float16),
    "fftfreq_empty": lambda jx, jnp: jnp.fft.fftfreq(0),
    "rfftfreq": lambda jx, jnp: jnp.fft.rfftfreq(8),
    "rfftfreq_odd": lambda jx, jnp: jnp.fft.rfftfreq(9, d=0.1),
    "fftshift": lambda jx, jnp: jnp.fft.fftshift(jnp.arange(10).reshape(2, 5)),
    "fftshift_axes": lambda jx, jnp: jnp.fft.fftshift(jnp.arange(10).reshape(2, 5), axes=1),
    "fftshift_complex": lambda jx, jnp: jnp.fft.fftshift(jnp.fft.fftfreq(5) * 1j),
    "ifftshift": lambda jx, jnp: jnp.fft.ifftshift(jnp.arange(10).reshape(2, 5)),
    "ifftshift_axes": lambda jx, jnp: jnp.fft.ifftshift(jnp.arange(10.0).reshape(5, 2), axes=(0,)),
    "roundtrip": lambda jx, jnp: jnp.fft.ifftshift(jnp.fft.fftshift(jnp.arange(7))),
}


@pytest.mark.parametrize("name", list(HELPERS))
def test_fft_helpers(backend, name):
    check(HELPERS[name], **TOL)


def test_roundtrips(backend):
    x = _r(4, 10)
    np.testing.assert_allclose(np.asarray(pjnp.fft.irfft(pjnp.fft.rfft(x), n=10)), x, rtol=1e-5, atol=1e-5)
    c = _c(3, 12)
    np.testing.assert_allclose(np.asarray(pjnp.fft.ifft(pjnp.fft.fft(c))), c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(pjnp.fft.ifftn(pjnp.fft.fftn(c, norm="ortho"), norm="ortho")), c, atol=1e-5)


def test_function_list():
    names = [n for n in dir(jjnp.fft) if not n.startswith("_") and callable(getattr(jjnp.fft, n))]
    assert len(names) == 18
    for n in names:
        assert callable(getattr(pjnp.fft, n)), n


# --- transformations --------------------------------------------------------------------------------

TRANSFORMS = {
    "jit_fft": lambda jx, jnp, c, r: jx.jit(lambda v: jnp.fft.fft(v))(c),
    "jit_rfft_irfft": lambda jx, jnp, c, r: jx.jit(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * 2, n=6))(r),
    "jit_static_norm": lambda jx, jnp, c, r: jx.jit(jnp.fft.fftn, static_argnames="norm")(c, norm="ortho"),
    "vmap_fft": lambda jx, jnp, c, r: jx.vmap(lambda v: jnp.fft.fft(v, n=8))(c),
    "vmap_axis1": lambda jx, jnp, c, r: jx.vmap(jnp.fft.rfft, in_axes=1)(r),
    "grad_fft": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.fft(v) * jnp.arange(6)) ** 2))(c[0]),
    "grad_fft_real_in": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.fft(v)) ** 2))(r),
    "grad_rfft": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.real(jnp.fft.rfft(v)) * jnp.arange(4)))(r[0]),
    "grad_irfft": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.fft.irfft(v) ** 2))(c[0]),
    "grad_irfft_odd": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.fft.irfft(v, n=9) * jnp.arange(9)))(c[0]),
    "grad_fft2_ortho": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.imag(jnp.fft.fft2(v, norm="ortho"))))(c),
    "grad_hfft": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.fft.hfft(v) ** 2))(c[0]),
    "grad_bluestein": lambda jx, jnp, c, r: jx.grad(lambda v: jnp.sum(jnp.abs(jnp.fft.fft(v, n=67)) ** 2))(c[0]),
    "grad_jit": lambda jx, jnp, c, r: jx.jit(jx.grad(lambda v: jnp.sum(jnp.fft.rfft(v).real ** 2)))(r),
    "jvp": lambda jx, jnp, c, r: jx.jvp(jnp.fft.fft, (c,), (c * 1j,)),
    "jvp_irfft": lambda jx, jnp, c, r: jx.jvp(jnp.fft.irfft, (c,), (c * 0.5,)),
    "vjp": lambda jx, jnp, c, r: jx.vjp(jnp.fft.ifft, c)[1](c * (1 - 1j)),
    "vjp_rfft": lambda jx, jnp, c, r: jx.vjp(jnp.fft.rfft, r)[1](c[:, :4]),
}


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_fft_transforms(backend, name):
    check(TRANSFORMS[name], C56, R56, **TOL)


# --- errors -----------------------------------------------------------------------------------------

ERRORS = {
    "n_zero": lambda jx, jnp, x: jnp.fft.fft(x, n=0),
    "n_negative": lambda jx, jnp, x: jnp.fft.ifft(x, n=-3),
    "n_float": lambda jx, jnp, x: jnp.fft.fft(x, n=2.0),
    "bad_norm": lambda jx, jnp, x: jnp.fft.fft(x, norm="bad"),
    "bad_norm_rfft": lambda jx, jnp, x: jnp.fft.rfft(jnp.real(x), norm="orthogonal"),
    "axis_out_of_range": lambda jx, jnp, x: jnp.fft.fft(x, axis=2),
    "axis_float": lambda jx, jnp, x: jnp.fft.fft(x, axis=1.0),
    "scalar_input": lambda jx, jnp, x: jnp.fft.fft(x[0, 0]),
    "fft2_1d": lambda jx, jnp, x: jnp.fft.fft2(x[0]),
    "s_axes_mismatch": lambda jx, jnp, x: jnp.fft.fftn(x, s=(2,), axes=(0, 1)),
    "repeated_axes": lambda jx, jnp, x: jnp.fft.fftn(x, axes=(0, 0)),
    "s_zero": lambda jx, jnp, x: jnp.fft.fftn(x, s=(0, 2)),
    "rfft_complex": lambda jx, jnp, x: jnp.fft.rfft(x),
    "rfftn_complex": lambda jx, jnp, x: jnp.fft.rfftn(x),
    "ihfft_complex": lambda jx, jnp, x: jnp.fft.ihfft(x),
    "irfft_n_zero": lambda jx, jnp, x: jnp.fft.irfft(x, n=0),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_fft_errors(backend, name):
    with pytest.raises((TypeError, ValueError)):
        ERRORS[name](jax, jjnp, jjnp.asarray(C56))
    with pytest.raises((TypeError, ValueError)):
        ERRORS[name](pyjax, pjnp, pjnp.asarray(C56))
    check(ERRORS[name], C56)


def test_bad_norm_message():
    with pytest.raises(ValueError, match='Invalid norm value bad; should be "backward","ortho" or "forward".'):
        pjnp.fft.fft(pjnp.ones(4), norm="bad")
    with pytest.raises(ValueError, match="Shape should be positive"):
        pjnp.fft.fft(pjnp.ones(4), n=0)
