"""Typed PRNG keys (pyjax.random.key, dtype key<fry>) against real JAX: construction, split,
fold_in, key_data/wrap_key_data, array-like attributes and indexing, every sampler giving the
same numbers as with the raw key, jit/vmap/scan/tree_util passing keys through, and errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from test_random import assert_exact, assert_ulp

import pyjax
import pyjax.numpy as pjnp
import pyjax.random as prandom
from pyjax._prng import PRNGKeyArray


def assert_same_keys(p, j):
    """p is a pyjax typed key array equal (shape and data) to the JAX typed key array j."""
    assert isinstance(p, PRNGKeyArray), type(p)
    assert jax.dtypes.issubdtype(j.dtype, jax.dtypes.prng_key)
    assert p.shape == j.shape and p.ndim == j.ndim and p.size == j.size
    assert str(p.dtype) == str(j.dtype) == "key<fry>"
    assert_exact(prandom.key_data(p), jax.random.key_data(j))


# --- construction, split, fold_in, key_data ---------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 42, -7, 2**31 - 1])
def test_key_is_typed(backend, seed):
    assert_same_keys(prandom.key(seed), jax.random.key(seed))
    assert repr(prandom.key(seed)) == repr(jax.random.key(seed))


def test_prng_key_stays_raw(backend):
    p = prandom.PRNGKey(3)
    assert not isinstance(p, PRNGKeyArray)
    assert_exact(prandom.split(p, 3), jax.random.split(jax.random.PRNGKey(3), 3))
    assert_exact(prandom.fold_in(p, 9), jax.random.fold_in(jax.random.PRNGKey(3), 9))
    assert_exact(prandom.key_data(p), jax.random.key_data(jax.random.PRNGKey(3)))


@pytest.mark.parametrize("num", [2, 3, (2, 3), (1,), 0])
def test_split_typed(backend, num):
    ps, js = prandom.split(prandom.key(5), num), jax.random.split(jax.random.key(5), num)
    assert_same_keys(ps, js)
    assert repr(ps) == repr(js)


def test_fold_in_typed(backend):
    assert_same_keys(prandom.fold_in(prandom.key(1), 17), jax.random.fold_in(jax.random.key(1), 17))
    assert_same_keys(prandom.split(prandom.key(1))[1], jax.random.split(jax.random.key(1))[1])


def test_wrap_key_data_round_trip(backend):
    data = np.arange(12, dtype=np.uint32).reshape(2, 3, 2)
    p, j = prandom.wrap_key_data(pjnp.asarray(data)), jax.random.wrap_key_data(jnp.asarray(data))
    assert_same_keys(p, j)
    assert_exact(prandom.key_data(p), data)
    assert prandom.key_impl(p) == str(jax.random.key_impl(j)) == "threefry2x32"
    assert prandom.key_impl(prandom.PRNGKey(0)) == "threefry2x32"


def test_key_dtype():
    assert prandom.key_dtype() == prandom.key(0).dtype == prandom.key_dtype("threefry2x32")
    assert str(prandom.key_dtype()) == str(jax.random.key_dtype()) == "key<fry>"
    for bad, err in (("foo", ValueError), (3, TypeError)):
        with pytest.raises(err):
            jax.random.key_dtype(bad)
        with pytest.raises(err):
            prandom.key_dtype(bad)


def test_key_dtype_predicates():
    k = prandom.key(0)
    assert pyjax.dtypes.issubdtype(k.dtype, pyjax.dtypes.prng_key)
    assert pyjax.dtypes.issubdtype(k.dtype, pyjax.dtypes.extended)
    assert pyjax.dtypes.issubdtype(k.dtype, k.dtype)
    assert not pyjax.dtypes.issubdtype(pjnp.uint32, pyjax.dtypes.prng_key)
    assert not pyjax.dtypes.issubdtype(k.dtype, pjnp.integer)
    assert not pyjax.dtypes.issubdtype(pjnp.float32, pyjax.dtypes.extended)
    assert pyjax.dtypes.issubdtype(pjnp.float32, pjnp.floating)
    assert k.dtype == prandom.key(1).dtype and k.dtype != pjnp.uint32
    assert hash(k.dtype) == hash(prandom.key(1).dtype)
    assert k.itemsize == jax.random.key(0).itemsize


# --- array-like behaviour ----------------------------------------------------------------------------


def _pair():
    return prandom.split(prandom.key(0), 6).reshape(2, 3), jax.random.split(jax.random.key(0), 6).reshape(2, 3)


@pytest.mark.parametrize(
    "f",
    [
        lambda k, np_: k[0],
        lambda k, np_: k[1, 2],
        lambda k, np_: k[:, 1:],
        lambda k, np_: k[..., 0],
        lambda k, np_: k[None],
        lambda k, np_: k[np_.array([1, 0])],
        lambda k, np_: k.T,
        lambda k, np_: k.transpose(1, 0),
        lambda k, np_: k.reshape(3, 2),
        lambda k, np_: k.reshape((6,)),
        lambda k, np_: k.ravel(),
        lambda k, np_: k.flatten(),
        lambda k, np_: k[:1].squeeze(),
        lambda k, np_: k.copy(),
    ],
)
def test_indexing_and_reshaping(backend, f):
    p, j = _pair()
    assert_same_keys(f(p, pjnp), f(j, jnp))


def test_len_iter_eq(backend):
    p, j = _pair()
    assert len(p) == len(j) == 2
    for a, b in zip(p, j):
        assert_same_keys(a, b)
    assert [x.shape for x in p] == [x.shape for x in j]
    assert_exact(p == p[0], j == j[0])
    assert_exact(p != p[1], j != j[1])
    k = prandom.key(0)
    for bad in (lambda: len(k), lambda: list(k), lambda: k[0], lambda: p[0, 1, 2]):
        with pytest.raises((TypeError, IndexError)):
            bad()


def test_arithmetic_on_keys_raises():
    k = prandom.key(0)
    with pytest.raises(TypeError, match="add does not accept dtypes key<fry>, int32"):
        k + 1
    with pytest.raises(TypeError, match="add does not accept dtypes int32, key<fry>"):
        1 + k
    with pytest.raises(TypeError, match="multiply does not accept"):
        k * 2
    with pytest.raises(TypeError, match="neg does not accept dtype key<fry>"):
        _ = -k
    with pytest.raises(TypeError, match="lt does not accept dtype key<fry>"):
        _ = k < k
    with pytest.raises(TypeError, match="boolean"):
        bool(k)
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)
    with pytest.raises(TypeError, match="sin"):
        pjnp.sin(k)
    with pytest.raises(TypeError):
        pjnp.sum(k)
    assert_same_keys(pjnp.stack([k, k]), jnp.stack([jax.random.key(0)] * 2))  # stacking keys is fine


# --- samplers ---------------------------------------------------------------------------------------

# Each sampler as f(random_module, key); continuous ones are compared to JAX within a few ulp.
SAMPLERS = {
    "bits": lambda r, k: r.bits(k, (5,)),
    "uniform": lambda r, k: r.uniform(k, (5,), minval=-2.0, maxval=3.0),
    "normal": lambda r, k: r.normal(k, (5,)),
    "truncated_normal": lambda r, k: r.truncated_normal(k, -1.0, 2.0, (5,)),
    "bernoulli": lambda r, k: r.bernoulli(k, 0.3, (7,)),
    "randint": lambda r, k: r.randint(k, (6,), 0, 10),
    "permutation": lambda r, k: r.permutation(k, 8),
    "shuffle_rows": lambda r, k: r.permutation(k, r.split(r.PRNGKey(0), 4)[:, 0]),
    "choice": lambda r, k: r.choice(k, 10, (4,), replace=False),
    "choice_p": lambda r, k: r.choice(k, 5, (6,), p=np.array([0.1, 0.2, 0.3, 0.2, 0.2], np.float32)),
    "categorical": lambda r, k: r.categorical(k, np.log(np.array([0.2, 0.5, 0.3], np.float32)), shape=(6,)),
    "gumbel": lambda r, k: r.gumbel(k, (5,)),
    "exponential": lambda r, k: r.exponential(k, (5,)),
    "laplace": lambda r, k: r.laplace(k, (5,)),
    "logistic": lambda r, k: r.logistic(k, (5,)),
    "cauchy": lambda r, k: r.cauchy(k, (5,)),
    "rademacher": lambda r, k: r.rademacher(k, (5,)),
    "lognormal": lambda r, k: r.lognormal(k, 0.5, (5,)),
    "maxwell": lambda r, k: r.maxwell(k, (5,)),
    "double_sided_maxwell": lambda r, k: r.double_sided_maxwell(k, 0.0, 1.0, (5,)),
    "weibull_min": lambda r, k: r.weibull_min(k, 1.0, 2.0, (5,)),
    "rayleigh": lambda r, k: r.rayleigh(k, 1.5, (5,)),
    "pareto": lambda r, k: r.pareto(k, 3.0, (5,)),
    "geometric": lambda r, k: r.geometric(k, 0.3, (5,)),
    "triangular": lambda r, k: r.triangular(k, 0.0, 0.5, 1.0, (5,)),
    "gamma": lambda r, k: r.gamma(k, 2.5, (5,)),
    "loggamma": lambda r, k: r.loggamma(k, 2.5, (5,)),
    "beta": lambda r, k: r.beta(k, 2.0, 3.0, (5,)),
    "dirichlet": lambda r, k: r.dirichlet(k, np.array([1.0, 2.0, 3.0], np.float32), (2,)),
    "chisquare": lambda r, k: r.chisquare(k, 3.0, (5,)),
    "f": lambda r, k: r.f(k, 3.0, 4.0, (5,)),
    "t": lambda r, k: r.t(k, 3.0, (5,)),
    "generalized_normal": lambda r, k: r.generalized_normal(k, 1.5, (5,)),
    "wald": lambda r, k: r.wald(k, 1.0, (5,)),
    "poisson": lambda r, k: r.poisson(k, 3.0, (5,)),
    "binomial": lambda r, k: r.binomial(k, 10.0, 0.3, (5,)),
    "multinomial": lambda r, k: r.multinomial(k, 10.0, np.array([0.2, 0.3, 0.5], np.float32)),
    "multivariate_normal": lambda r, k: r.multivariate_normal(
        k, np.zeros(2, np.float32), np.array([[2.0, 0.5], [0.5, 1.0]], np.float32), (3,)
    ),
    "orthogonal": lambda r, k: r.orthogonal(k, 3),
    "ball": lambda r, k: r.ball(k, 3, shape=(2,)),
}


def _close(p, j):
    p = np.asarray(p)
    if p.dtype.kind == "f":
        assert_ulp(p, j, max_ulp=64, min_exact=0.0, atol=1e-5)
    else:
        assert_exact(p, j)


@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_sampler_accepts_typed_key(backend, name):
    f = SAMPLERS[name]
    typed = f(prandom, prandom.key(11))
    raw = f(prandom, prandom.PRNGKey(11))
    assert_exact(typed, raw)
    _close(typed, f(jax.random, jax.random.key(11)))


def test_batched_typed_key_needs_vmap():
    ks = prandom.split(prandom.key(0), 3)
    for fn in (lambda: prandom.normal(ks, (3,)), lambda: prandom.split(ks), lambda: prandom.fold_in(ks, 1)):
        with pytest.raises(ValueError, match=r"accepts a single key, but was given a key array of shape \(3,\)"):
            fn()
    with pytest.raises(TypeError, match="key accepts a scalar seed"):
        prandom.key(pjnp.arange(3))
    with pytest.raises(TypeError, match="expected key_data.shape to end with"):
        prandom.wrap_key_data(pjnp.zeros((3,), pjnp.uint32))
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32"):
        prandom.wrap_key_data(pjnp.zeros((2,), pjnp.int32))


# --- transformations --------------------------------------------------------------------------------


def test_vmap_over_typed_keys(backend):
    def f(r):
        return lambda k: r.normal(k, (3,))

    p = pyjax.vmap(f(prandom))(prandom.split(prandom.key(0), 4))
    j = jax.vmap(f(jax.random))(jax.random.split(jax.random.key(0), 4))
    assert_ulp(p, j)
    assert_same_keys(pyjax.vmap(prandom.key)(pjnp.arange(3)), jax.vmap(jax.random.key)(jnp.arange(3)))
    ps = pyjax.vmap(lambda k: prandom.split(k, 2))(prandom.split(prandom.key(2), 3))
    js = jax.vmap(lambda k: jax.random.split(k, 2))(jax.random.split(jax.random.key(2), 3))
    assert_same_keys(ps, js)


def test_jit_passes_typed_keys(backend):
    p = pyjax.jit(lambda k: (prandom.split(k, 3), prandom.uniform(k, (2,))))(prandom.key(4))
    j = jax.jit(lambda k: (jax.random.split(k, 3), jax.random.uniform(k, (2,))))(jax.random.key(4))
    assert_same_keys(p[0], j[0])
    assert_exact(p[1], j[1])
    assert_same_keys(pyjax.jit(prandom.key)(7), jax.jit(jax.random.key)(7))
    assert_same_keys(pyjax.jit(lambda k: k[1])(prandom.split(prandom.key(1))), jax.random.split(jax.random.key(1))[1])


def test_scan_carries_typed_key(backend):
    def run(r, lax):
        def step(k, _):
            k, sub = r.split(k)
            return k, r.uniform(sub)

        return lax.scan(step, r.key(3), None, length=4)

    pk, px = run(prandom, pyjax.lax)
    jk, jx = run(jax.random, jax.lax)
    assert_same_keys(pk, jk)
    assert_exact(px, jx)


def test_tree_util_and_grad(backend):
    k = prandom.key(0)
    tree = {"k": prandom.split(k, 2), "x": pjnp.ones(2)}
    out = pyjax.tree_util.tree_map(lambda x: x, tree)
    assert isinstance(out["k"], PRNGKeyArray)
    assert_exact(prandom.key_data(out["k"]), prandom.key_data(tree["k"]))

    def loss(r):
        return lambda x, key: (x * r.normal(key, (2,))).sum()

    pg = pyjax.grad(loss(prandom))(pjnp.ones(2), k)
    jg = jax.grad(loss(jax.random))(jnp.ones(2), jax.random.key(0))
    assert_ulp(pg, jg)


@pytest.mark.parametrize(
    "f",
    [
        lambda k, np_, lax: np_.zeros_like(k),
        lambda k, np_, lax: np_.ones_like(k),
        lambda k, np_, lax: np_.full_like(k, 7),
        lambda k, np_, lax: np_.full_like(k, k[0, 1]),
        lambda k, np_, lax: np_.empty_like(k, shape=(4,)),
        lambda k, np_, lax: np_.take_along_axis(k, np_.array([[2, 0]]), axis=1),
        lambda k, np_, lax: lax.select(np_.array([[True, False, True], [False, True, False]]), k, k[::-1]),
        lambda k, np_, lax: lax.select(True, k, k),
        lambda k, np_, lax: k.at[0, 1].set(k[1, 2]),
        lambda k, np_, lax: k.at[..., 0].set(k[:, 1]),
        lambda k, np_, lax: k.at[1].get(),
        lambda k, np_, lax: np_.broadcast_arrays(k, k[0, 0])[1],
    ],
)
def test_array_functions_over_keys(backend, f):
    """jnp's *_like, take_along_axis, lax.select, .at[].set/get and broadcast_arrays move keys as JAX does."""
    p, j = _pair()
    assert_same_keys(f(p, pjnp, pyjax.lax), f(j, jnp, jax.lax))


def test_predicates_and_comparisons_over_keys(backend):
    p, j = _pair()
    for name in ("isnan", "isinf", "isfinite"):
        assert_exact(getattr(pjnp, name)(p), getattr(jnp, name)(j))
    assert_exact(pjnp.equal(p, p[0]), jnp.equal(j, j[0]))
    assert_exact(pjnp.not_equal(p, p[:, :1]), jnp.not_equal(j, j[:, :1]))
    assert_exact(pjnp.zeros_like(p, dtype=pjnp.float32), jnp.zeros_like(j, dtype=jnp.float32))
    with pytest.raises(TypeError, match="key_data"):
        pjnp.sort(p)
    with pytest.raises(TypeError, match="only get and set"):
        p.at[0].add(p[1])
