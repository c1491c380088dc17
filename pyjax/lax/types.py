"""The enums and small types JAX code passes to lax: Precision, DotDimensionNumbers, DotAlgorithm,
DotAlgorithmPreset, PrecisionLike, AccuracyMode and Tolerance.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, NamedTuple, Union

__all__ = ["DotDimensionNumbers", "DotAlgorithm", "DotAlgorithmPreset", "PrecisionLike", "AccuracyMode", "Tolerance"]


# --- small types ----------------------------------------------------------------------------------


class Precision(enum.Enum):
    """Matmul/conv precision hint (accepted for compatibility; pyjax always computes in the
    operand dtype, accumulating half precision in float32)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name


DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]]


class DotAlgorithm(NamedTuple):
    """A dot algorithm spec (operand/accumulation types); accepted as `precision=` and otherwise
    ignored: pyjax computes in the operand dtype, accumulating half precision in float32."""

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
    """Named dot algorithms (JAX's presets); accepted as `precision=`, with no effect in pyjax."""

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return self.name


PrecisionLike = Union[  # noqa: UP007  (a runtime alias, as JAX's)
    None, str, Precision, tuple[str, str], tuple[Precision, Precision], DotAlgorithm, DotAlgorithmPreset
]


class AccuracyMode(enum.Enum):
    """Accuracy request for transcendental ops (JAX's `accuracy=`); pyjax has one implementation each."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """An error bound request for transcendental ops (JAX's `accuracy=`); recorded, not enforced."""

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0) -> None:
        if atol < 0.0 or rtol < 0.0 or ulps < 0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol, self.rtol, self.ulps = atol, rtol, ulps
