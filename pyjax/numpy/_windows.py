"""Window functions: bartlett, blackman, hamming, hanning, kaiser."""

from __future__ import annotations

import math
import operator

from pyjax.core import core, dtypes
from pyjax.numpy import _creation, _elementwise
from pyjax.numpy._floating import i0
from pyjax.numpy._promotion import asarray

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


# --- window functions and i0 --------------------------------------------------------------------


def _window_n(name: str, M):
    M = operator.index(core.concrete_or_error(M, f"M argument of jnp.{name}"))
    return M, _creation.arange(M, dtype=dtypes.default_float())


def _cosine_window(name: str, M, coeffs):
    """sum_k coeffs[k] * cos(2 pi k n / (M - 1)) for n in range(M) (numpy's window definitions)."""
    M, n = _window_n(name, M)
    if M <= 1:
        return _creation.ones((M,), dtypes.default_float())
    out = _creation.zeros((M,), dtypes.default_float())
    for k, c in enumerate(coeffs):
        out = out + c * _elementwise.cos(2 * math.pi * k * n / (M - 1))
    return out


def bartlett(M):
    """Bartlett (triangular) window of M points."""
    M, n = _window_n("bartlett", M)
    if M <= 1:
        return _creation.ones((M,), dtypes.default_float())
    half = (M - 1) / 2
    return 1 - _elementwise.abs(n - half) / half


def blackman(M):
    """Blackman window of M points."""
    return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


def hamming(M):
    """Hamming window of M points."""
    return _cosine_window("hamming", M, (0.54, -0.46))


def hanning(M):
    """Hann window of M points."""
    return _cosine_window("hanning", M, (0.5, -0.5))


def kaiser(M, beta):
    """Kaiser window of M points with shape parameter beta."""
    M, n = _window_n("kaiser", M)
    if M <= 1:
        return _creation.ones((M,), dtypes.default_float())
    alpha = (M - 1) / 2
    return i0(beta * _elementwise.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(asarray(beta, dtypes.default_float()))
