"""pyjax.image against real JAX on every backend: resize with every method (up- and downsampling,
antialias on and off, 1-D/2-D/3-D spatial dims next to batch/channel dims), integer and half
images, scale_and_translate with non-trivial scale and translation, jit, grad and errors."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jj
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pj
from tests.jax_compare import _jax_jitted, assert_close, to_lib

F = np.float32
RNG = np.random.default_rng(0)
X2 = RNG.standard_normal((2, 5, 6, 3)).astype(F)  # batch, height, width, channels
X1 = RNG.standard_normal((7, 2)).astype(F)
X3 = RNG.standard_normal((3, 4, 5)).astype(F)
IMG = RNG.integers(0, 255, (4, 5, 2))

_ORACLE: dict = {}


def check_all(fn, cases, rtol=None, atol=None, key=None):
    """pyjax's fn(pyjax, pyjax.numpy, *args) matches JAX's for every case; JAX's results come from one
    jax.jit call, cached under key so that each backend's run reuses them."""
    key = key or (fn, len(cases))
    if key not in _ORACLE:
        _ORACLE[key] = _jax_jitted(fn, cases, {})
    for i, (args, want) in enumerate(zip(cases, _ORACLE[key])):
        got = fn(pyjax, pj, *to_lib(args, pj))
        assert_close(got, want, rtol=rtol, atol=atol, what=f"case {i}: {args[1:]}")


METHODS = ["nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area"]


def _resize(lib, np_, x, shape, method, antialias):
    return lib.image.resize(x, shape, method, antialias=antialias)


@pytest.mark.parametrize("method", METHODS)
def test_resize_methods(backend, method):
    cases = []
    for aa in (True, False) if method != "nearest" else (True,):  # nearest ignores antialias
        cases += [
            (X2, (2, 9, 4, 3), method, aa),  # up one spatial dim, down the other
            (X1, (3, 2), method, aa),  # down by more than 2
            (X3, (5, 2, 7), method, aa),  # three spatial dims
        ]
    cases.append((X2, (1, 2, 6, 2), method, True))  # batch and channel dims resized too
    cases.append((X2, X2.shape, method, True))  # identity
    check_all(_resize, cases, rtol=1e-4, atol=1e-5, key=method)


def test_resize_dtypes(backend):
    img = IMG
    cases = []
    for dt in (np.uint8, np.int32, np.bool_):
        x = (img % 2).astype(dt) if dt is np.bool_ else img.astype(dt)
        cases += [(x, (7, 3, 2), m, True) for m in ("nearest", "linear", "cubic")]
        cases.append((x, x.shape, "linear", True))  # integer identity still becomes float
    check_all(_resize, cases, rtol=1e-4, atol=1e-4, key="int")
    xf = (img / 64.0).astype(np.float16)
    check_all(
        _resize, [(xf, (7, 3, 2), m, aa) for m in ("nearest", "linear", "lanczos3") for aa in (True, False)], key="f16"
    )
    xb = jj.asarray(img / 64.0, dtype=jj.bfloat16)
    for m in ("nearest", "linear", "cubic"):
        got = pyjax.image.resize(pj.asarray(np.asarray(xb.astype(jj.float32)), dtype=pj.bfloat16), (7, 3, 2), m)
        want = jax.image.resize(xb, (7, 3, 2), m)
        assert_close(got, want, rtol=3e-2, atol=3e-2)


def _sat(lib, np_, x, shape, dims, scale, trans, method, antialias):
    return lib.image.scale_and_translate(x, shape, dims, scale, trans, method, antialias=antialias)


def test_scale_and_translate(backend):
    s2, t2 = np.array([1.7, 0.6], F), np.array([-0.8, 1.3], F)
    s1, t1 = np.array([0.45], F), np.array([2.5], F)
    cases = []
    for m in ("linear", "lanczos3", "cubic", "cubic-pytorch", "area"):
        cases += [
            (X2, (2, 7, 5, 3), (1, 2), s2, t2, m, True),
            (X2, (2, 7, 5, 3), (1, 2), s2, t2, m, False),
            (X2, (2, 5, 4, 3), (-2,), s1, t1, m, m in ("linear", "area")),  # negative spatial dim
            (X3, (3, 4, 6), (2, 0), np.array([2.0, 1.0], F), np.array([-3.0, 0.0], F), m, m != "cubic"),
        ]
    check_all(_sat, cases, rtol=1e-4, atol=1e-5, key="sat")
    # integer scale/translation and an integer image are promoted to float, as in JAX
    xi = (X3 * 10).astype(np.int32)
    cases = [(xi, (3, 6, 5), (1,), np.array([2]), np.array([1]), "linear", True)]
    cases.append((X3, (3, 4, 5), (), np.zeros((0,), F), np.zeros((0,), F), "linear", True))  # no spatial dims
    check_all(_sat, cases, rtol=1e-4, atol=1e-4, key="sat-int")


