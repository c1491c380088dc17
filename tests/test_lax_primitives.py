"""The primitive objects jax.lax exports (`*_p`): pyjax's exist under JAX's names with JAX's
primitive names, bind like any primitive and show in jaxprs under that name."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
from pyjax.core.core import Primitive


def test_exported_primitives_are_named_as_jax():
    names = [n for n in dir(pyjax.lax) if n.endswith("_p") and hasattr(jax.lax, n)]
    assert {"gather_p", "scatter_p", "dynamic_slice_p", "psum_p", "all_gather_p", "ppermute_p"} <= set(names)
    for n in names:
        p = getattr(pyjax.lax, n)
        assert isinstance(p, Primitive) and p.name == getattr(jax.lax, n).name, n
    for n in (n for n in dir(pyjax.lax.linalg) if n.endswith("_p")):
        assert getattr(pyjax.lax.linalg, n).name == getattr(jax.lax.linalg, n).name, n


def test_bind_shows_in_jaxpr():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    f = lambda x: pyjax.lax.dynamic_slice_p.bind(x, np.int32(1), np.int32(1), slice_sizes=(1, 2))  # noqa: E731
    assert "dynamic_slice[slice_sizes=(1, 2)]" in str(pyjax.make_jaxpr(f)(x))
    np.testing.assert_array_equal(f(x), x[1:, 1:])


X = np.array([0.5, 1.5, 2.5], np.float32)
XI = np.array([3, -7, 12], np.int32)
BIND_CASES = [
    ("clamp_p", (np.float32(0.0), X, np.float32(1.0)), {}),
    ("igamma_p", (X, X), {}),
    ("polygamma_p", (np.array([0.0, 1.0, 2.0], np.float32), X), {}),
    ("zeta_p", (X + 1, X), {}),
    ("bessel_i1e_p", (X,), {}),
    ("regularized_incomplete_beta_p", (X, X, X / 3), {}),
    ("reduce_precision_p", (X,), dict(exponent_bits=5, mantissa_bits=2)),
    ("mulhi_p", (XI, XI), {}),
    ("top_k_p", (XI,), dict(k=2, axis=0)),
    ("split_p", (X,), dict(sizes=(1, 2), axis=0)),
    ("tile_p", (X,), dict(reps=(2,))),
    ("stack_p", (X, X), dict(axis=0)),
    ("unstack_p", (X,), dict(axis=0)),
    ("optimization_barrier_p", (X, XI), {}),
]


def test_decomposed_primitives_bind_as_jax(backend):
    """Primitives pyjax composes from its own ops bind with JAX's operands and params, eagerly and
    under jit (one equation named as JAX's), with JAX's values and dtypes."""
    for name, args, params in BIND_CASES:
        p, jp = getattr(pyjax.lax, name), getattr(jax.lax, name)
        assert p.name == jp.name and p.multiple_results == jp.multiple_results, name
        want = jp.bind(*args, **params)
        for got in (p.bind(*args, **params), pyjax.jit(lambda *a: p.bind(*a, **params))(*args)):  # noqa: B023
            for g, w in zip(*((o if p.multiple_results else [o]) for o in (got, want))):
                assert g.dtype == w.dtype and g.shape == w.shape, name
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, err_msg=name)
    assert str(pyjax.make_jaxpr(lambda x: pyjax.lax.clamp_p.bind(0.0, x, 1.0))(X)).count("clamp") == 1


def test_decomposed_primitives_transform():
    clamp, igamma = pyjax.lax.clamp_p, pyjax.lax.igamma_p
    np.testing.assert_allclose(pyjax.vmap(lambda x: clamp.bind(0.0, x, 1.0))(X), np.clip(X, 0, 1))
    g = pyjax.grad(lambda x: igamma.bind(np.float32(2.0), x))(np.float32(0.5))
    np.testing.assert_allclose(
        g, jax.grad(lambda x: jax.lax.igamma_p.bind(np.float32(2.0), x))(np.float32(0.5)), rtol=1e-6
    )


def test_linalg_primitives_bind_as_jax():
    """lax.linalg's primitives take JAX's operands and params and give its outputs in its order."""
    a = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]], np.float32)
    cases = [
        ("eigh_p", (a,), dict(lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None)),
        ("svd_p", (a,), dict(full_matrices=False, compute_uv=True, subset_by_index=None, algorithm=None)),
        ("tridiagonal_p", (a,), dict(lower=False)),
        ("lu_pivots_to_permutation_p", (np.array([1, 2, 2], np.int32),), dict(permutation_size=3)),
        ("tridiagonal_solve_p", (a[0], a[1], a[2], a), dict(perturb_singular=False)),
    ]
    for name, args, params in cases:
        p, jp = getattr(pyjax.lax.linalg, name), getattr(jax.lax.linalg, name)
        got, want = p.bind(*args, **params), jp.bind(*args, **params)
        for g, w in zip(*((o if jp.multiple_results else [o]) for o in (got, want))):
            assert g.dtype == w.dtype and g.shape == w.shape, name
            np.testing.assert_allclose(np.abs(np.asarray(g)), np.abs(np.asarray(w)), rtol=1e-5, atol=1e-6, err_msg=name)


def test_tokens_stage_and_shape_as_value():
    """create_token/after_all give tokens (also through jit), after_all refuses other values, stage lifts
    values as JAX does (weak Python scalars) and shape_as_value is an int32 vector, as in JAX."""
    t = pyjax.lax.create_token()
    tok, y = pyjax.jit(lambda t, x: (pyjax.lax.after_all(t, t), x + 1))(t, 1.0)
    assert isinstance(tok, pyjax.lax.Token) and float(y) == 2.0
    for lib in (jax, pyjax):
        with pytest.raises(TypeError, match="must be tokens"):
            lib.lax.after_all(1.0)
        assert lib.lax.dce_sink(np.ones(2)) is None
    for v in (3.0, np.float32(2.0), np.arange(3)):
        got, want = pyjax.lax.stage(v), jax.lax.stage(v)
        assert got.dtype == want.dtype and got.weak_type == want.weak_type
        np.testing.assert_array_equal(got, want)
    for shape in ((), (4, 5)):
        got, want = pyjax.lax.shape_as_value(shape), jax.lax.shape_as_value(shape)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_scatter_reduce_and_approx_top_k_primitives():
    """scatter-<op>, reduce and approx_top_k primitives with JAX's params mean JAX's functions."""
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    idx, upd = np.array([[1], [1]], np.int32), np.full((2, 3), 2.0, np.float32)
    for op in ("add", "mul", "max"):
        dn = dict(update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
        want = getattr(jax.lax, f"scatter_{op}")(x, idx, upd, jax.lax.ScatterDimensionNumbers(**dn))
        got = getattr(pyjax.lax, f"scatter_{op}_p").bind(
            x, idx, upd, dimension_numbers=pyjax.lax.ScatterDimensionNumbers(**dn), indices_are_sorted=False,
            unique_indices=False, mode=None, update_jaxpr=None, update_consts=(),
        )  # fmt: skip
        assert getattr(pyjax.lax, f"scatter_{op}_p").name == f"scatter-{op}"
        np.testing.assert_array_equal(got, want)
    pair = lambda a, b: (a[0] + b[0], a[1] * b[1])  # noqa: E731
    got = pyjax.lax.reduce_p.bind(x, x, np.float32(0), np.float32(1), computation=pair, jaxpr=None, dimensions=(0,))
    for g, w in zip(got, jax.lax.reduce((x, x), (np.float32(0), np.float32(1)), pair, (0,))):
        np.testing.assert_array_equal(g, w)
    kw = dict(k=2, reduction_dimension=-1, recall_target=0.95, is_max_k=False, reduction_input_size_override=-1)
    for g, w in zip(
        pyjax.lax.approx_top_k_p.bind(x, aggregate_to_topk=True, **kw),
        jax.lax.approx_top_k_p.bind(x, aggregate_to_topk=True, **kw),
    ):
        np.testing.assert_array_equal(g, w)


def test_reduce_window_and_stage_primitives():
    """reduce_window_p combines windows by evaluating its jaxpr param (as JAX's lowering does)."""
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    z = np.float32(0)
    pair = pyjax.make_jaxpr(lambda a, b, c, d: (a + c, b * d))(z, z, z, z)
    windows = dict(window_dimensions=(2, 2), window_strides=(1, 1), padding=((0, 0), (0, 0)))
    got = pyjax.lax.reduce_window_p.bind(
        x, x, z, np.float32(1), jaxpr=pair, consts=(), base_dilation=(1, 1), window_dilation=(1, 1), **windows
    )
    want = jax.lax.reduce_window(
        (x, x), (z, np.float32(1)), lambda a, b: (a[0] + b[0], a[1] * b[1]), (2, 2), (1, 1), "VALID"
    )
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(pyjax.lax.stage_p.bind(x), jax.lax.stage_p.bind(x))
    assert pyjax.lax.dce_sink_p.bind(x) == [] and pyjax.lax.dce_sink_p.multiple_results


def test_total_order_window_solve_and_placement_primitives():
    """eq_to/le_to/lt_to (XLA's total order), the max/min-pool derivative primitives, linear_solve_p,
    device_put_p, sharding_constraint_p, axis_index_p and the token primitives bind as JAX's do."""
    v = np.array([-np.nan, -np.inf, -1.0, -0.0, 0.0, 1.0, np.inf, np.nan], np.float32)
    a, b = np.meshgrid(v, v)
    for n in ("eq_to_p", "le_to_p", "lt_to_p"):
        np.testing.assert_array_equal(getattr(pyjax.lax, n).bind(a, b), getattr(jax.lax, n).bind(a, b), err_msg=n)
    x = np.array([[1, 3, 3, 2], [3, 0, 1, 3], [2, 2, 2, 2], [0, 5, 5, 0]], np.float32)
    src = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    win = dict(window_dimensions=(2, 2), window_strides=(1, 2), padding=((0, 1), (0, 0)))
    for lib in (jax, pyjax):  # JAX's own primitive objects and jaxprs are accepted too
        sel = lib.make_jaxpr(lambda p, q: p >= q)(1.0, 1.0).jaxpr
        add = lib.make_jaxpr(lambda p, q: p + q)(1.0, 1.0).jaxpr
        got = pyjax.lax.select_and_scatter_p.bind(
            x,
            src[:4, :2],
            np.float32(1),
            select_jaxpr=sel,
            select_consts=(),
            scatter_jaxpr=add,
            scatter_consts=(),
            **win,
        )
        np.testing.assert_array_equal(
            got, jax.lax.select_and_scatter_add_p.bind(src[:4, :2], x, select_prim=jax.lax.ge_p, **win) + 1
        )
        for prim in ("ge_p", "le_p"):
            gather = dict(select_prim=getattr(lib.lax, prim), base_dilation=(1, 1), window_dilation=(1, 1), **win)
            np.testing.assert_array_equal(
                pyjax.lax.select_and_gather_add_p.bind(src, x, **gather),
                jax.lax.select_and_gather_add_p.bind(src, x, **{**gather, "select_prim": getattr(jax.lax, prim)}),
            )
            np.testing.assert_array_equal(
                pyjax.lax.select_and_scatter_add_p.bind(src[:4, :2], x, select_prim=getattr(lib.lax, prim), **win),
                jax.lax.select_and_scatter_add_p.bind(src[:4, :2], x, select_prim=getattr(jax.lax, prim), **win),
            )
    solve = pyjax.make_jaxpr(lambda c, r: r / c)(X, X)
    lengths = (0, 0, 1, 0)
    (sol,) = pyjax.lax.linear_solve_p.bind(
        X, np.ones(3, np.float32), const_lengths=lengths, jaxprs=(None, None, solve, None)
    )
    np.testing.assert_allclose(sol, 1 / X)
    (moved,) = pyjax.lax.device_put_p.bind(X, devices=[pyjax.devices()[0]], srcs=[None], copy_semantics=[None])
    assert moved.devices() == {pyjax.devices()[0]}
    np.testing.assert_array_equal(pyjax.jit(lambda v: pyjax.lax.sharding_constraint_p.bind(v, sharding=None))(X), X)
    np.testing.assert_array_equal(
        pyjax.vmap(lambda v: v + pyjax.lax.axis_index_p.bind(axis_name="i"), axis_name="i")(X), X + np.arange(3)
    )
    token = pyjax.lax.create_token_p.bind()
    assert isinstance(pyjax.jit(lambda: pyjax.lax.after_all_p.bind(token, token))(), pyjax.lax.Token)
