"""Avals, primitives, the interpreter stack and jaxprs (autodidax's shape, tuned for overhead).

Every operation is `bind(primitive, *args, **params)`. bind finds the innermost active trace
among the arguments (and the dynamic staging trace, if any) and lets it interpret the
primitive. With no tracer anywhere, the primitive's `impl` runs directly: that is eager mode.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

from pyjax.core import dtypes, hooks
from pyjax.core.config import config
from pyjax.core.errors import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

# --- abstract values ------------------------------------------------------------------------


class ShapedArray:
    """The abstract value of an array: shape, dtype, and JAX's weak-type flag."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")
    array_abstraction_level = 1

    def __init__(self, shape: tuple, dtype: dtypes.DType, weak_type: bool = False):
        self.shape = shape
        self.dtype = dtype
        self.weak_type = weak_type
        self._hash = None
        if dtype.kind == "c":
            dtypes.mark_complex()

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    # jax.typeof(x).sharding: pyjax.sharding lends the answer (core/hooks.py)
    sharding = property(lambda self: hooks.op("aval_sharding")(self))

    def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
        )

    def strip_weak_type(self) -> ShapedArray:
        return self.update(weak_type=False) if self.weak_type else self

    def __eq__(self, other):
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype is other.dtype
            and self.weak_type == other.weak_type
        )

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.shape, self.dtype, self.weak_type))
        return h

    def str_short(self) -> str:
        short = _SHORT_DTYPE[self.dtype.name]
        return f"{short}[{','.join(str(d) for d in self.shape)}]"

    def __str__(self):  # full dtype names, as JAX prints avals outside jaxprs
        return f"{self.dtype.name}[{','.join(str(d) for d in self.shape)}]"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self}{weak})"


_SHORT_DTYPE = {"bool": "bool", "float16": "f16", "bfloat16": "bf16", "float32": "f32"}
_SHORT_DTYPE.update({"float64": "f64", "int8": "i8", "int16": "i16", "int32": "i32"})
_SHORT_DTYPE.update({"int64": "i64", "uint8": "u8", "uint16": "u16", "uint32": "u32"})
_SHORT_DTYPE.update({"uint64": "u64", "complex64": "c64", "complex128": "c128"})


# How to get the aval of a non-tracer value, by Python type. The runtime registers Array,
# numpy registers ndarray when present.
pytype_aval_mappings: dict[type, Callable[[Any], ShapedArray]] = {}


def _scalar_aval(x) -> ShapedArray:
    return ShapedArray((), dtypes.python_scalar_dtype(x), dtypes.is_weak_scalar(x))


for _t in (int, float, bool, complex):
    pytype_aval_mappings[_t] = _scalar_aval


def get_aval(x) -> ShapedArray:
    """Abstract value of a tracer, Array, Python scalar or numpy array."""
    if isinstance(x, Tracer):
        return x.aval
    fn = pytype_aval_mappings.get(type(x))
    if fn is None:
        for t, f in pytype_aval_mappings.items():
            if isinstance(x, t):
                fn = f
                break
        else:
            raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type")
    return fn(x)


def valid_jaxtype(x) -> bool:
    try:
        get_aval(x)
    except TypeError:
        return False
    return True


# --- primitives -----------------------------------------------------------------------------


class Primitive:
    """A named operation; interpreters attach rules to it (impl, abstract_eval, jvp, ...)."""

    multiple_results = False
    # Backends are real-only: bind rewrites a primitive applied to complex operands with its
    # complex_rule (pyjax.lax.complex) into real primitives. complex_ok marks the few that take
    # complex values as they are (real, imag, complex, and calls whose jaxprs are rewritten).
    complex_rule: Callable | None = None
    complex_ok = False

    def __init__(self, name: str):
        self.name = name
        self.impl: Callable | None = None
        self.abstract_eval: Callable | None = None

    def __repr__(self):
        return self.name

    def bind(self, *args, **params):
        return bind(self, *args, **params)

    def def_impl(self, fn):
        self.impl = fn
        return fn

    def def_abstract_eval(self, fn):
        self.abstract_eval = fn
        return fn


class MultiPrimitive(Primitive):
    multiple_results = True


