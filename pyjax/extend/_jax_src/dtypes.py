"""jax._src.dtypes under alias_jax: the public dtypes module plus the two names libraries subclass at
import (flax's fp8 meta dtype): ExtendedDType, the base of parameterized dtypes, and DType (numpy's)."""

from __future__ import annotations

import abc
from typing import Any

from pyjax.dtypes import *  # noqa: F403
from pyjax.dtypes import __all__ as _public

try:
    from numpy import dtype as DType  # noqa: N812  (JAX's name for numpy's dtype class)
except ImportError:  # Pyodide without numpy
    DType = type


class ExtendedDType(abc.ABC):
    """Base of parameterized (extended) dtypes: `type` is their scalar type, `_rules` their behaviour."""

    _rules: Any = None

    @property
    @abc.abstractmethod
    def type(self) -> type: ...


__all__ = [*_public, "DType", "ExtendedDType"]
