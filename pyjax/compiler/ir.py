"""The kernel IR: scalar expressions over an output index, Kernels and Routines.

A Node is an interned (hash-consed) scalar expression: structurally equal nodes are the same
object, so hashing a whole kernel is cheap and common subexpressions are shared. Index
arithmetic is built with the same nodes (int32) and simplified on construction, using the
value range of each node (see `bounds`).

Node ops:
  const(arg=value)            idx(arg=axis)          acc (the reduction result, epilogue only)
  arg(arg=i)                  -- parameter i of a scalar function (ir.arg; routines' helpers)
  load(arg=(input, tracker))  -- input buffer read through a ShapeTracker at the current index
  gather(arg=input; srcs=(offset,))  -- input buffer read at a computed flat offset
  unary/binary/ternary ALU ops (UNARY_OPS, BINARY_OPS, 'where'), cast, bitcast
  madd(a, b, c) = a * b + c, fused or not: only in kernels expanded for a backend that
  declares it (compiler/mathlib/)
"""

from __future__ import annotations

import math
import operator
from weakref import WeakValueDictionary

from pyjax.compiler.views import ShapeTracker
from pyjax.core import dtypes

UNARY_OPS = frozenset(
    "neg not abs sign floor ceil round_even round_away trunc exp exp2 log log2 log1p expm1 sin cos tan "
    "asin acos atan sinh cosh tanh asinh acosh atanh sqrt rsqrt cbrt erf erfc erf_inv lgamma "
    "digamma logistic isnan isinf isfinite popcnt clz reciprocal".split()
)
BINARY_OPS = frozenset(
    "add sub mul div rem pow max min atan2 nextafter and or xor shl shr lt le gt ge eq ne idiv mod".split()
)
COMPARE_OPS = frozenset("lt le gt ge eq ne isnan isinf isfinite".split())
REDUCE_OPS = ("sum", "prod", "max", "min", "and", "or", "argmax", "argmin")
TRANSCENDENTAL = frozenset(
    "exp exp2 log log2 log1p expm1 sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh "
    "erf erfc erf_inv lgamma digamma logistic pow atan2 cbrt".split()
)


class Node:
    __slots__ = ("op", "dtype", "srcs", "arg", "_hash", "_bounds", "__weakref__")

    def __repr__(self):
        return render(self)

    def __hash__(self):
        return self._hash

    # Python operators for building index arithmetic in lowering code.
    def __add__(self, o):
        return alu("add", self, as_node(o))

    __radd__ = __add__

    def __sub__(self, o):
        return alu("sub", self, as_node(o))

    def __mul__(self, o):
        return alu("mul", self, as_node(o))

    __rmul__ = __mul__

    def __floordiv__(self, o):
        return alu("idiv", self, as_node(o))

    def __mod__(self, o):
        return alu("mod", self, as_node(o))

    def __lt__(self, o):
        return alu("lt", self, as_node(o))

    def __ge__(self, o):
        return alu("ge", self, as_node(o))

    def __and__(self, o):
        return alu("and", self, as_node(o))


_interned: WeakValueDictionary = WeakValueDictionary()


def node(op: str, dtype: dtypes.DType, srcs: tuple = (), arg=None) -> Node:
    key = (op, dtype, srcs, arg)
    n = _interned.get(key)
    if n is None:
        n = Node()
        n.op, n.dtype, n.srcs, n.arg = op, dtype, srcs, arg
        n._hash = hash(key)
        n._bounds = None
        _interned[key] = n
    return n


def const(value, dtype: dtypes.DType) -> Node:
    if dtype.kind == "b":
        value = bool(value)
    elif dtype.kind in "iu":
        # wrap into the dtype's range (two's complement), e.g. uint8 -1 -> 255, as the arithmetic does
        bits = dtype.bits
        value = int(value) & ((1 << bits) - 1)
        if dtype.kind == "i" and value >= 1 << (bits - 1):
            value -= 1 << bits
    else:
        value = float(value)
    return node("const", dtype, (), value)


