"""dtypes against JAX (x64 off): the promotion table, weak types of Python scalars, results of
binary ops, 64-bit canonicalization, finfo/iinfo, dtype equality/numpy interop, scalar-type
constructors and isinstance/issubdtype."""

from __future__ import annotations

import itertools
import operator
import warnings

import jax
import jax.numpy as jjnp
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from oracle import assert_close

DTYPES = ["bool", "int8", "int16", "int32", "uint8", "uint16", "uint32", "float16", "bfloat16", "float32"]
NUMERIC = [d for d in DTYPES if d != "bool"]
SCALARS = [True, 2, -3, 2.5]
BINOPS = {
    "add": operator.add,
    "sub": operator.sub,
    "mul": operator.mul,
    "truediv": operator.truediv,
    "floordiv": operator.floordiv,
    "pow": operator.pow,
    "lt": operator.lt,
    "eq": operator.eq,
    "maximum": lambda a, b: (pjnp if _is_pyjax(a, b) else jnp).maximum(a, b),
}


@pytest.fixture(autouse=True)
def _x64_off():
    assert not pyjax.config.jax_enable_x64 and not jax.config.jax_enable_x64


def _is_pyjax(*xs) -> bool:
    return any(isinstance(x, pyjax.Array) for x in xs)


def _sample(lib, name: str):
    vals = [1, 0, 1] if name == "bool" else [1, 2, 3]
    return lib.asarray(np.array(vals), dtype=name)


