"""Vectorized evaluation of Kernels and Routines with numpy (the cpu backend's fast path).

Every node evaluates to an array broadcastable to the kernel's iteration shape, with size-1
axes where it does not vary, so broadcast inputs cost nothing and a sum of a product of two
factors becomes one einsum (a BLAS matmul for dot_general).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, Routine

_NP = {}


def np_dtype(d):
    t = _NP.get(d.name)
    if t is None:
        t = _NP[d.name] = np.dtype(d.name)
    return t


def _vec(f, otype=np.float64):
    return np.frompyfunc(f, 1, 1)


def _erf_inv(y):
    # Newton refinement of an initial rational guess; float64 accurate.
    y = np.asarray(y, np.float64)
    out = np.full(y.shape, np.nan)
    ok = np.abs(y) < 1
    a = 0.147
    ln = np.log(1 - np.where(ok, y, 0) ** 2)
    t = 2 / (np.pi * a) + ln / 2
    x = np.sign(y) * np.sqrt(np.sqrt(t * t - ln / a) - t)
    erf = np.frompyfunc(math.erf, 1, 1)
    for _ in range(4):
        err = erf(x).astype(np.float64) - y
        x = x - err / (2 / np.sqrt(np.pi) * np.exp(-x * x))
    out[ok] = x[ok]
    out[y == 1] = np.inf
    out[y == -1] = -np.inf
    return out


def _digamma(x):
    x = np.asarray(x, np.float64)
    res = np.zeros_like(x)
    refl = x < 0.5
    xr = np.where(refl, 1 - x, x)
    acc = np.zeros_like(x)
    for _ in range(6):
        small = xr < 6
        acc = acc - np.where(small, 1 / xr, 0)
        xr = np.where(small, xr + 1, xr)
    inv = 1 / xr
    inv2 = inv * inv
    series = np.log(xr) - 0.5 * inv - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    res = acc + series
    with np.errstate(all="ignore"):
        res = np.where(refl, res - np.pi / np.tan(np.pi * x), res)
        res = np.where((x <= 0) & (x == np.floor(x)), np.nan, res)
    return res


def _in_f64(fn):
    def run(a):
        return np.asarray(fn(np.asarray(a, np.float64)).astype(np.float64)).astype(a.dtype)

    return run


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_lgamma = np.frompyfunc(lambda v: math.lgamma(v) if not (v <= 0 and v == math.floor(v)) else math.inf, 1, 1)


def _round_away(a):
    return np.sign(a) * np.floor(np.abs(a) + np.asarray(0.5, a.dtype))


def _sign(a):
    if a.dtype.kind == "u":
        return (a > 0).astype(a.dtype)
    return np.sign(a)


def _logistic(a):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-a))).astype(a.dtype)


def _popcnt(a):
    return np.bitwise_count(a).astype(a.dtype)


def _clz(a):
    bits = a.dtype.itemsize * 8
    u = a.astype(np.uint64) & np.uint64((1 << bits) - 1)
    out = np.full(a.shape, bits, np.int64)
    for b in range(bits):
        out = np.where((u >> np.uint64(b)) & np.uint64(1), bits - 1 - b, out)
    return out.astype(a.dtype)


UNARY = {
    "neg": np.negative, "not": lambda a: np.logical_not(a) if a.dtype == np.bool_ else np.invert(a),
    "abs": np.abs, "sign": _sign, "floor": np.floor, "ceil": np.ceil, "round_even": np.rint,
    "round_away": _round_away, "trunc": np.trunc, "exp": np.exp, "exp2": np.exp2, "log": np.log,
    "log2": np.log2, "log1p": np.log1p, "expm1": np.expm1, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh, "sqrt": np.sqrt,
    "rsqrt": lambda a: (1 / np.sqrt(a)).astype(a.dtype), "cbrt": np.cbrt,
    "erf": _in_f64(_erf), "erfc": _in_f64(_erfc), "erf_inv": _in_f64(_erf_inv),
    "lgamma": _in_f64(_lgamma), "digamma": _in_f64(_digamma), "logistic": _logistic,
    "isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite, "popcnt": _popcnt, "clz": _clz,
    "reciprocal": lambda a: (1 / a).astype(a.dtype),
}


def _int_div(a, b):
    # C semantics (truncate toward zero); x / 0 = -1 like XLA on CPU.
    zero = b == 0
    bs = np.where(zero, 1, b)
    q = a // bs
    fix = (q < 0) & (q * bs != a)
    q = np.where(fix, q + 1, q)
    return np.where(zero, np.array(-1).astype(a.dtype), q).astype(a.dtype)


def _int_rem(a, b):
    zero = b == 0
    bs = np.where(zero, 1, b)
    r = np.fmod(a, bs)
    return np.where(zero, a, r).astype(a.dtype)


def _shift(kind):
    def f(a, b):
        bits = a.dtype.itemsize * 8
        big = (b < 0) | (b >= bits)
        bb = np.where(big, 0, b).astype(a.dtype)
        if kind == "shl":
            r = np.left_shift(a, bb)
            return np.where(big, np.zeros((), a.dtype), r).astype(a.dtype)
        r = np.right_shift(a, bb)
        fill = np.where(a < 0, np.array(-1).astype(a.dtype), np.zeros((), a.dtype)) if a.dtype.kind == "i" else 0
        return np.where(big, fill, r).astype(a.dtype)

    return f


def _max(a, b):
    return np.maximum(a, b)


def _pow(a, b):
    return np.power(a, b)


BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "max": _max, "min": np.minimum,
    "pow": _pow, "atan2": np.arctan2, "nextafter": np.nextafter, "xor": None,
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal,
    "ne": np.not_equal, "shl": _shift("shl"), "shr": _shift("shr"),
    "idiv": np.floor_divide, "mod": np.mod,
}


def _binary(op, a, b):
    if op == "div":
        if a.dtype.kind in "iu":
            return _int_div(a, b)
        return np.true_divide(a, b).astype(a.dtype)
    if op == "rem":
        if a.dtype.kind in "iu":
            return _int_rem(a, b)
        return np.fmod(a, b)
    if op in ("and", "or", "xor"):
        if a.dtype == np.bool_:
            return {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[op](a, b)
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op](a, b)
    return BINARY[op](a, b)


def _cast(a, to):
    t = np_dtype(to)
    if a.dtype.kind == "f" and to.kind in "iu":
        info = np.iinfo(t)
        with np.errstate(invalid="ignore"):
            r = np.trunc(np.nan_to_num(a, nan=0.0, posinf=info.max, neginf=info.min).astype(np.float64))
            r = np.clip(r, info.min, info.max)
        return r.astype(t)
    if to.kind == "b":
        return a != 0
    return a.astype(t)


class Evaluator:
    """Evaluates one kernel's nodes over an iteration shape, with given input arrays."""

    def __init__(self, shape, ins, acc=None):
        self.shape = shape
        self.ins = ins
        self.acc = acc
        self.nd = len(shape)
        self.memo = {}

    def idx(self, k):
        s = [1] * self.nd
        s[k] = self.shape[k]
        return np.arange(self.shape[k], dtype=np.int64).reshape(s)

    def ev(self, n):
        m = self.memo.get(n)
        if m is not None:
            return m
        op = n.op
        if op == "const":
            r = np.array(n.arg, dtype=np_dtype(n.dtype)).reshape((1,) * self.nd)
        elif op == "idx":
            r = self.idx(n.arg)
        elif op == "acc":
            r = self.acc
        elif op == "load":
            r = self.load(*n.arg)
        elif op == "gather":
            off = self.ev(n.srcs[0])
            buf = self.ins[n.arg]
            r = buf[np.clip(off, 0, max(buf.size - 1, 0)).astype(np.int64)]
        elif op == "cast":
            r = _cast(self.ev(n.srcs[0]), n.dtype)
        elif op == "bitcast":
            r = np.ascontiguousarray(self.ev(n.srcs[0])).view(np_dtype(n.dtype))
        elif op == "where":
            c, a, b = (self.ev(s) for s in n.srcs)
            r = np.where(c, a, b)
        elif op in ir.UNARY_OPS:
            with np.errstate(all="ignore"):
                r = UNARY[op](self.ev(n.srcs[0]))
        else:
            with np.errstate(all="ignore"):
                r = _binary(op, self.ev(n.srcs[0]), self.ev(n.srcs[1]))
        r = np.asarray(r)
        if r.dtype != np_dtype(n.dtype):
            r = r.astype(np_dtype(n.dtype))
        if r.ndim < self.nd:
            r = r.reshape((1,) * (self.nd - r.ndim) + r.shape)
        self.memo[n] = r
        return r

    def load(self, i, tr):
        buf = self.ins[i]
        nd_tr = len(tr.shape)
        if tr.single_strided:
            v = tr.views[0]
            shape = tuple(1 if st == 0 else s for s, st in zip(v.shape, v.strides))
            if 0 in v.shape:
                shape = v.shape
            item = buf.itemsize
            base = buf[v.offset:] if v.offset < buf.size else buf[:0]
            r = as_strided(base, shape, tuple(st * item for st in v.strides), writeable=False)
        else:
            index = tuple(ir.idx(k) for k in range(nd_tr))
            with ir.shape_context(tr.shape):
                off, valid = ir.view_index(tr, index)
            sub = Evaluator(tr.shape, self.ins)
            o = sub.ev(off).astype(np.int64)
            ok = sub.ev(valid)
            safe = np.where(ok, o, 0)
            vals = buf[np.clip(safe, 0, max(buf.size - 1, 0))] if buf.size else np.zeros(safe.shape, buf.dtype)
            r = np.where(ok, vals, np.zeros((), buf.dtype))
        if nd_tr < self.nd:
            r = r.reshape(r.shape + (1,) * (self.nd - nd_tr))
        return r


