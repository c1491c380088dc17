"""Linear-memory allocator: alignment, reuse, coalescing, growth, exhaustion."""

import itertools
import random

import pytest

from pyjax.backends.wasm.allocator import ALIGN, PAGE, Allocator, WasmOutOfMemory, size_class


class FakeMemory:
    """Stands in for a Wasm memory: only counts pages (the allocator never touches bytes)."""

    def __init__(self, pages=1, max_pages=65536, fail=False):
        self.pages, self.max_pages, self.fail, self.calls = pages, max_pages, fail, []

    def grow(self, n):
        self.calls.append(n)
        if self.fail or self.pages + n > self.max_pages:
            raise MemoryError("no")
        old, self.pages = self.pages, self.pages + n
        return old


def _alloc(pages=1, **kw):
    mem = FakeMemory(pages, **kw)
    return Allocator(pages * PAGE, grow=mem.grow), mem


def test_size_classes():
    assert size_class(0) == 64 and size_class(1) == 64 and size_class(64) == 64
    assert size_class(65) == 128
    assert size_class(129) == 192  # four classes per power of two
    assert size_class(1000) == 1024
    assert size_class(70000) == 73728  # large: multiples of 4 KiB
    sizes = [size_class(n) for n in range(0, 200000, 97)]
    assert sizes == sorted(sizes)
    assert all(s % ALIGN == 0 for s in sizes)
    assert all(size_class(n) <= max(64, 1.25 * n + 4096) for n in range(1, 200000, 101))


def test_alignment_nonzero_and_no_overlap():
    a, _ = _alloc(16)
    spans = []
    for n in [1, 3, 64, 65, 100, 1000, 4096, 5000, 70000]:
        p = a.malloc(n)
        assert p % ALIGN == 0 and p != 0
        assert a.size_of(p) >= n
        spans.append((p, p + a.size_of(p)))
    spans.sort()
    assert all(e <= s for (_, e), (s, _) in itertools.pairwise(spans))
    a.check()


def test_reuse_and_coalescing():
    a, mem = _alloc(4)
    ptrs = [a.malloc(1000) for _ in range(100)]
    q = ptrs[10]
    a.free(q)
    assert a.malloc(1000) == q  # the same size class comes back first
    for p in ptrs:
        a.free(p)
    a.check()
    # everything merged back: one big request fits without growing
    big = a.malloc(3 * PAGE)
    assert mem.calls == [] and big == a.base
    a.free(big)
    a.check()
    assert a.stats()["used_bytes"] == 0 and a.stats()["free_blocks"] == 1


def test_growth_uses_callback():
    a, mem = _alloc(1)
    p = a.malloc(10 * PAGE)
    assert mem.calls and mem.pages * PAGE >= p + 10 * PAGE
    assert a.end == mem.pages * PAGE
    a.check()


def test_exhaustion_raises_memoryerror_and_stays_usable():
    a, _ = _alloc(1, max_pages=8)
    keep = a.malloc(4 * PAGE)
    with pytest.raises(WasmOutOfMemory) as e:
        a.malloc(8 * PAGE)
    assert isinstance(e.value, MemoryError)
    a.check()
    small = a.malloc(100)  # still works
    a.free(keep)
    a.free(small)
    a.check()
    assert a.malloc(7 * PAGE)  # the freed space (and the grown pages) serve a big request


def test_failing_grow_callback():
    a, _ = _alloc(1, fail=True)
    with pytest.raises(WasmOutOfMemory):
        a.malloc(2 * PAGE)
    a.check()
    assert a.malloc(100) > 0


def test_no_grow_callback():
    a = Allocator(PAGE)
    with pytest.raises(WasmOutOfMemory, match="cannot allocate"):
        a.malloc(PAGE)
    assert a.malloc(PAGE // 2) > 0


def test_up_to_4gib():
    a, _ = _alloc(1)
    p = a.malloc(3 << 30)
    assert p + (3 << 30) <= 1 << 32
    with pytest.raises(WasmOutOfMemory):
        a.malloc(2 << 30)  # would pass 4 GiB
    q = a.malloc(512 << 20)
    assert q + (512 << 20) <= 1 << 32
    a.free(p)
    a.free(q)
    a.check()


def test_double_free_and_bad_pointer():
    a, _ = _alloc()
    p = a.malloc(10)
    a.free(p)
    with pytest.raises(ValueError, match="not allocated"):
        a.free(p)
    with pytest.raises(ValueError):
        a.free(12345)
    with pytest.raises(ValueError):
        a.malloc(-1)


def test_random_stress():
    rng = random.Random(0)
    a, _ = _alloc(1)
    live = {}
    for step in range(20000):
        if live and rng.random() < 0.48:
            p = rng.choice(list(live))
            a.free(p)
            del live[p]
        else:
            n = rng.choice([1, 60, 100, 700, 3000, 20000, 70000, 300000, 2 << 20])
            p = a.malloc(n)
            assert p % ALIGN == 0 and p not in live
            live[p] = n
        if step % 2000 == 0:
            a.check()
    spans = sorted((p, p + a.size_of(p)) for p in live)
    assert all(e <= s for (_, e), (s, _) in itertools.pairwise(spans))
    for p in list(live):
        a.free(p)
    a.check()
    assert a.used_bytes == 0


def test_with_wasmtime_host():
    pytest.importorskip("wasmtime")
    from pyjax.hosts.wasmtime_host import WasmtimeHost

    host = WasmtimeHost(pages=1, max_pages=64)
    a = Allocator(host.nbytes, grow=host.grow, max_size=host.max_pages * PAGE)
    ptrs = [a.malloc(PAGE) for _ in range(10)]
    assert host.pages >= 11
    for i, p in enumerate(ptrs):
        host.write(p, bytes([i]) * 16)
    assert [host.read(p, 1)[0] for p in ptrs] == list(range(10))
    with pytest.raises(WasmOutOfMemory):
        a.malloc(100 * PAGE)
    assert a.malloc(16)
