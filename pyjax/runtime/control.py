"""Host execution of the control-flow primitives (cond, while, scan) and registered host primitives.

The partitioner turns these equations into HostSteps; the runtime calls `run(eqn, arrays)`
with concrete input Arrays. Sub-jaxprs run through `execute.run_jaxpr` (compiled once per jaxpr
and input layout, then cached), so every loop iteration is only dispatches. Loop-carried values
are kept as contiguous buffers so the compiled program of the body is reused each iteration.
Scan slices xs and writes ys with device-side byte copies: O(1) work per element, no readback.
"""

from __future__ import annotations

import math

from pyjax.compiler.views import ShapeTracker
from pyjax.core import hooks
from pyjax.core.core import ShapedArray
from pyjax.runtime import execute, plans
from pyjax.runtime.array import Array, Buffer
from pyjax.runtime.buffers import LOCK


def run(eqn, input_arrays: list) -> list:
    """Run one cond/while/scan equation on concrete arrays; returns its output arrays."""
    fn = _RUNNERS.get(eqn.primitive.name)
    if fn is None:
        raise NotImplementedError(f"pyjax has no host implementation or lowering for primitive '{eqn.primitive.name}'")
    avals = [v.aval for v in eqn.out_binders]
    outs = _planned(eqn.primitive.name, eqn.params, list(input_arrays), avals)
    if outs is None:
        outs = fn(list(input_arrays), **eqn.params)
    return [_with_aval(o, a) for o, a in zip(outs, avals)]


def run_primitive(prim, args, params: dict) -> list:
    """Eager execution of a control-flow primitive on concrete values (its impl)."""
    device = execute._device_of(args)
    arrays = [execute._on_device(execute._to_array(a, device), device) for a in args]
    avals = prim.abstract_eval(*[a.aval for a in arrays], **params)
    outs = _planned(prim.name, params, arrays, avals)
    if outs is None:
        outs = _RUNNERS[prim.name](arrays, **params)
    return [_with_aval(o, a) for o, a in zip(outs, avals)]


def _planned(name: str, params: dict, arrays: list, avals: list):
    """The loop run as one backend plan (pyjax.runtime.plans), or None to run it here."""
    if name not in plans.PLANNED or not arrays:
        return None
    with LOCK:
        return plans.run(name, params, arrays, avals, arrays[0]._device)


# --- helpers -------------------------------------------------------------------------------------


def _with_aval(arr: Array, aval: ShapedArray) -> Array:
    if arr.aval == aval:
        return arr
    out = Array(aval, arr._buf, arr._tracker, arr._device, arr._host)
    out._committed = arr._committed
    return out


def _contiguous(arr: Array, aval: ShapedArray | None = None) -> Array:
    """arr as a plain contiguous buffer (copied only when it is a view or a host scalar)."""
    if arr._buf is None:
        arr._ensure_buffer()
    if not arr._tracker.is_contiguous or arr._buf.nbytes != arr.nbytes:
        arr = execute.materialize(arr)
    return arr if aval is None else _with_aval(arr, aval)


def _pred(arr: Array) -> bool:
    if arr._buf is None:
        return bool(arr._host)
    return bool(arr)


# --- cond ----------------------------------------------------------------------------------------


def _run_cond(arrays: list, *, branches) -> list:
    idx = arrays[0]
    i = int(idx._host) if idx._buf is None else int(idx)
    i = min(max(i, 0), len(branches) - 1)
    return execute.run_jaxpr(branches[i], arrays[1:])


# --- while ---------------------------------------------------------------------------------------


def _run_while(arrays: list, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts) -> list:
    nc, nb = cond_nconsts, body_nconsts
    cconsts, bconsts = arrays[:nc], arrays[nc : nc + nb]
    k_avals = body_jaxpr.in_avals[nb:]
    carry = [_contiguous(a, v) for a, v in zip(arrays[nc + nb :], k_avals)]
    while True:
        (p,) = execute.run_jaxpr(cond_jaxpr, cconsts + carry)
        if not _pred(p):
            return carry
        outs = execute.run_jaxpr(body_jaxpr, bconsts + carry)
        carry = [_contiguous(a, v) for a, v in zip(outs, k_avals)]