def _reduce(op, body, axes, shape):
    full = np.broadcast_to(body, shape)
    if op == "sum":
        return np.sum(full, axis=axes, keepdims=True, dtype=full.dtype)
    if op == "prod":
        return np.prod(full, axis=axes, keepdims=True, dtype=full.dtype)
    if op == "max":
        return np.max(full, axis=axes, keepdims=True)
    if op == "min":
        return np.min(full, axis=axes, keepdims=True)
    if op == "and":
        return np.all(full, axis=axes, keepdims=True)
    if op == "or":
        return np.any(full, axis=axes, keepdims=True)
    if op in ("argmax", "argmin"):
        (ax,) = axes
        r = np.argmax(full, axis=ax) if op == "argmax" else np.argmin(full, axis=ax)
        if full.dtype.kind == "f":  # first NaN wins, like JAX
            nan = np.isnan(full)
            anynan = nan.any(axis=ax)
            r = np.where(anynan, np.argmax(nan, axis=ax), r)
        return np.expand_dims(r, ax).astype(np.int32)
    raise NotImplementedError(op)


def _einsum_sum(ev: Evaluator, body, shape, axes):
    """sum over axes of a*b via einsum, skipping broadcast (size-1) axes of each factor."""
    a, b = (ev.ev(s) for s in body.srcs)
    letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
    if len(shape) > len(letters):
        return None

    def sub(x):
        keep = [i for i in range(len(shape)) if x.shape[i] != 1 or shape[i] == 1]
        return x.reshape([x.shape[i] for i in keep]), "".join(letters[i] for i in keep)

    xa, sa = sub(a)
    xb, sb = sub(b)
    present = set(sa) | set(sb)
    out_axes = [i for i in range(len(shape)) if i not in axes]
    so = "".join(letters[i] for i in out_axes if letters[i] in present)
    r = np.einsum(f"{sa},{sb}->{so}", xa, xb, optimize=True)
    # Axes that neither factor has: reduced ones multiply by their size, kept ones broadcast.
    missing_red = [i for i in axes if letters[i] not in present]
    if missing_red:
        r = r * math.prod(shape[i] for i in missing_red)
    full_out = [1 if i in axes else shape[i] for i in range(len(shape))]
    r_shape = [shape[i] if letters[i] in so else 1 for i in range(len(shape))]
    r = np.asarray(r, dtype=a.dtype).reshape([1 if i in axes else r_shape[i] for i in range(len(shape))])
    return np.broadcast_to(r, full_out)


