"""More complex64 support against real JAX: lexicographic order (max/min/sort; argmax/argmin raise
TypeError as in JAX), inverse trig and hyperbolic functions with their branch cuts, scatter
multiply/min/max (x.at[i].multiply/min/max), common helpers (norms, products, parts of real
inputs, logs and roots of negative reals), gradients through them, and the errors JAX raises."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from tests.jax_compare import check

rng = np.random.default_rng(11)


def _c(*shape):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


Z = _c(3, 4)
ZT = _c(3, 5)
ZT[0, 1] = ZT[0, 3].real + 5j  # ties in the real part: ordered by the imaginary part
ZT[0, 2] = ZT[0, 3].real - 5j
# on and next to the branch cuts, signed zeros included (JAX, unlike numpy, ignores the sign of
# a zero part on the cuts of asin/acos/asinh/acosh/sqrt, but not of atan/atanh)
CUT = np.array(
    [2, -2, 1.5j, -1.5j, 0.5, -0.5, 1, -1, 0, 1j, -1j, 3 + 1e-8j, -3 - 1e-8j, 0.5 + 2j]
    + [complex(2, -0.0), complex(-2, -0.0), complex(-0.0, 1.5), complex(-0.0, -1.5), complex(-0.0, -0.0)],
    np.complex64,
)
TOL = dict(rtol=1e-5, atol=1e-6)

# --- order: numpy/JAX order complex values by real part, then imaginary part ------------------------

ORDER = {
    "max": lambda jx, jnp, z: jnp.max(z),
    "min_axis": lambda jx, jnp, z: jnp.min(z, axis=1),
    "amax_keepdims": lambda jx, jnp, z: jnp.amax(z, axis=0, keepdims=True),
    "max_initial": lambda jx, jnp, z: jnp.max(z, initial=0j),
    "nanmax": lambda jx, jnp, z: jnp.nanmax(z),
    "ptp": lambda jx, jnp, z: jnp.ptp(z, axis=1),
    "sort": lambda jx, jnp, z: jnp.sort(z, axis=1),
    "sort_flat": lambda jx, jnp, z: jnp.sort(z, axis=None),
    "maximum": lambda jx, jnp, z: jnp.maximum(z[0], z[1]),
    "grad_max": lambda jx, jnp, z: jx.grad(lambda a: jnp.abs(jnp.max(a)))(z),
    "jit_min": lambda jx, jnp, z: jx.jit(lambda a: jnp.min(a, axis=0))(z),
    # JAX defines no argmax/argmin for complex: both raise TypeError
    "argmax": lambda jx, jnp, z: jnp.argmax(z),
    "argmin_axis": lambda jx, jnp, z: jnp.argmin(z, axis=1),
    "meth_argmax": lambda jx, jnp, z: z.argmax(),
    "nanargmin": lambda jx, jnp, z: jnp.nanargmin(z),
    "lax_argmax": lambda jx, jnp, z: jx.lax.argmax(z, 0, jnp.int32),
}


@pytest.mark.parametrize("name", list(ORDER))
def test_order(backend, name):
    check(ORDER[name], ZT, **TOL)


def test_argmax_raises_type_error():
    for lib in (jjnp, pjnp):
        with pytest.raises(TypeError):
            lib.argmax(lib.asarray(ZT))


# --- inverse trig and hyperbolic functions ---------------------------------------------------------

INVERSE = ("arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh")


@pytest.mark.parametrize("name", INVERSE)
def test_inverse(backend, name):
    check(lambda jx, jnp, z: getattr(jnp, name)(z), Z, **TOL)
    check(lambda jx, jnp, z: getattr(jnp, name)(z), Z * 30, **TOL)
    check(lambda jx, jnp, z: getattr(jnp, name)(z), Z * 1e-3, **TOL)


@pytest.mark.parametrize("name", INVERSE)
def test_inverse_branch_cuts(backend, name):
    check(lambda jx, jnp, z: getattr(jnp, name)(z), CUT, **TOL)


INVERSE_MORE = {
    "lax_asin": lambda jx, jnp, z: jx.lax.asin(z),
    "lax_atanh": lambda jx, jnp, z: jx.lax.atanh(z),
    "jit_acos": lambda jx, jnp, z: jx.jit(jnp.arccos)(z),
    "vmap_asinh": lambda jx, jnp, z: jx.vmap(jnp.arcsinh)(z),
    "of_real_cast": lambda jx, jnp, z: jnp.arcsin(jnp.asarray([-3.0, -1, -0.5, 0, 0.5, 1, 3]).astype(jnp.complex64)),
    "asin_of_sin": lambda jx, jnp, z: jnp.arcsin(jnp.sin(z * 0.3)),
    "grad_abs_asin": lambda jx, jnp, z: jx.grad(lambda a: jnp.abs(jnp.arcsin(a)))(z[0, 0]),
    "grad_abs_atan": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.abs(jnp.arctan(a))))(z),
    "grad_real_acos": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.real(jnp.arccos(a))))(z),
    "grad_imag_asinh": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.imag(jnp.arcsinh(a))))(z),
    "gradh_asin": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.arcsin(a)), holomorphic=True)(z),
    "gradh_acos": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.arccos(a)), holomorphic=True)(z),
    "gradh_atan": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.arctan(a)), holomorphic=True)(z),
    "gradh_asinh": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.arcsinh(a)), holomorphic=True)(z),
    "gradh_atanh": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.arctanh(a)), holomorphic=True)(z),
    # JAX's acosh derivative rsqrt((z-1)(z+1)) has the right sign for Re z > 0 only (see below)
    "gradh_acosh_right": lambda jx, jnp, z: jx.grad(lambda a: jnp.sum(jnp.arccosh(a)), holomorphic=True)(
        jnp.abs(jnp.real(z)) + 1j * jnp.imag(z)
    ),
    # JAX has no complex cbrt: TypeError in both
    "cbrt": lambda jx, jnp, z: jnp.cbrt(z),
    "lax_cbrt": lambda jx, jnp, z: jx.lax.cbrt(z),
}


@pytest.mark.parametrize("name", list(INVERSE_MORE))
def test_inverse_more(backend, name):
    check(INVERSE_MORE[name], Z, rtol=1e-5, atol=2e-6)


def test_acosh_derivative_left_half_plane(backend):
    """For Re z < 0 JAX's holomorphic acosh derivative has the wrong sign; pyjax differentiates the
    principal branch it computes, so compare with a central difference instead."""
    z = np.array([-1.3 + 0.6j, -0.4 - 2j, -2.5 + 0.1j], np.complex128)
    g = pyjax.grad(lambda a: pjnp.sum(pjnp.arccosh(a)), holomorphic=True)(pjnp.asarray(z.astype(np.complex64)))
    h = 1e-6
    fd = (np.arccosh(z + h) - np.arccosh(z - h)) / (2 * h)
    np.testing.assert_allclose(np.asarray(g), fd, rtol=1e-5, atol=1e-6)


# --- scatter multiply / min / max ----------------------------------------------------------------

IDX = np.array([0, 2, 0], np.int32)
U = _c(3, 5)

SCATTER = {
    "set": lambda jx, jnp, z, i, u: z.at[i].set(u),
    "add": lambda jx, jnp, z, i, u: z.at[i].add(u),
    "mul_scalar": lambda jx, jnp, z, i, u: z.at[0, 1].multiply(2 - 1j),
    "mul_repeated": lambda jx, jnp, z, i, u: z.at[i].multiply(u),
    "mul_unique": lambda jx, jnp, z, i, u: z.at[i[:2]].multiply(u[:2], unique_indices=True),
    "mul_zero": lambda jx, jnp, z, i, u: z.at[i].multiply(u.at[0, 0].set(0)),
    "mul_out_of_range": lambda jx, jnp, z, i, u: z.at[jnp.array([1, 7, 1])].multiply(u),
    "divide": lambda jx, jnp, z, i, u: z.at[i].divide(u),
    "power": lambda jx, jnp, z, i, u: z.at[1].power(3),
    "min": lambda jx, jnp, z, i, u: z.at[i].min(u),
    "max": lambda jx, jnp, z, i, u: z.at[i].max(u),
    "max_ties": lambda jx, jnp, z, i, u: z.at[i].max(jnp.real(z[i]) + 1j * jnp.imag(u)),
    "min_scalar": lambda jx, jnp, z, i, u: z.at[0].min(0j),
    "max_col": lambda jx, jnp, z, i, u: z.at[i, 1].max(u[:, 0]),
    "jit_max": lambda jx, jnp, z, i, u: jx.jit(lambda a, b: a.at[i].max(b))(z, u),
    "vmap_mul": lambda jx, jnp, z, i, u: jx.vmap(lambda a, b: a.at[i[:2]].multiply(b[:2]))(z, u),
    "grad_mul_x": lambda jx, jnp, z, i, u: jx.grad(lambda a: jnp.sum(jnp.abs(a.at[i].multiply(u))))(z),
    "grad_mul_unique_u": lambda jx, jnp, z, i, u: jx.grad(
        lambda b: jnp.sum(jnp.abs(z.at[i[:2]].multiply(b, unique_indices=True))) ** 2
    )(u[:2]),
    "grad_max_x": lambda jx, jnp, z, i, u: jx.grad(lambda a: jnp.sum(jnp.abs(a.at[i].max(u))))(z),
    "grad_min_u": lambda jx, jnp, z, i, u: jx.grad(lambda b: jnp.sum(jnp.abs(z.at[i].min(b))))(u),
}


@pytest.mark.parametrize("name", list(SCATTER))
def test_scatter(backend, name):
    check(SCATTER[name], ZT, IDX, U, rtol=2e-5, atol=2e-6)


def test_scatter_mul_grad_of_updates_raises():
    """As in JAX, repeated-index scatter-multiply has no gradient for its updates."""
    for jx, jnp in ((jax, jjnp), (pyjax, pjnp)):
        z, u = jnp.asarray(ZT), jnp.asarray(U)
        with pytest.raises(NotImplementedError):
            jx.grad(lambda b: jnp.sum(jnp.abs(z.at[jnp.asarray(IDX)].multiply(b))))(u)


# --- common helpers ---------------------------------------------------------------------------------

NEG = np.array([-1.0, -4.0, 0.0, 2.5, -0.25], np.float32)
R = np.array([1.0, 2.0, -3.0, 0.0], np.float32)

MISC = {
    "log_neg": lambda jx, jnp, z, x: jnp.log(x.astype(jnp.complex64)),
    "sqrt_neg": lambda jx, jnp, z, x: jnp.sqrt(x + 0j),
    "log10_neg": lambda jx, jnp, z, x: jnp.log10(jx.lax.complex(x, jnp.zeros_like(x))),
    "log2_neg": lambda jx, jnp, z, x: jnp.log2(x + 0j),
    "power_neg_half": lambda jx, jnp, z, x: jnp.power(x.astype(jnp.complex64), 0.5),
    "angle": lambda jx, jnp, z, x: jnp.angle(z),
    "angle_neg": lambda jx, jnp, z, x: jnp.angle(x + 0j),
    "abs": lambda jx, jnp, z, x: jnp.abs(z * 1e20),
    "norm": lambda jx, jnp, z, x: jnp.linalg.norm(z[0]),
    "norm_1": lambda jx, jnp, z, x: jnp.linalg.norm(z[0], 1),
    "norm_inf": lambda jx, jnp, z, x: jnp.linalg.norm(z[0], jnp.inf),
    "norm_3": lambda jx, jnp, z, x: jnp.linalg.norm(z[0], 3),
    "norm_axis": lambda jx, jnp, z, x: jnp.linalg.norm(z, axis=1),
    "norm_fro": lambda jx, jnp, z, x: jnp.linalg.norm(z, "fro"),
    "vector_norm": lambda jx, jnp, z, x: jnp.linalg.vector_norm(z),
    "vector_norm_axis": lambda jx, jnp, z, x: jnp.linalg.vector_norm(z, axis=0, ord=1),
    "vdot": lambda jx, jnp, z, x: jnp.vdot(z[0], z[1]),
    "vdot_real": lambda jx, jnp, z, x: jnp.vdot(jnp.real(z[0]), z[1]),
    "dot_mixed": lambda jx, jnp, z, x: jnp.dot(z, jnp.real(z).T),
    "matmul_mixed": lambda jx, jnp, z, x: jnp.real(z) @ z.T,
    "inner": lambda jx, jnp, z, x: jnp.inner(z, z),
    "vecdot": lambda jx, jnp, z, x: jnp.vecdot(z, z),
    "einsum_conj": lambda jx, jnp, z, x: jnp.einsum("ij,ij->i", z, jnp.conj(z)),
    "conj_real": lambda jx, jnp, z, x: jnp.conj(x),
    "real_int": lambda jx, jnp, z, x: jnp.real(x.astype(jnp.int32)),
    "imag_int": lambda jx, jnp, z, x: jnp.imag(x.astype(jnp.int32)),
    "angle_int": lambda jx, jnp, z, x: jnp.angle(x.astype(jnp.int32)),
    "conj_int": lambda jx, jnp, z, x: jnp.conj(x.astype(jnp.int32)),
    "grad_norm": lambda jx, jnp, z, x: jx.grad(lambda a: jnp.linalg.norm(a))(z),
    "grad_vdot": lambda jx, jnp, z, x: jx.grad(lambda a: jnp.real(jnp.vdot(a, a)))(z),
    "grad_angle": lambda jx, jnp, z, x: jx.grad(lambda a: jnp.sum(jnp.angle(a)))(z),
    # JAX rejects these for complex input
    "fabs": lambda jx, jnp, z, x: jnp.fabs(z),
    "signbit": lambda jx, jnp, z, x: jnp.signbit(z),
    "isposinf": lambda jx, jnp, z, x: jnp.isposinf(z),
    "isneginf": lambda jx, jnp, z, x: jnp.isneginf(z),
    "clip": lambda jx, jnp, z, x: jnp.clip(z, 0, 1),
    "clip_bound": lambda jx, jnp, z, x: jnp.clip(x, 0j),
    "median": lambda jx, jnp, z, x: jnp.median(z),
    "quantile": lambda jx, jnp, z, x: jnp.quantile(z, 0.5),
}


@pytest.mark.parametrize("name", list(MISC))
def test_misc(backend, name):
    check(MISC[name], Z, NEG if name.endswith(("_neg", "neg_half")) else R, rtol=1e-5, atol=2e-6)


def test_abs_and_log_at_special_values_and_grad_at_zero(backend):
    """|z| with an infinite part is inf (NaN beside a NaN, as XLA), log follows; d|z| at 0 is 0."""
    z = np.array(
        [complex("inf+1j"), complex("1-infj"), complex("inf+nanj"), complex("nan+1j"), 0j, 3 + 4j, 1e30 + 1e30j]
    )
    check(lambda jx, jnp: [jnp.abs(jnp.asarray(z)), jnp.log(jnp.asarray(z))], **TOL)
    check(lambda jx, jnp: [jx.grad(lambda v: jnp.abs(v))(c) for c in (0j, -0.0 - 2j, 3 + 4j)], **TOL)
