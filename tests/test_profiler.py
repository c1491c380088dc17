"""pyjax.profiler on every backend: annotations, steps, annotate_function and the runtime's program,
kernel and compile spans end up in a Chrome trace-event JSON file; the API and its errors match
jax.profiler's; annotations outside a trace record nothing."""

from __future__ import annotations

import glob
import inspect
import json
import os

import jax
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import profiler


def _events(path: str) -> list:
    with open(path) as f:
        doc = json.load(f)
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


def test_trace_records_spans(backend, tmp_path):
    f = pyjax.jit(lambda x: jnp.sum(jnp.exp(x) * 2.0))

    @profiler.annotate_function
    def helper(x):
        return x + 1

    with profiler.trace(tmp_path):
        for step in range(2):
            with profiler.StepTraceAnnotation("train", step_num=step):
                with profiler.TraceAnnotation("forward", layer="dense") as ann:
                    assert isinstance(ann, profiler.TraceAnnotation)
                    y = f(jnp.ones(8))
                helper(1)
        y.block_until_ready()
    files = glob.glob(os.path.join(tmp_path, "plugins", "profile", "*", "*.trace.json"))
    assert files == [profiler.last_trace_path()]
    ev = _events(files[0])
    names = [e["name"] for e in ev]
    steps = [e for e in ev if e["name"] == "train"]
    assert [e["args"]["step_num"] for e in steps] == [0, 1] and all(e["cat"] == "step" for e in steps)
    fwd = [e for e in ev if e["name"] == "forward"]
    assert len(fwd) == 2 and fwd[0]["args"] == {"layer": "dense"}
    assert names.count("test_trace_records_spans.<locals>.helper") == 2
    assert names.count("program") >= 2 and any(n.startswith("kernel ") for n in names)
    assert names.count("compile") >= 1
    for e in ev:
        assert e["dur"] >= 0 and e["ts"] >= 0 and isinstance(e["tid"], int)
    # the second forward span lies inside the second step span
    s, a = steps[1], fwd[1]
    assert s["ts"] <= a["ts"] and a["ts"] + a["dur"] <= s["ts"] + s["dur"] + 1e-3


def test_start_stop_and_errors(backend, tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        profiler.stop_trace()
    profiler.start_trace(str(tmp_path), create_perfetto_trace=True)
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            profiler.start_trace(str(tmp_path))
        jnp.arange(4.0) * 3.0
    finally:
        profiler.stop_trace()
    run = os.path.dirname(profiler.last_trace_path())
    assert os.path.exists(os.path.join(run, "perfetto_trace.json.gz"))
    assert any(e["name"].startswith(("kernel", "program")) for e in _events(profiler.last_trace_path()))
    # JAX raises the same errors
    with pytest.raises(RuntimeError, match="No profile started"):
        jax.profiler.stop_trace()


def test_outside_a_trace_records_nothing(tmp_path):
    from pyjax.runtime import execute

    assert execute.PROFILE is None
    with profiler.TraceAnnotation("idle"):
        pass
    g = profiler.annotate_function(lambda x: x * 2, name="double")
    assert g(3) == 6
    with profiler.trace(tmp_path):
        pass
    assert execute.PROFILE is None
    assert _events(profiler.last_trace_path()) == []


def test_api_matches_jax():
    for name in ("StepTraceAnnotation", "annotate_function", "trace", "start_trace", "stop_trace"):
        js = inspect.signature(getattr(jax.profiler, name))
        ps = inspect.signature(getattr(profiler, name))
        assert list(ps.parameters) == list(js.parameters), name
    assert issubclass(profiler.StepTraceAnnotation, profiler.TraceAnnotation)
    assert pyjax.profiler is profiler


def test_annotate_function_under_jit(backend, tmp_path):
    @pyjax.jit
    @profiler.annotate_function
    def f(x):
        return jnp.sin(x) * 2

    with profiler.trace(tmp_path):
        out = f(jnp.ones(3))
    assert float(out[0]) == pytest.approx(float(jax.numpy.sin(1.0)) * 2, rel=1e-5)
    names = [e["name"] for e in _events(profiler.last_trace_path())]
    assert "test_annotate_function_under_jit.<locals>.f" in names  # recorded while tracing


def _varints(data: bytes) -> list:
    out, n, shift = [], 0, 0
    for b in data:
        n |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            out.append(n)
            n = shift = 0
    return out


def _proto_fields(data: bytes) -> list:
    """(field number, int or bytes) pairs of one protobuf message (varint and length-delimited fields)."""
    out, i = [], 0

    def varint():
        nonlocal i
        start = i
        while data[i] & 0x80:
            i += 1
        i += 1
        return _varints(data[start:i])[0]

    while i < len(data):
        key = varint()
        if key & 7 == 0:
            out.append((key >> 3, varint()))
        else:
            n = varint()
            out.append((key >> 3, data[i : i + n]))
            i += n
    return out


def _pprof_space(blob: bytes) -> tuple[list, int]:
    """The string table of a gzipped pprof profile and the sum of its samples' second value (bytes)."""
    import gzip

    fields = _proto_fields(gzip.decompress(blob))
    strings = [v.decode() for f, v in fields if f == 6]
    samples = [dict(_proto_fields(v)) for f, v in fields if f == 2]
    return strings, sum(_varints(s[2])[1] for s in samples)


def test_device_memory_profile_and_profile_data(tmp_path):
    """device_memory_profile is a gzipped pprof profile whose 'space' samples add up to the live buffers'
    bytes (JAX's is the same format); ProfileData reads a recorded trace with JAX's accessors; no server."""
    x = (jnp.ones((64, 32)) + 1).block_until_ready()
    strings, total = _pprof_space(profiler.device_memory_profile())
    assert strings[0] == "" and {"allocations", "count", "space", "bytes", "float32[64,32]"} <= set(strings)
    assert total == sum(a.nbytes for a in pyjax.live_arrays()) and total >= x.nbytes
    assert {"space", "bytes"} <= set(_pprof_space(jax.profiler.device_memory_profile())[0])
    profiler.save_device_memory_profile(tmp_path / "mem.prof")
    assert (tmp_path / "mem.prof").read_bytes()[:2] == b"\x1f\x8b"
    with profiler.trace(str(tmp_path)):
        with profiler.TraceAnnotation("step", n=3):
            (x * 2).block_until_ready()
    data = profiler.ProfileData.from_file(profiler.last_trace_path())
    events = [e for line in data.find_plane_with_name("/host:CPU").lines for e in line.events]
    step = next(e for e in events if e.name == "step")
    assert dict(step.stats) == {"n": 3} and step.end_ns >= step.start_ns + step.duration_ns - 1
    assert any(e.name.startswith("kernel") and step.start_ns <= e.start_ns <= step.end_ns for e in events)
    for lib in (jax, pyjax):
        with pytest.raises(ValueError, match="No active profiler server"):
            lib.profiler.stop_server()
    with pytest.raises(NotImplementedError, match="no profiler server"):
        profiler.start_server(9999)
