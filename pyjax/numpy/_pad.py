"""jnp.pad: numpy's padding modes (constant, empty, edge, wrap, reflect, symmetric, linear_ramp, maximum,
minimum, mean, median, and a callable), with JAX's argument checks and errors. Widths, stat lengths and
ramp end values are static; constant values may be traced."""

from __future__ import annotations

import builtins

from pyjax.core import dtypes
from pyjax.lax import lax
from pyjax.numpy import _elementwise, _functional, _manipulation, _ranges, _reductions, _sorting
from pyjax.numpy._promotion import _check_arraylike, _is_array, asarray, broadcast_to
from pyjax.numpy._util import _aval, _concrete, _slice_axis

__all__ = ["pad"]


# the keyword arguments each mode accepts (JAX rejects any other)
_MODE_KWARGS = {
    "constant": ("constant_values",),
    "empty": (),
    "edge": (),
    "wrap": (),
    "linear_ramp": ("end_values",),
    "maximum": ("stat_length",),
    "minimum": ("stat_length",),
    "mean": ("stat_length",),
    "median": ("stat_length",),
    "reflect": ("reflect_type",),
    "symmetric": ("reflect_type",),
}


def _nested_shape(v):
    """The shape of a nested list of scalars, or None when ragged."""
    if not isinstance(v, list):
        return ()
    shapes = {_nested_shape(x) for x in v}
    if len(shapes) > 1 or None in shapes:
        return None
    return (len(v),) + (shapes.pop() if shapes else ())


def _pairs(values, nd: int, name: str) -> list[tuple]:
    """values broadcast to one (before, after) pair per axis, from the shapes numpy accepts:
    (nd, 2), (1, 2), (2,), (1,) or ()."""
    v = _concrete(values, f"{name} argument of jnp.pad")
    shape = _nested_shape(v)
    if shape is None:
        raise TypeError(f"`{name}` entries must be the same shape: {values}")
    if shape == (nd, 2):
        return [tuple(r) for r in v]
    if shape in ((1, 2), (2,), (1,), ()):
        flat = v[0] if shape == (1, 2) else v if shape else [v]
        return [(flat[0], flat[-1])] * nd
    raise ValueError(
        f"jnp.pad: {name} with nd={nd} has unsupported shape {shape}. "
        f"Valid shapes are ({nd}, 2), (1, 2), (2,), (1,), or ()."
    )


def _like(x, a):
    """x in a's dtype and weak type."""
    return lax._convert(x, _aval(a).dtype, _aval(a).weak_type)


def _along(x, axis: int, count: int):
    """x (size 1 along axis) repeated count times along axis."""
    shape = list(_aval(x).shape)
    shape[axis] = count
    return broadcast_to(x, tuple(shape))


def _check_nonempty(a, axis: int, widths, mode: str):
    if _aval(a).shape[axis] == 0 and (widths[0] > 0 or widths[1] > 0):
        raise ValueError(f"Cannot apply '{mode}' padding to empty axis")


def _pad_constant(a, pw, constant_values):
    nd = _aval(a).ndim
    cv = constant_values if _is_array(constant_values) else asarray(constant_values)
    cv = _like(cv, a)
    shape = _aval(cv).shape
    if len(shape) == 1 and shape[0] not in (1, 2):
        raise ValueError(
            f"jnp.pad: constant_values has unsupported shape {shape}. If the shape is 1D or 2D, the last "
            "dimension must be of size 1 or 2."
        )
    if len(shape) == 0 or shape == (1,):
        return lax.pad(a, cv, [(lo, hi, 0) for lo, hi in pw])
    cv = broadcast_to(cv, (nd, 2))
    for axis, (lo, hi) in enumerate(pw):
        for side, width in ((0, lo), (1, hi)):
            if width:
                cfg = [(0, 0, 0)] * nd
                cfg[axis] = (width, 0, 0) if side == 0 else (0, width, 0)
                a = lax.pad(a, cv[axis, side], cfg)
    return a


def _gather_axis(a, axis: int, index):
    return _manipulation.take(a, asarray(index, dtype=dtypes.int32), axis=axis)


def _mirror(i: int, n: int, symmetric: bool) -> int:
    """The source of position i (any integer) when an axis of size n is mirrored about its ends."""
    if n == 1:
        return 0
    period = 2 * n if symmetric else 2 * (n - 1)
    i %= period
    if i < n:
        return i
    return period - 1 - i if symmetric else period - i


def _pad_odd_reflection(a, axis: int, lo: int, hi: int, symmetric: bool):
    """reflect_type='odd': each reflected block is 2 * edge - mirror image, block by block outward, the edge
    being the outermost value so far (so a long pad continues the array's trend)."""
    n = _aval(a).shape[axis]
    skip = 0 if symmetric or n == 1 else 1  # reflect leaves the edge value itself out of the mirror image
    for before, width in ((True, lo), (False, hi)):
        while width > 0:
            size = _aval(a).shape[axis]
            chunk = builtins.min(width, n - skip)
            width -= chunk
            if before:
                edge = _slice_axis(a, 0, 1, axis)
                block = _slice_axis(a, skip, skip + chunk, axis)
            else:
                edge = _slice_axis(a, size - 1, size, axis)
                block = _slice_axis(a, size - skip - chunk, size - skip, axis)
            block = lax.sub(lax.mul(_like(2, a), edge), lax.rev(block, (axis,)))
            a = _manipulation.concatenate([block, a] if before else [a, block], axis=axis)
    return a


