"""Vectorized evaluation of Kernels and Routines with numpy (the cpu backend's fast path).

Every node evaluates to an array broadcastable to the kernel's iteration shape, with size-1
axes where it does not vary, so broadcast inputs cost nothing and a sum of a product of two
factors becomes one einsum (a BLAS matmul for dot_general).
"""

from __future__ import annotations

import math

import numpy as np

from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, Routine
from pyjax.core import dtypes

_NP = {}


def np_dtype(d):
    t = _NP.get(d.name)
    if t is None:
        if d.name in dtypes.INTN:  # computed as int8/uint8 and wrapped to their bits (intn_wrap)
            t = np.dtype(dtypes.STRUCT_FORMAT[d.name])
        else:
            t = _ml_dtype(d.name) if d.name in dtypes.ML_DTYPES else np.dtype(d.name)
        _NP[d.name] = t
    return t


def intn_wrap(r, d):
    """r (int8/uint8 values) wrapped into the range of sub-byte integer dtype d, as its arithmetic wraps."""
    if d.kind == "u":
        return r & np.uint8((1 << d.bits) - 1)
    shift = np.int8(8 - d.bits)
    return (r << shift) >> shift


def _ml_dtype(name: str):
    """numpy has no bfloat16/float8: ml_dtypes (installed with JAX) adds them, computing each op in float32 and rounding."""
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(f"{name} on the cpu backend with numpy needs the ml_dtypes package") from None
    return np.dtype(getattr(ml_dtypes, name))


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
    x = np.copysign(np.sqrt(np.sqrt(t * t - ln / a) - t), y)  # erf_inv(-0) = -0, as JAX
    erf = np.frompyfunc(math.erf, 1, 1)
    for _ in range(4):
        err = np.asarray(erf(x), np.float64) - y  # frompyfunc gives a Python float for 0-d x
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
    series = (
        np.log(xr) - 0.5 * inv - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    )
    res = acc + series
    with np.errstate(all="ignore"):
        res = np.where(refl, res - np.pi / np.tan(np.pi * x), res)
        res = np.where((x <= 0) & (x == np.floor(x)), np.nan, res)
    return res


def _in_f64(fn):
    def run(a):
        # frompyfunc returns a Python float for 0-d input: asarray before astype
        return np.asarray(np.asarray(fn(np.asarray(a, np.float64))).astype(np.float64)).astype(a.dtype)

    return run


_erf = np.frompyfunc(math.erf, 1, 1)
_erfc = np.frompyfunc(math.erfc, 1, 1)
_lgamma = np.frompyfunc(
    lambda v: math.inf if math.isinf(v) else (math.lgamma(v) if not (v <= 0 and v == math.floor(v)) else math.inf), 1, 1
)


def _round_away(a):
    return np.sign(a) * np.floor(np.abs(a) + np.asarray(0.5, a.dtype))


def _sign(a):
    if a.dtype.kind == "u":
        return (a > 0).astype(a.dtype)
    return np.sign(a)


def _logistic(a):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-a))).astype(a.dtype)


def _popcnt(a, bits=None):
    # bits of the two's complement, like XLA (numpy counts the bits of |a| for signed ints); a sub-byte
    # dtype's own `bits` only
    u = a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "i" else a
    if bits is not None:
        u = u & np.uint8((1 << bits) - 1)
    return np.bitwise_count(u).astype(a.dtype)


def _clz(a, bits=None):
    bits = a.dtype.itemsize * 8 if bits is None else bits
    u = a.astype(np.uint64) & np.uint64((1 << bits) - 1)
    out = np.full(a.shape, bits, np.int64)
    for b in range(bits):
        out = np.where((u >> np.uint64(b)) & np.uint64(1), bits - 1 - b, out)
    return out.astype(a.dtype)


