"""Devices and placement: pyjax.devices, default_backend, device_put, default_device, and the
platform choice through PYJAX_PLATFORMS / JAX_PLATFORMS and config.update("jax_platforms")."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax.core.config import config

from oracle import assert_close

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def restore_platforms():
    old = config.jax_platforms
    yield
    pyjax.config.update("jax_platforms", old)


def _run(code: str, **env) -> subprocess.CompletedProcess:
    full_env = dict(os.environ, PYTHONPATH=ROOT)
    for k in ("PYJAX_PLATFORMS", "JAX_PLATFORMS"):
        full_env.pop(k, None)
    full_env.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=full_env, timeout=300
    )


def test_devices_default_and_named(backend):
    devs = pyjax.devices()
    assert isinstance(devs, list) and len(devs) == 1
    assert devs[0].platform == backend == pyjax.default_backend()
    named = pyjax.devices(backend)
    assert named[0] is devs[0]
    assert pyjax.device_count() == 1 and pyjax.local_devices() == devs
    d = devs[0]
    assert d.id == 0 and d.process_index == 0
    assert str(d) == f"{backend}:0"


def test_cpu_device_looks_like_jax():
    d, jd = pyjax.devices("cpu")[0], jax.devices("cpu")[0]
    assert repr(d) == repr(jd) == "CpuDevice(id=0)"
    assert str(d) == str(jd)
    assert d.platform == jd.platform == "cpu"


def test_arrays_live_on_the_default_device(backend):
    x = pjnp.arange(4.0) * 2
    assert x.device is pyjax.devices()[0]
    assert x.devices() == {pyjax.devices()[0]}
    assert x.sharding.device is x.device
    assert_close(x, jnp.arange(4.0) * 2)


def test_device_put_values_and_pytrees(backend):
    d = pyjax.devices(backend)[0]
    x = pyjax.device_put(np.arange(5, dtype=np.int64), d)
    assert_close(x, jax.device_put(np.arange(5, dtype=np.int64)))  # int64 -> int32 without x64
    assert x.device is d
    tree = pyjax.device_put({"a": 1.5, "b": [np.ones(2, np.float32), 3]}, d)
    jtree = jax.device_put({"a": 1.5, "b": [np.ones(2, np.float32), 3]})
    assert_close(tree, jtree, check_weak_type=True)
    s = pyjax.device_put(2.5)
    assert isinstance(s, pyjax.Array) and s.weak_type and s.dtype == pjnp.float32
    assert pyjax.device_put(x) is not None and float(pyjax.device_put(x).sum()) == 10.0


def test_device_put_by_platform_name_and_roundtrip():
    x = pyjax.device_put(pjnp.arange(3.0), "cpu")
    assert x.device is pyjax.devices("cpu")[0]
    out = pyjax.device_get({"x": x, "n": 3})
    assert isinstance(out["x"], np.ndarray) and out["n"] == 3
    np.testing.assert_array_equal(out["x"], np.arange(3.0, dtype=np.float32))
    assert pyjax.block_until_ready(x) is x


def test_default_device_context_manager():
    cpu = pyjax.devices("cpu")[0]
    with pyjax.default_device(cpu) as dev:
        assert dev is cpu
        assert pyjax.default_backend() == "cpu"
        assert pjnp.ones(2).device is cpu
        with pyjax.default_device("cpu"):  # a platform name works too
            assert pjnp.zeros(3).device is cpu
    assert pyjax.devices()[0] is pyjax.devices(pyjax.default_backend())[0]


def test_default_device_restored_after_exception():
    before = pyjax.devices()[0]
    with pytest.raises(ZeroDivisionError):
        with pyjax.default_device(pyjax.devices("cpu")[0]):
            1 / 0  # noqa: B018
    assert pyjax.devices()[0] is before


def test_unknown_platform_is_a_clear_runtime_error():
    with pytest.raises(RuntimeError, match="tpu9000"):
        pyjax.devices("tpu9000")
    with pytest.raises(RuntimeError):
        jax.devices("tpu9000")  # JAX raises the same class


def test_config_update_jax_platforms(restore_platforms):
    pyjax.config.update("jax_platforms", "cpu")
    assert pyjax.default_backend() == "cpu"
    assert pyjax.devices()[0].platform == "cpu"
    pyjax.config.update("jax_platforms", "no_such_platform")
    with pytest.raises(RuntimeError, match="no_such_platform"):
        pyjax.devices()
    with pytest.raises(RuntimeError, match="no_such_platform"):
        pjnp.ones(3) + 1
    pyjax.config.update("jax_platforms", "cpu")
    assert float(pjnp.ones(3).sum()) == 3.0


def test_config_rejects_unknown_option():
    with pytest.raises(AttributeError, match="jax_not_an_option"):
        pyjax.config.update("jax_not_an_option", 1)


@pytest.mark.parametrize("var", ["PYJAX_PLATFORMS", "JAX_PLATFORMS"])
def test_platforms_env_var_selects_cpu(var):
    proc = _run(
        """
        import pyjax, pyjax.numpy as jnp
        print(pyjax.default_backend(), pyjax.devices(), float(jnp.arange(4.0).sum()))
        """,
        **{var: "cpu"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["cpu", "[CpuDevice(id=0)]", "6.0"]


def test_platforms_env_var_unknown_platform_fails_clearly():
    proc = _run(
        """
        import pyjax, pyjax.numpy as jnp
        try:
            jnp.ones(3) + 1
        except RuntimeError as e:
            print("RuntimeError", e)
        """,
        PYJAX_PLATFORMS="bogus",
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("RuntimeError") and "bogus" in proc.stdout


def test_platforms_env_var_preference_order():
    """`wasm,cpu`: wasm when it can be created here, else cpu."""
    from conftest import _creatable

    expected = "wasm" if _creatable("wasm")[0] else "cpu"
    proc = _run("import pyjax; print(pyjax.default_backend())", PYJAX_PLATFORMS="wasm,cpu")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == expected
