"""jax.ref: mutable array references (Ref, new_ref, freeze, get/set/swap/addupdate), JAX's `ref[...] = v`.

A Ref is a Python cell holding an array value; reading and writing it inside one trace (eagerly, inside
one jit, grad or vmap) is ordinary array code on that value, which is what JAX's discharge of state
effects computes. Across a jit boundary the cell's value travels as data: a Ref passed to (or closed over
by) a jitted function becomes an input of the traced program and its final value an output, written back
after the call. A Ref made outside a loop or cond body and touched inside it is refused with a clear
NotImplementedError (JAX threads it through the loop's state; pyjax does not yet).
"""

from __future__ import annotations

from typing import Any

from pyjax.core import core
from pyjax.core.core import Tracer, get_aval
from pyjax.core.pytree import register_pytree_node, tree_flatten, tree_unflatten
from pyjax.core.value import ByValue
from pyjax.interpreters import batching
from pyjax.lax import lax, slicing
from pyjax.lax._util import _arr

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref", "set", "swap"]

_overlays: list = []  # per jit trace with Refs: {id(outer Ref): the Ref standing for it in that trace}


class HasRefs(Exception):
    """Raised by jit's staging when a call involves Refs: the call then goes through call_with_refs."""


class RefEscape(NotImplementedError):
    """A Ref made outside the trace being staged was touched inside it (jit catches this and threads it)."""

    def __init__(self, ref: Ref):
        super().__init__(
            "pyjax: a Ref (jax.new_ref) created outside this loop or cond body (or outside a jit nested in "
            "one) was read or written inside it, which pyjax does not support yet; carry the value through "
            "the loop instead, or create the Ref inside the body"
        )
        self.ref = ref
        self.fixable = ref._main is None and ref._owner is None  # made eagerly: a jit can take it as an input


class AbstractRef:
    """The type of a Ref (jax.typeof(ref)): its array type inside Ref{...}."""

    def __init__(self, inner_aval: Any):
        self.inner_aval = inner_aval

    shape = property(lambda self: self.inner_aval.shape)
    dtype = property(lambda self: self.inner_aval.dtype)
    ndim = property(lambda self: len(self.inner_aval.shape))
    weak_type = property(lambda self: getattr(self.inner_aval, "weak_type", False))

    def __eq__(self, other):
        return isinstance(other, AbstractRef) and self.inner_aval == other.inner_aval

    def __hash__(self):
        return hash(("Ref", self.inner_aval))

    def __repr__(self):
        a = self.inner_aval
        return f"Ref{{{a.dtype.name}[{','.join(str(d) for d in a.shape)}]}}"

    __str__ = __repr__


def _top():
    stack = core.state.trace_stack
    return stack[-1] if stack else None


class Ref:
    """A mutable array reference: ref[idx] reads, ref[idx] = v writes (same shape and dtype)."""

    __slots__ = ("_value", "_main", "_owner")

    def __init__(self, value: Any, *, _owner: Any = None):
        self._value = value
        self._main = _top()  # the trace it belongs to (None: made eagerly)
        self._owner = _owner  # a stand-in's jit or loop (None: the user's Ref)

    def _cell(self) -> Ref:
        """The Ref holding this one's value in the current trace (itself, or its stand-in inside a jit)."""
        for table in reversed(_overlays):
            inner = table.get(id(self))
            if inner is not None:
                return inner._cell()
        dyn = core.state.dynamic_trace
        if dyn is not None and (self._main is None or dyn.level > self._main.level):
            raise RefEscape(self)
        return self

    # --- the value ---------------------------------------------------------------------------------

    def _read(self) -> Any:
        return self._cell()._value

    def _write(self, value: Any) -> None:
        cell = self._cell()
        if isinstance(value, Tracer) and value._trace.main.level > (-1 if cell._main is None else cell._main.level):
            if value._trace.main.trace_type is batching.BatchTrace:
                what, which, how = "vmapped value", "an unbatched", "vmapped"
            else:
                what, which, how = "a differentiated value", "a non-differentiated", "differentiated"
            raise Exception(  # noqa: TRY002  (JAX raises a plain Exception here)
                f"performing a set/swap operation with {what} on {which} array reference of type {cell.aval}. "
                f"Move the array reference to be an argument of the {how} function?"
            )
        cell._value = value

    aval = property(lambda self: AbstractRef(get_aval(self._read())))
    shape = property(lambda self: tuple(get_aval(self._read()).shape))
    dtype = property(lambda self: get_aval(self._read()).dtype)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: get_aval(self._read()).size)
    weak_type = property(lambda self: getattr(get_aval(self._read()), "weak_type", False))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, idx) -> Any:
        return get(self, idx)

    def __setitem__(self, idx, value) -> None:
        set(self, idx, value)

    def __repr__(self) -> str:
        text = repr(self._read())
        return "Ref" + text[text.index("(") :] if text.startswith("Array(") else f"Ref({text})"


