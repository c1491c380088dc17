"""Running primitives and jaxprs on devices.

Eagerly, each primitive is compiled as a one-equation jaxpr into a Program (cached by
primitive, params, input avals and views), so movement ops become views and everything else
a kernel. Under jit, the whole jaxpr is compiled once per (backend, input views). Programs run
by allocating each step's outputs and dispatching; temporaries die after their last use.
The entry points that compile or run (execute, run_jaxpr, program_for, materialize,
from_bytes) hold buffers.LOCK, so threads may share devices.
"""

from __future__ import annotations

import math
import os
import time

from pyjax.backends.limits import check_bytes
from pyjax.compiler import lowering
from pyjax.compiler.lowering import constant, source_load
from pyjax.compiler.partition import (
    INLINE_CALLS,
    HostStep,
    KernelStep,
    Partitioner,
    Program,
    RoutineStep,
    compile_jaxpr,
)
from pyjax.compiler.views import ShapeTracker
from pyjax.core import core, dtypes, hooks, minifloat
from pyjax.core.core import Jaxpr, JaxprEqn, Literal, ShapedArray, Var
from pyjax.core.lru import LRUCache, cache_size
from pyjax.runtime.array import Array, Buffer, clear_constants, complex_from_phys, complex_phys
from pyjax.runtime.buffers import LOCK
from pyjax.runtime.device import default_device, started_devices

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

DEBUG = os.environ.get("PYJAX_DEBUG", "") not in ("", "0")
# set by pyjax.profiler while a trace is active: PROFILE(program, step or "compile", t0 = time.perf_counter())
PROFILE = None

# eager op -> compiled plan, and view materializations: bounded (see pyjax.core.lru)
_eager_cache = LRUCache(cache_size("eager", 2048))
_materialize_cache = LRUCache(cache_size("materialize", 256))


def clear_caches() -> None:
    """Forget the eager plans and every started backend's executables (rebuilt on next use)."""
    _eager_cache.clear()
    _materialize_cache.clear()
    clear_constants()
    for dev in started_devices():
        dev.backend.clear_caches()


def make_scalar(value, dtype, weak: bool) -> Array:
    if dtype.kind == "c":
        value = complex(value)
    elif type(value) is complex:  # a complex value stored into a real dtype keeps its real part
        value = value.real
    return Array(ShapedArray((), dtype, weak), None, None, default_device(), host=value)


def _to_array(x, device) -> Array:
    if type(x) is Array:
        return x
    if isinstance(x, (bool, int, float, complex)):
        return make_scalar(x, dtypes.python_scalar_dtype(x), dtypes.is_weak_scalar(x))
    if np is not None and isinstance(x, (np.ndarray, np.generic)):
        return from_numpy(np.asarray(x), device)
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type")


def _device_of(args):
    dev = None
    for a in args:
        if type(a) is Array:
            if a._committed:
                return a._device
            if dev is None and a._buf is not None:
                dev = a._device
    return dev or default_device()


def _on_device(a: Array, device) -> Array:
    if a._device is device:
        return a
    if a._buf is None:
        return Array(a.aval, None, None, device, host=a._host)
    return transfer(a, device)


def execute(prim, args, params):
    """Eager impl of every lax primitive (the library calls it for every primitive)."""
    with LOCK:
        # The hot path: every operand an Array on one device (host scalars uploaded) and a
        # plan compiled before for these avals and views: one dict lookup, then (mostly) one
        # allocation and one dispatch.
        dev, on_host = None, False
        for a in args:
            if type(a) is not Array or (dev is not None and a._device is not dev):
                break
            dev = a._device
            if a._buf is None:
                on_host = True
        else:
            if dev is not None and PROFILE is None and (not on_host or _uploads_only(args)):
                key = [prim, tuple(params.items()) if params else ()]
                for a in args:
                    key.append(a.aval)
                    key.append(a._tracker)
                key.append(dev.platform)
                try:
                    plan = _eager_cache.get(tuple(key))
                except TypeError:  # an unhashable param
                    plan = None
                if plan is not None:
                    return plan.run(dev, args)
        return _execute(prim, args, params)


def _uploads_only(args) -> bool:
    """Upload the host scalars among args (at least one other operand is on the device, so
    the slow path would pick the same device); False (nothing uploaded) when none is."""
    if not any(a._buf is not None for a in args):
        return False
    for a in args:
        if a._buf is None:
            a._ensure_buffer()
    return True


