"""Indexing, gather/scatter, .at[] updates and index functions, checked against real JAX."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax import lax

X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) - 7.5


def _same(a, b, rtol=1e-6, atol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _conv(idx, mod):
    """Convert numpy arrays inside an index to `mod`'s arrays."""
    if isinstance(idx, tuple):
        return tuple(_conv(i, mod) for i in idx)
    if isinstance(idx, np.ndarray):
        return mod.asarray(idx)
    return idx


GET_CASES = [
    (0,),
    (-1,),
    (5,),
    (-9,),
    (slice(None), 1),
    (Ellipsis, 2),
    (None, 0, Ellipsis, None),
    (slice(None, None, -2),),
    (np.array([0, 1, 1]),),
    (np.array([-1, 0]),),
    (np.array([3, -7]),),
    (slice(None), np.array([[0, 2], [1, 1]])),
    (np.array([0, 1]), slice(None), np.array([1, 3])),
    (np.array([0, 1]), np.array([2, 0])),
    (slice(None), np.array([0, 2]), np.array([1, 3])),
    (1, np.array([0, 2]), slice(1, 3)),
    (slice(None), 0, np.array([1, 2])),
    (np.array(1), slice(None), np.array([1, 2])),
    (slice(None, None, -1), np.array([0, 2])),
    (slice(None), [0, 2], 1),
    (Ellipsis, np.array([[1], [3]])),
    (np.array([0, 1], dtype=np.uint8),),
    (None, np.array([1, 0]), None),
    (np.array([], dtype=np.int32),),
]
MASK_CASES = [
    (np.array([True, False]),),
    (X > 3,),
    (Ellipsis, np.array([True, False, True, False])),
    (True,),
    (False,),
    (None, False, 1),
    (np.array([True, True]), slice(1, None), np.array([0, 3])),
    (1, X[0] > 0),
]


@pytest.mark.parametrize("idx", GET_CASES + MASK_CASES, ids=str)
def test_getitem_matches_jax(idx, backend):
    _same(jnp.asarray(X)[_conv(idx, jnp)], jjnp.asarray(X)[_conv(idx, jjnp)])


@pytest.mark.parametrize("idx", GET_CASES, ids=str)
def test_getitem_jit_grad(idx, backend):
    def f(mod, idx):
        return lambda x: mod.sum(mod.sin(x[idx]) * 2.0)

    ours = pyjax.jit(f(jnp, _conv(idx, jnp)))(jnp.asarray(X))
    _same(ours, f(jjnp, _conv(idx, jjnp))(jjnp.asarray(X)), rtol=1e-5)
    g = pyjax.grad(f(jnp, _conv(idx, jnp)))(jnp.asarray(X))
    _same(g, jax.grad(f(jjnp, _conv(idx, jjnp)))(jjnp.asarray(X)), rtol=1e-5)
    gj = pyjax.jit(pyjax.grad(f(jnp, _conv(idx, jnp))))(jnp.asarray(X))
    _same(gj, jax.grad(f(jjnp, _conv(idx, jjnp)))(jjnp.asarray(X)), rtol=1e-5)


def test_traced_indices_under_jit_and_grad(backend):
    def f(mod):
        return lambda x, i, j: mod.sum(x[i, :, j] ** 2) + x[1, i[0], -1]

    i, j = np.array([1, 0, 1]), np.array([3, -1, 9])
    args = (X, i, j)
    _same(pyjax.jit(f(jnp))(*map(jnp.asarray, args)), jax.jit(f(jjnp))(*map(jjnp.asarray, args)), rtol=1e-5)
    _same(pyjax.grad(f(jnp))(*map(jnp.asarray, args)), jax.grad(f(jjnp))(*map(jjnp.asarray, args)), rtol=1e-5)


def test_scalar_tracer_index():
    def f(mod):
        return lambda x, i: x[i] * 2 + x[-i]

    for i in (0, 1, -1, 7):
        _same(pyjax.jit(f(jnp))(jnp.asarray(X), i), jax.jit(f(jjnp))(jjnp.asarray(X), i))
    g = pyjax.grad(lambda x, i: jnp.sum(x[i] ** 2))(jnp.asarray(X), 1)
    _same(g, jax.grad(lambda x, i: jjnp.sum(x[i] ** 2))(jjnp.asarray(X), 1))


