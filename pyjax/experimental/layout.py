"""pyjax.experimental.layout (jax.experimental.layout): Layout and Format, the (memory layout, sharding)
pair JAX's jit accepts as a placement. pyjax stores arrays row-major on one device, so a Layout is
a description only (libraries such as flax build and inspect Formats); jit reads a Format's sharding."""

from __future__ import annotations

from typing import Any

from pyjax.core.value import ByValue

__all__ = ["Format", "Layout"]


class Layout:
    """A memory layout: the dimension order from major to minor (and XLA's tiling, kept as given)."""

    def __init__(self, major_to_minor: tuple[int, ...], tiling: Any = None, sub_byte_element_size_in_bits: int = 0):
        self.major_to_minor = tuple(int(d) for d in major_to_minor)
        self.tiling = tiling
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def __eq__(self, other):
        return isinstance(other, Layout) and (self.major_to_minor, self.tiling) == (other.major_to_minor, other.tiling)

    def __hash__(self):
        return hash((self.major_to_minor, str(self.tiling)))

    def __repr__(self):
        return f"Layout(major_to_minor={self.major_to_minor})"


class Format(ByValue):
    """A placement: a Layout (None: the default, row-major) and a Sharding."""

    def __init__(self, layout: Any = None, sharding: Any = None):
        from pyjax.sharding import Sharding  # the library layer, beside this module

        if isinstance(layout, Layout) and not isinstance(sharding, Sharding):
            raise ValueError(
                f"Sharding has to be concrete when layout is of type {type(layout)}. Please pass a "
                f"`jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` to the sharding argument. "
                f"Got sharding {sharding}"
            )
        self.layout = layout
        self.sharding = sharding

    def _key(self):
        return (self.layout, self.sharding)

    def __repr__(self):
        return f"Format({self.layout}, {self.sharding})"