def _pad_linear_ramp(a, pw, end_values):
    ends = _pairs(end_values, _aval(a).ndim, "end_values")
    for axis, ((lo, hi), (end_lo, end_hi)) in enumerate(zip(pw, ends)):
        n = _aval(a).shape[axis]
        ramps = []
        for width, end, edge in (
            (lo, end_lo, _slice_axis(a, 0, 1, axis)),
            (hi, end_hi, _slice_axis(a, n - 1, n, axis)),
        ):
            # from the end value towards the edge value, the edge itself excluded
            ramp = _ranges.linspace(
                end, _manipulation.squeeze(edge, axis), width, endpoint=False, dtype=_aval(a).dtype, axis=axis
            )
            ramps.append(_like(ramp, a))
        a = _manipulation.concatenate([ramps[0], a, lax.rev(ramps[1], (axis,))], axis=axis)
    return a


_STATS = {"maximum": _reductions.amax, "minimum": _reductions.amin, "mean": _reductions.mean}


def _pad_stat(a, pw, mode: str, stat_length):
    stat = _sorting.median if mode == "median" else _STATS[mode]
    lengths = None if stat_length is None else _pairs(stat_length, _aval(a).ndim, "stat_length")
    for axis, (lo, hi) in enumerate(pw):
        n = _aval(a).shape[axis]
        if lengths is None:
            before = after = stat(a, axis=axis, keepdims=True)
        else:
            len_lo, len_hi = lengths[axis]
            if len_lo == 0 or len_hi == 0:
                raise ValueError("stat_length of 0 yields no value for padding")
            len_lo, len_hi = builtins.min(len_lo, n), builtins.min(len_hi, n)
            before = stat(_slice_axis(a, 0, len_lo, axis), axis=axis, keepdims=True)
            after = stat(_slice_axis(a, n - len_hi, n, axis), axis=axis, keepdims=True)
        if _aval(a).dtype.kind in "iu":  # a float statistic rounds to the nearest integer
            before, after = _elementwise.round(before), _elementwise.round(after)
        before, after = _like(before, a), _like(after, a)
        a = _manipulation.concatenate([_along(before, axis, lo), a, _along(after, axis, hi)], axis=axis)
    return a


def _pad_callable(a, pw, func, kwargs):
    """numpy's vector-function mode: func(row, (before, after), axis, kwargs) returns each 1-D row of the
    zero-padded array along each axis in turn (JAX's form: it returns the row instead of writing in place)."""
    a = lax.pad(a, _like(0, a), [(lo, hi, 0) for lo, hi in pw])
    for axis, widths in enumerate(pw):
        a = _functional.apply_along_axis(func, axis, a, widths, axis, kwargs)
    return a


def pad(array, pad_width, mode="constant", **kwargs):
    _check_arraylike("pad", array)
    a = array if _is_array(array) else asarray(array)
    nd = _aval(a).ndim
    pw = _pairs(pad_width, nd, "pad_width")
    if not builtins.all(isinstance(w, builtins.int) and not isinstance(w, builtins.bool) for p in pw for w in p):
        raise TypeError("`pad_width` must be of integral type.")
    if callable(mode):
        return _pad_callable(a, pw, mode, kwargs)
    if mode not in _MODE_KWARGS:
        raise NotImplementedError(f"Unimplemented padding mode '{mode}' for np.pad.")
    unsupported = set(kwargs) - set(_MODE_KWARGS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    if nd == 0:
        return a
    if builtins.any(w < 0 for p in pw for w in p):
        raise ValueError("index can't contain negative values")
    if mode == "constant":
        return _pad_constant(a, pw, kwargs.get("constant_values", 0))
    if mode == "empty":  # jnp.empty is zeros
        return lax.pad(a, _like(0, a), [(lo, hi, 0) for lo, hi in pw])
    if mode == "linear_ramp":
        return _pad_linear_ramp(a, pw, kwargs.get("end_values", 0))
    if mode in ("maximum", "minimum", "mean", "median"):
        return _pad_stat(a, pw, mode, kwargs.get("stat_length"))
    reflect_type = kwargs.get("reflect_type", "even")
    if reflect_type not in ("even", "odd"):
        raise ValueError(f"jnp.pad: reflect_type must be 'even' or 'odd', got {reflect_type!r}")
    for axis, (lo, hi) in enumerate(pw):
        if lo == 0 and hi == 0:
            continue
        _check_nonempty(a, axis, (lo, hi), mode)
        n = _aval(a).shape[axis]
        if mode == "edge":
            index = [0] * lo + list(range(n)) + [n - 1] * hi
        elif mode == "wrap":
            index = [(i - lo) % n for i in range(lo + n + hi)]
        elif reflect_type == "odd":
            a = _pad_odd_reflection(a, axis, lo, hi, mode == "symmetric")
            continue
        else:
            index = [_mirror(i - lo, n, mode == "symmetric") for i in range(lo + n + hi)]
        a = _gather_axis(a, axis, index)
    return a
