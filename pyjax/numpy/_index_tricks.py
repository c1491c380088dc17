"""Index helpers: mgrid, ogrid, r_, c_, s_ and index_exp."""

from __future__ import annotations

import builtins

from pyjax.numpy import _creation, _manipulation, _ranges
from pyjax.numpy._promotion import array, asarray, result_type

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
        if not axes:  # mgrid[()] is an empty int array, ogrid[()] an empty list (JAX's)
            return [] if self.sparse else _creation.arange(0)
        dt = result_type(*axes)
        grids = _ranges.meshgrid(*[a.astype(dt) for a in axes], indexing="ij", sparse=self.sparse)
        return grids if self.sparse else _manipulation.stack(grids)


class _Concat:
    """r_ / c_: concatenate slices, scalars and arrays along an axis, as JAX's AxisConcat.

    An optional leading string directive is "axis[,ndmin[,trans1d]]" (fields after the third are
    ignored) or "r" / "c", which make a flat result a row (1, n) or a column (n, 1). Each item is
    raised to ndmin dimensions by prepending axes; when trans1d is not -1 the new shape's axes are
    then rotated left by ndmin - |ndmin + trans1d + 1| % ndmin (JAX's rule, which for a slice counts
    its own axis as new).
    """

    def __init__(self, axis: int, ndmin: int, trans1d: int):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def _directive(self, directive: str) -> tuple[int, int, int, int]:
        if directive == "r":
            return self.axis, self.ndmin, self.trans1d, 0
        if directive == "c":
            return self.axis, self.ndmin, self.trans1d, 1
        fields = directive.split(",")[:3]
        defaults = [self.axis, self.ndmin, self.trans1d]
        try:
            axis, ndmin, trans1d = (int(f) for f in fields + [str(d) for d in defaults[len(fields) :]])
        except ValueError as err:
            raise ValueError(f"could not understand directive {directive!r}") from err
        return axis, ndmin, trans1d, -1

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, -1
        if isinstance(key[0], str):
            axis, ndmin, trans1d, matrix = self._directive(key[0])
            key = key[1:]
        items = []
        for k in key:
            if isinstance(k, slice):
                x, item_ndim = _slice_values(k), 0
            elif isinstance(k, str):
                raise ValueError("string directive must be placed at the beginning")
            else:
                x = asarray(k)
                item_ndim = x.ndim
            x = array(x, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin - item_ndim > 0:
                shift = ndmin - builtins.abs(ndmin + trans1d + 1) % ndmin
                perm = tuple(range(ndmin))
                x = _manipulation.transpose(x, perm[shift:] + perm[:shift])
            items.append(x)
        out = _manipulation.concatenate(items, axis=axis)
        if matrix != -1 and out.ndim == 1:
            out = _manipulation.expand_dims(out, matrix)
        return out

    def __len__(self) -> int:
        return 0


class _IndexExpression:
    """s_ / index_exp: the index expression itself (tuple for index_exp)."""

    def __init__(self, maketuple: bool):
        self.maketuple = maketuple

    def __getitem__(self, item):
        return (item,) if self.maketuple and not isinstance(item, tuple) else item


mgrid = _Grid(sparse=False)


ogrid = _Grid(sparse=True)


r_ = _Concat(axis=0, ndmin=1, trans1d=-1)


c_ = _Concat(axis=-1, ndmin=2, trans1d=0)


s_ = _IndexExpression(maketuple=False)


index_exp = _IndexExpression(maketuple=True)
