"""pyjax.nn, pyjax.nn.initializers, pyjax.scipy.special and pyjax.scipy.stats.norm against real JAX:
values, dtypes, gradients (kinks, stability), jit and vmap; initializers bit-compatible for a key."""

from __future__ import annotations

import jax
import jax.numpy as jj
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj
import pyjax.numpy as pjnp
import pyjax.random as prandom
import pyjax.scipy.special as psp
import pyjax.scipy.stats.norm as pnorm
from pyjax import nn as pnn

X = np.concatenate([np.linspace(-7, 7, 29), [0.0, 1.0, -1.0, 6.0, -3.0, 3.0]]).astype(np.float32)
M = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32) * 3


def close(a, b, rtol=1e-5, atol=1e-6, check_dtype=True):
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        if check_dtype:
            assert x.dtype == y.dtype, (x.dtype, y.dtype)
        np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol)


ELEMENTWISE = [
    "relu",
    "relu6",
    "sigmoid",
    "softplus",
    "soft_sign",
    "silu",
    "swish",
    "elu",
    "celu",
    "selu",
    "leaky_relu",
    "hard_tanh",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "log_sigmoid",
    "mish",
    "squareplus",
    "sparse_plus",
    "sparse_sigmoid",
    "identity",
]


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_activation_values_and_grads(backend, name):
    fp, fj = getattr(pnn, name), getattr(jax.nn, name)
    close(fp(pjnp.asarray(X)), fj(X))
    gp = pyjax.grad(lambda v: pjnp.sum(fp(v)))(pjnp.asarray(X))
    gj = jax.grad(lambda v: jnp.sum(fj(v)))(X)
    close(gp, gj)
    close(pyjax.vmap(pyjax.grad(fp))(pjnp.asarray(X)), jax.vmap(jax.grad(fj))(X))
    close(pyjax.jit(fp)(pjnp.asarray(X)), jax.jit(fj)(X))


def test_relu_kinks(backend):
    for v in (0.0, 6.0):
        close(pyjax.grad(pnn.relu)(v), jax.grad(jax.nn.relu)(v))
        close(pyjax.grad(pnn.relu6)(v), jax.grad(jax.nn.relu6)(v))
        close(pyjax.jit(pyjax.grad(pnn.relu6))(v), jax.jit(jax.grad(jax.nn.relu6))(v))
    close(pyjax.grad(pyjax.grad(pnn.relu))(2.0), jax.grad(jax.grad(jax.nn.relu))(2.0))
    close(pyjax.jvp(pnn.relu, (0.0,), (1.0,)), jax.jvp(jax.nn.relu, (0.0,), (1.0,)))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_activation_dtypes(backend, dtype):
    x = np.array([-2, -1, 0, 1, 3], dtype)
    for name in ("relu", "relu6", "leaky_relu", "hard_tanh", "elu", "gelu", "sigmoid"):
        if dtype == "int32" and name in ("elu", "sigmoid"):
            continue
        close(getattr(pnn, name)(pjnp.asarray(x)), getattr(jax.nn, name)(x), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu(backend, approximate):
    # XLA's float32 tanh saturates to -1 earlier than a correctly rounded tanh: absolute 1e-5
    close(pnn.gelu(pjnp.asarray(X), approximate), jax.nn.gelu(X, approximate), atol=1e-5)
    gp = pyjax.grad(lambda v: pjnp.sum(pnn.gelu(v, approximate)))(pjnp.asarray(X))
    gj = jax.grad(lambda v: jnp.sum(jax.nn.gelu(v, approximate)))(X)
    close(gp, gj, atol=1e-5)


def test_glu(backend):
    close(pnn.glu(pjnp.asarray(M[:, :4])), jax.nn.glu(M[:, :4]))
    close(pnn.glu(pjnp.asarray(M[:2]), axis=0), jax.nn.glu(M[:2], axis=0))
    close(
        pyjax.grad(lambda v: pjnp.sum(pnn.glu(v)))(pjnp.asarray(M[:, :4])),
        jax.grad(lambda v: jnp.sum(jax.nn.glu(v)))(M[:, :4]),
    )


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [-1, 0, (0, 1)])
def test_softmax_family(backend, name, axis):
    fp, fj = getattr(pnn, name), getattr(jax.nn, name)
    close(fp(pjnp.asarray(M), axis=axis), fj(M, axis=axis))
    w = np.arange(15, dtype=np.float32).reshape(3, 5)
    gp = pyjax.grad(lambda v: pjnp.sum(fp(v, axis=axis) * pjnp.asarray(w)))(pjnp.asarray(M))
    gj = jax.grad(lambda v: jnp.sum(fj(v, axis=axis) * w))(M)
    close(gp, gj)
    close(
        pyjax.jit(pyjax.grad(lambda v: pjnp.sum(fp(v, axis=axis) * pjnp.asarray(w))))(pjnp.asarray(M)),
        jax.jit(jax.grad(lambda v: jnp.sum(fj(v, axis=axis) * w)))(M),
    )
    close(pyjax.vmap(fp)(pjnp.asarray(M)), jax.vmap(fj)(M))
    close(pyjax.jacfwd(lambda v: fp(v))(pjnp.asarray(M[0])), jax.jacfwd(lambda v: fj(v))(M[0]))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_where_and_large_values(backend, name):
    fp, fj = getattr(pnn, name), getattr(jax.nn, name)
    where = np.array([[True, False, True, True, False]] * 3)
    close(fp(pjnp.asarray(M), where=pjnp.asarray(where)), fj(M, where=where))
    big = np.array([1000.0, 1001.0, -1000.0], np.float32)
    close(fp(pjnp.asarray(big)), fj(big))
    close(pyjax.grad(lambda v: fp(v)[0])(pjnp.asarray(big)), jax.grad(lambda v: fj(v)[0])(big))