# --- traces and tracers -------------------------------------------------------------------


class MainTrace:
    """One level of the interpreter stack: which Trace type, and data it shares."""

    __slots__ = ("level", "trace_type", "global_data")

    def __init__(self, level: int, trace_type: type, global_data=None):
        self.level = level
        self.trace_type = trace_type
        self.global_data = global_data

    def __repr__(self):
        return f"MainTrace({self.level}, {self.trace_type.__name__})"


class TraceState(threading.local):
    """The interpreter stack, one per thread as in JAX: a jit traced in one thread never captures
    another thread's eager ops. Read it as `core.state.trace_stack` / `core.state.dynamic_trace`."""

    def __init__(self):
        self.trace_stack: list[MainTrace] = []
        self.dynamic_trace: MainTrace | None = None


state = TraceState()

# How many traces are open in all threads together. While none is, bind need not look at the
# thread's state at all: eager code (the common case) pays one global read per primitive.
_open_traces = 0
_open_lock = threading.Lock()


@contextmanager
def _trace_open():
    global _open_traces
    with _open_lock:
        _open_traces += 1
    try:
        yield
    finally:
        with _open_lock:
            _open_traces -= 1


@contextmanager
def new_main(trace_type: type, global_data=None):
    stack = state.trace_stack
    main = MainTrace(len(stack), trace_type, global_data)
    with _trace_open():
        stack.append(main)
        try:
            yield main
        finally:
            stack.pop()


@contextmanager
def new_dynamic(main: MainTrace):
    st = state
    with _trace_open():
        prev, st.dynamic_trace = st.dynamic_trace, main
        try:
            yield
        finally:
            st.dynamic_trace = prev


@contextmanager
def new_base_main():
    """Hide the dynamic trace (e.g. to evaluate constants eagerly while tracing)."""
    st = state
    prev, st.dynamic_trace = st.dynamic_trace, None
    try:
        yield
    finally:
        st.dynamic_trace = prev


class Trace:
    __slots__ = ("main",)

    def __init__(self, main: MainTrace):
        self.main = main

    def pure(self, val):
        raise NotImplementedError

    def lift(self, val):
        """A tracer of a lower trace as one of this trace (by default as `pure` takes a constant)."""
        return self.pure(val)

    def full_raise(self, val) -> Tracer:
        if not isinstance(val, Tracer):
            return self.pure(val)
        level = self.main.level
        if val._trace.main is self.main:
            return val
        if val._trace.main.level < level:
            return self.lift(val)
        raise Exception(f"Can't lift level {val._trace.main.level} to {level}: escaped tracer?")

    def process_primitive(self, primitive, tracers, params):
        raise NotImplementedError

    def bind_pure(self, primitive, vals: list, params: dict):
        """bind on plain values (no input carries this trace's data); the outputs lifted by `pure`."""
        return self.outputs(primitive, self.pure, bind(primitive, *vals, **params))

    @staticmethod
    def outputs(primitive, make: Callable, *parts):
        """make(*part_i) per output of a multiple-results primitive (parts are parallel lists of the
        outputs' pieces: values, tangents, batch dims), else make(*parts)."""
        return [make(*o) for o in zip(*parts)] if primitive.multiple_results else make(*parts)


# The array surface Tracer and the runtime's Array share (x + y, x[i], x.sum(), x.T): the names
# are declared here, the implementations are the library's (pyjax.numpy registers them in
# core/hooks.py), so neither class is patched from above.
OPERATORS = tuple(
    f"__{name}__"
    for name in (
        "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod divmod rdivmod pow rpow "
        "matmul rmatmul and rand or ror xor rxor lshift rlshift rshift rrshift lt le gt ge eq ne neg pos "
        "abs invert getitem"
    ).split()
)
METHODS = OPERATORS + tuple(
    "sum mean max min prod var std argmax argmin all any cumsum cumprod reshape transpose astype ravel "
    "flatten squeeze clip round sort argsort swapaxes dot diagonal trace ptp repeat view nonzero take "
    "searchsorted argpartition choose compress copy conj conjugate __array_namespace__".split()
)
PROPERTIES = ("T", "mT", "at", "real", "imag", "flat")