def _execute(prim, args, params):
    device = _device_of(args)
    if prim.name in ("broadcast_in_dim", "reshape") and type(args[0]) is Array and args[0]._buf is None:
        # A broadcast host scalar stays a host constant: no upload, no kernel (but no larger
        # than the device could hold, as JAX allocates it).
        a = args[0]
        aval = prim.abstract_eval(a.aval, **params)
        be = a._device.backend
        if be.max_buffer_bytes is not None:
            check_bytes(math.prod(aval.shape) * aval.dtype.itemsize, be.max_buffer_bytes, be.name, be.limit_reason)
        return Array(aval, None, None, a._device, host=a._host)
    arrays = [_on_device(_to_array(a, device), device) for a in args]
    for a in arrays:
        if a.aval.dtype.kind == "c":  # complex operands are rewritten before they get here ...
            if prim.complex_rule is not None and not prim.complex_ok:
                # ... unless a host (numpy) complex operand, converted just above, is the program's first
                # complex value: core.bind only looks for complex operands once one has been seen
                return core._complex_bind(prim, arrays, params)
            raise TypeError(f"{prim.name} does not accept dtype {a.aval.dtype.name}.")
        if a._buf is None:
            a._ensure_buffer()
    key = [prim, tuple(params.items()) if params else ()]
    for a in arrays:
        key.append(a.aval)
        key.append(a._tracker)
    key.append(device.platform)
    key = tuple(key)
    try:
        plan = _eager_cache.get(key)
    except TypeError:  # an unhashable param: compiled each time
        key = plan = None
    if plan is None:
        plan = _compile_eqn(prim, arrays, params, device)
        if key is not None:
            _eager_cache[key] = plan
    return plan.run(device, arrays)


class EagerPlan:
    """One primitive compiled for given operand avals and views (its Program runs through the
    program's plan: most are a KernelPlan, one Buffer and one dispatch, or a view)."""

    __slots__ = ("program", "out_avals", "multiple")

    def __init__(self, program: Program, out_avals: list, multiple: bool):
        self.program, self.out_avals, self.multiple = program, out_avals, multiple

    def run(self, device, arrays):
        outs = run_program(self.program, device, [a._buf for a in arrays], self.out_avals)
        return outs if self.multiple else outs[0]


def _compile_eqn(prim, arrays, params, device) -> EagerPlan:
    avals = [a.aval for a in arrays]
    out = prim.abstract_eval(*avals, **params)
    out_avals = out if prim.multiple_results else [out]
    in_vars = [Var(a) for a in avals]
    out_vars = [Var(a) for a in out_avals]
    jaxpr = Jaxpr(in_vars, [JaxprEqn(prim, in_vars, params, out_vars)], out_vars)
    specs = [(a.aval.dtype, a._tracker) for a in arrays]
    program = compile_jaxpr(jaxpr, specs, _scalar_literal)
    _prepare(program, device.backend)
    return EagerPlan(program, out_avals, prim.multiple_results)


def _scalar_literal(val, aval) -> lowering.Lazy:
    if isinstance(val, (bool, int, float)):
        return constant(val, aval.dtype, aval.shape)
    if type(val) is Array and val._buf is None:
        return constant(val._host, aval.dtype, aval.shape)
    raise AssertionError("array literal without an input slot")


def _prepare(program: Program, backend) -> None:
    for s in program.steps:
        if isinstance(s, KernelStep):
            s.exe = backend.prepare_kernel(s.kernel)
            if DEBUG:
                print(f"[pyjax] {backend.name} {s.kernel!r}")
        elif isinstance(s, RoutineStep):
            s.exe = backend.prepare_routine(s.routine)