def test_logsumexp(backend):
    for axis in (None, 0, 1, (0, 1)):
        for keepdims in (False, True):
            close(
                pnn.logsumexp(pjnp.asarray(M), axis=axis, keepdims=keepdims),
                jax.nn.logsumexp(M, axis=axis, keepdims=keepdims),
            )
    b = np.array([1.0, -2.0, 0.5, 0.0, 3.0], np.float32)
    close(pnn.logsumexp(pjnp.asarray(M), axis=1, b=pjnp.asarray(b)), jax.nn.logsumexp(M, axis=1, b=b))
    close(
        pnn.logsumexp(pjnp.asarray(M), axis=1, b=pjnp.asarray(b), return_sign=True),
        jax.nn.logsumexp(M, axis=1, b=b, return_sign=True),
    )
    big = np.array([1e4, 1e4 + 1.0, -np.inf], np.float32)
    close(pnn.logsumexp(pjnp.asarray(big)), jax.nn.logsumexp(big))
    close(pnn.logsumexp(pjnp.asarray([-np.inf, -np.inf])), jax.nn.logsumexp(jnp.array([-np.inf, -np.inf])))
    gp = pyjax.grad(lambda v: pnn.logsumexp(v))(pjnp.asarray(big))
    gj = jax.grad(lambda v: jax.nn.logsumexp(v))(big)
    close(gp, gj)
    close(
        pyjax.grad(lambda v: pjnp.sum(pnn.logsumexp(v, axis=0)))(pjnp.asarray(M)),
        jax.grad(lambda v: jnp.sum(jax.nn.logsumexp(v, axis=0)))(M),
    )
    close(pyjax.vmap(pnn.logsumexp)(pjnp.asarray(M)), jax.vmap(jax.nn.logsumexp)(M))
    w = np.array([[True, False, True, True, False]] * 3)
    close(pnn.logsumexp(pjnp.asarray(M), axis=1, where=pjnp.asarray(w)), jax.nn.logsumexp(M, axis=1, where=w))


def test_standardize(backend):
    for alg in ("fast", "stable"):
        close(pnn.standardize(pjnp.asarray(M), algorithm=alg), jax.nn.standardize(M, algorithm=alg), atol=1e-5)
        close(
            pnn.standardize(pjnp.asarray(M), axis=0, algorithm=alg),
            jax.nn.standardize(M, axis=0, algorithm=alg),
            atol=1e-5,
        )
    gp = pyjax.grad(lambda v: pjnp.sum(pnn.standardize(v) * pjnp.arange(5.0)))(pjnp.asarray(M))
    gj = jax.grad(lambda v: jnp.sum(jax.nn.standardize(v) * jnp.arange(5.0)))(M)
    close(gp, gj, atol=1e-4)


