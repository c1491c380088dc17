"""Threads share pyjax safely (issue 15, item 1): N threads x M runs, every result right.

Two threads running the same jitted function (or eager ops) used to abort the process on wasm
(two threads inside one wasmtime Store), trap spuriously, or read the other thread's result, and
on webgpu to lose buffers freed by the other thread. Now every backend use runs under one lock
(pyjax.runtime.buffers.LOCK) and the trace stack and default device are per thread, as in JAX.
"""

from __future__ import annotations

import sys
import threading

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

N_THREADS, N_RUNS = 4, 12


def _run_threads(work) -> list:
    """Run work(k) in N_THREADS threads started together; the exceptions they raised."""
    barrier = threading.Barrier(N_THREADS)
    errors: list = []

    def target(k):
        try:
            barrier.wait()
            work(k)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads often: races show up in a few runs
    try:
        threads = [threading.Thread(target=target, args=(k,)) for k in range(N_THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    return errors


def _data(k: int, rows: int) -> np.ndarray:
    return (np.arange(rows * 16, dtype=np.float32).reshape(rows, 16) * (k + 1) / 97).astype(np.float32)


def _want(x: np.ndarray) -> np.ndarray:
    return np.sum(np.sin(x) * x + x, axis=0)


@pytest.mark.parametrize("mode", ["jit", "eager"])
def test_threads_same_function(backend, mode):
    """The same jitted function (or the same eager ops) on each thread's own arrays."""
    dev = pyjax.devices(backend)[0]
    f = pyjax.jit(lambda x: jnp.sum(jnp.sin(x) * x + x, axis=0))
    wrong: list = []

    def work(k):
        x = _data(k, 64)
        want = _want(x)
        with pyjax.default_device(dev):
            for i in range(N_RUNS):
                xa = pyjax.device_put(x, dev)
                r = f(xa) if mode == "jit" else jnp.sum(jnp.sin(xa) * xa + xa, axis=0)
                if not np.allclose(np.asarray(r), want, rtol=1e-5, atol=1e-3):
                    wrong.append((k, i))

    errors = _run_threads(work)
    assert not errors, errors[:3]
    assert not wrong, f"{len(wrong)} wrong results of {N_THREADS * N_RUNS}"


def test_threads_trace_concurrently(backend):
    """Each thread traces (jit and grad) at the same time: per-thread trace stacks keep them apart."""
    dev = pyjax.devices(backend)[0]
    wrong: list = []

    def work(k):
        rows = 8 + 8 * k  # a shape per thread: every thread traces and compiles its own
        x = _data(k, rows)
        f = pyjax.jit(lambda a: jnp.sum(jnp.tanh(a) * a))
        g = pyjax.grad(lambda a: jnp.sum(jnp.sin(a)))
        with pyjax.default_device(dev):
            for i in range(N_RUNS // 2):
                xa = pyjax.device_put(x, dev)
                got_f, got_g = float(f(xa)), np.asarray(g(xa))
                if not np.isclose(got_f, np.sum(np.tanh(x) * x), rtol=1e-4):
                    wrong.append(("jit", k, i))
                if not np.allclose(got_g, np.cos(x), rtol=1e-5, atol=1e-6):
                    wrong.append(("grad", k, i))
                if pyjax.default_backend() != backend:
                    wrong.append(("device", k, i))

    errors = _run_threads(work)
    assert not errors, errors[:3]
    assert not wrong, wrong[:5]


def test_default_device_is_per_thread():
    """`with default_device(...)` in one thread does not move another thread's work (as in JAX)."""
    seen = {}
    inner = threading.Event()
    outer = threading.Event()

    def other():
        inner.wait()
        seen["other"] = pyjax.default_backend()
        outer.set()

    t = threading.Thread(target=other)
    t.start()
    before = pyjax.default_backend()
    with pyjax.default_device(pyjax.devices("cpu")[0]):
        inner.set()
        outer.wait()
        assert pyjax.default_backend() == "cpu"
    t.join()
    assert seen["other"] == before
