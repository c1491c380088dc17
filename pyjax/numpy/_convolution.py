"""1-D convolve and correlate, lowered to lax.conv_general_dilated."""

from __future__ import annotations

from pyjax.lax import lax
from pyjax.lax.convolution import conv_general_dilated
from pyjax.numpy._promotion import _check_arraylike
from pyjax.numpy._util import _arr, _aval, _result

__all__ = ["convolve", "correlate"]


# --- 1-D convolution ----------------------------------------------------------------------------------


def _conv1d(fn: str, a, v, mode: str, precision, preferred_element_type):
    _check_arraylike(fn, a, v)
    a, v = _arr(a), _arr(v)
    if _aval(a).ndim != 1 or _aval(v).ndim != 1:
        raise ValueError(f"{fn}() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        a, v = _result(fn, a, v, to_float=True)
    else:
        a, v = _result(fn, a, v)
    if fn == "correlate" and _aval(v).dtype.kind == "c":  # numpy's correlate: sum_n a[n + k] * conj(v[n])
        v = lax.conj(v)
    na, nv = _aval(a).shape[0], _aval(v).shape[0]
    if na == 0 or nv == 0:
        raise ValueError(f"{fn}: inputs cannot be empty, got shapes {_aval(a).shape} and {_aval(v).shape}.")
    reverse_out = False
    if na < nv:
        a, v = v, a
        reverse_out = fn == "correlate"
    if fn == "convolve":
        v = lax.rev(v, (0,))
    k = _aval(v).shape[0]
    if mode == "valid":
        pad = (0, 0)
    elif mode == "same":
        pad = (k // 2, k - k // 2 - 1)
    elif mode == "full":
        pad = (k - 1, k - 1)
    else:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = conv_general_dilated(
        lax.reshape(a, (1, 1, _aval(a).shape[0])),
        lax.reshape(v, (1, 1, k)),
        (1,),
        [pad],
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    out = lax.reshape(out, (_aval(out).shape[2],))
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays (modes 'full', 'same', 'valid')."""
    return _conv1d("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays (modes 'full', 'same', 'valid')."""
    return _conv1d("correlate", a, v, mode, precision, preferred_element_type)