def run_program(program: Program, device, in_bufs: list, out_avals: list) -> list:
    pp = program.plan
    if pp is None:
        pp = hooks.op("program_plan")(program, device)
    if pp is not False and not pp.busy and (PROFILE is None or not pp.profiled_walk):
        return pp.run(program, device, in_bufs, out_avals)
    backend = device.backend
    env = list(in_bufs)
    env.extend([None] * (program.n_ids - len(env)))
    frees = program.frees
    prof = PROFILE
    t_prog = time.perf_counter() if prof is not None else 0.0
    for i, step in enumerate(program.steps):
        t0 = time.perf_counter() if DEBUG or prof is not None else 0.0
        if type(step) is KernelStep:
            out = Buffer(backend, step.nbytes)
            backend.dispatch(step.exe, [env[s].slot for s in step.srcs], [out.slot])
            _put(env, step.out, out)
        elif type(step) is RoutineStep:
            outs = [Buffer(backend, n) for n in step.nbytes]
            backend.dispatch(step.exe, [env[s].slot for s in step.srcs], [o.slot for o in outs])
            for o, b in zip(step.outs, outs):
                _put(env, o, b)
        else:
            _run_host(step, env, device)
        if prof is not None:
            prof(step, t0)
        if DEBUG:
            backend.synchronize()
            print(f"[pyjax] step {i}: {(time.perf_counter() - t0) * 1e3:.3f} ms")
        for f in frees[i]:
            env[f] = None
    if prof is not None:
        prof(program, t_prog)
    results = []
    for o, aval in zip(program.outputs, out_avals):
        if o[0] == "const":
            results.append(Array(aval, None, None, device, host=o[1]))
        else:
            _, src, tr = o
            results.append(Array(aval, env[src], tr, device))
    return results


def _put(env, i, v):
    if i >= len(env):
        env.extend([None] * (i + 1 - len(env)))
    env[i] = v


def _run_host(step: HostStep, env, device) -> None:
    ins = [
        Array(ShapedArray(tr.shape, _dtype_of(step.eqn, k)), env[s], tr, device)
        for k, (s, tr) in enumerate(zip(step.srcs, step.src_trackers))
    ]
    outs = hooks.op("run_host")(step.eqn, ins)
    for o, arr in zip(step.outs, outs):
        arr = arr if type(arr) is Array else _to_array(arr, device)
        arr = _on_device(arr, device)
        if arr._buf is None:
            arr._ensure_buffer()
        if not arr._tracker.is_contiguous or arr._buf.nbytes != arr.nbytes:
            arr = materialize(arr)
        _put(env, o, arr._buf)


def _dtype_of(eqn, k):
    x = eqn.inputs[k]
    return x.aval.dtype


def materialize(arr: Array) -> Array:
    """A contiguous copy of arr (used when a view must become a plain buffer)."""
    with LOCK:
        return _materialize(arr)


def _materialize(arr: Array) -> Array:
    if arr.aval.dtype.kind == "c":
        return complex_from_phys(materialize(complex_phys(arr)), arr.aval.dtype)
    if arr._buf is None:
        arr._ensure_buffer()
    key = (arr.aval.dtype, arr._tracker, arr._device.platform)
    prog = _materialize_cache.get(key)
    if prog is None:
        part = Partitioner(1)
        m = part.materialize(source_load(0, arr._tracker, arr.aval.dtype))
        prog = Program(1, part.steps, [("buf",) + m.expr.arg], [[] for _ in part.steps])
        _prepare(prog, arr._device.backend)
        _materialize_cache[key] = prog
    return run_program(prog, arr._device, [arr._buf], [arr.aval])[0]


# --- jit ---------------------------------------------------------------------------------------


def _has_complex_vars(jaxpr: Jaxpr) -> bool:
    if any(v.aval.dtype.kind == "c" for v in jaxpr.in_binders) or any(a.dtype.kind == "c" for a in jaxpr.out_avals):
        return True
    return any(x.aval.dtype.kind == "c" for e in jaxpr.eqns for x in list(e.inputs) + list(e.out_binders))


def physicalize(jaxpr: Jaxpr) -> Jaxpr:
    """The same computation over real (..., 2) pairs in place of complex values (pyjax.lax.complex
    knows the real/imag/complex primitives and lends the rewrite through core/hooks.py)."""
    return hooks.op("physicalize")(jaxpr)


