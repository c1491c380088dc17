"""lax.fft, ragged_dot / ragged_dot_general, conv_general_dilated_local, composite and the small
lax types, against real JAX on every backend: values, dtypes, gradients and JAX's errors."""

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

# --- ragged_dot ---------------------------------------------------------------------------------

LHS, RHS = _r(10, 4), _r(3, 4, 5)
GS = np.array([3, 2, 4], np.int32)  # sums to 9 < 10: the last row is zero


def test_ragged_dot_values_and_grads(backend):
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), LHS, RHS, GS, **TOL)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), LHS, RHS, np.array([0, 10, 0], np.int32), **TOL)
    check(
        lambda jx, jnp, a, b, g: jx.grad(lambda a, b: jnp.sum(jnp.sin(jx.lax.ragged_dot(a, b, g))), (0, 1))(a, b),
        LHS,
        RHS,
        GS,
        **TOL,
    )
    check(
        lambda jx, jnp, a, b, g: jx.jit(jx.lax.ragged_dot)(a, b, g),
        LHS,
        RHS,
        np.array([1, 5, 4], np.int32),
        **TOL,
    )


def test_ragged_dot_dtypes(backend):
    i = rng.integers(-3, 4, (6, 3)).astype(np.int32)
    w = rng.integers(-3, 4, (2, 3, 2)).astype(np.int32)
    g = np.array([4, 2], np.int32)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), i, w, g)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a.astype(jnp.bfloat16), b, g), _r(6, 3), _r(2, 3, 2), g)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g, preferred_element_type=jnp.float32), i, w, g)
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g.astype(jnp.uint8)), _r(6, 3), _r(2, 3, 2), g, **TOL)


@pytest.mark.parametrize(
    "args",
    [
        (_r(4, 3), _r(2, 3, 5), np.array([2.0, 2.0], np.float32)),  # float group sizes
        (_r(4, 3), _r(2, 2, 5), np.array([2, 2], np.int32)),  # contracting mismatch
        (_r(4, 3), _r(3, 3, 5), np.array([2, 2], np.int32)),  # group count mismatch
        (_r(4, 3), _r(2, 3, 5), np.array(2, np.int32)),  # scalar group sizes
        (_r(4, 3), _r(2, 3, 5), np.array([[2, 2]], np.int32)),  # wrong group sizes shape
    ],
)
def test_ragged_dot_errors(args):
    check(lambda jx, jnp, a, b, g: jx.lax.ragged_dot(a, b, g), *args)


def _dn(jx, *a):
    return jx.lax.RaggedDotDimensionNumbers(*a)


def test_ragged_dot_general_modes(backend):
    # non-contracting ragged dim with a batch dim: [b, m, k] x [g, b, k, n], group sizes [b, g] or [g]
    a, b = _r(2, 6, 3), _r(3, 2, 3, 4)
    for g in (np.array([[1, 2, 3], [3, 3, 0]], np.int32), np.array([1, 2, 3], np.int32)):
        check(
            lambda jx, jnp, a, b, g: jx.lax.ragged_dot_general(a, b, g, _dn(jx, (([2], [2]), ([0], [1])), [1], [0])),
            a,
            b,
            g,
            **TOL,
        )
    # contracting ragged dim: one partial product per group, stacked in front
    x, y, g = _r(6, 9), _r(9, 7), np.array([2, 3, 3], np.int32)
    f2 = lambda jx, jnp, x, y, g: jx.lax.ragged_dot_general(x, y, g, _dn(jx, (([1], [0]), ([], [])), [1], []))  # noqa: E731
    check(f2, x, y, g, **TOL)
    # JAX has no gradient in this mode; pyjax's against JAX's of the same thing written with masks
    got = pyjax.grad(lambda x, y: pyjax.numpy.sum(f2(pyjax, None, x, y, g) ** 2), (0, 1))(x, y)

    def masked(x, y):
        ends = np.cumsum(g)
        k = np.arange(9)
        parts = [(x * ((k >= e - n) & (k < e))) @ y for e, n in zip(ends, g)]
        return jax.numpy.sum(jax.numpy.stack(parts) ** 2)

    want = jax.grad(masked, (0, 1))(x, y)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-3)
    # batch ragged dim: plain dot_general
    a, b = _r(5, 2, 3), _r(5, 3, 2)
    check(
        lambda jx, jnp, a, b, g: jx.lax.ragged_dot_general(a, b, g, _dn(jx, (([2], [1]), ([0], [0])), [0], [])),
        a,
        b,
        np.array([1, 2], np.int32),
        **TOL,
    )


@pytest.mark.parametrize(
    "dn",
    [
        ((([1], [1]), ([], [])), [0, 1], [0]),
        ((([1], [1]), ([], [])), [0], [0, 1]),
        ((([1], [1]), ([], [])), [], [0]),
        ((([1], [1]), ([], [])), [1], [0]),
        ((([1], [1]), ([], [])), [0], [1]),
    ],
)
def test_ragged_dot_general_errors(dn):
    check(
        lambda jx, jnp, a, b, g: jx.lax.ragged_dot_general(a, b, g, _dn(jx, *dn)),
        _r(4, 3),
        _r(2, 3, 5),
        np.array([2, 2], np.int32),
    )