def test_getitem_vmap(backend):
    idx = np.array([[0, 2], [1, 1], [2, 0]])
    xs = X[0]
    _same(
        pyjax.vmap(lambda r: r[jnp.asarray([3, 0, 3])])(jnp.asarray(xs)),
        jax.vmap(lambda r: r[jjnp.asarray([3, 0, 3])])(jjnp.asarray(xs)),
    )
    _same(
        pyjax.vmap(lambda i: jnp.asarray(xs)[:, i])(jnp.asarray(idx)),
        jax.vmap(lambda i: jjnp.asarray(xs)[:, i])(jjnp.asarray(idx)),
    )
    _same(
        pyjax.vmap(lambda r, i: r[i])(jnp.asarray(xs), jnp.asarray(idx[:, 0])),
        jax.vmap(lambda r, i: r[i])(jjnp.asarray(xs), jjnp.asarray(idx[:, 0])),
    )
    idx4 = np.array([[0, 2], [1, 1], [2, 0], [0, 0]])
    _same(
        pyjax.vmap(lambda r, i: r[i], in_axes=(1, 0))(jnp.asarray(xs), jnp.asarray(idx4)),
        jax.vmap(lambda r, i: r[i], in_axes=(1, 0))(jjnp.asarray(xs), jjnp.asarray(idx4)),
    )
    _same(
        pyjax.vmap(pyjax.grad(lambda r, i: jnp.sum(r[i] ** 2)))(jnp.asarray(xs), jnp.asarray(idx)),
        jax.vmap(jax.grad(lambda r, i: jjnp.sum(r[i] ** 2)))(jjnp.asarray(xs), jjnp.asarray(idx)),
    )


AT_CASES = [
    (1,),
    (-1,),
    (7,),
    (slice(None), 2),
    (slice(1, None), slice(None, None, 2)),
    (np.array([0, 1, 1, 0]),),
    (np.array([1, -1, 5]), slice(None), 0),
    (slice(None), np.array([[0, 2], [2, 2]])),
    (Ellipsis, np.array([3, 1])),
    (np.array([0, 1]), slice(None), np.array([1, 3])),
    (None, 1, np.array([0, 0]), slice(2, None)),
    (X > 2,),
    (np.array([True, False]), 2),
    (slice(None, None, -1), 1, slice(None, 3)),
]


@pytest.mark.parametrize("kind", ["set", "add", "multiply", "divide", "min", "max", "power", "subtract"])
@pytest.mark.parametrize("idx", AT_CASES, ids=str)
def test_at_updates_match_jax(idx, kind, backend):
    shape = jjnp.asarray(X)[_conv(idx, jjnp)].shape
    vals = (np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) % 5) * 0.5 + 0.25
    for v in (vals, 1.5):
        ours = getattr(jnp.asarray(X).at[_conv(idx, jnp)], kind)(jnp.asarray(v) if isinstance(v, np.ndarray) else v)
        ref = getattr(jjnp.asarray(X).at[_conv(idx, jjnp)], kind)(jjnp.asarray(v) if isinstance(v, np.ndarray) else v)
        _same(ours, ref, rtol=1e-5)


@pytest.mark.parametrize(
    "idx", [i for i in AT_CASES if not (isinstance(i[0], np.ndarray) and i[0].dtype == bool)], ids=str
)
def test_at_jit(idx, backend):
    def f(mod, idx):
        return lambda x, v: (
            x.at[idx].add(v).at[idx].max(v * 2) + x.at[idx].get(mode="fill", fill_value=-1.0)[..., None].sum()
        )

    ours = pyjax.jit(f(jnp, _conv(idx, jnp)))(jnp.asarray(X), 0.75)
    _same(ours, jax.jit(f(jjnp, _conv(idx, jjnp)))(jjnp.asarray(X), 0.75), rtol=1e-5)


def test_at_get_modes_and_dtypes():
    xi = np.arange(5, dtype=np.int32)
    i = np.array([1, 9, -1, -7])
    for arr in (np.arange(5.0, dtype=np.float32), xi, xi.astype(np.uint8), xi > 2):
        for mode, fv in (("fill", None), ("fill", 3), ("clip", None), (None, None)):
            _same(
                jnp.asarray(arr).at[jnp.asarray(i)].get(mode=mode, fill_value=fv),
                jjnp.asarray(arr).at[jjnp.asarray(i)].get(mode=mode, fill_value=fv),
            )
    # values are cast to the operand's dtype; divide of ints gives floats as in JAX
    _same(jnp.asarray(xi).at[1].set(2.7), jjnp.asarray(xi).at[1].set(2.7))
    _same(jnp.asarray(xi).at[jnp.asarray([1, 1])].add(2.7), jjnp.asarray(xi).at[jjnp.asarray([1, 1])].add(2.7))
    _same(jnp.asarray(xi).at[1].divide(2), jjnp.asarray(xi).at[1].divide(2))
    _same(
        jnp.asarray(xi).at[jnp.asarray([0, 9])].set(5, mode="clip"),
        jjnp.asarray(xi).at[jjnp.asarray([0, 9])].set(5, mode="clip"),
    )
    _same(jnp.asarray(X).at[0, 1].apply(jnp.sin), jjnp.asarray(X).at[0, 1].apply(jjnp.sin), rtol=1e-5)


