"""Value objects: instances equal (and hashed) by a key tuple of their fields."""

from __future__ import annotations


class ByValue:
    """Equal (and hashed) by the value `_key()`, to instances of its own class (or subclasses)."""

    __slots__ = ()

    def _key(self) -> tuple:
        raise NotImplementedError

    def __eq__(self, other):
        return isinstance(other, type(self)) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())
