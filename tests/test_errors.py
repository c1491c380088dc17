"""Bad input raises JAX's exception class with an informative message (never a crash or a hang)."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import jax.scipy.special
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
import pyjax.scipy.special


def _raise_both(fn, *phrases):
    """fn(jax_module, numpy_module) raises in JAX and in pyjax, with the same exception class (by name and
    builtin base); pyjax's message contains every phrase (case-insensitive)."""
    with pytest.raises(Exception) as jinfo:
        fn(jax, jjnp)
    with pytest.raises(Exception) as pinfo:
        fn(pyjax, pjnp)
    je, pe = jinfo.value, pinfo.value
    for base in (TypeError, ValueError, IndexError, KeyError):
        if isinstance(je, base):
            assert isinstance(pe, base), f"pyjax raised {pe!r}; JAX raised {je!r}"
    pyjax_names = {c.__name__ for c in type(pe).__mro__}
    assert type(je).__name__ in pyjax_names, f"pyjax raised {type(pe).__name__}; JAX {type(je).__name__}"
    msg = str(pe).lower()
    for p in phrases:
        assert p.lower() in msg, f"{p!r} not in pyjax message: {pe}"
    return pe


def test_incompatible_broadcasting(backend):
    _raise_both(lambda j, n: n.ones(3) + n.ones(4), "(3,)", "(4,)", "broadcast")
    _raise_both(lambda j, n: n.ones(3) * n.ones((2, 2)), "(3,)", "(2, 2)", "broadcast")
    _raise_both(lambda j, n: n.broadcast_to(n.ones(3), (4,)), "broadcast")
    _raise_both(lambda j, n: n.where(n.ones(3) > 0, n.ones(4), 0.0), "broadcast")
    _raise_both(lambda j, n: n.broadcast_shapes((3,), (4,)), "broadcast")


def test_bad_reshape(backend):
    _raise_both(lambda j, n: n.ones(3).reshape(2, 2), "reshape", "(3,)", "(2, 2)")
    _raise_both(lambda j, n: n.reshape(n.ones(6), (4, -1)), "reshape")
    _raise_both(lambda j, n: n.reshape(n.ones(6), (-1, -1)))


def test_contraction_mismatch(backend):
    _raise_both(lambda j, n: n.ones((3, 4)) @ n.ones((3, 4)), "(4,)", "(3,)")
    _raise_both(lambda j, n: n.matmul(n.ones(3), n.ones(4)), "(3,)", "(4,)")
    _raise_both(lambda j, n: n.dot(n.ones((3, 4)), n.ones((3, 4))), "(4,)", "(3,)")
    _raise_both(lambda j, n: n.dot(n.ones((2, 3, 4)), n.ones((5, 3, 2))))
    _raise_both(lambda j, n: n.tensordot(n.ones((2, 3)), n.ones((2, 3)), 1))
    _raise_both(lambda j, n: n.matmul(n.ones(3), 2.0), "matmul")


def test_grad_errors(backend):
    _raise_both(lambda j, n: j.grad(lambda x: x * 2)(n.ones(2)), "scalar", "(2,)")
    _raise_both(lambda j, n: j.grad(lambda x: x * 1.0)(1), "int32", "allow_int")
    _raise_both(lambda j, n: j.grad(lambda x: n.sum(x))(n.ones(2, n.int32)), "int32")
    _raise_both(lambda j, n: j.grad(lambda x: n.sum(x))(n.array([True])), "bool")
    _raise_both(lambda j, n: j.grad(lambda x: (x > 0).sum())(1.0))  # integer output
    _raise_both(lambda j, n: j.grad(lambda x, y: x * y, argnums=2)(1.0, 2.0))
    _raise_both(lambda j, n: j.grad(lambda x: (x, x), has_aux=False)(1.0))
    _raise_both(lambda j, n: j.grad(lambda x: x)("a"))
    _raise_both(lambda j, n: j.jvp(lambda x: x, (n.ones(2),), (n.ones(3),)), "shape")
    _raise_both(lambda j, n: j.jvp(lambda x: x, (1.0,), (n.int32(1),)), "dtype")