@pytest.mark.parametrize("kind", ["set", "add", "min", "max", "multiply"])
def test_at_gradients(kind, backend):
    i = np.array([1, 1, 0, 2, 7])
    v0 = np.array([3.0, -1.0, 4.0, 100.0, 5.0], dtype=np.float32)
    x0 = np.array([1.0, 3.0, -2.0], dtype=np.float32)

    def f(mod, which):
        def fn(x, v):
            y = getattr(x.at[mod.asarray(i)], kind)(v) if which != "static" else getattr(x.at[1], kind)(v[0])
            return mod.sum(y * mod.arange(3.0) + y**2)

        return fn

    for which in ("array", "static"):
        argnums = (0,) if kind == "multiply" and which == "array" else (0, 1)
        ours = pyjax.grad(f(jnp, which), argnums)(jnp.asarray(x0), jnp.asarray(v0))
        ref = jax.grad(f(jjnp, which), argnums)(jjnp.asarray(x0), jjnp.asarray(v0))
        for a, b in zip(ours, ref):
            _same(a, b, rtol=1e-5)
        ours = pyjax.jit(pyjax.grad(f(jnp, which), argnums))(jnp.asarray(x0), jnp.asarray(v0))
        for a, b in zip(ours, ref):
            _same(a, b, rtol=1e-5)
        t = (np.ones(3, np.float32), np.full(5, 0.5, np.float32))
        if argnums == (0, 1):
            _, ours = pyjax.jvp(f(jnp, which), (jnp.asarray(x0), jnp.asarray(v0)), tuple(map(jnp.asarray, t)))
            _, ref = jax.jvp(f(jjnp, which), (jjnp.asarray(x0), jjnp.asarray(v0)), tuple(map(jjnp.asarray, t)))
            _same(ours, ref, rtol=1e-5)


def test_minmax_tie_gradients():
    x0 = jnp.asarray([0.0, 1.0, 2.0])
    ours = pyjax.grad(lambda y: jnp.sum(x0.at[jnp.asarray([1, 1])].max(y)))(jnp.asarray([3.0, 3.0]))
    xj = jjnp.asarray([0.0, 1.0, 2.0])
    _same(ours, jax.grad(lambda y: jjnp.sum(xj.at[jjnp.asarray([1, 1])].max(y)))(jjnp.asarray([3.0, 3.0])))
    ours = pyjax.grad(lambda y: jnp.sum(y.at[jnp.asarray([1, 1])].max(1.0)))(x0)
    _same(ours, jax.grad(lambda y: jjnp.sum(y.at[jjnp.asarray([1, 1])].max(1.0)))(xj))


def test_multiply_grad_needs_unique_indices():
    x = jnp.arange(5.0)
    with pytest.raises(NotImplementedError):
        pyjax.grad(lambda y: jnp.sum(x.at[jnp.asarray([1, 2])].multiply(y)))(jnp.asarray([2.0, 3.0]))
    g = pyjax.grad(lambda y: jnp.sum(x.at[jnp.asarray([1, 2])].multiply(y, unique_indices=True)))(
        jnp.asarray([2.0, 3.0])
    )
    _same(
        g,
        jax.grad(lambda y: jjnp.sum(jjnp.arange(5.0).at[jjnp.asarray([1, 2])].multiply(y, unique_indices=True)))(
            jjnp.asarray([2.0, 3.0])
        ),
    )


def test_at_vmap(backend):
    xs = jnp.asarray(X[0])
    i = jnp.asarray([2, 0, 1])
    cases = [
        (lambda r, i: r.at[i].set(9.0), (0, 0)),
        (lambda r, i: r.at[i].add(r[0]), (0, 0)),
        (lambda r, i: r.at[i].max(5.0), (None, 0)),
        (lambda r, i: r.at[jnp.asarray([1, 1])].add(r[2]), (0, None)),
        (lambda r, i: r.at[1:3].set(r[:2]), (1, None)),
    ]
    jcases = [
        lambda r, i: r.at[i].set(9.0),
        lambda r, i: r.at[i].add(r[0]),
        lambda r, i: r.at[i].max(5.0),
        lambda r, i: r.at[jjnp.asarray([1, 1])].add(r[2]),
        lambda r, i: r.at[1:3].set(r[:2]),
    ]
    for (f, dims), g in zip(cases, jcases):
        ours = pyjax.vmap(f, in_axes=dims)(xs, i)
        ref = jax.vmap(g, in_axes=dims)(jjnp.asarray(X[0]), jjnp.asarray([2, 0, 1]))
        _same(ours, ref)