def _method(name: str) -> Callable:
    def method(self, *args, **kwargs):
        return hooks.methods[name](self, *args, **kwargs)

    method.__name__ = method.__qualname__ = name
    return method


def _property(name: str) -> property:
    return property(lambda self: hooks.properties[name](self), doc=f"x.{name} (the library's)")


class ArrayMethods:
    """The numpy-style methods and properties of tracers and arrays, each forwarding to the
    library's function of that name (METHODS, PROPERTIES)."""

    __slots__ = ()

    def __setitem__(self, key, value):
        raise TypeError(
            f"'{type(self).__name__}' object does not support item assignment. JAX arrays are immutable. "
            "Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another .at[] method: "
            "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
        )


for _name in METHODS:
    setattr(ArrayMethods, _name, _method(_name))
for _name in PROPERTIES:
    setattr(ArrayMethods, _name, _property(_name))


class Tracer(ArrayMethods):
    """A value being traced by some Trace (its operators and methods: ArrayMethods)."""

    __slots__ = ("_trace", "__weakref__")
    __array_priority__ = 1000

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    def full_lower(self):
        return self

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: math.prod(self.aval.shape))
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __bool__(self):
        raise TracerBoolConversionError(self)

    def __index__(self):
        raise TracerIntegerConversionError(self)

    def __int__(self):
        raise ConcretizationTypeError(self, "int() was called on a traced value.")

    def __float__(self):
        raise ConcretizationTypeError(self, "float() was called on a traced value.")

    def __array__(self, *args, **kwargs):
        raise TracerArrayConversionError(self)

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    def __hash__(self):
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def item(self):
        raise ConcretizationTypeError(self, "item() was called on a traced value.")

    def tolist(self):
        raise ConcretizationTypeError(self, "tolist() was called on a traced value.")

    def __repr__(self):
        return self._short_repr()

    def _short_repr(self) -> str:
        """How print() shows this tracer; each transformation's tracer names itself, as JAX's do."""
        return f"Traced<{aval_str(self.aval)}>with<{type(self._trace).__name__}>"


def aval_str(aval) -> str:
    """An aval as JAX prints it in tracer reprs: full dtype name, ~ for weak types (~float32[3])."""
    return ("~" if getattr(aval, "weak_type", False) else "") + str(aval)


def short_repr(x) -> str:
    """A tracer's short repr, or str() of a concrete value (the fields of AD tracers' reprs)."""
    return x._short_repr() if isinstance(x, Tracer) else str(x)


def _leaked_tracer(x: Tracer):
    """x belongs to a transformation that has already ended (stored in a global or a closure)."""
    raise UnexpectedTracerError(
        f"Encountered an unexpected tracer. A function transformed by JAX had a side effect, allowing "
        f"for a reference to an intermediate value with type {x.aval} wrapped in a {type(x).__name__} to "
        "escape the scope of the transformation. JAX transformations require that functions explicitly "
        "return their outputs, and disallow saving intermediate values to global state."
    )


def find_top_trace(args) -> Trace | None:
    """Innermost trace among args and the dynamic trace; None means evaluate eagerly."""
    top = state.dynamic_trace if _open_traces else None
    for x in args:
        if isinstance(x, Tracer):
            m = x._trace.main
            stack = state.trace_stack
            if m.level >= len(stack) or stack[m.level] is not m:
                _leaked_tracer(x)
            if top is None or m.level > top.level:
                top = m
    if top is None:
        return None
    return top.trace_type(top)


# --- complex operands ------------------------------------------------------------------------


def _is_complex_value(a) -> bool:
    av = getattr(a, "aval", None)
    if av is not None:
        return av.dtype.kind == "c"
    if type(a) is complex:
        return True
    d = getattr(a, "dtype", None)  # numpy arrays and scalars
    return getattr(d, "kind", None) == "c"


def _has_complex(args, params) -> bool:
    for a in args:
        if _is_complex_value(a):
            return True
    for k in ("new_dtype", "dtype", "preferred_element_type"):  # convert_element_type, iota, dot
        d = params.get(k)
        if isinstance(d, dtypes.DType) and d.kind == "c":
            return True
    return False


