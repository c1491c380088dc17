"""jax.profiler for pyjax: named spans recorded with wall-clock times while a trace is active,
written on stop as a Chrome trace-event JSON file (loads in Perfetto and chrome://tracing).

Spans come from TraceAnnotation / StepTraceAnnotation / annotate_function and from the runtime:
every program run (a jitted call or an eager op) and every kernel, routine and host step it
dispatches. Kernel spans measure dispatch (launch) time, not device time: backends run
asynchronously. Outside a trace an annotation costs one global lookup. Pure Python without numpy,
so it works under Pyodide too (there the file lands in Pyodide's in-memory file system).

ProfileData reads such a trace back with JAX's accessors (planes, lines, events with start_ns and
duration_ns); device_memory_profile is a gzipped pprof profile of the live device buffers, one sample
per array (its type as the function name). No profiler server: TensorBoard's capture protocol needs
one, which a browser tab cannot run, so start_server and register_subprocess raise.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = [
    "TraceAnnotation",
    "StepTraceAnnotation",
    "annotate_function",
    "trace",
    "start_trace",
    "stop_trace",
    "ProfileOptions",
    "last_trace_path",
    "device_memory_profile",
    "save_device_memory_profile",
    "start_server",
    "stop_server",
    "register_subprocess",
    "ProfileData",
    "ProfilePlane",
    "ProfileEvent",
]

_perf = time.perf_counter


class ProfileOptions:
    """Options for start_trace (JAX's fields; pyjax records host spans only and ignores them)."""

    def __init__(self) -> None:
        self.host_tracer_level = 2
        self.python_tracer_level = 0
        self.enable_hlo_proto = True
        self.start_timestamp_ns = 0
        self.duration_ms = 0
        self.repository_path = ""
        self.advanced_configuration: dict = {}


class _Trace:
    """The active trace: its directory, start time and the complete ('X') events recorded so far."""

    def __init__(self, log_dir: str, create_perfetto_link: bool, create_perfetto_trace: bool) -> None:
        self.log_dir = log_dir
        self.create_perfetto_link = create_perfetto_link
        self.create_perfetto_trace = create_perfetto_trace
        self.t0 = _perf()
        self.wall0 = time.time()
        self.pid = os.getpid()
        self.events: list = []

    def span(self, name: str, start: float, end: float, cat: str, args: dict | None) -> None:
        ev = {
            "name": name,
            "cat": cat,
            "ph": "X",
            "ts": (start - self.t0) * 1e6,
            "dur": (end - start) * 1e6,
            "pid": self.pid,
            "tid": threading.get_ident(),
        }
        if args:
            ev["args"] = {
                k: v if isinstance(v, (int, float, str, bool)) or v is None else str(v) for k, v in args.items()
            }
        self.events.append(ev)

    def runtime_hook(self, what: Any, start: float) -> None:
        """Installed as pyjax.runtime.execute.PROFILE: one span per program run and per step."""
        end = _perf()
        kind = type(what).__name__
        if kind == "KernelStep":
            k = what.kernel
            self.span(f"kernel {k.name}", start, end, "kernel", {"shape": str(k.shape)})
        elif kind == "RoutineStep":
            self.span(f"routine {what.routine.name}", start, end, "routine", None)
        elif kind == "HostStep":
            self.span(f"host {what.eqn.primitive.name}", start, end, "host", None)
        elif isinstance(what, str):
            self.span(what, start, end, what, None)
        else:
            self.span("program", start, end, "program", {"steps": len(getattr(what, "steps", ()))})

    def write(self) -> str:
        stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(self.wall0))
        run_dir = os.path.join(self.log_dir, "plugins", "profile", stamp)
        os.makedirs(run_dir, exist_ok=True)
        meta = [
            {"name": "process_name", "ph": "M", "pid": self.pid, "tid": 0, "args": {"name": "pyjax"}},
        ]
        doc = {"traceEvents": meta + self.events, "displayTimeUnit": "ms"}
        text = json.dumps(doc)
        path = os.path.join(run_dir, "pyjax.trace.json")
        with open(path, "w") as f:
            f.write(text)
        if self.create_perfetto_trace or self.create_perfetto_link:
            with gzip.open(os.path.join(run_dir, "perfetto_trace.json.gz"), "wt") as f:
                f.write(text)
        if self.create_perfetto_link:
            print(f"pyjax trace written to {path}; open it at https://ui.perfetto.dev")
        return path


