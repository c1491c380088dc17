"""Heap allocator over one Wasm linear memory, in pure Python (runs under Pyodide).

Segregated free lists with coalescing: free blocks sit in bins by size class (four classes per
power of two), a bitmap of non-empty bins finds the smallest fitting bin in O(1), and a freed block
merges with free neighbours so large tensors can reuse the space of many small ones. Every block is
a multiple of 64 bytes at a 64-byte aligned address (SIMD loads and cache lines). When no block
fits, the allocator asks its `grow` callback for more pages, up to 4 GiB (the memory32 limit), and
raises `WasmOutOfMemory` (a MemoryError) when that fails; it stays usable afterwards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Allocator", "WasmOutOfMemory", "size_class"]

PAGE = 65536
MAX_MEMORY = 1 << 32
ALIGN = 64
_SMALL = 1 << 16  # requests up to here are rounded to their size class; larger ones to 4 KiB
_LARGE_ROUND = 4096
_QUICK_MAX = 16 << 20  # bytes of freed small blocks kept uncoalesced for fast reuse


class WasmOutOfMemory(MemoryError):
    """The linear memory cannot hold the request, even after growing."""


def _class_index(n: int) -> int:
    """Bin of a block of n bytes (n >= 64): four bins per power of two, floor semantics."""
    p = n.bit_length() - 1  # 2**p <= n < 2**(p+1)
    quarter = (n >> (p - 2)) & 3 if p >= 2 else 0
    return 4 * (p - 6) + quarter


def _class_size(i: int) -> int:
    p, quarter = divmod(i, 4)
    return (1 << (p + 6)) + quarter * (1 << (p + 4))


_CLASS_OF: dict[int, int] = {}  # request -> size_class, for the small requests seen (a malloc's hot path)


def size_class(nbytes: int) -> int:
    """Size actually reserved for a request of `nbytes` bytes."""
    n = _CLASS_OF.get(nbytes)
    if n is None:
        n = _size_class(nbytes)
        if nbytes <= _SMALL and len(_CLASS_OF) < 4096:
            _CLASS_OF[nbytes] = n
    return n


def _size_class(nbytes: int) -> int:
    n = max(nbytes, 1)
    n = (n + ALIGN - 1) // ALIGN * ALIGN
    if n > _SMALL:
        return (n + _LARGE_ROUND - 1) // _LARGE_ROUND * _LARGE_ROUND
    i = _class_index(n)
    return n if _class_size(i) == n else _class_size(i + 1)


class Allocator:
    """malloc/free over the byte range [base, size) of a linear memory.

    size: current memory size in bytes; grow(pages): callback that grows the memory by `pages`
    64 KiB pages (it fails by raising MemoryError or returning a negative number);
    max_size: hard limit in bytes. Address 0 is never returned with the default base.
    """

    def __init__(
        self, size: int, *, base: int = ALIGN, grow: Callable[[int], Any] | None = None, max_size: int = MAX_MEMORY
    ):
        self.base = (base + ALIGN - 1) // ALIGN * ALIGN
        self.end = size - size % ALIGN
        self.grow_cb = grow
        self.max_size = min(max_size, MAX_MEMORY)
        self._free_start: dict[int, int] = {}  # start -> size
        self._free_end: dict[int, int] = {}  # end -> start
        self._bins: list[dict[int, None]] = [{} for _ in range(_class_index(MAX_MEMORY) + 1)]
        self._nonempty = 0  # bit i set <=> bins[i] non-empty
        self._used: dict[int, int] = {}  # ptr -> reserved size
        # recently freed small blocks by exact size, reused without coalescing (fast path);
        # flushed into the coalescing lists when the heap would otherwise have to grow
        self._quick: dict[int, list[int]] = {}
        self._quick_bytes = 0
        self.used_bytes = 0
        if self.end > self.base:
            self._insert(self.base, self.end - self.base)

    # -- free-block bookkeeping

    def _insert(self, start: int, size: int) -> None:
        self._free_start[start] = size
        self._free_end[start + size] = start
        i = _class_index(size)
        self._bins[i][start] = None
        self._nonempty |= 1 << i

    def _remove(self, start: int) -> int:
        size = self._free_start.pop(start)
        del self._free_end[start + size]
        i = _class_index(size)
        b = self._bins[i]
        del b[start]
        if not b:
            self._nonempty &= ~(1 << i)
        return size

    def _find(self, n: int) -> int | None:
        """Start of a free block of at least n bytes, or None."""
        i = _class_index(n)
        if _class_size(i) != n:  # bin i holds sizes on both sides of n: look inside it
            if self._nonempty >> i & 1:
                for start in self._bins[i]:
                    if self._free_start[start] >= n:
                        return start
            i += 1
        rest = self._nonempty >> i
        if not rest:
            return None
        j = i + (rest & -rest).bit_length() - 1  # lowest non-empty bin at or above i
        return next(iter(self._bins[j]))

    # -- public API

    def malloc(self, nbytes: int) -> int:
        """Reserve at least `nbytes` (a 64-byte aligned address); raises WasmOutOfMemory."""
        if nbytes < 0:
            raise ValueError(f"negative allocation size {nbytes}")
        n = size_class(nbytes)
        q = self._quick.get(n)
        if q:
            start = q.pop()
            self._quick_bytes -= n
            self._used[start] = n
            self.used_bytes += n
            return start
        start = self._find(n)
        if start is None and self._quick_bytes:
            self._flush_quick()
            start = self._find(n)
        if start is None:
            self._grow_for(n)
            start = self._find(n)
            if start is None:  # cannot happen after a successful grow; keep the invariant loud
                raise WasmOutOfMemory(f"no block of {n} bytes after growing")
        size = self._remove(start)
        if size > n:
            self._insert(start + n, size - n)
        self._used[start] = n
        self.used_bytes += n
        return start

    def free(self, ptr: int) -> None:
        """Release a block from `malloc`.

        Small blocks are kept per size for quick reuse (up to 16 MiB); the others merge with
        their free neighbours at once.
        """
        size = self._used.pop(ptr, None)
        if size is None:
            raise ValueError(f"free of pointer {ptr} that is not allocated (double free?)")
        self.used_bytes -= size
        if size <= _SMALL and self._quick_bytes + size <= _QUICK_MAX:
            self._quick.setdefault(size, []).append(ptr)
            self._quick_bytes += size
            return
        self._release(ptr, size)

    def _flush_quick(self) -> None:
        quick, self._quick, self._quick_bytes = self._quick, {}, 0
        for size, ptrs in quick.items():
            for ptr in ptrs:
                self._release(ptr, size)

    def _release(self, ptr: int, size: int) -> None:
        """Return a block to the coalescing free lists."""
        start, end = ptr, ptr + size
        if end in self._free_start:
            size += self._remove(end)
        prev = self._free_end.get(start)
        if prev is not None:
            size += self._remove(prev)
            start = prev
        self._insert(start, size)

    def size_of(self, ptr: int) -> int:
        """Usable size of an allocated block."""
        return self._used[ptr]

    def _grow_for(self, n: int) -> None:
        """Grow memory so that a block of n bytes fits at the top; raises WasmOutOfMemory."""
        tail = self._free_end.get(self.end)
        have = self.end - tail if tail is not None else 0
        need = n - have
        limit_pages = (self.max_size - self.end) // PAGE
        want = -(-need // PAGE)
        if self.grow_cb is None or want > limit_pages:
            raise WasmOutOfMemory(
                f"out of wasm memory: cannot allocate {n} bytes "
                f"({self.used_bytes} in use, heap {self.end} of max {self.max_size} bytes)"
            )
        # grow generously (1/8 of the heap) to amortize, falling back to the exact need
        for pages in dict.fromkeys([min(max(want, self.end // PAGE // 8), limit_pages), want]):
            try:
                ok = self.grow_cb(pages)
            except MemoryError:
                continue
            if ok is None or ok is True or (not isinstance(ok, bool) and ok >= 0):
                old_end, self.end = self.end, self.end + pages * PAGE
                start, size = old_end, pages * PAGE
                prev = self._free_end.get(old_end)
                if prev is not None:
                    size += self._remove(prev)
                    start = prev
                self._insert(start, size)
                return
        raise WasmOutOfMemory(f"out of wasm memory: growing by {want} pages for {n} bytes failed")

    # -- introspection

    @property
    def free_bytes(self) -> int:
        return sum(self._free_start.values()) + self._quick_bytes

    def stats(self) -> dict:
        return {
            "heap_bytes": self.end - self.base,
            "used_bytes": self.used_bytes,
            "free_bytes": self.free_bytes,
            "blocks": len(self._used),
            "free_blocks": len(self._free_start),
            "largest_free": max(self._free_start.values(), default=0),
        }

    def check(self) -> None:
        """Assert internal consistency (tests): blocks tile [base, end) and no free neighbours touch."""
        spans = [(s, n, "used") for s, n in self._used.items()]
        spans += [(s, n, "free") for s, n in self._free_start.items()]
        spans += [(s, n, "quick") for n, ptrs in self._quick.items() for s in ptrs]
        spans.sort()
        pos = self.base
        last = None
        for s, n, kind in spans:
            assert s == pos, f"gap or overlap at {pos}: next block at {s}"
            assert s % ALIGN == 0 and n % ALIGN == 0
            assert not (kind == last == "free"), f"adjacent free blocks at {s}"
            if kind == "free":
                assert self._free_end[s + n] == s and s in self._bins[_class_index(n)]
            pos, last = s + n, kind
        assert pos == self.end, f"blocks end at {pos}, heap ends at {self.end}"
        for i, b in enumerate(self._bins):
            assert bool(b) == bool(self._nonempty >> i & 1)