def run_kernel(k: Kernel, ins: list):
    """Evaluate kernel k on typed 1-D input arrays; returns the flat output array."""
    if k.reduce_op is None:
        ev = Evaluator(k.shape, ins)
        out = np.broadcast_to(ev.ev(k.epilogue), k.shape)
        return np.ascontiguousarray(out).reshape(-1)
    ev = Evaluator(k.shape, ins)
    body = k.body
    acc = None
    if k.reduce_op == "sum" and body.op == "mul" and body.dtype.kind == "f" and 0 not in k.shape:
        acc = _einsum_sum(ev, body, k.shape, k.reduce_axes)
    if acc is None:
        acc = _reduce(k.reduce_op, ev.ev(body), k.reduce_axes, k.shape)
    out_shape = k.out_shape
    ev2 = Evaluator(out_shape, ins, acc=np.asarray(acc))
    out = np.broadcast_to(ev2.ev(k.epilogue), out_shape)
    return np.ascontiguousarray(out).reshape(-1)


# --- routines --------------------------------------------------------------------------------


# Extra routines register here: name -> fn(routine, input arrays shaped per in_avals) -> outputs.
ROUTINES: dict = {}


def run_routine(r: Routine, ins: list) -> list:
    p = r.p
    ins = [a[: math.prod(av.shape)].reshape(av.shape) for a, av in zip(ins, r.in_avals)]
    name = r.name
    if name in ROUTINES:
        return ROUTINES[name](r, ins)
    if name == "sort":
        keys = ins[: p["num_keys"]]
        if ins[0].ndim == 0 or ins[0].shape[-1] <= 1:
            return [a.copy() for a in ins]
        # np.lexsort is stable and takes its primary key last. NaNs sort after +inf, and
        # -0.0 ties with 0.0, as in JAX.
        pri = []
        for k in reversed(keys):
            if k.dtype.kind == "f":
                nan = np.isnan(k)
                pri += [np.where(nan, np.inf, k).astype(np.float64), nan]
            else:
                pri.append(k.astype(np.int64) if k.dtype == np.bool_ else k)
        perm = np.lexsort(pri, axis=-1)
        return [np.take_along_axis(a, perm, axis=-1) for a in ins]
    if name == "cumulative":
        (x,) = ins
        op, rev = p["op"], p["reverse"]
        if rev:
            x = x[..., ::-1]
        with np.errstate(all="ignore"):
            if op == "sum":
                y = np.cumsum(x, axis=-1, dtype=x.dtype)
            elif op == "prod":
                y = np.cumprod(x, axis=-1, dtype=x.dtype)
            elif op == "max":
                y = np.maximum.accumulate(x, axis=-1)
            elif op == "min":
                y = np.minimum.accumulate(x, axis=-1)
            else:
                y = np.logaddexp.accumulate(x, axis=-1)
        if rev:
            y = y[..., ::-1]
        return [np.ascontiguousarray(y)]
    if name == "cholesky":
        (a,) = ins
        return [_cholesky(a)]
    if name == "triangular_solve":
        a, b = ins
        return [_triangular_solve(a, b, **p)]
    raise NotImplementedError(f"cpu backend: routine {name}")


