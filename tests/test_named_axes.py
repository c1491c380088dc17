"""Named axes and collectives (lax.psum, pmean, pmax, pmin, all_gather, axis_index, ppermute, psum_scatter,
all_to_all, pswapaxes) under vmap(axis_name=...), nested vmaps, grad, jit, control flow and pmap, against
real JAX on every backend."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from tests.jax_compare import assert_close, check

R = np.random.RandomState(0)
X4 = R.randn(4).astype(np.float32)
X43 = R.randn(4, 3).astype(np.float32)
X44 = R.randn(4, 4).astype(np.float32)
X48 = R.randn(4, 8).astype(np.float32)
X234 = R.randn(2, 3, 4).astype(np.float32)
I4 = np.array([3, -1, 4, 2], dtype=np.int32)


def _v(jx, f, name="i", **kw):
    return jx.vmap(f, axis_name=name, **kw)


CASES = {
    "psum": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.psum(y, "i"))(x), X43),
    "pmean": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.pmean(y, "i"))(x), X43),
    "pmax": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.pmax(y, "i"))(x), X43),
    "pmin": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.pmin(y, "i"))(x), X43),
    "psum_int": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.psum(y, "i"))(x), I4),
    "pmean_int": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.pmean(y, "i"))(x), I4),
    "pmax_int": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.pmax(y, "i"))(x), I4),
    "psum_consts": (
        lambda jx, jnp, x: _v(jx, lambda y: (jx.lax.psum(1, "i"), jx.lax.psum(2.0, "i"), jx.lax.pmax(3, "i")))(x),
        X4,
    ),
    "psum_tree": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.psum({"a": y, "b": (y * 2, 1)}, "i"))(x), X43),
    "psum_in_axes1": (lambda jx, jnp, x: _v(jx, lambda y: y - jx.lax.pmean(y, "i"), in_axes=1, out_axes=1)(x), X43),
    "psum_axis_size": (
        lambda jx, jnp, x: _v(jx, lambda y: jx.lax.psum(y, "i") * 0, in_axes=None, axis_size=3)(x),
        X4,
    ),
    "nested_both": (
        lambda jx, jnp, x: _v(jx, _v(jx, lambda y: jx.lax.psum(y, ("i", "j")), "j"))(x),
        X234[0],
    ),
    "nested_outer": (
        lambda jx, jnp, x: _v(jx, _v(jx, lambda y: jx.lax.psum(y, "i"), "j"))(x),
        X234[0],
    ),
    "nested_inner": (
        lambda jx, jnp, x: _v(jx, _v(jx, lambda y: jx.lax.pmax(y, "j"), "j"))(x),
        X234[0],
    ),
    "nested_outer_invariant": (  # the inner axis does not map x: psum over it multiplies by its size
        lambda jx, jnp, x: _v(jx, lambda y: _v(jx, lambda z: jx.lax.psum(y, "j") + z, "j")(jnp.arange(3.0)))(x),
        X4,
    ),
    "nested_three": (
        lambda jx, jnp, x: _v(
            jx, _v(jx, _v(jx, lambda y: jx.lax.psum(y, ("i", "k")) - jx.lax.pmean(y, "j"), "k"), "j")
        )(x),
        X234,
    ),
    "axis_index": (lambda jx, jnp, x: _v(jx, lambda y: y * jx.lax.axis_index("i"))(x), X43),
    "axis_index_tuple": (
        lambda jx, jnp, x: _v(jx, _v(jx, lambda y: jx.lax.axis_index(("i", "j")), "j"))(x),
        X234[0],
    ),
    "axis_index_inner": (
        lambda jx, jnp, x: _v(jx, _v(jx, lambda y: y + jx.lax.axis_index("i"), "j"))(x),
        X234[0],
    ),
    "all_gather": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.all_gather(y, "i"))(x), X43),
    "all_gather_axis1": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.all_gather(y, "i", axis=1))(x), X43),
    "all_gather_tiled": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.all_gather(y, "i", tiled=True))(x), X43),
    "all_gather_invariant": (
        lambda jx, jnp, x: _v(jx, lambda y: jx.lax.all_gather(x[0], "i") + y[0])(x),
        X43,
    ),
    "ppermute_shift": (
        lambda jx, jnp, x: _v(jx, lambda y: jx.lax.ppermute(y, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]))(x),
        X43,
    ),
    "pshuffle": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.pshuffle(y, "i", [2, 0, 3, 1]))(x), X43),
    "psum_scatter": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.psum_scatter(y, "i"))(x), X44),
    "psum_scatter_tiled": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.psum_scatter(y, "i", tiled=True))(x), X48),
    "psum_scatter_dim1": (
        lambda jx, jnp, x: _v(jx, lambda y: jx.lax.psum_scatter(jnp.stack([y, 2 * y]), "i", scatter_dimension=1))(x),
        X44,
    ),
    "all_to_all": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.all_to_all(y, "i", 0, 0))(x), X44),
    "all_to_all_tiled": (
        lambda jx, jnp, x: _v(jx, lambda y: jx.lax.all_to_all(y.reshape(8, 1), "i", 0, 1, tiled=True))(x),
        X48,
    ),
    "all_to_all_01": (
        lambda jx, jnp, x: _v(jx, lambda y: jx.lax.all_to_all(jnp.stack([y, -y], 1), "i", 0, 1))(x),
        X44,
    ),
    "pswapaxes": (lambda jx, jnp, x: _v(jx, lambda y: jx.lax.pswapaxes(jnp.stack([y, -y], 0), "i", 1))(x), X44),
    "axis_size": (lambda jx, jnp, x: _v(jx, lambda y: y * jx.lax.axis_size("i"))(x), X4),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_collectives(backend, name):
    fn, x = CASES[name]
    check(fn, x)


GRAD_CASES = {
    "psum_inside": lambda jx, jnp, x: _v(jx, jx.grad(lambda y: jx.lax.psum(y**2, "i")))(x),
    "pmean_inside": lambda jx, jnp, x: _v(jx, jx.grad(lambda y: jx.lax.pmean(jnp.sin(y), "i")))(x),
    "psum_outside": lambda jx, jnp, x: jx.grad(lambda z: _v(jx, lambda y: jx.lax.psum(y**2, "i"))(z).sum())(x),
    "all_gather": lambda jx, jnp, x: _v(jx, jx.grad(lambda y: (jx.lax.all_gather(y * y, "i") * jnp.arange(4.0)).sum()))(
        x
    ),
    "all_gather_tiled_outside": lambda jx, jnp, x: jx.grad(
        lambda z: (_v(jx, lambda y: jx.lax.all_gather(jnp.sin(y), "i", tiled=True))(z) ** 2).sum()
    )(x.reshape(4, 1)),
    "ppermute": lambda jx, jnp, x: _v(
        jx, jx.grad(lambda y: (jx.lax.ppermute(y * y, "i", [(0, 1), (1, 2), (2, 3), (3, 0)]) * 3.0).sum())
    )(x),
    "ppermute_outside": lambda jx, jnp, x: jx.grad(
        lambda z: (_v(jx, lambda y: jx.lax.pshuffle(y**3, "i", [1, 2, 3, 0]))(z) * jnp.arange(4.0)).sum()
    )(x),
    "psum_scatter_outside": lambda jx, jnp, x: jx.grad(
        lambda z: (_v(jx, lambda y: jx.lax.psum_scatter(jnp.sin(y), "i"))(z) * jnp.arange(4.0)).sum()
    )(jnp.stack([x, x * 2, x * 3, x * 4])),
    "all_to_all_outside": lambda jx, jnp, x: jx.grad(
        lambda z: (_v(jx, lambda y: jx.lax.all_to_all(y**2, "i", 0, 0))(z) * jnp.arange(16.0).reshape(4, 4)).sum()
    )(jnp.stack([x, x + 1, x * 2, x - 1])),
    "jvp_psum": lambda jx, jnp, x: _v(jx, lambda y: jx.jvp(lambda z: jx.lax.psum(z * z, "i"), (y,), (1.0,)))(x),
    "jvp_all_gather": lambda jx, jnp, x: _v(jx, lambda y: jx.jvp(lambda z: jx.lax.all_gather(z**3, "i"), (y,), (y,)))(
        x
    ),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_collective_gradients(backend, name):
    check(GRAD_CASES[name], X4)


def _loss(jnp, w, xi):
    return jnp.sum(jnp.tanh(xi @ w) ** 2)


def test_per_example_gradients_pmean_under_jit(backend):
    """Data-parallel training step: per-example gradients averaged with pmean, the whole step jitted."""
    w = R.randn(3, 2).astype(np.float32)

    def run(jx, jnp, w, x):
        def step(xi):
            g = jx.grad(lambda w_: _loss(jnp, w_, xi))(w)
            return jx.lax.pmean(g, "batch")

        per = jx.jit(jx.vmap(step, axis_name="batch"))(x)
        whole = jx.grad(lambda w_: jnp.mean(jx.vmap(lambda xi: _loss(jnp, w_, xi))(x)))(w)
        return per, whole

    per, whole = check(run, w, X43)
    np.testing.assert_allclose(np.asarray(per[0]), np.asarray(whole), rtol=1e-5)


def test_grad_through_pmean_of_loss(backend):
    w = R.randn(3, 2).astype(np.float32)
    check(
        lambda jx, jnp, w, x: jx.vmap(jx.grad(lambda w_, xi: jx.lax.pmean(_loss(jnp, w_, xi), "b")), (None, 0), 0, "b")(
            w, x
        ),
        w,
        X43,
    )


JIT_CASES = {
    "jit_of_vmap": lambda jx, jnp, x: jx.jit(
        _v(jx, lambda y: jx.lax.psum(y, "i") + jx.lax.psum(1.0, "i") * jx.lax.axis_index("i"))
    )(x),
    "vmap_of_jit": lambda jx, jnp, x: _v(jx, jx.jit(lambda y: jx.lax.pmean(y * y, "i") - y))(x),
    "vmap_of_jit_const": lambda jx, jnp, x: _v(jx, lambda y: jx.jit(lambda: jx.lax.psum(3.0, "i"))() + y)(x),
    "vmap_of_jit_unmapped_arg": lambda jx, jnp, x: _v(
        jx, lambda y, c: jx.jit(lambda c_: jx.lax.psum(c_, "i"))(c) + y, in_axes=(0, None)
    )(x, x[0]),
    "jit_vmap_jit_invariant": lambda jx, jnp, x: jx.jit(
        _v(jx, lambda y, c: jx.jit(lambda c_: jx.lax.psum(c_ * 2, "i"))(c) + y, in_axes=(0, None))
    )(x, x[1]),
    "vmap_of_jit_ppermute": lambda jx, jnp, x: _v(
        jx, jx.jit(lambda y: jx.lax.ppermute(y, "i", [(0, 3), (3, 0), (1, 2), (2, 1)]))
    )(x),
    "vmap_of_jit_axis_index": lambda jx, jnp, x: _v(jx, jx.jit(lambda y: y * jx.lax.axis_index("i")))(x),
    "scan": lambda jx, jnp, x: _v(
        jx, lambda y: jx.lax.scan(lambda c, _: (jx.lax.psum(c * y, "i"), c), 1.0, None, length=3)
    )(x),
    "scan_unmapped_xs": lambda jx, jnp, x: _v(
        jx, lambda y: jx.lax.scan(lambda c, z: (c + jx.lax.psum(z, "i"), None), y, jnp.arange(3.0))[0]
    )(x),
    "cond": lambda jx, jnp, x: _v(jx, lambda y: jx.lax.cond(y > 0, lambda: jx.lax.psum(y, "i"), lambda: -y))(x),
    "cond_unbatched_pred": lambda jx, jnp, x: _v(
        jx, lambda y: jx.lax.cond(x[0] > 0, lambda: jx.lax.pmax(y, "i"), lambda: jx.lax.pmin(y, "i"))
    )(x),
    "while": lambda jx, jnp, x: _v(
        jx, lambda y: jx.lax.while_loop(lambda c: c < 5.0, lambda c: c + jx.lax.psum(y * y, "i") + 1.0, 0.0)
    )(x),
    "fori_axis_index": lambda jx, jnp, x: _v(
        jx, lambda y: jx.lax.fori_loop(0, 3, lambda i, c: c + jx.lax.axis_index("i") * y, 0.0)
    )(x),
    "grad_jit_vmap": lambda jx, jnp, x: jx.grad(
        lambda z: jx.jit(_v(jx, lambda y: jx.lax.pmean(jnp.sin(y), "i") * y))(z).sum()
    )(x),
    "vmap_grad_jit": lambda jx, jnp, x: _v(jx, jx.grad(jx.jit(lambda y: jx.lax.psum(jnp.exp(y), "i"))))(x),
}


@pytest.mark.parametrize("name", sorted(JIT_CASES))
def test_collectives_with_jit_and_control_flow(backend, name):
    check(JIT_CASES[name], X4)


def test_jit_cache_respects_axis_env(backend):
    f = pyjax.jit(lambda y: pyjax.lax.all_gather(y, "i").sum())
    a = pyjax.vmap(f, axis_name="i")(pjnp.arange(3.0))
    b = pyjax.vmap(f, axis_name="i")(pjnp.arange(5.0))
    np.testing.assert_array_equal(np.asarray(a), [3.0] * 3)
    np.testing.assert_array_equal(np.asarray(b), [10.0] * 5)
    with pytest.raises(NameError, match="unbound axis name: i"):
        f(pjnp.arange(3.0))


PMAP_CASES = {
    "size1": lambda jx, jnp, x: jx.pmap(lambda y: jx.lax.psum(y * 2, "d"), axis_name="d")(x[:1]),
    "size1_axis_index": lambda jx, jnp, x: jx.pmap(
        lambda y, z: (y * z, jx.lax.axis_index("i")), axis_name="i", in_axes=(0, None)
    )(x[:1].reshape(1, 1), 3.0),
    "size1_static": lambda jx, jnp, x: jx.pmap(lambda y, n: y * n, static_broadcasted_argnums=1)(x[:1], 4),
    "size1_tree": lambda jx, jnp, x: jx.pmap(lambda t: {"s": t["a"] + t["b"]})({"a": x[:1], "b": x[1:2]}),
    "size1_grad": lambda jx, jnp, x: jx.pmap(jx.grad(lambda y: jx.lax.pmean(jnp.sin(y), "d")), axis_name="d")(x[:1]),
    "too_many": lambda jx, jnp, x: jx.pmap(lambda y: y * 2)(x),
    "too_many_named": lambda jx, jnp, x: jx.pmap(lambda y: jx.lax.psum(y, "d"), axis_name="d")(x),
    # the keyword arguments, as JAX has them on one device
    "kwargs_mapped": lambda jx, jnp, x: jx.pmap(lambda a, b: a * b)(x[None], b=x[None] + 1),
    "kwargs_scalar": lambda jx, jnp, x: jx.pmap(lambda a, b=1: a * b)(x[None], b=3.0),
    "in_axes_1": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, in_axes=1)(x[:, None]),
    "in_axes_neg": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, in_axes=-1)(x[:, None]),
    "in_axes_tree": lambda jx, jnp, x: jx.pmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(
        {"a": x[None], "b": x}
    ),
    "in_axes_list": lambda jx, jnp, x: jx.pmap(lambda a, b: a * b, in_axes=[0, None])(x[None], 2.0),
    "in_axes_length": lambda jx, jnp, x: jx.pmap(lambda a, b: a + b, in_axes=(0,))(x[None], x[None]),
    "in_axes_float": lambda jx, jnp, x: jx.pmap(lambda a: a, in_axes=0.5)(x[None]),
    "out_axes_1": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, out_axes=1)(x[None]),
    "out_axes_none_psum": lambda jx, jnp, x: jx.pmap(lambda a: jx.lax.psum(a, "i"), "i", out_axes=None)(x[None]),
    "out_axes_none": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, out_axes=None)(x[None]),
    "out_axes_tuple": lambda jx, jnp, x: jx.pmap(lambda a: (a, a * 2), out_axes=(0, 1))(x[None]),
    "static_out_of_range": lambda jx, jnp, x: jx.pmap(lambda a, n: a * n, static_broadcasted_argnums=5)(x[None], 3),
    "static_unhashable": lambda jx, jnp, x: jx.pmap(lambda a, n: a * n[0], static_broadcasted_argnums=1)(x[None], [3]),
    "devices": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, devices=jx.devices()[:1])(x[None]),
    "devices_empty": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, devices=[])(x[None]),
    "backend_cpu": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, backend="cpu")(x[None]),
    "backend_unknown": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, backend="bogus")(x[None]),
    "axis_size_unmapped": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, in_axes=None, axis_size=1)(x),
    "axis_size_mismatch": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, axis_size=2)(x[None]),
    "no_mapped_argument": lambda jx, jnp, x: jx.pmap(lambda: 1.0)(),
    "donate": lambda jx, jnp, x: jx.pmap(lambda a: a * 2, donate_argnums=0)(x[None] + 0),
    "mismatched_sizes": lambda jx, jnp, x: jx.pmap(lambda a, b: a + b)(x[None], x[:2, None]),
}


@pytest.mark.parametrize("name", sorted(PMAP_CASES))
def test_pmap(backend, name):
    check(PMAP_CASES[name], X4)


def test_pmap_runs_on_the_given_device():
    x = pjnp.ones((1, 3))
    for name in ("cpu", "wasm"):
        dev = pyjax.devices(name)[0]
        assert pyjax.pmap(lambda a: a * 2, backend=name)(x).devices() == {dev}
        assert pyjax.pmap(lambda a: a * 2, devices=[dev])(x).devices() == {dev}


def test_pmap_too_many_raises_value_error():
    with pytest.raises(ValueError, match="devices"):
        pyjax.pmap(lambda y: y)(pjnp.ones(2))
    assert pyjax.local_device_count() == jax.local_device_count() == 1


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp, x: jx.lax.psum(x, "i"),
        lambda jx, jnp, x: jx.lax.axis_index("i"),
        lambda jx, jnp, x: jx.vmap(lambda y: jx.lax.pmean(y, "j"), axis_name="i")(x),
        lambda jx, jnp, x: jx.vmap(lambda y: jx.lax.all_gather(y, "j"), axis_name="i")(x),
        lambda jx, jnp, x: jx.vmap(lambda y: jx.lax.psum(y, ("i", "j")), axis_name="i")(x),
        lambda jx, jnp, x: jx.jit(lambda y: jx.lax.psum(y, "i"))(x),
        lambda jx, jnp, x: jx.vmap(lambda y: y)(x) + jx.lax.psum(1, "i"),  # the vmap's name is gone
    ],
)
def test_unbound_axis_name(fn):
    for jx, jnp in ((jax, jjnp), (pyjax, pjnp)):
        with pytest.raises(NameError, match="unbound axis name"):
            fn(jx, jnp, jnp.asarray(X4))


def test_pmax_has_no_derivative():
    for jx in (jax, pyjax):
        with pytest.raises(NotImplementedError):
            jx.vmap(jx.grad(lambda y: jx.lax.pmax(y * y, "i")), axis_name="i")(np.float32([1, 2]))


def test_bad_collective_arguments():
    x = pjnp.asarray(X44)
    with pytest.raises(NotImplementedError):
        pyjax.vmap(lambda y: pyjax.lax.psum(y, "i", axis_index_groups=[[0, 1], [2, 3]]), axis_name="i")(x)
    with pytest.raises(ValueError):
        pyjax.vmap(lambda y: pyjax.lax.psum_scatter(y[:3], "i"), axis_name="i")(x)
    with pytest.raises(ValueError):
        pyjax.vmap(lambda y: pyjax.lax.all_gather(y, "i", axis=3), axis_name="i")(x)
    with pytest.raises(ValueError):
        pyjax.vmap(lambda y: pyjax.lax.ppermute(y, "i", [(0, 1), (1, 1)]), axis_name="i")(x)
    with pytest.raises(ValueError):
        pyjax.vmap(lambda y: pyjax.lax.pshuffle(y, "i", [0, 0, 1, 2]), axis_name="i")(x)


def test_ppermute_partial_permutation_fills_zeros(backend):
    # JAX's vmap rejects partial permutations; pyjax follows pmap's documented semantics (zeros).
    out = pyjax.vmap(lambda y: pyjax.lax.ppermute(y, "i", [(0, 1), (1, 2)]), axis_name="i")(pjnp.asarray(X4))
    np.testing.assert_array_equal(np.asarray(out), [0.0, X4[0], X4[1], 0.0])


def test_make_jaxpr_axis_env():
    pj = pyjax.make_jaxpr(lambda y: pyjax.lax.psum(y, "j"), axis_env=[("j", 4)])(pjnp.asarray(X4))
    assert "psum[axes=('j',)" in str(pj)
    jx = jax.make_jaxpr(lambda y: jax.lax.psum(y, "j"), axis_env=[("j", 4)])(X4)
    assert "psum[axes=('j',)" in str(jx)


def test_vmap_psum_jaxpr_is_a_reduction():
    s = str(pyjax.make_jaxpr(pyjax.vmap(lambda y: pyjax.lax.psum(y, "i"), axis_name="i"))(pjnp.asarray(X4)))
    assert "reduce_sum" in s and "psum" not in s


def test_results_match_numpy():
    """A direct check of the semantics (independent of the oracle)."""
    out = pyjax.vmap(lambda y: pyjax.lax.psum(y, "i") - y, axis_name="i")(pjnp.asarray(X4))
    assert_close(out, jjnp.asarray(X4.sum() - X4))


def test_pbroadcast_ragged_all_to_all_and_psend():
    """pbroadcast and ragged_all_to_all with JAX's documented semantics (JAX's CPU backend runs neither:
    ragged_all_to_all's expected values are those of its docstring); psend/precv raise as JAX does off GPU."""
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    np.testing.assert_array_equal(pyjax.vmap(lambda v: pyjax.lax.pbroadcast(v, "i", 1), axis_name="i")(x), x[[1, 1, 1]])
    with pytest.raises(ValueError, match="out of range"):
        pyjax.vmap(lambda v: pyjax.lax.pbroadcast(v, "i", 3), axis_name="i")(x)
    args = (
        np.array([[1, 2, 2], [3, 4, 0]], np.float32),  # operand
        np.zeros((2, 4), np.float32),  # output
        np.array([[0, 1], [0, 1]], np.int32),  # input_offsets
        np.array([[1, 2], [1, 1]], np.int32),  # send_sizes
        np.array([[0, 0], [1, 2]], np.int32),  # output_offsets
        np.array([[1, 1], [2, 1]], np.int32),  # recv_sizes
    )
    want = np.array([[1, 3, 0, 0], [2, 2, 4, 0]], np.float32)
    for ragged in (pyjax.lax.ragged_all_to_all, lambda *a, **k: pyjax.lax.ragged_all_to_all_p.bind(*a, **k)):
        got = pyjax.jit(pyjax.vmap(lambda *a: ragged(*a, axis_name="i"), axis_name="i"))(*args)  # noqa: B023
        np.testing.assert_array_equal(got, want)
    for lib in (jax, pyjax):
        with pytest.raises(NotImplementedError, match="only implemented on GPU"):
            shard = lib.shard_map(
                lambda v: lib.lax.precv(
                    lib.lax.psend(v, "i", [(0, 0)]), lib.ShapeDtypeStruct(v.shape, v.dtype), "i", [(0, 0)]
                ),  # noqa: B023
                mesh=lib.sharding.Mesh(np.array(lib.devices()), ("i",)),
                in_specs=lib.sharding.PartitionSpec("i"),
                out_specs=lib.sharding.PartitionSpec("i"),
            )
            lib.jit(shard)(x)
