"""WGSL building blocks shared by the kernel renderer and the routines: dtypes, literals, packed
loads and stores, and an expression emitter with scopes (loop-invariant code motion for free).

Storage: every buffer holds the same bytes as the cpu backend (little-endian, C order), so
write/read/copy need no translation. 32-bit types are bound as ``array<f32|i32|u32>``; bool,
8- and 16-bit types as ``array<u32>`` words holding 4 or 2 elements, unpacked on load and packed
by a thread that owns the whole word on store. Half floats (float16, bfloat16) are computed in
f32 and rounded back to half precision after every operation, which gives the same results as
numpy's float16 arithmetic (one rounding per op). 64-bit types have no WGSL equivalent.
"""

from __future__ import annotations

import contextvars
import math
import re
import struct

from pyjax.compiler import ir
from pyjax.core import dtypes, minifloat

# ---- dtypes ------------------------------------------------------------------------------------

_CTYPE = {
    "float32": "f32",
    "float16": "f32",
    "bfloat16": "f32",
    **{name: "f32" for name in dtypes.FLOAT8},
    "int32": "i32",
    "int16": "i32",
    "int8": "i32",
    "uint32": "u32",
    "uint16": "u32",
    "uint8": "u32",
    "bool": "bool",
    # 4/2/1-bit integers: stored as int8/uint8 values (core/dtypes.py STRUCT_FORMAT), wrapped by _WRAP
    **{n: "i32" if n[0] == "i" else "u32" for n in dtypes.INTN},
}


class UnsupportedDtype(TypeError):
    """A dtype WGSL cannot represent (64-bit types)."""


def ctype(d) -> str:
    """The WGSL type a value of dtype d is computed in."""
    t = _CTYPE.get(d.name)
    if t is None:
        raise UnsupportedDtype(f"webgpu backend: dtype {d.name} is not supported by WGSL")
    return t


def supported(d) -> bool:
    return d.name in _CTYPE


def packed(d) -> bool:
    """Stored several per 32-bit word (bool, 8- and 16-bit types)."""
    return d.itemsize < 4


def per_word(d) -> int:
    return 4 // d.itemsize if d.itemsize < 4 else 1


def storage_type(d) -> str:
    """Element type of the storage array a buffer of dtype d is bound as."""
    return "u32" if packed(d) else ctype(d)


def bits(d) -> int:
    """The bits an element of dtype d takes in storage (a whole byte for the sub-byte types)."""
    return 8 * d.itemsize


# ---- literals ----------------------------------------------------------------------------------


