"""jax.interpreters.partial_eval under alias_jax: PartialVal and trace_to_jaxpr_nounits, the partial
evaluation entry point libraries call (flax's scan lifting asks which outputs are known constants).

trace_to_jaxpr_nounits(fun, pvals) traces fun with the unknown inputs abstract and the known ones as
values, splits the jaxpr into what depends only on known values (evaluated now) and the rest, and
returns (jaxpr of the rest over residuals + unknown inputs, per output a PartialVal, residuals).
"""

from __future__ import annotations

from typing import Any

from pyjax.core import core
from pyjax.interpreters import staging

__all__ = ["PartialVal", "trace_to_jaxpr_nounits"]


class PartialVal(tuple):
    """(aval, None) for an unknown value, (None, const) for a known one (JAX's layout)."""

    @classmethod
    def known(cls, const: Any) -> PartialVal:
        return cls((None, const))

    @classmethod
    def unknown(cls, aval) -> PartialVal:
        return cls((aval, None))

    def is_known(self) -> bool:
        return self[0] is None

    def get_known(self) -> Any:
        return self[1] if self[0] is None else None

    def get_aval(self):
        return core.get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun, pvals: list, instantiate: bool = False) -> tuple:
    """Partially evaluate fun (a linear_util.WrappedFun over flat arguments) on pvals (see module doc)."""
    pvals = list(pvals)
    unknown_at = [i for i, pv in enumerate(pvals) if not pv.is_known()]

    def f(*tracers):
        args = [pv.get_known() for pv in pvals]
        for i, t in zip(unknown_at, tracers):
            args[i] = t
        return list(fun.call_wrapped(*args))

    jaxpr, consts = staging.trace_to_jaxpr(f, [pvals[i][0] for i in unknown_at])
    if instantiate:  # every output unknown: the whole jaxpr, over its constants + the unknown inputs
        return jaxpr, [PartialVal.unknown(a) for a in jaxpr.out_avals], list(consts)
    known, rest, out_unknown = staging.split_known(jaxpr, [False] * len(consts) + [True] * len(unknown_at))
    known_vals = core.eval_jaxpr(known, list(consts))
    n_known = len(out_unknown) - sum(out_unknown)
    outs, residuals = iter(known_vals[:n_known]), known_vals[n_known:]
    out_pvals = [
        PartialVal.unknown(a) if u else PartialVal.known(next(outs)) for a, u in zip(jaxpr.out_avals, out_unknown)
    ]
    return rest, out_pvals, residuals
