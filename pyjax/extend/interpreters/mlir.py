"""jax.interpreters.mlir for custom primitives: pyjax compiles no MLIR, so registering a lowering is accepted.

`register_lowering(prim, lower_fun(fn))` (the common pattern: lower by tracing a jax function) gives a
primitive without an impl that fn as its impl, which also runs it under jit; other lowering rules
(hand-written MLIR) are recorded and never called.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["lower_fun", "register_lowering", "lowerings"]

lowerings: dict = {}


class _LoweredFun:
    def __init__(self, fun: Callable, multiple_results: bool):
        self.fun = fun
        self.multiple_results = multiple_results

    def __call__(self, ctx, *args, **params):
        raise NotImplementedError("pyjax does not lower to MLIR")


def lower_fun(fun: Callable, multiple_results: bool = True) -> _LoweredFun:
    return _LoweredFun(fun, multiple_results)


def register_lowering(prim, rule: Callable, platform: str | None = None, **_) -> Callable:
    lowerings[(prim, platform)] = rule
    if isinstance(rule, _LoweredFun) and getattr(prim, "impl", None) == getattr(prim, "_no_impl", None):
        fun = rule.fun
        if rule.multiple_results and not prim.multiple_results:
            prim.def_impl(lambda *args, **params: fun(*args, **params)[0])
        else:
            prim.def_impl(fun)
    return rule