def as_node(x) -> Node:
    return x if isinstance(x, Node) else const(x, dtypes.int32)


def idx(axis: int) -> Node:
    return node("idx", dtypes.int32, (), axis)


def load(i: int, tracker: ShapeTracker, dtype: dtypes.DType) -> Node:
    return node("load", dtype, (), (i, tracker))


def gather(i: int, offset: Node, dtype: dtypes.DType) -> Node:
    return node("gather", dtype, (offset,), i)


def acc(dtype: dtypes.DType) -> Node:
    return node("acc", dtype)


def arg(i: int, dtype: dtypes.DType) -> Node:
    """Parameter i of a scalar function (a backend's helper written as IR, e.g. a routine's step)."""
    return node("arg", dtype, (), i)


def cast(x: Node, dtype: dtypes.DType) -> Node:
    if x.dtype is dtype:
        return x
    if x.op == "const":
        return const(_convert_const(x.arg, dtype), dtype)
    return node("cast", dtype, (x,))


def _convert_const(v, dtype):
    if dtype.kind == "b":
        return bool(v)
    if dtype.kind in "iu":
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                return 0
            v = int(v)
        bits = dtype.bits
        v &= (1 << bits) - 1
        if dtype.kind == "i" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return v
    return float(v)


def bitcast(x: Node, dtype: dtypes.DType) -> Node:
    return x if x.dtype is dtype else node("bitcast", dtype, (x,))


def where(c: Node, a: Node, b: Node) -> Node:
    if c.op == "const":
        return a if c.arg else b
    if a is b:
        return a
    return node("where", a.dtype, (c, a, b))


# --- value ranges for index simplification -------------------------------------------------

# Bounds of idx variables are set per kernel shape through `with_shape`; nodes cache bounds
# computed for the current shape context only when they do not depend on idx.
_idx_bounds: dict = {}


def bounds(n: Node) -> tuple:
    """Inclusive (lo, hi) of an int node, or (None, None) if unknown."""
    op = n.op
    if op == "const":
        return (n.arg, n.arg) if isinstance(n.arg, int) else (None, None)
    if op == "idx":
        return _idx_bounds.get(n.arg, (0, None))
    if n.dtype.kind not in "iub":
        return (None, None)
    if op in ("lt", "le", "gt", "ge", "eq", "ne", "and", "or") and n.dtype.kind == "b":
        return (0, 1)
    if op in ("add", "sub", "mul"):
        (a0, a1), (b0, b1) = bounds(n.srcs[0]), bounds(n.srcs[1])
        if None in (a0, a1, b0, b1):
            return (None, None)
        if op == "add":
            return (a0 + b0, a1 + b1)
        if op == "sub":
            return (a0 - b1, a1 - b0)
        prods = (a0 * b0, a0 * b1, a1 * b0, a1 * b1)
        return (min(prods), max(prods))
    if op in ("idiv", "mod"):
        (a0, a1), (b0, b1) = bounds(n.srcs[0]), bounds(n.srcs[1])
        if None in (a0, a1) or b0 is None or b0 != b1 or b0 <= 0 or a0 < 0:
            return (0, b0 - 1) if op == "mod" and b0 == b1 and b0 and b0 > 0 else (None, None)
        if op == "idiv":
            return (a0 // b0, a1 // b0)
        return (0, b0 - 1) if a1 - a0 >= b0 or a0 // b0 != a1 // b0 else (a0 % b0, a1 % b0)
    if op in ("max", "min"):
        (a0, a1), (b0, b1) = bounds(n.srcs[0]), bounds(n.srcs[1])
        if None in (a0, a1, b0, b1):
            return (None, None)
        f = max if op == "max" else min
        return (f(a0, b0), f(a1, b1))
    if op == "where":
        (a0, a1), (b0, b1) = bounds(n.srcs[1]), bounds(n.srcs[2])
        if None in (a0, a1, b0, b1):
            return (None, None)
        return (min(a0, b0), max(a1, b1))
    return (None, None)


class shape_context:
    """Within this context idx(i) is known to lie in [0, shape[i])."""

    def __init__(self, shape: tuple):
        self.new = {i: (0, s - 1) for i, s in enumerate(shape)}

    def __enter__(self):
        global _idx_bounds
        self.old, _idx_bounds = _idx_bounds, self.new

    def __exit__(self, *exc):
        global _idx_bounds
        _idx_bounds = self.old


# --- ALU construction with constant folding and index simplification -------------------------


def _result_dtype(op: str, a: Node) -> dtypes.DType:
    return dtypes.bool_ if op in COMPARE_OPS else a.dtype


def alu(op: str, *srcs: Node) -> Node:
    a = srcs[0]
    if op in BINARY_OPS:
        b = srcs[1]
        if a.dtype.kind in "iu" and op in ("add", "sub", "mul", "idiv", "mod"):
            s = _simplify_int(op, a, b)
            if s is not None:
                return s
        if a.op == "const" and b.op == "const" and a.dtype.kind in "iub":
            folded = _fold_int(op, a.arg, b.arg)
            if folded is not None:
                return const(folded, _result_dtype(op, a))
        if op == "and" and a.dtype.kind == "b":
            if a.op == "const":
                return b if a.arg else a
            if b.op == "const":
                return a if b.arg else b
            if a is b:
                return a
        if op in ("lt", "ge") and a.dtype.kind in "iu":
            (a0, a1), (b0, b1) = bounds(a), bounds(b)
            if None not in (a0, a1, b0, b1):
                if a1 < b0:
                    return const(op == "lt", dtypes.bool_)
                if a0 >= b1:
                    return const(op == "ge", dtypes.bool_)
    return node(op, _result_dtype(op, a), tuple(srcs))


# Ops whose Python meaning is the same for every dtype they take: folding int constants here and
# the Python evaluator (backends/cpu/python_eval.py) both read this one table.
PY_BINARY = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "idiv": operator.floordiv,
    "mod": operator.mod,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
    "eq": operator.eq,
    "ne": operator.ne,
}