def test_vmap_errors(backend):
    _raise_both(lambda j, n: j.vmap(lambda x: x, in_axes=2)(n.ones(2)), "axis 2", "rank")
    _raise_both(lambda j, n: j.vmap(lambda x: x, in_axes=-2)(n.ones(2)), "axis -2")
    _raise_both(lambda j, n: j.vmap(lambda x: x)(1.0), "rank")
    _raise_both(lambda j, n: j.vmap(lambda x, y: x + y)(n.ones(2), n.ones(3)), "inconsistent sizes", "2", "3")
    _raise_both(lambda j, n: j.vmap(lambda x: x, out_axes=3)(n.ones(2)), "out of bounds")
    _raise_both(lambda j, n: j.vmap(lambda x, y: x, in_axes=(0,))(n.ones(2), n.ones(2)), "in_axes")
    _raise_both(lambda j, n: j.vmap(lambda x: x, in_axes=None)(n.ones(2)), "vmap")
    _raise_both(lambda j, n: j.vmap(lambda x: x, in_axes=0.5)(n.ones(2)), "in_axes")


def test_jit_argument_errors(backend):
    _raise_both(lambda j, n: j.jit(lambda x: x, static_argnames="zz")(1.0), "zz")
    _raise_both(lambda j, n: j.jit(lambda x, y: x, static_argnames="y")(1.0, y=n.ones(2)), "hash")
    _raise_both(lambda j, n: j.jit(lambda x: x)("a"), "str")


def test_traced_control_flow(backend):
    e = _raise_both(lambda j, n: j.jit(lambda x: 1 if x > 0 else 2)(1.0))
    assert isinstance(e, TypeError)
    assert isinstance(e, pyjax.errors.TracerBoolConversionError)
    assert isinstance(e, pyjax.errors.ConcretizationTypeError)
    msg = str(e)
    assert "lax.cond" in msg and "jnp.where" in msg
    e = _raise_both(lambda j, n: j.jit(lambda x: n.where(x > 0, 1, 2) if (x > 0).any() else x)(n.ones(2)))
    assert isinstance(e, TypeError)
    _raise_both(lambda j, n: j.vmap(lambda x: x if x > 0 else -x)(n.ones(2)))
    _raise_both(lambda j, n: j.jit(lambda x: [0] * 3 if x else 0)(True))


def test_tracer_conversions(backend):
    e = _raise_both(lambda j, n: j.jit(lambda x: float(x))(1.0))
    assert isinstance(e, pyjax.errors.ConcretizationTypeError) and isinstance(e, TypeError)
    _raise_both(lambda j, n: j.jit(lambda x: int(x))(1.0))
    e = _raise_both(lambda j, n: j.jit(lambda x: list(range(x)))(1))
    assert isinstance(e, pyjax.errors.TracerIntegerConversionError)
    e = _raise_both(lambda j, n: j.jit(lambda x: np.asarray(x))(1.0))
    assert isinstance(e, pyjax.errors.TracerArrayConversionError)
    _raise_both(lambda j, n: j.jit(lambda x: n.zeros(x))(1))
    _raise_both(lambda j, n: j.grad(lambda x: float(x))(1.0))
    _raise_both(lambda j, n: j.jit(lambda x: x.item())(1.0))
    _raise_both(lambda j, n: j.jit(lambda x: x.tolist())(n.ones(2)))


def test_item_assignment(backend):
    def assign(j, n):
        x = n.ones(3)
        x[0] = 2.0

    e = _raise_both(assign, ".at[")

    def assign_traced(j, n):
        def f(x):
            x[0] = 2.0
            return x

        return j.jit(f)(n.ones(3))

    _raise_both(assign_traced, ".at")
    assert "immutable" in str(e)


