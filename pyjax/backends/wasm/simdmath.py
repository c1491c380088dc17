"""float32x4 transcendental functions for vectorized kernels (four lanes per call).

The scalar helpers of `mathlib` evaluate in float64 and are exact to half an ulp; calling them
lane by lane costs four calls per vector. These work on f32x4 directly in float32 arithmetic,
with range reductions that keep the error within a few ulp (max relative error measured
< 1e-6, the contract being 2e-6 like mathlib's):

- exp: x = k ln2 + r with a two-part ln2 (k * hi exact), Taylor degree 7 on |r| <= ln2/2, times
  2**k as two power-of-two factors (overflow to inf, gradual underflow to 0).
- expm1: the same reduction; 2**k * p(r) + (2**k - 1) (no cancellation), exact -0.
- tanh: u / (u + 2) with u = expm1(2|x|) (|x| clamped to 9, where tanh rounds to 1), sign of x.
- logistic: 1 / (1 + exp(-x)), as the cpu backend evaluates it.
- sin, cos: k = nearest(x 2/pi) and r = x - k pi/2 in float64 (two f64x2 halves, a 33+53-bit
  pi/2, exact products for |k| < 2**20), then Taylor polynomials in float32 for sin and cos on
  |r| <= pi/4 picked and signed by the quadrant. Lanes with |x| >= 2**20 (and inf) take the
  scalar mathlib helper.
- log: the binary exponent and a mantissa in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s) with
  s = (m - 1)/(m + 1) as an odd series; subnormals rescaled; log(0) = -inf, log(<0) = nan.
- log1p: log(u) * x / (u - 1) with u = 1 + x rounded (the rounding error cancels).
NaN propagates through every function.
"""

from __future__ import annotations

import math
import struct

from pyjax.backends.wasm.encoder import V128, Function, Module
from pyjax.backends.wasm.mathlib import add_math_helpers

__all__ = ["F32X4", "emit", "function_index"]

F32X4 = frozenset(("exp", "expm1", "tanh", "logistic", "sin", "cos", "log", "log1p"))

_LN2_HI = struct.unpack("<f", struct.pack("<I", 0x3F317200))[0]  # 15 significant bits
_LN2_LO = float(struct.unpack("<f", struct.pack("<f", math.log(2.0) - _LN2_HI))[0])
_LOG2E = 1.0 / math.log(2.0)
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


