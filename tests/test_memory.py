"""Memory is automatic: device buffers die with their arrays, so long training loops stay flat.

Counts the cpu backend's live buffers across many jitted and eager steps of a small MLP trained
with grad + SGD; after warm-up (compilation, cached constants) the count must not grow.
"""

from __future__ import annotations

import gc
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp


def _live() -> int:
    gc.collect()
    return pyjax.devices("cpu")[0].backend.live_buffers()


def _mlp(np_lib):
    """Init, loss and SGD step of a 3-8-1 tanh MLP written against a jax-like module pair."""
    lib, jnp_ = np_lib

    def init():
        rng = np.random.default_rng(0)
        return {
            "w1": jnp_.asarray(rng.standard_normal((3, 8)).astype(np.float32) * 0.5),
            "b1": jnp_.zeros(8),
            "w2": jnp_.asarray(rng.standard_normal((8, 1)).astype(np.float32) * 0.5),
            "b2": jnp_.zeros(1),
        }

    def loss(p, x, y):
        h = jnp_.tanh(x @ p["w1"] + p["b1"])
        return jnp_.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    def step(p, x, y):
        value, g = lib.value_and_grad(loss)(p, x, y)
        return lib.tree_util.tree_map(lambda a, b: a - 0.1 * b, p, g), value

    return init, loss, step


def _data(jnp_):
    x = np.linspace(-1, 1, 48, dtype=np.float32).reshape(16, 3)
    y = np.sin(x).sum(axis=1, keepdims=True)
    return jnp_.asarray(x), jnp_.asarray(y)


def _train(step, params, x, y, n: int, sample_every: int):
    counts, losses = [], []
    for i in range(n):
        params, value = step(params, x, y)
        if i % sample_every == sample_every - 1:
            losses.append(float(value))
            counts.append(_live())
    return params, counts, losses


def _check_flat(counts: list[int], what: str) -> None:
    assert max(counts) <= counts[0], f"{what}: live buffers grew during training: {counts}"


def test_jitted_training_is_flat():
    with pyjax.default_device(pyjax.devices("cpu")[0]):
        start = _live()
        init, _, step = _mlp((pyjax, pjnp))
        x, y = _data(pjnp)
        jstep = pyjax.jit(step)
        params, _, _ = _train(jstep, init(), x, y, 20, 20)  # warm-up: trace, compile, caches
        params, counts, losses = _train(jstep, params, x, y, 1000, 100)
        _check_flat(counts, "jit")
        assert losses[-1] < losses[0], f"the model did not train: {losses}"
        del params, x, y
        # the compiled program keeps its planned intermediates (pyjax.runtime.plans) until it goes
        del jstep, step  # (jit(f) made again for the same f shares its programs: they go with f)
        assert _live() <= start, "buffers outlived every array and program referencing them"


def test_eager_training_is_flat():
    with pyjax.default_device(pyjax.devices("cpu")[0]):
        start = _live()
        init, _, step = _mlp((pyjax, pjnp))
        x, y = _data(pjnp)
        params, _, _ = _train(step, init(), x, y, 5, 5)
        params, counts, _ = _train(step, params, x, y, 200, 20)
        _check_flat(counts, "eager")
        del params, x, y
        assert _live() <= start, "buffers outlived every array referencing them"


def test_eager_ops_free_their_temporaries():
    with pyjax.default_device(pyjax.devices("cpu")[0]):
        x = pjnp.arange(16.0).reshape(4, 4)
        baseline = _live()
        for _ in range(300):
            z = pjnp.sum(pjnp.exp(x.T @ x * 1e-3) + x[1:, ::2].sum() - pjnp.mean(x, axis=0))
            float(z)
        del z
        assert _live() <= baseline
        tmp = [pjnp.ones((8,)) * i for i in range(50)]
        assert _live() >= baseline + 50
        del tmp
        assert _live() <= baseline


def test_jitted_training_matches_jax():
    """The same 50 SGD steps give JAX's losses (catches stale or aliased buffers)."""
    init_p, _, step_p = _mlp((pyjax, pjnp))
    init_j, _, step_j = _mlp((jax, jnp))
    xp, yp = _data(pjnp)
    xj, yj = _data(jnp)
    sp, sj = pyjax.jit(step_p), jax.jit(step_j)
    pp, pj = init_p(), init_j()
    lp, lj = [], []
    for _ in range(50):
        pp, vp = sp(pp, xp, yp)
        pj, vj = sj(pj, xj, yj)
        lp.append(float(vp))
        lj.append(float(vj))
    np.testing.assert_allclose(lp, lj, rtol=1e-4, atol=1e-6)
    for k in pj:
        np.testing.assert_allclose(np.asarray(pp[k]), np.asarray(pj[k]), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n", [200])
def test_jit_cache_does_not_grow_with_calls(n):
    f = pyjax.jit(lambda a, s: a * s + 1)
    a = pjnp.arange(4.0)
    f(a, 2.0)
    baseline = _live()
    for i in range(n):
        f(a, float(i))
    assert _live() <= baseline
    assert len(f.cache) == 1, "a new Python float value must not retrace"


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads RSS from /proc")
@pytest.mark.parametrize("platform, shapes", [("wasm", 2000), ("webgpu", 300)])
def test_compile_caches_stay_bounded_over_many_shapes(platform, shapes, monkeypatch):
    """Distinct shapes, each a new kernel: every compile cache stays at its bound and memory stays
    flat. Unbounded, webgpu grew ~1.2 MB per shape (a compiled pipeline each), wasm ~60 KB."""
    from pyjax.hosts import wgpu_host
    from pyjax.runtime import execute

    dev = pyjax.devices(platform)[0]
    backend = dev.backend
    bounded = [backend._kernel_cache, backend._routine_cache, execute._eager_cache]
    for cache in bounded:
        monkeypatch.setattr(cache, "maxsize", 32)
    if platform == "webgpu":
        monkeypatch.setattr(wgpu_host, "_LIVE_PIPELINES", 16)
        monkeypatch.setattr(backend._pipes, "maxsize", 32)
        bounded.append(backend._pipes)
    else:
        monkeypatch.setattr(backend.host, "max_modules", 64)
    half = shapes // 2
    with pyjax.default_device(dev):
        rss = {}
        for i in range(shapes):
            y = pjnp.zeros(i + 1) + 1.5
            if i in (half - 1, shapes - 1):
                assert float(y[i]) == 1.5
                gc.collect()
                rss[i] = _rss_mb()
    assert all(len(c) <= c.maxsize for c in bounded)
    if platform == "webgpu":
        assert backend.host.live_pipelines() <= 16
    else:
        assert len(backend.host._instances) <= 64
    grew = rss[shapes - 1] - rss[half - 1]
    assert grew < 20, f"memory grew {grew:.0f} MB over {shapes - half} new shapes"


def test_jit_cache_is_bounded(monkeypatch):
    f = pyjax.jit(lambda x: x * 2.0)
    monkeypatch.setattr(f.cache, "maxsize", 8)
    with pyjax.default_device(pyjax.devices("cpu")[0]):
        for i in range(30):
            assert float(f(pjnp.ones(i + 1))[i]) == 2.0
    assert len(f.cache) <= 8
    assert float(f(pjnp.ones(1))[0]) == 2.0  # an evicted signature retraces