class Slice(ByValue):
    """A slice of `size` elements from `start` (which may be traced) with a static stride (jax.ds)."""

    def __init__(self, start: Any, size: int, stride: int = 1):
        self.start, self.size, self.stride = start, size, stride

    def __repr__(self) -> str:
        return f"Slice(start={self.start}, size={self.size}, stride={self.stride})"

    def _key(self):
        return (self.start, self.size, self.stride)


def ds(start: Any, size: int | None = None, stride: int | None = None) -> Any:
    """A Slice for indexing Refs: ds(start, size[, stride]); ds(n) is the Python slice(n)."""
    if size is None:
        return slice(start)
    return Slice(start, size, 1 if stride is None else stride)


def _has_slice(idx) -> bool:
    return isinstance(idx, Slice) or (isinstance(idx, tuple) and any(isinstance(i, Slice) for i in idx))


def _slice_get(cur: Any, idx) -> Any:
    """cur[idx] where idx holds Slices: a dynamic_slice (then strided) on those axes."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    starts, sizes, strided, rest = [], [], [], []
    for axis, i in enumerate(idx):
        if isinstance(i, Slice):
            starts.append(i.start)
            sizes.append((i.size - 1) * i.stride + 1 if i.size else 0)
            strided.append((axis, i.stride))
            rest.append(slice(None))
        else:
            starts.append(0)
            sizes.append(get_aval(cur).shape[axis])
            rest.append(i)
    shape = get_aval(cur).shape
    starts += [0] * (len(shape) - len(idx))
    sizes += list(shape[len(idx) :])
    out = slicing.dynamic_slice(cur, starts, sizes)
    steps = [slice(None)] * len(shape)
    for axis, st in strided:
        steps[axis] = slice(None, None, st)
    return out[tuple(steps)][tuple(rest)]


def _slice_put(cur: Any, idx, value: Any, add: bool) -> Any:
    """cur with the block idx (Slices of stride 1, ints, full slices) replaced by (or added to) value."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    shape = get_aval(cur).shape
    starts, block = [], []
    for axis, n in enumerate(shape):
        i = idx[axis] if axis < len(idx) else slice(None)
        if isinstance(i, Slice) and i.stride == 1:
            starts.append(i.start)
            block.append(i.size)
        elif isinstance(i, slice) and i == slice(None):
            starts.append(0)
            block.append(n)
        elif isinstance(i, int) or (hasattr(i, "shape") and not get_aval(i).shape):
            starts.append(i)
            block.append(1)
        else:
            raise NotImplementedError(f"pyjax: writing a Ref at {idx!r} (strided or fancy with ds) is not supported")
    value = lax.reshape(value, tuple(block))
    if add:
        value = slicing.dynamic_slice(cur, starts, block) + value
    return slicing.dynamic_update_slice(cur, value, starts)


def _is_whole(idx) -> bool:
    return idx is Ellipsis or idx == () or (isinstance(idx, tuple) and len(idx) == 1 and idx[0] is Ellipsis)


