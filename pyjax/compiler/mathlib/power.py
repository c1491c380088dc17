"""pow and cbrt: float32 pow as 2**(y log2|x|) with log2|x| carried to about 2**-36 and the
product split so that it is exact; float64 pow as exp(y log|x|) (relative error ~1e-16 |y log x|,
up to 1e-13 near overflow, as wasm's former helper); the C99/numpy special cases as selects
for both. cbrt from exp2/log2 and one Newton step in either precision."""

from __future__ import annotations

from pyjax.compiler.mathlib.exponential import _LOG_Q, _frexp_sqrt2, exp, exp2, expm1_kernel, ldexp, log, log2
from pyjax.compiler.mathlib.expr import *  # noqa: F403  (the shared vocabulary, expr.__all__)
from pyjax.compiler.mathlib.special import hi_half as hi12

INVLN2_HI = 1.4423828125  # 1/ln 2 to 12 bits (exact products with 12-bit numbers)
INVLN2_LO = 0.00031222839606925845


def _pow_core(ax: V, y: V) -> V:
    """ax**y for finite ax > 0 and finite y. log2 ax = th + tl (th 12 bits) to about 2**-36
    relative and y in 12-bit halves, so y th is exact and y log2 ax is known to about 1e-8 even
    near +-150; then 2**n exp((t - n) ln 2)."""
    if ax.dtype == F64:
        return exp(y * log(ax))
    e, f = _frexp_sqrt2(ax)
    # s = f / (2 + f) as sh + sl: sh has 12 bits, sl from the exact residual f - sh (2 + f)
    d = 2.0 + f
    sh = hi12(f / d)
    fh = hi12(f)
    sl = (((f - 2.0 * sh) - sh * fh) - sh * (f - fh)) / d
    s = sh + sl
    z = s * s
    # ln m = hh + ll with hh = 2 sh exact; log2 m = hh / ln2 split so that hh * INVLN2_HI is exact
    hh = 2.0 * sh
    ll = 2.0 * sl + (s * z) * poly(z, _LOG_Q[F32])
    p = hh * INVLN2_HI
    qt = hh * INVLN2_LO + ll * LOG2E
    th = hi12(e + (p + qt))
    tl = (p - (th - e)) + qt
    yh = hi12(y)
    a = yh * th
    b = (y - yh) * th + y * tl
    # n = round(y log2 ax); ac - n is exact; the clamps act only where the result over- or
    # underflows anyway
    ac = clamp(a, -300.0, 300.0)
    n = floor(ac + b + 0.5)
    fr = clamp((ac - n) + b, -1.0, 1.0)
    return ldexp(1.0 + expm1_kernel(fr * LN2), n)


def pow(x: V, y: V) -> V:  # noqa: A001 (the op's name)
    ax, ay = fabs(x), fabs(y)
    y_int = floor(y).eq(y)
    y_odd = y_int & ~floor(0.5 * ay).eq(0.5 * ay)  # past 2**24 every float is even
    big_y = ay.eq(INF)
    dt = x.dtype
    r = where(
        ax.eq(0.0), where(y < 0.0, INF, 0.0, dt), where(ax.eq(INF), where(y < 0.0, 0.0, INF, dt), _pow_core(ax, y))
    )
    inf_y = where(ax < 1.0, where(y > 0.0, 0.0, INF, dt), where(y > 0.0, INF, 0.0, dt))
    r = where(big_y, where(ax.eq(1.0), 1.0, inf_y), r)
    r = where((x < 0.0) & (x > -INF) & ~y_int, NAN, r)
    r = where((bits(x) < 0) & y_odd, -r, r)
    r = where(isnan(x) | isnan(y), x + y, r)
    return where(y.eq(0.0) | x.eq(1.0), 1.0, r)


def cbrt(x: V) -> V:
    # 2**(log2|x| / 3) to about 3e-6, then one Newton step
    a = fabs(x)
    y = exp2(log2(a) / 3.0)
    y = y + (a / (y * y) - y) * (1.0 / 3.0)
    return where(a.eq(0.0) | (bits(a) >= a.fmt.exp_mask), x, copysign(y, x))


TABLE = {"pow": pow, "cbrt": cbrt}
# pow's log2 is carried in split, error-free parts: a backend that relaxes a decomposition's
# arithmetic (contraction, reassociation) must render pow's exactly, or 10 ** 2 is 99.99999
EXACT_ARITHMETIC = frozenset({"pow"})
