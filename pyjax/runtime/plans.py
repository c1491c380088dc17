"""Plans: programs and loops laid out on buffers once, then run by the backend in one call.

A jitted Program runs as one `Plan` (pyjax.backends.base): its intermediates on buffers planned
once (dead ones reused for outputs of the same size), its outputs on fresh buffers per call. A
while/scan (its body and cond jaxprs compiled to Programs whose outputs are fresh buffers)
becomes byte copies for the carry, scan rows and stacked ys, a repeat or a while loop on a
predicate in memory; cond inside becomes a switch; nested loops nest. `Backend.run_plan` runs a
plan with no Python per step or trip (wasm: one generated driver module) or, by default, with a
Python walk that still does no jaxpr, Array or allocation work per trip. Programs with other
host steps (callbacks, effects) are not planned: execute.py and control.py run those.
"""

from __future__ import annotations

import math
import os

from pyjax.backends.base import Call, Copy, Plan, Repeat, Switch, While
from pyjax.compiler.lowering import source_load
from pyjax.compiler.partition import HostStep, KernelStep, Partitioner, RoutineStep
from pyjax.compiler.views import ShapeTracker
from pyjax.core import dtypes, hooks
from pyjax.runtime import execute
from pyjax.runtime.array import Array
from pyjax.runtime.buffers import Buffer

PLANNED = ("while", "scan")
ENABLED = os.environ.get("PYJAX_PLANS", "1") != "0"  # 0: run programs step by step, loops on the host


class _Unsupported(Exception):
    """The loop has a step no plan can hold (a callback, a complex body): run it on the host."""


class LoopPlan:
    """A Plan with its buffers: params 0..n_in-1 are the equation's inputs, the next n_out its
    outputs (fresh per call), the rest buffers owned by the plan."""

    def __init__(self, plan: Plan, n_in: int, out_nbytes: list, owned: list, keep: list):
        self.plan, self.n_in, self.out_nbytes, self.owned, self.keep = plan, n_in, out_nbytes, owned, keep
        self.inner = [b.slot for b in owned]

    def run(self, device, arrays: list, out_avals: list) -> list:
        backend = device.backend
        outs = [Buffer(backend, n) for n in self.out_nbytes]
        slots = [a._buf.slot for a in arrays] + [o.slot for o in outs] + self.inner
        backend.run_plan(self.plan, slots)
        return [Array(av, b, ShapeTracker.contiguous(av.shape), device) for av, b in zip(out_avals, outs)]


class ProgramPlan:
    """A whole jitted Program as one Plan: params are its inputs, then the buffers of its outputs
    (fresh per call), then its intermediates (planned once, shared once dead)."""

    def __init__(self, plan: Plan, n_in: int, out_nbytes: list, out_index: list, owned: list, keep: list):
        self.plan, self.n_in, self.out_nbytes, self.out_index = plan, n_in, out_nbytes, out_index
        self.owned, self.keep = owned, keep
        self.inner = [b.slot for b in owned]
        self.busy = False  # a callback inside that runs the same program again takes the step path
        self.profiled_walk = False  # (a profile started after it was built still sees it whole)

    def run(self, program, device, in_bufs: list, out_avals: list) -> list:
        backend = device.backend
        outs = [Buffer(backend, n) for n in self.out_nbytes]
        self.busy = True
        try:
            backend.run_plan(self.plan, [b.slot for b in in_bufs] + [o.slot for o in outs] + self.inner)
        finally:
            self.busy = False
        results = []
        for o, k, aval in zip(program.outputs, self.out_index, out_avals):
            if o[0] == "const":
                results.append(Array(aval, None, None, device, host=o[1]))
            else:
                results.append(Array(aval, in_bufs[o[1]] if k is None else outs[k], o[2], device))
        return results


class KernelPlan:
    """A Program of one kernel or none (most eager ops, views, small jitted functions): at most
    one Buffer and one dispatch per call, nothing laid out. A profile in progress times the
    step walk instead."""

    busy = False
    profiled_walk = True

    def __init__(self, program):
        s = program.steps[0] if program.steps else None
        self.step = s
        self.out = s.out if s is not None else -1
        outs = program.outputs
        # the usual case: the one output is the kernel's, read through this view
        self.only = outs[0][2] if s is not None and len(outs) == 1 and outs[0][:2] == ("buf", s.out) else None

    def run(self, program, device, in_bufs: list, out_avals: list) -> list:
        s = self.step
        out = None
        if s is not None:
            backend = device.backend
            out = Buffer(backend, s.nbytes)
            backend.dispatch(s.exe, [in_bufs[i].slot for i in s.srcs], [out.slot])
            if self.only is not None:
                return [Array(out_avals[0], out, self.only, device)]
        results = []
        for o, aval in zip(program.outputs, out_avals):
            if o[0] == "const":
                results.append(Array(aval, None, None, device, host=o[1]))
            else:
                results.append(Array(aval, out if o[1] == self.out else in_bufs[o[1]], o[2], device))
        return results


