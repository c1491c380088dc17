"""jax.scipy.cluster.vq: assign each observation to its nearest code-book entry."""

from __future__ import annotations

from pyjax import numpy as jnp

__all__ = ["vq"]


def vq(obs, code_book, check_finite: bool = True):
    """(code, dist): index of the nearest code (Euclidean) for each row of obs, and that distance."""
    del check_finite
    for a in (obs, code_book):
        if isinstance(a, (list, tuple)):
            raise TypeError(f"scipy.cluster.vq.vq requires ndarray or scalar arguments, got {type(a)}.")
    obs, code_book = jnp.asarray(obs), jnp.asarray(code_book)
    dt = jnp.result_type(obs, code_book)
    if not jnp.issubdtype(dt, jnp.inexact):
        dt = jnp.result_type(dt, 1.0)
    obs, code_book = obs.astype(dt), code_book.astype(dt)
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
