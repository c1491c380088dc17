"""Wasm math helpers: accuracy sweeps against numpy/scipy/mpmath and special values."""

import math

import pytest

from pyjax.backends.wasm.encoder import F32, F64, I32, Module
from pyjax.backends.wasm.mathlib import _ERFC_CHEB, BINARY, MATH_FUNCTIONS, add_math_helpers

np = pytest.importorskip("numpy")
pytest.importorskip("wasmtime")
from pyjax.hosts.wasmtime_host import WasmtimeHost

F32_TOL = 2e-6  # the contract for float32 helpers
F64_TOL = {"pow": 1e-13}  # pow's error grows with |y log x|; others ~1e-15
F64_DEFAULT_TOL = 2e-15


def _map_module(dtype):
    """One exported `map_<name>(a_ptr, b_ptr, out_ptr, n)` per helper: out[i] = f(a[i], b[i])."""
    t, size = (F32, 4) if dtype == np.float32 else (F64, 8)
    m = Module(memory_min=1)
    idx = add_math_helpers(m, MATH_FUNCTIONS, dtype.__name__)
    for name in MATH_FUNCTIONS:
        f = m.function("map_" + name, [I32] * 4, [], export=True)
        a, b, o, n, i = 0, 1, 2, 3, f.local(I32)
        with f.block(), f.loop():
            f.local_get(i).local_get(n).i32_ge_u().br_if(1)
            f.local_get(o).local_get(a).op(t + ".load")
            if name in BINARY:
                f.local_get(b).op(t + ".load")
            f.call(idx[name]).op(t + ".store")
            for p in (a, b, o):
                f.local_get(p).i32_const(size).i32_add().local_set(p)
            f.local_get(i).i32_const(1).i32_add().local_set(i)
            f.br(0)
    return m.to_bytes()


@pytest.fixture(scope="module")
def host():
    return WasmtimeHost(pages=64)


@pytest.fixture(scope="module")
def kernels(host):
    return {dt: host.load(_map_module(dt)) for dt in (np.float32, np.float64)}


def run(host, kernels, name, a, b=None):
    dt = a.dtype.type
    a = np.ascontiguousarray(a)
    b = np.zeros_like(a) if b is None else np.ascontiguousarray(b, dtype=dt)
    nb = a.nbytes
    if 3 * nb > host.nbytes:
        host.grow((3 * nb - host.nbytes) // 65536 + 1)
    host.write(0, a)
    host.write(nb, b)
    kernels[dt].function("map_" + name)(0, nb, 2 * nb, a.size)
    return np.frombuffer(host.read(2 * nb, nb), dtype=dt)


def _scipy():
    return pytest.importorskip("scipy.special")


def reference(name):
    sp = _scipy() if name in ("erf", "erfc") else None
    return {
        "exp": np.exp,
        "log": np.log,
        "log1p": np.log1p,
        "expm1": np.expm1,
        "sin": np.sin,
        "cos": np.cos,
        "tan": np.tan,
        "asin": np.arcsin,
        "acos": np.arccos,
        "atan": np.arctan,
        "sinh": np.sinh,
        "cosh": np.cosh,
        "tanh": np.tanh,
        "erf": sp and sp.erf,
        "erfc": sp and sp.erfc,
        "sqrt": np.sqrt,
        "atan2": np.arctan2,
        "pow": np.power,
    }[name]


RNG = np.random.default_rng(0)


def _lin(lo, hi, n=20000):
    return np.concatenate([np.linspace(lo, hi, n), RNG.uniform(lo, hi, n)])


def _logspace(lo_exp, hi_exp, n=20000, signed=True):
    m = 10.0 ** RNG.uniform(lo_exp, hi_exp, n)
    return np.concatenate([m, -m]) if signed else m


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-30]
SPECIAL += [-1e-30, 1e-45, 1e-310, 3.4e38, -3.4e38, 1e300, -1e300, 100.0, -100.0, 710.0]

DOMAINS = {
    "exp": [_lin(-110, 100), _lin(-750, 720), _logspace(-40, 3)],
    "expm1": [_lin(-110, 100), _lin(-1, 1), _logspace(-40, 3)],
    "log": [_logspace(-45, 38, signed=False), _logspace(-320, 308, signed=False), _lin(0.5, 2)],
    "log1p": [_lin(-1, 2), _logspace(-40, 30), _logspace(-320, 300)],
    "sin": [_lin(-10, 10), _lin(-1e5, 1e5), _logspace(-40, 38), _logspace(-40, 300)],
    "cos": [_lin(-10, 10), _lin(-1e5, 1e5), _logspace(-40, 38), _logspace(-40, 300)],
    "tan": [_lin(-10, 10), _lin(-1e5, 1e5), _logspace(-40, 38), _logspace(-40, 300)],
    "asin": [_lin(-1.1, 1.1), _logspace(-40, 0)],
    "acos": [_lin(-1.1, 1.1), _logspace(-40, 0)],
    "atan": [_lin(-10, 10), _logspace(-40, 38), _logspace(-300, 300)],
    "sinh": [_lin(-100, 100), _lin(-720, 720), _logspace(-40, 3)],
    "cosh": [_lin(-100, 100), _lin(-720, 720)],
    "tanh": [_lin(-30, 30), _logspace(-40, 3)],
    "erf": [_lin(-7, 7), _logspace(-40, 2)],
    "erfc": [_lin(-7, 27), _logspace(-40, 1.4)],
    "sqrt": [_logspace(-45, 38, signed=False), _logspace(-320, 308, signed=False)],
}