def test_take(backend):
    m = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    mi = np.arange(6, dtype=np.int32).reshape(2, 3)
    idx = np.array([[0, 5], [-1, -4]])
    for arr in (m, mi):
        for axis in (None, 0, 1, -1):
            for mode in (None, "fill", "clip", "wrap"):
                _same(
                    jnp.take(jnp.asarray(arr), jnp.asarray(idx), axis=axis, mode=mode),
                    jjnp.take(jjnp.asarray(arr), jjnp.asarray(idx), axis=axis, mode=mode),
                )
    _same(
        jnp.take(jnp.asarray(m), jnp.asarray([0, 5]), axis=1, fill_value=7.0),
        jjnp.take(jjnp.asarray(m), jjnp.asarray([0, 5]), axis=1, fill_value=7.0),
    )
    _same(jnp.take(jnp.asarray(m), 1, axis=1), jjnp.take(jjnp.asarray(m), 1, axis=1))
    g = pyjax.grad(lambda a: jnp.sum(jnp.take(a, jnp.asarray(idx), axis=1) ** 2))(jnp.asarray(m))
    _same(g, jax.grad(lambda a: jjnp.sum(jjnp.take(a, jjnp.asarray(idx), axis=1) ** 2))(jjnp.asarray(m)))
    with pytest.raises(NotImplementedError):
        jnp.take(jnp.asarray(m), jnp.asarray([1]), mode="raise")
    with pytest.raises(ValueError):
        jnp.take(jnp.asarray(m), 1.0)


def test_take_along_and_put_along_axis(backend):
    a = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    cases = [
        (np.array([[[0], [3], [-1]], [[2], [1], [7]]]), 2),
        (np.zeros((1, 3, 2), np.int32), 2),
        (np.array([[[1, 0, 1, 5]]]), 0),
        (np.array([0, 5, 23, -2]), None),
    ]
    for idx, axis in cases:
        _same(
            jnp.take_along_axis(jnp.asarray(a), jnp.asarray(idx), axis),
            jjnp.take_along_axis(jjnp.asarray(a), jjnp.asarray(idx), axis),
        )
    idx = np.array([[[0], [3], [1]], [[2], [1], [0]]])
    g = pyjax.grad(lambda x: jnp.sum(jnp.take_along_axis(x, jnp.asarray(idx), 2) ** 2))(jnp.asarray(a))
    _same(g, jax.grad(lambda x: jjnp.sum(jjnp.take_along_axis(x, jjnp.asarray(idx), 2) ** 2))(jjnp.asarray(a)))
    _same(
        jnp.put_along_axis(jnp.asarray(a), jnp.asarray(idx), 9.0, axis=2, inplace=False),
        jjnp.put_along_axis(jjnp.asarray(a), jjnp.asarray(idx), 9.0, axis=2, inplace=False),
    )
    with pytest.raises(ValueError):
        jnp.put_along_axis(jnp.asarray(a), jnp.asarray(idx), 9.0, axis=2)
    with pytest.raises(ValueError):
        jnp.take_along_axis(jnp.asarray(a), jnp.asarray([0]), 0)
    with pytest.raises(TypeError):
        jnp.take_along_axis(jnp.asarray(a), jnp.asarray(idx, dtype=jnp.float32), 2)


def test_nonzero_family(backend):
    a = np.array([[0, 1, 0], [2, 0, 3]], dtype=np.int32)
    for fn in ("nonzero", "argwhere", "flatnonzero"):
        _same_tree(getattr(jnp, fn)(jnp.asarray(a)), getattr(jjnp, fn)(jjnp.asarray(a)))
        for size, fv in ((2, None), (5, -1), (5, None)):
            _same_tree(
                getattr(jnp, fn)(jnp.asarray(a), size=size, fill_value=fv),
                getattr(jjnp, fn)(jjnp.asarray(a), size=size, fill_value=fv),
            )
            _same_tree(
                pyjax.jit(lambda x, fn=fn, size=size, fv=fv: getattr(jnp, fn)(x, size=size, fill_value=fv))(
                    jnp.asarray(a)
                ),
                getattr(jjnp, fn)(jjnp.asarray(a), size=size, fill_value=fv),
            )
    _same_tree(
        jnp.nonzero(jnp.asarray(a), size=5, fill_value=(7, 8)), jjnp.nonzero(jjnp.asarray(a), size=5, fill_value=(7, 8))
    )
    _same_tree(jnp.where(jnp.asarray(a) > 1), jjnp.where(jjnp.asarray(a) > 1))
    with pytest.raises(pyjax.errors.ConcretizationTypeError if hasattr(pyjax, "errors") else TypeError):
        pyjax.jit(jnp.nonzero)(jnp.asarray(a))
    with pytest.raises(ValueError):
        jnp.nonzero(jnp.asarray(1))


