"""A Plan rendered as one Wasm driver module: the loops run in Wasm, calling the kernels.

The driver imports the shared memory and each kernel's `run` (as `k.f<i>`, bound to the kernel
instances' exports when linked), and exports `run(external slots..., gather lengths...)`: plan
buffers of its own are constants, loop counters locals, a while loop's predicate a load from
memory. So a whole loop is one host call, with no return to Python per trip.
"""

from __future__ import annotations

from pyjax.backends.base import Call, Copy, Repeat, Switch, While
from pyjax.backends.wasm.encoder import I32, Module

MAX_PARAMS = 900  # Wasm engines take at most 1000 parameters per function


class Unsupported(Exception):
    """The plan calls something the driver cannot import (a scratch-allocating routine)."""


class Driver:
    """The rendered module: `wasm` bytes, `funcs` the kernel functions it imports (by import name),
    `lengths` the (external param, itemsize) pairs whose element counts follow the slots."""

    def __init__(self, wasm: bytes, funcs: dict, lengths: list, inner: tuple):
        self.wasm, self.funcs, self.lengths, self.inner = wasm, funcs, lengths, inner
        self.fn = None


def render(plan, slots: list, sizes: dict) -> Driver:
    """Render plan for these slots (params from plan.n_external on are baked in as constants;
    sizes: slot -> allocation bytes, for the gather lengths of those)."""
    n_ext = plan.n_external
    m = Module()
    imports: dict = {}  # id(WasmFunction) -> (import index, name, function)
    lengths: dict = {}  # (param, itemsize) -> driver parameter

    def collect(steps):
        for s in steps:
            t = type(s)
            if t is Call:
                if s.exe.size == 0:
                    continue
                func = s.exe.func
                if func is None:
                    raise Unsupported(s.exe.describe())
                if id(func) not in imports:
                    imports[id(func)] = (len(imports), f"f{len(imports)}", func)
                for item in s.exe.layout:
                    if item[0] == "len" and s.ins[item[1]] < n_ext:
                        lengths.setdefault((s.ins[item[1]], item[2]), None)
            elif t is Repeat or t is While:
                collect(s.body)
                if t is While:
                    collect(s.cond)
            elif t is Switch:
                for b in s.branches:
                    collect(b)

    collect(plan.steps)
    for _, name, func in sorted(imports.values(), key=lambda v: v[0]):
        m.import_function("k", name, func.params, func.results)
    for k, key in enumerate(lengths):
        lengths[key] = n_ext + k
    if n_ext + len(lengths) > MAX_PARAMS:
        raise Unsupported("too many driver parameters")
    f = m.function("run", [I32] * (n_ext + len(lengths)), [], export=True)
    counters = [f.local(I32) for _ in range(plan.levels)]
    tmp = f.local(I32)

    def addr(p: int, off: int = 0, level=None, stride: int = 0) -> None:
        if p < n_ext:
            f.local_get(p)
            if off:
                f.i32_const(off).i32_add()
        else:
            f.i32_const(slots[p] + off)
        if level is not None and stride:
            f.local_get(counters[level]).i32_const(stride).i32_mul().i32_add()

    def emit(steps) -> None:
        for s in steps:
            t = type(s)
            if t is Call:
                if s.exe.size == 0:
                    continue
                for item in s.exe.layout:
                    kind = item[0]
                    if kind == "in":
                        addr(s.ins[item[1]])
                    elif kind == "out":
                        addr(s.outs[item[1]])
                    elif kind == "const":
                        f.i32_const(item[1])
                    else:  # "len": elements in the buffer of input item[1]
                        p = s.ins[item[1]]
                        if p < n_ext:
                            f.local_get(lengths[(p, item[2])])
                        else:
                            f.i32_const(sizes[slots[p]] // item[2])
                f.call(imports[id(s.exe.func)][0])
            elif t is Copy:
                if s.nbytes <= 0:
                    continue
                addr(s.dst, s.dst_off, s.level, s.dst_stride)
                addr(s.src, s.src_off, s.level, s.src_stride)
                f.i32_const(s.nbytes).memory_copy()
            elif t is Repeat:
                c = counters[s.level]
                f.i32_const(0).local_set(c)
                f.block().loop()
                f.local_get(c).i32_const(s.count).i32_ge_s().br_if(1)
                emit(s.body)
                f.local_get(c).i32_const(1).i32_add().local_set(c)
                f.br(0).end().end()
            elif t is While:
                f.block().loop()
                emit(s.cond)
                addr(s.pred)
                f.i32_load8_u(align=0).i32_eqz().br_if(1)
                emit(s.body)
                f.br(0).end().end()
            else:  # Switch: clamp the index into range, then a br_table over the branches
                n = len(s.branches)
                f.block()
                for _ in range(n):
                    f.block()
                addr(s.index)
                f.i32_load(align=0).local_tee(tmp)
                f.i32_const(0).local_get(tmp).i32_const(0).i32_gt_s().select()
                f.br_table(list(range(n)), n - 1)
                for k, br in enumerate(s.branches):
                    f.end()
                    emit(br)
                    f.br(n - 1 - k)
                f.end()

    emit(plan.steps)
    f.finish()
    funcs = {name: func for _, name, func in imports.values()}
    inner = tuple(slots[n_ext:])
    return Driver(m.to_bytes(), funcs, [key for key in lengths], inner)
