"""Host callbacks against real JAX on every backend: jax.debug.print, jax.debug.callback,
jax.pure_callback and io_callback, eagerly and under jit / vmap / grad.
"""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import io_callback as j_io_callback

import pyjax
import pyjax.numpy as pjnp
from pyjax.experimental import io_callback as p_io_callback
from tests.jax_compare import assert_close, check, printed

# --- jax.debug.print / jax.debug.callback -------------------------------------------------------------


def _loop_print(jx, jnp):
    def body(i, c):
        jx.debug.print("i={i} c={c:.2f}", i=i, c=c)
        return c * 1.5 + i

    return jx.jit(lambda x: jx.lax.fori_loop(0, 3, body, x))(jnp.float32(1.0))


PRINT_CASES = {
    "eager": lambda jx, jnp: jx.debug.print(
        "x={x} y={} {z:.3f}", jnp.arange(3.0), x=jnp.float32(1.5), z=jnp.float32(2)
    ),
    "jit": lambda jx, jnp: jx.jit(lambda x: jx.debug.print("x={x} y={}", x * 2, x=x))(jnp.arange(3.0)),
    "jit_twice": lambda jx, jnp: [jx.jit(lambda x: jx.debug.print("{}", x + 1))(jnp.float32(v)) for v in (1, 2)],
    "vmap": lambda jx, jnp: jx.vmap(lambda x, y: jx.debug.print("v={} {}", x, y), in_axes=(0, None))(
        jnp.arange(3.0), 7
    ),
    "grad": lambda jx, jnp: jx.grad(lambda x: (jx.debug.print("g={}", x), x * x)[1])(3.0),
    "jit_grad": lambda jx, jnp: jx.jit(jx.grad(lambda x: (jx.debug.print("jg={}", x), jnp.sin(x))[1]))(0.5),
    "grad_jit": lambda jx, jnp: jx.grad(jx.jit(lambda x: (jx.debug.print("gj={}", x), x**3)[1]))(2.0),
    "jvp": lambda jx, jnp: jx.jvp(lambda x: (jx.debug.print("p={}", x), x * 2)[1], (1.0,), (1.0,)),
    "fori_loop": _loop_print,
    "no_placeholder": lambda jx, jnp: jx.debug.print("plain"),
    "static_str": lambda jx, jnp: jx.debug.print("{} and {}", "text", jnp.int32(4)),
    "two_call": lambda jx, jnp: jx.debug.print(ordered=True)("two {}", jnp.ones(2)),
}


@pytest.mark.parametrize("case", sorted(PRINT_CASES))
def test_debug_print_matches_jax(backend, capsys, case):
    out = printed(capsys, PRINT_CASES[case])
    assert out["pyjax"] == out["jax"]
    assert out["pyjax"]


def test_debug_print_runtime_values_under_jit(backend, capsys):
    """Under jit the print happens at every call with that call's values (traced once)."""
    traces = []

    def f(x):
        traces.append(1)
        pyjax.debug.print("value {}", x)
        return x + 1

    g = pyjax.jit(f)
    for v in (1.0, 2.0, 3.0):
        g(pjnp.float32(v))
    assert capsys.readouterr().out == "value 1.0\nvalue 2.0\nvalue 3.0\n"
    assert len(traces) == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda jx: jx.debug.print("{}"),
        lambda jx: jx.debug.print("{}", 1, 2),
        lambda jx: jx.debug.print("{x}", y=1),
        lambda jx: jx.debug.print("{}", 1, extra=True),
    ],
)
def test_debug_print_bad_format(make):
    with pytest.raises(Exception) as je:
        make(jax)
    with pytest.raises(type(je.value)):
        make(pyjax)


def test_debug_callback(backend):
    seen = []

    def cb(a, b, *, tag):
        seen.append((np.asarray(a).tolist(), np.asarray(b).tolist(), tag))

    def f(x):
        pyjax.debug.callback(cb, x, x * 2, tag="t")
        return x

    f(pjnp.arange(2.0))
    pyjax.jit(f)(pjnp.arange(2.0) + 1)
    pyjax.vmap(f)(pjnp.arange(2.0))
    pyjax.grad(lambda x: pjnp.sum(f(x)))(pjnp.ones(2))
    assert seen == [
        ([0.0, 1.0], [0.0, 2.0], "t"),
        ([1.0, 2.0], [2.0, 4.0], "t"),
        (0.0, 0.0, "t"),
        (1.0, 2.0, "t"),
        ([1.0, 1.0], [2.0, 2.0], "t"),
    ]
    with pytest.raises(TypeError, match="callable"):
        pyjax.debug.callback(3, 1.0)