def _complex_bind(prim: Primitive, args, params):
    rule = prim.complex_rule
    if rule is None:
        names = sorted(
            {(a.aval.dtype.name if hasattr(a, "aval") else "complex64") for a in args if _is_complex_value(a)}
        )
        raise TypeError(f"{prim.name} does not accept dtype {', '.join(names) or 'complex64'}.")
    return rule(*args, **params)


def bind(prim: Primitive, *args, **params):
    if dtypes.complex_live and not prim.complex_ok and _has_complex(args, params):
        return _complex_bind(prim, args, params)
    trace = find_top_trace(args)
    if trace is None:
        if config.jax_debug_nans or config.jax_debug_infs:
            return check_nonfinite(params.get("name", prim.name), prim.impl(*args, **params))
        return prim.impl(*args, **params)
    tracers = [trace.full_raise(a) for a in args]
    outs = trace.process_primitive(prim, tracers, params)
    if prim.multiple_results:
        return [full_lower(o) for o in outs]
    return full_lower(outs)


def check_nonfinite(name: str, out):
    """out, after jax_debug_nans / jax_debug_infs found no nan / inf in its floating values; else
    FloatingPointError naming the primitive (or jitted function) that produced one, as JAX."""
    for o in out if isinstance(out, (list, tuple)) else [out]:
        kind = getattr(getattr(o, "dtype", None), "kind", None)
        if kind not in ("f", "c") and not str(getattr(o, "dtype", "")).startswith(("bfloat16", "float")):
            continue
        values = _flat_values(o.tolist())
        if config.jax_debug_nans and any(v != v for v in values):
            raise FloatingPointError(f"invalid value (nan) encountered in {name}")
        if config.jax_debug_infs and any(v == v and abs(v) == math.inf for v in values):
            raise FloatingPointError(f"invalid value (inf) encountered in {name}")
    return out


def _flat_values(x) -> list:
    """The numbers of a nested list (an array's tolist()); complex numbers as their two parts."""
    if isinstance(x, list):
        return [v for item in x for v in _flat_values(item)]
    return [x.real, x.imag] if isinstance(x, complex) else [x]


def full_lower(val):
    return val.full_lower() if isinstance(val, Tracer) else val


def concrete_or_error(x, context: str = ""):
    """Return a concrete (non-tracer) value or raise ConcretizationTypeError."""
    if isinstance(x, Tracer):
        x = x.full_lower()
        if isinstance(x, Tracer):
            raise ConcretizationTypeError(x, context)
    return x


# --- jaxprs -------------------------------------------------------------------------------


class Var:
    __slots__ = ("aval", "count")
    _counter = itertools.count()

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = next(Var._counter)

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A constant inlined in a jaxpr: Python scalars and scalar constants."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"Literal({self.val})"


class JaxprEqn:
    __slots__ = ("primitive", "inputs", "params", "out_binders")

    def __init__(self, primitive, inputs, params, out_binders):
        self.primitive = primitive
        self.inputs = inputs
        self.params = params
        self.out_binders = out_binders

    invars = property(lambda self: self.inputs)  # JAX's public names
    outvars = property(lambda self: self.out_binders)


class Jaxpr:
    """A closed-over-nothing typed program: in_binders -> eqns -> outs."""

    __slots__ = ("in_binders", "eqns", "outs", "__weakref__", "_cache")

    def __init__(self, in_binders: list, eqns: list, outs: list):
        self.in_binders = in_binders
        self.eqns = eqns
        self.outs = outs
        self._cache = {}

    in_avals = property(lambda self: [v.aval for v in self.in_binders])
    out_avals = property(lambda self: [v.aval for v in self.outs])
    # JAX's public names (a ClosedJaxpr's consts bind the first invars here: pyjax has no separate constvars)
    invars = property(lambda self: self.in_binders)
    outvars = property(lambda self: self.outs)
    constvars = property(lambda self: [])

    def __repr__(self):
        return pp_jaxpr(self)


