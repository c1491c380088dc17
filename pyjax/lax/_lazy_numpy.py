"""The lazy import of pyjax.numpy for the lax modules still composed from numpy functions (fft,
special, bits, ...): they sit in the numpy <-> lax import cycle until they are written with lax ops
(issue 17)."""

from __future__ import annotations


def _jnp():
    import pyjax.numpy as jnp

    return jnp