# --- pure_callback / io_callback ------------------------------------------------------------------


def _pc(jx, jnp, x, vmap_method=None):
    spec = {"a": jx.ShapeDtypeStruct(x.shape, jnp.float32), "b": jx.ShapeDtypeStruct((), jnp.int32)}
    return jx.pure_callback(
        lambda v: {"a": np.sin(np.asarray(v)) * 2, "b": np.int32(np.asarray(v).size)}, spec, x, vmap_method=vmap_method
    )


X3 = np.array([0.5, -1.0, 2.0], np.float32)


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp, x: _pc(jx, jnp, x),
        lambda jx, jnp, x: jx.jit(lambda v: _pc(jx, jnp, v)["a"] + 1)(x),
        lambda jx, jnp, x: jx.vmap(lambda v: _pc(jx, jnp, v, "sequential"))(x),
        lambda jx, jnp, x: jx.jit(jx.vmap(lambda v: _pc(jx, jnp, v, "sequential_unrolled")))(x),
        lambda jx, jnp, x: jx.vmap(lambda v: _pc(jx, jnp, v, "expand_dims")["a"])(x.reshape(3, 1)),
        lambda jx, jnp, x: jx.vmap(
            lambda v, w: jx.pure_callback(
                lambda a, b: np.asarray(a) * np.asarray(b),
                jx.ShapeDtypeStruct((), jnp.float32),
                v,
                w,
                vmap_method="broadcast_all",
            ),
            in_axes=(0, None),
        )(x, jnp.float32(3)),
        lambda jx, jnp, x: jx.vmap(lambda v: _pc(jx, jnp, v))(x),  # vmap_method=None: NotImplementedError
        lambda jx, jnp, x: jx.grad(lambda v: jnp.sum(_pc(jx, jnp, v)["a"]))(x),  # not differentiable: ValueError
        lambda jx, jnp, x: jx.pure_callback(lambda v: v, jx.ShapeDtypeStruct((3,), jnp.float32), x, vmap_method="bad"),
    ],
)
def test_pure_callback(backend, fn):
    check(fn, X3)


def test_pure_callback_wrong_result_shape(backend):
    f = pyjax.jit(
        lambda x: pyjax.pure_callback(lambda v: np.ones(4, np.float32), pyjax.ShapeDtypeStruct((3,), pjnp.float32), x)
    )
    with pytest.raises(RuntimeError, match="pure_callback"):
        f(pjnp.ones(3))


def test_io_callback(backend):
    log = []

    def cb(v):
        log.append(np.asarray(v).tolist())
        return np.asarray(v) * 2

    def run(jx, jnp, io):
        spec = jx.ShapeDtypeStruct((2,), jnp.float32)
        y = jx.jit(lambda x: io(cb, spec, x, ordered=True) + 1)(jnp.arange(2.0))
        z = jx.vmap(lambda x: io(cb, jx.ShapeDtypeStruct((), jnp.float32), x))(jnp.arange(2.0))
        return y, z

    pj = run(pyjax, pjnp, p_io_callback)
    pj_log, log[:] = list(log), []
    jx = run(jax, jjnp, j_io_callback)
    assert_close(pj, jx)
    assert pj_log == log
    for io, mod, np_mod in ((j_io_callback, jax, jjnp), (p_io_callback, pyjax, pjnp)):
        with pytest.raises(ValueError):
            mod.vmap(lambda x: io(cb, mod.ShapeDtypeStruct((), np_mod.float32), x, ordered=True))(np_mod.arange(2.0))


def test_debug_log_goes_to_logging_as_jax(caplog):
    import logging

    for j in (jax, pyjax):
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="jax._src.debugging"):
            j.debug.log("x={x}", x=j.numpy.arange(2.0))
            j.jit(lambda v: j.debug.log("y={}", v))(j.numpy.ones(2))
            j.effects_barrier()
        msgs = [r.getMessage() for r in caplog.records if r.name == "jax._src.debugging"]
        assert msgs == ["x=[0. 1.]", "y=[1. 1.]"], (j.__name__, msgs)
        assert isinstance(j.debug.DebugEffect, type) and isinstance(j.debug.OrderedDebugEffect, type)


def test_debug_sharding_inspectors_as_jax(capsys):
    for j in (jax, pyjax):
        seen = []
        x = j.numpy.ones(3)
        j.debug.inspect_array_sharding(x, callback=seen.append)
        j.jit(lambda v: j.debug.inspect_array_sharding(v, callback=seen.append))(x)
        assert len(seen) == 2 and all(s.is_fully_replicated for s in seen)
        j.debug.visualize_array_sharding(x)
        assert f"{j.devices()[0].platform.upper()} 0" in capsys.readouterr().out