class ClosedJaxpr:
    """A jaxpr plus the constants its first len(consts) binders take (what make_jaxpr returns)."""

    def __init__(self, jaxpr: Jaxpr, consts: list):
        self.jaxpr = jaxpr
        self.consts = consts

    in_avals = property(lambda self: self.jaxpr.in_avals[len(self.consts) :])
    out_avals = property(lambda self: self.jaxpr.out_avals)
    literals = property(lambda self: self.consts)  # JAX's newer name for consts
    eqns = property(lambda self: self.jaxpr.eqns)

    def __repr__(self):
        return pp_jaxpr(self.jaxpr, n_consts=len(self.consts))

    def __str__(self):
        return repr(self)

    def pretty_print(self, **_) -> str:
        return repr(self)


def eval_jaxpr(jaxpr: Jaxpr, args: list) -> list:
    """Interpret a jaxpr with bind, so any enclosing transformation applies."""
    env: dict = {}
    for v, a in zip(jaxpr.in_binders, args):
        env[v] = a
    for eqn in jaxpr.eqns:
        ins = [x.val if type(x) is Literal else env[x] for x in eqn.inputs]
        outs = bind(eqn.primitive, *ins, **eqn.params)
        if eqn.primitive.multiple_results:
            for v, o in zip(eqn.out_binders, outs):
                env[v] = o
        else:
            env[eqn.out_binders[0]] = outs
    return [x.val if type(x) is Literal else env[x] for x in jaxpr.outs]


def jaxpr_as_fun(jaxpr: Jaxpr) -> Callable:
    return lambda *args: eval_jaxpr(jaxpr, list(args))


# --- pretty printing (JAX's format: `{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }`) --


def _names():
    for n in itertools.count(1):
        for combo in itertools.product("abcdefghijklmnopqrstuvwxyz", repeat=n):
            yield "".join(combo)


def _pp_param(v) -> str:
    if isinstance(v, Jaxpr):
        return pp_jaxpr(v, indent=4).strip()
    if isinstance(v, ClosedJaxpr):
        return pp_jaxpr(v.jaxpr, n_consts=len(v.consts), indent=4).strip()
    if isinstance(v, (tuple, list)) and v and isinstance(v[0], (Jaxpr, ClosedJaxpr)):
        return "(" + ", ".join(_pp_param(x) for x in v) + ")"
    if isinstance(v, dtypes.DType):
        return v.name
    if callable(v) and hasattr(v, "__name__"):
        return v.__name__
    return str(v)


def pp_jaxpr(jaxpr: Jaxpr, n_consts: int = 0, indent: int = 0) -> str:
    names: dict = {}
    gen = _names()

    def name(v):
        if type(v) is Literal:
            val = v.val
            if isinstance(val, bool):
                return str(val)
            host = getattr(val, "_host", None) if not isinstance(val, (int, float)) else val
            if host is not None and not v.aval.shape:
                kind = v.aval.dtype.kind
                cast = {"f": float, "b": bool, "c": complex}.get(kind, int)
                host = cast(host)
                return f"{host!r}:{v.aval.str_short()}"
            return str(val)
        if v not in names:
            names[v] = next(gen)
        return names[v]

    def binder(v):
        return f"{name(v)}:{v.aval.str_short()}"

    consts = " ".join(binder(v) for v in jaxpr.in_binders[:n_consts])
    ins = " ".join(binder(v) for v in jaxpr.in_binders[n_consts:])
    pad = " " * (indent + 4)
    lines = [f"{{ lambda {consts}; {ins}. let"]
    for eqn in jaxpr.eqns:
        outs = " ".join(binder(v) for v in eqn.out_binders) or "_"
        params = ""
        if eqn.params:
            items = (f"{k}={_pp_param(v)}" for k, v in sorted(eqn.params.items()))
            params = "[" + " ".join(items) + "]"  # space-separated, as JAX prints them
        args = " ".join(name(x) for x in eqn.inputs)
        lines.append(f"{pad}{outs} = {eqn.primitive.name}{params} {args}".rstrip())
    outs = ", ".join(name(v) for v in jaxpr.outs)
    lines.append(" " * (indent + 2) + f"in ({outs}{',' if len(jaxpr.outs) == 1 else ''}) }}")
    return "\n".join(lines)
