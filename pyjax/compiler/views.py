"""Views: how an index tuple maps to a flat buffer offset, so movement ops never copy.

A View is (shape, strides, offset, mask). A ShapeTracker is a stack of Views: when a reshape
cannot be expressed as new strides of the last view (e.g. reshaping a transpose), a new view
is pushed whose flat index feeds the previous one. Kernels read inputs through trackers.
"""

from __future__ import annotations

import math
from functools import lru_cache


def _contiguous_strides(shape: tuple) -> tuple:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc if s != 1 else 0)
        acc *= s
    return tuple(reversed(strides))


class View:
    __slots__ = ("shape", "strides", "offset", "mask", "contiguous", "_key")

    def __init__(self, shape: tuple, strides: tuple, offset: int = 0, mask=None):
        # Size-1 axes get stride 0 so equal views compare equal.
        strides = tuple(0 if s == 1 else st for s, st in zip(shape, strides))
        if mask is not None and all(b == 0 and e == s for (b, e), s in zip(mask, shape)):
            mask = None
        self.shape, self.strides, self.offset, self.mask = shape, strides, offset, mask
        self.contiguous = offset == 0 and mask is None and strides == _contiguous_strides(shape)
        self._key = (shape, strides, offset, mask)

    @staticmethod
    @lru_cache(maxsize=4096)
    def create(shape: tuple) -> View:
        return View(shape, _contiguous_strides(shape))

    def __eq__(self, other):
        return isinstance(other, View) and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return f"View(shape={self.shape}, strides={self.strides}, offset={self.offset}, mask={self.mask})"

    # --- movement ops (each returns a View, or None when one view cannot express it) ---

    def permute(self, perm: tuple) -> View:
        mask = tuple(self.mask[p] for p in perm) if self.mask else None
        return View(tuple(self.shape[p] for p in perm), tuple(self.strides[p] for p in perm), self.offset, mask)

    def expand(self, new_shape: tuple) -> View:
        """Broadcast size-1 axes to new sizes (stride 0)."""
        mask = None
        if self.mask:
            # An axis masked out entirely stays masked; a valid size-1 axis becomes fully valid.
            mask = tuple(
                (0, ns) if s == 1 and m == (0, 1) else ((0, 0) if s == 1 else m)
                for m, s, ns in zip(self.mask, self.shape, new_shape)
            )
        return View(new_shape, self.strides, self.offset, mask)

    def shrink(self, bounds: tuple) -> View:
        """Slice [b, e) on every axis."""
        offset = self.offset + sum(b * st for (b, _), st in zip(bounds, self.strides))
        mask = None
        if self.mask:
            mask = tuple(
                (max(mb, b) - b, max(min(me, e), max(mb, b)) - b) for (mb, me), (b, e) in zip(self.mask, bounds)
            )
        return View(tuple(e - b for b, e in bounds), self.strides, offset, mask)

    def flip(self, axes: tuple) -> View:
        strides = list(self.strides)
        offset = self.offset
        mask = list(self.mask) if self.mask else None
        for a in axes:
            s = self.shape[a]
            if s > 1:
                offset += (s - 1) * strides[a]
                strides[a] = -strides[a]
            if mask:
                b, e = mask[a]
                mask[a] = (s - e, s - b)
        return View(self.shape, tuple(strides), offset, tuple(mask) if mask else None)

    def stride(self, axis: int, step: int) -> View:
        """Keep every step-th element along axis (step > 0), starting at 0."""
        shape, strides = list(self.shape), list(self.strides)
        n = shape[axis]
        shape[axis] = (n + step - 1) // step
        strides[axis] *= step
        mask = None
        if self.mask:
            mask = list(self.mask)
            b, e = mask[axis]
            mask[axis] = ((b + step - 1) // step, (e + step - 1) // step)
            mask = tuple(mask)
        return View(tuple(shape), tuple(strides), self.offset, mask)

    def pad(self, pads: tuple) -> View:
        """Pad with (lo, hi) per axis; padded positions are masked (read as zero)."""
        if all(lo == 0 and hi == 0 for lo, hi in pads):
            return self
        shape = tuple(s + lo + hi for s, (lo, hi) in zip(self.shape, pads))
        offset = self.offset - sum(lo * st for (lo, _), st in zip(pads, self.strides))
        old_mask = self.mask or tuple((0, s) for s in self.shape)
        mask = tuple((b + lo, e + lo) for (b, e), (lo, _) in zip(old_mask, pads))
        return View(shape, self.strides, offset, mask)

    def window(self, axis: int, size: int, step: int, dilation: int) -> View | None:
        """Sliding windows along axis: it becomes two axes (position, offset) reading
        element position*step + offset*dilation, so im2col needs no copy. None when the axis
        is masked (the window of a padded axis is not a per-axis mask)."""
        n = self.shape[axis]
        if self.mask and self.mask[axis] != (0, n):
            return None
        span = (size - 1) * dilation + 1
        out = (n - span) // step + 1 if n >= span else 0
        st = self.strides[axis]
        shape = self.shape[:axis] + (out, size) + self.shape[axis + 1 :]
        strides = self.strides[:axis] + (st * step, st * dilation) + self.strides[axis + 1 :]
        mask = None
        if self.mask:
            mask = self.mask[:axis] + ((0, out), (0, size)) + self.mask[axis + 1 :]
        return View(shape, strides, self.offset, mask)

    def reshape(self, new_shape: tuple) -> View | None:
        if self.shape == new_shape:
            return self
        if self.contiguous:
            return View.create(new_shape)
        if self.mask is not None:
            # Masks survive only reshapes that add or remove size-1 axes, and an empty mask on a
            # size-1 axis (a fully padded view) must not be dropped with that axis.
            if any(b >= e for (b, e), s in zip(self.mask, self.shape) if s == 1):
                return None
            old = [(s, st, m) for s, st, m in zip(self.shape, self.strides, self.mask) if s != 1]
            if [s for s in new_shape if s != 1] != [s for s, _, _ in old]:
                return None
            it = iter(old)
            strides, mask = [], []
            for s in new_shape:
                if s == 1:
                    strides.append(0)
                    mask.append((0, 1))
                else:
                    _, st, m = next(it)
                    strides.append(st)
                    mask.append(m)
            return View(new_shape, tuple(strides), self.offset, tuple(mask))
        strides = _reshape_strides(self.shape, self.strides, new_shape)
        return None if strides is None else View(new_shape, strides, self.offset)


def _reshape_strides(shape, strides, new_shape):
    """Strides that give new_shape the same element order, or None (numpy's no-copy rule)."""
    old = [(s, st) for s, st in zip(shape, strides) if s != 1]
    new = [s for s in new_shape]
    out = [0] * len(new)
    oi, ni = 0, 0
    while ni < len(new) and new[ni] == 1:
        ni += 1
    while oi < len(old) or ni < len(new):
        if ni < len(new) and new[ni] == 1:
            ni += 1
            continue
        if oi >= len(old) or ni >= len(new):
            return None
        # Grow groups of old and new axes until their products match.
        oj, nj = oi + 1, ni + 1
        op, np_ = old[oi][0], new[ni]
        while op != np_:
            if op < np_:
                if oj >= len(old):
                    return None
                op *= old[oj][0]
                oj += 1
            else:
                if nj >= len(new):
                    return None
                np_ *= new[nj]
                nj += 1
        for k in range(oi, oj - 1):  # the old group must be contiguous in memory
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        st = old[oj - 1][1]
        for k in range(nj - 1, ni - 1, -1):
            out[k] = st if new[k] != 1 else 0
            st *= new[k]
        oi, ni = oj, nj
    return tuple(out)


class ShapeTracker:
    """A stack of views; views[-1] has the logical shape, views[0] addresses the buffer."""

    __slots__ = ("views", "_hash")

    def __init__(self, views: tuple):
        self.views = views
        self._hash = hash(views)

    @staticmethod
    def contiguous(shape: tuple) -> ShapeTracker:
        return _contiguous_tracker(tuple(shape))

    shape = property(lambda self: self.views[-1].shape)
    size = property(lambda self: math.prod(self.views[-1].shape))

    @property
    def is_contiguous(self) -> bool:
        return len(self.views) == 1 and self.views[0].contiguous

    @property
    def single_strided(self) -> bool:
        """One view without mask: numpy can read it with as_strided, backends with strides."""
        return len(self.views) == 1 and self.views[0].mask is None

    def __eq__(self, other):
        return isinstance(other, ShapeTracker) and self.views == other.views

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"ShapeTracker({self.views})"

    def _with_last(self, v: View) -> ShapeTracker:
        return ShapeTracker(self.views[:-1] + (v,))

    def permute(self, perm):
        return self._with_last(self.views[-1].permute(tuple(perm)))

    def expand(self, shape):
        return self._with_last(self.views[-1].expand(tuple(shape)))

    def shrink(self, bounds):
        return self._with_last(self.views[-1].shrink(tuple(bounds)))

    def flip(self, axes):
        return self._with_last(self.views[-1].flip(tuple(axes)))

    def stride(self, axis, step):
        return self._with_last(self.views[-1].stride(axis, step))

    def pad(self, pads):
        return self._with_last(self.views[-1].pad(tuple(pads)))

    def window(self, axis: int, size: int, step: int = 1, dilation: int = 1) -> ShapeTracker:
        """Split axis into (window position, offset in window); see View.window."""
        v = self.views[-1].window(axis, size, step, dilation)
        if v is None:
            v = View.create(self.shape).window(axis, size, step, dilation)
            return ShapeTracker(self.views + (v,))
        return self._with_last(v)

    def reshape(self, new_shape) -> ShapeTracker:
        new_shape = tuple(new_shape)
        v = self.views[-1].reshape(new_shape)
        if v is not None:
            return self._with_last(v)
        return ShapeTracker(self.views + (View.create(new_shape),))


@lru_cache(maxsize=4096)
def _contiguous_tracker(shape: tuple) -> ShapeTracker:
    return ShapeTracker((View.create(shape),))