def _checked(ref: Ref, idx, value: Any, op: str) -> Any:
    """value as an array of the indexed part's shape and the Ref's dtype (JAX's ValueError otherwise)."""
    want = get_aval(get(ref, idx))
    value = value if isinstance(value, Tracer) else _arr(value)
    have = get_aval(value)
    if have.dtype != want.dtype and not have.weak_type:
        raise ValueError(f"Invalid dtype for `{op}`. Ref dtype: {want.dtype}. Value dtype: {have.dtype}. ")
    if have.dtype != want.dtype or have.weak_type != want.weak_type:
        value = lax._convert(value, want.dtype, want.weak_type)  # the Ref keeps its type
    if tuple(have.shape) != tuple(want.shape):
        raise ValueError(
            f"Invalid shape for `{op}`. Ref shape: {ref.shape}. Expected shape: {tuple(want.shape)}. "
            f"Value shape: {tuple(have.shape)}. Transforms: (). "
        )
    return value


def get(ref: Ref, idx=()) -> Any:
    """ref[idx]: the current value (or the indexed part of it)."""
    cur = ref._read()
    if _has_slice(idx):
        return _slice_get(cur, idx)
    return cur if _is_whole(idx) else cur[idx]


def swap(ref: Ref, idx, value: Any) -> Any:
    """Write value at ref[idx]; returns what was there."""
    old = get(ref, idx)
    value = _checked(ref, idx, value, "swap")
    if _has_slice(idx):
        ref._write(_slice_put(ref._read(), idx, value, False))
    else:
        ref._write(value if _is_whole(idx) else ref._read().at[idx].set(value))
    return old


def set(ref: Ref, idx, value: Any) -> None:  # noqa: A001  (JAX's name)
    """ref[idx] = value."""
    swap(ref, idx, value)


def addupdate(ref: Ref, idx, value: Any) -> None:
    """ref[idx] += value (same shape as ref[idx])."""
    value = _checked(ref, idx, value, "addupdate")
    cur = ref._read()
    if _has_slice(idx):
        ref._write(_slice_put(cur, idx, value, True))
    else:
        ref._write(cur + value if _is_whole(idx) else cur.at[idx].add(value))


def new_ref(init_val: Any, *, memory_space: Any = None, kind: str | None = None) -> Ref:
    """A mutable array reference holding init_val (an array, or a scalar: weakly typed as JAX's)."""
    return Ref(init_val if isinstance(init_val, Tracer) else _arr(init_val))


def empty_ref(ty: Any, memory_space: Any = None) -> Ref:
    """A Ref of the type ty (a ShapeDtypeStruct or aval); pyjax fills it with zeros."""
    return Ref(lax.full(tuple(ty.shape), 0, ty.dtype))


def freeze(ref: Ref) -> Any:
    """The final value of ref (JAX then invalidates the reference)."""
    return ref._read()


def free_ref(ref: Ref) -> None:
    """Invalidate ref (pyjax: its value is released with the Python object)."""


# --- loops and conds: Refs made outside a body that it touches ride along in its carry / operands -------


class stand_ins:  # noqa: N801  (a context manager, named for what it makes)
    """Inside one traced body: a stand-in Ref per outer Ref, holding vals; .values() their final values."""

    def __init__(self, refs: list, vals: list):
        self.refs, self.vals = refs, vals

    def __enter__(self) -> stand_ins:
        self.cells = [Ref(v, _owner=self.refs) for v in self.vals]
        _overlays.append({id(r): c for r, c in zip(self.refs, self.cells)})
        return self

    def __exit__(self, *exc) -> None:
        _overlays.pop()

    def values(self) -> list:
        return [c._value for c in self.cells]


def threading_refs(run: Any) -> Any:
    """run(refs) for a loop or cond, retried with each outer Ref its bodies touch added to refs (run then
    carries their values through the bodies and writes the final ones back)."""
    refs: list = []
    while True:
        try:
            return run(refs)
        except RefEscape as e:
            if any(e.ref is r for r in refs) or e.ref._owner is refs:
                raise
            refs.append(e.ref)


