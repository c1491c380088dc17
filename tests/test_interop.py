"""Interop that real programs rely on (issue 16): numpy accepting JAX's scalar types, *_like of a
ShapeDtypeStruct, bfloat16 on every backend, jax.test_util.check_grads, config_with_absl,
typeof(x).sharding, vdot's precision; each against JAX."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import jax.test_util
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
import pyjax.test_util

from jax_compare import check


@pytest.mark.parametrize("name", ["float32", "int8", "uint16", "bool_", "complex64", "float16", "bfloat16"])
def test_numpy_accepts_scalar_types(name):
    pt, jt = getattr(jnp, name), getattr(jjnp, name)
    assert np.dtype(pt) == np.dtype(jt)
    a = np.arange(3).astype(pt)
    assert a.dtype == np.arange(3).astype(jt).dtype and isinstance(a, np.ndarray)
    assert np.zeros(2, dtype=pt).dtype == np.dtype(jt)
    assert pt.dtype == jt.dtype and jnp.dtype(pt) == pt.dtype  # pyjax's dtype and numpy's agree
    assert jnp.zeros(2, pt).dtype == np.dtype(jt) and jnp.asarray(a).dtype == pt


def test_like_functions_of_a_shape_dtype_struct(backend):
    for lib, np_ in ((pyjax, jnp), (jax, jjnp)):
        s = lib.ShapeDtypeStruct((2, 3), np_.float32)
        got = [np_.zeros_like(s), np_.ones_like(s, dtype=np_.int32), np_.full_like(s, 2.5, shape=(4,))]
        if lib is pyjax:
            mine = got
        else:
            for a, b in zip(mine, got):
                assert a.shape == b.shape and a.dtype == b.dtype and np.array_equal(np.asarray(a), np.asarray(b))


def test_bfloat16_arithmetic(backend):
    x = np.linspace(-2, 3, 6, dtype=np.float32).reshape(2, 3)
    check(lambda lib, np_, a: np_.asarray(a, np_.bfloat16) * 2, x)
    check(lambda lib, np_, a: np_.exp(np_.asarray(a, np_.bfloat16)) + 1, x)
    check(lambda lib, np_, a: np_.sum(np_.asarray(a, np_.bfloat16) ** 2, axis=1), x)
    check(lambda lib, np_, a: (np_.asarray(a, np_.bfloat16) @ np_.asarray(a, np_.bfloat16).T).astype(np_.float32), x)


def test_check_grads(backend):
    x = jnp.array([0.3, -1.2, 2.0])
    pyjax.test_util.check_grads(lambda v: jnp.sum(jnp.sin(v) * v**2), (x,), order=2)
    pyjax.test_util.check_grads(lambda a, b: {"p": a * b, "q": jnp.tanh(a)}, (x, 2.0), order=1, modes=["rev"])

    @pyjax.custom_jvp
    def wrong(v):
        return jnp.sin(v)

    wrong.defjvp(lambda p, t: (wrong(p[0]), 2 * jnp.cos(p[0]) * t[0]))
    for mode in ("fwd", "rev"):
        with pytest.raises(AssertionError, match="order 1"):
            pyjax.test_util.check_grads(wrong, (x,), order=1, modes=[mode])
    with pytest.raises(ValueError, match="check_grads"):
        pyjax.test_util.check_grads(jnp.sin, (x,), 1, modes=["sideways"])
    jax.test_util.check_grads(lambda v: jjnp.sum(jjnp.sin(v) * v**2), (np.asarray(x),), order=2)  # same call on JAX


def test_config_and_typeof_sharding(backend):
    # (JAX's config_with_absl defines absl flags once per process: not called again here)
    assert pyjax.config.config_with_absl() is None and callable(jax.config.config_with_absl)
    for shape in [(), (3,), (2, 3)]:
        s, js = pyjax.typeof(jnp.ones(shape)).sharding, jax.typeof(jjnp.ones(shape)).sharding
        assert tuple(s.spec) == tuple(js.spec) and s.mesh.axis_names == js.mesh.axis_names == ()
        seen = []
        pyjax.jit(lambda v: seen.append(pyjax.typeof(v).sharding) or v)(jnp.ones(shape))
        assert tuple(seen[0].spec) == tuple(js.spec)


def test_vdot_precision(backend):
    a, b = np.arange(4.0, dtype=np.float32), np.ones(4, np.float32)
    check(lambda lib, np_, x, y: np_.vdot(x, y, precision=lib.lax.Precision.HIGHEST), a, b)
    check(lambda lib, np_, x, y: np_.vdot(x, y, preferred_element_type=np_.float32), a.astype(np.int8), b)


def test_issubdtype_with_numpy_abstract_classes():
    abstract = [np.integer, np.floating, np.inexact, np.number, np.signedinteger, np.unsignedinteger, np.generic]
    for name in ["float32", "int8", "uint8", "complex64", "bool_", "bfloat16"]:
        for b in abstract + [np.complexfloating]:
            assert jnp.issubdtype(getattr(jnp, name), b) == jjnp.issubdtype(getattr(jjnp, name), b), (name, b)
    assert jnp.issubdtype(int, np.integer) and not jnp.issubdtype(float, np.integer)


def _control_flow_functions(lib, np_):
    @lib.custom_jvp
    def f(x):
        return np_.sin(x) if x > 0 else np_.cos(x)

    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), (3.0 if x > 0 else 4.0) * t

    f.defjvp(f_jvp)

    @lib.custom_vjp
    def g(x):
        return np_.sin(x) if x > 0 else x * 1.0

    g.defvjp(lambda x: (g(x), x), lambda r, ct: (ct * np_.where(r > 0, 2.0, 5.0),))
    return f, g


def test_custom_rules_of_functions_with_python_control_flow(backend):
    # JAX runs the rules on concrete primals under grad/jvp/vjp, so `if x > 0` works there (not under jit)
    def programs(lib, np_, x):
        f, g = _control_flow_functions(lib, np_)
        return [
            lib.grad(f)(x),
            lib.grad(f)(-x),
            lib.jvp(f, (x,), (np_.float32(1.0),))[1],
            lib.vjp(f, x)[1](np_.float32(1.0))[0],
            lib.grad(lib.grad(f))(x),
            lib.grad(g)(x),
            lib.grad(g)(-x),
            lib.grad(lambda y: g(y) * f(y))(x),
        ]

    check(lambda lib, np_, x: programs(lib, np_, x), np.float32(1.5), check_weak=False)
    f, _ = _control_flow_functions(pyjax, jnp)
    with pytest.raises(pyjax.errors.TracerBoolConversionError):
        pyjax.jit(f)(1.0)
    with pytest.raises(pyjax.errors.TracerBoolConversionError):
        pyjax.vmap(pyjax.grad(f))(jnp.ones(2))


def test_edge_semantics(backend):
    """Edge cases where pyjax differed from JAX (issue 16): each returns JAX's value or raises JAX's class."""
    cases = [
        lambda lib, np_: np_.cross(np_.array([1.0, 2.0]), np_.array([3.0, 4.0])),
        lambda lib, np_: np_.cross(np_.array([1.0, 2.0]), np_.array([3.0, 4.0, 5.0])),
        lambda lib, np_: np_.cross(np_.ones((2, 2)), np_.ones((2, 3))),
        lambda lib, np_: np_.cross(np_.ones(4), np_.ones(3)),
        lambda lib, np_: np_.polyval(np_.array([[1.0, 2.0], [3.0, 4.0]]), np_.array([2.0, 3.0])),
        lambda lib, np_: np_.polyval(np_.ones((3, 2, 2)), np_.array(2.0)),
        lambda lib, np_: np_.cumulative_sum(np_.asarray(3.0)),
        lambda lib, np_: np_.cumulative_sum(np_.ones((2, 2))),
        lambda lib, np_: np_.cumulative_sum(np_.ones((2, 3), np_.int8), axis=1, include_initial=True),
        lambda lib, np_: np_.cumulative_prod(np_.arange(1.0, 4.0), include_initial=True),
        lambda lib, np_: np_.cumsum(np_.asarray(3.0)),
        lambda lib, np_: np_.split(np_.arange(5), 2),
        lambda lib, np_: np_.split(np_.arange(4), 2.5),
        lambda lib, np_: np_.array_split(np_.arange(5), 0),
        lambda lib, np_: np_.hsplit(np_.asarray(1.0), 1),
        lambda lib, np_: np_.dsplit(np_.ones((2, 2)), 2),
        lambda lib, np_: np_.rot90(np_.arange(3)),
        lambda lib, np_: np_.rot90(np_.ones((2, 2)), axes=(0, 0)),
        lambda lib, np_: np_.rot90(np_.ones((2, 2)), axes=(0, 2)),
        lambda lib, np_: np_.rot90(np_.arange(8).reshape(2, 2, 2), 3, axes=(-1, 0)),
        lambda lib, np_: np_.nan_to_num(np_.array([np.nan, np.inf, -np.inf]), nan=1.0, posinf=2.0, neginf=-2.0),
        lambda lib, np_: np_.unwrap(np_.array([0.0, 3.0, 6.5, 0.2]), discont=4.0),
        lambda lib, np_: np_.unwrap(np_.array([0.0, 3.0, 6.5, 0.2]), period=5.0),
        lambda lib, np_: np_.trapezoid(np_.arange(6.0).reshape(2, 3), x=np_.array([0.0, 2.0]), axis=0),
        lambda lib, np_: np_.trapezoid(np_.arange(6.0).reshape(2, 3), x=np_.arange(6.0).reshape(2, 3) ** 2),
    ]
    for f in cases:
        check(f)


def test_jaxpr_public_attributes():
    closed = pyjax.make_jaxpr(lambda x, y: jnp.sin(x) * y + 1.0)(1.0, 2.0)
    want = jax.make_jaxpr(lambda x, y: jjnp.sin(x) * y + 1.0)(1.0, 2.0)
    j, w = closed.jaxpr, want.jaxpr
    assert len(j.invars) == len(w.invars) == 2 and len(j.outvars) == len(w.outvars) == 1
    assert [e.primitive.name for e in j.eqns] == [e.primitive.name for e in w.eqns]
    assert [len(e.invars) for e in j.eqns] == [len(e.invars) for e in w.eqns]
    assert j.eqns[0].outvars[0] is j.eqns[1].invars[0] and closed.consts == [] and j.constvars == []
    avals = [(v.aval.shape, str(v.aval.dtype), v.aval.weak_type) for v in j.invars]
    assert avals == [(v.aval.shape, str(v.aval.dtype), v.aval.weak_type) for v in w.invars]


def test_subnormals_are_kept(backend):
    """pyjax keeps float32 subnormals (IEEE gradual underflow; WebAssembly requires it) where JAX's CPU flushes
    them to zero: a documented difference. WGSL lets a GPU flush them; lavapipe keeps them."""
    x = np.array([1e-40, 1e-38], np.float32)
    got = np.asarray(jnp.asarray(x) / 100)
    np.testing.assert_array_equal(got, x / np.float32(100))
    assert got[0] > 0


def test_canonicalize_dtype_gives_numpy_dtypes():
    import pyjax.dtypes

    for t in ["float32", "float64", "int64", "bfloat16", "bool"]:
        assert pyjax.dtypes.canonicalize_dtype(t) is jax.dtypes.canonicalize_dtype(t), t


def test_cond_operand_none(backend):
    # optax's conditionality transforms call lax.cond(pred, f, g, operand=None): the branches take None
    check(lambda lib, np_, x: lib.lax.cond(x > 0, lambda _: x * 2, lambda _: x, operand=None), np.float32(1.5))
    check(lambda lib, np_, x: lib.jit(lambda v: lib.lax.cond(v > 0, lambda o: o, lambda o: -o, operand=v))(x), 2.0)
    check(lambda lib, np_, x: lib.lax.cond(True, lambda *a: x, lambda *a: x, 1.0, operand=None), np.float32(1))


def test_signature_of_jitted_function():
    import inspect

    def f(x, y=2, *, z=None):
        return x

    assert inspect.signature(pyjax.jit(f)) == inspect.signature(jax.jit(f)) == inspect.signature(f)