_active: _Trace | None = None
_last_path: str | None = None


def _set_runtime_hook(hook) -> None:
    from pyjax.runtime import execute

    execute.PROFILE = hook


def start_trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> None:
    """Start recording spans; stop_trace writes them under log_dir/plugins/profile/<time>/."""
    global _active
    if _active is not None:
        raise RuntimeError("Profile has already been started. Only one profile may be run at a time.")
    _active = _Trace(os.fspath(log_dir), create_perfetto_link, create_perfetto_trace)
    _set_runtime_hook(_active.runtime_hook)


def stop_trace() -> None:
    """Stop the active trace and write its Chrome trace-event JSON file."""
    global _active, _last_path
    if _active is None:
        raise RuntimeError("No profile started")
    t, _active = _active, None
    _set_runtime_hook(None)
    _last_path = t.write()


def last_trace_path() -> str | None:
    """Path of the JSON file the last stop_trace wrote (pyjax extra; JAX has no equivalent)."""
    return _last_path


@contextmanager
def trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> Iterator[None]:
    """Context manager: start_trace on entry, stop_trace (writing the file) on exit."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """A named span (with keyword arguments as its args) recorded while a trace is active."""

    __slots__ = ("name", "kwargs", "_start")

    def __init__(self, name: str, **kwargs: Any) -> None:
        self.name = name
        self.kwargs = kwargs
        self._start = None

    def __enter__(self) -> TraceAnnotation:
        if _active is not None:
            self._start = _perf()
        return self

    def __exit__(self, *exc: Any) -> None:
        start, self._start = self._start, None
        if start is not None and _active is not None:
            _active.span(self.name, start, _perf(), self._category(), self.kwargs)

    def _category(self) -> str:
        return "annotation"


class StepTraceAnnotation(TraceAnnotation):
    """A span marking one step of a loop (e.g. a training step): name plus step_num=... as args."""

    __slots__ = ()

    def _category(self) -> str:
        return "step"


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs: Any) -> Callable:
    """Decorator: every call of func is a TraceAnnotation span named name (default: its qualname)."""
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if _active is None:
            return func(*args, **kwargs)
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)

    return wrapper


# --- device memory profiles (pprof) -------------------------------------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    n &= (1 << 64) - 1
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num: int, value) -> bytes:
    """One protobuf field: an int as a varint, bytes (a message or string) length-delimited."""
    if isinstance(value, int):
        return _varint(num << 3) + _varint(value)
    return _varint(num << 3 | 2) + _varint(len(value)) + value


def device_memory_profile(backend: str | None = None) -> bytes:
    """A gzipped pprof profile of the device buffers alive now (samples: allocations/count, space/bytes)."""
    from pyjax.api import live_arrays

    strings: dict[str, int] = {"": 0}

    def sid(text: str) -> int:
        return strings.setdefault(text, len(strings))

    samples, functions = [], {}
    for a in live_arrays(backend):
        kind = f"{a.dtype}[{','.join(str(d) for d in a.shape)}]"
        fid = functions.setdefault(kind, len(functions) + 1)
        labels = [
            _field(3, _field(1, sid(k)) + _field(2, sid(v)))
            for k, v in (("kind", "buffer"), ("device", str(next(iter(a.devices())))))
        ]
        values = _varint(1) + _varint(a.nbytes)
        samples.append(_field(2, _field(1, _varint(fid)) + _field(2, values) + b"".join(labels)))
    header = b"".join(
        _field(1, _field(1, sid(t)) + _field(2, sid(u))) for t, u in (("allocations", "count"), ("space", "bytes"))
    )
    body = header + b"".join(samples)
    for kind, fid in functions.items():
        body += _field(4, _field(1, fid) + _field(4, _field(1, fid)))  # location fid -> function fid
        body += _field(5, _field(1, fid) + _field(2, sid(kind)) + _field(3, sid(kind)))
    body += b"".join(_field(6, t.encode()) for t in strings)
    return gzip.compress(body)


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Write device_memory_profile(backend) to filename (view it with `pprof`)."""
    with open(filename, "wb") as f:
        f.write(device_memory_profile(backend))