# --- scan ----------------------------------------------------------------------------------------


def _run_scan(arrays: list, *, jaxpr, length, reverse, num_consts, num_carry, unroll) -> list:
    nc, nk = num_consts, num_carry
    consts = arrays[:nc]
    in_avals = jaxpr.in_avals
    carry = [_contiguous(a, v) for a, v in zip(arrays[nc : nc + nk], in_avals[nc : nc + nk])]
    xs = [_contiguous(a) for a in arrays[nc + nk :]]
    x_avals = in_avals[nc + nk :]
    y_avals = jaxpr.out_avals[nk:]
    device = arrays[0]._device if arrays else execute.default_device()
    ys = [_Stacker(a, length, device) for a in y_avals]
    for step in range(length):
        i = length - 1 - step if reverse else step
        x_i = [_slice_leading(x, i, a) for x, a in zip(xs, x_avals)]
        outs = execute.run_jaxpr(jaxpr, consts + carry + x_i)
        carry = [_contiguous(a, v) for a, v in zip(outs[:nk], in_avals[nc : nc + nk])]
        for st, y in zip(ys, outs[nk:]):
            st.put(i, y)
    return carry + [st.result() for st in ys]


def _slice_leading(x: Array, i: int, aval: ShapedArray) -> Array:
    """Row i of a contiguous array as its own contiguous buffer (a device byte copy)."""
    nbytes = math.prod(aval.shape) * aval.dtype.itemsize
    backend = x._buf.backend
    buf = Buffer(backend, nbytes)
    try:
        if nbytes:
            backend.copy(x._buf.slot, i * nbytes, buf.slot, 0, nbytes)
    except NotImplementedError:
        # Backends without device copies: a view, materialized by a (cached) kernel.
        tr = x._tracker.shrink(((i, i + 1),) + tuple((0, s) for s in aval.shape)).reshape(aval.shape)
        return execute.materialize(Array(aval, x._buf, tr, x._device))
    return Array(aval, buf, ShapeTracker.contiguous(aval.shape), x._device)


class _Stacker:
    """Collects per-iteration ys into one stacked buffer, written in place by device copies."""

    def __init__(self, aval: ShapedArray, length: int, device):
        self.aval = aval
        self.length = length
        self.device = device
        self.row = math.prod(aval.shape) * aval.dtype.itemsize
        self.buf = Buffer(device.backend, self.row * length)
        self.pieces: dict | None = None  # fallback when the backend cannot copy

    def put(self, i: int, y: Array) -> None:
        y = _contiguous(y)
        if self.pieces is None and self.row:
            try:
                self.device.backend.copy(y._buf.slot, 0, self.buf.slot, i * self.row, self.row)
                return
            except NotImplementedError:
                self.pieces = {}
        if self.pieces is not None:
            self.pieces[i] = y

    def result(self) -> Array:
        shape = (self.length,) + self.aval.shape
        aval = ShapedArray(shape, self.aval.dtype, self.aval.weak_type)
        if self.pieces is None:
            return Array(aval, self.buf, ShapeTracker.contiguous(shape), self.device)
        return _stack_fallback([self.pieces[i] for i in range(self.length)], aval)


def _stack_fallback(pieces: list, aval: ShapedArray) -> Array:
    """Stack rows with a balanced tree of concatenates (O(n log n), only without device copies)."""
    reshape, concatenate = hooks.op("reshape"), hooks.op("concatenate")
    rows = [reshape(p, (1,) + p.aval.shape) for p in pieces]
    while len(rows) > 1:
        rows = [
            concatenate(rows[k : k + 8], 0) if len(rows[k : k + 8]) > 1 else rows[k] for k in range(0, len(rows), 8)
        ]
    return _with_aval(rows[0], aval)


_RUNNERS = {"cond": _run_cond, "while": _run_while, "scan": _run_scan}


def register_host_primitive(name: str, runner) -> None:
    """Run primitive `name` on the host under jit too: runner(arrays, **params) -> arrays.
    (Callbacks use it: they call Python with concrete arrays, which no kernel can do.)"""
    _RUNNERS[name] = runner


hooks.register(run_host=run)
