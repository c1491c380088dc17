"""More float helpers for kernels, composed from `mathlib`'s float64 cores: cbrt (exp2, log2, the
inverse hyperbolics, logistic, erf_inv, lgamma and digamma are core ops now: compiler/mathlib;
the float16/bfloat16 conversions are in halffloat.py).

cbrt is emitted here once per module, for float64 only: float32 has it as core ops too.
"""

from __future__ import annotations

import math

from pyjax.backends.wasm.encoder import F64, Function, Module
from pyjax.backends.wasm.mathlib import add_math_helpers

__all__ = ["EXTRA", "math_index"]

EXTRA = ("cbrt",)


class _Ext:
    def __init__(self, m: Module):
        self.m = m
        self.index: dict[str, int] = {}

    def core(self, name: str) -> int:
        return add_math_helpers(self.m, [name], "float64")[name]

    def get(self, name: str) -> int:
        if name not in self.index:
            f = self.m.function(f"pyjax_{name}_f64x", [F64], [F64])
            self.index[name] = f.index
            getattr(self, "_" + name)(f)
            f.finish()
        return self.index[name]

    # each builder leaves the f64 result on the stack; the argument is local 0

    def _cbrt(self, f: Function) -> None:
        a, y = f.local(F64), f.local(F64)
        f.local_get(0).f64_abs().local_tee(a).call(self.core("log")).f64_const(1 / 3).f64_mul()
        f.call(self.core("exp")).local_set(y)
        for _ in range(2):  # Newton: y -= (y^3 - a) / (3 y^2)
            f.local_get(y).local_get(y).local_get(y).f64_mul().local_get(y).f64_mul().local_get(a).f64_sub()
            f.f64_const(3.0).local_get(y).f64_mul().local_get(y).f64_mul().f64_div().f64_sub().local_set(y)
        # zero, inf and nan come back unchanged
        f.local_get(y).local_get(0).f64_copysign()
        r = f.local(F64)
        f.local_set(r).local_get(0).local_get(r)
        f.local_get(a).f64_const(0.0).f64_eq().local_get(a).f64_const(math.inf).f64_eq().i32_or()
        f.local_get(0).local_get(0).f64_ne().i32_or().select()


def math_index(m: Module, name: str, dtype_name: str) -> int:
    """Index of the float64 helper `name` (mathlib's or EXTRA's): float32 has them all as core ops."""
    from pyjax.backends.wasm import mathlib

    if name in mathlib.MATH_FUNCTIONS:
        return add_math_helpers(m, [name], dtype_name)[name]
    ext = m.memo.get("pyjax.mathext")
    if ext is None:
        ext = m.memo["pyjax.mathext"] = _Ext(m)
    if dtype_name != "float64":  # float32 kernels have it as core ops (mathlib.expand)
        raise NotImplementedError(f"wasm backend: {name} on {dtype_name} (not expanded into core ops)")
    return ext.get(name)
