"""The Array type against jax.Array: attributes, every Python operator (incl. reflected), methods,
conversions to Python values, iteration, repr, numpy interop."""

from __future__ import annotations

import operator

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from jax_compare import check_all
from jax_compare import check_jit as check

F = np.array([[1.5, -2.0, 0.0], [3.25, -0.5, 4.0]], np.float32)
I = np.array([[3, -7, 0], [12, 5, -1]], np.int32)
U = np.array([[3, 7, 0], [12, 5, 255]], np.uint8)
B = np.array([[True, False, True], [False, False, True]])


def test_attributes(backend):
    for x in (F, I, U, B, np.float32(2.0), np.zeros((2, 0, 3), np.float32)):
        check(lambda j, n, a: (a.shape, a.ndim, a.size, str(a.dtype), a.T, a.weak_type), x)
    x = pjnp.asarray(F)
    assert x.dtype == pjnp.float32 and x.dtype == np.float32 and x.dtype == "float32"
    assert x.T.shape == (3, 2) and x.mT.shape == (3, 2)
    assert x.nbytes == 24 and x.itemsize == 4
    assert isinstance(x, pyjax.Array) and isinstance(x, pjnp.ndarray)


BINOPS = [
    operator.add,
    operator.sub,
    operator.mul,
    operator.truediv,
    operator.floordiv,
    operator.mod,
    operator.pow,
    operator.lt,
    operator.le,
    operator.gt,
    operator.ge,
    operator.eq,
    operator.ne,
]
INTOPS = [operator.and_, operator.or_, operator.xor, operator.lshift, operator.rshift]


@pytest.mark.parametrize("op", BINOPS + INTOPS, ids=lambda o: o.__name__)
def test_binary_operators(backend, op):
    pos = np.array([[1, 2, 3], [2, 1, 4]], np.int32)
    cases = [
        (F, F[::-1]),
        (I, pos),
        (F, 2.0),
        (I, 3),
        (I, 2.5),
        (U, pos.astype(np.uint8)),
        (B, B[::-1]),
        (F, I),
        (I, True),
        (F, np.float32(1.5)),
    ]
    if op in INTOPS:
        cases = [(I, pos), (U, np.uint8(2)), (B, B[::-1]), (I, 2), (F, F)]
    if op is operator.pow:
        cases = [(np.abs(F), F[::-1]), (I, pos), (F, 2), (F, 0.5), (I, 2), (pos, 2.0)]
    check_all(lambda j, n, x, y: op(x, y), cases)
    check_all(lambda j, n, x, y: op(y, x), cases)  # reflected when y is a Python scalar