def start_server(port: int, requires_backend: bool = True):
    """JAX's TensorBoard profiler server: pyjax has none (a browser tab cannot listen on a port)."""
    raise NotImplementedError(
        "pyjax has no profiler server; record a trace with jax.profiler.trace(log_dir) or start_trace/stop_trace, "
        "which write a Perfetto/Chrome trace-event file"
    )


def stop_server() -> None:
    """Stop the profiler server: there is never one in pyjax, so JAX's error for that case."""
    raise ValueError("No active profiler server.")


def register_subprocess(pid: int, port: int):
    """JAX profiles a subprocess through its profiler server; pyjax has no profiler servers."""
    raise NotImplementedError("pyjax has no profiler servers, so subprocesses cannot be registered")


# --- reading traces back -----------------------------------------------------------------------------


class ProfileEvent:
    """One span of a trace: name, start_ns, duration_ns, end_ns and stats ((name, value) pairs of its args)."""

    def __init__(self, ev: dict) -> None:
        self.name = ev.get("name", "")
        self.start_ns = float(ev.get("ts", 0.0)) * 1e3
        self.duration_ns = float(ev.get("dur", 0.0)) * 1e3
        self.end_ns = self.start_ns + self.duration_ns
        self._args = ev.get("args") or {}

    @property
    def stats(self) -> Iterator[tuple]:
        return iter(self._args.items())

    def __repr__(self) -> str:
        return f"ProfileEvent({self.name!r}, start_ns={self.start_ns:.0f}, duration_ns={self.duration_ns:.0f})"


class _ProfileLine:
    """The events of one thread, in start order."""

    def __init__(self, name: str, events: list) -> None:
        self.name = name
        self._events = sorted(events, key=lambda e: e.start_ns)

    @property
    def events(self) -> Iterator[ProfileEvent]:
        return iter(self._events)


class ProfilePlane:
    """The spans of one process (pyjax records the host only: '/host:CPU'), one line per thread."""

    def __init__(self, name: str, lines: list) -> None:
        self.name = name
        self._lines = lines

    @property
    def lines(self) -> Iterator[_ProfileLine]:
        return iter(self._lines)

    @property
    def stats(self) -> Iterator[tuple]:
        return iter(())


class ProfileData:
    """A recorded trace with JAX's accessors, read from the trace-event JSON that stop_trace writes."""

    def __init__(self, doc: dict) -> None:
        threads: dict = {}
        for ev in doc.get("traceEvents", []):
            if ev.get("ph") == "X":
                threads.setdefault(ev.get("tid", 0), []).append(ProfileEvent(ev))
        lines = [_ProfileLine(f"thread {tid}", evs) for tid, evs in sorted(threads.items())]
        self._planes = [ProfilePlane("/host:CPU", lines)]

    @classmethod
    def from_file(cls, path: str) -> ProfileData:
        """Read a pyjax trace file (pyjax.trace.json, or perfetto_trace.json.gz)."""
        opener = gzip.open if os.fspath(path).endswith(".gz") else open
        with opener(path, "rt") as f:
            return cls(json.load(f))

    @classmethod
    def from_serialized_xspace(cls, serialized_xspace: bytes) -> ProfileData:
        raise NotImplementedError(
            "pyjax traces are trace-event JSON, not XLA's XSpace protobuf: use ProfileData.from_file"
        )

    @property
    def planes(self) -> Iterator[ProfilePlane]:
        return iter(self._planes)

    def find_plane_with_name(self, name: str) -> ProfilePlane | None:
        return next((p for p in self._planes if p.name == name), None)