def _same_tree(a, b):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    else:
        _same(a, b)


def test_compress_extract_choose():
    m = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for cond, axis in (([True, False, True], 1), ([True, False], 1), ([1, 0, 3], None), ([False, True], 0)):
        _same(
            jnp.compress(jnp.asarray(cond), jnp.asarray(m), axis=axis),
            jjnp.compress(jjnp.asarray(cond), jjnp.asarray(m), axis=axis),
        )
    _same(
        jnp.compress(jnp.asarray([True, False, True]), jnp.asarray(m), axis=1, size=3, fill_value=-1),
        jjnp.compress(jjnp.asarray([True, False, True]), jjnp.asarray(m), axis=1, size=3, fill_value=-1),
    )
    with pytest.raises(ValueError):
        jnp.compress(jnp.asarray([True, False, True, True]), jnp.asarray(m), axis=1)
    _same(jnp.extract(jnp.asarray(m) > 1, jnp.asarray(m)), jjnp.extract(jjnp.asarray(m) > 1, jjnp.asarray(m)))
    ch = [np.arange(3), 10 + np.arange(3), 20 + np.arange(3)]
    _same(
        jnp.choose(jnp.asarray([0, 1, 2]), [jnp.asarray(c) for c in ch]),
        jjnp.choose(jjnp.asarray([0, 1, 2]), [jjnp.asarray(c) for c in ch]),
    )
    for mode in ("clip", "wrap"):
        _same(
            jnp.choose(jnp.asarray([0, 4, -1]), [jnp.asarray(c) for c in ch], mode=mode),
            jjnp.choose(jjnp.asarray([0, 4, -1]), [jjnp.asarray(c) for c in ch], mode=mode),
        )
    with pytest.raises(ValueError):
        jnp.choose(jnp.asarray([0, 5]), [jnp.asarray(c[:2]) for c in ch])


def test_index_constructors():
    _same_tree(
        jnp.ix_(jnp.asarray([0, 1]), jnp.asarray([2, 0, 1])), jjnp.ix_(jjnp.asarray([0, 1]), jjnp.asarray([2, 0, 1]))
    )
    m = np.arange(12.0).reshape(3, 4)
    _same(
        jnp.asarray(m)[jnp.ix_(jnp.asarray([0, 2]), jnp.asarray([3, 1]))],
        jjnp.asarray(m)[jjnp.ix_(jjnp.asarray([0, 2]), jjnp.asarray([3, 1]))],
    )
    with pytest.raises(NotImplementedError):
        jnp.ix_(jnp.asarray([True, False]))
    _same_tree(
        jnp.unravel_index(jnp.asarray([22, 41, -1, -50]), (7, 6)),
        jjnp.unravel_index(jjnp.asarray([22, 41, -1, -50]), (7, 6)),
    )
    _same_tree(jnp.unravel_index(3, (7, 6)), jjnp.unravel_index(3, (7, 6)))
    mi = (np.array([1, 9]), np.array([2, -1]))
    for mode in ("clip", "wrap"):
        _same(
            jnp.ravel_multi_index(tuple(map(jnp.asarray, mi)), (7, 6), mode=mode),
            jjnp.ravel_multi_index(tuple(map(jjnp.asarray, mi)), (7, 6), mode=mode),
        )
    _same(
        jnp.ravel_multi_index((jnp.asarray([1, 2]), jnp.asarray([3, 0])), (7, 6), order="F"),
        jjnp.ravel_multi_index((jjnp.asarray([1, 2]), jjnp.asarray([3, 0])), (7, 6), order="F"),
    )
    with pytest.raises(ValueError):
        jnp.ravel_multi_index(tuple(map(jnp.asarray, mi)), (7, 6))
    _same(jnp.indices((2, 3)), jjnp.indices((2, 3)))
    _same_tree(jnp.indices((2, 3), sparse=True), jjnp.indices((2, 3), sparse=True))
    for fn, args in (
        ("tril_indices", (3, -1, 4)),
        ("triu_indices", (4, 1)),
        ("diag_indices", (3, 3)),
        ("tril_indices", (4,)),
        ("triu_indices", (3, 0, 5)),
    ):
        _same_tree(getattr(jnp, fn)(*args), getattr(jjnp, fn)(*args))
    a = np.ones((3, 3))
    for fn in ("tril_indices_from", "triu_indices_from", "diag_indices_from"):
        _same_tree(getattr(jnp, fn)(jnp.asarray(a)), getattr(jjnp, fn)(jjnp.asarray(a)))
    _same_tree(jnp.mask_indices(3, jnp.triu, 1), jjnp.mask_indices(3, jjnp.triu, 1))


