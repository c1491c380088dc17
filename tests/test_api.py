"""Top-level API helpers against real JAX: named_scope, process / device helpers, config contexts,
disable_jit, named_call, clear_caches, typeof and ensure_compile_time_eval.
"""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from tests.jax_compare import check

X3 = np.array([0.5, -1.0, 2.0], np.float32)


def test_named_scope_and_process_helpers(backend):
    def run(jx, jnp, x):
        with jx.named_scope("block"):
            y = x * 2
        return y, jx.process_index(), jx.process_count(), jx.copy_to_host_async(y)

    check(run, X3)
    with pytest.raises(TypeError):
        with pyjax.named_scope(3):
            pass
    assert pyjax.local_device_count() == len(pyjax.local_devices()) == 1
    assert pyjax.process_indices() == [0] and pyjax.host_count() == 1 and pyjax.host_id() == 0
    keep = pjnp.arange(5.0) + 1
    assert any(a is keep for a in pyjax.live_arrays())
    assert all(a.devices() == {keep.device} for a in pyjax.live_arrays(keep.device.platform))
    assert "devices" in pyjax.print_environment_info(return_string=True)
    arr = pyjax.make_array_from_callback((2, 2), None, lambda idx: np.arange(4.0, dtype=np.float32).reshape(2, 2)[idx])
    assert np.asarray(arr).tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_config_contexts():
    with pyjax.default_matmul_precision("float32"), pyjax.numpy_dtype_promotion("strict"), pyjax.debug_nans(True):
        assert pyjax.config.jax_numpy_dtype_promotion == "strict" and pyjax.config.jax_debug_nans
    assert pyjax.config.jax_numpy_dtype_promotion == "standard" and not pyjax.config.jax_debug_nans
    with pyjax.enable_x64(True):
        assert pyjax.config.jax_enable_x64
    assert not pyjax.config.jax_enable_x64 or pyjax.config.jax_enable_x64  # restored to the prior value


# --- top-level helpers ----------------------------------------------------------------------------------


def test_disable_jit_runs_python_each_call():
    def run(jx, n):
        seen = []

        @jx.jit
        def f(x):
            seen.append(type(x).__name__ if isinstance(x, jx.Array) else "other")
            seen.append(float(x.sum()))  # concrete under disable_jit
            return x * 2

        with jx.disable_jit():
            outs = [np.asarray(f(n.ones(3) * i)) for i in range(3)]
        return seen, outs

    pseen, pouts = run(pyjax, pjnp)
    jseen, jouts = run(jax, jjnp)
    assert [s for s in pseen if isinstance(s, float)] == [s for s in jseen if isinstance(s, float)] == [0.0, 3.0, 6.0]
    for a, b in zip(pouts, jouts):
        np.testing.assert_array_equal(a, b)


def test_disable_jit_restores_and_traces_again():
    calls = []

    @pyjax.jit
    def f(x):
        calls.append(1)
        return x + 1

    with pyjax.disable_jit():
        f(pjnp.ones(2))
        f(pjnp.ones(2))
    assert len(calls) == 2
    f(pjnp.ones(2))
    f(pjnp.ones(2))
    assert len(calls) == 3  # traced once, then cached
    with pyjax.disable_jit(False):
        f(pjnp.ones(2))
    assert len(calls) == 3
    with pyjax.disable_jit():
        g = pyjax.grad(lambda x: f(x).sum())(pjnp.ones(2))
    np.testing.assert_array_equal(np.asarray(g), np.asarray(jax.grad(lambda x: (x + 1).sum())(jjnp.ones(2))))


def test_clear_caches_retraces():
    calls = []

    @pyjax.jit
    def f(x):
        calls.append(1)
        return x * 3

    f(pjnp.ones(2))
    f(pjnp.ones(2))
    assert len(calls) == 1
    assert pyjax.clear_caches() is None
    np.testing.assert_array_equal(np.asarray(f(pjnp.ones(2))), [3, 3])
    assert len(calls) == 2


def test_named_call():
    def g(x):
        return x * 2 + 1

    h = pyjax.named_call(g, name="my_g")
    np.testing.assert_allclose(
        np.asarray(h(pjnp.arange(3.0))), np.asarray(jax.named_call(g, name="my_g")(jjnp.arange(3.0)))
    )
    np.testing.assert_allclose(np.asarray(pyjax.jit(h)(pjnp.arange(3.0))), [1, 3, 5])


@pytest.mark.parametrize(
    "make",
    [
        lambda n: n.ones((2, 3)),
        lambda n: n.arange(4),
        lambda n: 1.0,
        lambda n: 3,
        lambda n: np.zeros(2, np.float32),
        lambda n: n.array(True),
    ],
)
def test_typeof(make):
    p, j = pyjax.typeof(make(pjnp)), jax.typeof(make(jjnp))
    assert (p.shape, str(p.dtype), p.weak_type) == (j.shape, str(j.dtype), j.weak_type)


def test_typeof_under_trace():
    box = []

    def f(x):
        box.append(pyjax.typeof(x))
        return x

    pyjax.jit(f)(pjnp.ones((2, 2), pjnp.int32))
    assert box[0].shape == (2, 2) and str(box[0].dtype) == "int32"


def test_ensure_compile_time_eval():
    @pyjax.jit
    def f(x):
        with pyjax.ensure_compile_time_eval():
            c = pjnp.arange(3.0) * 2
        return x + c

    np.testing.assert_allclose(np.asarray(f(pjnp.ones(3))), [1, 3, 5])