def test_one_hot(backend):
    x = np.array([0, 2, 1, 5, -1], np.int32)
    close(pnn.one_hot(pjnp.asarray(x), 4), jax.nn.one_hot(x, 4))
    close(pnn.one_hot(pjnp.asarray(x), 4, dtype=pjnp.int32), jax.nn.one_hot(x, 4, dtype=jnp.int32))
    y = np.array([[0, 1], [2, 3]], np.int32)
    for axis in (-1, 0, 1, 2, -2):
        close(pnn.one_hot(pjnp.asarray(y), 3, axis=axis), jax.nn.one_hot(y, 3, axis=axis))
    close(pyjax.jit(lambda v: pnn.one_hot(v, 3))(pjnp.asarray(y)), jax.jit(lambda v: jax.nn.one_hot(v, 3))(y))
    close(pyjax.vmap(lambda v: pnn.one_hot(v, 3))(pjnp.asarray(y)), jax.vmap(lambda v: jax.nn.one_hot(v, 3))(y))


# --- initializers ---------------------------------------------------------------------------------

INITS = [
    ("glorot_uniform", ()),
    ("glorot_normal", ()),
    ("xavier_uniform", ()),
    ("xavier_normal", ()),
    ("he_uniform", ()),
    ("he_normal", ()),
    ("kaiming_uniform", ()),
    ("kaiming_normal", ()),
    ("lecun_uniform", ()),
    ("lecun_normal", ()),
    ("uniform", (0.5,)),
    ("normal", (0.3,)),
    ("truncated_normal", (0.2,)),
    ("constant", (1.5,)),
]


@pytest.mark.parametrize("name,args", INITS)
@pytest.mark.parametrize("shape", [(4, 3), (3, 3, 2, 5)])
def test_initializers(backend, name, args, shape):
    ip = getattr(pnn.initializers, name)(*args)
    ij = getattr(jax.nn.initializers, name)(*args)
    p = np.asarray(ip(prandom.PRNGKey(3), shape))
    j = np.asarray(ij(jax.random.PRNGKey(3), shape))
    assert p.shape == j.shape and p.dtype == j.dtype
    if "uniform" in name or name == "constant":
        np.testing.assert_array_equal(p, j)  # uniform draws are bit-exact
    else:
        np.testing.assert_allclose(p, j, rtol=1e-5, atol=1e-6)
    p16 = ip(prandom.PRNGKey(3), shape, pjnp.float16)
    j16 = ij(jax.random.PRNGKey(3), shape, jnp.float16)
    close(p16, j16, rtol=2e-3, atol=2e-3)


def test_initializers_zeros_ones_variance_scaling(backend):
    k, jk = prandom.PRNGKey(0), jax.random.PRNGKey(0)
    close(pnn.initializers.zeros(k, (2, 3)), jax.nn.initializers.zeros(jk, (2, 3)))
    close(pnn.initializers.ones(k, (2, 3), pjnp.int32), jax.nn.initializers.ones(jk, (2, 3), jnp.int32))
    for mode in ("fan_in", "fan_out", "fan_avg", "fan_geo_avg"):
        for dist in ("uniform", "normal", "truncated_normal"):
            ip = pnn.initializers.variance_scaling(2.0, mode, dist, in_axis=(0, 1), out_axis=-1)
            ij = jax.nn.initializers.variance_scaling(2.0, mode, dist, in_axis=(0, 1), out_axis=-1)
            close(ip(k, (2, 3, 4)), ij(jk, (2, 3, 4)))
    with pytest.raises(ValueError, match="invalid mode"):
        pnn.initializers.variance_scaling(1.0, "bad", "uniform")(k, (2, 2))
    with pytest.raises(ValueError, match="Can't compute input and output sizes"):
        pnn.initializers.glorot_uniform()(k, (3,))


# --- scipy.special / stats ------------------------------------------------------------------------

P = np.linspace(0.02, 0.98, 13).astype(np.float32)
POS = np.linspace(0.1, 6.0, 13).astype(np.float32)

SPECIAL_UNARY = [
    ("erf", X),
    ("erfc", X),
    ("erfinv", P * 2 - 1),
    ("logit", P),
    ("expit", X),
    ("gammaln", POS),
    ("digamma", POS),
    ("entr", np.concatenate([P, [0.0, -1.0]]).astype(np.float32)),
    ("ndtr", X),
    ("ndtri", P),
    ("log_ndtr", X),
]


