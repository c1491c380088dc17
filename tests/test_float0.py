"""float0 tangents against JAX: integer and bool values have float0 tangents and cotangents (jvp, vjp,
linearize, grad with allow_int, also under jit), and the transformations reject them as JAX does."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
from pyjax import dtypes

from jax_compare import check

F0 = dtypes.float0


def marked(tree, tree_util):
    """float0 leaves become 'float0(shape)' strings, so both libraries' results compare (JAX returns a numpy
    subclass, pyjax plain numpy); anything else stays."""
    return tree_util.tree_map(lambda x: f"float0{x.shape}" if getattr(x, "dtype", None) == F0 else x, tree)


def mark(j, tree):
    return marked(tree, j.tree_util)


def f0(shape=()):
    return np.zeros(shape, F0)


def same_error(fn):
    """fn(jax_module) raises on JAX and on pyjax with the same exception class and message."""
    with pytest.raises(Exception) as ej:
        fn(jax)
    with pytest.raises(type(ej.value)) as ep:
        fn(pyjax)
    assert str(ep.value) == str(ej.value)


def test_float0_dtype():
    assert pyjax.dtypes.float0 == jax.dtypes.float0
    assert np.zeros((2, 3), F0).dtype == jax.dtypes.float0
    assert dtypes.is_float0(np.zeros(2, F0)) and not dtypes.is_float0(np.zeros(2))


def test_creation_with_float0():
    """jnp's creation functions with dtype=float0 give numpy float0 zeros, whatever the fill (JAX)."""
    for j in (jax, pyjax):
        n = j.numpy
        made = [n.zeros((2,), F0), n.ones(3, F0), n.empty((1, 2), F0), n.full((2,), 7, F0)]
        made += [n.zeros_like(f0((2, 2))), n.ones_like(n.ones(2), dtype=F0), n.full_like(n.ones(2), 5, F0, (3,))]
        assert [(x.dtype, x.shape) for x in made] == [(F0, s) for s in [(2,), (3,), (1, 2), (2,), (2, 2), (2,), (3,)]]


def test_jvp_integer_tangents(backend):
    check(lambda j, n, i: mark(j, j.jvp(lambda v: v * 2, (i,), (f0(3),))), np.arange(3, dtype=np.int32))
    # an integer output of a float function: its tangent is float0
    check(lambda j, n, x: mark(j, j.jvp(lambda v: (v * 2, n.argmax(v)), (x,), (n.ones(3),))), np.arange(3.0))
    check(
        lambda j, n: mark(j, j.jvp(lambda x, i: x * i, (2.0, n.int32(3)), (1.0, f0()))),
    )
    # a bool primal with a float0 tangent
    check(lambda j, n, b: mark(j, j.jvp(lambda v: n.where(v, 1.0, 2.0), (b,), (f0(2),))), np.array([True, False]))


def test_jvp_tangent_dtype_errors():
    i = np.arange(3, dtype=np.int32)
    x = np.arange(3, dtype=np.float32)
    same_error(lambda j: j.jvp(lambda v: v * 2, (i,), (np.zeros(3, np.int32),)))
    same_error(lambda j: j.jvp(lambda v: v * 2, (i,), (np.zeros(3, np.float32),)))
    same_error(lambda j: j.jvp(lambda v: v * 2, (x,), (f0(3),)))
    same_error(lambda j: j.jvp(lambda v: v * 2, (x,), (np.zeros(3, np.int32),)))
    same_error(lambda j: j.jvp(lambda v: v * 2, (i,), (f0(2),)))