def run_jaxpr(jaxpr: Jaxpr, args: list) -> list:
    """Compile (once per backend and input views) and run a closed jaxpr on concrete args."""
    with LOCK:
        if dtypes.complex_live:
            phys = jaxpr._cache.get("phys", 0)
            if phys == 0:
                phys = jaxpr._cache["phys"] = physicalize(jaxpr) if _has_complex_vars(jaxpr) else None
            if phys is not None:
                ins = [_complex_arg(a, av) for a, av in zip(args, jaxpr.in_avals)]
                outs = run_jaxpr(phys, ins)
                return [
                    complex_from_phys(o, av.dtype) if av.dtype.kind == "c" else o
                    for o, av in zip(outs, jaxpr.out_avals)
                ]
        device = _device_of(args)
        arrays = []
        trackers = []
        for a in args:
            if type(a) is not Array or a._device is not device:
                a = _on_device(_to_array(a, device), device)
            if a._buf is None:
                a._ensure_buffer()
            arrays.append(a)
            trackers.append(a._tracker)
        lits = _literals_on(jaxpr, device)
        entry = jaxpr._cache.get((device, tuple(trackers)))
        if entry is None:
            if _view_variants(jaxpr, device) >= MAX_VIEW_VARIANTS:
                # f(xs[i]) in a loop: each view would compile its own fused program; copy views
                # to plain buffers instead, so one program serves them all
                arrays = [
                    a if a._tracker.is_contiguous and a._buf.nbytes == a.nbytes else materialize(a) for a in arrays
                ]
                entry = jaxpr._cache.get((device, tuple([a._tracker for a in arrays])))
            if entry is None:
                entry = program_for(jaxpr, device, [(a.aval.dtype, a._tracker) for a in arrays])
        bufs = [a._buf for a in arrays]
        if lits:
            bufs += [v._buf for v in lits]
        return run_program(entry, device, bufs, jaxpr.out_avals)


MAX_VIEW_VARIANTS = 4  # programs per jaxpr and device compiled for input views before views are copied


def _view_variants(jaxpr: Jaxpr, device) -> int:
    """How many programs jaxpr has compiled on device (one per distinct tuple of input views)."""
    return sum(1 for k in jaxpr._cache if type(k) is tuple and len(k) == 2 and k[0] is device)


def program_for(jaxpr: Jaxpr, device, in_specs: list, fresh_outputs: bool = False) -> Program:
    """The Program run_jaxpr runs for inputs with these (dtype, view) specs on device; compiled once, cached.
    fresh_outputs: each output its own buffer written by the program (a planned loop's body)."""
    with LOCK:
        return _program_for(jaxpr, device, in_specs, fresh_outputs)


def _program_for(jaxpr: Jaxpr, device, in_specs: list, fresh_outputs: bool = False) -> Program:
    lits = _literals_on(jaxpr, device)
    key = (device, tuple([tr for _, tr in in_specs]))
    if fresh_outputs:
        key = ("fresh",) + key
    cache = jaxpr._cache
    entry = cache.get(key)
    if entry is None:
        t_compile = time.perf_counter()
        n = len(in_specs)
        lit_index = {id(v): n + k for k, v in enumerate(_array_literals(jaxpr))}  # the jaxpr's own Arrays

        def literal_fn(val, aval):
            if type(val) is Array and val._buf is not None:
                k = lit_index[id(val)]
                return source_load(k, lits[k - n]._tracker, aval.dtype)
            return _scalar_literal(val, aval)

        specs = list(in_specs) + [(v.aval.dtype, v._tracker) for v in lits]
        program = compile_jaxpr(jaxpr, specs, literal_fn, fresh_outputs)
        _prepare(program, device.backend)
        if DEBUG:
            print(f"[pyjax] compiled {program!r}")
        entry = cache[key] = program
        if PROFILE is not None:
            PROFILE("compile", t_compile)
    return entry


def compile_ahead(jaxpr: Jaxpr, device) -> Program:
    """Compile jaxpr for contiguous inputs on device before any call (the AOT API's compile())."""
    if dtypes.complex_live or _has_complex_vars(jaxpr):
        phys = jaxpr._cache.get("phys", 0)
        if phys == 0:
            phys = jaxpr._cache["phys"] = physicalize(jaxpr) if _has_complex_vars(jaxpr) else None
        if phys is not None:
            jaxpr = phys
    specs = [(a.dtype, ShapeTracker.contiguous(a.shape)) for a in jaxpr.in_avals]
    return program_for(jaxpr, device, specs)


def _complex_arg(a, aval):
    if aval.dtype.kind != "c":
        return a
    if type(a) is not Array:
        a = _to_array(a, default_device())
    return complex_phys(a)


