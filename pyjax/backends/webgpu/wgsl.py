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

import math
import struct

from pyjax.backends.webgpu.wgsl_math import SLOW_IF
from pyjax.compiler import ir
from pyjax.core import dtypes

# ---- dtypes ------------------------------------------------------------------------------------

_CTYPE = {
    "float32": "f32",
    "float16": "f32",
    "bfloat16": "f32",
    "int32": "i32",
    "int16": "i32",
    "int8": "i32",
    "uint32": "u32",
    "uint16": "u32",
    "uint8": "u32",
    "bool": "bool",
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
    return 8 * d.itemsize


# ---- literals ----------------------------------------------------------------------------------


def round_to(v: float, d) -> float:
    """v rounded to the precision of float dtype d (inf on overflow)."""
    fmt = {"float16": "<e", "float32": "<f"}.get(d.name)
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


def unpack(word: str, d, sub: str) -> str:
    """Element number `sub` (u32 expression) of a packed word, as d's compute type."""
    b = bits(d)
    mask = "0xffu" if b == 8 else "0xffffu"
    sh = f"({sub} * {b}u)"
    raw = f"(({word} >> {sh}) & {mask})"
    n = d.name
    if n == "bool":
        return f"({raw} != 0u)"
    if n in ("uint8", "uint16"):
        return raw
    if n in ("int8", "int16"):
        return f"(bitcast<i32>({word} << ({32 - b}u - {sh})) >> {32 - b}u)"
    if n == "float16":
        return f"pj_f16_to_f32({raw})"
    if n == "bfloat16":
        return f"pj_bf16_to_f32({raw})"
    raise UnsupportedDtype(n)


def to_bits(v: str, d) -> str:
    """The storage bits (u32, low bits) of compute value v of packed dtype d."""
    n = d.name
    if n == "bool":
        return f"select(0u, 1u, {v})"
    if n == "uint8":
        return f"({v} & 0xffu)"
    if n == "uint16":
        return f"({v} & 0xffffu)"
    if n == "int8":
        return f"(bitcast<u32>({v}) & 0xffu)"
    if n == "int16":
        return f"(bitcast<u32>({v}) & 0xffffu)"
    if n == "float16":
        return f"pj_f32_to_f16({v})"
    if n == "bfloat16":
        return f"pj_f32_to_bf16({v})"
    raise UnsupportedDtype(n)


def helpers_for_dtype(d) -> set:
    if d.name == "float16":
        return {"f16_to_f32", "f32_to_f16", "rf16"}
    if d.name == "bfloat16":
        return {"bf16_to_f32", "f32_to_bf16", "rbf16"}
    return set()


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


def normalize_int(v: str, d) -> str:
    """Wrap an i32/u32 compute value into the range of a narrow integer dtype d."""
    n = d.name
    if n in ("int8", "int16"):
        s = 32 - bits(d)
        return f"(({v} << {s}u) >> {s}u)"
    if n == "uint8":
        return f"({v} & 0xffu)"
    if n == "uint16":
        return f"({v} & 0xffffu)"
    return v


def round_half(v: str, d) -> str:
    """Round an f32 compute value to d's precision when d is a half float."""
    if d.name == "float16":
        return f"pj_rf16({v})"
    if d.name == "bfloat16":
        return f"pj_rbf16({v})"
    return v


# ---- the emitter ---------------------------------------------------------------------------------


class Scope:
    """A block of generated lines that binds some index axes (and maybe the reduction `acc`).

    Nodes are emitted into the outermost scope that binds everything they depend on, so code
    that does not vary in a loop lands before it.
    """

    __slots__ = ("parent", "idx", "acc", "lines", "memo", "depth")

    def __init__(self, parent: Scope | None = None, idx: dict | None = None, acc=None):
        self.parent = parent
        self.idx = dict(parent.idx) if parent else {}
        if idx:
            self.idx.update(idx)
        self.acc = acc if acc is not None else (parent.acc if parent else None)
        self.lines: list[str] = []
        self.memo: dict = {}
        self.depth = parent.depth + 1 if parent else 0

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


ACC = "acc"

_NO_ROUND = frozenset(("const", "load", "gather", "where", "neg", "abs", "acc", "idx", "bitcast"))


class Emitter:
    """Renders IR nodes as WGSL `let` lines, one per node, memoized per scope."""

    def __init__(self, inputs: dict):
        """inputs: input number -> Input (how to read that kernel input)."""
        self.inputs = inputs
        self.helpers: set = set()
        self.counter = 0
        self._deps: dict = {}
        self._load_index: dict = {}
        self.vec_vars: dict = {}  # (load node, instance group) -> vec4 variable
        self.exact_ops = False  # True where `runtime_zero()` defined pj_z and pj_one
        self.slow_checks: list[str] = []  # where the fast helpers would be wrong (see SLOW_IF)

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
        hit = self._deps.get(n)
        if hit is not None:
            return hit
        stack = [(n, False)]
        while stack:
            x, done = stack.pop()
            if x in self._deps:
                continue
            if x.op == "load":
                kids = self.load_index(x)
            else:
                kids = x.srcs
            if not done:
                stack.append((x, True))
                stack.extend((k, False) for k in kids if k not in self._deps)
                continue
            if x.op == "idx":
                d = frozenset((x.arg,))
            elif x.op == "acc":
                d = frozenset((ACC,))
            else:
                d = frozenset().union(*[self._deps[k] for k in kids]) if kids else frozenset()
            self._deps[x] = d
        return self._deps[n]

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
        hit = tgt.memo.get(n)
        if hit is not None:
            return hit
        # Render sources first (iteratively deep graphs would recurse; kernels stay small).
        code = self._render(n, tgt)
        name = self.fresh()
        tgt.lines.append(f"let {name} = {code};")
        tgt.memo[n] = name
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
        if d.kind == "f" and d.itemsize == 2 and op not in _NO_ROUND and op not in ir.COMPARE_OPS:
            self.helpers |= helpers_for_dtype(d)
            r = round_half(r, d)
        return r

    def _load(self, n: ir.Node, scope: Scope) -> str:
        i, tr = n.arg
        inp = self.inputs[i]
        d = n.dtype
        self.helpers |= helpers_for_dtype(d)
        off_n, ok_n = self.load_index(n)
        vec = inp.vec_loads.get(n)
        if vec is not None:
            group, k = vec(scope)
            key = (n, group)
            v = self.vec_vars.get(key)
            if v is None:
                off = self.expr(off_n, scope)
                v = self.fresh("v")
                scope.lines.append(f"let {v} = {inp.name}[{off} >> 2u];")
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

    # -- casts ---------------------------------------------------------------------------------

    def _cast(self, x: str, src, dst) -> str:
        ts, td = ctype(src), ctype(dst)
        if td == "bool":
            if ts == "bool":
                return x
            if ts == "f32":
                return f"((bitcast<u32>({x}) & 0x7fffffffu) != 0u)"
            return f"({x} != {lit(0, src)})"
        if ts == "bool":
            return f"select({zero(dst)}, {lit(1, dst)}, {x})"
        if td == "f32":
            self.helpers |= helpers_for_dtype(dst)
            if ts == "f32":
                if dst.itemsize == 2 and (src.itemsize == 4 or src.name != dst.name):
                    return round_half(x, dst)
                return x
            return round_half(f"f32({x})", dst)
        if ts == "f32":  # float -> int saturates, NaN -> 0
            if dst.name == "int32":
                self.helpers.add("f2i32")
                return f"pj_f2i32({x})"
            if dst.name == "uint32":
                self.helpers.add("f2u32")
                return f"pj_f2u32({x})"
            info = dtypes.iinfo(dst)
            self.helpers.add("isnan")
            conv = "i32" if td == "i32" else "u32"
            return (
                f"select({conv}(clamp(trunc({x}), {float(info.min)}f, {float(info.max)}f)), {zero(dst)}, pj_isnan({x}))"
            )
        # int -> int
        if ts != td:
            x = f"bitcast<{td}>({x})"
        return normalize_int(x, dst) if dst.itemsize < 4 else x

    def _bitcast(self, x: str, src, dst) -> str:
        ts, td = ctype(src), ctype(dst)
        if src.itemsize != dst.itemsize:
            raise UnsupportedDtype(f"webgpu backend: bitcast {src.name} -> {dst.name} changes the width")
        if src.itemsize == 4:
            return x if ts == td else f"bitcast<{td}>({x})"
        # 16/8-bit: go through the raw bits
        if ts == "f32":
            self.helpers |= helpers_for_dtype(src)
            raw = to_bits(x, src)
        elif ts == "bool":
            raw = f"select(0u, 1u, {x})"
        else:
            raw = to_bits(x, src)
        if td == "f32":
            self.helpers |= helpers_for_dtype(dst)
            return "pj_f16_to_f32(" + raw + ")" if dst.name == "float16" else "pj_bf16_to_f32(" + raw + ")"
        if td == "bool":
            return f"({raw} != 0u)"
        if td == "i32":
            return normalize_int(f"bitcast<i32>({raw})", dst)
        return raw

    # -- ALU ---------------------------------------------------------------------------------

    def _h(self, name: str) -> str:
        self.helpers.add(name)
        return "pj_" + name

    def _unary(self, op: str, x: str, d) -> str:
        t = ctype(d)
        if t == "f32":
            if op == "neg":
                return f"(-{x})"
            if op == "abs":
                return f"bitcast<f32>(bitcast<u32>({x}) & 0x7fffffffu)"
            if op == "sign":
                return f"select(select(select({x}, 1.0f, {x} > 0.0f), -1.0f, {x} < 0.0f), {x}, {self._h('isnan')}({x}))"
            if op in ("floor", "ceil", "trunc"):
                return f"{op}({x})"
            if op == "round_even":
                return f"round({x})"
            if op == "round_away":
                return f"select(trunc({x}) + sign({x}), trunc({x}), abs({x} - trunc({x})) < 0.5f)"
            if op == "sqrt":
                return f"sqrt({x})"
            if op == "rsqrt":
                return f"(1.0f / sqrt({x}))"
            if op == "reciprocal":
                return f"(1.0f / {x})"
            if op in ("isnan", "isinf", "isfinite"):
                return f"{self._h(op)}({x})"
            if op == "not":
                raise TypeError("webgpu backend: 'not' on a float")
            if op in SLOW_IF:
                self.slow_checks.append(SLOW_IF[op].format(x))
            return f"{self._h(op)}({x})"
        if t == "bool":
            if op == "not":
                return f"(!{x})"
            if op in ("isnan", "isinf"):
                return "false"
            if op == "isfinite":
                return "true"
            if op == "abs":
                return x
            if op == "sign":
                return x
            raise TypeError(f"webgpu backend: {op} on bool")
        # integers
        if op == "neg":
            return normalize_int(f"(-{x})" if t == "i32" else f"(0u - {x})", d)
        if op == "not":
            return normalize_int(f"(~{x})", d)
        if op == "abs":
            return normalize_int(f"abs({x})", d) if t == "i32" else x
        if op == "sign":
            return f"sign({x})" if t == "i32" else f"select(0u, 1u, {x} > 0u)"
        if op in ("isnan", "isinf"):
            return "false"
        if op == "isfinite":
            return "true"
        if op in ("floor", "ceil", "round_even", "round_away", "trunc"):
            return x
        if op == "popcnt":
            b = bits(d)
            u = x if t == "u32" else f"bitcast<u32>({x})"
            if b < 32:
                u = f"({u} & {hex((1 << b) - 1)}u)"
            r = f"countOneBits({u})"
            return r if t == "u32" else f"i32({r})"
        if op == "clz":
            b = bits(d)
            u = x if t == "u32" else f"bitcast<u32>({x})"
            if b < 32:
                u = f"({u} & {hex((1 << b) - 1)}u)"
            r = f"(countLeadingZeros({u}) - {32 - b}u)"
            return r if t == "u32" else f"i32({r})"
        raise TypeError(f"webgpu backend: unary {op} on {d.name}")

    def _binary(self, op: str, a: str, b: str, d, db, n: ir.Node) -> str:
        t = ctype(d)
        if op in ("lt", "le", "gt", "ge", "eq", "ne"):
            if t == "f32":
                return f"{self._h(op)}({a}, {b})"
            sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[op]
            if t == "bool" and op not in ("eq", "ne"):
                return f"(select(0u, 1u, {a}) {sym} select(0u, 1u, {b}))"
            return f"({a} {sym} {b})"
        if t == "bool":
            if op in ("and", "min", "mul"):
                return f"({a} && {b})"
            if op in ("or", "max", "add"):
                return f"({a} || {b})"
            if op in ("xor", "sub"):
                return f"({a} != {b})"
            raise TypeError(f"webgpu backend: {op} on bool")
        if t == "f32":
            # Shader compilers fold x*0 -> 0 and x-x -> 0 (they assume no NaN/inf); spell out IEEE.
            x, y = n.srcs
            if op == "mul" and (x.op == "const" and x.arg == 0 or y.op == "const" and y.arg == 0):
                v, c = (b, a) if x.op == "const" and x.arg == 0 else (a, b)
                sgn = f"bitcast<f32>((bitcast<u32>({v}) ^ bitcast<u32>({c})) & 0x80000000u)"
                return f"select({sgn}, {self._h('nan')}(), !{self._h('isfinite')}({v}))"
            if op == "sub" and x is y:
                return f"select(0.0f, {self._h('nan')}(), !{self._h('isfinite')}({a}))"
            if op == "mul" and (_from_bool(x) or _from_bool(y)):
                # b2f(c) * v is folded to select(c, v, 0) (Mesa's inexact rules, fma too), losing 0 * NaN/inf:
                # spell out the product with 0 (+-0 with v's sign, NaN for non-finite v) or 1.
                c, v = (a, b) if _from_bool(x) else (b, a)
                by_zero = f"select(bitcast<f32>(bitcast<u32>({v}) & 0x80000000u), {self._h('nan')}(), !{self._h('isfinite')}({v}))"
                return f"select({by_zero}, {v}, {c} != 0.0f)"
            if op in ("add", "sub", "mul") and self.exact_ops:
                # Shader compilers contract a*b + c into one fma and rewrite (a + b) - a to b
                # (Mesa's inexact algebraic rules), which breaks error-free transformations
                # (two-sum, Dekker products) that bit-exact PRNG floats rely on. An fma with
                # run-time constants the compiler cannot see rounds exactly once, like IEEE
                # add/sub/mul, and matches none of those rewrites. pj_z is -0.0 (x + -0 == x,
                # signed zeros included), pj_one is 1.0.
                if op == "mul":
                    return f"{self._h('mul')}({a}, {b}, pj_z)"
                return f"fma({b}, {'pj_one' if op == 'add' else '-pj_one'}, {a})"
            if op == "div" and not (y.op == "const" and y.arg != 0 and math.isfinite(y.arg)):
                # Vulkan leaves x / 0 and x / inf undefined, and compilers fold them as if finite.
                return f"{self._h('div')}({a}, {b})"
            if op in ("add", "sub", "mul", "div"):
                sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
                return f"({a} {sym} {b})"
            if op == "max":
                return f"{self._h('fmax')}({a}, {b})"
            if op == "min":
                return f"{self._h('fmin')}({a}, {b})"
            if op == "pow":
                if ctype(db) != "f32":
                    b = f"f32({b})"
                return f"{self._h('pow')}({a}, {b})"
            if op == "atan2":
                return f"{self._h('atan2')}({a}, {b})"
            if op == "rem":
                return f"{self._h('fmod')}({a}, {b})"
            if op == "nextafter":
                if d.itemsize == 2:  # step in half-precision ulps
                    self.helpers |= helpers_for_dtype(d)
                    return f"{self._h('nextafter_' + d.name)}({a}, {b})"
                return f"{self._h('nextafter')}({a}, {b})"
            if op == "idiv":
                return f"floor({a} / {b})"
            if op == "mod":
                return f"({a} - {b} * floor({a} / {b}))"
            raise TypeError(f"webgpu backend: {op} on {d.name}")
        # integers (values of narrow types are kept normalized)
        sfx = "i32" if t == "i32" else "u32"
        if op in ("add", "sub", "mul"):
            sym = {"add": "+", "sub": "-", "mul": "*"}[op]
            return normalize_int(f"({a} {sym} {b})", d)
        if op in ("and", "or", "xor"):
            sym = {"and": "&", "or": "|", "xor": "^"}[op]
            return f"({a} {sym} {b})"
        if op in ("max", "min"):
            return f"{op}({a}, {b})"
        if op == "div":
            return normalize_int(f"{self._h('div_' + sfx)}({a}, {b})", d)
        if op == "rem":
            return normalize_int(f"{self._h('rem_' + sfx)}({a}, {b})", d)
        if op in ("idiv", "mod"):
            x, y = n.srcs
            lo = ir.bounds(x)[0]
            if y.op == "const" and y.arg > 0 and (t == "u32" or (lo is not None and lo >= 0)):
                return f"({a} {'/' if op == 'idiv' else '%'} {b})"
            name = ("floordiv_" if op == "idiv" else "mod_") + sfx
            return f"{self._h(name)}({a}, {b})"
        if op == "pow":
            return normalize_int(f"{self._h('ipow_' + sfx)}({a}, {b})", d)
        if op in ("shl", "shr"):
            bw = bits(d)
            y = n.srcs[1]
            ub = b if ctype(db) == "u32" else f"bitcast<u32>({b})"
            if op == "shl":
                if y.op == "const" and 0 <= y.arg < bw:
                    return normalize_int(f"({a} << {y.arg}u)", d)
                return f"select({zero(d)}, {normalize_int(f'({a} << ({ub} & 31u))', d)}, {ub} < {bw}u)"
            fill = zero(d) if t == "u32" else f"select(0i, -1i, {a} < 0i)"
            if y.op == "const" and 0 <= y.arg < bw:
                return f"({a} >> {y.arg}u)"
            return f"select({fill}, ({a} >> ({ub} & 31u)), {ub} < {bw}u)"
        raise TypeError(f"webgpu backend: {op} on {d.name}")


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


def runtime_zero(binding: str) -> str:
    """`let pj_z` (-0.0) and `pj_one` (1.0): constants at run time that the shader compiler
    cannot prove (every buffer of the backend is at least 16 bytes, so its length is never 0)."""
    return (
        f"let pj_rt = arrayLength(&{binding}) == 0u; "
        "let pj_z = bitcast<f32>(select(0x80000000u, 0x3f800000u, pj_rt)); let pj_one = select(1.0f, 2.0f, pj_rt);"
    )