def _binary_inputs(name, dtype):
    sp = np.array(SPECIAL)
    grid_a, grid_b = np.repeat(sp, len(sp)), np.tile(sp, len(sp))
    if name == "atan2":
        a = [RNG.uniform(-10, 10, 40000), _logspace(-30, 30), grid_a]
        b = [RNG.uniform(-10, 10, 40000), _logspace(-30, 30)[::-1], grid_b]
    else:
        ints = RNG.integers(-5, 6, 2000).astype(float)
        a = [RNG.uniform(0, 10, 40000), 10 ** RNG.uniform(-5, 5, 40000), -RNG.integers(0, 10, 2000), grid_a]
        b = [RNG.uniform(-10, 10, 40000), RNG.uniform(-3, 3, 40000), ints, grid_b]
    with np.errstate(over="ignore"):
        return np.concatenate(a).astype(dtype), np.concatenate(b).astype(dtype)


def rel_err(got, ref, dtype):
    """Relative error vs an f64 reference; inf/nan/zero must match exactly; subnormal results
    of `dtype` may be off by one subnormal step."""
    got = got.astype(np.float64)
    fi = np.finfo(dtype)
    with np.errstate(all="ignore"):
        return _rel_err(got, ref, dtype, fi)


def _rel_err(got, ref, dtype, fi):
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    ref_rounded = ref.astype(dtype).astype(np.float64)
    same |= got == ref_rounded  # e.g. f32 overflow to inf, underflow to 0
    err = np.where(same, 0.0, np.inf)
    fin = ~same & np.isfinite(ref) & np.isfinite(got)
    err[fin] = np.abs(got[fin] - ref[fin]) / np.maximum(np.abs(ref[fin]), fi.tiny)
    sub = fin & (np.abs(ref) < fi.tiny) & (np.abs(got - ref) <= 2 * fi.smallest_subnormal)
    err[sub] = 0.0
    return err


def _check(name, dtype, x, got, ref):
    err = rel_err(got, ref, dtype)
    k = int(np.argmax(err))
    tol = F32_TOL if dtype == np.float32 else F64_TOL.get(name, F64_DEFAULT_TOL)
    where = [v[k] for v in x]
    assert err[k] <= tol, f"{name}[{dtype.__name__}] rel err {err[k]:.3g} at {where}: {got[k]!r} vs {ref[k]!r}"
    return err[k]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", sorted(DOMAINS))
