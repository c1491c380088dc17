"""Pure-Python evaluation of Kernels and Routines: the cpu backend where numpy is absent.

Slow (one interpreted expression per element) but exact about dtypes: float32 results are
rounded through struct, integers wrap. Buffers are Python lists.
"""

from __future__ import annotations

import itertools
import math
import struct

from pyjax.backends.cpu.rounding import normalizer
from pyjax.compiler import ir
from pyjax.compiler.ir import Kernel, Routine
from pyjax.core import minifloat
from pyjax.core.dtypes import STRUCT_FORMAT as _FMT
from pyjax.core.minifloat import bfloat16_bits


def _safe(f):
    def g(*a):
        try:
            return f(*a)
        except (ValueError, OverflowError, ZeroDivisionError):
            return _fallback(f, *a)

    return g


def _fallback(f, *a):
    name = getattr(f, "__name__", "")
    x = a[0]
    if name in ("exp", "expm1", "cosh", "sinh"):
        if x != x:
            return x
        if name == "sinh":
            return math.copysign(math.inf, x)
        return math.inf if x > 0 else (-1.0 if name == "expm1" else 0.0)
    if name in ("log", "log1p", "log2"):
        lim = 0.0 if name != "log1p" else -1.0
        return -math.inf if x == lim else math.nan
    return math.nan


def _round_away(x):
    if x != x or x in (math.inf, -math.inf):
        return x
    return math.copysign(math.floor(abs(x) + 0.5), x)


def _round_even(x):
    if x != x or x in (math.inf, -math.inf):
        return x
    return float(round(x))


def _sign(x):
    if isinstance(x, float) and x != x:
        return x
    return type(x)((x > 0) - (x < 0))


def _digamma(x):
    if x <= 0 and x == math.floor(x):
        return math.nan
    acc = 0.0
    if x < 0.5:
        return _digamma(1 - x) - math.pi / math.tan(math.pi * x)
    while x < 6:
        acc -= 1 / x
        x += 1
    inv2 = 1 / (x * x)
    return (
        acc
        + math.log(x)
        - 0.5 / x
        - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    )


def _erf_inv(y):
    if y <= -1 or y >= 1:
        return -math.inf if y == -1 else (math.inf if y == 1 else math.nan)
    a = 0.147
    ln = math.log(1 - y * y)
    t = 2 / (math.pi * a) + ln / 2
    x = math.copysign(math.sqrt(math.sqrt(t * t - ln / a) - t), y)
    for _ in range(4):
        x -= (math.erf(x) - y) / (2 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _lgamma(x):
    if x <= 0 and x == math.floor(x):
        return math.inf
    return math.lgamma(x)


def _logistic(x):
    if x < -700:
        return 0.0
    return 1 / (1 + math.exp(-x))


def _atanh(x):
    if x in (1.0, -1.0):
        return math.copysign(math.inf, x)
    return math.atanh(x)


UNARY = {
    "neg": lambda x: -x,
    "abs": abs,
    "sign": _sign,
    "floor": lambda x: float(math.floor(x)) if math.isfinite(x) else x,
    "ceil": lambda x: float(math.ceil(x)) if math.isfinite(x) else x,
    "round_even": _round_even,
    "round_away": _round_away,
    "trunc": lambda x: float(math.trunc(x)) if math.isfinite(x) else x,
    "exp": _safe(math.exp),
    "exp2": _safe(lambda x: 2.0**x),
    "log": _safe(math.log),
    "log2": _safe(math.log2),
    "log1p": _safe(math.log1p),
    "expm1": _safe(math.expm1),
    "sin": _safe(math.sin),
    "cos": _safe(math.cos),
    "tan": _safe(math.tan),
    "asin": _safe(math.asin),
    "acos": _safe(math.acos),
    "atan": math.atan,
    "sinh": _safe(math.sinh),
    "cosh": _safe(math.cosh),
    "tanh": math.tanh,
    "asinh": math.asinh,
    "acosh": _safe(math.acosh),
    "atanh": _safe(_atanh),
    "sqrt": _safe(math.sqrt),
    "rsqrt": _safe(lambda x: 1 / math.sqrt(x) if x != 0 else math.inf),
    "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "erf": math.erf,
    "erfc": math.erfc,
    "erf_inv": _erf_inv,
    "lgamma": _safe(_lgamma),
    "digamma": _digamma,
    "logistic": _logistic,
    "isnan": lambda x: x != x,
    "isinf": lambda x: x in (math.inf, -math.inf),
    "isfinite": lambda x: math.isfinite(x),
    "reciprocal": _safe(lambda x: 1 / x),
}


def _fdiv(a, b):
    try:
        return a / b
    except ZeroDivisionError:
        if a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)