def test_grad_allow_int(backend):
    same_error(lambda j: j.grad(lambda x, i: x * i, argnums=1)(1.0, 2))
    same_error(lambda j: j.grad(lambda b: 1.0 * b)(True))
    same_error(lambda j: j.value_and_grad(lambda i: i * 1.0)(3))
    check(lambda j, n: mark(j, j.grad(lambda x, i: x * i, argnums=1, allow_int=True)(1.0, 2)))
    check(
        lambda j, n, i: mark(j, j.grad(lambda x, i: n.sum(x * i), argnums=(0, 1), allow_int=True)(1.0, i)),
        np.arange(3, dtype=np.int32),
    )
    check(lambda j, n: mark(j, j.grad(lambda d: d["x"] * d["i"], allow_int=True)({"x": 1.0, "i": n.int32(3)})))
    check(lambda j, n: mark(j, j.value_and_grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True)(1.0, 3)))
    # under jit the float0 gradient comes back as well
    check(lambda j, n: mark(j, j.jit(j.grad(lambda x, i: x * i, argnums=(0, 1), allow_int=True))(1.0, 3)))


def test_vjp_integer_cotangents(backend):
    # cotangents of integer inputs are float0
    check(lambda j, n: mark(j, j.vjp(lambda x, i: x * i, 2.0, 3)[1](1.0)))
    # an integer output takes a float0 (or any) cotangent and contributes nothing
    check(lambda j, n, x: j.vjp(lambda v: (v * 2, n.argmax(v)), x)[1]((n.ones(3), f0())), np.arange(3.0))
    check(lambda j, n, x: j.vjp(lambda v: (v * 2, n.argmax(v)), x)[1]((n.ones(3), n.int32(0))), np.arange(3.0))


def test_vjp_cotangent_type_errors():
    x = np.arange(3, dtype=np.float32)
    same_error(lambda j: j.vjp(lambda v: j.numpy.argmax(v), x)[1](f0(2)))
    same_error(lambda j: j.vjp(lambda v: v * 2, x)[1](f0(3)))


def test_linearize_integer_outputs(backend):
    check(lambda j, n, x: mark(j, j.linearize(lambda v: (v, n.argmax(v)), x)[1](n.ones(3))), np.arange(3.0))
    check(lambda j, n: j.linearize(lambda x, i: x * i, 2.0, 3)[1](1.0, f0()))


def test_jacobians_integer_dtypes(backend):
    i = np.arange(3, dtype=np.int32)
    x = np.arange(3, dtype=np.float32)
    same_error(lambda j: j.jacrev(lambda v: v * 2)(i))
    same_error(lambda j: j.jacfwd(lambda v: v * 2)(i))
    same_error(lambda j: j.jacfwd(lambda v: 1.0 * v)(np.array([True])))
    same_error(lambda j: j.jacrev(lambda v: v * 2, allow_int=True)(i))  # integer outputs
    same_error(lambda j: j.jacrev(lambda v: j.numpy.argmax(v))(x))
    same_error(lambda j: j.hessian(lambda v: v * 2)(i))
    # jacfwd of an integer output is an integer zero Jacobian; jacrev with allow_int gives integer zeros
    check(lambda j, n, v: j.jacfwd(lambda u: n.argmax(u))(v), x)
    check(lambda j, n, v, w: j.jacrev(lambda u, k: u * k, argnums=(0, 1), allow_int=True)(v, w), x[:2], i[:2])


def test_float0_through_vmap(backend):
    """float0 tangents in and out of vmap (per-example jvp/grad of integer values), batched as JAX does."""
    x, i = np.arange(3.0, dtype=np.float32), np.arange(3, dtype=np.int32)
    check(
        lambda j, n, x, i: mark(j, j.vmap(j.grad(lambda x, i: n.sin(x) * i, argnums=(0, 1), allow_int=True))(x, i)),
        x,
        i,
    )
    check(lambda j, n, i: mark(j, j.vmap(lambda t: j.jvp(lambda v: v * 2, (n.int32(1),), (t,))[1])(f0(3))), i)
    check(
        lambda j, n, x: mark(j, j.vmap(lambda v: j.jvp(lambda a: (a, n.argmax(a)), (v,), (v,))[1], out_axes=-1)(x)),
        np.ones((2, 3), np.float32),
    )
    same_error(lambda j: j.vmap(lambda v: j.jvp(lambda a: (a, a.argmax()), (v,), (v,))[1], out_axes=1)(np.ones((2, 3))))