def _pow2(f: Function, ki: int) -> None:
    """Push the f32x4 2**ki for the i32x4 local ki (its biased exponent must be in 1..254)."""
    f.local_get(ki)
    _vi(f, 127)
    f.i32x4_add().i32_const(23).i32x4_shl()


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

    def _reduce_ln2(self, f: Function, x: int, k: int, r: int, ki: int) -> None:
        f.local_get(x)
        _vf(f, _LOG2E)
        f.f32x4_mul().f32x4_nearest().local_tee(k)
        f.i32x4_trunc_sat_f32x4_s().local_set(ki)
        f.local_get(x).local_get(k)
        _vf(f, _LN2_HI)
        f.f32x4_mul().f32x4_sub().local_get(k)
        _vf(f, _LN2_LO)
        f.f32x4_mul().f32x4_sub().local_set(r)

    def _exp(self, f: Function) -> None:
        x, k, r, ki, k1 = 0, f.local(V128), f.local(V128), f.local(V128), f.local(V128)
        f.local_get(x)
        _vf(f, -104.0)
        f.f32x4_max()
        _vf(f, 89.0)
        f.f32x4_min().local_set(x)
        self._reduce_ln2(f, x, k, r, ki)
        _horner(f, r, [1.0 / math.factorial(i) for i in range(8)], self.fma)
        f.local_get(ki).i32_const(1).i32x4_shr_s().local_set(k1)
        _pow2(f, k1)
        f.f32x4_mul()
        f.local_get(ki).local_get(k1).i32x4_sub().local_set(k1)
        _pow2(f, k1)
        f.f32x4_mul()

    def _expm1(self, f: Function) -> None:
        x, xc, k, r, ki, p, s, k1, res = (0, *(f.local(V128) for _ in range(8)))
        f.local_get(x)
        _vf(f, -88.0)
        f.f32x4_max()
        _vf(f, 89.0)
        f.f32x4_min().local_set(xc)
        self._reduce_ln2(f, xc, k, r, ki)
        f.local_get(r)
        _horner(f, r, [1.0 / math.factorial(i + 1) for i in range(8)], self.fma)
        f.f32x4_mul().local_set(p)  # expm1(r)
        _pow2(f, ki)
        f.local_set(s)
        # small k: s p + (s - 1)
        f.local_get(s).local_get(p).f32x4_mul().local_get(s)
        _vf(f, 1.0)
        f.f32x4_sub().f32x4_add().local_set(res)
        # large k: (p + 1) 2**k1 2**(k - k1) - 1
        f.local_get(p)
        _vf(f, 1.0)
        f.f32x4_add()
        f.local_get(ki).i32_const(1).i32x4_shr_s().local_set(k1)
        _pow2(f, k1)
        f.f32x4_mul()
        f.local_get(ki).local_get(k1).i32x4_sub().local_set(k1)
        _pow2(f, k1)
        f.f32x4_mul()
        _vf(f, 1.0)
        f.f32x4_sub()
        f.local_get(res)
        f.local_get(ki)
        _vi(f, 24)
        f.i32x4_gt_s().v128_bitselect().local_set(res)
        # k = 0: p itself (exact for tiny x, keeps -0)
        f.local_get(p).local_get(res).local_get(ki)
        _vi(f, 0)
        f.i32x4_eq().v128_bitselect()

    def _expm1_small(self, f: Function) -> None:
        """expm1 for 0 <= x <= 18 (tanh's range): 2**k p(r) + (2**k - 1) alone is exact enough
        there (k <= 26), so no clamp, large-k path or -0 case."""
        x, k, r, ki, p, s = (0, *(f.local(V128) for _ in range(5)))
        self._reduce_ln2(f, x, k, r, ki)
        f.local_get(r)
        _horner(f, r, [1.0 / math.factorial(i + 1) for i in range(8)], self.fma)
        f.f32x4_mul().local_set(p)
        _pow2(f, ki)
        f.local_tee(s).local_get(p).f32x4_mul().local_get(s)
        _vf(f, 1.0)
        f.f32x4_sub().f32x4_add()

    def _tanh(self, f: Function) -> None:
        x, u = 0, f.local(V128)
        f.local_get(x).f32x4_abs()
        _vf(f, 9.0)
        f.f32x4_min()
        _vf(f, 2.0)
        f.f32x4_mul().call(self.get("expm1_small")).local_tee(u)
        f.local_get(u)
        _vf(f, 2.0)
        f.f32x4_add().f32x4_div()
        f.local_get(x)
        _vi(f, 0x7FFFFFFF)
        f.v128_bitselect()

    def _logistic(self, f: Function) -> None:
        _vf(f, 1.0)
        _vf(f, 1.0)
        f.local_get(0).f32x4_neg().call(self.get("exp")).f32x4_add().f32x4_div()

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

    def _log(self, f: Function) -> None:
        x, xs, e, m, s, z, res, sub = (0, *(f.local(V128) for _ in range(7)))
        f.local_get(x)
        _vf(f, 2.0**-126)
        f.f32x4_lt().local_set(sub)
        f.local_get(x)
        _vf(f, 2.0**23)
        f.f32x4_mul().local_get(x).local_get(sub).v128_bitselect().local_set(xs)
        # exponent (- 23 for rescaled subnormals)
        f.local_get(xs).i32_const(23).i32x4_shr_u()
        _vi(f, 127)
        f.i32x4_sub().local_get(sub)
        _vi(f, 23)
        f.v128_and().i32x4_sub().local_set(e)
        f.local_get(xs)
        _vi(f, 0x7FFFFF)
        f.v128_and()
        _vi(f, 0x3F800000)
        f.v128_or().local_set(m)
        # m > sqrt(2): m / 2, e + 1
        f.local_get(m)
        _vf(f, math.sqrt(2.0))
        f.f32x4_gt().local_set(sub)
        f.local_get(m)
        _vf(f, 0.5)
        f.f32x4_mul().local_get(m).local_get(sub).v128_bitselect().local_set(m)
        f.local_get(e).local_get(sub).i32x4_sub().f32x4_convert_i32x4_s().local_set(e)
        # s = (m - 1) / (m + 1); log m = 2 s (1 + z/3 + z^2/5 + ...)
        f.local_get(m)
        _vf(f, 1.0)
        f.f32x4_sub().local_get(m)
        _vf(f, 1.0)
        f.f32x4_add().f32x4_div().local_tee(s).local_get(s).f32x4_mul().local_set(z)
        f.local_get(s)
        _vf(f, 2.0)
        f.f32x4_mul()
        f.local_get(z)
        _horner(f, z, [1 / (2 * i + 3) for i in range(4)], self.fma)
        f.f32x4_mul().local_get(s)
        _vf(f, 2.0)
        f.f32x4_mul().f32x4_mul().f32x4_add()  # 2s + 2s z P(z)
        f.local_get(e)
        _vf(f, _LN2_LO)
        f.f32x4_mul().f32x4_add()
        f.local_get(e)
        _vf(f, _LN2_HI)
        f.f32x4_mul().f32x4_add().local_set(res)
        # specials: inf -> inf, < 0 -> nan, 0 -> -inf, nan -> nan
        for value, cond in ((math.inf, ("eq", math.inf)), (math.nan, ("lt", 0.0)), (-math.inf, ("eq", 0.0))):
            _vf(f, value)
            f.local_get(res).local_get(x)
            _vf(f, cond[1])
            f.op("f32x4." + cond[0]).v128_bitselect().local_set(res)
        f.local_get(x).local_get(res).local_get(x).local_get(x).f32x4_ne().v128_bitselect()

    def _log1p(self, f: Function) -> None:
        x, u, d, r = 0, f.local(V128), f.local(V128), f.local(V128)
        f.local_get(x)
        _vf(f, 1.0)
        f.f32x4_add().local_tee(u)
        _vf(f, 1.0)
        f.f32x4_sub().local_set(d)
        # d == 0 (x tiny): x; else log(u) * x / d
        f.local_get(x)
        f.local_get(u).call(self.get("log")).local_get(x).local_get(d).f32x4_div().f32x4_mul()
        f.local_get(d)
        _vf(f, 0.0)
        f.f32x4_eq().v128_bitselect().local_set(r)
        _vf(f, math.inf)
        f.local_get(r).local_get(x)
        _vf(f, math.inf)
        f.f32x4_eq().v128_bitselect()


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