def test_method_names():
    names = {
        "nearest": "NEAREST",
        "linear": "LINEAR",
        "bilinear": "LINEAR",
        "trilinear": "LINEAR",
        "triangle": "LINEAR",
        "lanczos3": "LANCZOS3",
        "lanczos5": "LANCZOS5",
        "cubic": "CUBIC",
        "bicubic": "CUBIC",
        "tricubic": "CUBIC",
        "cubic-pytorch": "CUBIC_PYTORCH",
        "bicubic-pytorch": "CUBIC_PYTORCH",
        "area": "AREA",
    }
    for s, name in names.items():
        assert pyjax.image.ResizeMethod.from_string(s).name == jax.image.ResizeMethod.from_string(s).name == name
    assert [m.name for m in pyjax.image.ResizeMethod] == [m.name for m in jax.image.ResizeMethod]
    with pytest.raises(ValueError, match="Unknown resize method"):
        pyjax.image.ResizeMethod.from_string("Linear")
    x = pj.asarray(X1)
    a = pyjax.image.resize(x, (5, 2), pyjax.image.ResizeMethod.LANCZOS3)
    b = pyjax.image.resize(x, (5, 2), "lanczos3")
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _jit_resize(lib, np_, x, method):
    return lib.jit(lambda y: lib.image.resize(y, (2, 4, 9, 3), method))(x)


def _grad_resize(lib, np_, x, method):
    return lib.grad(lambda y: lib.numpy.sum(lib.numpy.sin(lib.image.resize(y, (2, 4, 9, 3), method))))(x)


def _vmap_resize(lib, np_, x, method):
    return lib.vmap(lambda y: lib.image.resize(y, (4, 9, 3), method))(x)


def _sat_loss(lib, x, s, t):
    y = lib.image.scale_and_translate(x, (3, 6, 4), (1, 2), s, t, "linear")
    return lib.numpy.sum(y * y)


def _grad_sat(lib, np_, x, s, t):
    return lib.grad(lambda *a: _sat_loss(lib, *a), argnums=(0, 1, 2))(x, s, t)


def _jit_sat(lib, np_, x, s, t):
    return lib.jit(lambda *a: _sat_loss(lib, *a))(x, s, t)


def test_jit_and_grad(backend):
    methods = ("nearest", "linear", "cubic", "lanczos3", "area")
    check_all(_jit_resize, [(X2, m) for m in methods], rtol=1e-4, atol=1e-5)
    check_all(_grad_resize, [(X2, m) for m in methods], rtol=1e-4, atol=1e-5)
    check_all(_vmap_resize, [(X2, m) for m in ("nearest", "lanczos5")], rtol=1e-4, atol=1e-5)
    args = (X3, np.array([1.3, 0.7], F), np.array([0.4, -0.2], F))
    check_all(_grad_sat, [args], rtol=1e-3, atol=1e-4)
    check_all(_jit_sat, [args], rtol=1e-4, atol=1e-5)


ERROR_CASES = [
    lambda lib: lib.image.resize(lib.numpy.ones((4, 4)), (2,), "linear"),
    lambda lib: lib.image.resize(lib.numpy.ones((4, 4)), (2, 2, 2), "nearest"),
    lambda lib: lib.image.resize(lib.numpy.ones((4, 4)), (2, 2), "foo"),
    lambda lib: lib.image.resize(lib.numpy.ones((4, 4)), (2.5, 2), "linear"),
    lambda lib: lib.image.scale_and_translate(
        lib.numpy.ones((4, 4)), (2, 2), (0, 1), lib.numpy.ones(2), lib.numpy.zeros(2), "nearest"
    ),
    lambda lib: lib.image.scale_and_translate(
        lib.numpy.ones((4, 4)), (2, 2, 1), (0, 1), lib.numpy.ones(2), lib.numpy.zeros(2), "linear"
    ),
    lambda lib: lib.image.scale_and_translate(
        lib.numpy.ones((4, 4)), (2, 2), (0, 5), lib.numpy.ones(2), lib.numpy.zeros(2), "linear"
    ),
    lambda lib: lib.image.scale_and_translate(lib.numpy.ones((4, 4)), (2, 2), (0, 1), [1.0, 1.0], [0.0, 0.0], "linear"),
    lambda lib: lib.image.scale_and_translate(lib.numpy.ones((4, 4)), (4, 6), (1,), 1.5, 0.0, "linear"),
]


@pytest.mark.parametrize("case", range(len(ERROR_CASES)))
def test_errors(case):
    fn = ERROR_CASES[case]
    with pytest.raises(Exception) as want:
        fn(jax)
    with pytest.raises(type(want.value)) as got:
        fn(pyjax)
    name = "resize" if "resize(" in inspect.getsource(fn) else "scale_and_translate"
    assert f"{name}:" in str(got.value), got.value


def test_errors_beyond_jax():
    """Where JAX fails an internal assert, pyjax raises a clear TypeError/ValueError naming the function."""
    x = pj.ones((4, 4))
    with pytest.raises(TypeError, match="resize: method"):
        pyjax.image.resize(x, (2, 2), 5)
    with pytest.raises(ValueError, match="scale_and_translate: scale"):
        pyjax.image.scale_and_translate(x, (2, 2), (0,), pj.ones(2), pj.zeros(2), "linear")
