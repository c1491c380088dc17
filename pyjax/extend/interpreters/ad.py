"""jax.interpreters.ad for custom primitives: primitive_jvps, primitive_transposes, defjvp, deflinear.

pyjax's reverse mode runs a vjp rule per primitive; registering here installs one: from the
transpose rule for a linear primitive, else by transposing the jvp rule's tangent map (a vjp of
the tangent function at zero tangents, which is linear, so its vjp is its transpose).
"""

from __future__ import annotations

from collections.abc import Callable

from pyjax.core.core import get_aval
from pyjax.interpreters import ad as _ad
from pyjax.interpreters.ad import Zero, instantiate, zeros_like_aval  # noqa: F401

__all__ = [
    "UndefinedPrimal",
    "Zero",
    "defjvp",
    "deflinear",
    "deflinear2",
    "instantiate_zeros",
    "is_undefined_primal",
    "primitive_jvps",
    "primitive_transposes",
    "zeros_like_aval",
]


class UndefinedPrimal:
    """The linear input of a transpose rule: only its aval is known."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"UndefinedPrimal({self.aval})"


def is_undefined_primal(x) -> bool:
    return type(x) is UndefinedPrimal


def instantiate_zeros(t):
    return instantiate(t)


class _RuleTable(dict):
    """A dict of user rules; setting one installs pyjax's own rule for the primitive."""

    def __init__(self, install: Callable):
        super().__init__()
        self._install = install

    def __setitem__(self, prim, rule):
        super().__setitem__(prim, rule)
        self._install(prim)


_linear = [0]  # > 0 while recording a jvp rule's tangent map, whose primitives are linear in what is recorded


def _vjp_rule(prim):
    """pyjax's vjp rule for a custom primitive: outside a tangent map, transpose its jvp rule's tangent map
    (JAX linearizes, then transposes); inside one (or without a jvp rule), use its transpose rule."""

    def rule(primals, needs, **params):
        if prim in primitive_transposes and (_linear[0] or prim not in primitive_jvps):
            return _by_transpose(prim, primals, needs, params)
        if prim in primitive_jvps:
            return _by_jvp(prim, primals, needs, params)
        raise NotImplementedError(f"Reverse-mode differentiation rule for '{prim.name}' not implemented")

    return rule


def _by_transpose(prim, primals, needs, params):
    out = prim.bind(*primals, **params)

    def backward(ct):
        ct = [instantiate(c) for c in ct] if prim.multiple_results else instantiate(ct)
        args = [UndefinedPrimal(get_aval(p)) if n else p for p, n in zip(primals, needs)]
        cts = primitive_transposes[prim](ct, *args, **params)
        return [None if c is None or not n else c for c, n in zip(cts, needs)]

    return out, backward


def _by_jvp(prim, primals, needs, params):
    from pyjax import api  # the API layer's vjp transposes the (linear) tangent map

    out = prim.bind(*primals, **params)

    def backward(ct):
        avals = [get_aval(p) for p in primals]

        def tangent_map(*ts):
            it = iter(ts)
            tans = [next(it) if n else Zero(a) for a, n in zip(avals, needs)]
            _, t_out = primitive_jvps[prim](list(primals), tans, **params)
            return [instantiate(t) for t in t_out] if prim.multiple_results else instantiate(t_out)

        zeros = [zeros_like_aval(a) for a, n in zip(avals, needs) if n]
        _linear[0] += 1
        try:
            _, pull = api.vjp(tangent_map, *zeros)
        finally:
            _linear[0] -= 1
        it = iter(pull(list(ct) if prim.multiple_results else ct))
        return [next(it) if n else None for n in needs]

    return out, backward


def _install_jvp(prim):
    _ad.jvp_rules[prim] = lambda primals, tangents, **params: primitive_jvps[prim](primals, tangents, **params)
    _ad.vjp_rules[prim] = _vjp_rule(prim)


def _install_transpose(prim):
    _ad.vjp_rules[prim] = _vjp_rule(prim)


primitive_jvps = _RuleTable(_install_jvp)
primitive_transposes = _RuleTable(_install_transpose)


def defjvp(prim, *jvp_rules: Callable | None) -> None:
    """One rule per input: rule(tangent, *primals, **params) -> that input's contribution to the output tangent."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        total = None
        for rule, t in zip(jvp_rules, tangents):
            if rule is None or type(t) is Zero:
                continue
            term = rule(t, *primals, **params)
            total = term if total is None else total + term
        return out, (Zero(get_aval(out)) if total is None else total)

    primitive_jvps[prim] = jvp


def deflinear(prim, transpose_rule: Callable) -> None:
    """A primitive linear in all inputs: its jvp applies it to the tangents; transpose_rule(ct, **params)."""

    def jvp(primals, tangents, **params):
        out = prim.bind(*primals, **params)
        tans = [instantiate(t) for t in tangents]
        return out, prim.bind(*tans, **params)

    primitive_jvps[prim] = jvp
    primitive_transposes[prim] = lambda ct, *args, **params: transpose_rule(ct, **params)


def deflinear2(prim, transpose_rule: Callable) -> None:
    """As deflinear, with transpose_rule(ct, *args, **params) seeing the (undefined) inputs."""
    deflinear(prim, lambda ct, **params: None)
    primitive_transposes[prim] = transpose_rule
