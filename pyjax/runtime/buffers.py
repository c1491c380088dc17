"""Device buffers, their lifetimes, and the lock that lets threads share the backends.

LOCK: every use of a backend (allocate, write, compile, dispatch, read) runs under this one
re-entrant lock, so two Python threads never enter a wasmtime Store at once, never interleave
a webgpu dispatch queue, and never race on an allocator or a kernel cache. One lock for all
devices keeps lock order trivial (a program on one device may read another's buffers). Tracing
needs no lock: the interpreter stack is per thread (pyjax.core.core).

Frees: a Buffer's slot goes back to its backend when the Buffer is garbage-collected, but not
from a `__del__`: an exception raised inside `__del__` is printed and dropped, so a Ctrl-C
landing there was swallowed (the loop kept running) and the free it cut short leaked its slot.
Instead each Buffer has a weak reference whose callback is the C method `deque.append` of its
backend's `dead` queue: no Python bytecode runs at collection (so no signal can land there,
and no lock is taken in whichever thread the collector runs). The backend frees the queued
slots under LOCK at its next allocation (`release_dead`).

Ctrl-C inside the bookkeeping: Python raises KeyboardInterrupt between any two bytecodes, so one
landing half-way through an allocator's malloc or free would leave its free lists torn, and one
landing in any `__del__` (wgpu-py frees GPU objects there) is dropped. While Python's own SIGINT
handler is installed, pyjax installs one that behaves the same except inside `Buffer.__init__`,
`release_dead` or a `__del__` (and what they call): there it trips the signal again a millisecond
later from a helper thread, until the interrupt lands outside them and is raised. A handler the program
installed itself is left alone.
"""

from __future__ import annotations

import _thread
import signal
import threading
import weakref

from pyjax.backends.limits import check_bytes

LOCK = threading.RLock()


class _Ref(weakref.ref):
    """A Buffer's weak reference, carrying what its free needs once the Buffer is gone."""

    __slots__ = ("backend", "slot")


_refs: set = set()  # keeps each _Ref alive until its callback has run (also for cyclic garbage)


class Buffer:
    __slots__ = ("backend", "slot", "nbytes", "__weakref__")

    """A backend slot of nbytes, freed after the Buffer is collected (make one under LOCK)."""

    def __init__(self, backend, nbytes: int):
        self.backend = backend
        self.nbytes = nbytes
        limit = backend.max_buffer_bytes
        if limit is not None and nbytes > limit:
            check_bytes(nbytes, limit, backend.name, backend.limit_reason)
        dead = backend.dead
        if dead:
            release_dead(backend)
        self.slot = slot = backend.malloc(max(nbytes, 1))
        ref = _Ref(self, dead.append)
        ref.backend, ref.slot = backend, slot
        _refs.add(ref)


def release_dead(backend) -> None:
    """Free the slots of backend's collected buffers (call under LOCK; a Ctrl-C landing here
    waits until it returned, see below)."""
    dead, free, refs = backend.dead, backend.free, _refs
    while dead:
        ref = dead.popleft()
        refs.discard(ref)
        free(ref.slot)


# --- Ctrl-C deferred out of the bookkeeping ------------------------------------------------------

_CRITICAL = {Buffer.__init__.__code__, release_dead.__code__}


def _on_sigint(signum, frame):
    f = frame
    while f is not None:
        code = f.f_code
        if code in _CRITICAL or code.co_name == "__del__":
            # not here: deliver it again in a moment, once this frame has returned
            try:
                threading.Timer(0.001, _thread.interrupt_main, (signum,)).start()
            except RuntimeError:  # no threads (Pyodide): raise it now, as Python's own handler does
                break
            return
        f = f.f_back
    raise KeyboardInterrupt


def _install_sigint_handler() -> None:
    try:
        if threading.current_thread() is threading.main_thread() and (
            signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            signal.signal(signal.SIGINT, _on_sigint)
    except (ValueError, OSError, AttributeError):  # no signals here (some embedders, Pyodide builds)
        pass


_install_sigint_handler()
