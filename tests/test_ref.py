"""Mutable array references (jax.new_ref, jax.Ref, jax.ref.*) vs JAX: reads and writes eagerly, as jit
arguments and closed over (the value travels in and out of the program), inside loops and conds, under grad
and vmap of functions that make their own Refs, and JAX's errors."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax

from jax_compare import check


def _eager(j, jnp, x):
    r = j.new_ref(x)
    r[1] = 5.0
    r[2:] += 1.0
    j.ref.addupdate(r, 0, jnp.float32(2.0))
    old = j.ref.swap(r, (3,), 9.0)
    return r[...], j.ref.get(r, 1), old, j.freeze(r)


def _jit_arg(j, jnp, x):
    r = j.new_ref(x)

    @j.jit
    def f(ref, y, scale=2.0):
        ref[...] = ref[...] * y * scale
        return ref[0]

    return f(r, 2.0), f(r, 3.0, scale=1.0), r[...]


def _jit_closure(j, jnp, x):
    c = j.new_ref(jnp.zeros(4))
    g = j.jit(lambda y: (c.__setitem__(..., c[...] + y), c[...].sum())[1])
    first = g(x)
    c[...] = jnp.ones(4)  # the next call reads the new value
    return first, g(x), c[...]


def _loops(j, jnp, x):
    r = j.new_ref(jnp.zeros(()))

    def body(i, carry):
        r[...] += x[i]
        return carry + r[...]

    total = j.lax.fori_loop(0, 4, body, 0.0)
    ys = j.lax.scan(lambda c, v: (c, (r.__setitem__(..., r[...] * v), r[...])[1]), 0.0, x)[1]
    j.lax.cond(x[0] > 0, lambda: r.__setitem__(..., 1.0), lambda: r.__setitem__(..., 2.0))
    w = j.lax.while_loop(lambda c: c < 3, lambda c: (r.__setitem__(..., r[...] * 3), c + 1)[1], 0)
    return total, ys, w, r[...]


def _nested(j, jnp, x):
    r = j.new_ref(jnp.zeros(()))

    def outer(i, c):
        j.lax.fori_loop(0, 2, lambda k, d: (r.__setitem__(..., r[...] + x[i]), d)[1], 0)
        return c

    j.jit(lambda: j.lax.fori_loop(0, 3, outer, 0))()
    return r[...]


def _local(j, jnp, x):
    def f(v):
        q = j.new_ref(jnp.zeros(()))
        q[...] += v**2
        j.lax.fori_loop(0, 2, lambda i, c: (q.__setitem__(..., q[...] + jnp.sin(v)), c)[1], 0)
        return q[...]

    return j.grad(f)(x[1]), j.jit(j.grad(f))(x[1]), j.vmap(f)(x), j.jit(lambda v: j.freeze(j.new_ref(v)))(x)


@pytest.mark.parametrize("case", [_eager, _jit_arg, _jit_closure, _loops, _nested, _local], ids=lambda f: f.__name__)
def test_ref_matches_jax(backend, case):
    check(case, np.array([0.5, 1.0, 2.0, 3.0], np.float32))


def test_ref_type_matches_jax():
    for j in (jax, pyjax):
        r = j.new_ref(j.numpy.arange(4.0))
        assert isinstance(r, j.Ref) and r.shape == (4,) and r.ndim == 1 and len(r) == 4
        assert str(r.dtype) == "float32" and str(j.typeof(r)) == "Ref{float32[4]}"
        assert repr(r) == "Ref([0., 1., 2., 3.], dtype=float32)"
        assert j.tree_util.tree_leaves({"a": r})[0] is r
        w = j.new_ref(3)
        assert str(w.dtype) == "int32" and j.typeof(w).weak_type


BAD = {
    "dtype": lambda j: j.new_ref(j.numpy.zeros(2, "int32")).__setitem__(..., j.numpy.ones(2)),
    "shape": lambda j: j.new_ref(j.numpy.zeros(2)).__setitem__(..., j.numpy.ones(3)),
    "addupdate_shape": lambda j: j.ref.addupdate(j.new_ref(j.numpy.zeros(2)), ..., 1.0),
    "return_arg": lambda j: j.jit(lambda q: q)(j.new_ref(1.0)),
    "return_new": lambda j: j.jit(lambda x: j.new_ref(x))(1.0),
    "aliased": lambda j: (lambda r: j.jit(lambda a, b: a[...])(r, r))(j.new_ref(1.0)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_ref_errors_as_jax(case):
    for j in (jax, pyjax):
        with pytest.raises(ValueError):
            BAD[case](j)


def test_grad_writes_into_outer_ref_rejected():
    for j in (jax, pyjax):
        c = j.new_ref(j.numpy.zeros(()))
        with pytest.raises(Exception, match="set/swap operation with a differentiated value"):
            j.grad(lambda x: (c.__setitem__(..., x * 2), c[...] * x)[1])(3.0)


def _ds_program(j, jnp, x):
    r = j.new_ref(x)
    f = j.jit(lambda ref, i: (ref.__setitem__(j.ds(i, 2), ref[j.ds(i, 2)] * 10.0), ref[j.ds(0, 2, 2)])[1])
    got = f(r, 1)
    j.ref.addupdate(r, j.ds(2, 2), jnp.ones(2))
    return got, r[...], r[j.ds(1)]


def test_ds_slices_refs_as_jax(backend):
    check(_ds_program, np.array([0.5, 1.0, 2.0, 3.0], np.float32))


def _ref_transforms(j, jnp, x):
    f = j.jit(lambda ref, v: ref.__setitem__(..., ref[...] + v))

    def g(v):
        q = j.new_ref(jnp.zeros(4))
        f(q, v * 2)
        return q[...].sum()

    c = j.new_ref(jnp.ones(4))
    return (
        j.grad(g)(x),
        j.jit(j.grad(g))(x),
        j.vmap(g)(jnp.stack([x, x])),
        j.grad(lambda v: (c[...] * v).sum())(x),
        j.jit(lambda d: (d["r"].__setitem__(..., d["r"][...] + 1), d["r"][0])[1])({"r": c}),
    )


def test_ref_under_transforms_matches_jax(backend):
    check(_ref_transforms, np.array([0.5, 1.0, 2.0, 3.0], np.float32))


def test_vmapped_write_into_outer_ref_rejected():
    for j in (jax, pyjax):
        c = j.new_ref(j.numpy.zeros(2))
        with pytest.raises(Exception, match="set/swap operation with vmapped value on an unbatched"):
            j.vmap(lambda v: c.__setitem__(..., c[...] * v))(j.numpy.ones((3, 2)))