def program_plan(program, device):
    """program's ProgramPlan on device (made once, kept on the program), or False to run it step
    by step: single steps, host steps other than loops and conds, the debug and profile modes."""
    pp = program.plan
    if pp is None:
        pp = False
        steps = program.steps
        worth = len(steps) > 1 or any(type(s) is HostStep for s in steps)
        if (not steps or (len(steps) == 1 and type(steps[0]) is KernelStep)) and not execute.DEBUG:
            pp = KernelPlan(program)
        elif worth and ENABLED and not execute.DEBUG and execute.PROFILE is None:
            try:
                pp = _build_program(program, device)
            except _Unsupported:
                pass
        program.plan = pp
    return pp


def _build_program(program, device) -> ProgramPlan:
    b = _Builder(device)
    n_in = program.n_inputs
    ins = [b.param(0) for _ in range(n_in)]
    external, out_nbytes, out_index = {}, [], []
    sizes = _id_sizes(program)
    for o in program.outputs:
        if o[0] != "buf" or o[1] < n_in:
            out_index.append(None)
            continue
        if o[1] not in external:
            external[o[1]] = b.param(0)
            out_nbytes.append(sizes[o[1]])
        out_index.append(list(external).index(o[1]))
    b.first_pooled = len(b.nbytes)
    steps, _ = b.translate(program, ins, external)
    owned, keep = _own(b, b.first_pooled, device)
    plan = Plan(steps, b.nbytes, b.levels, b.first_pooled)
    return ProgramPlan(plan, n_in, out_nbytes, out_index, owned, keep)


def _id_sizes(program) -> dict:
    sizes = {}
    for s in program.steps:
        if type(s) is KernelStep:
            sizes[s.out] = s.nbytes
        elif type(s) is RoutineStep:
            sizes.update(zip(s.outs, s.nbytes))
        else:
            sizes.update((o, _nbytes(a)) for o, a in zip(s.outs, s.out_avals))
    return sizes


def _own(b, n_ext: int, device) -> tuple[list, list]:
    """Buffers for the params from n_ext on (captured constants keep their own)."""
    owned, keep = [], []
    for p in range(n_ext, len(b.nbytes)):
        v = b.fixed.get(p)
        if v is not None:
            keep.append(v)
            owned.append(v._buf)
        else:
            owned.append(Buffer(device.backend, b.nbytes[p]))
    return owned, keep


def run(name: str, params: dict, arrays: list, out_avals: list, device):
    """The outputs of a while/scan equation run as one plan, or None when it cannot be planned."""
    if not ENABLED or execute.DEBUG or execute.PROFILE is not None or name not in PLANNED:
        return None
    arrays = [_plain(a) for a in arrays]
    anchor = params["body_jaxpr"] if name == "while" else params["jaxpr"]
    # the plan depends on every param: the jaxprs (cond_jaxpr by id, kept alive by the plan) and
    # the static ones (a scan's length and direction, the const counts)
    statics = tuple(
        (k, id(v) if k == "cond_jaxpr" else v) for k, v in sorted(params.items()) if k != "jaxpr" and k != "body_jaxpr"
    )
    key = ("plan", device, tuple([a._tracker for a in arrays]), statics)
    lp = anchor._cache.get(key)
    if lp is None:
        try:
            lp = _build(name, params, [(a.aval.dtype, a._tracker) for a in arrays], out_avals, device)
        except _Unsupported:
            lp = False
        anchor._cache[key] = lp
    if lp is False:
        return None
    return lp.run(device, arrays, out_avals)


def _plain(a: Array) -> Array:
    """a with a buffer whose view has a's shape (host scalars uploaded, broadcast ones materialized)."""
    if a._buf is None:
        a._ensure_buffer()
    if a._tracker.shape != a.aval.shape:
        a = execute.materialize(a)
    return a


def _nbytes(aval) -> int:
    return math.prod(aval.shape) * aval.dtype.itemsize


