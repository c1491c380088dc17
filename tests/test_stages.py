"""Ahead-of-time API (jax.stages): jit(f).trace / .lower / .compile against real JAX."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from jax_compare import assert_close, check


def _f(x, y, n=2):
    return {"a": abs(x) * y * n + x**2, "b": x.sum()}


def _lowered(mod, np_mod, n=3):
    sds = mod.ShapeDtypeStruct((3,), np_mod.float32)
    return mod.jit(_f, static_argnames="n").lower(np_mod.ones(3, np_mod.float32), sds, n=n)


def test_compile_and_call_matches_jax(backend):
    x = np.arange(3, dtype=np.float32)
    y = np.linspace(-1, 1, 3).astype(np.float32)
    check(lambda mod, jnp, a, b: _lowered(mod, jnp).compile()(a, b), x, y)


def test_stage_metadata_matches_jax():
    pj, jx = _lowered(pyjax, pjnp), _lowered(jax, jax.numpy)
    assert repr(pj.in_tree) == repr(jx.in_tree) == "PyTreeDef(((*, *), {}))"
    assert repr(pj.out_tree) == repr(jx.out_tree)
    pi, ji = pj.args_info[0], jx.args_info[0]
    assert [(a.shape, str(a.dtype), a.donated) for a in pi] == [(a.shape, str(a.dtype), a.donated) for a in ji]
    for k in ("a", "b"):
        assert (pj.out_info[k].shape, str(pj.out_info[k].dtype)) == (jx.out_info[k].shape, str(jx.out_info[k].dtype))
    c = pj.compile()
    assert repr(c.in_tree) == repr(pj.in_tree) and repr(c.out_tree) == repr(pj.out_tree)
    assert isinstance(pyjax.jit(_f), pyjax.stages.Wrapped)
    assert isinstance(pj, pyjax.stages.Lowered) and isinstance(c, pyjax.stages.Compiled)
    assert isinstance(pj.args_info[0][0], pyjax.stages.ArgInfo)


def test_trace_jaxpr_and_out_info():
    t = pyjax.jit(_f, static_argnums=2).trace(pjnp.ones(3), pjnp.ones(3), 4)
    assert isinstance(t, pyjax.stages.Traced)
    text = str(t.jaxpr)
    assert "abs" in text and "reduce_sum" in text
    assert t.out_info["b"].shape == () and t.out_info["a"].shape == (3,)
    assert isinstance(t.lower(), pyjax.stages.Lowered)
    assert "abs" in t.lower().as_text()


@pytest.mark.parametrize(
    "args",
    [
        (np.ones(4, np.float32), np.ones(3, np.float32)),  # shape
        (np.ones(3, np.int32), np.ones(3, np.float32)),  # dtype
        (np.ones(3, np.float32),),  # too few
        ([np.ones(3, np.float32)], np.ones(3, np.float32)),  # tree
    ],
)
def test_compiled_rejects_other_arguments(args):
    check(lambda mod, jnp, *a: _lowered(mod, jnp).compile()(*a), *args)


def test_compiled_rejects_static_kwarg_and_tracers():
    c = _lowered(pyjax, pjnp).compile()
    with pytest.raises(TypeError):
        c(pjnp.ones(3), pjnp.ones(3), n=3)
    g = pyjax.jit(lambda x: (x * x).sum()).lower(1.0).compile()
    with pytest.raises(TypeError, match="Cannot apply JAX transformations"):
        pyjax.grad(g)(1.0)


def test_compile_reuses_the_jit_program(backend):
    jf = pyjax.jit(lambda x, y: pyjax.numpy.exp(x) * y + 1)
    c = jf.lower(pyjax.ShapeDtypeStruct((4,), pjnp.float32), pyjax.ShapeDtypeStruct((4,), pjnp.float32)).compile()
    jaxpr = c._jaxpr
    programs = {k: v for k, v in jaxpr._cache.items() if isinstance(k, tuple) and len(k) == 2}
    assert c.runtime_executable() in programs.values()
    x = pjnp.asarray(np.arange(4, dtype=np.float32))
    out_jit, out_c = jf(x, x), c(x, x)
    np.testing.assert_allclose(np.asarray(out_jit), np.asarray(out_c))
    after = {k: v for k, v in jaxpr._cache.items() if isinstance(k, tuple) and len(k) == 2}
    assert after == programs  # neither call compiled another program
    assert len(jf.cache) >= 1 and any(e[0] is jaxpr for e in jf.cache.values())
    assert "Kernel" in c.as_text()


def test_static_args_and_scalars(backend):
    def run(mod, jnp, x):
        f = mod.jit(lambda x, k, s: x * k + s, static_argnums=1)
        c = f.lower(x, 3, 1.5).compile()
        return c(x, 2.0), f.trace(x, 3, 1.5).out_info.shape

    check(run, np.arange(6, dtype=np.float32).reshape(2, 3))


def test_donated_args_info_and_cost_analysis():
    for mod in (jax, pyjax):
        lo = mod.jit(lambda x, y: x + y, donate_argnums=1).lower(1.0, 2.0)
        assert [a.donated for a in lo.args_info[0]] == [False, True]
    ca = pyjax.jit(lambda x: pjnp.exp(x) @ x).lower(pjnp.ones((4, 4))).cost_analysis()
    assert ca["transcendentals"] == 16 and ca["flops"] == 128 and ca["bytes accessed"] == 128
    with pytest.raises(ValueError):
        pyjax.jit(lambda x: x).lower(1.0).compiler_ir("foo")


def test_eval_shape_and_shardings():
    jf = pyjax.jit(lambda x: (x, x.sum()))
    sds = pyjax.ShapeDtypeStruct((2, 3), pjnp.float32)
    out = jf.eval_shape(sds)
    assert out[0].shape == (2, 3) and out[1].shape == ()
    c = jf.lower(sds).compile()
    (ins,), _ = c.input_shardings
    assert isinstance(ins, pyjax.sharding.SingleDeviceSharding)
    assert all(isinstance(s, pyjax.sharding.Sharding) for s in c.output_shardings)
    assert_close(c(pjnp.ones((2, 3))), jax.jit(lambda x: (x, x.sum()))(jax.numpy.ones((2, 3))))
