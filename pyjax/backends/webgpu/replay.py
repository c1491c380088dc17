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

A while loop nested in a recorded loop (a fixed-trip loop, `Chunked`, or a Speculative's body) is
decided on the device (`Scope`): K trips are recorded, each running the cond, clearing the loop's
flag word once the predicate is false, writing the workgroup counts of the loop's dispatches
(zeros once the flag is clear), then the body; the dispatches after the first cond are indirect
ones from those counts, so trips past the end cost no GPU work and leave the state alone. A last
cond clears the flag if the loop ended after exactly K trips; a flag still set raises an
overflow word, read back once per chunk (per batch of trips of a Speculative): then the state is
restored from a snapshot, K doubles and the trips run again.

A switch (lax.cond) inside a recording runs on the device the same way: every branch is
recorded, each under a flag set only for the branch its index picks, so the others dispatch
nothing and no read back is needed.
"""

from __future__ import annotations

import math
import struct

from pyjax.backends.base import Call, Copy, Repeat, Switch, While
from pyjax.backends.webgpu.gpu_kernel import GPUKernel
from pyjax.hosts.webgpu_contract import grid_2d

MAX_STEPS = 1 << 16  # dispatches one recording may hold (a repeat unrolls into it)
FIRST_TRIPS, MAX_TRIPS = 4, 64  # trips of a speculative while loop per read back
MAX_SNAPSHOT = 32 << 20  # bytes of carry kept per read back (fewer trips when the carry is large)
TRIP_WORKGROUPS = 1 << 16  # workgroups of k trips at most (fewer trips when one trip has many)
FIRST_NESTED = 1  # trips recorded per nested while loop at first (doubled when one needed more)
MAX_CHUNKS = 4  # recordings kept of a fixed-trip loop whose chunks differ (copies move with its counter)
# A fixed-trip loop whose nested while loops ran fewer than 1/WASTE of the trips recorded for
# them (trip counts that vary widely: K follows the largest) is walked again, a read per trip.
WASTE = 2

# A nested while loop's or a switch branch's flag word: op 0 clears dst's word unless src's byte
# (the predicate) is nonzero; op 1 sets the loop's bit in dst's word when src's byte (its flag)
# is nonzero (the overflow word: which loops needed more trips); op 2 clears dst's word unless
# the int32 at src, clamped to 0 .. bit >> 16 - 1, is the branch bit & 0xffff.
_FLAG_WGSL = """
struct U { op: u32, so: u32, d0: u32, bit: u32 }
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> u: U;
@compute @workgroup_size(1)
fn main() {
  let w = src[u.so >> 2u];
  let on = ((w >> ((u.so & 3u) * 8u)) & 0xffu) != 0u;
  let d = u.d0 >> 2u;
  if (u.op == 0u) {
    dst[d] = select(0u, dst[d], on);
  } else if (u.op == 1u) {
    if (on) { dst[d] = dst[d] | u.bit; }
  } else {
    let i = clamp(bitcast<i32>(w), 0, i32(u.bit >> 16u) - 1);
    dst[d] = select(0u, dst[d], u32(i) == (u.bit & 0xffffu));
  }
}
"""

# A nested while loop's indirect workgroup counts: its dispatches' counts while the flag is set, zeros after.
_ARGS_WGSL = """
// The word at byte u.co of `count` counts the trips run (the flag set).
struct U { n: u32, co: u32, p1: u32, p2: u32 }
@group(0) @binding(0) var<storage, read> grids: array<u32>;
@group(0) @binding(1) var<storage, read> flag: array<u32>;
@group(0) @binding(2) var<storage, read_write> args: array<u32>;
@group(0) @binding(3) var<storage, read_write> count: array<u32>;
@group(0) @binding(4) var<uniform> u: U;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < u.n) { args[g.x] = select(0u, grids[g.x], flag[0] != 0u); }
  if (g.x == 0u && flag[0] != 0u) { count[u.co >> 2u] = count[u.co >> 2u] + 1u; }
}
"""


class Recorded:
    """A host recording and what binds its buffer positions: plan params, then scratch buffers
    (size, index) as `WebGPUBackend.scratch` hands them out, then fixed buffer handles (scope
    holds those of its switches)."""

    __slots__ = ("backend", "recording", "params", "scratch", "fixed", "steps", "workgroups", "scope")

    def __init__(self, backend, recording: int, params: list, scratch: list, fixed: list, steps: int, workgroups: int):
        self.backend, self.recording, self.params, self.scratch, self.fixed = backend, recording, params, scratch, fixed
        self.steps, self.workgroups = steps, workgroups
        self.scope = None

    def __del__(self):  # the host forgets the recording after the next flush (a replay may be queued)
        self.backend.dead_recordings.append(self.recording)


class Scope:
    """What recording a node's steps needs beside them: the plan's param sizes (None where they
    vary per call: a kernel's merged inputs are copied by them) and the while loops nested in the
    node, decided on the device (see the module docstring): trips recorded per loop, a flag buffer
    per loop, and while emitting, the flag the enclosing work runs under and where an unfinished
    loop raises the overflow word."""

    def __init__(self, loops: list, sizes: list):
        self.sizes = sizes
        self.trips = dict.fromkeys(loops, FIRST_NESTED)
        self.flags: dict = {}  # While -> buffer handle (its flag word)
        self.counts: dict = {}  # While -> (handle of its dispatches' counts, handle of the gated counts, bytes)
        self.backend = None
        self.parent = self.overflow = self.counter = None  # (ref, byte offset), set by the node while emitting
        self.gate = None  # the _Gate of the loop being emitted
        self.recorded_trips = 0  # trips of nested loops emitted so far

    def __del__(self):
        if self.backend is not None:
            self.backend._dead.extend(self.flags.values())
            for grids, args, _ in self.counts.values():
                self.backend._dead.extend([grids, args])

    def bit(self, w) -> int:
        """Loop w's bit in the overflow word (shared past 32 loops)."""
        return 1 << (list(self.trips).index(w) % 32)

    def grow(self, overflow: int) -> None:
        """Loops needed more trips than recorded (their bits set in overflow): double theirs."""
        for w in self.trips:
            if overflow & self.bit(w):
                self.trips[w] *= 2

    def flag(self, backend, w) -> tuple:
        h = self.flags.get(w)
        if h is None:
            self.backend = backend
            h = self.flags[w] = backend.host.create_buffer(16)
        return ("h", h)

    def spare(self, backend) -> tuple:
        """A word nobody reads (the trip count of a switch branch's counts kernel)."""
        return self.flag(backend, "spare"), 0

    def count_buffers(self, backend, w, nbytes: int) -> tuple:
        """Handles of loop w's workgroup counts and of their gated copy, at least nbytes each."""
        got = self.counts.get(w)
        if got is None or got[2] < nbytes:
            if got is not None:
                backend._dead.extend(got[:2])
            self.backend = backend
            got = self.counts[w] = (backend.host.create_buffer(nbytes), backend.host.create_buffer(nbytes), nbytes)
        return got[0], got[1]


class _Gate:
    """While emitting a nested loop's gated part: its dispatches' int grids become indirect ones
    read at 12 * j bytes of `args`; grids collects the (x, y, z) counts by j."""

    __slots__ = ("args", "grids", "j", "max_wg")

    def __init__(self, args, max_wg: int):
        self.args, self.grids, self.j, self.max_wg = args, [], 0, max_wg


def _add(run: list, sc: Scope, step: tuple) -> None:
    """Append a dispatch to run (indirect, gated, inside a nested loop's gated part)."""
    g = sc.gate
    if g is not None and type(step[3]) is int:
        triple = grid_2d(step[3], g.max_wg)
        if g.j == len(g.grids):
            g.grids.append(triple)
        step = (step[0], step[1], step[2], ("indirect", g.args, 12 * g.j))
        g.j += 1
    run.append(step)


def _sizes(plan) -> list:
    """plan's param sizes, None for the per-call params (their sizes are not in the plan)."""
    return [None] * plan.n_external + plan.nbytes[plan.n_external :]


def _consts(backend) -> int:
    """A buffer of the words 1, 0, 0, 0 (a flag that is always set, a zero to clear with)."""
    h = getattr(backend, "_replay_consts", None)
    if h is None:
        h = backend._replay_consts = backend.host.create_buffer(16)
        backend.host.write(h, struct.pack("<4I", 1, 0, 0, 0))
    return h


class Speculative:
    """A while loop run k trips per read back (see the module docstring). carry: (param, nbytes)
    of the loop state, at offsets[i] in each trip's slot of `stride` bytes. With while loops inside
    it (scope.trips), trip i raises overflow word i, at byte `overflow_at` of the predicates."""

    def __init__(self, loop: While, carry: list, levels: int, scope: Scope):
        self.loop, self.carry, self.levels, self.scope = loop, carry, levels, scope
        self.offsets, self.stride = [], 0
        for _, n in carry:
            self.offsets.append(self.stride)
            self.stride += (n + 15) & ~15
        steps = list(loop.cond) + list(loop.body)
        # a trip of much GPU work gains little from fewer read backs and loses more to trips run
        # past the end: fewer trips per read back the more workgroups a trip has
        wgs = max(1, _workgroups(steps))
        self.max_trips = max(1, min(MAX_TRIPS, MAX_SNAPSHOT // max(self.stride, 1), MAX_STEPS // self.per_trip()))
        self.max_trips = min(self.max_trips, 1 << max(0, (TRIP_WORKGROUPS // wgs).bit_length() - 1))
        self.overflow_at = (self.max_trips + 15) & ~15
        self.backend = None
        self.preds = self.snap = None  # buffer handles, made with the first recording
        self.recorded: dict = {}  # trips -> Recorded

    def __del__(self):
        if self.backend is not None:  # freed after the next flush: queued work may still use them
            self.backend._dead.extend([self.preds, self.snap])

    def per_trip(self) -> int:
        """Dispatches one trip records (more as nested loops get more trips)."""
        n = sum(_size(s, self.scope) for s in list(self.loop.cond) + list(self.loop.body))
        return n + 1 + len(self.carry) + bool(self.scope.trips)

    def limit(self) -> int:
        """Trips one recording may hold now (0: one trip is too large to record)."""
        return min(self.max_trips, MAX_STEPS // self.per_trip())

    def trips(self, k: int, backend) -> Recorded:
        """The recording of k trips."""
        rec = self.recorded.get(k)
        if rec is None:
            if self.backend is None:
                self.preds = backend.host.create_buffer(self.overflow_at + 4 * self.max_trips + 4)
                self.snap = backend.host.create_buffer(self.max_trips * self.stride)
                self.backend = backend
            run: list = []
            counters = [0] * self.levels
            pipe = backend.copy_pipeline()
            sc = self.scope
            sc.parent = (("h", _consts(backend)), 0)  # switches in it run under the always-set flag
            for i in range(k):
                if sc.trips:  # clear trip i's overflow word; its loops run under the always-set flag
                    ovf = self.overflow_at + 4 * i
                    run.append(_copy(pipe, ("h", _consts(backend)), 4, ("h", self.preds), ovf, 4))
                    sc.parent, sc.overflow = (("h", _consts(backend)), 0), (("h", self.preds), ovf)
                    sc.counter = (("h", self.preds), self.overflow_at + 4 * self.max_trips)  # not read
                for st in self.loop.cond:
                    _emit(backend, st, counters, run, sc)
                run.append(_copy(pipe, ("p", self.loop.pred), 0, ("h", self.preds), i, 1))
                for (p, n), off in zip(self.carry, self.offsets):
                    if n:
                        run.append(_copy(pipe, ("p", p), 0, ("h", self.snap), i * self.stride + off, n))
                for st in self.loop.body:
                    _emit(backend, st, counters, run, sc)
            rec = self.recorded[k] = _record(backend, run)
        return rec


class Chunked:
    """A fixed-trip loop recorded in chunks of trips (one Replay each): one too long for a single
    recording, or one holding while loops (scope.trips). Then each chunk first keeps the loop's state
    (`state`: (param, nbytes, offset) of what its body writes, but for outputs it only stacks
    into) in a snapshot after the overflow word of `buf` and the count of nested trips run, both
    read after the chunk (`trips`: the nested trips each recording holds)."""

    def __init__(self, rep: Repeat, plan, scope: Scope):
        self.rep, self.levels, self.scope = rep, plan.levels, scope
        self.varies = _moves_with(rep.body, rep.level)  # chunks differ by their first trip
        self.state, off = [], 16
        if scope.trips:
            reads, writes, stacked = set(), set(), set()
            _accesses(rep.body, reads, writes, stacked)
            for p in sorted(writes | (stacked & reads)):
                self.state.append((p, plan.nbytes[p], off))
                off += (plan.nbytes[p] + 15) & ~15
        self.nbytes = off
        self.backend = self.buf = None
        self.recorded: dict = {}  # (first trip or 0, trips) -> Recorded
        self.trips: dict = {}  # the same keys -> nested trips recorded
        self.walk = False  # nested trip counts vary too much (see WASTE)

    def __del__(self):
        if self.backend is not None:
            self.backend._dead.append(self.buf)

    def per_trip(self) -> int:
        return sum(_size(s, self.scope) for s in self.rep.body)

    def chunk(self, start: int, count: int, backend) -> Recorded:
        """The recording of trips start .. start + count - 1."""
        key = (start if self.varies else 0, count)
        rec = self.recorded.get(key)
        if rec is None:
            run: list = []
            sc = self.scope
            if sc.trips:
                if self.buf is None:
                    self.buf, self.backend = backend.host.create_buffer(self.nbytes), backend
                pipe, buf = backend.copy_pipeline(), ("h", self.buf)
                run.append(_copy(pipe, ("h", _consts(backend)), 4, buf, 0, 8))
                for p, n, off in self.state:
                    if n:
                        run.append(_copy(pipe, ("p", p), 0, buf, off, n))
                sc.overflow, sc.counter = (buf, 0), (buf, 4)
                sc.recorded_trips = 0
            sc.parent = (("h", _consts(backend)), 0)  # its loops and switches run under the always-set flag
            counters = [0] * self.levels
            for i in range(start, start + count):
                counters[self.rep.level] = i
                for b in self.rep.body:
                    _emit(backend, b, counters, run, sc)
            if len(self.recorded) >= MAX_CHUNKS:
                self.recorded.clear()
            rec = self.recorded[key] = _record(backend, run)
            self.trips[key] = sc.recorded_trips
        return rec


def _moves_with(steps, level: int) -> bool:
    """Does a copy in steps move with counter `level`?"""
    for s in steps:
        t = type(s)
        if t is Copy and s.level == level and (s.src_stride or s.dst_stride):
            return True
        if t is Repeat and _moves_with(s.body, level):
            return True
        if t is While and _moves_with(list(s.cond) + list(s.body), level):
            return True
        if t is Switch and _moves_with([b for br in s.branches for b in br], level):
            return True
    return False


def _accesses(steps, reads: set, writes: set, stacked: set) -> None:
    """The params steps read, write, and write only slices of that move with a counter (stacked)."""
    for s in steps:
        t = type(s)
        if t is Call:
            reads.update(s.ins)
            writes.update(s.outs)
        elif t is Copy:
            reads.add(s.src)
            (stacked if s.level is not None and s.dst_stride else writes).add(s.dst)
        elif t is Repeat:
            _accesses(s.body, reads, writes, stacked)
        elif t is While:
            reads.add(s.pred)
            _accesses(list(s.cond) + list(s.body), reads, writes, stacked)
        elif t is Switch:
            reads.add(s.index)
            _accesses([b for br in s.branches for b in br], reads, writes, stacked)
    stacked -= writes


def _tail(w: While) -> list:
    """The copies w's body ends with: the loop state (runtime/plans.py loop_while)."""
    tail = []
    for b in reversed(w.body):
        if type(b) is not Copy or b.level is not None or b.dst_off or b.src_off:
            break
        tail.append(b)
    return tail[::-1]


def _nested_loops(steps, found: list) -> bool:
    """Collect the while loops in steps into found; False when one cannot be decided on the
    device (its body writes its state other than through its final copies)."""
    for s in steps:
        t = type(s)
        if t is Repeat and not _nested_loops(s.body, found):
            return False
        if t is Switch and not _nested_loops([b for br in s.branches for b in br], found):
            return False
        if t is While:
            tail = _tail(s)
            if not tail or any(c.src == c.dst for c in tail):
                return False
            writes, stacked = set(), set()
            _accesses(list(s.cond) + list(s.body[: len(s.body) - len(tail)]), set(), writes, stacked)
            if (writes | stacked) & {c.dst for c in tail} or not _nested_loops(list(s.cond) + list(s.body), found):
                return False
            found.append(s)
    return True


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
        elif t is While:
            total += _workgroups(list(s.cond) + list(s.body))
        elif t is Switch:
            total += max(_workgroups(br) for br in s.branches)
    return total


def _is_xyz(grid) -> bool:
    return type(grid) is tuple and type(grid[0]) is int


def _scope(steps, plan) -> Scope | bool:
    """The Scope of steps of plan (False: a while loop in them cannot be decided on the device)."""
    found: list = []
    if not _nested_loops(steps, found):
        return False
    return Scope(found, _sizes(plan))


def _speculative(s, plan) -> Speculative | None:
    """s as a Speculative when it is a while loop whose cond and body can be recorded."""
    if type(s) is not While:
        return None
    steps = list(s.cond) + list(s.body)
    sc = _scope(steps, plan)
    if sc is False or any(_size(b, sc) is None for b in steps):
        return None
    carry = [(b.dst, plan.nbytes[b.dst]) for b in _tail(s)]
    if not carry or sum(n for _, n in carry) > MAX_SNAPSHOT:
        return None
    spec = Speculative(s, carry, plan.levels, sc)
    return spec if spec.max_trips >= 2 else None


def _chunked(s, plan) -> Chunked | None:
    """s as a Chunked when it is a fixed-trip loop holding while loops or too long for one
    recording, and all of it can be recorded."""
    if type(s) is not Repeat:
        return None
    sc = _scope(s.body, plan)
    if sc is False or any(_size(b, sc) is None for b in s.body):
        return None
    node = Chunked(s, plan, sc)
    n = node.per_trip()
    if not sc.trips and (n * s.count <= MAX_STEPS or node.varies and n * s.count > MAX_CHUNKS * MAX_STEPS):
        return None  # recorded inline, or walked (too many different chunks to keep)
    if sc.trips and node.nbytes > MAX_SNAPSHOT:
        return None
    return node


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
            nodes[-1].scope = sc
            run.clear()

    counters = [0] * plan.levels
    sc = Scope([], _sizes(plan))
    sc.parent = (("h", _consts(backend)), 0)  # top-level switches run under the always-set flag
    for s in plan.steps:
        node = _speculative(s, plan) or _chunked(s, plan)
        if node is not None:
            close()
            nodes.append(node)
            continue
        n = _size(s, sc)
        if n is None or n > MAX_STEPS:
            close()
            nodes.append(s)
            continue
        if len(run) + n > MAX_STEPS:
            close()
        _emit(backend, s, counters, run, sc)
    close()
    if not any(type(n) in (Recorded, Speculative, Chunked) for n in nodes):
        return False
    return nodes


def _size(s, sc: Scope) -> int | None:
    """How many dispatches step s records into, or None when it cannot be recorded (a while
    loop only as one of sc's, merged inputs only of sizes the plan knows)."""
    t = type(s)
    if t is Call:
        exe = s.exe
        if type(exe) is not GPUKernel:
            return None
        n = len(exe.launches)
        for launch in exe.launches:
            for i in launch.merged:
                size = sc.sizes[s.ins[i]]
                if size is None:
                    return None
                n += size > 0
        return n
    if t is Copy:
        return 0 if s.nbytes <= 0 else None if s.src == s.dst else 1
    if t is Repeat:
        total = 0
        for b in s.body:
            n = _size(b, sc)
            if n is None:
                return None
            total += n
            if total * s.count > MAX_STEPS:
                return MAX_STEPS + 1
        return total * s.count
    if t is While and s in sc.trips:
        sizes = [_size(b, sc) for b in list(s.cond) + list(s.body)]
        if None in sizes:
            return None
        cond = sum(sizes[: len(s.cond)])
        return sc.trips[s] * (sum(sizes) + 1) + cond + 3  # + the flag's start, last gate, overflow
    if t is Switch:
        sizes = [_size(b, sc) for br in s.branches for b in br]
        return None if None in sizes else sum(sizes) + 3 * len(s.branches)  # + each flag and its counts
    return None


def _emit(backend, s, counters: list, run: list, sc: Scope) -> None:
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
            uniforms, mrg = launch.uniforms, None
            if launch.merged:  # the inputs copied into one scratch buffer, their word bases first in the uniforms
                mrg, bases = _merge(backend, [s.ins[i] for i in launch.merged], sc, run)
                uniforms = bases + (uniforms or b"")
            refs = []
            for role in launch.roles:
                kind = role[0]
                if kind == "in":
                    refs.append(("p", s.ins[role[1]]))
                elif kind == "out":
                    refs.append(("p", s.outs[role[1]]))
                elif kind == "tmp":
                    refs.append(temps[role[1]])
                else:
                    refs.append(mrg)
            _add(run, sc, (launch.pipeline, refs, uniforms, grid))
    elif t is Copy:
        if s.nbytes <= 0:
            return
        k = counters[s.level] if s.level is not None else 0
        so, do = s.src_off + k * s.src_stride, s.dst_off + k * s.dst_stride
        _add(run, sc, _copy(backend.copy_pipeline(), ("p", s.src), so, ("p", s.dst), do, s.nbytes))
    elif t is While:  # one of sc's (its size was checked)
        _emit_nested(backend, s, counters, run, sc)
    elif t is Switch:
        _emit_switch(backend, s, counters, run, sc)
    else:  # Repeat (its size was checked)
        for i in range(s.count):
            counters[s.level] = i
            for b in s.body:
                _emit(backend, b, counters, run, sc)


def _merge(backend, params: list, sc: Scope, run: list) -> tuple:
    """Copies of params into one scratch buffer (as WebGPUBackend._merge at run time):
    (its ref, uniform bytes of the word bases)."""
    bases, total = [], 0
    for p in params:
        bases.append(total // 4)
        total += (max(sc.sizes[p], 4) + 15) & ~15
    mrg = ("s", (total, "merged"))
    for p, base in zip(params, bases):
        if sc.sizes[p]:
            _add(run, sc, _copy(backend.copy_pipeline(), ("p", p), 0, mrg, base * 4, sc.sizes[p]))
    bases += [0] * (-len(bases) % 4)
    return mrg, struct.pack(f"<{len(bases)}I", *bases)


def _emit_nested(backend, w: While, counters: list, run: list, sc: Scope) -> None:
    """A nested while loop as sc.trips[w] trips gated by its flag (see the module docstring)."""
    flag, parent, outer = sc.flag(backend, w), sc.parent, sc.gate
    copy, op, counts = backend.copy_pipeline(), backend.pipeline(_FLAG_WGSL), backend.pipeline(_ARGS_WGSL)
    words = 3 * sum(_size(b, sc) for b in list(w.cond) + list(w.body))  # at most (dispatches at this level)
    grids_h, args_h = sc.count_buffers(backend, w, max(16, 4 * words))
    gate = _Gate(("h", args_h), backend.host.max_workgroups())
    cnt, co = sc.counter
    count_step = (
        counts,
        [("h", grids_h), flag, ("h", args_h), cnt],
        struct.pack("<4I", words, co, 0, 0),
        -(-words // 64),
    )
    sc.recorded_trips += sc.trips[w]
    clear = (op, [("p", w.pred), flag], struct.pack("<4I", 0, 0, 0, 0), 1)
    # the flag starts as the enclosing work's: no trips where that does not run
    run.append(_copy(copy, parent[0], parent[1], flag, 0, 4))
    sc.parent, sc.gate = (flag, 0), None
    cond_at = None  # j of the cond's first dispatch: the counts are the body's, then the cond's
    for trip in range(sc.trips[w]):
        if trip:
            sc.gate, gate.j = gate, cond_at
        for b in w.cond:
            _emit(backend, b, counters, run, sc)
        sc.gate = None
        run.append(clear)
        run.append(count_step)
        sc.gate, gate.j = gate, 0
        for b in w.body:
            _emit(backend, b, counters, run, sc)
        cond_at = gate.j
    sc.gate, gate.j = gate, cond_at
    for b in w.cond:  # ended after exactly the trips recorded: not an overflow
        _emit(backend, b, counters, run, sc)
    sc.gate = None
    run.append(clear)
    ovf, off = sc.overflow
    run.append((op, [flag, ovf], struct.pack("<4I", 1, 0, off, sc.bit(w)), 1))
    sc.parent, sc.gate = parent, outer
    grids = [c for t in gate.grids for c in t]
    backend.host.write(grids_h, struct.pack(f"<{words}I", *grids, *[0] * (words - len(grids))))


def _emit_switch(backend, s: Switch, counters: list, run: list, sc: Scope) -> None:
    """A switch as all its branches, each run only where its flag (the index picks it) is set."""
    parent, outer = sc.parent, sc.gate
    copy, op, counts = backend.copy_pipeline(), backend.pipeline(_FLAG_WGSL), backend.pipeline(_ARGS_WGSL)
    spare, spare_at = sc.spare(backend)
    nb = len(s.branches)
    for b, branch in enumerate(s.branches):
        flag = sc.flag(backend, (s, b))
        words = 3 * max(1, sum(_size(x, sc) for x in branch))
        grids_h, args_h = sc.count_buffers(backend, (s, b), 4 * words)
        gate = _Gate(("h", args_h), backend.host.max_workgroups())
        run.append(_copy(copy, parent[0], parent[1], flag, 0, 4))
        run.append((op, [("p", s.index), flag], struct.pack("<4I", 2, 0, 0, b | nb << 16), 1))
        refs = [("h", grids_h), flag, ("h", args_h), spare]
        run.append((counts, refs, struct.pack("<4I", words, spare_at, 0, 0), -(-words // 64)))
        sc.parent, sc.gate = (flag, 0), gate
        for x in branch:
            _emit(backend, x, counters, run, sc)
        sc.parent, sc.gate = parent, outer
        grids = [c for t in gate.grids for c in t]
        backend.host.write(grids_h, struct.pack(f"<{words}I", *grids, *[0] * (words - len(grids))))


def _record(backend, run: list) -> Recorded:
    pos: dict = {}
    steps, workgroups = [], 0
    for pipeline, refs, uniforms, grid in run:
        where = [pos.setdefault(r, len(pos)) for r in refs]
        if type(grid) is tuple and grid[0] == "indirect":
            grid = ("indirect", pos.setdefault(grid[1], len(pos)), *grid[2:])
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
            ("indirect", remap[g[1]], *g[2:]) if type(g) is tuple and g[0] == "indirect" else g,
        )
        for p, where, u, g in steps
    ]
    return Recorded(backend, backend.host.record(steps, len(pos)), params, scratch, fixed, len(steps), workgroups)