def read_all(refs: list) -> list:
    """The current values of refs."""
    return [r._read() for r in refs]


def write_all(refs: list, vals: list) -> None:
    """Write vals back into refs."""
    for r, v in zip(refs, vals):
        r._write(v)


# --- jit: Refs as arguments or closed over ---------------------------------------------------------


def has_refs(leaves: list) -> bool:
    """Whether any of a call's argument leaves is a Ref."""
    return any(isinstance(x, Ref) for x in leaves)


def _returned_ref_error(fname: str, r: Ref) -> ValueError:
    return ValueError(
        f"function {fname} traced for jit returned a mutable array reference of type {r.aval}, but mutable "
        "array references cannot be returned."
    )


def check_not_returned(fname: str, leaves: list) -> None:
    """jit's outputs hold no Ref (JAX's ValueError)."""
    for x in leaves:
        if isinstance(x, Ref):
            raise _returned_ref_error(fname, x)


def call_with_refs(jitted: Any, fname: str, closed: list, args: tuple, kwargs: dict, helper: Any) -> Any:
    """jitted(*args, **kwargs) where Refs appear among the arguments or in `closed` (Refs made outside the
    function that it touches): helper (jit of ref_body with the same static arguments) takes their values
    as data, a stand-in Ref per trace holds them, and their final values come out and are written back."""
    leaves = tree_flatten((args, kwargs))[0]
    refs = [x for x in leaves if isinstance(x, Ref)]
    if len({id(r) for r in refs}) != len(refs):
        r = next(r for r in refs if sum(x is r for x in refs) > 1)
        raise ValueError(
            "only one reference to a mutable array may be passed as an argument to a function, but when "
            f"tracing {fname} for jit the mutable array reference of type {r.aval} appeared twice."
        )
    closed = [r for r in closed if all(r is not x for x in refs)]
    args, kwargs = tree_unflatten(
        tree_flatten((args, kwargs))[1], [_Marked(x._read()) if isinstance(x, Ref) else x for x in leaves]
    )
    out, arg_vals, closed_vals = helper([r._read() for r in closed], _Identity(closed), *args, **kwargs)
    write_all(refs, arg_vals)
    write_all(closed, closed_vals)
    return out


def ref_body(fun: Any, fname: str) -> Any:
    """The function a jit with Refs traces: (closed values, closed Refs, *args, **kwargs) -> (fun's output,
    final values of the argument Refs, final values of the closed Refs)."""

    def body(closed_vals, closed_refs, *args, **kwargs):
        leaves, tree = tree_flatten((args, kwargs), is_leaf=lambda x: isinstance(x, _Marked))
        leaves = [Ref(x.value, _owner=True) if isinstance(x, _Marked) else x for x in leaves]
        arg_refs = [x for x in leaves if isinstance(x, Ref)]
        stand_ins = [Ref(v, _owner=True) for v in closed_vals]
        _overlays.append({id(o): st for o, st in zip(closed_refs.refs, stand_ins)})
        try:
            a, kw = tree_unflatten(tree, leaves)
            out = fun(*a, **kw)
        finally:
            _overlays.pop()
        check_not_returned(fname, tree_flatten(out)[0])
        return out, [r._value for r in arg_refs], [st._value for st in stand_ins]

    return body


class _Marked:
    """A Ref's value in a jit's arguments, marked so that the traced function wraps it in a Ref again."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


register_pytree_node(_Marked, lambda m: ((m.value,), None), lambda _, c: _Marked(c[0]))


class _Identity:
    """Refs as a static argument: equal when they are the same Ref objects."""

    __slots__ = ("refs",)

    def __init__(self, refs: list):
        self.refs = list(refs)

    def __eq__(self, other):
        return isinstance(other, _Identity) and [id(r) for r in self.refs] == [id(r) for r in other.refs]

    def __hash__(self):
        return hash(tuple(id(r) for r in self.refs))
