"""WgpuHost (pyjax/hosts/wgpu_host.py) on whatever adapter wgpu finds (lavapipe here): buffers,
pool reuse, batched dispatch with packed uniforms, errors, device loss and large grids."""

from __future__ import annotations

import asyncio
import struct
import subprocess
import sys

import numpy as np
import pytest

from pyjax.hosts.wgpu_host import (
    WEBGPU_DEFAULT_LIMITS,
    DeviceLostError,
    GPUOutOfMemoryError,
    Replay,
    Step,
    WGSLCompileError,
    _size_class,
    grid_2d,
    number_lines,
)

# y = x * a + b over n elements; 2-D workgroup grid linearized as wid.x + wid.y * nwg.x.
AXPB = """
struct P { n: u32, a: f32, b: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) w: vec3<u32>, @builtin(num_workgroups) nw: vec3<u32>,
        @builtin(local_invocation_index) li: u32) {
  let i = (w.x + w.y * nw.x) * 64u + li;
  if (i < p.n) { y[i] = x[i] * p.a + p.b; }
}
"""

# No uniform: out[i] = in[i] + 1 for every element of out (arrayLength sees the requested size).
INC = """
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read_write> o: array<u32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < arrayLength(&o)) { o[g.x] = a[g.x] + 1u; }
}
"""


def axpb(n: int, a: float, b: float) -> bytes:
    return struct.pack("<Iff", n, a, b)


@pytest.fixture(scope="module")
def host():
    pytest.importorskip("wgpu")
    from pyjax.hosts.wgpu_host import HostError, WgpuHost

    try:
        return WgpuHost()
    except HostError as e:  # pragma: no cover - machines without an adapter
        pytest.skip(f"no WebGPU adapter: {e}")


def test_import_does_not_need_wgpu():
    code = "import sys, pyjax.hosts.wgpu_host; assert 'wgpu' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_limits_default_to_webgpu_spec(host):
    for name in ("max-compute-invocations-per-workgroup", "max-storage-buffers-per-shader-stage",
                 "max-compute-workgroup-storage-size", "max-buffer-size",
                 "min-uniform-buffer-offset-alignment", "max-compute-workgroups-per-dimension"):  # fmt: skip
        assert host.limits[name] == WEBGPU_DEFAULT_LIMITS[name], name
    assert host.has_f16 == ("shader-f16" in host.features)
    assert isinstance(host.adapter_info, dict)


def test_workgroup_over_spec_limit_is_rejected(host):
    # 512 invocations run on lavapipe's adapter but not in a browser at spec limits.
    with pytest.raises(WGSLCompileError):
        host.pipeline(INC.replace("@workgroup_size(64)", "@workgroup_size(512)"))


def test_adapter_limits_flag():
    from pyjax.hosts.wgpu_host import WgpuHost

    big = WgpuHost(adapter_limits=True)
    assert big.limits["max-compute-invocations-per-workgroup"] >= 256
    assert big.limits["max-buffer-size"] >= WEBGPU_DEFAULT_LIMITS["max-buffer-size"]
    big.destroy()


@pytest.mark.parametrize("nbytes", [0, 1, 3, 4, 5, 255, 256, 257, 1001, 70000])
def test_write_read_roundtrip(host, nbytes):
    data = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    h = host.create_buffer(nbytes)
    assert host.buffer_size(h) == nbytes
    host.write(h, data)
    assert host.read(h) == data
    host.release_buffer(h)


def test_partial_and_unaligned_writes_and_reads(host):
    h = host.create_buffer(37)
    host.write(h, bytes(range(37)))
    host.write(h, b"\xaa\xbb\xcc", offset=5)  # unaligned, in the middle
    host.write(h, np.array([7, 8], np.uint8), offset=35)  # unaligned tail
    want = bytearray(range(37))
    want[5:8] = b"\xaa\xbb\xcc"
    want[35:37] = b"\x07\x08"
    assert host.read(h) == bytes(want)
    assert host.read(h, 4, offset=6) == bytes(want[6:10])
    assert host.read(h, 0) == b""
    with pytest.raises(ValueError):
        host.write(h, b"x" * 38)
    with pytest.raises(ValueError):
        host.read(h, 10, offset=30)
    host.release_buffer(h)


