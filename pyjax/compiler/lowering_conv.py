"""Lowering rules for convolutions and windowed reductions."""

from __future__ import annotations