def test_shape_op_errors(backend):
    _raise_both(lambda j, n: n.zeros((2, -3)), "(2, -3)")
    _raise_both(lambda j, n: n.concatenate([n.ones((2, 2)), n.ones((3, 3))]), "concatenat")
    _raise_both(lambda j, n: n.transpose(n.ones((2, 3)), (0, 0)), "permutation")
    _raise_both(lambda j, n: n.sum(n.ones(3), axis=1), "axis 1", "out of bounds")
    _raise_both(lambda j, n: n.moveaxis(n.ones((2, 3)), 0, 5), "out of bounds")
    _raise_both(lambda j, n: n.squeeze(n.ones((2, 3)), 0))
    _raise_both(lambda j, n: n.stack([n.ones(2), n.ones(3)]))
    _raise_both(lambda j, n: n.split(n.ones(5), 2))
    _raise_both(lambda j, n: n.ones(3) + "a")
    _raise_both(lambda j, n: n.sin("a"))
    _raise_both(lambda j, n: n.add([1, 2], 1), "list")
    _raise_both(lambda j, n: n.array([[1, 2], [3]]))
    _raise_both(lambda j, n: n.zeros(3, dtype="complex_bogus"))
    _raise_both(lambda j, n: n.max(n.ones((0, 2)), axis=0), "zero-size")
    _raise_both(lambda j, n: n.argmax(n.ones(0)))
    _raise_both(lambda j, n: len(n.asarray(1.0)))
    _raise_both(lambda j, n: bool(n.ones(3)), "ambiguous")
    _raise_both(lambda j, n: hash(n.ones(3)), "unhashable")
    _raise_both(lambda j, n: n.ones(2).astype("bogus"))


def test_errors_module_classes() -> None:
    for name in (
        "ConcretizationTypeError",
        "TracerBoolConversionError",
        "TracerIntegerConversionError",
        "TracerArrayConversionError",
        "UnexpectedTracerError",
    ):
        cls = getattr(pyjax.errors, name)
        assert issubclass(cls, TypeError) == issubclass(getattr(jax.errors, name), TypeError)


_ARRAYLIKE_CALLS = [
    ("sum", lambda m, a: m.sum(a)),
    ("mean", lambda m, a: m.mean(a)),
    ("std", lambda m, a: m.std(a)),
    ("any", lambda m, a: m.any(a)),
    ("argmax", lambda m, a: m.argmax(a)),
    ("cumsum", lambda m, a: m.cumsum(a)),
    ("reshape", lambda m, a: m.reshape(a, (2, 2))),
    ("transpose", lambda m, a: m.transpose(a)),
    ("dot", lambda m, a: m.dot(m.ones((2, 2)), a)),
    ("matmul", lambda m, a: m.matmul(a, m.ones((2, 2)))),
    ("where", lambda m, a: m.where(a, 1.0, 2.0)),
    ("clip", lambda m, a: m.clip(a, 0.0, 1.0)),
    ("abs", lambda m, a: m.abs(a)),
    ("round", lambda m, a: m.round(a)),
    ("floor", lambda m, a: m.floor(a)),
    ("isnan", lambda m, a: m.isnan(a)),
    ("norm", lambda m, a: m.linalg.norm(a)),
    ("nansum", lambda m, a: m.nansum(a)),
    ("log10", lambda m, a: m.log10(a)),
    ("power", lambda m, a: m.power(a, 2.0)),
    ("erf", lambda m, a: (jax.scipy.special if m is jjnp else pyjax.scipy.special).erf(a)),
]


@pytest.mark.parametrize("name,call", _ARRAYLIKE_CALLS, ids=[n for n, _ in _ARRAYLIKE_CALLS])
def test_list_argument_raises_like_jax(name, call):
    """A Python list where an array is expected raises JAX's check_arraylike TypeError, word for word."""
    with pytest.raises(TypeError) as want:
        call(jjnp, [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError) as got:
        call(pjnp, [[1.0, 2.0], [3.0, 4.0]])
    assert str(got.value) == str(want.value)