def test_write_accepts_numpy_and_memoryview(host):
    x = np.arange(10, dtype=np.float32)
    h = host.create_buffer(x.nbytes)
    host.write(h, x)
    np.testing.assert_array_equal(np.frombuffer(host.read(h), np.float32), x)
    host.write(h, memoryview(x[::-1].copy()))
    np.testing.assert_array_equal(np.frombuffer(host.read(h), np.float32), x[::-1])
    host.release_buffer(h)


def test_pool_reuses_buffers_by_size_class(host):
    h1 = host.create_buffer(1000)
    gpu1 = host._buffers[h1].gpu
    host.release_buffer(h1)
    hits, made = host.stats["pool_hits"], host.stats["buffers_created"]
    h2 = host.create_buffer(1010)  # same class as 1000
    assert host._buffers[h2].gpu is gpu1
    assert host.stats["pool_hits"] == hits + 1 and host.stats["buffers_created"] == made
    assert host.buffer_size(h2) == 1010
    h3 = host.create_buffer(5000)  # another class: a new buffer
    assert host.stats["buffers_created"] == made + 1
    assert h3 != h1 and h2 != h1  # handles are never reused
    for h in (h2, h3):
        host.release_buffer(h)
    with pytest.raises(KeyError):
        host.read(h1)


def test_size_classes():
    assert _size_class(0) == _size_class(1) == _size_class(256) == 256
    prev = 256
    for n in range(257, 1 << 20, 997):
        c = _size_class(n)
        assert n <= c <= 1.25 * n + 1 and c % 4 == 0 and c >= prev
        prev = c


def test_pooled_buffer_binds_requested_size(host):
    """A 100-byte buffer sits in a 256-byte class, but arrayLength must see 25 elements."""
    p = host.pipeline(INC)
    a, o = host.create_buffer(100), host.create_buffer(100)
    host.write(a, np.arange(25, dtype=np.uint32))
    host.write(o, np.zeros(25, np.uint32))
    host.dispatch([Step(p, [a, o], None, (1, 1, 1))])
    np.testing.assert_array_equal(np.frombuffer(host.read(o), np.uint32), np.arange(1, 26))
    host.release_buffer(a)
    host.release_buffer(o)


