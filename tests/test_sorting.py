"""Sorting, searching, unique and order statistics against real JAX: values, dtypes, gradients,
jit and vmap (lax.sort / sort_key_val / top_k, jnp.sort / argsort / lexsort / searchsorted /
digitize / unique / partition / argpartition / median / quantile / percentile)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax import lax as plax

from oracle import assert_close, check_grads, to_both

RNG = np.random.default_rng(0)
NEEDED_ROUTINES = ("sort", "cumulative")

_ROUTINE_PROBES = {
    "sort": lambda: plax.sort(pjnp.arange(3.0)),
    "cumulative": lambda: pjnp.cumsum(pjnp.arange(3.0)),
    "cholesky": lambda: plax.linalg.cholesky(pjnp.eye(2)),
    "triangular_solve": lambda: plax.linalg.triangular_solve(pjnp.eye(2), pjnp.eye(2)),
    "lu": lambda: plax.linalg.lu(pjnp.eye(2)),
}
_MISSING: dict = {}


@pytest.fixture
def backend(backend):
    """The shared backend fixture, skipping backends that lack a Routine these tests need."""
    if backend not in _MISSING:
        missing = []
        for name in NEEDED_ROUTINES:
            try:
                pyjax.block_until_ready(_ROUTINE_PROBES[name]())
            except NotImplementedError as e:
                if "routine" in str(e):
                    missing.append(name)
        _MISSING[backend] = missing
    if _MISSING[backend]:
        pytest.skip(f"the {backend} backend does not implement the routine(s) {', '.join(_MISSING[backend])} yet")
    return backend


SPECIAL = np.array([3.0, -0.0, np.nan, 1.0, 0.0, -np.inf, 1.0, np.inf, np.nan, -2.0], np.float32)


def _both(f_p, f_j, *args, **kw):
    p, j = to_both(*args)
    assert_close(f_p(*p), f_j(*j), **kw)


# --- lax ----------------------------------------------------------------------------------------


def test_long_sorts_keep_order_and_ties(backend):
    """A row of 40,000 (webgpu radix-sorts rows this long): NaN last, -0 == +0, ties in index
    order (argsort), sort_key_val, ints of every sign and uint32 above 2^31, against JAX."""
    n = 40_000
    x = np.tile(SPECIAL, n // len(SPECIAL) + 1)[:n] * RNG.integers(1, 4, n).astype(np.float32)
    x[::3] = RNG.standard_normal(len(x[::3])).astype(np.float32)
    i = RNG.integers(-50, 50, n).astype(np.int32)
    w = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    _both(pjnp.sort, jnp.sort, x)
    got, want = np.asarray(pjnp.sort(pjnp.asarray(x))), np.asarray(jnp.sort(jnp.asarray(x)))
    assert np.array_equal(np.signbit(got), np.signbit(want))  # -0 and +0 keep their order
    _both(pjnp.argsort, jnp.argsort, x)
    _both(pjnp.argsort, jnp.argsort, i)
    # jitted, the index operand is seen to be the iota: the permutation is written, not gathered
    _both(pyjax.jit(pjnp.argsort), jax.jit(jnp.argsort), x)
    desc = lambda m: lambda a: m.argsort(a, descending=True)  # noqa: E731
    _both(pyjax.jit(desc(pjnp)), jax.jit(desc(jnp)), x)
    _both(pjnp.sort, jnp.sort, i)
    _both(pjnp.sort, jnp.sort, w)
    _both(pyjax.jit(plax.sort_key_val), jax.jit(jax.lax.sort_key_val), x, i)


@pytest.mark.parametrize("dimension", [0, 1, -1])
def test_lax_sort_values(backend, dimension):
    x = RNG.standard_normal((4, 5)).astype(np.float32)
    _both(lambda a: plax.sort(a, dimension=dimension), lambda a: jax.lax.sort(a, dimension=dimension), x)


def test_lax_sort_special_values(backend):
    # NaNs last; -0.0 ties with 0.0 and keeps its position (stable).
    p, j = to_both(SPECIAL)
    ps, js = plax.sort(p[0]), jax.lax.sort(j[0])
    assert_close(ps, js)
    assert np.array_equal(np.signbit(np.asarray(ps)), np.signbit(np.asarray(js)))


def test_lax_sort_multi_operand_num_keys(backend):
    k1 = np.array([2, 1, 2, 1, 2, 0], np.int32)
    k2 = np.array([5.0, 3.0, 1.0, 3.0, 1.0, 9.0], np.float32)
    v = np.arange(6, dtype=np.int32)
    for nk in (1, 2):
        _both(
            lambda a, b, c: plax.sort((a, b, c), num_keys=nk),
            lambda a, b, c: jax.lax.sort((a, b, c), num_keys=nk),
            k1,
            k2,
            v,
        )


def test_lax_sort_dtypes(backend):
    for dt in (np.int8, np.uint8, np.int32, np.uint32, np.float16, np.bool_):
        x = (RNG.integers(0, 7, 9) if dt is not np.bool_ else RNG.integers(0, 2, 9)).astype(dt)
        _both(plax.sort, jax.lax.sort, x)


def test_sort_key_val_and_top_k(backend):
    k = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, -1.0, 5.0, 5.0]], np.float32)
    v = np.arange(8, dtype=np.float32).reshape(2, 4)
    _both(plax.sort_key_val, jax.lax.sort_key_val, k, v)
    _both(lambda a: plax.top_k(a, 3), lambda a: jax.lax.top_k(a, 3), k)
    _both(lambda a: plax.top_k(a, 4), lambda a: jax.lax.top_k(a, 4), SPECIAL[:8])
    _both(lambda a: plax.top_k(a, 3), lambda a: jax.lax.top_k(a, 3), np.array([1, 5, 3, 3, 0], np.uint8))


def test_top_k_errors():
    with pytest.raises(ValueError, match="top_k"):
        plax.top_k(pjnp.ones(3), 4)
    with pytest.raises(ValueError):
        plax.top_k(pjnp.ones(3), -1)


def test_sort_grads(backend):
    x = RNG.standard_normal((3, 6)).astype(np.float32)
    check_grads(lambda a: plax.sort(a * a, dimension=1), lambda a: jax.lax.sort(a * a, dimension=1), (x,))
    check_grads(lambda a: plax.sort(a, dimension=0), lambda a: jax.lax.sort(a, dimension=0), (x,))
    k = RNG.integers(0, 3, (6,)).astype(np.int32)
    v = RNG.standard_normal(6).astype(np.float32)
    check_grads(
        lambda b: plax.sort_key_val(pjnp.asarray(k), b)[1] ** 2,
        lambda b: jax.lax.sort_key_val(jnp.asarray(k), b)[1] ** 2,
        (v,),
    )
    check_grads(lambda a: plax.top_k(a, 2)[0], lambda a: jax.lax.top_k(a, 2)[0], (x,))


def test_sort_grad_second_order(backend):
    x = np.array([0.3, -1.2, 2.0, 0.7], np.float32)
    p, j = to_both(x)
    f_p = pyjax.grad(lambda a: pjnp.sum(pjnp.sort(a) ** 3 * pjnp.arange(4.0)))
    f_j = jax.grad(lambda a: jnp.sum(jnp.sort(a) ** 3 * jnp.arange(4.0)))
    assert_close(pyjax.jacfwd(f_p)(p[0]), jax.jacfwd(f_j)(j[0]))
    assert_close(pyjax.jacrev(f_p)(p[0]), jax.jacrev(f_j)(j[0]))


def test_sort_jit_vmap(backend):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    _both(pyjax.jit(lambda a: plax.sort(a, dimension=0)), jax.jit(lambda a: jax.lax.sort(a, dimension=0)), x)
    _both(pyjax.vmap(plax.sort), jax.vmap(jax.lax.sort), x)
    _both(pyjax.vmap(plax.sort, in_axes=1), jax.vmap(jax.lax.sort, in_axes=1), x)
    _both(pyjax.vmap(lambda a: pjnp.argsort(a)), jax.vmap(lambda a: jnp.argsort(a)), x)
    _both(
        pyjax.vmap(lambda a, b: plax.sort_key_val(a, b), in_axes=(0, None)),
        jax.vmap(lambda a, b: jax.lax.sort_key_val(a, b), in_axes=(0, None)),
        x,
        x[0],
    )
    _both(
        pyjax.jit(pyjax.grad(lambda a: pjnp.sum(pjnp.sort(a)[:2]))),
        jax.jit(jax.grad(lambda a: jnp.sum(jnp.sort(a)[:2]))),
        x[0],
    )
    _both(
        pyjax.vmap(pyjax.grad(lambda a: pjnp.sum(pjnp.sort(a)[:2] ** 2))),
        jax.vmap(jax.grad(lambda a: jnp.sum(jnp.sort(a)[:2] ** 2))),
        x,
    )


def test_sort_large_gradient_is_a_permutation(backend):
    n = 20000
    x = RNG.permutation(n).astype(np.float32)
    p, j = to_both(x)
    w = np.arange(n, dtype=np.float32)
    gp = pyjax.grad(lambda a: pjnp.sum(pjnp.sort(a) * pjnp.asarray(w)))(p[0])
    gj = jax.grad(lambda a: jnp.sum(jnp.sort(a) * jnp.asarray(w)))(j[0])
    assert_close(gp, gj)


# --- jnp sort / argsort / lexsort -----------------------------------------------------------------


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("descending", [False, True])
def test_jnp_sort_argsort(backend, axis, descending):
    x = RNG.integers(0, 4, (4, 6)).astype(np.float32)  # many ties: stability matters
    x[1, 2] = np.nan
    _both(
        lambda a: pjnp.sort(a, axis=axis, descending=descending),
        lambda a: jnp.sort(a, axis=axis, descending=descending),
        x,
    )
    _both(
        lambda a: pjnp.argsort(a, axis=axis, descending=descending),
        lambda a: jnp.argsort(a, axis=axis, descending=descending),
        x,
    )


def test_argsort_signed_zero_and_methods(backend):
    x = np.array([1.0, 0.0, 1.0, 0.0, -0.0], np.float32)
    _both(lambda a: pjnp.argsort(a, descending=True), lambda a: jnp.argsort(a, descending=True), x)
    _both(lambda a: a.argsort(), lambda a: a.argsort(), x)
    _both(lambda a: a.sort(), lambda a: a.sort(), x)
    _both(lambda a: pjnp.argsort(a), lambda a: jnp.argsort(a), np.array([3, 1, 2, 1], np.uint8))


def test_lexsort(backend):
    a = np.array([1, 5, 1, 4, 3, 4, 4], np.int32)
    b = np.array([9, 4, 0, 4, 0, 2, 1], np.int32)
    _both(lambda x, y: pjnp.lexsort((x, y)), lambda x, y: jnp.lexsort((x, y)), a, b)
    m = RNG.integers(0, 3, (3, 4, 5)).astype(np.float32)
    _both(lambda x: pjnp.lexsort(x, axis=0), lambda x: jnp.lexsort(x, axis=0), m)
    with pytest.raises(TypeError):
        pjnp.lexsort(())
    with pytest.raises(ValueError):
        pjnp.lexsort((pjnp.ones(3), pjnp.ones(4)))


def test_sort_errors():
    with pytest.raises(ValueError):
        pjnp.sort(pjnp.ones((2, 3)), axis=2)
    with pytest.raises(ValueError):
        pjnp.sort(pjnp.ones(3), order="x")


# --- searchsorted / digitize -----------------------------------------------------------------------


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("method", ["scan", "sort", "compare_all"])
def test_searchsorted(backend, side, method):
    a = np.array([-np.inf, -1.0, 0.0, 0.0, 2.0, 2.0, 2.0, 5.0, np.nan], np.float32)
    v = np.array([[-2.0, 0.0, -0.0, 2.0], [np.nan, 5.0, 7.0, -np.inf]], np.float32)
    _both(
        lambda x, y: pjnp.searchsorted(x, y, side=side, method=method),
        lambda x, y: jnp.searchsorted(x, y, side=side, method=method),
        a,
        v,
    )
    ai = np.array([1, 2, 2, 3], np.int32)
    _both(
        lambda x, y: pjnp.searchsorted(x, y, side=side, method=method),
        lambda x, y: jnp.searchsorted(x, y, side=side, method=method),
        ai,
        np.array([0, 2, 4], np.int32),
    )
    _both(lambda x: pjnp.searchsorted(x, 2.5, side=side), lambda x: jnp.searchsorted(x, 2.5, side=side), ai)


def test_searchsorted_large_uses_sort(backend):
    a = np.sort(RNG.standard_normal(3000)).astype(np.float32)
    v = RNG.standard_normal(2000).astype(np.float32)
    _both(pjnp.searchsorted, jnp.searchsorted, a, v)
    _both(
        lambda x, y: pjnp.searchsorted(x, y, side="right"),
        lambda x, y: jnp.searchsorted(x, y, side="right"),
        a,
        np.concatenate([a[:1000], v[:1000]]),
    )


def test_searchsorted_jit_vmap_errors(backend):
    a = np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    v = np.array([[0.5, 2.0], [3.5, -1.0]], np.float32)
    _both(pyjax.jit(pjnp.searchsorted), jax.jit(jnp.searchsorted), a, v)
    _both(pyjax.vmap(pjnp.searchsorted, in_axes=(None, 0)), jax.vmap(jnp.searchsorted, in_axes=(None, 0)), a, v)
    with pytest.raises(ValueError, match="side"):
        pjnp.searchsorted(pjnp.ones(3), 1.0, side="middle")
    with pytest.raises(ValueError):
        pjnp.searchsorted(pjnp.ones((2, 2)), 1.0)


@pytest.mark.parametrize("right", [False, True])
def test_digitize(backend, right):
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.5, 4.0, 9.0], np.float32)
    for bins in (np.array([0.0, 1.0, 2.5, 4.0], np.float32), np.array([4.0, 2.5, 1.0, 0.0], np.float32)):
        _both(lambda a, b: pjnp.digitize(a, b, right=right), lambda a, b: jnp.digitize(a, b, right=right), x, bins)


# --- unique -------------------------------------------------------------------------------------------


ALL_FLAGS = dict(return_index=True, return_inverse=True, return_counts=True)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_unique(backend, axis):
    x = np.array([[3, 1, 3], [2, 2, 2], [3, 1, 3]], np.int32)
    _both(lambda a: pjnp.unique(a, axis=axis), lambda a: jnp.unique(a, axis=axis), x)
    _both(lambda a: pjnp.unique(a, axis=axis, **ALL_FLAGS), lambda a: jnp.unique(a, axis=axis, **ALL_FLAGS), x)


def test_unique_floats_nan_and_size(backend):
    x = np.array([np.nan, 1.0, -0.0, 0.0, np.nan, 1.0, 7.0], np.float32)
    _both(pjnp.unique, jnp.unique, x)
    _both(
        lambda a: pjnp.unique(a, equal_nan=False, **ALL_FLAGS), lambda a: jnp.unique(a, equal_nan=False, **ALL_FLAGS), x
    )
    for size, fill in ((2, None), (9, -5.0)):
        _both(
            lambda a: pjnp.unique(a, size=size, fill_value=fill, **ALL_FLAGS),
            lambda a: jnp.unique(a, size=size, fill_value=fill, **ALL_FLAGS),
            x,
        )
    _both(
        pyjax.jit(lambda a: pjnp.unique(a, size=5, **ALL_FLAGS)),
        jax.jit(lambda a: jnp.unique(a, size=5, **ALL_FLAGS)),
        x,
    )


def test_unique_array_api_and_edge_cases(backend):
    x = np.array([3, 1, 3, 3], np.int32)
    _both(pjnp.unique_all, jnp.unique_all, x)
    _both(pjnp.unique_counts, jnp.unique_counts, x)
    _both(pjnp.unique_inverse, jnp.unique_inverse, x)
    _both(pjnp.unique_values, jnp.unique_values, x)
    _both(
        lambda a: pjnp.unique(a, return_counts=True),
        lambda a: jnp.unique(a, return_counts=True),
        np.zeros((0,), np.float32),
    )
    _both(pjnp.unique, jnp.unique, np.float32(3.0))


def test_unique_needs_size_under_jit():
    with pytest.raises(pyjax.errors.ConcretizationTypeError if hasattr(pyjax, "errors") else TypeError, match="size"):
        pyjax.jit(pjnp.unique)(pjnp.ones(3))


# --- partition ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kth", [0, 2, 4, -1])
def test_partition(backend, kth):
    x = np.array([[5.0, 1.0, 4.0, 2.0, 3.0], [1.0, 1.0, 0.0, 9.0, 1.0]], np.float32)
    _both(lambda a: pjnp.partition(a, kth), lambda a: jnp.partition(a, kth), x)
    _both(lambda a: pjnp.argpartition(a, kth), lambda a: jnp.argpartition(a, kth), x)
    _both(lambda a: pjnp.partition(a, 1, axis=0), lambda a: jnp.partition(a, 1, axis=0), x)


# --- order statistics -----------------------------------------------------------------------------------


METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods(backend, method):
    x = RNG.standard_normal((4, 7)).astype(np.float32)
    q = np.array([0.0, 0.1, 0.5, 0.55, 1.0], np.float32)
    for axis in (None, 0, 1, (0, 1)):
        for keepdims in (False, True):
            _both(
                lambda a, b: pjnp.quantile(a, b, axis=axis, method=method, keepdims=keepdims),
                lambda a, b: jnp.quantile(a, b, axis=axis, method=method, keepdims=keepdims),
                x,
                q,
            )
    _both(
        lambda a: pjnp.quantile(a, 0.3, axis=1, method=method), lambda a: jnp.quantile(a, 0.3, axis=1, method=method), x
    )


def test_quantile_nan_and_nan_variants(backend):
    x = RNG.standard_normal((3, 6)).astype(np.float32)
    x[0, 2] = np.nan
    x[2, :] = np.nan
    for m in ("linear", "nearest", "midpoint"):
        _both(lambda a: pjnp.quantile(a, 0.4, axis=1, method=m), lambda a: jnp.quantile(a, 0.4, axis=1, method=m), x)
        _both(
            lambda a: pjnp.nanquantile(a, 0.4, axis=1, method=m), lambda a: jnp.nanquantile(a, 0.4, axis=1, method=m), x
        )
    _both(lambda a: pjnp.median(a, axis=1), lambda a: jnp.median(a, axis=1), x)
    _both(lambda a: pjnp.nanmedian(a, axis=1), lambda a: jnp.nanmedian(a, axis=1), x)
    _both(lambda a: pjnp.nanpercentile(a, 30.0, axis=1), lambda a: jnp.nanpercentile(a, 30.0, axis=1), x)


def test_median_percentile_ints(backend):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    _both(pjnp.median, jnp.median, x)
    _both(lambda a: pjnp.median(a, axis=0, keepdims=True), lambda a: jnp.median(a, axis=0, keepdims=True), x)
    _both(lambda a: pjnp.percentile(a, np.array([10.0, 90.0])), lambda a: jnp.percentile(a, np.array([10.0, 90.0])), x)
    _both(lambda a: pjnp.quantile(a, 0.3), lambda a: jnp.quantile(a, 0.3), x)


def test_quantile_weights_inverted_cdf(backend):
    x = np.array([3.0, 1.0, 2.0, 5.0], np.float32)
    w = np.array([1.0, 2.0, 0.5, 1.0], np.float32)
    _both(
        lambda a, b: pjnp.quantile(a, 0.5, weights=b, method="inverted_cdf"),
        lambda a, b: jnp.quantile(a, 0.5, weights=b, method="inverted_cdf"),
        x,
        w,
    )


def test_quantile_grads_jit_vmap(backend):
    x = RNG.standard_normal((3, 5)).astype(np.float32)
    check_grads(lambda a: pjnp.quantile(a, 0.3, axis=1), lambda a: jnp.quantile(a, 0.3, axis=1), (x,))
    check_grads(lambda a: pjnp.median(a), lambda a: jnp.median(a), (x,))
    check_grads(
        lambda a: pjnp.percentile(a, 75.0, axis=0, method="midpoint"),
        lambda a: jnp.percentile(a, 75.0, axis=0, method="midpoint"),
        (x,),
    )
    _both(
        pyjax.jit(lambda a, q: pjnp.quantile(a, q, axis=1)),
        jax.jit(lambda a, q: jnp.quantile(a, q, axis=1)),
        x,
        np.float32(0.7),
    )
    _both(pyjax.vmap(pjnp.median), jax.vmap(jnp.median), x)


def test_quantile_errors():
    with pytest.raises(ValueError, match="method"):
        pjnp.quantile(pjnp.ones(3), 0.5, method="weibull")
    with pytest.raises(ValueError, match="rank"):
        pjnp.quantile(pjnp.ones(3), pjnp.ones((2, 2)))
    with pytest.raises(NotImplementedError):
        pjnp.quantile(pjnp.ones(3), 0.5, weights=pjnp.ones(3))