def test_lax_dynamic_slicing(backend):
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    for starts in ((1, 2), (-1, 0), (3, 4), (-9, 7)):
        _same(lax.dynamic_slice(jnp.asarray(x), starts, (2, 3)), jax.lax.dynamic_slice(jjnp.asarray(x), starts, (2, 3)))
        _same(
            pyjax.jit(lambda x, s: lax.dynamic_slice(x, s, (2, 3)))(jnp.asarray(x), starts),
            jax.lax.dynamic_slice(jjnp.asarray(x), starts, (2, 3)),
        )
        u = np.full((2, 2), -1.0, np.float32)
        _same(
            lax.dynamic_update_slice(jnp.asarray(x), jnp.asarray(u), starts),
            jax.lax.dynamic_update_slice(jjnp.asarray(x), jjnp.asarray(u), starts),
        )
        _same(
            pyjax.jit(lambda x, u, s: lax.dynamic_update_slice(x, u, s))(jnp.asarray(x), jnp.asarray(u), starts),
            jax.lax.dynamic_update_slice(jjnp.asarray(x), jjnp.asarray(u), starts),
        )
    _same(
        lax.dynamic_slice(jnp.asarray(x), jnp.asarray([1, 2]), (2, 2)),
        jax.lax.dynamic_slice(jjnp.asarray(x), jjnp.asarray([1, 2]), (2, 2)),
    )

    def f(mod, lx):
        def fn(x, u, s):
            y = lx.dynamic_update_slice(x, u * 3.0, (s, 1))
            return mod.sum(lx.dynamic_slice(y, (1, s), (2, 3)) ** 2) + mod.sum(y)

        return fn

    u = np.ones((2, 2), np.float32)
    for s in (0, 2, 9):
        ours = pyjax.grad(f(jnp, lax), (0, 1))(jnp.asarray(x), jnp.asarray(u), s)
        ref = jax.grad(f(jjnp, jax.lax), (0, 1))(jjnp.asarray(x), jjnp.asarray(u), s)
        _same_tree(tuple(ours), tuple(ref))
        ours = pyjax.jit(pyjax.grad(f(jnp, lax), (0, 1)))(jnp.asarray(x), jnp.asarray(u), s)
        _same_tree(tuple(ours), tuple(ref))
    ss = np.array([0, 3, -1, 7])
    _same(
        pyjax.vmap(lambda s: lax.dynamic_slice(jnp.asarray(x), (s, s), (2, 2)))(jnp.asarray(ss)),
        jax.vmap(lambda s: jax.lax.dynamic_slice(jjnp.asarray(x), (s, s), (2, 2)))(jjnp.asarray(ss)),
    )
    _same(
        pyjax.vmap(lambda r, s: lax.dynamic_slice(r, (s,), (2,)))(jnp.asarray(x), jnp.asarray(ss)),
        jax.vmap(lambda r, s: jax.lax.dynamic_slice(r, (s,), (2,)))(jjnp.asarray(x), jjnp.asarray(ss)),
    )
    _same(
        pyjax.vmap(lambda r: lax.dynamic_slice(r, (1,), (2,)))(jnp.asarray(x)),
        jax.vmap(lambda r: jax.lax.dynamic_slice(r, (1,), (2,)))(jjnp.asarray(x)),
    )
    _same(
        pyjax.vmap(lambda r, s: lax.dynamic_update_slice(r, jnp.asarray([7.0, 8.0]), (s,)))(
            jnp.asarray(x), jnp.asarray(ss)
        ),
        jax.vmap(lambda r, s: jax.lax.dynamic_update_slice(r, jjnp.asarray([7.0, 8.0]), (s,)))(
            jjnp.asarray(x), jjnp.asarray(ss)
        ),
    )
    _same(
        pyjax.vmap(lambda r: lax.dynamic_update_slice(r, r[:2] * 2, (2,)))(jnp.asarray(x)),
        jax.vmap(lambda r: jax.lax.dynamic_update_slice(r, r[:2] * 2, (2,)))(jjnp.asarray(x)),
    )