@pytest.mark.parametrize("name,x", SPECIAL_UNARY)
def test_special_unary(backend, name, x):
    fp, fj = getattr(psp, name), getattr(jax.scipy.special, name)
    close(fp(pjnp.asarray(x)), fj(x), rtol=2e-5, atol=1e-6)
    if name in ("entr",):
        x = x[x > 0]
    gp = pyjax.grad(lambda v: pjnp.sum(fp(v)))(pjnp.asarray(x))
    gj = jax.grad(lambda v: jnp.sum(fj(v)))(x)
    close(gp, gj, rtol=1e-4, atol=1e-5)
    close(pyjax.vmap(fp)(pjnp.asarray(x)), jax.vmap(fj)(x), rtol=2e-5, atol=1e-6)


def test_special_int_inputs_promote(backend):
    for name in ("erf", "expit", "gammaln"):
        close(getattr(psp, name)(pjnp.arange(1, 4)), getattr(jax.scipy.special, name)(jnp.arange(1, 4)))


@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
def test_xlogy_family(backend, name):
    fp, fj = getattr(psp, name), getattr(jax.scipy.special, name)
    x = np.array([0.0, 1.0, 2.0, 0.0, -1.5], np.float32)
    y = np.array([0.0, 3.0, 0.5, 2.0, 4.0], np.float32)
    close(fp(pjnp.asarray(x), pjnp.asarray(y)), fj(x, y))
    gp = pyjax.grad(lambda a, b: pjnp.sum(fp(a, b)), argnums=(0, 1))(pjnp.asarray(x[1:]), pjnp.asarray(y[1:]))
    gj = jax.grad(lambda a, b: jnp.sum(fj(a, b)), argnums=(0, 1))(x[1:], y[1:])
    close(gp, gj)
    close(pyjax.grad(fp)(0.0, 2.0), jax.grad(fj)(0.0, 2.0))
    close(fp(pjnp.asarray(x), 2.0), fj(x, 2.0))


def test_special_logsumexp_softmax(backend):
    close(psp.logsumexp(pjnp.asarray(M), axis=0), jax.scipy.special.logsumexp(M, axis=0))
    close(psp.softmax(pjnp.asarray(M)), jax.scipy.special.softmax(M))
    close(psp.log_softmax(pjnp.asarray(M), axis=0), jax.scipy.special.log_softmax(M, axis=0))


def test_norm(backend):
    for name in ("pdf", "logpdf", "cdf", "logcdf", "sf"):
        fp, fj = getattr(pnorm, name), getattr(jax.scipy.stats.norm, name)
        close(fp(pjnp.asarray(X)), fj(X), rtol=2e-5, atol=1e-6)
        close(fp(pjnp.asarray(X), 1.0, 2.0), fj(X, 1.0, 2.0), rtol=2e-5, atol=1e-6)
        gp = pyjax.grad(lambda v: pjnp.sum(fp(v, 0.5, 1.5)))(pjnp.asarray(X))
        gj = jax.grad(lambda v: jnp.sum(fj(v, 0.5, 1.5)))(X)
        close(gp, gj, rtol=1e-4, atol=1e-5)
    close(pnorm.ppf(pjnp.asarray(P), 1.0, 2.0), jax.scipy.stats.norm.ppf(P, 1.0, 2.0), rtol=1e-5, atol=1e-5)


RNG = np.random.default_rng(0)


F = np.float32


Q = RNG.standard_normal((2, 5, 4, 8)).astype(F)


K = RNG.standard_normal((2, 6, 2, 8)).astype(F)


V = RNG.standard_normal((2, 6, 2, 8)).astype(F)


BIAS = RNG.standard_normal((1, 4, 5, 6)).astype(F)


MASK = RNG.random((2, 1, 5, 6)) > 0.3


OPTIONS = {
    "plain": {},
    "bias": dict(bias=BIAS),
    "mask": dict(mask=MASK),
    "causal_scaled_bias": dict(scale=0.3, is_causal=True, bias=BIAS),
    "window": dict(local_window_size=(1, 2)),
    "window_int": dict(local_window_size=1),
    "seq_lengths": dict(query_seq_lengths=np.array([3, 5]), key_value_seq_lengths=np.array([4, 6])),
    "residual": dict(return_residual=True, is_causal=True),
}