def _literals_on(jaxpr: Jaxpr, device) -> list:
    """jaxpr's captured Arrays as they live on device. jit(f) is shared per f (as in JAX), so a program
    traced while one device was the default may run on another: its constants are copied there once."""
    lits = _array_literals(jaxpr)
    for v in lits:
        if v._device is not device:
            break
    else:
        return lits
    key = ("lits", device)
    out = jaxpr._cache.get(key)
    if out is None:
        out = jaxpr._cache[key] = [transfer(v, device) for v in lits]
    return out


def _array_literals(jaxpr: Jaxpr) -> list:
    """Arrays with device buffers captured as Literals (nested pjit included)."""
    out = jaxpr._cache.get("lits")
    if out is not None:
        return out
    out, seen = [], set()

    def visit(j):
        for e in j.eqns:
            for x in e.inputs:
                if type(x) is Literal and type(x.val) is Array and x.val._buf is not None and id(x.val) not in seen:
                    seen.add(id(x.val))
                    out.append(x.val)
            if e.primitive.name in INLINE_CALLS:
                visit(e.params[INLINE_CALLS[e.primitive.name]])
        for x in j.outs:
            if type(x) is Literal and type(x.val) is Array and x.val._buf is not None and id(x.val) not in seen:
                seen.add(id(x.val))
                out.append(x.val)

    visit(jaxpr)
    jaxpr._cache["lits"] = out
    return out


# --- host data in and out ------------------------------------------------------------------------


def from_bytes(raw: bytes, aval: ShapedArray, device=None) -> Array:
    with LOCK:
        return _from_bytes(raw, aval, device)


def _from_bytes(raw: bytes, aval: ShapedArray, device=None) -> Array:
    device = device or default_device()
    if aval.dtype.kind == "c":  # stored as (..., 2) real pairs
        phys = ShapedArray(aval.shape + (2,), dtypes.real_dtype(aval.dtype), aval.weak_type)
        return complex_from_phys(from_bytes(raw, phys, device), aval.dtype)
    buf = Buffer(device.backend, len(raw))
    device.backend.write(buf.slot, raw)
    return Array(aval, buf, ShapeTracker.contiguous(aval.shape), device)


def from_numpy(a, device=None, dtype=None, weak: bool = False) -> Array:
    d = dtypes.canonicalize(a.dtype if dtype is None else dtype)
    shape = tuple(np.shape(a))  # ascontiguousarray turns 0-d arrays into 1-d ones
    if d.name == "bfloat16":  # numpy has no bfloat16 without ml_dtypes: round float32 bits to nearest even
        bits = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
        half = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
        half = np.where(np.isnan(np.asarray(a, dtype=np.float32)), np.uint16(0x7FC0), half)
        return from_bytes(half.tobytes(), ShapedArray(shape, d, weak), device)
    if d.name in dtypes.FLOAT8:  # one byte each: ml_dtypes rounds when present, else pyjax's codec
        try:
            raw = np.ascontiguousarray(a, dtype=d.dtype).tobytes()
        except AttributeError:
            raw = bytes(minifloat.encode(float(v), d.name) for v in np.asarray(a, dtype=np.float32).ravel())
        return from_bytes(raw, ShapedArray(shape, d, weak), device)
    if d.name in dtypes.INTN:  # stored as int8/uint8 values (core/dtypes.py STRUCT_FORMAT)
        try:
            a = np.asarray(a).astype(d.dtype)  # ml_dtypes' conversion, as JAX's host transfer
        except AttributeError:
            a = np.asarray(a).astype(np.int64)
        bits, stored = d.bits, np.dtype(dtypes.STRUCT_FORMAT[d.name])
        a = np.asarray(a).astype(np.int64) & ((1 << bits) - 1)
        if d.kind == "i":
            a = np.where(a >= 1 << (bits - 1), a - (1 << bits), a)
        return from_bytes(np.ascontiguousarray(a, dtype=stored).tobytes(), ShapedArray(shape, d, weak), device)
    a = np.ascontiguousarray(a, dtype=np.dtype(d.name))
    return from_bytes(a.tobytes(), ShapedArray(shape, d, weak), device)


def transfer(a: Array, device) -> Array:
    """Copy an array to another device (through the host)."""
    if a._device is device:
        return a
    if a._buf is None:
        return Array(a.aval, None, None, device, host=a._host)
    if a.aval.dtype.kind == "c":
        return complex_from_phys(transfer(complex_phys(a), device), a.aval.dtype)
    return from_bytes(a._contiguous_bytes(), a.aval, device)


hooks.register(materialize=materialize)
math = math