def _outcome(fn, abstract: bool = False):
    """('ok', dtype name, weak_type) or ('error', exception class name).

    abstract=True evaluates shapes only (jax.eval_shape): JAX's answer without compiling a kernel.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = jax.eval_shape(fn) if abstract else fn()
    except Exception as e:  # the exception class is part of the comparison
        return ("error", type(e).__name__)
    return ("ok", r.dtype.name, bool(r.weak_type))


# --- promotion ----------------------------------------------------------------------------------


@pytest.mark.parametrize("a", DTYPES)
def test_promote_types_table(a):
    got = {b: pjnp.promote_types(a, b).name for b in DTYPES}
    want = {b: jnp.promote_types(a, b).name for b in DTYPES}
    assert got == want


def test_promote_types_accepts_scalar_types_and_is_symmetric():
    for a, b in itertools.product(DTYPES, repeat=2):
        assert pjnp.promote_types(a, b) == pjnp.promote_types(b, a)
    assert pjnp.promote_types(pjnp.int8, pjnp.uint8) == jnp.promote_types(jnp.int8, jnp.uint8)
    assert pjnp.promote_types(pjnp.bfloat16, pjnp.float16).name == "float32"
    assert pjnp.promote_types(np.int16, np.float16).name == jnp.promote_types(np.int16, np.float16).name


def test_promote_types_64bit_requests_canonicalize():
    for a, b in [("int64", "int8"), ("float64", "float16"), ("uint64", "uint8"), ("int64", "uint64")]:
        assert pjnp.promote_types(a, b).name == jnp.promote_types(a, b).name


@pytest.mark.parametrize(
    "args",
    [
        (1,),
        (1.0,),
        (True,),
        (True, 1),
        (1, 1.0),
        (True, 2.5),
        ("int8", 1),
        ("int8", 1.0),
        ("uint8", -1),
        ("float16", 1.0),
        ("bfloat16", 3),
        ("bool", 1),
        ("bool", 1.0),
        ("int16", "uint16"),
        ("int32", "float16", 2),
        ("uint32", "int8"),
    ],
)
def test_result_type_with_python_scalars(args):
    assert pjnp.result_type(*args).name == jnp.result_type(*args).name


@pytest.mark.parametrize("d", DTYPES)
def test_result_type_of_arrays_and_weak_arrays(d):
    px, jx = _sample(pjnp, d), _sample(jnp, d)
    for s in SCALARS:
        assert pjnp.result_type(px, s).name == jnp.result_type(jx, s).name, s
    pw, jw = pjnp.asarray(2.0), jnp.asarray(2.0)  # weak float32 arrays
    assert pw.weak_type == jw.weak_type
    assert pjnp.result_type(px, pw).name == jnp.result_type(jx, jw).name


# --- binary ops: dtype and weak_type of results ----------------------------------------------------


# Known pyjax divergences from JAX, reported to the library owners: listed cases may differ
# from JAX (remove them once fixed); any other difference fails.
KNOWN_DIVERGENCES = {
    # Python scalar ** bool array: JAX's power gives a strong int32 for int exponents' bases and
    # a weak float32 for a float base; pyjax has the weak types the other way round
    "bool pow 2 (scalar_first)",
    "bool pow -3 (scalar_first)",
    "bool pow 2.5 (scalar_first)",
}


def _check_against_known(mismatches: dict) -> None:
    unexpected = [f"{k}: {v}" for k, v in mismatches.items() if k not in KNOWN_DIVERGENCES]
    assert not unexpected, "\n".join(unexpected)


@pytest.mark.parametrize("op", list(BINOPS))
@pytest.mark.parametrize("d", DTYPES)
def test_binop_array_with_python_scalar(d, op):
    fn = BINOPS[op]
    px, jx = _sample(pjnp, d), _sample(jnp, d)
    mismatches = {}
    for s in SCALARS:
        for order in ("array_first", "scalar_first"):
            args_p, args_j = ((px, s), (jx, s)) if order == "array_first" else ((s, px), (s, jx))
            got = _outcome(lambda: fn(*args_p))
            want = _outcome(lambda: fn(*args_j), abstract=True)
            key = f"{d} {op} {s!r} ({order})"
            if got != want:
                mismatches[key] = f"pyjax {got}, jax {want}"
    _check_against_known(mismatches)


@pytest.mark.parametrize("op", ["add", "mul", "truediv", "lt", "maximum"])
def test_binop_array_pairs(op):
    fn = BINOPS[op]
    mismatches = {}
    for a, b in itertools.product(DTYPES, repeat=2):
        got = _outcome(lambda: fn(_sample(pjnp, a), _sample(pjnp, b)))
        want = _outcome(lambda: fn(_sample(jnp, a), _sample(jnp, b)), abstract=True)
        key = f"{a} {op} {b}"
        if got != want:
            mismatches[key] = f"pyjax {got}, jax {want}"
    _check_against_known(mismatches)


def test_binop_values_with_wrapping_scalars():
    """Unsigned/signed wrap-around with Python ints: values, not just dtypes."""
    for d in ["uint8", "uint16", "uint32", "int8"]:
        px, jx = _sample(pjnp, d), _sample(jnp, d)
        for s in [2, -3, 7]:
            assert_close(px - s, jx - s)
            assert_close(s - px, s - jx)
            assert_close(px * s, jx * s)


def test_weak_types_propagate_like_jax():
    cases = [
        lambda m: m.asarray(1.0) * 2,  # weak * weak stays weak
        lambda m: m.asarray(1.0) + m.ones(2, dtype="float16"),  # weak float adopts float16
        lambda m: m.asarray(3) + m.ones(2, dtype="int8"),
        lambda m: m.asarray(3) * 0.5,  # weak int * float -> weak float
        lambda m: m.ones(2, dtype="int8") * 0.5,  # strong int * Python float -> weak float
        lambda m: m.sum(m.asarray(1.0) * m.ones(3)),
        lambda m: m.sin(m.asarray(2.0)),
        lambda m: m.where(m.ones(2) > 0, 1, 2),
        lambda m: m.where(m.ones(2) > 0, 1.0, m.ones(2, dtype="bfloat16")),
        lambda m: m.asarray(2, dtype="int16") + 1,
        lambda m: m.arange(3) + 1.5,
        lambda m: m.zeros(2) + True,
        lambda m: m.full((2,), 3.0),
        lambda m: m.full((3,), 2),
    ]
    for k, case in enumerate(cases):
        got, want = _outcome(lambda: case(pjnp)), _outcome(lambda: case(jnp), abstract=True)
        assert got == want, f"case {k}: pyjax {got}, jax {want}"


def test_jit_preserves_weak_types():
    got = pyjax.jit(lambda x: x * 2)(3.0)
    want = jax.jit(lambda x: x * 2)(3.0)
    assert_close(got, want, check_weak_type=True)
    got = pyjax.jit(lambda x: x + 1)(pjnp.ones(2, pjnp.int8))
    want = jax.jit(lambda x: x + 1)(jnp.ones(2, jnp.int8))
    assert_close(got, want, check_weak_type=True)


# --- 64-bit requests without x64 --------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.array([1.0, 2.0], dtype=m.float64),
        lambda m: m.zeros(3, "float64"),
        lambda m: m.ones(2, dtype=float),
        lambda m: m.arange(3, dtype=m.int64),
        lambda m: m.arange(3).astype(m.float64),
        lambda m: m.asarray(np.arange(3.0)),
        lambda m: m.asarray(np.arange(3, dtype=np.int64)),
        lambda m: m.asarray(np.arange(3, dtype=np.uint64)),
        lambda m: m.float64(3),
        lambda m: m.asarray(3.0, dtype="float64"),
        lambda m: m.full((2,), 1, dtype=m.uint64),
        lambda m: m.linspace(0.0, 1.0, 3, dtype=m.float64),
    ],
)
def test_64bit_requests_give_32bit(make):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_close(make(pjnp), make(jnp), check_weak_type=True)


def test_dtype_canonicalization_helpers():
    assert pjnp.dtype("float64") == jnp.dtype("float64")  # jnp.dtype does not canonicalize
    assert pjnp.dtype(float) == np.dtype(float)
    assert pjnp.dtype("f4") == pjnp.float32 and pjnp.dtype("i1") == pjnp.int8
    with pytest.raises(TypeError):
        pjnp.dtype("float1234")


# --- finfo / iinfo --------------------------------------------------------------------------------


@pytest.mark.parametrize("d", ["float16", "bfloat16", "float32", "float64"])
def test_finfo(d):
    got, want = pjnp.finfo(d), jnp.finfo(d)
    for field in ["bits", "eps", "max", "min", "tiny", "smallest_normal", "nmant", "nexp"]:
        assert float(getattr(got, field)) == float(getattr(want, field)), field
    # JAX's resolution is a scalar of the dtype (0.001 rounded to float16); ours is the Python float
    assert float(got.resolution) == pytest.approx(float(want.resolution), rel=1e-2)
    assert float(got.smallest_subnormal) == pytest.approx(float(want.smallest_subnormal), rel=0.05)
    assert got.dtype == pjnp.dtype(d)
    assert pjnp.finfo(pjnp.ones(2, dtype=d if d != "float64" else "float32")).bits == (
        32 if d in ("float32", "float64") else 16
    )


@pytest.mark.parametrize("d", ["int8", "int16", "int32", "uint8", "uint16", "uint32", "int64", "uint64"])
def test_iinfo(d):
    got, want = pjnp.iinfo(d), jnp.iinfo(d)
    assert (got.min, got.max, got.bits) == (int(want.min), int(want.max), want.bits)


def test_finfo_iinfo_reject_wrong_kinds():
    with pytest.raises(ValueError):
        pjnp.finfo(pjnp.int32)
    with pytest.raises(ValueError):
        pjnp.iinfo(pjnp.float32)


# --- dtype objects: equality, hashing, numpy interop ----------------------------------------------


@pytest.mark.parametrize("d", [d for d in DTYPES if d != "bfloat16"])
def test_dtype_equality_and_numpy_interop(d):
    x = _sample(pjnp, d)
    np_type = np.bool_ if d == "bool" else getattr(np, d)
    scalar_type = pjnp.bool_ if d == "bool" else getattr(pjnp, d)
    assert x.dtype == scalar_type and x.dtype == d and x.dtype == np_type and x.dtype == np.dtype(d)
    assert x.dtype == getattr(jnp, "bool_" if d == "bool" else d)
    assert x.dtype != (pjnp.float32 if d != "float32" else pjnp.int32)
    assert np.dtype(x.dtype) == np.dtype(d)
    assert np.zeros(2, dtype=x.dtype).dtype == np.dtype(d)
    assert np.asarray(x).dtype == x.dtype == _sample(jnp, d).dtype
    assert hash(x.dtype) == hash(pjnp.dtype(d)) and {x.dtype: 1}[pjnp.dtype(d)] == 1
    assert x.dtype.name == d and str(x.dtype) == d and x.dtype.itemsize == np.dtype(d).itemsize
    assert x.dtype.kind == np.dtype(d).kind


def test_bfloat16_dtype_interop():
    x = pjnp.ones(2, dtype=pjnp.bfloat16)
    assert x.dtype == jnp.bfloat16 and x.dtype == "bfloat16" and x.dtype.itemsize == 2
    assert np.dtype(x.dtype) == np.dtype(jnp.bfloat16)
    vals = [1.1, 3.0, -2.7, 1e30, float("nan"), float("inf")]
    p, j = pjnp.array(vals, dtype=pjnp.bfloat16), jnp.array(vals, dtype=jnp.bfloat16)
    assert repr(p) == repr(j) and repr(p * 2 + 1) == repr(j * 2 + 1)
    assert_close(p * 2, j * 2)


# --- scalar-type constructors ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.float32(3),
        lambda m: m.float32(2.5),
        lambda m: m.int32(7.9),
        lambda m: m.int8(-3),
        lambda m: m.uint8(200),
        lambda m: m.bool_(1),
        lambda m: m.float16(0.1),
        lambda m: m.float32([1, 2, 3]),
        lambda m: m.int32(m.arange(3.0) * 1.5),
        lambda m: m.float32(True),
    ],
)
def test_scalar_type_constructors(make):
    assert_close(make(pjnp), make(jnp), check_weak_type=True)


def test_scalar_types_as_dtype_arguments():
    assert_close(pjnp.zeros(2, pjnp.int16), jnp.zeros(2, jnp.int16))
    assert_close(pjnp.arange(3).astype(pjnp.float16), jnp.arange(3).astype(jnp.float16))
    assert pjnp.dtype(pjnp.float32) == pjnp.float32
    with pytest.raises(TypeError):
        pjnp.floating(1.0)  # abstract types cannot be instantiated


# --- isinstance / issubdtype ---------------------------------------------------------------------


ABSTRACT = ["generic", "number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger"]


@pytest.mark.parametrize("d", DTYPES)
def test_issubdtype_matches_jax(d):
    for a in ABSTRACT:
        assert pjnp.issubdtype(d, getattr(pjnp, a)) == jnp.issubdtype(d, getattr(jnp, a)), a
    for other in DTYPES:
        assert pjnp.issubdtype(d, other) == jnp.issubdtype(d, other), other


def test_abstract_classes_are_numpys():
    """jnp.integer is np.integer (and the other abstract classes), as in JAX, so issubclass on
    x.dtype.type and numpy code that checks them work; bool_ stays pyjax's own, as JAX's does."""
    for a in ABSTRACT + ["complexfloating", "bool_"]:
        assert (getattr(pjnp, a) is getattr(np, a)) == (getattr(jnp, a) is getattr(np, a)), a
    for d in DTYPES:
        px, jx = pjnp.zeros(2, d), jnp.zeros(2, d)
        scalar = "bool_" if d == "bool" else d
        for a in ABSTRACT + ["complexfloating"]:
            pa, ja = getattr(pjnp, a), getattr(jnp, a)
            assert issubclass(px.dtype.type, pa) == issubclass(jx.dtype.type, ja), (d, a)
            assert issubclass(getattr(pjnp, scalar), pa) == issubclass(getattr(jnp, scalar), ja), (d, a)
            assert pjnp.issubdtype(px.dtype, pa) == jnp.issubdtype(jx.dtype, ja), (d, a)


def test_isinstance_checks():
    x = pjnp.arange(3.0)
    assert isinstance(x, pyjax.Array) and isinstance(x, pjnp.ndarray)
    assert not isinstance(np.arange(3.0), pyjax.Array)
    assert not isinstance(3.0, pyjax.Array)
    for a in ["floating", "integer", "number", "generic"]:
        assert isinstance(x, getattr(pjnp, a)) == isinstance(jnp.arange(3.0), getattr(jnp, a)), a
    assert isinstance(pjnp.float32(3), pyjax.Array) == isinstance(jnp.float32(3), jax.Array)
    seen = []

    @pyjax.jit
    def f(t):
        seen.append(isinstance(t, pyjax.Array))
        return t * 2

    f(x)
    assert seen == [True], "tracers are instances of pyjax.Array, as in JAX"


# --- jax.dtypes and scipy.linalg matrix builders ------------------------------------------------------


def test_dtypes_module():
    for mod, np_mod in ((jax, jjnp), (pyjax, pjnp)):
        d = mod.dtypes
        assert str(d.canonicalize_dtype(np_mod.float64)) == "float32"
        assert str(d.result_type(1.0, np_mod.int32(1))) == "float32"
        assert d.scalar_type_of(np_mod.ones(2, np_mod.int8)) is int
        assert d.itemsize_bits(np_mod.int16) == 16
        assert d.issubdtype(np_mod.float32, np_mod.floating)
        assert d.iinfo(np_mod.int8).max == 127


def test_numpy_float64_scalars_are_not_weak():
    """np.float64 and np.complex128 subclass Python's float and complex, but JAX types them strongly (only
    exactly int, float and complex are weak): bfloat16 * np.float64(0.5) is float32, as in JAX."""
    from tests.jax_compare import check

    for s in (np.float64(0.5), np.complex128(1j), 0.5, np.float32(2)):
        check(lambda j, n, x, s=s: (x.astype("bfloat16") * s, n.asarray(s), n.exp(s)), np.ones(3, np.float32))
    check(lambda j, n: (j.jit(lambda v: v * 2)(np.float64(1.0)), j.lax.full((2,), np.float64(3.0))))
