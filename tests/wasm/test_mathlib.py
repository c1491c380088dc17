"""float64 math on wasm (jitted: the compiler/mathlib decompositions): accuracy sweeps against
numpy/scipy/mpmath, special values bit for bit against JAX x64."""

import math

import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.scipy import special

np = pytest.importorskip("numpy")
pytest.importorskip("wasmtime")

F32_TOL = 2e-6  # the contract for float32
# pow's error grows with |y log x|; lgamma and digamma (shifted to 8 and 6, as the cpu evaluator)
# are relative to max(|f|, 1): absolute near their zeros; others ~1e-15
F64_TOL = {"pow": 1e-13, "lgamma": 1e-13, "digamma": 1e-11}
F64_DEFAULT_TOL = 2e-15
ABSOLUTE_BELOW_1 = ("lgamma", "digamma")

OURS = {
    "exp": jnp.exp,
    "exp2": jnp.exp2,
    "expm1": jnp.expm1,
    "log": jnp.log,
    "log2": jnp.log2,
    "log1p": jnp.log1p,
    "sin": jnp.sin,
    "cos": jnp.cos,
    "tan": jnp.tan,
    "asin": jnp.arcsin,
    "acos": jnp.arccos,
    "atan": jnp.arctan,
    "sinh": jnp.sinh,
    "cosh": jnp.cosh,
    "tanh": jnp.tanh,
    "asinh": jnp.arcsinh,
    "acosh": jnp.arccosh,
    "atanh": jnp.arctanh,
    "logistic": pyjax.nn.sigmoid,
    "erf": special.erf,
    "erfc": special.erfc,
    "erf_inv": special.erfinv,
    "lgamma": special.gammaln,
    "digamma": special.digamma,
    "cbrt": jnp.cbrt,
    "atan2": jnp.arctan2,
    "pow": jnp.power,
}
BINARY = ("atan2", "pow")
SCIPY = ("erf", "erfc", "logistic", "erf_inv", "lgamma", "digamma")


def reference(name):
    sp = pytest.importorskip("scipy.special") if name in SCIPY else None
    return {
        "exp": np.exp,
        "exp2": np.exp2,
        "expm1": np.expm1,
        "log": np.log,
        "log2": np.log2,
        "log1p": np.log1p,
        "sin": np.sin,
        "cos": np.cos,
        "tan": np.tan,
        "asin": np.arcsin,
        "acos": np.arccos,
        "atan": np.arctan,
        "sinh": np.sinh,
        "cosh": np.cosh,
        "tanh": np.tanh,
        "asinh": np.arcsinh,
        "acosh": np.arccosh,
        "atanh": np.arctanh,
        "logistic": sp and sp.expit,
        "erf": sp and sp.erf,
        "erfc": sp and sp.erfc,
        "erf_inv": sp and sp.erfinv,
        "lgamma": sp and sp.gammaln,
        "digamma": sp and sp.psi,
        "cbrt": np.cbrt,
        "atan2": np.arctan2,
        "pow": np.power,
    }[name]


@pytest.fixture(scope="module")
def wasm():
    with pyjax.default_device(pyjax.devices("wasm")[0]), pyjax.enable_x64(True):
        yield


def run(name, *args):
    return np.asarray(pyjax.jit(OURS[name])(*(jnp.asarray(a) for a in args)))


RNG = np.random.default_rng(0)


def _lin(lo, hi, n=10000):
    return np.concatenate([np.linspace(lo, hi, n), RNG.uniform(lo, hi, n)])


def _logspace(lo_exp, hi_exp, n=10000, signed=True):
    m = 10.0 ** RNG.uniform(lo_exp, hi_exp, n)
    return np.concatenate([m, -m]) if signed else m


def _bits(n=20000):
    """Random float64 bit patterns: every exponent, subnormals included."""
    x = RNG.integers(0, 2**63, n, dtype=np.int64).view(np.float64)
    return np.concatenate([x, -x])


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30]
SPECIAL += [-1e-30, 1e-45, 1e-310, 3.4e38, -3.4e38, 1e300, -1e300, 100.0, -100.0, 710.0]
# the edges of the float64 decompositions' ranges and thresholds
EDGES = [0.2928, -0.2928, 5e-324, 709.0, 709.78, 710.47, 711.0, -745.1, -746.0, 1024.0, -1075.0]
EDGES += [19.1, 22.0, 27.3, 268435456.0, 1.8e308, 1048576.0, 1048577.0, 1e22, -1e22]  # trig's reduction switch

