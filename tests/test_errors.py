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


def _nn(m):
    return jax.nn if m is jjnp else pyjax.nn


def _special(m):
    return jax.scipy.special if m is jjnp else pyjax.scipy.special


def _x(m):
    return m.ones((2, 2))


# One call per function of the arraylike sweep (a list where JAX's check_arraylike refuses it), with the
# list first or, where JAX checks later arguments too, second; JAX's message names the function as JAX
# does (jnp.linalg.<name>, or another function it calls first: empty_like -> ones_like, vecmat -> matvec).
_ARRAYLIKE_CALLS += [
    (f"{n}[{i}]", c)
    for i, (n, c) in enumerate(
        [
            # shape and manipulation
            ("broadcast_to", lambda m, a: m.broadcast_to(a, (2, 2))),
            ("broadcast_arrays", lambda m, a: m.broadcast_arrays(_x(m), a)),
            ("expand_dims", lambda m, a: m.expand_dims(a, 0)),
            ("squeeze", lambda m, a: m.squeeze(a)),
            ("atleast_1d", lambda m, a: m.atleast_1d(_x(m), a)),
            ("atleast_2d", lambda m, a: m.atleast_2d(a)),
            ("atleast_3d", lambda m, a: m.atleast_3d(a)),
            ("concatenate", lambda m, a: m.concatenate([_x(m), a])),
            ("concat", lambda m, a: m.concat(a)),
            ("stack", lambda m, a: m.stack([a, _x(m)])),
            ("vstack", lambda m, a: m.vstack(a)),
            ("hstack", lambda m, a: m.hstack([_x(m), a])),
            ("dstack", lambda m, a: m.dstack(a)),
            ("column_stack", lambda m, a: m.column_stack(a)),
            ("split", lambda m, a: m.split(a, 2)),
            ("array_split", lambda m, a: m.array_split(a, 2)),
            ("hsplit", lambda m, a: m.hsplit(a, 2)),
            ("vsplit", lambda m, a: m.vsplit(a, 2)),
            ("dsplit", lambda m, a: m.dsplit(a, 2)),
            ("unstack", lambda m, a: m.unstack(a)),
            ("tile", lambda m, a: m.tile(a, 2)),
            ("flip", lambda m, a: m.flip(a)),
            ("fliplr", lambda m, a: m.fliplr(a)),
            ("flipud", lambda m, a: m.flipud(a)),
            ("roll", lambda m, a: m.roll(a, 1)),
            ("rot90", lambda m, a: m.rot90(a)),
            ("pad", lambda m, a: m.pad(a, 1)),
            ("tril", lambda m, a: m.tril(a)),
            ("triu", lambda m, a: m.triu(a)),
            ("diag", lambda m, a: m.diag(a)),
            ("diagonal", lambda m, a: m.diagonal(a)),
            ("diagflat", lambda m, a: m.diagflat(a)),
            ("trace", lambda m, a: m.trace(a)),
            ("matrix_transpose", lambda m, a: m.matrix_transpose(a)),
            ("permute_dims", lambda m, a: m.permute_dims(a, (1, 0))),
            ("append", lambda m, a: m.append(_x(m), a)),
            ("append axis", lambda m, a: m.append(_x(m), a, axis=0)),
            ("insert", lambda m, a: m.insert(m.ones(2), 0, [1.0])),
            ("delete", lambda m, a: m.delete(m.ones(2), [0])),
            ("astype", lambda m, a: m.astype(a, "float32")),
            # creation
            ("zeros_like", lambda m, a: m.zeros_like(a)),
            ("ones_like", lambda m, a: m.ones_like(a)),
            ("empty_like", lambda m, a: m.empty_like(a)),
            ("full_like", lambda m, a: m.full_like(_x(m), a)),
            ("full", lambda m, a: m.full((2, 2), a)),
            ("copy", lambda m, a: m.copy(a)),
            ("linspace", lambda m, a: m.linspace(0.0, a)),
            ("meshgrid", lambda m, a: m.meshgrid(m.ones(2), [1.0, 2.0])),
            ("arange", lambda m, a: m.arange(a)),
            # indexing
            ("take", lambda m, a: m.take(_x(m), [0, 1])),
            ("take_along_axis", lambda m, a: m.take_along_axis(_x(m), [[0]], axis=0)),
            ("nonzero", lambda m, a: m.nonzero(a)),
            ("flatnonzero", lambda m, a: m.flatnonzero(a)),
            ("argwhere", lambda m, a: m.argwhere(a)),
            ("compress", lambda m, a: m.compress(m.ones(2, bool), a)),
            ("extract", lambda m, a: m.extract(a, _x(m))),
            ("choose", lambda m, a: m.choose(m.zeros(2, int), a)),
            ("ix_", lambda m, a: m.ix_([0, 1])),
            ("unravel_index", lambda m, a: m.unravel_index([1, 2], (2, 2))),
            ("diag_indices_from", lambda m, a: m.diag_indices_from(a)),
            ("tril_indices_from", lambda m, a: m.tril_indices_from(a)),
            ("triu_indices_from", lambda m, a: m.triu_indices_from(a)),
            ("where xy", lambda m, a: m.where(_x(m) > 0, a, 0.0)),
            ("select", lambda m, a: m.select([_x(m) > 0], [a])),
            # set operations, sorting, statistics
            ("unique_values", lambda m, a: m.unique_values(a)),
            ("unique_counts", lambda m, a: m.unique_counts(a)),
            ("unique_inverse", lambda m, a: m.unique_inverse(a)),
            ("unique_all", lambda m, a: m.unique_all(a)),
            ("union1d", lambda m, a: m.union1d(_x(m), a)),
            ("intersect1d", lambda m, a: m.intersect1d(a, _x(m))),
            ("setdiff1d", lambda m, a: m.setdiff1d(_x(m), a)),
            ("setxor1d", lambda m, a: m.setxor1d(a, _x(m))),
            ("sort_complex", lambda m, a: m.sort_complex(a)),
            ("searchsorted", lambda m, a: m.searchsorted(m.ones(2), a)),
            ("digitize", lambda m, a: m.digitize(m.ones(2), a)),
            ("percentile", lambda m, a: m.percentile(_x(m), a)),
            ("nanquantile", lambda m, a: m.nanquantile(_x(m), a)),
            ("ptp", lambda m, a: m.ptp(a)),
            ("nanstd", lambda m, a: m.nanstd(a)),
            ("nancumsum", lambda m, a: m.nancumsum(a)),
            ("nancumprod", lambda m, a: m.nancumprod(a)),
            ("allclose", lambda m, a: m.allclose(_x(m), a)),
            ("cov", lambda m, a: m.cov(_x(m), a)),
            ("corrcoef", lambda m, a: m.corrcoef(_x(m), a)),
            ("histogram", lambda m, a: m.histogram(m.ones(2), [0.0, 1.0])),
            ("histogram_bin_edges", lambda m, a: m.histogram_bin_edges(m.ones(2), [0.0, 1.0])),
            ("histogram2d", lambda m, a: m.histogram2d(m.ones(2), [1.0, 2.0])),
            ("histogramdd", lambda m, a: m.histogramdd(a)),
            ("trapezoid", lambda m, a: m.trapezoid(m.ones(2), [1.0, 2.0])),
            # elementwise
            ("acos", lambda m, a: m.acos(a)),
            ("atanh", lambda m, a: m.atanh(a)),
            ("atan2", lambda m, a: m.atan2(_x(m), a)),
            ("angle", lambda m, a: m.angle(a)),
            ("conj", lambda m, a: m.conj(a)),
            ("real", lambda m, a: m.real(a)),
            ("imag", lambda m, a: m.imag(a)),
            ("iscomplex", lambda m, a: m.iscomplex(a)),
            ("isreal", lambda m, a: m.isreal(a)),
            ("i0", lambda m, a: m.i0(a)),
            ("nan_to_num", lambda m, a: m.nan_to_num(a)),
            ("logical_not", lambda m, a: m.logical_not(a)),
            ("logical_and", lambda m, a: m.logical_and(_x(m), a)),
            ("bitwise_and", lambda m, a: m.bitwise_and(a, 1)),
            ("bitwise_invert", lambda m, a: m.bitwise_invert(a)),
            ("invert", lambda m, a: m.invert(a)),
            ("bitwise_left_shift", lambda m, a: m.bitwise_left_shift(a, 1)),
            ("divide", lambda m, a: m.divide(_x(m), a)),
            ("mod", lambda m, a: m.mod(a, 2.0)),
            ("hypot", lambda m, a: m.hypot(_x(m), a)),
            ("divmod", lambda m, a: m.divmod(_x(m), a)),
            ("fmax", lambda m, a: m.fmax(a, _x(m))),
            ("fmin", lambda m, a: m.fmin(_x(m), a)),
            ("packbits", lambda m, a: m.packbits(a)),
            ("unpackbits", lambda m, a: m.unpackbits(a)),
            # polynomials and products
            ("poly", lambda m, a: m.poly(a)),
            ("roots", lambda m, a: m.roots(a)),
            ("polydiv", lambda m, a: m.polydiv(m.ones(2), a)),
            ("matvec", lambda m, a: m.matvec(_x(m), a)),
            ("vecmat", lambda m, a: m.vecmat(a, _x(m))),
            ("vecdot", lambda m, a: m.vecdot(_x(m), a)),
            ("vdot", lambda m, a: m.vdot(_x(m), a)),
            ("inner", lambda m, a: m.inner(a, _x(m))),
            ("outer", lambda m, a: m.outer(_x(m), a)),
            ("tensordot", lambda m, a: m.tensordot(a, _x(m))),
            ("kron", lambda m, a: m.kron(_x(m), a)),
            ("cross", lambda m, a: m.cross(a, _x(m))),
            # jnp.linalg (most named jnp.linalg.<name>; cond, tensorinv and tensorsolve plainly)
            ("linalg.cholesky", lambda m, a: m.linalg.cholesky(a)),
            ("linalg.cond", lambda m, a: m.linalg.cond(a)),
            ("linalg.cross", lambda m, a: m.linalg.cross(m.ones(3), a)),
            ("linalg.det", lambda m, a: m.linalg.det(a)),
            ("linalg.diagonal", lambda m, a: m.linalg.diagonal(a)),
            ("linalg.eig", lambda m, a: m.linalg.eig(a)),
            ("linalg.eigh", lambda m, a: m.linalg.eigh(a)),
            ("linalg.eigvals", lambda m, a: m.linalg.eigvals(a)),
            ("linalg.eigvalsh", lambda m, a: m.linalg.eigvalsh(a)),
            ("linalg.inv", lambda m, a: m.linalg.inv(a)),
            ("linalg.lstsq", lambda m, a: m.linalg.lstsq(_x(m), a)),
            ("linalg.matmul", lambda m, a: m.linalg.matmul(_x(m), a)),
            ("linalg.matrix_norm", lambda m, a: m.linalg.matrix_norm(a)),
            ("linalg.matrix_power", lambda m, a: m.linalg.matrix_power(a, 2)),
            ("linalg.matrix_rank", lambda m, a: m.linalg.matrix_rank(a)),
            ("linalg.matrix_transpose", lambda m, a: m.linalg.matrix_transpose(a)),
            ("linalg.multi_dot", lambda m, a: m.linalg.multi_dot([_x(m), a])),
            ("linalg.outer", lambda m, a: m.linalg.outer(a, m.ones(2))),
            ("linalg.pinv", lambda m, a: m.linalg.pinv(a)),
            ("linalg.qr", lambda m, a: m.linalg.qr(a)),
            ("linalg.slogdet", lambda m, a: m.linalg.slogdet(a)),
            ("linalg.solve", lambda m, a: m.linalg.solve(_x(m), a)),
            ("linalg.svd", lambda m, a: m.linalg.svd(a)),
            ("linalg.svdvals", lambda m, a: m.linalg.svdvals(a)),
            ("linalg.tensordot", lambda m, a: m.linalg.tensordot(_x(m), a)),
            ("linalg.tensorinv", lambda m, a: m.linalg.tensorinv(a)),
            ("linalg.tensorsolve", lambda m, a: m.linalg.tensorsolve(_x(m), a)),
            ("linalg.trace", lambda m, a: m.linalg.trace(a)),
            ("linalg.vecdot", lambda m, a: m.linalg.vecdot(a, _x(m))),
            ("linalg.vector_norm", lambda m, a: m.linalg.vector_norm(a)),
            # fft
            ("fft.fft", lambda m, a: m.fft.fft(a)),
            ("fft.hfft", lambda m, a: m.fft.hfft(a)),
            ("fft.fftshift", lambda m, a: m.fft.fftshift(a)),
            ("fft.ifftshift", lambda m, a: m.fft.ifftshift(a)),
            # jax.nn and jax.scipy.special
            *[
                (f"nn.{f}", lambda m, a, f=f: getattr(_nn(m), f)(a))
                for f in (
                    "elu gelu glu hard_silu hard_swish hard_tanh identity leaky_relu log1mexp log_sigmoid "
                    "log_softmax mish selu silu soft_sign softmax sparse_plus squareplus standardize swish"
                ).split()
            ],
            ("nn.squareplus b", lambda m, a: _nn(m).squareplus(_x(m), a)),
            ("special.softmax", lambda m, a: _special(m).softmax(a)),
            ("special.log_softmax", lambda m, a: _special(m).log_softmax(a)),
            ("special.logsumexp", lambda m, a: _special(m).logsumexp(a)),
            ("special.wofz", lambda m, a: _special(m).wofz(a)),
        ]
    )
]


@pytest.mark.parametrize("name,call", _ARRAYLIKE_CALLS, ids=[n for n, _ in _ARRAYLIKE_CALLS])
def test_list_argument_raises_like_jax(name, call):
    """A Python list where an array is expected raises JAX's check_arraylike TypeError, word for word."""
    with pytest.raises(TypeError) as want:
        call(jjnp, [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError) as got:
        call(pjnp, [[1.0, 2.0], [3.0, 4.0]])
    assert str(got.value) == str(want.value)
