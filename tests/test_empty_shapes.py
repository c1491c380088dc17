"""Empty (size-0) and 0-d shapes through every op family, and places where backends disagreed, against JAX.

Empty contractions are zeros, reductions of nothing are their identities, routines with nothing to
compute are never dispatched, and errors match JAX's where it raises (argmax of nothing, max of
nothing without `initial`). Cholesky of a matrix that is not positive definite is NaN below and 0
above the diagonal on every backend; lax's binary ops broadcast size-1 dimensions as JAX 0.10 does;
integers raised to negative powers raise."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.compiler.ir import Routine
from pyjax.core import dtypes
from pyjax.core.core import ShapedArray

from jax_compare import check

F32 = np.float32


def E(*shape, dtype=F32):
    return np.ones(shape, dtype)


def R(*shape, dtype=F32):
    return np.arange(math.prod(shape), dtype=dtype).reshape(shape)


# name -> (fn(jax, jnp, *args), *args): each failed on some backend before (marked) or guards a family
EMPTY_CASES = {
    # contractions over an empty axis are zeros (before: internal assertion, WGSL error, NoneType)
    "matmul_k0": (lambda j, n, a, b: a @ b, E(3, 0), E(0, 4)),
    "dot_00": (lambda j, n, a, b: (n.dot(a, b), n.vdot(a, b), n.inner(a, b)), E(0), E(0)),
    "einsum_k0": (lambda j, n, a, b: (n.einsum("ij,jk->ik", a, b), n.tensordot(a, b, 1)), E(2, 0), E(0, 3)),
    "dot_k0_int_bool_f16": (
        lambda j, n, a, b: (a @ b, (a > 0) @ (b > 0), a.astype(n.float16) @ b.astype(n.float16)),
        R(2, 0, dtype=np.int32),
        R(0, 3, dtype=np.int32),
    ),
    "dot_k0_preferred": (
        lambda j, n, a, b: j.lax.dot(a, b, preferred_element_type=n.float32),
        E(2, 0, dtype=np.float16),
        E(0, 3, dtype=np.float16),
    ),
    "dot_general_batched_k0": (
        lambda j, n, a, b: j.lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
        E(2, 3, 0),
        E(2, 0, 4),
    ),
    "matmul_empty_out": (lambda j, n, a, b: (a @ b, j.vmap(n.dot)(a, a)), E(0, 3), E(3, 4)),
    "conv_empty_in_channels": (lambda j, n, x, w: j.lax.conv(x, w, (1, 1), "SAME"), E(1, 0, 5, 5), E(3, 0, 3, 3)),
    "conv_empty_batch": (lambda j, n, x, w: j.lax.conv(x, w, (1, 1), "SAME"), E(0, 2, 5, 5), E(3, 2, 3, 3)),
    "conv_empty_window": (lambda j, n, x, w: j.lax.conv(x, w, (1,), "VALID"), E(1, 2, 5), E(3, 2, 0)),  # ValueError
    "conv_empty_spatial": (lambda j, n, x, w: j.lax.conv(x, w, (1,), "VALID"), E(1, 2, 0), E(3, 2, 1)),
    "grad_matmul_k0": (lambda j, n, a, b: j.grad(lambda x, y: (x @ y).sum(), argnums=(0, 1))(a, b), E(2, 0), E(0, 3)),
    # reductions: identities, and JAX's errors where there is none
    "reduce_identities": (
        lambda j, n, a: (a.sum(0), a.prod(0), n.max(a, 0, initial=-1.0), a.any(0), a.all(0), a.mean(0), a.max(1)),
        E(0, 3),
    ),
    "reduce_int_bool": (
        lambda j, n, a: (a.sum(0), a.prod(0), a.min(0, initial=5), (a > 1).sum(0)),
        R(0, 3, dtype=np.int32),
    ),
    "max_of_nothing": (lambda j, n, a: n.max(a), E(0)),
    "argmax_empty_result": (lambda j, n, a: (n.argmax(a, axis=1), n.argmin(a, axis=1, keepdims=True)), E(0, 3)),
    "argmax_of_nothing": (lambda j, n, a: n.argmax(a, axis=0), E(0, 3)),
    "lax_argmax_of_nothing": (lambda j, n, a: j.lax.argmax(a, 1, n.int32), E(3, 0)),
    "norms_of_nothing": (
        lambda j, n, a, m: (n.linalg.norm(a, n.inf), n.linalg.norm(m, 1), n.linalg.norm(m, 2), n.linalg.norm(m, "nuc")),
        E(0),
        E(0, 0),
    ),
    # cumulative ops, scans, sorting
    "cumulative": (
        lambda j, n, a: (n.cumsum(a, 0), n.cumprod(a, 1), j.lax.cummax(a, 0), j.lax.cumsum(a, 1, reverse=True)),
        E(0, 3),
    ),
    "scan_len0": (lambda j, n, a: j.lax.scan(lambda c, x: (c + x.sum(), x * 2), 0.0, a), E(0, 2)),
    "scan_empty_x": (lambda j, n, a: j.lax.scan(lambda c, x: (c + x.sum(), x * 2), 0.0, a), E(3, 0)),
    "sort_family": (
        lambda j, n, a: (n.sort(a, 0), n.argsort(a, 1), j.lax.top_k(a, 2)[1], n.sort(a[:, :0], 1)),
        E(0, 3),
    ),
    # linalg of 0x0 and of empty batches (before: reshape error, NoneType, zero-size max)
    "cholesky_0x0": (lambda j, n, a: (n.linalg.cholesky(a), n.linalg.cholesky(a[None, :0, :0])), E(0, 0)),
    "solve_inv_det_0x0": (
        lambda j, n, a, b: (n.linalg.solve(a, b), n.linalg.inv(a), n.linalg.det(a)),
        E(0, 0),
        E(0, 3),
    ),
    "eigh_svd_0x0": (lambda j, n, a: (n.linalg.eigh(a), n.linalg.svd(a)), E(0, 0)),
    "qr_svd_3x0": (lambda j, n, a: (n.linalg.qr(a), n.linalg.svd(a, compute_uv=False)), E(3, 0)),
    "linalg_empty_batch": (lambda j, n, a: (n.linalg.svd(a), n.linalg.inv(a), n.linalg.eigh(a)[0]), E(0, 2, 2)),
    "expm_0x0": (lambda j, n, a: j.scipy.linalg.expm(a), E(0, 0)),
    # indexing, movement, fft, random
    "gather_scatter": (
        lambda j, n, a, i: (a[i], n.take(a, i, axis=1), a.at[i].set(5.0), a.at[:, i].add(1.0)),
        R(3, 3),
        R(0, dtype=np.int32),
    ),
    "movement": (
        lambda j, n, a: (
            n.concatenate([a, a], 1),
            n.pad(a, 1),
            a.reshape(3, 0, 1).transpose(1, 2, 0),
            n.flip(a, 0),
            a[:, 1:1],
        ),
        E(0, 3),
    ),
    "fft_empty_batch": (lambda j, n, a: n.fft.fft(a), E(0, 4)),
    "random_empty": (
        lambda j, n, k: (j.random.normal(j.random.PRNGKey(0), (0, 3)), j.random.permutation(j.random.PRNGKey(0), 0)),
        0,
    ),
    # 0-d
    "zero_d": (
        lambda j, n, a: (n.sum(a), n.cumsum(a), n.argmax(a), a[None], n.dot(a, a), n.outer(a, a), a.at[()].set(1.0)),
        np.array(F32(2.5)),
    ),
}


@pytest.mark.parametrize("name", list(EMPTY_CASES))
def test_empty_and_0d(backend, name):
    fn, *args = EMPTY_CASES[name]
    check(fn, *args)


@pytest.mark.parametrize(
    "name", ["matmul_k0", "dot_k0_int_bool_f16", "reduce_identities", "cholesky_0x0", "eigh_svd_0x0", "sort_family"]
)
def test_empty_and_0d_under_jit(backend, name):
    fn, *args = EMPTY_CASES[name]
    check(lambda j, n, *xs: j.jit(lambda *ys: fn(j, n, *ys))(*xs), *args)


def test_routines_without_elements_are_not_dispatched():
    """A routine whose outputs hold nothing, and any output without elements, needs no step: the partitioner
    turns them into empty constants, so no backend ever sees a size-0 routine or output kernel."""
    from pyjax.compiler import lowering, partition
    from pyjax.compiler.views import ShapeTracker

    def f(a, b):
        return jnp.linalg.cholesky(a) + 1, jnp.sort(b, axis=0), jnp.cumsum(b * 2, axis=1), b @ b.T

    a, b = jnp.ones((0, 0)), jnp.ones((0, 3))
    jaxpr = pyjax.make_jaxpr(f)(a, b).jaxpr
    specs = [(x.dtype, ShapeTracker.contiguous(x.shape)) for x in (a, b)]
    program = partition.compile_jaxpr(jaxpr, specs, lambda v, av: lowering.constant(v, av.dtype, av.shape))
    assert program.steps == [], program
    assert [o[0] for o in program.outputs] == ["const"] * 4


# --- backends that disagreed --------------------------------------------------------------------------------

CHOLESKY_INPUTS = {
    "not_positive_definite": [[1.0, 2, 0], [2, 1, 0], [0, 0, 1]],
    "fails_late": [[4.0, 2, 0], [2, 2, 0], [0, 0, -1]],
    "zero_pivot": [[0.0, 0], [0, 1]],
    "nan_pivot_flows_on": [[4.0, 1, 0], [1, np.nan, 0], [0, 0, 1]],
    "nan_off_diagonal": [[1.0, np.nan], [np.nan, 1]],
    "inf_pivot": [[np.inf, 0], [0, 1]],
}


@pytest.mark.parametrize("name", list(CHOLESKY_INPUTS))
def test_cholesky_failures_match_jax(backend, name):
    """JAX: a pivot <= 0 makes the lower triangle NaN (upper 0); a NaN pivot is no failure, NaN flows on."""
    a = np.array(CHOLESKY_INPUTS[name], F32)
    check(lambda j, n, x: (j.lax.linalg.cholesky(x), n.linalg.cholesky(x[None])), a)


def test_cholesky_failures_pure_python_cpu():
    """The cpu backend without numpy (Pyodide) follows the same rule."""
    from pyjax.backends.cpu import CpuBackend

    be = CpuBackend(use_numpy=False)
    mats = [CHOLESKY_INPUTS[k] for k in ("not_positive_definite", "nan_pivot_flows_on")]
    flat = [float(v) for m in mats for row in m for v in row]
    aval = ShapedArray((2, 3, 3), dtypes.float32)
    src, out = be.malloc(4 * len(flat)), be.malloc(4 * len(flat))
    be.write(src, struct.pack(f"<{len(flat)}f", *flat))
    be.dispatch(be.prepare_routine(Routine("cholesky", {}, (aval,), (aval,))), [src], [out])
    got = np.frombuffer(be.read(out, 4 * len(flat)), F32).reshape(2, 3, 3)
    nan = np.nan
    want = [[[nan, 0, 0], [nan, nan, 0], [nan, nan, nan]], [[2, 0, 0], [0.5, nan, 0], [0, nan, nan]]]
    np.testing.assert_array_equal(got, np.array(want, F32))


BROADCAST_SHAPES = [
    ((3,), (1,)),
    ((1,), (3,)),
    ((2, 3), (2, 1)),
    ((2, 1), (1, 3)),
    ((3,), ()),
    ((0,), (1,)),
    ((2, 3), (3,)),  # ranks differ: TypeError
    ((3,), (2,)),  # incompatible: TypeError
]


@pytest.mark.parametrize("xs,ys", BROADCAST_SHAPES)
def test_lax_binary_ops_broadcast_size_one(backend, xs, ys):
    check(
        lambda j, n, x, y: (j.lax.add(x, y), j.lax.atan2(x, y), j.lax.lt(x, y), j.lax.complex(x, y)),
        R(*xs) + 1,
        R(*ys) + 2,
    )


def test_lax_broadcasting_errors_and_transforms(backend):
    import jax

    for xs, ys in [((2, 3), (3,)), ((3,), (2,))]:
        with pytest.raises(TypeError) as pe:
            pyjax.lax.mul(pyjax.numpy.ones(xs), pyjax.numpy.ones(ys))
        with pytest.raises(TypeError) as je:
            jax.lax.mul(jax.numpy.ones(xs), jax.numpy.ones(ys))
        assert str(pe.value) == str(je.value)
    x, y = R(2, 3), R(2, 1) + 1
    check(lambda j, n, x, y: j.grad(lambda a, b: j.lax.mul(a, b).sum(), argnums=(0, 1))(x, y), x, y)
    check(lambda j, n, x, y: j.vmap(j.lax.sub)(x, y), x, y)
    check(lambda j, n, x, y: j.jit(j.lax.max)(x, y), x, y)


def test_converted_bool_times_nan_under_jit(backend):
    """Fuzzer seed 472: fused into one WebGPU kernel, float(c) * v lost 0 * NaN = NaN (the shader compiler
    folds b2f(c) * v into select(c, v, 0)) where cpu and wasm kept it. Every backend now computes IEEE
    products, eagerly and under jit. (XLA makes that fold too, inside one computation, and not inside 2-D
    dots: JAX gives either answer, so IEEE arithmetic in numpy is the reference here.)"""
    m = np.array([[0.2, 0.9, 0.1], [0.7, 0.0, 0.3]], F32)
    v = np.array([[np.nan, np.inf, 2.0], [-np.inf, -0.0, np.nan]], F32)

    def g(n, m, v):
        c, z = (m > 0.5).astype(n.float32), (m < m).astype(n.float32)
        return c * v, v * z, n.tensordot(z, v.T, 1)

    with np.errstate(invalid="ignore"):
        want = g(np, m, v)
    for got in (g(jnp, jnp.asarray(m), jnp.asarray(v)), pyjax.jit(lambda m, v: g(jnp, m, v))(m, v)):
        for a, b in zip(got, want):
            np.testing.assert_array_equal(np.asarray(a), b)


@pytest.mark.parametrize("dtype", [np.int32, np.uint8])
def test_integer_pow_negative_raises(backend, dtype):
    import jax

    x = R(3, dtype=dtype) + 1
    for run in (lambda j, n: j.lax.integer_pow(n.asarray(x), -1), lambda j, n: j.jit(lambda v: v**-2)(n.asarray(x))):
        with pytest.raises(TypeError) as pe:
            run(pyjax, pyjax.numpy)
        with pytest.raises(TypeError) as je:
            run(jax, jax.numpy)
        assert str(pe.value) == str(je.value)
    check(lambda j, n, v: (j.lax.integer_pow(v, 0), j.lax.integer_pow(v.astype(n.float32), -1)), x)
