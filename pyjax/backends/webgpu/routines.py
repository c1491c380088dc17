"""Routines on the GPU (placeholder: every routine runs on the host for now)."""

from __future__ import annotations


def compile_routine(routine, backend):
    return None
