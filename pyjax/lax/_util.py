"""Helpers shared by the lax modules composed from primitives."""

from __future__ import annotations


def _jnp():
    import pyjax.numpy as jnp

    return jnp


def _arr(x):
    from pyjax.numpy import _core

    return x if _core._is_array(x) else _core.asarray(x)
