"""Ctrl-C always stops the program and leaves the allocators whole (issue 15, item 6).

A KeyboardInterrupt raised inside `__del__` is printed as "Exception ignored in" and dropped, so
an interrupt that landed while a garbage-collected buffer freed its slot was swallowed (the loop
kept running) and the cut-short free leaked its slot. The tests trigger SIGINT at the worst
moments: inside a backend's free, inside the wasm allocator's bookkeeping, and at random times
in a loop that allocates and frees.
"""

from __future__ import annotations

import gc
import signal
import threading
import time

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.backends.wasm import allocator as wasm_allocator
from pyjax.runtime import buffers


def _churn(steps: int, x):
    """A loop that allocates and frees a buffer per step (an eager training loop in small)."""
    for _ in range(steps):
        x = x * 1.0001 + 1.0
    return x


def _live_arrays_consistent(backend_obj, held: int) -> None:
    gc.collect()
    assert backend_obj.live_buffers() == held
    alloc = getattr(backend_obj, "alloc", None)
    if alloc is not None:
        alloc.check()
        assert len(alloc._used) - len(backend_obj.dead) >= held


def test_sigint_handler_installed():
    """pyjax defers Ctrl-C only while Python's own handler would have raised it."""
    assert signal.getsignal(signal.SIGINT) in (buffers._on_sigint, signal.default_int_handler)


def test_interrupt_inside_free_stops_the_loop(backend, monkeypatch):
    """SIGINT raised by a backend's free: the loop must stop with KeyboardInterrupt."""
    be = pyjax.devices(backend)[0].backend
    x = jnp.asarray(np.ones(32, np.float32))
    _churn(3, x)  # compile first
    gc.collect()
    base = be.live_buffers()  # x, and whatever earlier tests keep alive
    real_free, fired = be.free, []

    def free(slot):
        if not fired:
            fired.append(1)
            signal.raise_signal(signal.SIGINT)
        return real_free(slot)

    monkeypatch.setattr(be, "free", free)
    with pytest.raises(KeyboardInterrupt):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            x = x * 1.0001 + 1.0
    assert fired
    monkeypatch.undo()
    _live_arrays_consistent(be, base)  # x was rebound: still one array of ours alive


@pytest.mark.parametrize("where", ["_insert", "_remove", "_release"])
def test_interrupt_inside_wasm_allocator_keeps_it_whole(where, monkeypatch):
    """SIGINT landing half-way through malloc/free bookkeeping: raised after it, heap intact."""
    be = pyjax.devices("wasm")[0].backend
    dev = pyjax.devices("wasm")[0]
    x = pyjax.device_put(np.ones(100_000, np.float32), dev)  # large blocks: coalescing path
    _churn(3, x)
    gc.collect()
    real, fired = getattr(wasm_allocator.Allocator, where), []

    def hooked(self, *args):
        if not fired:
            fired.append(1)
            signal.raise_signal(signal.SIGINT)
            time.sleep(0)  # a C call: the interrupt is due here, in the middle of the bookkeeping
        return real(self, *args)

    monkeypatch.setattr(wasm_allocator.Allocator, where, hooked)
    with pytest.raises(KeyboardInterrupt):
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            x = x * 1.0001 + 1.0
    monkeypatch.undo()
    assert fired
    held = be.live_buffers()
    _live_arrays_consistent(be, held)
    del x
    gc.collect()
    y = _churn(2, pyjax.device_put(np.ones(8, np.float32), dev))  # frees the queued slots
    np.testing.assert_allclose(np.asarray(y), np.full(8, 1.0001**2 + 2.0001, np.float32), rtol=1e-6)
    be.alloc.check()


def test_random_interrupts_always_stop(backend):
    """Interrupts at random moments of an allocate/free loop: each one stops it, nothing leaks."""
    be = pyjax.devices(backend)[0].backend
    x0 = jnp.asarray(np.ones(64, np.float32))
    _churn(3, x0)
    gc.collect()
    base = be.live_buffers()
    rng = np.random.default_rng(0)
    for _trial in range(12):
        t = threading.Timer(float(rng.uniform(0.001, 0.02)), signal.raise_signal, (signal.SIGINT,))
        x = x0
        with pytest.raises(KeyboardInterrupt):
            t.start()  # inside: on a busy machine the timer may fire before start() returns
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                x = x * 1.0001 + 1.0
        t.join()
        del x
    _live_arrays_consistent(be, base)


def test_interrupt_inside_gc_callback_stops_the_loop():
    """Python drops exceptions raised in gc callbacks (JAX installs one): the interrupt is deferred
    until the collection has returned, then stops the loop."""
    x = jnp.asarray(np.ones(16, np.float32))
    fired = []

    def on_gc(phase, info):
        if not fired:
            fired.append(1)
            signal.raise_signal(signal.SIGINT)
            time.sleep(0)  # a C call: the interrupt is due here, inside the callback

    gc.callbacks.append(on_gc)
    try:
        with pytest.raises(KeyboardInterrupt):
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                x = x * 1.0001 + 1.0
                gc.collect(0)
    finally:
        gc.callbacks.remove(on_gc)
    assert fired