UNARY = {
    "neg": np.negative,
    "not": lambda a: np.logical_not(a) if a.dtype == np.bool_ else np.invert(a),
    "abs": np.abs,
    "sign": _sign,
    "floor": np.floor,
    "ceil": np.ceil,
    "round_even": np.rint,
    "round_away": _round_away,
    "trunc": np.trunc,
    "exp": np.exp,
    "exp2": np.exp2,
    "log": np.log,
    "log2": np.log2,
    "log1p": np.log1p,
    "expm1": np.expm1,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
    "sqrt": np.sqrt,
    "rsqrt": lambda a: (1 / np.sqrt(a)).astype(a.dtype),
    "cbrt": np.cbrt,
    "erf": _in_f64(_erf),
    "erfc": _in_f64(_erfc),
    "erf_inv": _in_f64(_erf_inv),
    "lgamma": _in_f64(_lgamma),
    "digamma": _in_f64(_digamma),
    "logistic": _logistic,
    "isnan": np.isnan,
    "isinf": np.isinf,
    "isfinite": np.isfinite,
    "popcnt": _popcnt,
    "clz": _clz,
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
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "max": _max,
    "min": np.minimum,
    "pow": _pow,
    "atan2": np.arctan2,
    "nextafter": np.nextafter,
    "xor": None,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "ne": np.not_equal,
    "shl": _shift("shl"),
    "shr": _shift("shr"),
    "idiv": np.floor_divide,
    "mod": np.mod,
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
    if (a.dtype.kind == "f" or a.dtype.name in dtypes.NARROW_FLOATS) and to.kind in "iu":  # ml_dtypes' are kind V
        info = dtypes.iinfo(to)
        with np.errstate(invalid="ignore"):
            # through float64: numpy sees no NaN in ml_dtypes' floats
            r = np.trunc(np.nan_to_num(a.astype(np.float64), nan=0.0, posinf=info.max, neginf=info.min))
            r = np.clip(r, info.min, info.max)
        return r.astype(t)
    if to.kind == "b":
        return a != 0
    return intn_wrap(a.astype(t), to) if to.name in dtypes.INTN else a.astype(t)


class Plan:
    """A node DAG compiled to a list of closures over a value table, for one iteration shape.

    Index arithmetic of views depends only on the shape, so it is precomputed once here; at
    run time loads are strided numpy views (or one fancy-index) of the input buffers.
    """

    def __init__(self, root, shape: tuple):
        self.shape = shape
        self.nd = len(shape)
        self.slot: dict = {}
        self.init: list = []
        self.steps: list = []
        for n in ir.walk(root):
            self._add(n)
        self.out = self.slot[root]

    def _const(self, value):
        self.init.append(value)
        return len(self.init) - 1

    def _step(self, fn):
        k = self._const(None)
        self.steps.append((k, fn))
        return k

    def _bcast(self, r):
        r = np.asarray(r)
        return r.reshape((1,) * (self.nd - r.ndim) + r.shape) if r.ndim < self.nd else r

    def _add(self, n):
        op, slot = n.op, self.slot
        nd, dt = self.nd, np_dtype(n.dtype)
        if op == "const":
            k = self._const(np.array(n.arg, dtype=dt).reshape((1,) * nd))
        elif op == "idx":
            s = [1] * nd
            s[n.arg] = self.shape[n.arg]
            k = self._const(np.arange(self.shape[n.arg], dtype=np.int64).reshape(s))
        elif op == "acc":
            k = self._step(lambda ins, v, acc: acc)
        elif op == "load":
            k = self._step(self._loader(*n.arg, dt))
        elif op == "gather":
            o, i = slot[n.srcs[0]], n.arg

            def gather(ins, v, acc, o=o, i=i):
                buf = ins[i]
                return buf[np.clip(v[o], 0, max(buf.size - 1, 0)).astype(np.int64)]

            k = self._step(gather)
        else:
            a = [slot[x] for x in n.srcs]
            if op == "cast":
                to = n.dtype
                fn = lambda ins, v, acc, a0=a[0], to=to: _cast(v[a0], to)  # noqa: E731
            elif op == "bitcast":
                fn = lambda ins, v, acc, a0=a[0], dt=dt: _bitcast(v[a0], dt)  # noqa: E731
            elif op == "where":
                fn = lambda ins, v, acc, a=a: np.where(v[a[0]], v[a[1]], v[a[2]])  # noqa: E731
            elif op in ir.UNARY_OPS:
                f = UNARY[op]
                if op in ("popcnt", "clz") and n.dtype.name in dtypes.INTN:  # over the dtype's bits
                    f = lambda x, f=f, bits=n.dtype.bits: f(x, bits)  # noqa: E731
                fn = lambda ins, v, acc, f=f, a0=a[0]: f(v[a0])  # noqa: E731
            else:
                fn = lambda ins, v, acc, op=op, a=a: _binary(op, v[a[0]], v[a[1]])  # noqa: E731

            def step(ins, v, acc, fn=fn, dt=dt, bc=self._bcast):
                r = fn(ins, v, acc)
                if type(r) is not np.ndarray or r.dtype != dt:
                    r = np.asarray(r).astype(dt, copy=False)
                return bc(r)

            if n.dtype.name in dtypes.INTN and op not in ("cast", "where"):
                step = lambda ins, v, acc, step=step, d=n.dtype: intn_wrap(step(ins, v, acc), d)  # noqa: E731

            k = self._step(step)
        slot[n] = k

    def _loader(self, i, tr, dt):
        nd_tr = len(tr.shape)
        pad = (1,) * (self.nd - nd_tr)
        if tr.single_strided:
            v = tr.views[0]
            shape = tuple(1 if st == 0 else sz for sz, st in zip(v.shape, v.strides)) + pad
            if 0 in v.shape:
                shape = v.shape + pad
            item = dt.itemsize
            strides = tuple(st * item for st in v.strides) + (0,) * len(pad)
            off = v.offset * item
            if tr.is_contiguous and not pad and 0 not in v.shape:
                n = tr.size
                return lambda ins, vals, acc: ins[i][:n].reshape(shape)

            def load(ins, vals, acc):
                buf = ins[i]
                if buf.size == 0:
                    return np.zeros(shape, dt)
                return np.ndarray(shape, dt, buffer=buf, offset=off, strides=strides)

            return load
        index = tuple(ir.idx(k) for k in range(nd_tr))
        with ir.shape_context(tr.shape):
            off, valid = ir.view_index(tr, index)
        sub_off, sub_ok = Plan(off, tr.shape), Plan(valid, tr.shape)
        o = np.asarray(sub_off.run([], None), dtype=np.int64)
        ok = np.broadcast_to(sub_ok.run([], None), tr.shape)
        safe = np.broadcast_to(np.where(ok, o, 0), tr.shape).reshape(tr.shape + pad)
        okp = ok.reshape(tr.shape + pad)
        zero = np.zeros((), dt)

        def gather_load(ins, vals, acc):
            buf = ins[i]
            if buf.size == 0:
                return np.zeros(safe.shape, dt)
            return np.where(okp, buf[np.minimum(safe, buf.size - 1)], zero)

        return gather_load

    def run(self, ins, acc=None):
        v = list(self.init)
        with np.errstate(all="ignore"):
            for k, fn in self.steps:
                v[k] = fn(ins, v, acc)
        return v[self.out]


def _bitcast(x, dt):
    """Reinterpret bits, keeping 0-d arrays 0-d (ascontiguousarray makes them 1-d)."""
    return np.ascontiguousarray(x).view(dt).reshape(np.shape(x))


class KernelExe:
    """A Kernel prepared for numpy: plans for body and epilogue."""

    def __init__(self, k: Kernel):
        self.k = k
        self.epi = Plan(k.epilogue, k.out_shape if k.reduce_op else k.shape)
        self.body = Plan(k.body, k.shape) if k.reduce_op else None
        self.einsum = k.reduce_op == "sum" and k.body.op == "mul" and k.body.dtype.kind == "f" and 0 not in k.shape
        if self.einsum:
            self.factors = [Plan(s, k.shape) for s in k.body.srcs]

    def __call__(self, ins):
        k = self.k
        if self.body is None:
            out = self.epi.run(ins)
            if out.shape != k.shape:
                out = np.broadcast_to(out, k.shape)
            return np.ascontiguousarray(out).reshape(-1)
        if self.einsum:
            acc = _einsum_sum([f.run(ins) for f in self.factors], k.shape, k.reduce_axes)
        else:
            acc = _reduce(k.reduce_op, self.body.run(ins), k.reduce_axes, k.shape)
        out = self.epi.run(ins, np.asarray(acc))
        if out.shape != k.out_shape:
            out = np.broadcast_to(out, k.out_shape)
        return np.ascontiguousarray(out).reshape(-1)


def _reduce(op, body, axes, shape):
    full = np.broadcast_to(body, shape)
    if op == "sum":
        if full.dtype == np.float32:  # numpy adds rows one by one along strided axes: 100x JAX's error
            return np.sum(full, axis=axes, keepdims=True, dtype=np.float64).astype(np.float32)
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


_EINSUM_PATHS: dict = {}


def _einsum_sum(factors, shape, axes):
    """sum over axes of a*b via einsum, skipping broadcast (size-1) axes of each factor."""
    a, b = factors
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
    spec = f"{sa},{sb}->{so}"
    path = _EINSUM_PATHS.get((spec, xa.shape, xb.shape))
    if path is None:  # planning is costly; a kernel's operand shapes never change
        path = _EINSUM_PATHS[(spec, xa.shape, xb.shape)] = np.einsum_path(spec, xa, xb, optimize="greedy")[0]
    r = np.einsum(spec, xa, xb, optimize=path)
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
    return KernelExe(k)(ins)


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
    """Lower Cholesky factors of the lower triangles, batched, in float64. A pivot <= 0 fails its matrix (NaN
    lower triangle); a NaN pivot does not fail, NaN just flows on (LAPACK's potrf as JAX runs it)."""
    m = a.shape[-1]
    A = a.reshape((-1, m, m)).astype(np.float64)
    L = np.zeros_like(A)
    failed = np.zeros(A.shape[0], bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        for j in range(m):
            s = A[:, j, j] - np.einsum("bk,bk->b", L[:, j, :j], L[:, j, :j])
            failed |= s <= 0
            L[:, j, j] = np.sqrt(np.where(s <= 0, 0.0, s))
            rest = A[:, j + 1 :, j] - np.einsum("bik,bk->bi", L[:, j + 1 :, :j], L[:, j, :j])
            L[:, j + 1 :, j] = rest / L[:, j, j : j + 1]
    L[failed] = np.where(np.tri(m, dtype=bool), np.nan, 0.0)
    return L.astype(a.dtype).reshape(a.shape)


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