def test_ragged_dot_vmap(backend):
    a, b, g = _r(3, 6, 2), _r(3, 2, 2, 4), np.array([[2, 4], [6, 0], [1, 1]], np.int32)
    check(lambda jx, jnp, a, b, g: jx.vmap(jx.lax.ragged_dot)(a, b, g), a, b, g, **TOL)
    # JAX's vmap supports only batched rhs; pyjax's also an unbatched one
    out = pyjax.vmap(pyjax.lax.ragged_dot, (0, None, 0))(a, b[0], g)
    want = np.stack([np.asarray(jax.lax.ragged_dot(a[i], b[0], g[i])) for i in range(3)])
    np.testing.assert_allclose(np.asarray(out), want, **TOL)


def test_ragged_dot_dimension_numbers_type():
    d = pyjax.lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    j = jax.lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    assert repr(d) == repr(j)
    assert d == pyjax.lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    assert hash(d) == hash(pyjax.lax.RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,)))


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


# --- conv_general_dilated_local -----------------------------------------------------------------

LOCAL_CASES = [
    (("NCHW", "OIHW", "NCHW"), (2, 3, 6, 5), (4, 12, 5, 4), (2, 2), (1, 1), "VALID", None, None),
    (("NHWC", "HWIO", "NHWC"), (2, 6, 5, 3), (3, 5, 18, 4), (3, 2), (2, 1), "SAME", None, None),
    (None, (2, 3, 7), (4, 9, 6), (3,), (1,), ((1, 0),), None, None),
    (None, (1, 2, 7), (3, 4, 5), (2,), (1,), "VALID", None, (2,)),
]


@pytest.mark.parametrize("case", range(len(LOCAL_CASES)))
def test_conv_general_dilated_local(backend, case):
    dn, ls, rs, fs, st, pad, ld, rd = LOCAL_CASES[case]
    lhs, rhs = _r(*ls), _r(*rs)

    def f(jx, jnp, lhs, rhs):
        return jx.lax.conv_general_dilated_local(lhs, rhs, st, pad, fs, ld, rd, dn)

    check(f, lhs, rhs, **TOL)
    check(lambda jx, jnp, a, b: jx.grad(lambda a, b: jnp.sum(f(jx, jnp, a, b) ** 2), (0, 1))(a, b), lhs, rhs, **TOL)


# --- composite and small types ------------------------------------------------------------------


def test_composite(backend):
    def f(jx, jnp, x):
        tan = jx.lax.composite(lambda x, *, scale=1.0: jx.lax.sin(x) / jx.lax.cos(x) * scale, name="my.tangent")
        return tan(x), tan(x, scale=2.0), jx.jit(tan)(x)

    check(f, _r(5), **TOL)
    comp = pyjax.lax.composite(lambda x: x + 1, name="my.inc", version=2)
    assert comp.composite_name == "my.inc" and comp.composite_version == 2
    # JAX has no JVP rule for composites; pyjax differentiates the decomposition
    assert float(pyjax.grad(lambda x: comp(x) * x)(2.0)) == 5.0


def test_precision_types(backend):
    x, y = _r(3, 4), _r(4, 2)
    for name in ("DEFAULT", "F32_F32_F32", "BF16_BF16_F32"):
        check(lambda jx, jnp, x, y: jnp.dot(x, y, precision=getattr(jx.lax.DotAlgorithmPreset, name)), x, y, **TOL)
    # JAX's CPU backend rejects explicit DotAlgorithms; pyjax accepts and ignores them
    alg = pyjax.lax.DotAlgorithm("float32", "float32", "float32")
    np.testing.assert_allclose(np.asarray(pyjax.lax.dot(x, y, precision=alg)), x @ y, **TOL)
    for t in jax.lax.DotAlgorithmPreset:
        p = getattr(pyjax.lax.DotAlgorithmPreset, t.name)
        assert p.value == t.value and str(p) == str(t) and repr(p) == repr(t)
    for t in jax.lax.RandomAlgorithm:
        assert int(getattr(pyjax.lax.RandomAlgorithm, t.name)) == int(t)
    for t in jax.lax.AccuracyMode:
        assert getattr(pyjax.lax.AccuracyMode, t.name).value == t.value
    assert pyjax.lax.DotAlgorithm("f32", "f32", "f32")._fields == jax.lax.DotAlgorithm._fields
    assert pyjax.lax.Tolerance(atol=1e-3).atol == 1e-3
    with pytest.raises(ValueError):
        pyjax.lax.Tolerance()
    assert pyjax.lax.DotDimensionNumbers is not None and pyjax.lax.PrecisionLike is not None


def test_rng_bit_generator_not_implemented():
    with pytest.raises(NotImplementedError, match="pyjax.random"):
        pyjax.lax.rng_bit_generator(pyjax.numpy.zeros(4, "uint32"), (3,))
