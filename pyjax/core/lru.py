"""A bounded mapping that forgets its least recently used entry: every compile cache in pyjax is
one, so a session (or a test suite) that meets thousands of distinct shapes keeps flat memory.
An evicted entry is simply rebuilt on its next use."""

from __future__ import annotations

import os
from collections import OrderedDict

_MISSING = object()


def cache_size(name: str, default: int) -> int:
    """The size of cache `name`: env PYJAX_<NAME>_CACHE overrides the documented default."""
    return int(os.environ.get(f"PYJAX_{name.upper()}_CACHE", default))


class LRUCache(OrderedDict):
    """dict with `get` and item assignment refreshing recency; holds at most `maxsize` entries."""

    def __init__(self, maxsize: int):
        super().__init__()
        self._maxsize = max(1, maxsize)

    @property
    def maxsize(self) -> int:
        return self._maxsize

    @maxsize.setter
    def maxsize(self, n: int) -> None:  # shrinking forgets the oldest entries at once
        self._maxsize = max(1, n)
        while len(self) > self._maxsize:
            self.popitem(last=False)

    def get(self, key, default=None):
        value = OrderedDict.get(self, key, _MISSING)
        if value is _MISSING:
            return default
        self.move_to_end(key)
        return value

    def __setitem__(self, key, value):
        OrderedDict.__setitem__(self, key, value)
        self.move_to_end(key)
        while len(self) > self._maxsize:
            self.popitem(last=False)
