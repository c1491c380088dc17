"""Helpers shared by the pyjax.numpy topic modules."""

from __future__ import annotations

import builtins

from pyjax.core import dtypes
from pyjax.core.core import Tracer
from pyjax.core.errors import ConcretizationTypeError
from pyjax.lax import lax
from pyjax.numpy._promotion import _aval, _check_arraylike, _is_array, _weak_result, asarray
from pyjax.runtime import execute as _execute
from pyjax.runtime.array import Array

_i32 = dtypes.int32


def _checked_arr(fn: str, a):
    """a as an array, after JAX's check_arraylike (a Python list raises its TypeError naming fn)."""
    if _is_array(a):
        return a
    _check_arraylike(fn, a, keys=True)
    return asarray(a)


_SCALARS = (builtins.int, builtins.float, builtins.bool)


def _arr(x):
    return x if _is_array(x) else asarray(x)


def _to_dtype(x, d):
    x = _arr(x)
    return x if _aval(x).dtype is d else lax.convert_element_type(x, d)


def _result(fn: str, *args, to_float: bool = False):
    """Promote args (weak-type aware) to one dtype without broadcasting them together."""
    args = [a if isinstance(a, _SCALARS) or _is_array(a) else asarray(a) for a in args]
    d, weak = _weak_result(*args)
    if to_float and d.kind not in "fc":
        d = dtypes.default_float()
        weak = weak and builtins.all(isinstance(a, _SCALARS) for a in args)
    out = []
    for a in args:
        if isinstance(a, _SCALARS):
            out.append(_execute.make_scalar(a, d, weak))
        else:
            av = _aval(a)
            out.append(a if av.dtype is d and av.weak_type == weak else lax._convert(a, d, weak))
    return out


def _concrete(x, what: str):
    """A concrete Python value (int, float, bool or nested list) of x, else ConcretizationTypeError."""
    if isinstance(x, (builtins.list, builtins.tuple)):
        return [_concrete(v, what) for v in x]
    if isinstance(x, _SCALARS):
        return x
    if isinstance(x, Tracer):
        low = x.full_lower()
        if isinstance(low, Tracer):
            prim = getattr(low, "primal", None)
            if prim is None:
                raise ConcretizationTypeError(_aval(x), what)
            return _concrete(prim, what)
        x = low
    if not isinstance(x, Array):
        x = asarray(x)
    return x.tolist()


def _slice_axis(a, start, stop, axis):
    shape = _aval(a).shape
    starts = [0] * len(shape)
    limits = list(shape)
    starts[axis], limits[axis] = start, stop
    return lax.slice(a, starts, limits)


def _concrete_value(x, what: str):
    """The concrete array behind x, looking through autodiff tracers; None if x is abstract."""
    while isinstance(x, Tracer):
        low = x.full_lower()
        if low is not x:
            x = low
            continue
        prim = getattr(x, "primal", None)
        if prim is None:
            return None
        x = prim
    return x


def _concrete_int(x, msg: str) -> int:
    c = _concrete_value(x, msg)
    if c is None:
        raise ConcretizationTypeError(_aval(x), msg)
    return builtins.int(c)


def _wrap_negative(v, n: int):
    """Index value(s) with negative entries wrapped by n (static ints stay Python ints)."""
    if isinstance(v, builtins.int):
        return v + n if v < 0 else v
    a = _aval(v)
    if a.dtype.kind != "i":
        return v
    return lax.select(lax.lt(v, lax.full(a.shape, 0, a.dtype)), lax.add(v, lax.full(a.shape, n, a.dtype)), v)
