"""cpu backend routines for the indexing primitives (numpy and pure-Python implementations).

`scatter` (params axes, kind): inputs operand x, indices (batch + (k,)), updates (batch + the
operand's non-indexed axes); output x with each update combined (set/add/mul/min/max) at its
position. Updates whose index is out of range are dropped; repeated indices apply in row-major
order of the updates, so for `set` the last one wins. Every output element is written.
"""

from __future__ import annotations

import itertools
import math


def _strides(shape) -> list:
    out, acc = [0] * len(shape), 1
    for i in range(len(shape) - 1, -1, -1):
        out[i] = acc
        acc *= shape[i]
    return out


def _scatter_numpy(r, ins):
    import numpy as np

    x, ind, u = ins
    p = r.p
    axes, kind = p["axes"], p["kind"]
    out = np.array(x, copy=True).reshape(-1)
    nd = x.ndim
    rest = [a for a in range(nd) if a not in axes]
    st = _strides(x.shape)
    batch = ind.shape[:-1]
    ok = np.ones(batch, dtype=bool)
    off = np.zeros(batch, dtype=np.int64)
    for j, a in enumerate(axes):
        v = ind[..., j]
        if v.dtype.kind == "u":
            good = v < x.shape[a]
            v = np.where(good, v, 0).astype(np.int64)
        else:
            v = v.astype(np.int64)
            good = (v >= 0) & (v < x.shape[a])
        ok &= good
        off += np.where(good, v, 0) * st[a]
    win_shape = tuple(x.shape[a] for a in rest)
    woff = np.zeros(win_shape, dtype=np.int64)
    for k, a in enumerate(rest):
        s = [1] * len(rest)
        s[k] = x.shape[a]
        woff = woff + (np.arange(x.shape[a], dtype=np.int64) * st[a]).reshape(s)
    nb = len(batch)
    full_off = off.reshape(batch + (1,) * len(rest)) + woff.reshape((1,) * nb + win_shape)
    sel = np.broadcast_to(ok.reshape(batch + (1,) * len(rest)), u.shape)
    o = np.broadcast_to(full_off, u.shape)[sel]
    vals = u[sel]
    if kind == "set":
        out[o] = vals
    elif kind == "add":
        np.add.at(out, o, vals)
    elif kind == "mul":
        np.multiply.at(out, o, vals)
    elif kind == "min":
        np.minimum.at(out, o, vals)
    elif kind == "max":
        np.maximum.at(out, o, vals)
    else:
        raise NotImplementedError(f"cpu backend: scatter kind {kind!r}")
    return [out.reshape(x.shape)]


def _combine(kind: str, is_float: bool, is_bool: bool):
    def nan_aware(pick):
        def f(a, b):
            if is_float and (a != a or b != b):
                return float("nan")
            return pick(a, b)

        return f

    if kind == "add":
        return (lambda a, b: a or b) if is_bool else (lambda a, b: a + b)
    if kind == "mul":
        return (lambda a, b: a and b) if is_bool else (lambda a, b: a * b)
    if kind == "min":
        return nan_aware(min)
    if kind == "max":
        return nan_aware(max)
    raise NotImplementedError(f"cpu backend: scatter kind {kind!r}")


def _wrap_int(v: int, dtype) -> int:
    bits = dtype.bits
    v &= (1 << bits) - 1
    if dtype.kind == "i" and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def _scatter_python(r, ins):
    x, ind, u = ins
    p = r.p
    axes, kind = p["axes"], p["kind"]
    xa, ia = r.in_avals[0], r.in_avals[1]
    shape = xa.shape
    out = list(x[: math.prod(shape)])
    st = _strides(shape)
    rest = [a for a in range(len(shape)) if a not in axes]
    k = len(axes)
    n_batch = math.prod(ia.shape[:-1])
    wins = list(itertools.product(*[range(shape[a]) for a in rest]))
    woffs = [sum(i * st[a] for i, a in zip(w, rest)) for w in wins]
    dt = xa.dtype
    fn = None if kind == "set" else _combine(kind, dt.kind == "f", dt.kind == "b")
    ui = 0
    for b in range(n_batch):
        row = ind[b * k : (b + 1) * k]
        base, good = 0, True
        for v, a in zip(row, axes):
            if not 0 <= v < shape[a]:
                good = False
                break
            base += v * st[a]
        if good:
            for wo in woffs:
                t = base + wo
                out[t] = u[ui] if fn is None else fn(out[t], u[ui])
                ui += 1
        else:
            ui += len(woffs)
    if dt.kind in "iu" and kind in ("add", "mul"):
        out = [_wrap_int(v, dt) for v in out]
    elif dt.kind == "b":
        out = [bool(v) for v in out]
    return [out]


def register_numpy(routines: dict) -> None:
    """Add name -> fn(routine, inputs shaped per routine.in_avals) -> list of outputs."""
    routines["scatter"] = _scatter_numpy


def register_python(routines: dict) -> None:
    """Add name -> fn(routine, flat input lists) -> list of flat output lists."""
    routines["scatter"] = _scatter_python