def _fwd_bwd_program(j, jnp, x, w):
    fwd, bwd = j.fwd_and_bwd(lambda a, b: (jnp.tanh(a @ b)).sum(), argnums=(0, 1))
    y, res = fwd(x, w)
    f2, b2 = j.fwd_and_bwd(lambda a: (a * 2, a + 1), argnums=0, has_aux=True, jitted=False)
    y2, res2, aux = f2(x)
    return y, bwd(res, jnp.float32(1.0)), y2, aux, b2(res2, jnp.ones_like(x))


def test_fwd_and_bwd_matches_jax(backend):
    check(_fwd_bwd_program, np.arange(4, dtype=np.float32).reshape(2, 2) / 4, np.ones((2, 2), np.float32))


def test_make_array_from_shards_matches_jax():
    for j in (jax, pyjax):
        s = j.sharding.NamedSharding(j.make_mesh((1,), ("x",)), j.P("x"))
        a = j.make_array_from_single_device_arrays((4,), s, [j.numpy.arange(4.0)])
        b = j.make_array_from_process_local_data(s, np.arange(4.0))
        assert a.sharding == s and b.sharding == s and str(b.dtype) == "float32"
        np.testing.assert_array_equal(np.asarray(a), np.arange(4.0))
        with pytest.raises(ValueError):
            j.make_array_from_single_device_arrays((8,), s, [j.numpy.arange(4.0)])


def test_no_tracing_no_execution_and_config_contexts_as_jax():
    for j in (jax, pyjax):
        f = j.jit(lambda x: x * 2)
        f(1.0)
        with j.no_tracing(True):
            assert float(f(1.0)) == 2.0  # cached: no trace
            with pytest.raises(RuntimeError, match="no_tracing"):
                j.jit(lambda x: x + 1)(1.0)
        with j.no_execution(True):
            with pytest.raises(RuntimeError, match="no_execution"):
                f(2.0)
        for ctx in (j.thread_guard, j.softmax_custom_jvp, j.transfer_guard_host_to_device):
            with ctx(True if ctx is not j.transfer_guard_host_to_device else "allow"):
                pass
        assert j.config.jax_default_prng_impl == "threefry2x32"
        with pytest.raises(ValueError):
            j.config.update("jax_default_prng_impl", "foo")
        assert [s.name for s in j.memory.Space] == ["Device", "Host", "Any"]
        assert not j.distributed.is_initialized()


def test_distributed_single_process():
    with pytest.raises(NotImplementedError):
        pyjax.distributed.initialize(num_processes=2, process_id=0)
    pyjax.distributed.initialize()
    assert pyjax.distributed.is_initialized()
    pyjax.distributed.shutdown()
    assert not pyjax.distributed.is_initialized()


def test_monitoring_listeners_as_jax():
    for j in (jax, pyjax):
        seen = []
        listen = lambda e, **k: seen.append((e, k))  # noqa: E731
        scalar = lambda key, v, **k: seen.append((key, v))  # noqa: E731
        j.monitoring.register_event_listener(listen)
        j.monitoring.register_scalar_listener(scalar)
        j.monitoring.record_event("/pyjax/test", tag="t")
        j.monitoring.record_scalar("/pyjax/s", 3)
        j.monitoring.unregister_event_listener(listen)
        j.monitoring.unregister_scalar_listener(scalar)
        j.monitoring.record_event("/pyjax/after")
        assert ("/pyjax/test", {"tag": "t"}) in seen and ("/pyjax/s", 3) in seen
        assert all(e != "/pyjax/after" for e, _ in seen)


def test_small_top_level_names_as_jax():
    for j in (jax, pyjax):
        assert j.host_ids() == [0]
        assert isinstance(j.version.__version__, str)
        np.testing.assert_array_equal(np.asarray(j.dlpack.from_dlpack(np.arange(3, dtype=np.int32))), [0, 1, 2])
        x = j.numpy.from_dlpack(np.arange(3.0), copy=True)  # canonicalized: float32 without x64
        assert x.dtype == np.float32 and x.tolist() == [0.0, 1.0, 2.0]
        with pytest.raises(TypeError, match="must have __dlpack__"):
            j.numpy.from_dlpack([1.0])
        assert j.dlpack.is_supported_dtype(np.float32)
        for ctx in (j.auto_pcast, j.remove_size_one_mesh_axis_from_type):
            with ctx(True):
                pass
    with pytest.raises(NotImplementedError, match="native code"):
        pyjax.ffi.ffi_call("target", pyjax.ShapeDtypeStruct((), pjnp.float32))


def test_make_user_context_keys_jit_cache_as_jax():
    for j in (jax, pyjax):
        traces = []
        f = j.jit(lambda x: (traces.append(1), x * 2)[1])
        x = j.numpy.ones(2)
        ctx = j.make_user_context(None)
        with ctx(1):
            f(x)
            f(x)
        with ctx(2):
            f(x)
        with ctx(1):
            f(x)
        assert len(traces) == 2 and ctx.value is None


def test_addressable_shards_as_jax():
    for j in (jax, pyjax):
        x = j.numpy.ones((2, 3))
        (s,) = x.addressable_shards
        assert isinstance(s, j.Shard) and s.index == (slice(None), slice(None)) and s.replica_id == 0
        assert s.device == j.devices()[0]
        np.testing.assert_array_equal(np.asarray(s.data), np.ones((2, 3)))
