"""A Plan on webgpu as host recordings: its GPU kernels and copies (fixed trip counts unrolled)
validated, packed and bound once, then replayed per call with the call's buffers.

`build(backend, plan)` turns the plan's steps into nodes: a `Recorded` for each run of steps the
host can record, the plan's own step for the rest (routines, host fallbacks, while loops,
switches, repeats too long to unroll), which the backend walks as before. A call then costs one
`Replay` entry in the dispatch queue per Recorded, not Python work per kernel.
"""

from __future__ import annotations

import struct

from pyjax.backends.base import Call, Copy, Repeat
from pyjax.backends.webgpu.renderer import GPUKernel

MAX_STEPS = 1 << 16  # dispatches one recording may hold (a repeat unrolls into it)


class Recorded:
    """A host recording and what binds its buffer positions: plan params, then scratch buffers
    (size, index) as `WebGPUBackend.scratch` hands them out."""

    __slots__ = ("recording", "params", "scratch", "steps", "workgroups")

    def __init__(self, recording: int, params: list, scratch: list, steps: int, workgroups: int):
        self.recording, self.params, self.scratch = recording, params, scratch
        self.steps, self.workgroups = steps, workgroups


def build(backend, plan) -> list | bool:
    """The nodes of plan (see the module docstring), or False when nothing in it is recordable."""
    nodes: list = []
    run: list = []  # recordable steps: (pipeline, refs, uniforms, grid); a ref is ("p", param) or ("s", (size, j))

    def close() -> None:
        if run:
            nodes.append(_record(backend, run))
            run.clear()

    counters = [0] * plan.levels
    for s in plan.steps:
        n = _size(s)
        if n is None or n > MAX_STEPS:
            close()
            nodes.append(s)
            continue
        if len(run) + n > MAX_STEPS:
            close()
        _emit(backend, s, counters, run)
    close()
    if not any(type(n) is Recorded for n in nodes):
        return False
    return nodes


def _size(s) -> int | None:
    """How many dispatches step s records into, or None when it cannot be recorded."""
    t = type(s)
    if t is Call:
        exe = s.exe
        if type(exe) is not GPUKernel or any(launch.merged for launch in exe.launches):
            return None
        return len(exe.launches)
    if t is Copy:
        return 0 if s.nbytes <= 0 else None if s.src == s.dst else 1
    if t is Repeat:
        total = 0
        for b in s.body:
            n = _size(b)
            if n is None:
                return None
            total += n
            if total * s.count > MAX_STEPS:
                return MAX_STEPS + 1
        return total * s.count
    return None


def _emit(backend, s, counters: list, run: list) -> None:
    """Append step s's dispatches to run (counters: the enclosing repeats' trip numbers)."""
    t = type(s)
    if t is Call:
        gk = s.exe
        temps = [("s", (n, j)) for j, n in enumerate(gk.temps)]
        for launch in gk.launches:
            grid = launch.grid
            if type(grid) is tuple and grid[0] == "tmp":
                grid = ("indirect", temps[grid[1]])
            elif type(grid) is int and grid <= 0:
                continue
            refs = []
            for kind, i in launch.roles:
                refs.append(("p", s.ins[i]) if kind == "in" else ("p", s.outs[i]) if kind == "out" else temps[i])
            run.append((launch.pipeline, refs, launch.uniforms, grid))
    elif t is Copy:
        if s.nbytes <= 0:
            return
        k = counters[s.level] if s.level is not None else 0
        so, do = s.src_off + k * s.src_stride, s.dst_off + k * s.dst_stride
        words = -(-(do + s.nbytes) // 4) - do // 4
        uniforms = struct.pack("<4I", so, do, s.nbytes, 0)
        run.append((backend.copy_pipeline(), [("p", s.src), ("p", s.dst)], uniforms, -(-words // 256)))
    else:  # Repeat (its size was checked)
        for i in range(s.count):
            counters[s.level] = i
            for b in s.body:
                _emit(backend, b, counters, run)


def _record(backend, run: list) -> Recorded:
    pos: dict = {}
    steps, workgroups = [], 0
    for pipeline, refs, uniforms, grid in run:
        where = [pos.setdefault(r, len(pos)) for r in refs]
        if type(grid) is tuple and grid[0] == "indirect":
            grid = ("indirect", pos.setdefault(grid[1], len(pos)))
        elif type(grid) is int:
            workgroups += grid
        steps.append((pipeline, where, uniforms, grid))
    params = [r[1] for r in pos if r[0] == "p"]
    scratch = [r[1] for r in pos if r[0] == "s"]
    # positions: params first, then scratch buffers (the order the backend binds them in)
    order = {r: i for i, r in enumerate([r for r in pos if r[0] == "p"] + [r for r in pos if r[0] == "s"])}
    remap = {pos[r]: order[r] for r in pos}
    steps = [
        (
            p,
            [remap[w] for w in where],
            u,
            ("indirect", remap[g[1]]) if type(g) is tuple and g[0] == "indirect" else g,
        )
        for p, where, u, g in steps
    ]
    return Recorded(backend.host.record(steps, len(pos)), params, scratch, len(steps), workgroups)
