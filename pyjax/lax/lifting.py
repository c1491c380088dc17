"""Values lifted into the trace: stage (a Python or numpy value as an array) and shape_as_value."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyjax.core import dtypes
from pyjax.lax._util import _arr
from pyjax.lax.lax import convert_element_type

__all__ = ["stage", "shape_as_value"]


def stage(x: Any, /) -> Any:
    """The identity that lifts x (a Python scalar, numpy array or array) into the active trace."""
    return _arr(x)


def shape_as_value(shape: Sequence[int]) -> Any:
    """The dimensions of shape as an int32 array of length len(shape)."""
    return convert_element_type(_arr([int(d) for d in shape]) if len(shape) else _arr([]), dtypes.int32)
