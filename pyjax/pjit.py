"""pjit_p: jit as a primitive carrying its closed jaxpr (what a jitted call binds), with its impl (run the
jaxpr as one program), jvp, vjp and batching rules. Below api and stages, which both bind it."""

from __future__ import annotations

from pyjax.core import core
from pyjax.interpreters import ad, batching, staging
from pyjax.interpreters.ad import Zero
from pyjax.runtime.execute import run_jaxpr

__all__ = ["pjit_p"]


pjit_p = core.MultiPrimitive("pjit")
pjit_p.complex_ok = True  # its jaxpr is made real when it runs (pyjax.lax.complex.physicalize)


def _pjit_impl(*args, jaxpr, name):
    return run_jaxpr(jaxpr, list(args))


pjit_p.impl = _pjit_impl
pjit_p.abstract_eval = lambda *avals, jaxpr, name: jaxpr.out_avals


def _pjit_jvp(primals, tangents, jaxpr, name):
    nz = tuple(type(t) is not Zero for t in tangents)
    key = ("jvp", nz)
    jvp_jaxpr = jaxpr._cache.get(key)
    if jvp_jaxpr is None:
        n = len(primals)
        t_avals = [a for a, z in zip(jaxpr.in_avals, nz) if z]

        def f(*args):
            xs, ts = list(args[:n]), list(args[n:])
            it = iter(ts)
            tans = [next(it) if z else Zero(a) for a, z in zip(jaxpr.in_avals, nz)]
            outs, touts = ad.jvp_flat(core.jaxpr_as_fun(jaxpr), xs, tans)
            return outs + [ad.instantiate(t) for t in touts]

        jvp_jaxpr = jaxpr._cache[key] = staging.trace_closed(f, list(jaxpr.in_avals) + t_avals)
    outs = pjit_p.bind(*primals, *[t for t in tangents if type(t) is not Zero], jaxpr=jvp_jaxpr, name=name)
    m = len(jaxpr.outs)
    return outs[:m], outs[m:]


def _joint_vjp_split(jaxpr):
    """Split vjp(jaxpr) into forward (primals -> outs, residuals) and backward jaxprs."""
    hit = jaxpr._cache.get("vjp")
    if hit is not None:
        return hit
    n_in, n_out = len(jaxpr.in_binders), len(jaxpr.outs)

    def joint(*args):
        xs, cts = list(args[:n_in]), list(args[n_in:])
        outs, backward, _ = ad.vjp_flat(lambda *a: (core.eval_jaxpr(jaxpr, list(a)), None), xs)
        in_cts = backward(cts)
        return outs + [ad.instantiate(c) for c in in_cts]

    joint_jaxpr = staging.trace_closed(joint, list(jaxpr.in_avals) + list(jaxpr.out_avals))
    known, unknown, out_unknown = staging.split_known(joint_jaxpr, [False] * n_in + [True] * n_out)
    hit = jaxpr._cache["vjp"] = (known, unknown, out_unknown, n_out)
    return hit


def _pjit_vjp(primals, needs, jaxpr, name):
    known, unknown, out_unknown, n_out = _joint_vjp_split(jaxpr)
    fwd = pjit_p.bind(*primals, jaxpr=known, name=name)
    n_known_outs = sum(1 for u in out_unknown if not u)
    known_outs, residuals = fwd[:n_known_outs], fwd[n_known_outs:]
    outs = known_outs[:n_out]
    known_cts = known_outs[n_out:]

    def backward(cts):
        cts = [ad.instantiate(c) for c in cts]
        unk = pjit_p.bind(*residuals, *cts, jaxpr=unknown, name=name) if unknown.outs else []
        it_k, it_u = iter(known_cts), iter(unk)
        return [next(it_u) if u else next(it_k) for u in out_unknown[n_out:]]

    backward.multiple_results = True
    return outs, backward


def _pjit_batch(size, vals, dims, jaxpr, name):
    axis_name = batching.rule_axis_name()  # collectives inside still see the named axis
    key = ("vmap", tuple(dims), size, axis_name)
    bj = jaxpr._cache.get(key)
    if bj is None:
        f = batching.batched_jaxpr_fun(jaxpr, dims, size, axis_name)
        bj = jaxpr._cache[key] = staging.trace_closed(f, batching.batched_avals(jaxpr.in_avals, dims, size))
    outs = pjit_p.bind(*vals, jaxpr=bj, name=name)
    return outs, [0] * len(outs)


ad.jvp_rules[pjit_p] = _pjit_jvp
ad.vjp_rules[pjit_p] = _pjit_vjp
batching.batch_rules[pjit_p] = _pjit_batch