def round_to(v: float, d) -> float:
    """v rounded to the precision of float dtype d (inf on overflow)."""
    fmt = {"float16": "<e", "float32": "<f"}.get(d.name)
    if d.name in minifloat.FORMATS:
        return minifloat.round_to(v, d.name)
    if d.name == "bfloat16":
        v = round_to(v, dtypes.float32)
        if v != v or v in (math.inf, -math.inf):
            return v
        b = struct.unpack("<I", struct.pack("<f", v))[0]
        b = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16) << 16
        return struct.unpack("<f", struct.pack("<I", b & 0xFFFFFFFF))[0]
    try:
        return struct.unpack(fmt, struct.pack(fmt, v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def lit(v, d) -> str:
    """A WGSL literal (or constant expression) of dtype d's compute type."""
    t = ctype(d)
    if t == "bool":
        return "true" if v else "false"
    if t == "i32":
        v = int(v)
        return "(-2147483647i - 1i)" if v == -(2**31) else (f"{v}i" if v >= 0 else f"({v}i)")
    if t == "u32":
        return f"{int(v) & 0xFFFFFFFF}u"
    return flit(round_to(float(v), d))


def flit(v: float) -> str:
    """An f32 literal; inf and NaN are built at run time (WGSL rejects them as constants)."""
    if v != v:
        return "pj_nan()"
    if v == math.inf:
        return "pj_inf()"
    if v == -math.inf:
        return "(-pj_inf())"
    s = repr(v)
    if "e" not in s and "." not in s:
        s += ".0"
    return f"({s}f)" if v < 0 or s.startswith("-") else f"{s}f"


def zero(d) -> str:
    return lit(False if d.kind == "b" else 0, d)


# ---- packed loads and stores -------------------------------------------------------------------


# dtype -> packed element `{raw}` (bits already shifted down and masked) as the compute type
_FROM_RAW = {
    "bool": "({raw} != 0u)",
    "uint8": "{raw}",
    "uint16": "{raw}",
    **{n: "{raw}" for n in dtypes.INTN if n[0] == "u"},
    "float16": "pj_f16_to_f32({raw})",
    "bfloat16": "pj_bf16_to_f32({raw})",
    **{n: f"pj_{n}_to_f32({{raw}})" for n in minifloat.FORMATS},
}
# dtype -> the storage bits (u32, low bits) of compute value `{v}`
_TO_BITS = {
    "bool": "select(0u, 1u, {v})",
    "uint8": "({v} & 0xffu)",
    "uint16": "({v} & 0xffffu)",
    "int8": "(bitcast<u32>({v}) & 0xffu)",
    "int16": "(bitcast<u32>({v}) & 0xffffu)",
    **{n: "(bitcast<u32>({v}) & 0xffu)" if n[0] == "i" else "({v} & 0xffu)" for n in dtypes.INTN},
    "float16": "pj_f32_to_f16({v})",
    "bfloat16": "pj_f32_to_bf16({v})",
    **{n: f"pj_f32_to_{n}({{v}})" for n in minifloat.FORMATS},
}
# dtype -> the helpers its loads, stores and roundings call
_DTYPE_HELPERS = {
    "float16": frozenset(("f16_to_f32", "f32_to_f16", "rf16")),
    "bfloat16": frozenset(("bf16_to_f32", "f32_to_bf16", "rbf16")),
    **{n: frozenset((f"{n}_to_f32", f"f32_to_{n}", f"r{n}")) for n in minifloat.FORMATS},
}


def unpack(word: str, d, sub: str) -> str:
    """Element number `sub` (u32 expression) of a packed word, as d's compute type."""
    b = bits(d)
    sh = f"({sub} * {b}u)"
    if d.kind == "i":  # sign-extend by shifting the element to the top
        return f"(bitcast<i32>({word} << ({32 - b}u - {sh})) >> {32 - b}u)"
    if d.name not in _FROM_RAW:
        raise UnsupportedDtype(d.name)
    return _FROM_RAW[d.name].format(raw=f"(({word} >> {sh}) & {'0xffu' if b == 8 else '0xffffu'})")


def to_bits(v: str, d) -> str:
    """The storage bits (u32, low bits) of compute value v of packed dtype d."""
    if d.name not in _TO_BITS:
        raise UnsupportedDtype(d.name)
    return _TO_BITS[d.name].format(v=v)


def helpers_for_dtype(d) -> set:
    return set(_DTYPE_HELPERS.get(d.name, ()))


def load_elem(buf: str, d, e: str, vec4: bool = False, base: str | None = None) -> str:
    """Element e (an i32 expression, evaluated more than once) of buffer `buf` of dtype d.

    vec4: the buffer is bound as array<vec4<T>>. base: the buffer is a merged u32 buffer and
    this input starts at word `base`.
    """
    if base is not None:
        if packed(d):
            k = per_word(d)
            sh = 2 if k == 4 else 1
            return unpack(f"{buf}[{base} + u32({e} >> {sh}u)]", d, f"u32({e} & {k - 1})")
        raw = f"{buf}[{base} + u32({e})]"
        return {"f32": f"bitcast<f32>({raw})", "i32": f"bitcast<i32>({raw})", "u32": raw}[ctype(d)]
    if packed(d):
        k = per_word(d)
        sh = 2 if k == 4 else 1
        return unpack(f"{buf}[{e} >> {sh}u]", d, f"u32({e} & {k - 1})")
    if vec4:
        return f"{buf}[{e} >> 2u][{e} & 3]"
    return f"{buf}[{e}]"


# narrow integer dtype -> `{v}` (an i32/u32 compute value) wrapped into its range
_WRAP = {
    "int8": "(({v} << 24u) >> 24u)",
    "int16": "(({v} << 16u) >> 16u)",
    "uint8": "({v} & 0xffu)",
    "uint16": "({v} & 0xffffu)",
    **{n: f"(({{v}} << {32 - b}u) >> {32 - b}u)" for n, b in dtypes.INTN.items() if n[0] == "i"},
    **{n: f"({{v}} & {hex((1 << b) - 1)}u)" for n, b in dtypes.INTN.items() if n[0] == "u"},
}
# half float dtype -> `{v}` (an f32 compute value) rounded to its precision
_ROUND = {"float16": "pj_rf16({v})", "bfloat16": "pj_rbf16({v})", **{n: f"pj_r{n}({{v}})" for n in minifloat.FORMATS}}


def normalize_int(v: str, d) -> str:
    """Wrap an i32/u32 compute value into the range of a narrow integer dtype d."""
    w = _WRAP.get(d.name)
    return v if w is None else w.format(v=v)


def round_half(v: str, d) -> str:
    """Round an f32 compute value to d's precision when d is a half float."""
    r = _ROUND.get(d.name)
    return v if r is None else r.format(v=v)


# ---- the emitter ---------------------------------------------------------------------------------


class Scope:
    """A block of generated lines that binds some index axes (and maybe the reduction `acc`).

    Nodes are emitted into the outermost scope that binds everything they depend on, so code
    that does not vary in a loop lands before it. A cold scope (`cold_scope`) is the body of an
    `if` inside its parent: nodes first needed there stay there.
    """

    __slots__ = ("parent", "idx", "acc", "lines", "memo", "pos", "depth", "cond", "decls", "at")

    def __init__(self, parent: Scope | None = None, idx: dict | None = None, acc=None):
        self.parent = parent
        self.idx = dict(parent.idx) if parent else {}
        if idx:
            self.idx.update(idx)
        self.acc = acc if acc is not None else (parent.acc if parent else None)
        self.lines: list = []
        self.memo: dict = {}
        self.pos: dict = {}  # node -> its line's index in `lines`
        self.depth = parent.depth + 1 if parent else 0
        self.cond = None  # a cold scope's condition; its variables' declarations; its line index
        self.decls: list[str] = []
        self.at = 0

    @property
    def home(self) -> Scope:
        """The nearest scope that is no `if` body."""
        s = self
        while s.cond is not None:
            s = s.parent
        return s

    def binds(self, deps: frozenset) -> bool:
        for a in deps:
            if a == "acc":
                if self.acc is None:
                    return False
            elif a not in self.idx:
                return False
        return True

    def code(self, indent: str = "  ") -> str:
        return "".join(f"{indent}{line}\n" for line in self.lines)


class _IfBlock:
    """A cold scope's place among its parent's lines: renders as its variables and its `if`
    (a line, for the renderers that join or prefix lines)."""

    __slots__ = ("scope",)

    def __init__(self, scope: Scope):
        self.scope = scope

    def __str__(self) -> str:
        s = self.scope
        return "".join(f"{d} " for d in s.decls) + f"if ({s.cond}) {{\n{s.code('    ')}  }}"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __radd__(self, other: str) -> str:
        return other + str(self)


def cold_scope(parent: Scope, cond: str) -> Scope:
    """A new `if (cond) { ... }` block at the end of parent's lines, as a scope."""
    s = Scope(parent)
    s.cond, s.at = cond, len(parent.lines)
    parent.lines.append(_IfBlock(s))
    return s


ACC = "acc"

_NO_ROUND = frozenset(("const", "load", "gather", "where", "neg", "abs", "acc", "idx", "bitcast"))


# Nodes that exist only inside the expansion of a math function (compiler/mathlib), set by
# renderer.render_kernel while it renders one kernel: their + - * render as plain WGSL even in
# exact mode. Those decompositions avoid exact-cancellation tricks, so a contracted fma there only
# rounds less (mathlib.EXACT_ARITHMETIC names the ones that do not: the renderer leaves them
# out), and SwiftShader ran the chain's tanh and exp 2x slower through pj_mul's bit fixes.
DECOMPOSED: contextvars.ContextVar[frozenset] = contextvars.ContextVar("DECOMPOSED", default=frozenset())


class Emitter:
    """Renders IR nodes as WGSL `let` lines, one per node, memoized per scope."""

    def __init__(self, inputs: dict):
        """inputs: input number -> Input (how to read that kernel input)."""
        self.inputs = inputs
        self.helpers: set = set()
        self.counter = 0
        self._deps: dict = {}
        self._walked: set = set()  # nodes whose deps are known
        self._load_index: dict = {}
        self.vec_vars: dict = {}  # (load node, instance group) -> vec4 variable
        self.exact_ops = False  # True where `runtime_zero()` defined pj_z and pj_one
        self.decomposed = DECOMPOSED.get()  # rendered as plain ops (see DECOMPOSED)
        self._cold: dict = {}  # (id(scope), condition node) -> its `if` body (see _cold_where)
        # a list: cold wheres render their false side only and collect their conditions here
        # (renderer's split of cold paths on SwiftShader); None: an `if` each
        self.cold_flags: list | None = None

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    # -- dependencies ------------------------------------------------------------------------

    def load_index(self, n: ir.Node) -> tuple:
        """(offset, valid) nodes of a load through its tracker, over idx(0..ndim-1)."""
        hit = self._load_index.get(n)
        if hit is None:
            _, tr = n.arg
            index = tuple(ir.idx(a) for a in range(len(tr.shape)))
            with ir.shape_context(tr.shape):
                hit = self._load_index[n] = ir.view_index(tr, index)
        return hit

    def deps(self, n: ir.Node) -> frozenset:
        """The index axes (and `acc`) node n depends on, through its loads' index expressions."""
        hit = self._deps.get(n)
        if hit is not None:
            return hit
        for x in ir.walk(n, self._walked, self._kids):
            if x.op == "idx":
                d = frozenset((x.arg,))
            elif x.op == "acc":
                d = frozenset((ACC,))
            else:
                d = frozenset().union(*[self._deps[k] for k in self._kids(x)])
            self._deps[x] = d
        return self._deps[n]

    def _kids(self, n: ir.Node) -> tuple:
        return self.load_index(n) if n.op == "load" else n.srcs

    # -- rendering ---------------------------------------------------------------------------

    def target(self, n: ir.Node, scope: Scope) -> Scope:
        d = self.deps(n)
        chain = []
        s = scope
        while s is not None:
            chain.append(s)
            s = s.parent
        for s in reversed(chain):
            if s.binds(d):
                return s
        raise AssertionError(f"webgpu renderer: no scope binds {set(d)} for {ir.render(n)}")

    def expr(self, n: ir.Node, scope: Scope) -> str:
        """A WGSL expression (a variable name or literal) for node n in scope."""
        op = n.op
        if op == "const":
            s = lit(n.arg, n.dtype)
            if "pj_" in s:  # inf/NaN literals are helper calls (WGSL has no such constants)
                self.helpers |= {h for h in ("inf", "nan") if f"pj_{h}()" in s}
            return s
        if op == "idx":
            return scope.idx[n.arg]
        if op == "acc":
            return scope.acc
        tgt = self.target(n, scope)
        # the memo of every scope from here out to tgt; an `if` body sees its parent's lines
        # from before the `if` only; new nodes go to the innermost `if` body below tgt
        s, limit, place = scope, None, None
        while True:
            hit = s.memo.get(n)
            if hit is not None and (limit is None or s.pos[n] < limit):
                return hit
            if s is tgt:
                break
            if s.cond is not None and place is None:
                place = s
            limit = s.at if s.cond is not None else None
            s = s.parent
        place = place or tgt
        # Render sources first (iteratively deep graphs would recurse; kernels stay small).
        code = self._render(n, place)
        name = self.fresh()
        place.pos[n] = len(place.lines)
        place.lines.append(f"let {name} = {code};")
        place.memo[n] = name
        return name

    def _render(self, n: ir.Node, scope: Scope) -> str:
        op, d = n.op, n.dtype
        if op == "load":
            return self._load(n, scope)
        if op == "gather":
            i = n.arg
            inp = self.inputs[i]
            off = self.expr(n.srcs[0], scope)
            cnt = inp.count_expr()
            e = self.fresh("e")
            scope.lines.append(f"let {e} = clamp({off}, 0i, max({cnt} - 1i, 0i));")
            self.helpers |= helpers_for_dtype(d)
            return inp.load(e)
        if op == "where" and n.arg == "cold":
            return self._cold_where(n, scope)
        a = [self.expr(s, scope) for s in n.srcs]
        if op == "where":
            return f"select({a[2]}, {a[1]}, {a[0]})"
        if op == "cast":
            return self._cast(a[0], n.srcs[0].dtype, d)
        if op == "bitcast":
            return self._bitcast(a[0], n.srcs[0].dtype, d)
        if op in ir.UNARY_OPS:
            r = self._unary(op, a[0], n.srcs[0].dtype)
        else:
            r = self._binary(op, a[0], a[1], n.srcs[0].dtype, n.srcs[1].dtype, n)
        if d.name in dtypes.NARROW_FLOATS and op not in _NO_ROUND and op not in ir.COMPARE_OPS:
            self.helpers |= helpers_for_dtype(d)
            r = round_half(r, d)
        return r

    def _cold_where(self, n: ir.Node, scope: Scope) -> str:
        """A `where` marked cold (mathlib's `rarely`): its true side is computed in an `if` only
        where the condition holds (one `if` per condition and scope, shared by its wheres). GPUs
        and lavapipe skip it where no lane of a group takes it; SwiftShader runs every block under
        lane masks (branches are never skipped there), so it saves nothing on SwiftShader."""
        c, b = self.expr(n.srcs[0], scope), self.expr(n.srcs[2], scope)
        if self.cold_flags is not None:
            if c not in self.cold_flags:
                self.cold_flags.append(c)
            return b
        key = (id(scope), n.srcs[0])
        blk = self._cold.get(key)
        if blk is None:
            blk = self._cold[key] = cold_scope(scope, c)
        v = self.fresh("c")
        blk.decls.append(f"var {v}: {ctype(n.dtype)};")
        a = self.expr(n.srcs[1], blk)
        blk.lines.append(f"{v} = {a};")
        return f"select({b}, {v}, {c})"

    def _load(self, n: ir.Node, scope: Scope) -> str:
        i, tr = n.arg
        inp = self.inputs[i]
        d = n.dtype
        self.helpers |= helpers_for_dtype(d)
        off_n, ok_n = self.load_index(n)
        vec = inp.vec_loads.get(n)
        if vec is not None:
            group, k = vec(scope.home)
            key = (n, group)
            v = self.vec_vars.get(key) if scope.cond is None else None
            if v is None:
                off = self.expr(off_n, scope)
                v = self.fresh("v")
                scope.lines.append(f"let {v} = {inp.name}[{off} >> 2u];")
                if scope.cond is None:  # a variable of an `if` body is not seen after it
                    self.vec_vars[key] = v
            return f"{v}[{k}]"
        off = self.expr(off_n, scope)
        if ok_n.op == "const" and ok_n.arg:
            if off_n.op == "const":
                e = self.fresh("e")
                scope.lines.append(f"let {e} = {off};")
                off = e
            return inp.load(off)
        ok = self.expr(ok_n, scope)
        e = self.fresh("e")
        scope.lines.append(f"let {e} = select(0i, {off}, {ok});")
        return f"select({zero(d)}, {inp.load(e)}, {ok})"

    # -- core ops (through the tables below) ---------------------------------------------------

    def _cast(self, x: str, src, dst) -> str:
        return self._use(_CASTS[ctype(src), ctype(dst)](x, src, dst))

    def _bitcast(self, x: str, src, dst) -> str:
        if src.itemsize != dst.itemsize:
            raise UnsupportedDtype(f"webgpu backend: bitcast {src.name} -> {dst.name} changes the width")
        if src.itemsize == 4:
            ts, td = ctype(src), ctype(dst)
            return x if ts == td else f"bitcast<{td}>({x})"
        # 16/8-bit: through the raw bits
        self.helpers |= helpers_for_dtype(src) | helpers_for_dtype(dst)
        return _FROM_BITS[ctype(dst)](to_bits(x, src), dst)

    def _unary(self, op: str, x: str, d) -> str:
        row = UNARY.get(op, _NATIVE_UNARY).get(_CLASS[ctype(d)])
        if row is None:
            raise TypeError(f"webgpu backend: {op} on {d.name}")
        return self._use(row(self, None, x, None, d) if callable(row) else row.format(a=x, op=op, t=ctype(d)))

    def _binary(self, op: str, a: str, b: str, d, db, n: ir.Node) -> str:
        row = BINARY.get(op, {}).get(_CLASS[ctype(d)])
        if row is None:
            raise TypeError(f"webgpu backend: {op} on {d.name}")
        return self._use(row(self, n, a, b, d) if callable(row) else row.format(a=a, b=b, op=op, t=ctype(d)))

    def _use(self, code: str) -> str:
        """code, with the helpers it calls (pj_name(...)) added to the kernel."""
        if "pj_" in code:
            self.helpers.update(_CALLS.findall(code))
        return code


_CALLS = re.compile(r"\bpj_(\w+)\(")

# ---- core ops as WGSL ----------------------------------------------------------------------------
# op -> {class: rendering}. Classes: "f" (f32: float32 and the half floats, rounded after the op
# by the emitter), "b" (bool), "i" (i32) and "u" (u32): integer values of narrow dtypes are kept
# normalized (`_wrapped` rows wrap the result). A key of several letters is a row for each class.
# A rendering is a template over {a} {b} (operand expressions), {op} and {t} (the compute type),
# or a function (emitter, node, a, b, dtype) -> str where the code depends on more than that.
# Helpers the code calls (`pj_name(...)`) are added to the kernel.


def _rows(table: dict) -> dict:
    return {op: {c: r for cs, r in row.items() for c in cs} for op, row in table.items()}


def _wrapped(template: str):
    """An integer row whose result is wrapped into the range of a narrow dtype."""
    return lambda em, n, a, b, d: normalize_int(template.format(a=a, b=b, t=ctype(d)), d)


def _bit_count(template: str):
    """popcnt/clz: count in u32 over the dtype's bits (`{a}`, the bits; `{pad}`, 32 - bits)."""

    def row(em, n, a, b, d):
        w = d.bits
        u = a if ctype(d) == "u32" else f"bitcast<u32>({a})"
        if w < 32:
            u = f"({u} & {hex((1 << w) - 1)}u)"
        r = template.format(a=u, pad=32 - w)
        return normalize_int(r if ctype(d) == "u32" else f"i32({r})", d)  # a 2-bit count of 2 wraps, as JAX's

    return row


_CLASS = {"f32": "f", "bool": "b", "i32": "i", "u32": "u"}
_NATIVE_UNARY = {"f": "pj_{op}({a})"}  # the other float functions: WGSL helpers (wgsl_math.py)
_COPY, _FALSE, _TRUE = "{a}", "false", "true"

UNARY = _rows(
    {
        "neg": {"f": "(-{a})", "i": _wrapped("(-{a})"), "u": _wrapped("(0u - {a})")},
        "not": {"b": "(!{a})", "iu": _wrapped("(~{a})")},
        "abs": {
            "f": "bitcast<f32>(bitcast<u32>({a}) & 0x7fffffffu)",
            "b": _COPY,
            "i": _wrapped("abs({a})"),
            "u": _COPY,
        },
        "sign": {
            "f": "select(select(select({a}, 1.0f, {a} > 0.0f), -1.0f, {a} < 0.0f), {a}, pj_isnan({a}))",
            "b": _COPY,
            "i": "sign({a})",
            "u": "select(0u, 1u, {a} > 0u)",
        },
        "floor": {"f": "floor({a})", "iu": _COPY},
        "ceil": {"f": "ceil({a})", "iu": _COPY},
        "trunc": {"f": "trunc({a})", "iu": _COPY},
        "round_even": {"f": "round({a})", "iu": _COPY},
        "round_away": {"f": "select(trunc({a}) + sign({a}), trunc({a}), abs({a} - trunc({a})) < 0.5f)", "iu": _COPY},
        "sqrt": {"f": "sqrt({a})"},
        "rsqrt": {"f": "(1.0f / sqrt({a}))"},
        "reciprocal": {"f": "(1.0f / {a})"},
        "isnan": {"f": "pj_isnan({a})", "biu": _FALSE},
        "isinf": {"f": "pj_isinf({a})", "biu": _FALSE},
        "isfinite": {"f": "pj_isfinite({a})", "biu": _TRUE},
        "popcnt": {"iu": _bit_count("countOneBits({a})")},
        "clz": {"iu": _bit_count("(countLeadingZeros({a}) - {pad}u)")},
    }
)
for _op in ir.UNARY_OPS - UNARY.keys():
    UNARY[_op] = _NATIVE_UNARY


def _f_mul(em, n, a, b, d) -> str:
    x, y = n.srcs
    if _is_zero(x) or _is_zero(y):
        # Shader compilers fold x*0 -> 0 (they assume no NaN/inf); spell out IEEE.
        v, c = (b, a) if _is_zero(x) else (a, b)
        sgn = f"bitcast<f32>((bitcast<u32>({v}) ^ bitcast<u32>({c})) & 0x80000000u)"
        return f"select({sgn}, pj_nan(), !pj_isfinite({v}))"
    if _from_bool(x) or _from_bool(y):
        # b2f(c) * v is folded to select(c, v, 0) (Mesa's inexact rules, fma too), losing 0 * NaN/inf:
        # spell out the product with 0 (+-0 with v's sign, NaN for non-finite v) or 1.
        c, v = (a, b) if _from_bool(x) else (b, a)
        by_zero = f"select(bitcast<f32>(bitcast<u32>({v}) & 0x80000000u), pj_nan(), !pj_isfinite({v}))"
        return f"select({by_zero}, {v}, {c} != 0.0f)"
    if em.exact_ops and n not in em.decomposed:
        return f"pj_mul({a}, {b}, pj_z)"
    return f"({a} * {b})"


def _f_add_sub(sym: str):
    def row(em, n, a, b, d) -> str:
        if sym == "-" and n.srcs[0] is n.srcs[1]:  # compilers fold x - x -> 0
            return f"select(0.0f, pj_nan(), !pj_isfinite({a}))"
        if em.exact_ops and n not in em.decomposed:
            # Shader compilers contract a*b + c into one fma and rewrite (a + b) - a to b
            # (Mesa's inexact algebraic rules), which breaks error-free transformations
            # (two-sum, Dekker products) that bit-exact PRNG floats rely on. An fma with
            # run-time constants the compiler cannot see rounds exactly once, like IEEE
            # add/sub/mul, and matches none of those rewrites. pj_z is -0.0 (x + -0 == x,
            # signed zeros included), pj_one is 1.0.
            return f"fma({b}, {'pj_one' if sym == '+' else '-pj_one'}, {a})"
        return f"({a} {sym} {b})"

    return row


def _f_div(em, n, a, b, d) -> str:
    y = n.srcs[1]
    if n.arg == "finite" or (y.op == "const" and y.arg != 0 and math.isfinite(y.arg)):  # mathlib's quotient
        return f"({a} / {b})"
    return f"pj_div({a}, {b})"  # Vulkan leaves x / 0 and x / inf undefined, and compilers fold them


def _f_nextafter(em, n, a, b, d) -> str:
    if d.name in dtypes.NARROW_FLOATS:  # step in the narrow format's ulps
        em.helpers |= helpers_for_dtype(d)
        return f"pj_nextafter_{d.name}({a}, {b})"
    return f"pj_nextafter({a}, {b})"


def _i_floor_div_mod(sym: str, helper: str):
    def row(em, n, a, b, d) -> str:
        x, y = n.srcs
        lo = ir.bounds(x)[0]
        if y.op == "const" and y.arg > 0 and (ctype(d) == "u32" or (lo is not None and lo >= 0)):
            return f"({a} {sym} {b})"
        return f"pj_{helper}_{ctype(d)}({a}, {b})"

    return row


def _i_shift(em, n, a, b, d) -> str:
    bw, y = d.bits, n.srcs[1]
    ub = b if ctype(y.dtype) == "u32" else f"bitcast<u32>({b})"
    const = y.op == "const" and 0 <= y.arg < bw
    if n.op == "shl":
        if const:
            return normalize_int(f"({a} << {y.arg}u)", d)
        return f"select({zero(d)}, {normalize_int(f'({a} << ({ub} & 31u))', d)}, {ub} < {bw}u)"
    if const:
        return f"({a} >> {y.arg}u)"
    fill = zero(d) if ctype(d) == "u32" else f"select(0i, -1i, {a} < 0i)"
    return f"select({fill}, ({a} >> ({ub} & 31u)), {ub} < {bw}u)"


def _compare(sym: str) -> dict:
    ordered = sym not in ("==", "!=")
    return {
        "f": "pj_{op}({a}, {b})",
        "b": f"(select(0u, 1u, {{a}}) {sym} select(0u, 1u, {{b}}))" if ordered else f"({{a}} {sym} {{b}})",
        "iu": f"({{a}} {sym} {{b}})",
    }


BINARY = _rows(
    {
        "lt": _compare("<"),
        "le": _compare("<="),
        "gt": _compare(">"),
        "ge": _compare(">="),
        "eq": _compare("=="),
        "ne": _compare("!="),
        "add": {"f": _f_add_sub("+"), "b": "({a} || {b})", "iu": _wrapped("({a} + {b})")},
        "sub": {"f": _f_add_sub("-"), "b": "({a} != {b})", "iu": _wrapped("({a} - {b})")},
        "mul": {"f": _f_mul, "b": "({a} && {b})", "iu": _wrapped("({a} * {b})")},
        "div": {"f": _f_div, "iu": _wrapped("pj_div_{t}({a}, {b})")},
        "rem": {"f": "pj_fmod({a}, {b})", "iu": _wrapped("pj_rem_{t}({a}, {b})")},
        "idiv": {"f": "floor({a} / {b})", "iu": _i_floor_div_mod("/", "floordiv")},
        "mod": {"f": "({a} - {b} * floor({a} / {b}))", "iu": _i_floor_div_mod("%", "mod")},
        "pow": {"iu": _wrapped("pj_ipow_{t}({a}, {b})")},  # float pow: compiler/mathlib
        "max": {"f": "pj_fmax({a}, {b})", "b": "({a} || {b})", "iu": "max({a}, {b})"},
        "min": {"f": "pj_fmin({a}, {b})", "b": "({a} && {b})", "iu": "min({a}, {b})"},
        "nextafter": {"f": _f_nextafter},
        "and": {"b": "({a} && {b})", "iu": "({a} & {b})"},
        "or": {"b": "({a} || {b})", "iu": "({a} | {b})"},
        "xor": {"b": "({a} != {b})", "iu": "({a} ^ {b})"},
        "shl": {"iu": _i_shift},
        "shr": {"iu": _i_shift},
    }
)


# ---- casts ----------------------------------------------------------------------------------------
# (source, destination compute type) -> function (x, src dtype, dst dtype) -> str


def _float_to_float(x, src, dst) -> str:
    if dst.name in dtypes.NARROW_FLOATS and src.name != dst.name:
        return round_half(x, dst)
    return x


def _float_to_int(x, src, dst) -> str:
    """Saturating, NaN -> 0."""
    if dst.name in ("int32", "uint32"):
        return f"pj_f2{ctype(dst)}({x})"
    info = dtypes.iinfo(dst)
    lo, hi = float(info.min), float(info.max)
    return f"select({ctype(dst)}(clamp(trunc({x}), {lo}f, {hi}f)), {zero(dst)}, pj_isnan({x}))"


def _int_to_int(x, src, dst) -> str:
    if ctype(src) != ctype(dst):
        x = f"bitcast<{ctype(dst)}>({x})"
    return normalize_int(x, dst) if dst.itemsize < 4 else x


_CASTS = {
    ("bool", "bool"): lambda x, s, d: x,
    ("f32", "bool"): lambda x, s, d: f"((bitcast<u32>({x}) & 0x7fffffffu) != 0u)",
    **{(t, "bool"): lambda x, s, d: f"({x} != {lit(0, s)})" for t in ("i32", "u32")},
    **{("bool", t): lambda x, s, d: f"select({zero(d)}, {lit(1, d)}, {x})" for t in ("f32", "i32", "u32")},
    ("f32", "f32"): _float_to_float,
    **{(t, "f32"): lambda x, s, d: round_half(f"f32({x})", d) for t in ("i32", "u32")},
    **{("f32", t): _float_to_int for t in ("i32", "u32")},
    **{(a, b): _int_to_int for a in ("i32", "u32") for b in ("i32", "u32")},
}

# bitcasts of 8- and 16-bit values: destination compute type -> function (raw u32 bits, dtype)
_FROM_BITS = {
    "f32": lambda raw, d: _FROM_RAW[d.name].format(raw=raw),
    "bool": lambda raw, d: f"({raw} != 0u)",
    "i32": lambda raw, d: normalize_int(f"bitcast<i32>({raw})", d),
    "u32": lambda raw, d: normalize_int(raw, d),  # the sub-byte ones keep their own bits
}


def _is_zero(n) -> bool:
    """Is n zero in a way a shader compiler sees: a constant, or an integer expression of one it
    folds (0 << k, 0 * k, 0 & k) converted to float?"""
    op = n.op
    if op == "const":
        return n.arg == 0
    if op == "cast":
        return ctype(n.srcs[0].dtype) in ("i32", "u32", "bool") and _is_zero(n.srcs[0])
    if ctype(n.dtype) in ("i32", "u32"):
        if op in ("shl", "shr"):
            return _is_zero(n.srcs[0])
        if op in ("mul", "and"):
            return any(_is_zero(x) for x in n.srcs)
    return False


class Input:
    """How a kernel reads one of its inputs."""

    __slots__ = ("name", "dtype", "vec4", "base", "vec_loads")

    def __init__(self, name: str, dtype, vec4: bool = False, base: str | None = None):
        self.name, self.dtype, self.vec4, self.base = name, dtype, vec4, base
        self.vec_loads: dict = {}  # load node -> fn(scope) -> (group key, lane)

    def load(self, e: str) -> str:
        return load_elem(self.name, self.dtype, e, self.vec4, self.base)

    def count_expr(self) -> str:
        """Number of elements the binding holds (an i32 expression)."""
        if self.base is not None:
            return "2147483647i"
        k = 4 if self.vec4 else per_word(self.dtype)
        n = f"i32(arrayLength(&{self.name}))"
        return n if k == 1 else f"({n} * {k}i)"


def decompose(flat: str, shape: tuple, prefix: str, lines: list) -> dict:
    """Emit `let` lines splitting an i32 flat index into per-axis indices; axis -> name."""
    out = {}
    stride = 1
    strides = []
    for s in reversed(shape):
        strides.append(stride)
        stride *= s
    strides.reverse()
    for a, (s, st) in enumerate(zip(shape, strides)):
        name = f"{prefix}{a}"
        if s == 1:
            expr = "0i"
        elif a == 0:
            expr = f"({flat} / {st}i)" if st != 1 else flat
        elif st == 1:
            expr = f"({flat} % {s}i)"
        else:
            expr = f"(({flat} / {st}i) % {s}i)"
        lines.append(f"let {name} = {expr};")
        out[a] = name
    return out


def header(bindings: list, uniform: str | None = None) -> str:
    """Binding declarations: bindings = [(name, elem type, writable)], uniform struct body."""
    out = []
    for i, (name, ty, w) in enumerate(bindings):
        mode = "read_write" if w else "read"
        out.append(f"@group(0) @binding({i}) var<storage, {mode}> {name}: array<{ty}>;")
    if uniform is not None:
        out.insert(0, f"struct U {{ {uniform} }}")
        out.append(f"@group(0) @binding({len(bindings)}) var<uniform> u: U;")
    return "\n".join(out) + "\n"


ENTRY = (
    "@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, "
    "@builtin(local_invocation_index) lid: u32"
)
LINEAR_WG = "let wgl = wid.x + wid.y * nwg.x + wid.z * nwg.x * nwg.y;"


def _from_bool(n) -> bool:
    """A float node that is a converted bool (0 or 1), which shader compilers see through."""
    return n.op == "cast" and n.srcs[0].dtype is dtypes.bool_


def scalar_function(name: str, root: ir.Node) -> tuple[str, set]:
    """(WGSL fn `name` computing root (core ops) from its ir.arg parameters p0, p1, ... in order,
    the helpers it calls): a routine's helper written once as IR and rendered as kernels are."""
    args = sorted((x for x in ir.walk(root) if x.op == "arg"), key=lambda x: x.arg)
    em, scope = Emitter({}), Scope()
    for a in args:
        scope.memo[a], scope.pos[a] = f"p{a.arg}", -1
    out = em.expr(root, scope)
    params = ", ".join(f"p{a.arg}: {ctype(a.dtype)}" for a in args)
    return f"fn {name}({params}) -> {ctype(root.dtype)} {{\n{scope.code()}  return {out};\n}}\n", em.helpers


def runtime_zero(binding: str) -> str:
    """`let pj_z` (-0.0) and `pj_one` (1.0): constants at run time that the shader compiler
    cannot prove (every buffer of the backend is at least 16 bytes, so its length is never 0)."""
    return (
        f"let pj_rt = arrayLength(&{binding}) == 0u; "
        "let pj_z = bitcast<f32>(select(0x80000000u, 0x3f800000u, pj_rt)); let pj_one = select(1.0f, 2.0f, pj_rt);"
    )


def copy_shader() -> str:
    """The WGSL of a byte copy: uniforms (src offset, dst offset, bytes, 0), one workgroup per 1 KiB."""
    return f"""
struct U {{ so: u32, d0: u32, n: u32, pad: u32 }}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> u: U;
@compute @workgroup_size(256)
fn main({ENTRY}) {{
  {LINEAR_WG}
  let w = (u.d0 >> 2u) + wgl * 256u + lid;
  let end = u.d0 + u.n;
  if (w * 4u >= end) {{ return; }}
  if (((u.so | u.d0) & 3u) == 0u && w * 4u + 4u <= end) {{
    dst[w] = src[(u.so >> 2u) + w - (u.d0 >> 2u)];
    return;
  }}
  var word = dst[w];
  for (var j = 0u; j < 4u; j = j + 1u) {{
    let a = w * 4u + j;
    if (a >= u.d0 && a < end) {{
      let s = a - u.d0 + u.so;
      let byte = (src[s >> 2u] >> ((s & 3u) * 8u)) & 0xffu;
      word = (word & ~(0xffu << (j * 8u))) | (byte << (j * 8u));
    }}
  }}
  dst[w] = word;
}}
"""