def _fold_int(op, x, y):
    try:
        if op in ("idiv", "mod") and not (y > 0 and x >= 0):
            return None  # sign conventions differ between Python and the backends: leave them
        if op in PY_BINARY:
            return PY_BINARY[op](x, y)
        if op == "and":
            return x & y if not isinstance(x, bool) else x and y
        if op == "or":
            return x | y if not isinstance(x, bool) else x or y
    except TypeError:
        return None
    return None


def _terms(n: Node) -> tuple[dict, int]:
    """Linear form of an int expression: {atom: coeff}, constant."""
    if n.op == "const":
        return {}, n.arg
    if n.op in ("add", "sub"):
        ta, ca = _terms(n.srcs[0])
        tb, cb = _terms(n.srcs[1])
        sign = 1 if n.op == "add" else -1
        out = dict(ta)
        for k, v in tb.items():
            out[k] = out.get(k, 0) + sign * v
        return {k: v for k, v in out.items() if v}, ca + sign * cb
    if n.op == "mul":
        a, b = n.srcs
        if b.op == "const":
            t, c = _terms(a)
            return {k: v * b.arg for k, v in t.items()} if b.arg else {}, c * b.arg
        if a.op == "const":
            t, c = _terms(b)
            return {k: v * a.arg for k, v in t.items()} if a.arg else {}, c * a.arg
    return {n: 1}, 0


def _from_terms(terms: dict, c: int, dtype) -> Node:
    out = None
    for atom, coeff in sorted(terms.items(), key=lambda kv: _order(kv[0])):
        t = atom if coeff == 1 else node("mul", dtype, (atom, const(coeff, dtype)))
        out = t if out is None else node("add", dtype, (out, t))
    if out is None:
        return const(c, dtype)
    return out if c == 0 else node("add", dtype, (out, const(c, dtype)))


def _order(n: Node):
    """idx terms first by axis, then the others by op and in the order they came (a stable sort):
    never by hash, which depends on load shapes and would make one kernel's text differ per size."""
    return (0, n.arg, "") if n.op == "idx" else (1, 0, n.op)


