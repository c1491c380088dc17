"""float32x4 sin and cos for vectorized kernels (four lanes per call).

The scalar helpers of `mathlib` evaluate in float64 and are exact to half an ulp; calling them
lane by lane costs four calls per vector. These work on f32x4 directly (max relative error
measured < 1e-6, the contract being 2e-6 like mathlib's). exp, log, tanh and the other
exponentials are no longer here: pyjax/compiler/mathlib/ writes them once as core ops, which
the kernel generator renders as f32x4 lanes itself.

- sin, cos: k = nearest(x 2/pi) and r = x - k pi/2 in float64 (two f64x2 halves, a 33+53-bit
  pi/2, exact products for |k| < 2**20), then Taylor polynomials in float32 for sin and cos on
  |r| <= pi/4 picked and signed by the quadrant. Lanes with |x| >= 2**20 (and inf) take the
  scalar mathlib helper. NaN propagates.
"""

from __future__ import annotations

import math
import struct

from pyjax.backends.wasm.encoder import V128, Function, Module
from pyjax.backends.wasm.mathlib import add_math_helpers

__all__ = ["F32X4", "emit", "function_index"]

F32X4 = frozenset(("sin", "cos"))

_PIO2_HI = math.ldexp(math.floor(math.ldexp(math.pi / 2, 32)), -32)  # 33 significant bits
_PIO2_LO = math.pi / 2 - _PIO2_HI


def _vf(f: Function, v: float) -> None:
    f.v128_const(struct.pack("<4f", v, v, v, v))


def _vi(f: Function, v: int) -> None:
    f.v128_const(struct.pack("<4I", *[v & 0xFFFFFFFF] * 4))


def _vd(f: Function, v: float) -> None:
    f.v128_const(struct.pack("<2d", v, v))


def _horner(f: Function, z: int, coeffs: list[float], fma: bool) -> None:
    """Push sum(coeffs[i] z**i) for the f32x4 local z (with relaxed multiply-adds if `fma`:
    half the instructions where the engine fuses them, and never less accurate)."""
    _vf(f, coeffs[-1])
    for c in reversed(coeffs[:-1]):
        f.local_get(z)
        if fma:
            _vf(f, c)
            f.f32x4_relaxed_madd()
        else:
            f.f32x4_mul()
            _vf(f, c)
            f.f32x4_add()


class _Lib:
    def __init__(self, m: Module, fma: bool):
        self.m = m
        self.fma = fma
        self.index: dict[str, int] = {}

    def get(self, name: str) -> int:
        if name not in self.index:
            f = self.m.function(f"pyjax_{name}_f32x4", [V128], [V128])
            self.index[name] = f.index
            getattr(self, "_" + name)(f)
            f.finish()
        return self.index[name]

    def _sin(self, f: Function) -> None:
        self._trig(f, "sin")

    def _cos(self, f: Function) -> None:
        self._trig(f, "cos")

    def _trig(self, f: Function, which: str) -> None:
        x, h, k, r, q, z, ps, pc, res = (0, *(f.local(V128) for _ in range(8)))
        halves = []
        for part in range(2):
            f.local_get(x)
            if part:
                f.local_get(x).i8x16_shuffle(list(range(8, 16)) + list(range(8)))
            f.f64x2_promote_low_f32x4().local_set(h)
            f.local_get(h)
            _vd(f, 2 / math.pi)
            f.f64x2_mul().f64x2_nearest().local_set(k)
            f.local_get(h).local_get(k)
            _vd(f, _PIO2_HI)
            f.f64x2_mul().f64x2_sub().local_get(k)
            _vd(f, _PIO2_LO)
            f.f64x2_mul().f64x2_sub().f32x4_demote_f64x2_zero()
            rl, ql = f.local(V128), f.local(V128)
            f.local_set(rl)
            f.local_get(k).i32x4_trunc_sat_f64x2_s_zero().local_set(ql)
            halves.append((rl, ql))
        (r0, q0), (r1, q1) = halves
        lanes = list(range(8)) + list(range(16, 24))
        f.local_get(r0).local_get(r1).i8x16_shuffle(lanes).local_set(r)
        f.local_get(q0).local_get(q1).i8x16_shuffle(lanes).local_set(q)
        if which == "cos":
            f.local_get(q)
            _vi(f, 1)
            f.i32x4_add().local_set(q)
        f.local_get(r).local_get(r).f32x4_mul().local_set(z)
        # sin(r) = r + r^3 S(z), cos(r) = C(z)
        f.local_get(r).local_get(r).local_get(z).f32x4_mul()
        _horner(f, z, [(-1) ** (i + 1) / math.factorial(2 * i + 3) for i in range(4)], self.fma)
        f.f32x4_mul().f32x4_add().local_set(ps)
        _horner(f, z, [(-1) ** i / math.factorial(2 * i) for i in range(6)], self.fma)
        f.local_set(pc)
        # odd quadrants use cos; quadrants 2 and 3 flip the sign
        f.local_get(pc).local_get(ps).local_get(q)
        _vi(f, 1)
        f.v128_and()
        _vi(f, 0)
        f.i32x4_ne().v128_bitselect()
        f.local_get(q)
        _vi(f, 2)
        f.v128_and().i32_const(30).i32x4_shl().v128_xor().local_set(res)
        # |x| >= 2**20 (and inf): the scalar helper, lane by lane
        f.local_get(x).f32x4_abs()
        _vf(f, 2.0**20)
        f.f32x4_ge().v128_any_true()
        with f.if_():
            scalar = add_math_helpers(self.m, [which], "float32")[which]
            for lane in range(4):
                f.local_get(res).local_get(x).f32x4_extract_lane(lane).call(scalar)
                f.f32x4_replace_lane(lane).local_set(res)
        f.local_get(res)


def function_index(m: Module, name: str, fma: bool = False) -> int:
    """Index of the f32x4 function `name` (emitted into m on first use); `fma`: the engine has
    relaxed SIMD, whose multiply-adds the polynomials then use."""
    lib = m.memo.get("pyjax.simdmath")
    if lib is None:
        lib = m.memo["pyjax.simdmath"] = _Lib(m, fma)
    return lib.get(name)


def emit(m: Module, f: Function, op: str, args: list[int], fma: bool = False) -> None:
    """Push op(args) (f32x4 locals of f) through the module's SIMD helper."""
    idx = function_index(m, op, fma)
    for a in args:
        f.local_get(a)
    f.call(idx)
