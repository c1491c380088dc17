"""ShapeDtypeStruct (a shape and dtype standing in for an array) and _abstractify, the abstract value of
an argument leaf of a transformation (a ShapeDtypeStruct, a tracer or anything that converts to an array).
Below api, stages and custom_derivatives, which all take such leaves."""

from __future__ import annotations

import math

from pyjax.core import core, dtypes
from pyjax.core.core import ShapedArray, Tracer, get_aval
from pyjax.lax._util import _arr

__all__ = ["ShapeDtypeStruct"]


class ShapeDtypeStruct:
    """A shape and dtype standing in for an array (eval_shape's output, jit's abstract input)."""

    def __init__(self, shape, dtype, sharding=None, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = dtypes.dtype(dtype)
        self.weak_type = weak_type
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))

    @classmethod
    def like(cls, x) -> ShapeDtypeStruct:
        """The shape, dtype and weak type of x (an array, a tracer, a Python or NumPy value)."""
        aval = _abstractify(x)
        return cls(aval.shape, aval.dtype, weak_type=aval.weak_type)

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __hash__(self):
        return hash((self.shape, self.dtype))


core.pytype_aval_mappings[ShapeDtypeStruct] = lambda s: ShapedArray(s.shape, dtypes.canonicalize(s.dtype), s.weak_type)


def _abstractify(x) -> ShapedArray:
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, dtypes.canonicalize(x.dtype), x.weak_type)
    if isinstance(x, Tracer):
        return x.aval
    return get_aval(_arr(x))
