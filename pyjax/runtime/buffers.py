"""Device buffers, their lifetimes, and the lock that lets threads share the backends.

LOCK: every use of a backend (allocate, write, compile, dispatch, read) runs under this one
re-entrant lock, so two Python threads never enter a wasmtime Store at once, never interleave
a webgpu dispatch queue, and never race on an allocator or a kernel cache. One lock for all
devices keeps lock order trivial (a program on one device may read another's buffers). Tracing
needs no lock: the interpreter stack is per thread (pyjax.core.core).

Frees: a Buffer's slot goes back to its backend when the Buffer is garbage-collected, which may
happen in any thread, at any bytecode. So `__del__` only appends the slot to its backend's
`dead` queue (no lock, no allocator work); the slots are freed under LOCK at the backend's next
allocation (in `Buffer.__init__`), where an interrupt cannot cut a free short (below).

Ctrl-C inside the bookkeeping: Python raises KeyboardInterrupt between any two bytecodes, so one
landing half-way through an allocator's malloc or free would leave its free lists torn, and one
landing in any `__del__` (wgpu-py frees GPU objects there) is dropped. While Python's own SIGINT
handler is installed, pyjax installs one that behaves the same except inside `Buffer.__init__`,
a `__del__`, a gc callback or a weakref finalizer (and what they call; Python drops exceptions
raised in the last three): there it trips the signal again a millisecond later from a
helper thread, until the interrupt lands outside them and is raised (without threads, as in
Pyodide, it is raised at once). A handler the program installed itself is left alone.
"""

from __future__ import annotations

import _thread
import gc
import signal
import threading
import weakref

from pyjax.backends.limits import check_bytes

LOCK = threading.RLock()


class Buffer:
    """A backend slot of nbytes, freed after the Buffer is collected (make one under LOCK)."""

    __slots__ = ("backend", "slot", "nbytes", "__weakref__")

    def __init__(self, backend, nbytes: int):
        self.backend = backend
        self.nbytes = nbytes
        limit = backend.max_buffer_bytes
        if limit is not None and nbytes > limit:
            check_bytes(nbytes, limit, backend.name, backend.limit_reason)
        dead = backend.dead
        if dead:  # free the slots of collected buffers first
            free = backend.free
            while dead:
                free(dead.popleft())
        self.slot = backend.malloc(max(nbytes, 1))

    def __del__(self):
        # Only this: an exception raised in __del__ is printed and dropped, and a Ctrl-C landing
        # here is deferred by _on_sigint until the frame returned.
        try:
            self.backend.dead.append(self.slot)
        except AttributeError:  # the allocation itself failed: no slot
            pass


# --- Ctrl-C deferred out of the bookkeeping ------------------------------------------------------

_CRITICAL = {Buffer.__init__.__code__}


def _swallowing_codes() -> set:
    """Code objects whose exceptions Python prints and drops: gc callbacks (JAX installs one),
    weakref finalizers; __del__ methods are matched by name."""
    codes = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    codes.add(weakref.finalize.__call__.__code__)
    return codes


def _on_sigint(signum, frame):
    f = frame
    swallowing = _swallowing_codes()
    while f is not None:
        code = f.f_code
        if code in _CRITICAL or code in swallowing or code.co_name == "__del__":
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