def test_lax_in_dim_helpers():
    x = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    a, b = jnp.asarray(x), jjnp.asarray(x)
    _same(lax.dynamic_slice_in_dim(a, 3, 2, axis=1), jax.lax.dynamic_slice_in_dim(b, 3, 2, axis=1))
    _same(lax.dynamic_index_in_dim(a, -1, 0, keepdims=False), jax.lax.dynamic_index_in_dim(b, -1, 0, keepdims=False))
    _same(lax.dynamic_index_in_dim(a, 2, 1), jax.lax.dynamic_index_in_dim(b, 2, 1))
    _same(
        lax.dynamic_update_index_in_dim(a, jnp.zeros(5), 2, 0),
        jax.lax.dynamic_update_index_in_dim(b, jjnp.zeros(5), 2, 0),
    )
    _same(
        lax.dynamic_update_slice_in_dim(a, jnp.zeros((4, 2)), 4, 1),
        jax.lax.dynamic_update_slice_in_dim(b, jjnp.zeros((4, 2)), 4, 1),
    )
    _same(lax.index_in_dim(a, -1, 1, keepdims=False), jax.lax.index_in_dim(b, -1, 1, keepdims=False))
    _same(lax.slice_in_dim(a, -3, None, 2, axis=1), jax.lax.slice_in_dim(b, -3, None, 2, axis=1))
    with pytest.raises(IndexError):
        lax.index_in_dim(a, 7)
    with pytest.raises(TypeError):
        lax.dynamic_slice(a, (1, 1), (7, 1))
    with pytest.raises(TypeError):
        lax.dynamic_update_slice(a, jnp.ones((2, 2), dtype=jnp.int32), (1, 1))


def test_index_errors():
    x = jnp.asarray(X)
    m = jnp.ones((2, 3))
    with pytest.raises(IndexError):
        m[0, 0, 0]
    with pytest.raises(IndexError):
        m[jnp.asarray([0]), jnp.asarray([0]), jnp.asarray([0])]
    with pytest.raises(IndexError):
        m[..., 0, ...]
    with pytest.raises(TypeError):
        m[1.5]
    with pytest.raises(TypeError):
        m[jnp.asarray([1.0])]
    with pytest.raises(TypeError):
        m["a"]
    with pytest.raises(TypeError):
        m[[0, 1]]
    with pytest.raises(TypeError):
        m.at[jnp.asarray([1.0])].set(1.0)
    with pytest.raises(IndexError):
        m[jnp.asarray([True, False, True])]
    with pytest.raises(IndexError):
        pyjax.jit(lambda x: x[x > 2])(x)
    with pytest.raises(IndexError):
        pyjax.jit(lambda x: x.at[x > 2].set(0.0))(x)
    with pytest.raises(ValueError):
        m[jnp.asarray([0, 1]), jnp.asarray([0, 1, 2])]
    with pytest.raises(ValueError):
        m.at[0].set(jnp.ones((2, 3)))
    with pytest.raises(TypeError):
        m[0] = 1.0
    with pytest.raises(IndexError):
        pyjax.jit(lambda x, i: x[i : i + 1])(x, 1)
    # the error under jit is JAX's class (an IndexError subclass)
    from pyjax.core.errors import NonConcreteBooleanIndexError

    with pytest.raises(NonConcreteBooleanIndexError):
        pyjax.jit(lambda x: x[x > 2])(x)


def test_boolean_mask_under_grad_is_concrete():
    f = lambda mod: lambda x: mod.sum(x[x > 0] ** 2)  # noqa: E731
    _same(pyjax.grad(f(jnp))(jnp.asarray(X)), jax.grad(f(jjnp))(jjnp.asarray(X)))