class _Builder:
    def __init__(self, device):
        self.device = device
        self.backend = device.backend
        self.nbytes: list = []
        self.fixed: dict = {}  # param -> an Array whose buffer it is (captured constants)
        self.depth = 0
        self.levels = 0
        self.first_pooled = 0  # params from here on may be reused once dead (a program's own)

    def param(self, nbytes: int) -> int:
        self.nbytes.append(nbytes)
        return len(self.nbytes) - 1

    # --- programs ---

    def program(self, jaxpr, ins: list, specs: list) -> tuple[list, list]:
        """Steps running jaxpr on params ins (with these (dtype, tracker) specs); returns
        (steps, output params), each output a fresh contiguous buffer."""
        if dtypes.complex_live and execute._has_complex_vars(jaxpr):
            raise _Unsupported
        prog = execute.program_for(jaxpr, self.device, specs, fresh_outputs=True)
        lits = execute._literals_on(jaxpr, self.device)
        env = list(ins)
        for v in lits:
            p = self.param(v._buf.nbytes)
            self.fixed[p] = v
            env.append(p)
        steps, env = self.translate(prog, env)
        # fresh outputs are buffers, except empty ones ("const"): a param of no bytes
        return steps, [env[o[1]] if o[0] == "buf" else self.param(0) for o in prog.outputs]

    def translate(self, prog, env: list, external: dict | None = None) -> tuple[list, list]:
        """prog's steps over params (env: the params of its inputs); returns (steps, env by id).

        external (id -> param) pins outputs of a whole jitted program to per-call buffers; the
        others then share buffers of equal size once dead (liveness from prog.frees)."""
        env = env + [None] * (prog.n_ids - len(env))
        pool: dict | None = None if external is None else {}

        def out(i: int, nbytes: int) -> int:
            if external is not None:
                if i in external:
                    return external[i]
                free = pool.get(nbytes)
                if free:
                    return free.pop()
            return self.param(nbytes)

        steps = []
        for k, st in enumerate(prog.steps):
            t = type(st)
            if t is KernelStep:
                env[st.out] = out(st.out, st.nbytes)
                steps.append(Call(st.exe, [env[s] for s in st.srcs], [env[st.out]]))
            elif t is RoutineStep:
                outs = [out(o, n) for o, n in zip(st.outs, st.nbytes)]
                steps.append(Call(st.exe, [env[s] for s in st.srcs], outs))
                for o, p in zip(st.outs, outs):
                    env[o] = p
            else:
                sub, outs = self.host(st, [env[s] for s in st.srcs])
                steps.extend(sub)
                for o, p, a in zip(st.outs, outs, st.out_avals):
                    if external is not None and o in external:  # a loop's result returned: copied out
                        steps.append(Copy(external[o], 0, p, 0, _nbytes(a)))
                        p = external[o]
                    env[o] = p
            if pool is not None:
                for i in prog.frees[k]:
                    p = env[i]
                    if p is not None and p >= self.first_pooled and p not in self.fixed:
                        pool.setdefault(self.nbytes[p], []).append(p)
        return steps, env

    def host(self, st: HostStep, ins: list) -> tuple[list, list]:
        name = st.eqn.primitive.name
        specs = [(x.aval.dtype, tr) for x, tr in zip(st.eqn.inputs, st.src_trackers)]
        if name == "while":
            return self.loop_while(st.eqn.params, ins, specs)
        if name == "scan":
            return self.loop_scan(st.eqn.params, ins, specs, None)
        if name == "cond":
            return self.cond(st.eqn.params, ins, specs)
        raise _Unsupported

    def contiguous(self, steps: list, p: int, spec, nbytes: int) -> int:
        """A param holding the value of (p, spec) as a contiguous buffer (p itself when it is one)."""
        dtype, tr = spec
        if tr.is_contiguous:
            return p
        part = Partitioner(1)
        part.materialize(source_load(0, tr, dtype))
        (ks,) = part.steps
        q = self.param(nbytes)
        steps.append(Call(self.backend.prepare_kernel(ks.kernel), [p for _ in ks.srcs], [q]))
        return q

    def carry_in(self, steps: list, ins, specs, avals) -> list:
        carry = []
        for p, spec, aval in zip(ins, specs, avals):
            n = _nbytes(aval)
            c = self.contiguous(steps, p, spec, n)  # a materialized copy is the carry itself
            if c == p:
                c = self.param(n)
                steps.append(Copy(c, 0, p, 0, n))
            carry.append(c)
        return carry

    # --- loops ---

    def loop_while(self, params, ins, specs) -> tuple[list, list]:
        cj, bj = params["cond_jaxpr"], params["body_jaxpr"]
        nc, nb = params["cond_nconsts"], params["body_nconsts"]
        k_avals = bj.in_avals[nb:]
        steps: list = []
        carry = self.carry_in(steps, ins[nc + nb :], specs[nc + nb :], k_avals)
        k_specs = [(a.dtype, ShapeTracker.contiguous(a.shape)) for a in k_avals]
        cond, (pred,) = self.program(cj, ins[:nc] + carry, specs[:nc] + k_specs)
        body, outs = self.program(bj, ins[nc : nc + nb] + carry, specs[nc : nc + nb] + k_specs)
        body += [Copy(c, 0, o, 0, _nbytes(a)) for c, o, a in zip(carry, outs, k_avals)]
        steps.append(While(cond, pred, body))
        return steps, carry

    def loop_scan(self, params, ins, specs, ys_params) -> tuple[list, list]:
        jaxpr, length, reverse = params["jaxpr"], params["length"], params["reverse"]
        nc, nk = params["num_consts"], params["num_carry"]
        in_avals = jaxpr.in_avals
        k_avals, x_avals, y_avals = in_avals[nc : nc + nk], in_avals[nc + nk :], jaxpr.out_avals[nk:]
        steps: list = []
        carry = self.carry_in(steps, ins[nc : nc + nk], specs[nc : nc + nk], k_avals)
        xs = []
        for p, spec, av in zip(ins[nc + nk :], specs[nc + nk :], x_avals):
            xs.append(self.contiguous(steps, p, spec, _nbytes(av) * length))
        ys = ys_params or [self.param(_nbytes(a) * length) for a in y_avals]
        level = self.depth
        self.depth += 1
        self.levels = max(self.levels, self.depth)
        rows = [self.param(_nbytes(a)) for a in x_avals]
        body = []
        for r, x, a in zip(rows, xs, x_avals):
            n = _nbytes(a)
            body.append(Copy(r, 0, x, (length - 1) * n if reverse else 0, n, level, src_stride=-n if reverse else n))
        c_specs = [(a.dtype, ShapeTracker.contiguous(a.shape)) for a in list(k_avals) + list(x_avals)]
        sub, outs = self.program(jaxpr, ins[:nc] + carry + rows, specs[:nc] + c_specs)
        self.depth -= 1
        body += sub
        body += [Copy(c, 0, o, 0, _nbytes(a)) for c, o, a in zip(carry, outs[:nk], k_avals)]
        for y, o, a in zip(ys, outs[nk:], y_avals):
            n = _nbytes(a)
            body.append(Copy(y, (length - 1) * n if reverse else 0, o, 0, n, level, dst_stride=-n if reverse else n))
        steps.append(Repeat(length, level, body))
        return steps, carry + ys

    def cond(self, params, ins, specs) -> tuple[list, list]:
        branches = params["branches"]
        idx_dtype = specs[0][0]
        if idx_dtype.itemsize != 4 or idx_dtype.kind not in "iu":
            raise _Unsupported
        steps: list = []
        idx = self.contiguous(steps, ins[0], specs[0], 4)
        outs = [self.param(_nbytes(a)) for a in branches[0].out_avals]
        arms = []
        for br in branches:
            sub, res = self.program(br, ins[1:], specs[1:])
            sub += [Copy(o, 0, r, 0, _nbytes(a)) for o, r, a in zip(outs, res, br.out_avals)]
            arms.append(sub)
        steps.append(Switch(idx, arms))
        return steps, outs


def _build(name, params, specs, out_avals, device) -> LoopPlan:
    b = _Builder(device)
    n_in = len(specs)
    ins = [b.param(0) for _ in specs]
    outs = [b.param(0) for _ in out_avals]
    out_nbytes = [_nbytes(a) for a in out_avals]
    if name == "while":
        steps, res = b.loop_while(params, ins, specs)
        steps += [Copy(o, 0, r, 0, n) for o, r, n in zip(outs, res, out_nbytes)]
    else:
        nk = params["num_carry"]
        steps, res = b.loop_scan(params, ins, specs, outs[nk:])
        steps += [Copy(o, 0, r, 0, n) for o, r, n in zip(outs[:nk], res[:nk], out_nbytes[:nk])]
    n_ext = n_in + len(outs)
    owned, keep = _own(b, n_ext, device)
    keep.append(params)
    plan = Plan(steps, b.nbytes, b.levels, n_ext)
    return LoopPlan(plan, n_in, out_nbytes, owned, keep)


hooks.register(program_plan=program_plan)
