"""cpu backend routines for the linalg primitives (numpy and pure-Python implementations)."""

from __future__ import annotations


def register_numpy(routines: dict) -> None:
    """Add name -> fn(routine, inputs shaped per routine.in_avals) -> list of outputs."""


def register_python(routines: dict) -> None:
    """Add name -> fn(routine, flat input lists) -> list of flat output lists."""