DOMAINS = {
    "exp": [_lin(-750, 720), _logspace(-40, 3)],
    "exp2": [_lin(-1080, 1030), _logspace(-40, 3)],
    "expm1": [_lin(-50, 720), _lin(-1, 1), _logspace(-40, 3)],
    "log": [_logspace(-320, 308, signed=False), _lin(0.5, 2)],
    "log2": [_logspace(-320, 308, signed=False), _lin(0.5, 2)],
    "log1p": [_lin(-1, 2), _logspace(-320, 300)],
    "sin": [_lin(-10, 10), _lin(-1e5, 1e5), _logspace(-40, 300)],
    "cos": [_lin(-10, 10), _lin(-1e5, 1e5), _logspace(-40, 300)],
    "tan": [_lin(-10, 10), _lin(-1e5, 1e5), _logspace(-40, 300)],
    "asin": [_lin(-1.1, 1.1), _logspace(-40, 0)],
    "acos": [_lin(-1.1, 1.1), _logspace(-40, 0)],
    "atan": [_lin(-10, 10), _logspace(-300, 300)],
    "sinh": [_lin(-720, 720), _lin(-2, 2), _logspace(-40, 3)],
    "cosh": [_lin(-720, 720), _lin(-2, 2)],
    "tanh": [_lin(-30, 30), _logspace(-40, 3)],
    "asinh": [_lin(-3, 3), _logspace(-300, 300)],
    "acosh": [_lin(0.9, 3), _logspace(0, 300, signed=False)],
    "atanh": [_lin(-1.1, 1.1), _logspace(-40, 0)],
    "logistic": [_lin(-750, 750), _lin(-40, 40)],
    "erf": [_lin(-7, 7), _logspace(-40, 2)],
    "erfc": [_lin(-7, 4), _logspace(-40, 0.6)],  # beyond 4 scipy loses digits: test_erf_erfc_against_mpmath
    "cbrt": [_lin(-10, 10), _logspace(-320, 308)],
    "erf_inv": [_lin(-1.1, 1.1), 1 - _logspace(-16, 0, signed=False), _logspace(-300, 0)],
    "lgamma": [_lin(-10, 10), _lin(0.5, 3), _logspace(-300, 300)],
    "digamma": [_lin(-10, 10), _lin(0.5, 3), _logspace(-300, 300, signed=False)],
}
# where scipy's answer is not JAX's: digamma's poles are NaN, not +-inf; gammaln of a subnormal
# is finite, not inf, of -inf inf
SKIP_REF = {
    "digamma": lambda x: (x <= 0) & (np.floor(x) == x),
    "lgamma": lambda x: (np.abs(x) < 2.3e-308) | (x == -np.inf),
}
TINY_NOT_EXACT = ("acos", "lgamma", "digamma", "cbrt")  # f(tiny) is not x, 0 or 1: accuracy sweeps only


def _binary_inputs(name):
    sp = np.array(SPECIAL)
    grid_a, grid_b = np.repeat(sp, len(sp)), np.tile(sp, len(sp))
    if name == "atan2":
        a = [RNG.uniform(-10, 10, 20000), _logspace(-30, 30), grid_a]
        b = [RNG.uniform(-10, 10, 20000), _logspace(-30, 30)[::-1], grid_b]
    else:
        ints = RNG.integers(-5, 6, 2000).astype(float)
        a = [RNG.uniform(0, 10, 20000), 10 ** RNG.uniform(-5, 5, 20000), -RNG.integers(0, 10, 2000), grid_a]
        b = [RNG.uniform(-10, 10, 20000), RNG.uniform(-3, 3, 20000), ints, grid_b]
    return np.concatenate(a), np.concatenate(b)


def rel_err(got, ref, dtype, floor=None):
    """Relative error vs an f64 reference (relative to max(|ref|, floor)); inf/nan/zero must
    match exactly; subnormal results of `dtype` may be off by two subnormal steps."""
    got = got.astype(np.float64)
    fi = np.finfo(dtype)
    floor = fi.tiny if floor is None else floor
    with np.errstate(all="ignore"):
        same = (got == ref) | (np.isnan(got) & np.isnan(ref))
        same |= got == ref.astype(dtype).astype(np.float64)  # e.g. f32 overflow to inf, underflow to 0
        err = np.where(same, 0.0, np.inf)
        fin = ~same & np.isfinite(ref) & np.isfinite(got)
        err[fin] = np.abs(got[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), floor)
        sub = fin & (np.abs(ref) < fi.tiny) & (np.abs(got - ref) <= 2 * fi.smallest_subnormal)
        err[sub] = 0.0
    return err


def _check(name, dtype, x, got, ref):
    err = rel_err(got, ref, dtype, 1.0 if name in ABSOLUTE_BELOW_1 else None)
    k = int(np.argmax(err))
    tol = F32_TOL if dtype == np.float32 else F64_TOL.get(name, F64_DEFAULT_TOL)
    where = [v[k] for v in x]
    assert err[k] <= tol, f"{name}[{dtype.__name__}] rel err {err[k]:.3g} at {where}: {got[k]!r} vs {ref[k]!r}"


