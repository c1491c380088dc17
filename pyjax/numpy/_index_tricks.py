"""Index helpers: mgrid, ogrid, r_, c_, s_ and index_exp."""

from __future__ import annotations

import builtins

from pyjax.numpy import _creation, _manipulation, _ranges
from pyjax.numpy._promotion import asarray, result_type

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp"]


# --- index helpers --------------------------------------------------------------------------------


def _slice_values(s: slice):
    """The points of a slice: arange for a real step, linspace for an imaginary step (num points)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        num = int(builtins.abs(step))
        return _ranges.linspace(start, s.stop, num)
    return _creation.arange(start, s.stop, step)


class _Grid:
    """mgrid / ogrid: dense or open multi-dimensional grids from slices."""

    def __init__(self, sparse: bool):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        dt = result_type(*axes)
        grids = _ranges.meshgrid(*[a.astype(dt) for a in axes], indexing="ij", sparse=self.sparse)
        return grids if self.sparse else _manipulation.stack(grids)


class _Concat:
    """r_ / c_: concatenate slices, scalars and arrays along an axis (c_: columns, as numpy)."""

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin = self.axis, self.ndmin
        if key and isinstance(key[0], str):
            parts = [int(p) for p in key[0].split(",")]
            axis = parts[0]
            ndmin = parts[1] if len(parts) > 1 else ndmin
            key = key[1:]
        items = []
        for k in key:
            x = _slice_values(k) if isinstance(k, slice) else _manipulation.atleast_1d(asarray(k))
            while x.ndim < ndmin:
                x = x[:, None] if self.trans1d == -1 and x.ndim == 1 else x[None]
            items.append(x)
        if not items:
            return _creation.zeros((0,))
        dt = result_type(*items)
        return _manipulation.concatenate([x.astype(dt) for x in items], axis=axis)


class _IndexExpression:
    """s_ / index_exp: the index expression itself (tuple for index_exp)."""

    def __init__(self, maketuple: bool):
        self.maketuple = maketuple

    def __getitem__(self, item):
        return (item,) if self.maketuple and not isinstance(item, tuple) else item


mgrid = _Grid(sparse=False)


ogrid = _Grid(sparse=True)


r_ = _Concat(axis=0, ndmin=1, trans1d=0)


c_ = _Concat(axis=-1, ndmin=2, trans1d=-1)


s_ = _IndexExpression(maketuple=False)


index_exp = _IndexExpression(maketuple=True)