def test_scatter_routine_python_matches_numpy():
    from pyjax.backends.cpu import routines_indexing as ri
    from pyjax.compiler.ir import Routine
    from pyjax.core import dtypes
    from pyjax.core.core import ShapedArray

    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 3, 2)).astype(np.float32)
    ind = np.array([[1, 2], [1, 2], [5, 0], [-1, 1], [0, 0]], dtype=np.int32)
    u = rng.normal(size=(5, 3)).astype(np.float32)
    for kind in ("set", "add", "mul", "min", "max"):
        r = Routine(
            "scatter",
            {"axes": (0, 2), "kind": kind},
            (
                ShapedArray(x.shape, dtypes.float32),
                ShapedArray(ind.shape, dtypes.int32),
                ShapedArray(u.shape, dtypes.float32),
            ),
            (ShapedArray(x.shape, dtypes.float32),),
        )
        (a,) = ri._scatter_numpy(r, [x, ind, u])
        (b,) = ri._scatter_python(r, [x.reshape(-1).tolist(), ind.reshape(-1).tolist(), u.reshape(-1).tolist()])
        np.testing.assert_allclose(a.reshape(-1), np.asarray(b, np.float32), rtol=1e-6)
    xi = np.array([2**31 - 1, 5], dtype=np.int32)
    r = Routine(
        "scatter",
        {"axes": (0,), "kind": "add"},
        (ShapedArray((2,), dtypes.int32), ShapedArray((1, 1), dtypes.int32), ShapedArray((1,), dtypes.int32)),
        (ShapedArray((2,), dtypes.int32),),
    )
    (b,) = ri._scatter_python(r, [xi.tolist(), [0], [1]])
    assert b == [-(2**31), 5]


NO_NUMPY_CASES = {
    "getitem": "(lambda x: [x[jnp.array([2, -1, 0, 2]), 1:], x[:, jnp.array([[0], [3]])], x[1, jnp.array(2)], "
    "x[x > 3]])(jnp.arange(12.0).reshape(3, 4))",
    "at": "(lambda x: [x.at[jnp.array([2, -1, 0, 2, 9])].add(1.0), x.at[:, 1].set(5.0), "
    "x.at[jnp.array([0, 0])].max(7.0), x.at[1:, ::2].multiply(2.0)])(jnp.arange(12.0).reshape(3, 4))",
    "take": "[jnp.take(jnp.arange(6), jnp.array([0, 9, -1])), jnp.take_along_axis(jnp.arange(6.0).reshape(2, 3), "
    "jnp.array([[2], [0]]), 1), jnp.nonzero(jnp.array([0, 3, 0, 1]), size=3)]",
    "dynamic": "[jax.jit(lambda x, s: jax.lax.dynamic_update_slice(x, x[:1, :2] * 10, (s, s)))"
    "(jnp.arange(12.0).reshape(3, 4), 2), jax.jit(lambda x, s: jax.lax.dynamic_slice(x, (s, 1), (2, 2)))"
    "(jnp.arange(12.0).reshape(3, 4), -1)]",
    "grad": "jax.grad(lambda x: jnp.sum(x[jnp.array([0, 0, 2])] ** 2) + jnp.sum(x.at[1].set(3.0)))(jnp.arange(4.0))",
}


def test_without_numpy_matches_jax():
    import json
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = f"ROOT = {root!r}\nCASES = {NO_NUMPY_CASES!r}\n" + (
        "import json, sys\n"
        "for b in ('numpy', 'ml_dtypes', 'jax', 'jaxlib', 'scipy'):\n    sys.modules[b] = None\n"
        "sys.path.insert(0, ROOT)\nimport pyjax as jax\nimport pyjax.numpy as jnp\n"
        "assert jax.devices()[0].backend.use_numpy is False\n"
        "out = {k: [l.tolist() for l in jax.tree_util.tree_leaves(eval(v))] for k, v in CASES.items()}\n"
        "print('RESULT' + json.dumps(out))\n"
    )
    env = dict(os.environ, PYJAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(next(ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT"))[len("RESULT") :])
    for name, src in NO_NUMPY_CASES.items():
        ref = jax.tree_util.tree_leaves(eval(src, {"jax": jax, "jnp": jjnp}))
        assert len(got[name]) == len(ref), name
        for g, r in zip(got[name], ref):
            np.testing.assert_allclose(np.asarray(g, dtype=r.dtype), np.asarray(r), rtol=1e-6, err_msg=name)


def test_nonzero_traced_fill_value():
    """jnp.nonzero / argwhere / flatnonzero under jit with a traced fill_value (len(x), x[0])."""
    import jax

    import pyjax

    def run(lib):
        x = lib.numpy.array([0, 3, 0, 5, 1])
        f = lib.jit(
            lambda x: (
                lib.numpy.nonzero(x, size=5, fill_value=len(x)),
                lib.numpy.nonzero(x, size=4, fill_value=x[1]),
                lib.numpy.flatnonzero(x, size=5, fill_value=x[3]),
            )
        )
        return [np.asarray(v) for v in jax.tree_util.tree_leaves(f(x))]

    for a, b in zip(run(pyjax), run(jax)):
        np.testing.assert_array_equal(a, b)