@pytest.mark.parametrize("name", list(OPTIONS))
def test_dot_product_attention(backend, name):
    got = pyjax.nn.dot_product_attention(Q, K, V, **OPTIONS[name])
    want = jax.nn.dot_product_attention(Q, K, V, **OPTIONS[name])
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


def test_dot_product_attention_unbatched_grad_errors(backend):
    got = pyjax.nn.dot_product_attention(Q[0], K[0], V[0])
    np.testing.assert_allclose(np.asarray(got), np.asarray(jax.nn.dot_product_attention(Q[0], K[0], V[0])), atol=2e-5)
    g = pyjax.grad(lambda q: pj.sum(pyjax.nn.dot_product_attention(q, K, V, is_causal=True) ** 2))(Q)
    gj = jax.grad(lambda q: jj.sum(jax.nn.dot_product_attention(q, K, V, is_causal=True) ** 2))(Q)
    np.testing.assert_allclose(np.asarray(g), np.asarray(gj), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError):
        pyjax.nn.dot_product_attention(Q, K[:, :, :1].repeat(3, axis=2), V[:, :, :1].repeat(3, axis=2))


def test_log1mexp_and_tanh(backend):
    x = np.array([0.1, 0.69, 0.7, 5.0, 50.0], F)
    np.testing.assert_allclose(np.asarray(pyjax.nn.log1mexp(x)), np.asarray(jax.nn.log1mexp(x)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(pyjax.nn.tanh(x)), np.asarray(jax.nn.tanh(x)), rtol=1e-6)


def test_scaled_matmul_matches_its_definition(backend):
    # JAX runs scaled_matmul through cuDNN only (not on CPU): compare with the definition its docstring gives
    r = np.random.RandomState(0)
    a, b = r.randn(2, 3, 8).astype(np.float32), r.randn(2, 4, 8).astype(np.float32)
    sa, sb = r.rand(2, 3, 2).astype(np.float32), r.rand(2, 4, 4).astype(np.float32)
    got = pyjax.nn.scaled_matmul(a, b, sa, sb)
    want = np.einsum("bmk,bnk->bmn", a * np.repeat(sa, 4, -1), b * np.repeat(sb, 2, -1))
    assert got.dtype == np.float32 and got.shape == (2, 3, 4)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError):
        pyjax.nn.scaled_matmul(a, b[:, :, :6], sa, sb)


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_scaled_dot_general_quantizes_as_jax(backend, mode):
    # JAX computes the quantized product through cuDNN only: the oracle is JAX's own quantization (it runs
    # on CPU) followed by scaled_matmul's definition
    from jax._src.cudnn import scaled_matmul_stablehlo as jax_scaled

    r = np.random.RandomState(0)
    lhs = (r.randn(2, 8, 64) * np.exp(r.randn(2, 8, 64) * 3)).astype(np.float32)  # blocks of varied scale
    rhs = r.randn(4, 64, 2).astype(np.float32)
    dn = (((2,), (1,)), ((0,), (2,)))
    gs = None if mode == "mxfp8" else np.float32([0.5])
    jc = jax.nn.get_scaled_dot_general_config(mode, gs)
    pc = pyjax.nn.get_scaled_dot_general_config(mode, gs)
    assert repr(pc).replace("pyjax.numpy", "ml_dtypes") == repr(jc)
    got = pyjax.nn.scaled_dot_general(lhs, rhs, dn, configs=[pc] * 3)
    (lq, ls), (rq, rs) = (
        jax_scaled.quantize(jax_scaled.shape_normalization(jnp.asarray(x), d), jc)
        for x, d in ((lhs, ((2,), (0,))), (rhs, ((1,), (2,))))
    )
    want = np.einsum(
        "bmk,bnk->bmn",
        *(
            np.asarray(q, np.float32) * np.repeat(np.asarray(s, np.float32), 64 // s.shape[-1], -1)
            for q, s in ((lq, ls), (rq, rs))
        ),
    )
    want = want * (1.0 if gs is None else float(gs[0]) ** 2)
    assert got.shape == (2, 8, 4) and got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5 * np.abs(want).max())
    # without configs it is dot_general, as in JAX
    np.testing.assert_allclose(
        np.asarray(pyjax.nn.scaled_dot_general(lhs, rhs, dn)),
        np.asarray(jax.nn.scaled_dot_general(lhs, rhs, dn)),
        rtol=1e-5,
    )