def test_reflected_scalars(backend):
    x = F
    check(lambda j, n, a: 1 - a, x)
    check(lambda j, n, a: 2 / a, x)
    check(lambda j, n, a: 2**a, x)
    check(lambda j, n, a: 7 // a, I[I != 0])
    check(lambda j, n, a: 7 % a, I[I != 0])
    check(lambda j, n, a: 3 << a, np.array([1, 2], np.int32))
    check(lambda j, n, a: 64 >> a, np.array([1, 2], np.int32))
    check(lambda j, n, a: 6 & a, np.array([3, 5], np.int32))
    check(lambda j, n, a: True | a, B)
    check(lambda j, n, a: np.float32(2) * a, x)  # numpy scalar on the left defers to the array
    check(lambda j, n, a: divmod(a, 2), I)
    check(lambda j, n, a: divmod(7, a), I[I != 0])


def test_operator_with_numpy_array(backend):
    res = pjnp.asarray(F) + np.ones(3, np.float32)
    assert isinstance(res, pyjax.Array)
    np.testing.assert_allclose(np.asarray(res), F + 1)
    res = np.ones(3, np.float32) + pjnp.asarray(F)  # __array_priority__ makes numpy defer
    assert isinstance(res, pyjax.Array)


def test_unary_operators(backend):
    for a in (F, I, U):
        check(lambda j, n, x: -x, a)
        check(lambda j, n, x: +x, a)
        check(lambda j, n, x: abs(x), a)
    for a in (I, U, B):
        check(lambda j, n, x: ~x, a)
    check(lambda j, n, x: -x, B)  # TypeError in both


def test_eager_repeats_take_the_hot_paths(backend):
    """The second and third time an eager op meets the same operands it runs from caches (its
    plan, host scalars uploaded in place, basic-index views): the same results as JAX's."""

    def ops(j, n, x, i):
        out = []
        for _ in range(3):
            out += [x + 1, 2.5 * x, x - x, n.sin(x) * 3, i + 7, 3 * i, -(2**31) + i, x[1], x[::-1, 1:], x[None, -1]]
        return out

    check(ops, F, I)


def test_matmul_operator(backend):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(lambda j, n, x, y: x @ y, a, a.T.copy())
    check(lambda j, n, x, y: x @ y, a, a[0])
    check(lambda j, n, x, y: x @ y, a[0], a.T.copy())
    check(lambda j, n, x, y: x @ y, np.arange(3, dtype=np.int32), a.T.copy())


def test_inplace_operators_rebind(backend):
    for lib in (jjnp, pjnp):
        x = lib.arange(3.0)
        y = x
        x += 1
        x *= 2
        assert y.tolist() == [0.0, 1.0, 2.0]
        assert x.tolist() == [2.0, 4.0, 6.0]


METHODS = {
    "sum": lambda a: a.sum(),
    "sum_axis": lambda a: a.sum(axis=0),
    "sum_keepdims": lambda a: a.sum(axis=1, keepdims=True),
    "mean": lambda a: a.mean(),
    "mean_axis": lambda a: a.mean(axis=-1),
    "max": lambda a: a.max(),
    "max_axis": lambda a: a.max(axis=1),
    "min": lambda a: a.min(axis=0),
    "prod": lambda a: a.prod(axis=1),
    "var": lambda a: a.var(),
    "std": lambda a: a.std(axis=0, ddof=1),
    "argmax": lambda a: a.argmax(),
    "argmax_axis": lambda a: a.argmax(axis=1),
    "argmin": lambda a: a.argmin(axis=0),
    "all": lambda a: a.all(),
    "any_axis": lambda a: a.any(axis=1),
    "cumsum": lambda a: a.cumsum(axis=1),
    "cumsum_flat": lambda a: a.cumsum(),
    "cumprod": lambda a: a.cumprod(axis=0),
    "reshape_tuple": lambda a: a.reshape((3, 2)),
    "reshape_args": lambda a: a.reshape(3, 2),
    "reshape_neg": lambda a: a.reshape(-1),
    "transpose": lambda a: a.transpose(),
    "transpose_args": lambda a: a.transpose(1, 0),
    "transpose_tuple": lambda a: a.transpose((1, 0)),
    "astype_f": lambda a: a.astype("float32"),
    "astype_i": lambda a: a.astype(jjnp.int32) if isinstance(a, jax.Array) else a.astype(pjnp.int32),
    "astype_b": lambda a: a.astype(bool),
    "ravel": lambda a: a.ravel(),
    "flatten": lambda a: a.flatten(),
    "squeeze": lambda a: a.reshape(1, 2, 1, 3).squeeze(),
    "squeeze_axis": lambda a: a.reshape(1, 2, 1, 3).squeeze(axis=2),
    "clip": lambda a: a.clip(0, 3),
    "clip_min": lambda a: a.clip(min=1),
    "round": lambda a: a.round(),
    "round_dec": lambda a: (a * np.float32(1.2345)).round(2),
    "sort": lambda a: a.sort(),
    "sort_axis": lambda a: a.sort(axis=0),
    "argsort": lambda a: a.argsort(),
    "swapaxes": lambda a: a.swapaxes(0, 1),
    "diagonal": lambda a: a.diagonal(),
    "repeat": lambda a: a.repeat(2, axis=0),
    "dot": lambda a: a.dot(a.T),
    "ptp": lambda a: a.ptp(axis=1),
    "trace": lambda a: a.trace(),
    "conj": lambda a: a.conj(),
    "real": lambda a: a.real,
    "imag": lambda a: a.imag,
}


@pytest.mark.parametrize("name", list(METHODS))
@pytest.mark.parametrize("arr", ["F", "I"])
def test_methods(backend, name, arr):
    a = {"F": F, "I": I}[arr]
    check(lambda j, n, x: METHODS[name](x), a)


def test_methods_bool(backend):
    for name in (
        "sum",
        "max_axis",
        "all",
        "any_axis",
        "cumsum",
        "argmax",
        "astype_f",
        "reshape_args",
        "mean",
        "transpose",
        "prod",
    ):
        check(lambda j, n, x: METHODS[name](x), B)


def test_item_and_tolist(backend):
    for x in (F, I, B, U):
        assert pjnp.asarray(x).tolist() == jjnp.asarray(x).tolist()
        assert pjnp.asarray(x)[1, 2].item() == jjnp.asarray(x)[1, 2].item()
        assert type(pjnp.asarray(x)[1, 2].item()) is type(jjnp.asarray(x)[1, 2].item())
        assert pjnp.asarray(x).item(4) == jjnp.asarray(x).item(4)
    assert pjnp.asarray(2.5).tolist() == 2.5
    assert pjnp.array(3).item() == 3 and type(pjnp.array(3).item()) is int
    assert pjnp.float32(0.1).item() == jjnp.float32(0.1).item()
    assert pjnp.asarray(np.float16(0.1)).item() == jjnp.asarray(np.float16(0.1)).item()
    with pytest.raises(ValueError):
        pjnp.arange(3).item()


def test_python_conversions(backend):
    x = pjnp.asarray(2.75)
    assert float(x) == 2.75 and int(x) == 2 and bool(x) is True and complex(x) == 2.75
    assert int(pjnp.asarray(-2.75)) == -2
    assert bool(pjnp.asarray(0.0)) is False
    assert float(pjnp.asarray([3.5])) == 3.5  # size-1 arrays convert
    assert operator.index(pjnp.asarray(5)) == 5
    assert [10, 20, 30][pjnp.asarray(1)] == 20
    assert range(10)[pjnp.asarray(2, pjnp.uint8)] == 2
    with pytest.raises(TypeError):
        operator.index(pjnp.asarray(2.0))
    with pytest.raises(TypeError):
        operator.index(pjnp.arange(2))
    with pytest.raises(TypeError):
        float(pjnp.arange(3.0))
    with pytest.raises(TypeError):
        int(pjnp.arange(3))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(pjnp.arange(3))
    assert f"{pjnp.asarray(2.5):.2f}" == "2.50"
    assert hash(1) and isinstance(pjnp.asarray(1.0) == 1.0, pyjax.Array)
    with pytest.raises(TypeError, match="unhashable"):
        hash(pjnp.arange(3))


def test_len_and_iteration(backend):
    x = pjnp.asarray(F)
    assert len(x) == 2
    rows = list(x)
    assert len(rows) == 2 and all(isinstance(r, pyjax.Array) for r in rows)
    np.testing.assert_array_equal(np.asarray(rows[1]), F[1])
    assert [float(v) for v in x[0]] == F[0].tolist()
    a, b = pjnp.arange(2)
    assert int(a) == 0 and int(b) == 1
    with pytest.raises(TypeError):
        len(pjnp.asarray(1.0))
    with pytest.raises(TypeError):
        iter(pjnp.asarray(1.0))
    assert list(pjnp.zeros((0, 2))) == []


REPR_CASES = {
    "f32": lambda n: n.array([1.0, 2.5, -3.0]),
    "f32_weak": lambda n: n.array(2.0) * 2,
    "i32": lambda n: n.arange(4),
    "i32_weak": lambda n: n.asarray(3),
    "bool": lambda n: n.array([True, False]),
    "2d": lambda n: n.arange(6.0).reshape(2, 3),
    "int_weak_scalar": lambda n: n.asarray(7) + 1,
    "uint8": lambda n: n.arange(3, dtype=n.uint8),
    "f16": lambda n: n.array([0.5, 1.5], dtype=n.float16),
    "empty": lambda n: n.zeros((0,)),
    "empty2d": lambda n: n.zeros((2, 0), dtype=n.int32),
    "scalar_f32": lambda n: n.float32(1.5),
    "nan_inf": lambda n: n.array([n.nan, n.inf, -n.inf, 1.0]),
    "small": lambda n: n.array([1e-8, 1.0]),
    "big": lambda n: n.array([1e10, 1.0]),
}


@pytest.mark.parametrize("name", list(REPR_CASES))
def test_repr_matches_jax(backend, name):
    pj = REPR_CASES[name](pjnp)
    jx = REPR_CASES[name](jjnp)
    assert repr(pj) == repr(jx)
    assert str(pj) == str(jx)


def test_numpy_interop(backend):
    x = pjnp.asarray(F)
    a = np.asarray(x)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    np.testing.assert_array_equal(a, F)
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.asarray(pjnp.asarray(B)).dtype == np.bool_
    assert np.asarray(pjnp.arange(3, dtype=pjnp.uint8)).dtype == np.uint8
    assert np.array(pjnp.asarray(2.0)).shape == ()
    assert np.sum(np.asarray(pjnp.ones((2, 2)))) == 4.0
    # views are materialized correctly
    np.testing.assert_array_equal(np.asarray(x.T), F.T)
    np.testing.assert_array_equal(np.asarray(pjnp.broadcast_to(x[0], (3, 3))), np.broadcast_to(F[0], (3, 3)))


def test_block_until_ready(backend):
    x = pjnp.arange(4.0) * 2
    assert x.block_until_ready() is x
    tree = {"a": x, "b": (x + 1, 3)}
    out = pyjax.block_until_ready(tree)
    assert out["a"] is x


def test_setitem_rejected(backend):
    x = pjnp.arange(3)
    with pytest.raises(TypeError, match=r"\.at"):
        x[0] = 1


def test_device_attributes(backend):
    x = pjnp.arange(3)
    assert x.device in pyjax.devices(backend) or str(x.device).startswith(backend)
    assert x.devices() == {x.device}