def test_unary_accuracy(host, kernels, name, dtype):
    with np.errstate(all="ignore"):
        x = np.concatenate(DOMAINS[name] + [np.array(SPECIAL)]).astype(dtype)
        got = run(host, kernels, name, x)
        ref = reference(name)(x.astype(np.float64))
    if name == "erfc" and dtype == np.float64:
        # scipy's erfc loses digits beyond x ~ 4 (5e-14 near 23, 0 from 26.55 on): mpmath
        # covers that range in test_erf_erfc_against_mpmath
        ref = np.where(x > 4, got, ref)
    _check(name, dtype, (x,), got, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("name", BINARY)
def test_binary_accuracy(host, kernels, name, dtype):
    a, b = _binary_inputs(name, dtype)
    with np.errstate(all="ignore"):
        got = run(host, kernels, name, a, b)
        ref = reference(name)(a.astype(np.float64), b.astype(np.float64))
    _check(name, dtype, (a, b), got, ref)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_special_values_match_numpy_exactly(host, kernels, dtype):
    """inf/nan/signed zero cases agree with numpy bit for bit (sign of zero included)."""
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-30, -1e-30], dtype=dtype)
    with np.errstate(all="ignore"):
        for name in ("exp", "log", "log1p", "expm1", "sin", "cos", "tan", "asin", "atan", "sinh"):
            got = run(host, kernels, name, x)
            ref = reference(name)(x)
            for g, r, xv in zip(got, ref, x):
                if np.isnan(r):
                    assert np.isnan(g), (name, xv)
                elif r == 0 or np.isinf(r) or abs(xv) < 1e-20:
                    assert g == r and np.signbit(g) == np.signbit(r), (name, xv, g, r)
        assert list(run(host, kernels, "exp", np.array([1000, -1000], dtype))) == [np.inf, 0.0]
        assert list(run(host, kernels, "tanh", np.array([50, -50, 1e30], dtype))) == [1, -1, 1]
        assert run(host, kernels, "log", np.array([0], dtype))[0] == -np.inf
        assert np.isnan(run(host, kernels, "log", np.array([-1], dtype))[0])
        assert list(run(host, kernels, "erf", np.array([np.inf, -np.inf], dtype))) == [1, -1]
        assert list(run(host, kernels, "erfc", np.array([np.inf, -np.inf], dtype))) == [0, 2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_pow_special_cases_match_numpy(host, kernels, dtype):
    vals = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan]
    a = np.repeat(vals, len(vals)).astype(dtype)
    b = np.tile(vals, len(vals)).astype(dtype)
    with np.errstate(all="ignore"):
        got = run(host, kernels, "pow", a, b)
        ref = np.power(a, b)
    for x, y, g, r in zip(a, b, got, ref):
        if np.isnan(r):
            assert np.isnan(g), (x, y, g)
        elif r == 0 or np.isinf(r):
            assert g == r and np.signbit(g) == np.signbit(r), (x, y, g, r)
        else:  # numpy's own float32 pow may be an ulp off (3 ** 0.5)
            assert abs(g - r) <= 2e-6 * abs(r), (x, y, g, r)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_trig_near_multiples_of_half_pi(host, kernels, dtype):
    """Arguments next to k*pi/2 (the hardest range reductions), checked with mpmath."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 400
    rng = np.random.default_rng(1)
    max_exp = 120 if dtype == np.float32 else 1000
    ks = np.concatenate([np.arange(1, 200), rng.integers(1, 2**40, 200), 2.0 ** rng.uniform(40, max_exp, 200)])
    xs = []
    for k in ks:
        v = dtype(float(mp.mpf(float(k)) * mp.pi / 2))
        xs += [v, np.nextafter(v, dtype(np.inf)), np.nextafter(v, dtype(-np.inf))]
    xs = np.array(xs, dtype)
    if dtype == np.float64:
        xs = np.append(xs, 6381956970095103 * 2.0**797)  # the worst case for doubles
    tol = F32_TOL if dtype == np.float32 else 1e-15
    for name, fn in (("sin", mp.sin), ("cos", mp.cos), ("tan", mp.tan)):
        got = run(host, kernels, name, xs)
        for x, g in zip(xs, got):
            r = fn(mp.mpf(float(x)))
            assert abs((mp.mpf(float(g)) - r) / r) <= tol, (name, x, g)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_erf_erfc_against_mpmath(host, kernels, dtype):
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 30
    x = [np.linspace(-6, 6, 301), np.linspace(0.9, 1.1, 101), np.linspace(4, 27.5, 95)]
    x = np.concatenate(x)
    x = x.astype(dtype)
    tol = F32_TOL if dtype == np.float32 else 2e-15
    tiny = np.finfo(dtype).tiny
    for name, fn in (("erf", mp.erf), ("erfc", mp.erfc)):
        got = run(host, kernels, name, x)
        for xv, g in zip(x, got):
            r = fn(mp.mpf(float(xv)))
            if abs(r) < tiny:  # subnormal result: absolute
                assert abs(g - float(r)) <= 2 * np.finfo(dtype).smallest_subnormal
            else:
                assert abs((mp.mpf(float(g)) - r) / r) <= tol, (name, xv, g, r)


def test_erfc_coefficients_reproducible():
    pytest.importorskip("mpmath")
    from pyjax.backends.wasm.mathlib import _fit_erfc_tail

    fresh = _fit_erfc_tail(len(_ERFC_CHEB))
    assert all(math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-25) for a, b in zip(fresh, _ERFC_CHEB))


def test_add_math_helpers_dedups_and_validates():
    m = Module()
    a = add_math_helpers(m, ["tanh", "exp"], "float32")
    b = add_math_helpers(m, ["exp"], np.float32)
    c = add_math_helpers(m, ["exp"], "float64")
    assert a["exp"] == b["exp"] and c["exp"] != a["exp"]
    assert m.func_types[a["exp"]] == ((F32,), (F32,))
    assert m.func_types[c["exp"]] == ((F64,), (F64,))
    n = len(m.functions)
    add_math_helpers(m, ["tanh"], "float32")
    assert len(m.functions) == n
    add_math_helpers(m, ["expm1"], "float32")
    assert len(m.functions) == n + 1  # only the f32 wrapper: tanh pulled in expm1's core
    with pytest.raises(ValueError, match="unknown math helper"):
        add_math_helpers(m, ["gamma"], "float32")
    with pytest.raises(ValueError, match="float32 and float64"):
        add_math_helpers(m, ["exp"], "int32")
    only_exp = Module()
    add_math_helpers(only_exp, ["exp"], "float32")
    assert len(only_exp.functions) == 2  # the f32 wrapper and its f64 core, nothing else