def _simplify_int(op: str, a: Node, b: Node) -> Node | None:
    dt = a.dtype
    if op in ("add", "sub", "mul"):
        if op == "mul" and not (a.op == "const" or b.op == "const"):
            return None
        t, c = _terms(node(op, dt, (a, b)))
        return _from_terms(t, c, dt)
    if b.op != "const" or b.arg <= 0:
        return None
    d = b.arg
    if d == 1:
        return a if op == "idiv" else const(0, dt)
    lo, hi = bounds(a)
    if lo is None or hi is None or lo < 0:
        return None
    if hi < d:
        return const(0, dt) if op == "idiv" else a
    terms, c = _terms(a)
    # Split off the terms whose coefficients are multiples of d.
    big = {k: v // d for k, v in terms.items() if v % d == 0}
    rest = {k: v for k, v in terms.items() if v % d != 0}
    rest_node = _from_terms(rest, c % d, dt)
    rlo, rhi = bounds(rest_node)
    if any(bounds(k)[0] is None or bounds(k)[0] < 0 for k in big):
        return None
    if rlo is not None and rhi is not None and 0 <= rlo and rhi < d:
        if op == "idiv":
            return _from_terms(big, c // d, dt)
        return rest_node
    if op == "idiv" and a.op == "idiv" and a.srcs[1].op == "const":
        return alu("idiv", a.srcs[0], const(a.srcs[1].arg * d, dt))
    if op == "mod" and a.op == "mod" and a.srcs[1].op == "const" and a.srcs[1].arg % d == 0:
        return alu("mod", a.srcs[0], b)
    return None


# --- trackers -> index expressions -----------------------------------------------------------


def view_index(tracker: ShapeTracker, index: tuple) -> tuple[Node, Node]:
    """(flat offset, valid) for reading `tracker` at index (one node per axis)."""
    valid = const(True, dtypes.bool_)
    views = tracker.views
    for vi in range(len(views) - 1, -1, -1):
        v = views[vi]
        off = const(v.offset, dtypes.int32)
        for i, st in zip(index, v.strides):
            if st:
                off = alu("add", off, alu("mul", i, const(st, dtypes.int32)))
        if v.mask:
            for i, (b, e), s in zip(index, v.mask, v.shape):
                if b > 0:
                    valid = alu("and", valid, alu("ge", i, const(b, dtypes.int32)))
                if e < s:
                    valid = alu("and", valid, alu("lt", i, const(e, dtypes.int32)))
        if vi == 0:
            return off, valid
        # Unflatten the offset into the previous view's index space.
        prev = views[vi - 1].shape
        new_index, acc_ = [], 1
        for s in reversed(prev):
            new_index.append(alu("mod", alu("idiv", off, const(acc_, dtypes.int32)), const(s, dtypes.int32)))
            acc_ *= s
        index = tuple(reversed(new_index))
    raise AssertionError("unreachable")


# --- kernels and routines -----------------------------------------------------------------


class Kernel:
    """out[i] = epilogue(reduce_{reduce_axes} body) over iteration `shape`.

    Without a reduction, `epilogue` alone is evaluated over `shape`. With one, `body` is
    evaluated over `shape` and combined with `reduce_op` over `reduce_axes`; `epilogue` sees
    the result as the `acc` node, over `out_shape` (shape with reduced axes set to 1). The
    output is written contiguously in out_shape order. Inputs are flat buffers.
    """

    __slots__ = ("shape", "reduce_axes", "reduce_op", "body", "epilogue", "in_dtypes", "_hash", "name")

    def __init__(self, shape, in_dtypes, epilogue, reduce_op=None, reduce_axes=(), body=None, name="k"):
        self.shape = tuple(shape)
        self.in_dtypes = tuple(in_dtypes)
        self.epilogue = epilogue
        self.reduce_op = reduce_op
        self.reduce_axes = tuple(sorted(reduce_axes))
        self.body = body
        self.name = name
        self._hash = hash((self.shape, self.in_dtypes, epilogue, reduce_op, self.reduce_axes, body))

    @property
    def out_shape(self) -> tuple:
        return tuple(1 if i in self.reduce_axes else s for i, s in enumerate(self.shape))

    @property
    def out_dtype(self) -> dtypes.DType:
        return self.epilogue.dtype

    @property
    def out_size(self) -> int:
        return math.prod(self.out_shape)

    def key(self):
        return (self.shape, self.in_dtypes, self.epilogue, self.reduce_op, self.reduce_axes, self.body)

    def __eq__(self, other):
        return isinstance(other, Kernel) and self.key() == other.key()

    def __hash__(self):
        return self._hash

    def __repr__(self):
        r = f"Kernel {self.name} shape={self.shape} ins={[d.name for d in self.in_dtypes]}"
        if self.reduce_op:
            r += f"\n  {self.reduce_op} over {self.reduce_axes}: {render(self.body)}"
        return r + f"\n  out: {render(self.epilogue)}"


class Routine:
    """An unfusable op with contiguous inputs and outputs, implemented natively per backend.

    name: 'sort', 'argsort', 'cholesky', 'triangular_solve', 'cumulative', 'scatter', ...
    params: hashable tuple of (key, value) pairs.
    """

    __slots__ = ("name", "params", "in_avals", "out_avals", "_hash")

    def __init__(self, name: str, params: dict, in_avals: tuple, out_avals: tuple):
        self.name = name
        self.params = tuple(sorted(params.items()))
        self.in_avals = tuple(in_avals)
        self.out_avals = tuple(out_avals)
        self._hash = hash((name, self.params, self.in_avals, self.out_avals))

    @property
    def p(self) -> dict:
        return dict(self.params)

    def __eq__(self, other):
        return isinstance(other, Routine) and (self.name, self.params, self.in_avals, self.out_avals) == (
            other.name,
            other.params,
            other.in_avals,
            other.out_avals,
        )

    def __hash__(self):
        return self._hash

    def __repr__(self):
        return f"Routine {self.name}{self.p} {self.in_avals} -> {self.out_avals}"


# --- printing (PYJAX_DEBUG and error messages) ----------------------------------------------


def render(n: Node) -> str:
    """n as text. A DAG can be exponentially larger as a tree (threefry is), so a subexpression
    used more than once is printed once as `vK = ...` and referred to by name afterwards."""
    order = walk(n)
    uses: dict = {}
    for x in order:
        for s in x.srcs:
            uses[s] = uses.get(s, 0) + 1
    names: dict = {}
    lets: list = []

    def one(x: Node) -> str:
        if x in names:
            return names[x]
        op = x.op
        if op == "const":
            return repr(x.arg)
        if op == "idx":
            return f"i{x.arg}"
        if op == "acc":
            return "acc"
        if op == "load":
            return f"in{x.arg[0]}[{x.arg[1].views}]"
        if op == "gather":
            return f"in{x.arg}[{one(x.srcs[0])}]"
        args = ", ".join(one(s) for s in x.srcs)
        return f"{op}<{x.dtype.name}>({args})" if op in ("cast", "bitcast") else f"{op}({args})"

    for x in order[:-1]:
        if uses.get(x, 0) > 1 and x.srcs:
            text = one(x)
            names[x] = f"v{len(lets)}"
            lets.append(f"{names[x]} = {text}")
    body = one(n)
    return "; ".join(lets + [body]) if lets else body


def walk(n: Node, seen=None, children=None):
    """All nodes of the DAG below n (n last), each once and not in `seen`; children(x) in place
    of x.srcs where a backend sees more edges (a load's index expressions)."""
    if seen is None:
        seen = set()
    out = []
    stack = [(n, False)]
    while stack:
        x, done = stack.pop()
        if done:
            out.append(x)
            continue
        if x in seen:
            continue
        seen.add(x)
        stack.append((x, True))
        for s in reversed(x.srcs if children is None else children(x)):
            stack.append((s, False))
    return out
