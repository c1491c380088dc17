"""A Plan on webgpu as host recordings: its GPU kernels and copies (fixed trip counts unrolled)
validated, packed and bound once, then replayed per call with the call's buffers.

`build(backend, plan)` turns the plan's steps into nodes: a `Recorded` for each run of steps the
host can record, a `Speculative` for a while loop whose cond and body can be recorded, and the
plan's own step for the rest (routines, host fallbacks, switches, repeats too long to unroll),
which the backend walks as before. A call then costs one `Replay` entry in the dispatch queue
per Recorded, not Python work per kernel.

A Speculative runs k trips per read back instead of one: trip i runs the cond, copies its
predicate to byte i of a scratch buffer and the carry to slot i of another, then runs the body.
One read of the k predicates finds the first false one, j; the carry then comes back from slot j
(the state the loop stopped in). Later trips computed on a finished state are thrown away: the
kernels are pure and cannot trap (gathers clamp). k doubles from 4 up to 64 while the loop runs.
"""

from __future__ import annotations

import math
import struct

from pyjax.backends.base import Call, Copy, Repeat, While
from pyjax.backends.webgpu.gpu_kernel import GPUKernel

MAX_STEPS = 1 << 16  # dispatches one recording may hold (a repeat unrolls into it)
FIRST_TRIPS, MAX_TRIPS = 4, 64  # trips of a speculative while loop per read back
MAX_SNAPSHOT = 32 << 20  # bytes of carry kept per read back (fewer trips when the carry is large)
TRIP_WORKGROUPS = 1 << 16  # workgroups of k trips at most (fewer trips when one trip has many)


class Recorded:
    """A host recording and what binds its buffer positions: plan params, then scratch buffers
    (size, index) as `WebGPUBackend.scratch` hands them out, then fixed buffer handles."""

    __slots__ = ("backend", "recording", "params", "scratch", "fixed", "steps", "workgroups")

    def __init__(self, backend, recording: int, params: list, scratch: list, fixed: list, steps: int, workgroups: int):
        self.backend, self.recording, self.params, self.scratch, self.fixed = backend, recording, params, scratch, fixed
        self.steps, self.workgroups = steps, workgroups

    def __del__(self):  # the host forgets the recording after the next flush (a replay may be queued)
        self.backend.dead_recordings.append(self.recording)