def test_many_steps_one_submit_with_packed_uniforms(host):
    """A chain of 40 dependent steps, each with its own uniforms, in one encoder and submit."""
    p = host.pipeline(AXPB)
    n = 1000
    x = np.linspace(-1, 1, n).astype(np.float32)
    bufs = [host.create_buffer(4 * n), host.create_buffer(4 * n)]
    host.write(bufs[0], x)
    steps, want = [], x.copy()
    for i in range(40):
        a, b = 1.0 + 0.01 * i, float(i % 3) - 1.0
        steps.append(Step(p, [bufs[i % 2], bufs[(i + 1) % 2]], axpb(n, a, b), -(-n // 64)))
        want = want * np.float32(a) + np.float32(b)
    submits = host.stats["submits"]
    host.dispatch(steps)
    assert host.stats["submits"] == submits + 1
    got = np.frombuffer(host.read(bufs[0]), np.float32)
    # f32 reference; the GPU may fuse x * a + b, so allow rounding-level differences.
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-3)
    for h in bufs:
        host.release_buffer(h)


def test_uniform_buffer_grows_past_binding_size(host):
    """300 steps x 256-byte aligned offsets = 77 KB of uniforms (> 64 KiB binding size)."""
    p = host.pipeline(AXPB)
    n = 64
    src = host.create_buffer(4 * n)
    host.write(src, np.ones(n, np.float32))
    outs = [host.create_buffer(4 * n) for _ in range(300)]
    steps = [Step(p, [src, outs[i]], axpb(n, 1.0, float(i)), 1) for i in range(300)]
    host.dispatch(steps)
    for i in (0, 1, 150, 299):
        np.testing.assert_array_equal(np.frombuffer(host.read(outs[i]), np.float32), np.full(n, 1.0 + i))
    for h in [src, *outs]:
        host.release_buffer(h)


def test_mixed_pipelines_in_one_batch(host):
    pa, pi = host.pipeline(AXPB), host.pipeline(INC)
    n = 16
    f = host.create_buffer(4 * n)
    g = host.create_buffer(4 * n)
    u = host.create_buffer(4 * n)
    v = host.create_buffer(4 * n)
    host.write(f, np.arange(n, dtype=np.float32))
    host.write(u, np.arange(n, dtype=np.uint32))
    host.dispatch(
        [
            Step(pa, [f, g], axpb(n, 2.0, 0.5), 1),
            Step(pi, [u, v], None, 1),
            Step(pi, [v, u], None, 1),
        ]
    )
    np.testing.assert_array_equal(np.frombuffer(host.read(g), np.float32), np.arange(n) * 2 + 0.5)
    np.testing.assert_array_equal(np.frombuffer(host.read(u), np.uint32), np.arange(n) + 2)
    assert host.pipeline_bindings(pa) == ((False, True), True)
    assert host.pipeline_bindings(pi) == ((False, True), False)
    for h in (f, g, u, v):
        host.release_buffer(h)


def test_recording_replayed_on_other_buffers(host):
    """A recording over buffer positions, replayed on two buffer sets (the second twice, its bind
    groups cached), between plain steps of the same batch: each sees the writes before it."""
    pa, pi = host.pipeline(AXPB), host.pipeline(INC)
    n = 16
    # positions: 0 input, 1 middle, 2 output (f32); 3, 4 u32 in/out
    rec = host.record(
        [(pa, [0, 1], axpb(n, 2.0, 1.0), 1), (pa, [1, 2], axpb(n, 0.5, -1.0), 1), (pi, [3, 4], None, 1)], 5
    )
    with pytest.raises(ValueError, match="positions"):
        host.record([(pi, [0, 5], None, 1)], 5)
    sets = [[host.create_buffer(4 * n) for _ in range(5)] for _ in range(2)]
    x = np.arange(n, dtype=np.float32)
    for k, bs in enumerate(sets):
        host.write(bs[0], x + k)
        host.write(bs[3], np.arange(n, dtype=np.uint32) * (k + 1))
    a, b = sets
    host.dispatch([Replay(rec, a), Replay(rec, b), Step(pi, [b[4], b[3]], None, 1), Replay(rec, b)])
    np.testing.assert_array_equal(np.frombuffer(host.read(a[2]), np.float32), x - 0.5)  # (2x + 1) / 2 - 1
    np.testing.assert_array_equal(np.frombuffer(host.read(b[2]), np.float32), x + 0.5)
    np.testing.assert_array_equal(np.frombuffer(host.read(a[4]), np.uint32), np.arange(n) + 1)
    np.testing.assert_array_equal(np.frombuffer(host.read(b[4]), np.uint32), np.arange(n) * 2 + 3)
    with pytest.raises(ValueError, match="needs 5"):
        host.dispatch([Replay(rec, a[:4])])
    host.release_recording(rec)
    for h in a + b:
        host.release_buffer(h)


def test_indirect_grid_at_an_offset(host):
    """("indirect", buffer, offset) reads the workgroup counts at that byte offset, in a batch and
    in a recording: zeros there dispatch nothing (how replay.py skips a loop's finished trips)."""
    pi = host.pipeline(INC)
    counts, a, o = host.create_buffer(32), host.create_buffer(256), host.create_buffer(256)
    host.write(counts, struct.pack("<8I", 0, 0, 0, 1, 1, 1, 0, 0))
    host.write(a, np.arange(64, dtype=np.uint32))
    host.write(o, bytes(256))  # pooled buffers keep old bytes
    rec = host.record([(pi, [0, 1], None, ("indirect", 2, 12)), (pi, [1, 0], None, ("indirect", 2, 0))], 3)
    host.dispatch([Step(pi, [a, o], None, ("indirect", counts, 0))])
    assert not np.frombuffer(host.read(o), np.uint32).any()
    host.dispatch([Replay(rec, [a, o, counts])])
    np.testing.assert_array_equal(np.frombuffer(host.read(o), np.uint32), np.arange(64) + 1)
    np.testing.assert_array_equal(np.frombuffer(host.read(a), np.uint32), np.arange(64))
    host.release_recording(rec)
    for h in (counts, a, o):
        host.release_buffer(h)


def test_read_back_spinning_then_blocking(host, monkeypatch):
    """A read back polls without blocking first (GPUs), then blocks: the same bytes either way."""
    p = host.pipeline(INC)
    a, o = host.create_buffer(4 * 64), host.create_buffer(4 * 64)
    host.write(a, np.arange(64, dtype=np.uint32))
    for spin in (0.0, 1e-6, 0.05):
        monkeypatch.setattr(host, "_spin_s", spin)
        got = host.dispatch([Step(p, [a, o], None, 1)], read=(o, 4 * 64, 0))
        np.testing.assert_array_equal(np.frombuffer(got, np.uint32), np.arange(64) + 1)
        host.write(a, np.frombuffer(got, np.uint32))
        np.testing.assert_array_equal(np.frombuffer(host.read(a), np.uint32), np.arange(64) + 1)
        host.write(a, np.arange(64, dtype=np.uint32))
    host.release_buffer(a)
    host.release_buffer(o)


def test_step_validation(host):
    p = host.pipeline(AXPB)
    a = host.create_buffer(64)
    with pytest.raises(ValueError, match="read_write"):
        host.dispatch([Step(p, [a, a], axpb(16, 1, 0), 1)])
    with pytest.raises(ValueError, match="storage"):
        host.dispatch([Step(p, [a], axpb(16, 1, 0), 1)])
    with pytest.raises(ValueError, match="uniforms"):
        host.dispatch([Step(p, [a, host.create_buffer(64)], None, 1)])
    with pytest.raises(ValueError, match="65535"):
        host.dispatch([Step(p, [a, host.create_buffer(64)], axpb(16, 1, 0), (70000, 1, 1))])


def test_pipeline_cache(host):
    n = host.stats["pipelines_compiled"]
    p1 = host.pipeline(INC)
    p2 = host.pipeline(INC)
    assert p1 == p2 and host.stats["pipelines_compiled"] <= n + 1


def test_compile_error_has_numbered_source_and_message(host):
    bad = INC.replace("o[g.x] = a[g.x] + 1u;", "o[g.x] = a[g.x] + 1.5;")
    with pytest.raises(WGSLCompileError) as info:
        host.pipeline(bad)
    msg = str(info.value)
    assert info.value.source == bad
    assert "6 |   if (g.x < arrayLength(&o)) { o[g.x] = a[g.x] + 1.5; }" in msg
    assert "1.5" in info.value.message  # the compiler's own diagnostic
    assert number_lines("a\nb").splitlines() == ["1 | a", "2 | b"]


def test_debug_env_prints_wgsl(host, monkeypatch, capsys):
    monkeypatch.setenv("PYJAX_DEBUG", "1")
    host.pipeline(INC + "\n// debug-print marker\n")
    assert "debug-print marker" in capsys.readouterr().out


def test_grid_2d():
    assert grid_2d(0) == (0, 1, 1)
    assert grid_2d(65535) == (65535, 1, 1)
    for n in (65536, 100000, 65535 * 65535, 65535 * 65535 + 1, 10**10):
        x, y, z = grid_2d(n)
        assert max(x, y, z) <= 65535 and n <= x * y * z < n + x * y
    with pytest.raises(ValueError):
        grid_2d(65535**3 + 1)


def test_dispatch_past_65535_workgroups_on_big_array(host):
    n = 64 * 80000 + 13  # 80001 workgroups of 64: needs a 2-D grid
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    p = host.pipeline(AXPB)
    a, b = host.create_buffer(4 * n), host.create_buffer(4 * n)
    host.write(a, x)
    host.write(b, np.zeros(n, np.float32))
    assert host._grid(-(-n // 64))[1] == 2
    host.dispatch([Step(p, [a, b], axpb(n, 3.0, 1.0), -(-n // 64))])
    got = np.frombuffer(host.read(b), np.float32)
    np.testing.assert_array_equal(got, x * np.float32(3.0) + np.float32(1.0))
    host.release_buffer(a)
    host.release_buffer(b)


def test_copy_between_buffers(host):
    a, b = host.create_buffer(64), host.create_buffer(64)
    host.write(a, bytes(range(64)))
    host.write(b, bytes(64))
    host.copy(a, b, 16, src_offset=8, dst_offset=32)
    assert host.read(b)[32:48] == bytes(range(8, 24))
    host.release_buffer(a)
    host.release_buffer(b)


def test_read_async(host):
    h = host.create_buffer(12)
    host.write(h, b"hello world!")
    assert asyncio.run(host.read_async(h, 5, offset=6)) == b"world"
    host.release_buffer(h)


def test_out_of_memory_is_memory_error(host):
    with pytest.raises(MemoryError) as info:
        host.create_buffer(host.limits["max-buffer-size"] + 4)
    assert isinstance(info.value, GPUOutOfMemoryError)
    h = host.create_buffer(16)  # the host still works
    host.release_buffer(h)


def test_device_loss_raises_then_recovers():
    from pyjax.hosts.wgpu_host import WgpuHost

    h = WgpuHost()
    p = h.pipeline(INC)
    a = h.create_buffer(16)
    h._device.destroy()  # what a driver reset or an explicit destroy looks like to us
    with pytest.raises(DeviceLostError):
        h.write(a, bytes(16))
    # The next call re-creates the device; old buffers are gone, pipeline handles survive.
    gen = h.generation
    b, c = h.create_buffer(16), h.create_buffer(16)
    assert h.generation == gen + 1 and h.stats["device_losses"] == 1
    with pytest.raises(KeyError):
        h.read(a)
    h.write(b, np.arange(4, dtype=np.uint32))
    h.dispatch([Step(p, [b, c], None, 1)])
    np.testing.assert_array_equal(np.frombuffer(h.read(c), np.uint32), np.arange(1, 5))
    h.destroy()


def test_explicit_layout_flags(host):
    """The code generator may pass the layout instead of having the WGSL parsed."""
    src = INC + "\n// explicit layout\n"
    p = host.pipeline(src, writable=[False, True], has_uniform=False)
    assert host.pipeline_bindings(p) == ((False, True), False)
    a, o = host.create_buffer(8), host.create_buffer(8)
    host.write(a, np.array([1, 2], np.uint32))
    host.dispatch([(p, [a, o], None, (1, 1, 1))])  # a plain tuple works as a Step
    assert np.frombuffer(host.read(o), np.uint32).tolist() == [2, 3]
    with pytest.raises(WGSLCompileError):  # the layout must match the shader
        host.pipeline(src + "// wrong\n", writable=[False, False])


def test_destroyed_host_refuses_calls():
    from pyjax.hosts.wgpu_host import HostError, WgpuHost

    h = WgpuHost()
    h.destroy()
    with pytest.raises(HostError, match="destroyed"):
        h.create_buffer(4)


def test_copy_size_rules(host):
    a, b = host.create_buffer(6), host.create_buffer(6)
    host.write(a, b"abcdef")
    host.copy(a, b)  # 6 bytes to the end of both buffers: allowed
    assert host.read(b) == b"abcdef"
    with pytest.raises(ValueError):
        host.copy(a, b, 2)
    host.release_buffer(a)
    host.release_buffer(b)