def _cholesky(a):
    out = np.empty_like(a)
    flat_a = a.reshape((-1,) + a.shape[-2:])
    flat_o = out.reshape((-1,) + a.shape[-2:])
    for i in range(flat_a.shape[0]):
        try:
            flat_o[i] = np.linalg.cholesky(flat_a[i].astype(np.float64)).astype(a.dtype)
        except np.linalg.LinAlgError:
            flat_o[i] = np.nan
    return out


def _triangular_solve(a, b, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a = a.astype(np.float64)
    m = a.shape[-1]
    tri = np.tril(a) if lower else np.triu(a)
    if unit_diagonal:
        tri = tri - np.eye(m) * np.diagonal(tri, axis1=-2, axis2=-1)[..., None, :] + np.eye(m)
    if transpose_a:
        tri, lower = np.swapaxes(tri, -1, -2), not lower
    bb = b.astype(np.float64)
    with np.errstate(all="ignore"):
        if left_side:
            x = _solve(tri, bb, lower)
        else:  # x @ tri = b  <=>  tri^T @ x^T = b^T
            x = np.swapaxes(_solve(np.swapaxes(tri, -1, -2), np.swapaxes(bb, -1, -2), not lower), -1, -2)
    return x.astype(b.dtype)


def _solve(t, b, lower):
    """Forward/back substitution (singular systems give inf/nan rather than an error)."""
    t = np.broadcast_to(t, b.shape[:-2] + t.shape[-2:])
    m = t.shape[-1]
    x = np.zeros(b.shape, np.float64)
    order = range(m) if lower else range(m - 1, -1, -1)
    for i in order:
        s = b[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
        x[..., i, :] = s / t[..., i, i][..., None]
    return x


from pyjax.backends.cpu import routines_indexing, routines_linalg  # noqa: E402

routines_indexing.register_numpy(ROUTINES)
routines_linalg.register_numpy(ROUTINES)