class Speculative:
    """A while loop run k trips per read back (see the module docstring). carry: (param, nbytes)
    of the loop state, at offsets[i] in each trip's slot of `stride` bytes."""

    def __init__(self, loop: While, carry: list, levels: int):
        self.loop, self.carry, self.levels = loop, carry, levels
        self.offsets, self.stride = [], 0
        for _, n in carry:
            self.offsets.append(self.stride)
            self.stride += (n + 15) & ~15
        steps = list(loop.cond) + list(loop.body)
        per_trip = sum(_size(s) for s in steps) + 1 + len(carry)
        # a trip of much GPU work gains little from fewer read backs and loses more to trips run
        # past the end: fewer trips per read back the more workgroups a trip has
        wgs = max(1, _workgroups(steps))
        self.max_trips = max(1, min(MAX_TRIPS, MAX_SNAPSHOT // max(self.stride, 1), MAX_STEPS // per_trip))
        self.max_trips = min(self.max_trips, 1 << max(0, (TRIP_WORKGROUPS // wgs).bit_length() - 1))
        self.backend = None
        self.preds = self.snap = None  # buffer handles, made with the first recording
        self.recorded: dict = {}  # trips -> Recorded

    def __del__(self):
        if self.backend is not None:  # freed after the next flush: queued work may still use them
            self.backend._dead.extend([self.preds, self.snap])

    def trips(self, k: int, backend) -> Recorded:
        """The recording of k trips."""
        rec = self.recorded.get(k)
        if rec is None:
            if self.backend is None:
                self.preds = backend.host.create_buffer((self.max_trips + 15) & ~15)
                self.snap = backend.host.create_buffer(self.max_trips * self.stride)
                self.backend = backend
            run: list = []
            counters = [0] * self.levels
            pipe = backend.copy_pipeline()
            for i in range(k):
                for st in self.loop.cond:
                    _emit(backend, st, counters, run)
                run.append(_copy(pipe, ("p", self.loop.pred), 0, ("h", self.preds), i, 1))
                for (p, n), off in zip(self.carry, self.offsets):
                    if n:
                        run.append(_copy(pipe, ("p", p), 0, ("h", self.snap), i * self.stride + off, n))
                for st in self.loop.body:
                    _emit(backend, st, counters, run)
            rec = self.recorded[k] = _record(backend, run)
        return rec


def _workgroups(steps) -> int:
    """Workgroups the steps launch (grids known before running)."""
    total = 0
    for s in steps:
        t = type(s)
        if t is Call:
            total += sum(launch.grid for launch in s.exe.launches if type(launch.grid) is int)
            total += sum(math.prod(launch.grid) for launch in s.exe.launches if _is_xyz(launch.grid))
        elif t is Copy:
            total += -(-s.nbytes // 1024)
        elif t is Repeat:
            total += s.count * _workgroups(s.body)
    return total


def _is_xyz(grid) -> bool:
    return type(grid) is tuple and type(grid[0]) is int


def _speculative(s, plan) -> Speculative | None:
    """s as a Speculative when it is a while loop whose cond and body can be recorded."""
    if type(s) is not While or any(_size(b) is None for b in list(s.cond) + list(s.body)):
        return None
    # the loop state: the carry the body ends by copying into (runtime/plans.py loop_while)
    carry = []
    for b in reversed(s.body):
        if type(b) is not Copy or b.level is not None or b.dst_off or b.src_off:
            break
        carry.append((b.dst, plan.nbytes[b.dst]))
    if not carry or sum(n for _, n in carry) > MAX_SNAPSHOT:
        return None
    spec = Speculative(s, carry[::-1], plan.levels)
    return spec if spec.max_trips >= 2 else None


def _copy(pipeline: int, src, src_off: int, dst, dst_off: int, nbytes: int) -> tuple:
    words = -(-(dst_off + nbytes) // 4) - dst_off // 4
    return (pipeline, [src, dst], struct.pack("<4I", src_off, dst_off, nbytes, 0), -(-words // 256))


def build(backend, plan) -> list | bool:
    """The nodes of plan (see the module docstring), or False when nothing in it is recordable."""
    nodes: list = []
    run: list = []  # recordable steps: (pipeline, refs, uniforms, grid); a ref is ("p", param), ("s", (size, j)) or ("h", handle)

    def close() -> None:
        if run:
            nodes.append(_record(backend, run))
            run.clear()

    counters = [0] * plan.levels
    for s in plan.steps:
        spec = _speculative(s, plan)
        if spec is not None:
            close()
            nodes.append(spec)
            continue
        n = _size(s)
        if n is None or n > MAX_STEPS:
            close()
            nodes.append(s)
            continue
        if len(run) + n > MAX_STEPS:
            close()
        _emit(backend, s, counters, run)
    close()
    if not any(type(n) in (Recorded, Speculative) for n in nodes):
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
        run.append(_copy(backend.copy_pipeline(), ("p", s.src), so, ("p", s.dst), do, s.nbytes))
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
    # positions: params first, then scratch buffers, then fixed handles (the order the backend binds them in)
    ordered = [r for kind in "psh" for r in pos if r[0] == kind]
    order = {r: i for i, r in enumerate(ordered)}
    params = [r[1] for r in ordered if r[0] == "p"]
    scratch = [r[1] for r in ordered if r[0] == "s"]
    fixed = [r[1] for r in ordered if r[0] == "h"]
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
    return Recorded(backend, backend.host.record(steps, len(pos)), params, scratch, fixed, len(steps), workgroups)