def _idiv_c(a, b):
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _irem_c(a, b):
    if b == 0:
        return a
    return a - _idiv_c(a, b) * b


def _fmod(a, b):
    try:
        return math.fmod(a, b)
    except ValueError:
        return math.nan


def _pow(a, b):
    try:
        r = a**b
        return r if not isinstance(r, complex) else math.nan
    except ZeroDivisionError:
        return math.inf
    except OverflowError:
        return math.inf


def _fmax(a, b):
    if a != a or b != b:
        return math.nan
    return max(a, b)


def _fmin(a, b):
    if a != a or b != b:
        return math.nan
    return min(a, b)


def binary(op, a, b, dtype):
    kind = dtype.kind
    if op in ir.PY_BINARY:
        return ir.PY_BINARY[op](a, b)
    if op == "div":
        return _fdiv(a, b) if kind == "f" else _idiv_c(a, b)
    if op == "rem":
        return _fmod(a, b) if kind == "f" else _irem_c(a, b)
    if op == "pow":
        return _pow(a, b)
    if op == "max":
        return _fmax(a, b) if kind == "f" else max(a, b)
    if op == "min":
        return _fmin(a, b) if kind == "f" else min(a, b)
    if op == "atan2":
        return math.atan2(a, b)
    if op == "nextafter":
        return math.nextafter(a, b)
    if op in ("and", "or", "xor"):
        if kind == "b":
            return {"and": a and b, "or": a or b, "xor": a != b}[op]
        return {"and": a & b, "or": a | b, "xor": a ^ b}[op]
    if op == "shl":
        return a << b if 0 <= b < dtype.bits else 0
    if op == "shr":
        if 0 <= b < dtype.bits:
            return a >> b
        return -1 if a < 0 else 0
    raise NotImplementedError(op)


def _cast(v, to):
    if to.kind == "b":
        return v != 0
    if to.kind in "iu":
        if isinstance(v, float):
            if v != v:
                return 0
            lo = -(1 << (to.bits - 1)) if to.kind == "i" else 0
            hi = (1 << (to.bits - 1)) - 1 if to.kind == "i" else (1 << to.bits) - 1
            if v in (math.inf, -math.inf):
                return hi if v > 0 else lo
            return max(lo, min(hi, math.trunc(v)))
        return int(v)
    return float(v)


def _bitcast(v, frm, to):
    if frm.name in minifloat.FORMATS:
        raw = bytes((minifloat.encode(v, frm.name),))
    else:
        raw = struct.pack("<H", bfloat16_bits(v)) if frm.name == "bfloat16" else struct.pack("<" + _FMT[frm.name], v)
    if to.name in minifloat.FORMATS:
        return minifloat.decode(raw[0], to.name)
    if to.name == "bfloat16":
        return struct.unpack("<f", struct.pack("<I", struct.unpack("<H", raw)[0] << 16))[0]
    return struct.unpack("<" + _FMT[to.name], raw)[0]