@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_float64_accuracy(wasm, name):
    x = np.concatenate(DOMAINS[name] + [_bits(), np.array(SPECIAL + EDGES)])
    if name == "erfc":
        x = x[x < 4]
    got = run(name, x)
    assert got.dtype == np.float64
    with np.errstate(all="ignore"):
        ref = reference(name)(x)
    if name in SKIP_REF:
        ref = np.where(SKIP_REF[name](x), got, ref)
    _check(name, np.float64, (x,), got, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_accuracy(wasm, name, dtype):
    with np.errstate(over="ignore"):
        a, b = (v.astype(dtype) for v in _binary_inputs(name))
    got = run(name, a, b)
    with np.errstate(all="ignore"):
        ref = reference(name)(a.astype(np.float64), b.astype(np.float64))
    _check(name, dtype, (a, b), got, ref)


def test_special_values_match_jax_x64(wasm):
    """inf/nan/signed zero/overflow edges agree with JAX x64 bit for bit (normal numbers: XLA's
    CPU flushes subnormals, numpy is the oracle for those in the sweeps)."""
    jax = pytest.importorskip("jax")
    x = np.array(SPECIAL + EDGES + [1e-200, -1e-200, 0.35, -0.35, 9.0, 30.0, -30.0])
    x = x[~((np.abs(x) < np.finfo(np.float64).tiny) & (x != 0))]
    names = sorted(set(OURS) - set(BINARY))
    with jax.enable_x64(True):  # one jit for all: JAX compiles take ~0.3 s each
        wants = jax.jit(lambda v: [_jax_fn(jax, n)(v) for n in names])(x)
    for name, want in zip(names, wants):
        got = run(name, x)
        for xv, g, w in zip(x, got, np.asarray(want)):
            if np.isnan(w):
                assert np.isnan(g), (name, xv, g)
            elif (w == 0 and g == 0) or np.isinf(w) or (abs(xv) < 1e-20 and name not in TINY_NOT_EXACT):
                assert g == w and np.signbit(g) == np.signbit(w), (name, xv, g, w)


def _jax_fn(jax, name):
    jsp = jax.scipy.special
    scipy = {"erf": jsp.erf, "erfc": jsp.erfc, "erf_inv": jsp.erfinv, "lgamma": jsp.gammaln, "digamma": jsp.digamma}
    return (
        scipy[name]
        if name in scipy
        else jax.nn.sigmoid
        if name == "logistic"
        else getattr(jax.numpy, OURS[name].__name__)
    )


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_pow_special_cases_match_numpy(wasm, dtype):
    vals = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan]
    a = np.repeat(vals, len(vals)).astype(dtype)
    b = np.tile(vals, len(vals)).astype(dtype)
    got = run("pow", a, b)
    with np.errstate(all="ignore"):
        ref = np.power(a, b)
    for x, y, g, r in zip(a, b, got, ref):
        if np.isnan(r):
            assert np.isnan(g), (x, y, g)
        elif r == 0 or np.isinf(r):
            assert g == r and np.signbit(g) == np.signbit(r), (x, y, g, r)
        else:  # numpy's own float32 pow may be an ulp off (3 ** 0.5)
            assert abs(g - r) <= 2e-6 * abs(r), (x, y, g, r)


def test_trig_near_multiples_of_half_pi(wasm):
    """Arguments next to k*pi/2 (the hardest range reductions), checked with mpmath."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 400
    rng = np.random.default_rng(1)
    ks = np.concatenate([np.arange(1, 200), rng.integers(1, 2**40, 200), 2.0 ** rng.uniform(40, 1000, 200)])
    xs = []
    for k in ks:
        v = float(mp.mpf(float(k)) * mp.pi / 2)
        xs += [v, np.nextafter(v, np.inf), np.nextafter(v, -np.inf)]
    xs = np.array(xs + [6381956970095103 * 2.0**797])  # the worst case for doubles
    for name, fn in (("sin", mp.sin), ("cos", mp.cos), ("tan", mp.tan)):
        got = run(name, xs)
        for x, g in zip(xs, got):
            r = fn(mp.mpf(float(x)))
            assert abs((mp.mpf(float(g)) - r) / r) <= 1e-15, (name, x, g)


def test_erf_erfc_against_mpmath(wasm):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    x = np.concatenate([np.linspace(-6, 6, 301), np.linspace(0.9, 1.1, 101), np.linspace(4, 27.5, 95)])
    tiny = np.finfo(np.float64).tiny
    for name, fn in (("erf", mp.erf), ("erfc", mp.erfc)):
        got = run(name, x)
        for xv, g in zip(x, got):
            r = fn(mp.mpf(float(xv)))
            if abs(r) < tiny:  # subnormal result: absolute
                assert abs(g - float(r)) <= 2 * np.finfo(np.float64).smallest_subnormal
            else:
                assert abs((mp.mpf(float(g)) - r) / r) <= F64_DEFAULT_TOL, (name, xv, g, r)


def test_erfc_coefficients_reproducible():
    pytest.importorskip("mpmath")
    from pyjax.compiler.mathlib.special import _ERFC_CHEB, _fit_erfc_tail

    fresh = _fit_erfc_tail(len(_ERFC_CHEB))
    assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-25) for a, b in zip(fresh, _ERFC_CHEB))
