"""Lowering rules for the indexing primitives (registered into lowering.rules by name)."""

from __future__ import annotations

from pyjax.compiler import lowering  # noqa: F401