class _Elem:
    """Evaluates nodes at one index point."""

    def __init__(self, ins, index, acc=None):
        self.ins, self.index, self.acc = ins, index, acc
        self.memo = {}

    def ev(self, n):
        m = self.memo.get(n, _MISSING)
        if m is not _MISSING:
            return m
        op = n.op
        if op == "const":
            r = n.arg
        elif op == "idx":
            r = self.index[n.arg]
        elif op == "acc":
            r = self.acc
        elif op == "load":
            i, tr = n.arg
            index = tuple(ir.const(v, ir.dtypes.int32) for v in self.index[: len(tr.shape)])
            off, valid = ir.view_index(tr, index)
            if valid.arg is False:
                r = _zero(n.dtype)
            else:
                r = self.ins[i][off.arg]
        elif op == "gather":
            r = self.ins[n.arg][self.ev(n.srcs[0])]
        elif op == "cast":
            r = normalizer(n.dtype)(_cast(self.ev(n.srcs[0]), n.dtype))
        elif op == "bitcast":
            r = _bitcast(self.ev(n.srcs[0]), n.srcs[0].dtype, n.dtype)
        elif op == "where":
            c = self.ev(n.srcs[0])
            r = self.ev(n.srcs[1]) if c else self.ev(n.srcs[2])
        elif op in ir.UNARY_OPS:
            x = self.ev(n.srcs[0])
            if op == "not":
                r = (not x) if n.dtype.kind == "b" else ~x
            elif op == "popcnt":
                r = bin(x & ((1 << n.dtype.bits) - 1)).count("1")
            elif op == "clz":
                r = n.dtype.bits - (x & ((1 << n.dtype.bits) - 1)).bit_length()
            else:
                r = UNARY[op](x)
            if n.dtype.kind != "b":
                r = normalizer(n.dtype)(r)
        else:
            a, b = self.ev(n.srcs[0]), self.ev(n.srcs[1])
            r = binary(op, a, b, n.srcs[0].dtype)
            if n.dtype.kind != "b":
                r = normalizer(n.dtype)(r)
        self.memo[n] = r
        return r


_MISSING = object()


def _zero(d):
    return False if d.kind == "b" else (0 if d.kind in "iu" else 0.0)


def _combine(op, a, b, ia=0, ib=0):
    if op == "sum":
        return a + b
    if op == "prod":
        return a * b
    if op in ("max", "min"):
        if isinstance(a, float) and (a != a or b != b):
            return math.nan
        return max(a, b) if op == "max" else min(a, b)
    if op == "and":
        return a and b
    if op == "or":
        return a or b
    raise NotImplementedError(op)


def run_kernel(k: Kernel, ins: list) -> list:
    out = []
    if k.reduce_op is None:
        for index in itertools.product(*[range(s) for s in k.shape]):
            out.append(_Elem(ins, index).ev(k.epilogue))
        return out
    nkeep = len(k.shape) - len(k.reduce_axes)
    keep_ranges = [range(s) for s in k.shape[:nkeep]]
    red_ranges = [range(s) for s in k.shape[nkeep:]]
    norm = normalizer(k.body.dtype)
    for kidx in itertools.product(*keep_ranges):
        acc = None
        best_i = 0
        for j, ridx in enumerate(itertools.product(*red_ranges)):
            v = _Elem(ins, kidx + ridx).ev(k.body)
            if k.reduce_op in ("argmax", "argmin"):
                if acc is None:
                    acc, best_i = v, 0
                elif acc == acc and (v != v or (v > acc if k.reduce_op == "argmax" else v < acc)):
                    acc, best_i = v, j
                continue
            acc = v if acc is None else norm(_combine(k.reduce_op, acc, v))
        result = best_i if k.reduce_op in ("argmax", "argmin") else acc
        out.append(_Elem(ins, kidx + (0,) * len(red_ranges), acc=result).ev(k.epilogue))
    return out


# --- routines ------------------------------------------------------------------------------------


def _rows(flat, n):
    return [flat[i : i + n] for i in range(0, len(flat), n)] if n else []


def _sort_key(v):
    if isinstance(v, float):
        return (1, 0.0) if v != v else (0, v)
    return (0, v)


# Extra routines register here: name -> fn(routine, flat input lists) -> flat output lists.
ROUTINES: dict = {}


