"""jax.export against JAX: export(jit(f))(*specs) -> Exported whose call gives JAX's values (a program with
loops, conds, custom_jvp functions, gathers, scans, random and a convolution), its avals and trees, errors
on mistyped calls, and pyjax's own serialize/deserialize round trip (JAX's needs flatbuffers)."""

from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest

import pyjax

from jax_compare import assert_close


def _prog(j, jnp):
    def prog(x, y, k):
        return {
            "a": jnp.sin(x) @ jnp.ones((3, 2)) * y,
            "b": j.lax.fori_loop(0, 3, lambda i, c: c * 1.5 + i, x),
            "c": j.lax.cond(x[0] > 0, lambda v: v * 2, lambda v: v - 1, x),
            "d": j.nn.relu(x) + j.nn.softplus(x) + j.nn.gelu(x),
            "e": jnp.cumsum(x) + jnp.sort(-x) + x[jnp.array([2, 0, 1])] + x.at[1].add(5.0),
            "f": j.lax.scan(lambda c, v: (c + v, c * v), 0.0, x),
            "g": j.random.normal(k, (3,)),
            "h": jnp.argmax(x) + jnp.sum(x > 0),
            "i": j.lax.conv_general_dilated(x.reshape(1, 1, 3), jnp.ones((1, 1, 2)), (1,), "SAME"),
            "j": j.jit(jnp.tanh)(x),
        }

    return prog


def _export(j):
    jnp = j.numpy
    ex = importlib.import_module(j.__name__ + ".export")
    k = j.random.key(0)
    e = ex.export(j.jit(_prog(j, jnp)))(j.ShapeDtypeStruct((3,), jnp.float32), 2.0, k)
    return ex, e, (jnp.array([0.5, -1.0, 2.0]), 2.0, k)


def test_export_call_matches_jax(backend):
    jex, je, jargs = _export(jax)
    pex, pe, pargs = _export(pyjax)
    want = je.call(*jargs)
    assert_close(pe.call(*pargs), want)
    back = pex.deserialize(pe.serialize())
    assert_close(back.call(*pargs), want)
    for p, w in zip(back.in_avals[:2] + back.out_avals, je.in_avals[:2] + je.out_avals):  # (pyjax's key: its data)
        assert (p.shape, str(p.dtype), p.weak_type) == (w.shape, str(w.dtype), w.weak_type)
    assert back.fun_name == je.fun_name == "prog"
    assert back.out_tree == pe.out_tree and back.in_tree == pe.in_tree


def test_export_call_transforms_and_errors():
    for j in (jax, pyjax):
        ex, e, (x, y, k) = _export(j)
        g = j.grad(lambda v: e.call(v, y, k)["a"].sum())(x)
        np.testing.assert_allclose(np.asarray(g), np.cos(np.asarray(x)) * 2 * y, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(j.jit(e.call)(x, y, k)["b"]), [5.1875, 0.125, 10.25])
        for bad in [(j.numpy.ones(4), y, k), (j.numpy.ones(3, "int32"), y, k), (x, y)]:
            with pytest.raises(ValueError):
                e.call(*bad)
        with pytest.raises(ValueError, match="must be the result of `jit`"):
            ex.export(lambda v: v)


def test_export_registrations_and_shape_polymorphism_errors():
    import collections

    for j in (jax, pyjax):
        ex = importlib.import_module(j.__name__ + ".export")
        nt = collections.namedtuple(f"NT{j.__name__}", "a b")
        assert ex.register_namedtuple_serialization(nt, serialized_name=f"test.{j.__name__}.nt") is nt
        assert not ex.is_symbolic_dim(3)
    with pytest.raises(NotImplementedError, match="shape polymorphism"):
        pyjax.export.symbolic_shape("b, 3")


def test_compilation_cache_settings_accepted():
    for j in (jax, pyjax):
        cc = importlib.import_module(j.__name__ + ".experimental.compilation_cache.compilation_cache")
        cc.reset_cache()
        assert callable(cc.set_cache_dir)
