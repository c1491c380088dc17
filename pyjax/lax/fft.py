"""lax.fft and FftType, on pyjax.numpy.fft's transforms."""

from __future__ import annotations

import enum
import operator
from collections.abc import Sequence
from typing import Any

from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._lazy_numpy import _jnp
from pyjax.lax._util import _arr

__all__ = ["FftType", "fft"]


# --- fft ------------------------------------------------------------------------------------------


class FftType(enum.IntEnum):
    """Kind of lax.fft: complex forward/inverse, real-to-complex, complex-to-real."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self) -> str:
        return str(self.value)


def _fft_type(t: Any) -> FftType:
    if isinstance(t, FftType):
        return t
    if isinstance(t, str):
        try:
            return FftType[t.upper()]
        except KeyError:
            raise ValueError(f"Unknown FFT type '{t}'") from None
    try:
        return FftType(t)
    except ValueError:
        raise TypeError(f"Unknown FFT type value '{t}'") from None


def fft(x: Any, fft_type: FftType | str, fft_lengths: Sequence[int]) -> Any:
    """XLA's Fft over the len(fft_lengths) minor axes (IFFT normalized by 1/n, like numpy's ifft)."""
    t = _fft_type(fft_type)
    lengths = tuple(operator.index(n) for n in fft_lengths)
    x = _arr(x)
    aval = get_aval(x)
    shape, nl = aval.shape, len(lengths)
    if aval.ndim < nl:
        raise ValueError(
            f"FFT input shape {shape} must have at least as many input dimensions as fft_lengths {lengths}."
        )
    jfft = _jnp().fft
    axes = tuple(range(aval.ndim - nl, aval.ndim))
    if t is FftType.RFFT:
        if aval.dtype.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        if aval.dtype.name not in ("float32", "float64"):
            raise ValueError(f"RFFT input must be float32 or float64, got {aval.dtype.name}")
    if t is FftType.IRFFT:
        want = lengths[:-1] + (lengths[-1] // 2 + 1,) if nl else ()
    else:
        want = lengths
    if shape[aval.ndim - nl :] != want:
        if t is FftType.IRFFT:
            raise ValueError(
                f"IRFFT input shape {shape} minor dimensions must be equal to the fft_lengths {lengths} "
                f"with the last one halved plus one: {want}"
            )
        raise ValueError(f"FFT input shape {shape} minor dimensions must be equal to fft_lengths {lengths}")
    if t is FftType.FFT:
        return jfft.fftn(x, axes=axes) if nl else jfft._complex_input(x, "fft")
    if t is FftType.IFFT:
        return jfft.ifftn(x, axes=axes) if nl else jfft._complex_input(x, "ifft")
    if t is FftType.RFFT:
        return jfft.rfftn(x, axes=axes)
    if not nl:
        return lax.real(jfft._complex_input(x, "irfft"))
    return jfft.irfftn(x, s=lengths, axes=axes)