def run_routine(r: Routine, ins: list) -> list:
    p = r.p
    if r.name in ROUTINES:
        return ROUTINES[r.name](r, ins)
    shape = r.in_avals[0].shape
    if r.name == "sort":
        n = shape[-1] if shape else 1
        nk = p["num_keys"]
        outs = [[] for _ in ins]
        rows = [_rows(x, n) for x in ins]
        for ri in range(len(rows[0])):
            order = sorted(range(n), key=lambda j: tuple(_sort_key(rows[k][ri][j]) for k in range(nk)))
            for k in range(len(ins)):
                outs[k].extend(rows[k][ri][j] for j in order)
        return outs
    if r.name == "cumulative":
        n = shape[-1]
        op = p["op"]
        norm = normalizer(r.in_avals[0].dtype)
        out = []
        for row in _rows(ins[0], n):
            if p["reverse"]:
                row = row[::-1]
            acc, res = None, []
            for v in row:
                if acc is None:
                    acc = v
                elif op == "logsumexp":
                    m = max(acc, v)
                    acc = m + math.log(math.exp(acc - m) + math.exp(v - m)) if m != -math.inf else m
                else:
                    acc = _combine(op, acc, v)
                acc = norm(acc)
                res.append(acc)
            out.extend(res[::-1] if p["reverse"] else res)
        return [out]
    if r.name == "cholesky":
        m = shape[-1]
        norm = normalizer(r.in_avals[0].dtype)
        out = []
        for A in _rows(ins[0], m * m):
            L = [0.0] * (m * m)
            failed = False  # a pivot <= 0 fails the matrix; a NaN pivot does not, NaN flows on (LAPACK)
            for j in range(m):
                s = A[j * m + j] - sum(L[j * m + k] ** 2 for k in range(j))
                failed = failed or s <= 0
                if failed:
                    break
                L[j * m + j] = math.sqrt(s)
                for i in range(j + 1, m):
                    L[i * m + j] = (A[i * m + j] - sum(L[i * m + k] * L[j * m + k] for k in range(j))) / L[j * m + j]
            if failed:
                L = [math.nan if c <= r else 0.0 for r in range(m) for c in range(m)]
            out.extend(norm(v) for v in L)
        return [out]
    if r.name == "triangular_solve":
        return [_tri_solve(r, ins[0], ins[1])]
    raise NotImplementedError(f"cpu backend (pure Python): routine {r.name}")


def _tri_solve(r, a_flat, b_flat):
    p = r.p
    a_shape, b_shape = r.in_avals[0].shape, r.in_avals[1].shape
    m = a_shape[-1]
    rows_b, cols_b = b_shape[-2], b_shape[-1]
    norm = normalizer(r.in_avals[1].dtype)
    nbatch = len(b_flat) // (rows_b * cols_b) if rows_b * cols_b else 0
    a_batches = _rows(a_flat, m * m)
    out = []
    for bi in range(nbatch):
        A = a_batches[bi % len(a_batches)]
        B = b_flat[bi * rows_b * cols_b : (bi + 1) * rows_b * cols_b]

        def t(i, j):
            if p["transpose_a"]:
                i, j = j, i
            lower = p["lower"]
            if (lower and j > i) or (not lower and j < i):
                return 0.0
            if i == j and p["unit_diagonal"]:
                return 1.0
            return A[i * m + j]

        eff_lower = p["lower"] != p["transpose_a"]
        X = [0.0] * (rows_b * cols_b)
        if p["left_side"]:  # t @ X = B, X is (m, cols)
            order = range(m) if eff_lower else range(m - 1, -1, -1)
            for c in range(cols_b):
                for i in order:
                    s = B[i * cols_b + c] - sum(t(i, j) * X[j * cols_b + c] for j in range(m) if j != i)
                    X[i * cols_b + c] = _fdiv(s, t(i, i))
        else:  # X @ t = B, X is (rows, m): column j of X uses t's column structure
            order = range(m - 1, -1, -1) if eff_lower else range(m)
            for rr in range(rows_b):
                for j in order:
                    s = B[rr * cols_b + j] - sum(X[rr * cols_b + k] * t(k, j) for k in range(m) if k != j)
                    X[rr * cols_b + j] = _fdiv(s, t(j, j))
        out.extend(norm(v) for v in X)
    return out


from pyjax.backends.cpu import routines_indexing, routines_linalg  # noqa: E402

routines_indexing.register_python(ROUTINES)
routines_linalg.register_python(ROUTINES)
