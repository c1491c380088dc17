"""pyjax.experimental.sparse.transform: sparsify, which runs a function written for dense arrays on BCOO inputs.

The function is traced to a jaxpr with dense stand-ins for the sparse arguments; the jaxpr is then evaluated
with each equation that meets a sparse value sent to the sparse rule of its primitive (a table by primitive
name). Equations without sparse inputs bind as usual, so enclosing jit/grad/vmap apply. The BCOO operators
(``@``, ``*``, ``+``, ``-``, ``sum``, ``reshape``, indexing, ...) are this transform applied to jax.numpy, as
in JAX.
"""

from __future__ import annotations

import functools

import pyjax.numpy as jnp
from pyjax import lax
from pyjax.api import ShapeDtypeStruct, make_jaxpr
from pyjax.core.core import ClosedJaxpr, Literal, bind
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.experimental.sparse._base import JAXSparse
from pyjax.experimental.sparse.api import TODENSE_NAME
from pyjax.experimental.sparse.bcoo import (
    BCOO,
    bcoo_broadcast_in_dim,
    bcoo_concatenate,
    bcoo_dot_general,
    bcoo_dynamic_slice,
    bcoo_extract,
    bcoo_multiply_dense,
    bcoo_multiply_sparse,
    bcoo_reduce_sum,
    bcoo_reshape,
    bcoo_rev,
    bcoo_slice,
    bcoo_squeeze,
    bcoo_sum_duplicates,
    bcoo_take,
    bcoo_transpose,
)
from pyjax.experimental.sparse.bcsr import BCSR

__all__ = ["bcoo_gather", "sparsify"]

_is_sparse = lambda x: isinstance(x, JAXSparse)  # noqa: E731


def _as_bcoo(x):
    return x.to_bcoo() if isinstance(x, BCSR) else x


def sparsify(f, use_tracer: bool = False):
    """f(*args) where args may hold BCOO (or BCSR) arrays: the result is sparse where the sparse rules keep
    it sparse (elementwise ops, dot_general with two sparse operands, reductions, reshapes, ...)."""

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        leaves, tree = tree_flatten((args, kwargs), is_leaf=_is_sparse)
        leaves = [_as_bcoo(x) for x in leaves]
        avals = [ShapeDtypeStruct(x.shape, x.dtype) if _is_sparse(x) else x for x in leaves]

        def flat(*xs):
            a, k = tree_unflatten(tree, list(xs))
            return f(*a, **k)

        closed, out_shape = make_jaxpr(flat, return_shape=True)(*avals)
        outs = _eval(closed.jaxpr, [*closed.consts, *(_own_ref(x) if isinstance(x, BCOO) else x for x in leaves)])
        return tree_unflatten(tree_flatten(out_shape)[1], outs)

    return wrapped


def _eval(jaxpr, args):
    env = dict(zip(jaxpr.in_binders, args))

    def read(v):
        return v.val if type(v) is Literal else env[v]

    for eqn in jaxpr.eqns:
        ins = [read(v) for v in eqn.inputs]
        if any(isinstance(x, BCOO) for x in ins):
            rule = _RULES.get(eqn.primitive.name)
            if rule is None:
                raise NotImplementedError(f"sparse rule for {eqn.primitive.name} is not implemented.")
            outs = rule(*ins, **eqn.params)
            for o in outs:  # a new sparse value has a new sparsity pattern
                if isinstance(o, BCOO) and getattr(o, "_pattern", None) is None:
                    o._pattern = object()
        else:
            outs = bind(eqn.primitive, *ins, **eqn.params)
            outs = outs if eqn.primitive.multiple_results else [outs]
        env.update(zip(eqn.out_binders, outs))
    return [read(v) for v in jaxpr.outs]


def _call(*args, **params):
    """pjit / custom_jvp_call / custom_vjp_call: evaluate the inner jaxpr sparsely (the custom rule is dropped:
    derivatives of the result come from the sparse operations themselves)."""
    if params.get("name") == TODENSE_NAME:
        return [x.todense() if isinstance(x, BCOO) else x for x in args]
    inner = params.get("jaxpr", params.get("call_jaxpr"))
    if isinstance(inner, ClosedJaxpr):
        return _eval(inner.jaxpr, [*inner.consts, *args])
    return _eval(inner, list(args))


def _own_ref(mat: BCOO) -> BCOO:
    """mat as a fresh sparse value of the traced function: each argument has its own sparsity pattern (even
    the same array passed twice), shared only by the values computed from it elementwise (as in JAX)."""
    out = tree_unflatten(tree_flatten(mat)[1], [mat.data, mat.indices])
    out._pattern = object()
    return out


def _same_pattern(x: BCOO, y: BCOO) -> bool:
    ref = getattr(x, "_pattern", None)
    return ref is not None and ref == getattr(y, "_pattern", None)


def _derived(out: BCOO, how: str, x: BCOO, y: BCOO) -> BCOO:
    """out, whose indices are a fixed function (`how`) of x's and y's: the same function of the same patterns
    gives the same pattern (complex arithmetic, split into real and imaginary parts, relies on it)."""
    px, py = getattr(x, "_pattern", None), getattr(y, "_pattern", None)
    out._pattern = None if px is None or py is None else (how, px, py)
    return out


def _dense_only(values, what):
    if any(isinstance(v, BCOO) for v in values):
        raise NotImplementedError(f"sparsify: sparse {what} are not implemented; only loop-invariant sparse operands")


def _while(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """lax.while_loop whose constants may be sparse (they reach the loop as closed-over BCOO buffers)."""
    cconsts, bconsts = args[:cond_nconsts], args[cond_nconsts : cond_nconsts + body_nconsts]
    init = args[cond_nconsts + body_nconsts :]
    _dense_only(init, "loop carries")
    out = lax.while_loop(
        lambda c: _eval(cond_jaxpr, [*cconsts, *c])[0], lambda c: _eval(body_jaxpr, [*bconsts, *c]), list(init)
    )
    return list(out)


def _cond(index, *ops, branches):
    """lax.switch over branches evaluated sparsely (sparse operands pass as pytrees)."""
    return list(lax.switch(index, [functools.partial(_branch, b) for b in branches], *ops))


def _branch(jaxpr, *ops):
    return _eval(jaxpr, list(ops))


def _scan(*args, jaxpr, length, reverse, num_consts, num_carry, unroll=1, **_):
    """lax.scan whose constants may be sparse."""
    consts, carry, xs = args[:num_consts], args[num_consts : num_consts + num_carry], args[num_consts + num_carry :]
    _dense_only((*carry, *xs), "scan carries and inputs")

    def body(c, x):
        outs = _eval(jaxpr, [*consts, *c, *x])
        return outs[:num_carry], outs[num_carry:]

    c, ys = lax.scan(body, list(carry), list(xs), length=length, reverse=reverse, unroll=unroll)
    return [*c, *ys]


def _like(mat: BCOO, data) -> BCOO:
    """mat's sparsity pattern with new data."""
    out = BCOO(
        (data, mat.indices), shape=mat.shape, indices_sorted=mat.indices_sorted, unique_indices=mat.unique_indices
    )
    out._pattern = getattr(mat, "_pattern", None)
    return out


def _unique(mat: BCOO) -> BCOO:
    return mat if mat.unique_indices else bcoo_sum_duplicates(mat, nse=mat.nse)


def _unary(name, linear):
    def rule(x, **params):
        x = x if linear else _unique(x)
        return [_like(x, bind(_PRIMS[name], x.data, **params))]

    return rule


def _integer_pow(x, *, y):
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for integer_pow with non-positive exponent {y} is not implemented because it would "
            "result in dense output. If this is your intent, use sparse.todense() to convert your argument to a "
            "dense array."
        )
    x = _unique(x)
    return [_like(x, x.data**y)]


def _add(x, y):
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        if x.shape != y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if _same_pattern(x, y):
            return [_like(x, x.data + y.data)]
        if x.indices.ndim != y.indices.ndim or x.data.ndim != y.data.ndim:
            raise NotImplementedError("Addition between sparse matrices with different batch/dense dimensions.")
        nb = x.n_batch
        xd, yd = (
            jnp.broadcast_to(x.data, x.shape[:nb] + x.data.shape[nb:]),
            jnp.broadcast_to(y.data, y.shape[:nb] + y.data.shape[nb:]),
        )
        xi = jnp.broadcast_to(x.indices, x.shape[:nb] + x.indices.shape[nb:])
        yi = jnp.broadcast_to(y.indices, y.shape[:nb] + y.indices.shape[nb:])
        data = jnp.concatenate([xd, yd.astype(xd.dtype)], axis=nb)
        out = BCOO((data, jnp.concatenate([xi, yi.astype(xi.dtype)], axis=nb)), shape=x.shape)
        return [_derived(out, "add", x, y)]
    sp, dense = (x, y) if isinstance(x, BCOO) else (y, x)
    if tuple(dense.shape) != jnp.broadcast_shapes(tuple(x.shape), tuple(y.shape)):
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when the output shape is "
            "larger than Y.shape. This is to prevent silent densification of a large sparse array. If this is "
            "your intent, you can explicitly cast the sparse array to a dense matrix."
        )
    return [sp.todense() + dense]


def _sub(x, y):
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        return _add(x, _like(y, -y.data))
    raise NotImplementedError("Subtraction between sparse and dense array.")


def _mul(x, y):
    if isinstance(x, BCOO) and isinstance(y, BCOO):
        if _same_pattern(x, y) and x.unique_indices:
            return [_like(x, x.data * y.data)]
        return [_derived(bcoo_multiply_sparse(x, y), "mul", x, y)]
    sp, dense = (x, y) if isinstance(x, BCOO) else (y, x)
    return [_like(sp, bcoo_multiply_dense(sp, dense))]


def _complex(x, y):
    """lax.complex of two sparse arrays (pyjax writes complex arithmetic with real/imag/complex)."""
    if not (isinstance(x, BCOO) and isinstance(y, BCOO)):
        raise NotImplementedError("sparse rule for complex with a dense operand is not implemented.")
    if _same_pattern(x, y):
        return [_like(x, lax.complex(x.data, y.data))]
    re = _like(x, lax.complex(x.data, jnp.zeros_like(x.data)))
    im = _like(y, lax.complex(jnp.zeros_like(y.data), y.data))
    return _add(re, im)


def _select_n(pred, *cases):
    """select_n of sparse cases that share one sparsity pattern (as lax.gather's out-of-bounds masking makes)."""
    first = cases[0]
    if isinstance(pred, BCOO) or not all(isinstance(c, BCOO) and _same_pattern(first, c) for c in cases):
        raise NotImplementedError("sparse rule for select_n is only implemented for sparse cases of one pattern.")
    pred = jnp.asarray(pred)
    if pred.ndim:
        pred = bcoo_extract(
            BCOO((first.data, first.indices), shape=first.shape), jnp.broadcast_to(pred, first.shape)
        ).data
    return [_like(first, lax.select_n(pred, *(c.data for c in cases)))]


def _div(x, y):
    if isinstance(y, BCOO):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense output. If this is "
            "your intent, use sparse.todense() to convert your arguments to a dense array."
        )
    return [_like(x, bcoo_multiply_dense(x, 1.0 / jnp.asarray(y)))]


def _reduce_sum(x, *, axes, **_):
    out = bcoo_reduce_sum(x, axes=axes)
    return [out.data.sum() if out.shape == () else out]


def _dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None, **_):
    out = bcoo_dot_general(
        lhs,
        rhs,
        dimension_numbers=dimension_numbers,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    return [out]


def _operand(x):
    if not isinstance(x, BCOO):
        raise NotImplementedError("sparse indices: indexing with a sparse array is not implemented")
    return x


def _index(i):
    if isinstance(i, BCOO):
        raise NotImplementedError("sparse indices: indexing with a sparse array is not implemented")
    return i


def _sparse_only(f):
    def rule(*args, **params):
        if not all(isinstance(a, BCOO) for a in args):
            raise NotImplementedError("sparse rule needs all operands sparse (got a mix of sparse and dense)")
        return [f(*args, **params)]

    return rule


# Zero-preserving elementwise primitives: f(0) == 0, so f applies to the stored data only. The nonlinear ones
# first sum duplicate indices (f(a) + f(b) != f(a + b)).
_LINEAR = ("neg", "copy", "convert_element_type", "real", "imag", "conj", "reduce_precision", "stop_gradient")
_NONLINEAR = ("abs", "sign", "sin", "tan", "asin", "atan", "sinh", "tanh", "asinh", "atanh", "sqrt", "cbrt")
_NONLINEAR += ("expm1", "log1p", "floor", "ceil", "round", "bessel_i1e")
_PRIMS: dict = {}

_RULES = {
    **{n: _unary(n, True) for n in _LINEAR},
    **{n: _unary(n, False) for n in _NONLINEAR},
    "integer_pow": _integer_pow,
    "add": _add,
    "add_any": _add,
    "sub": _sub,
    "mul": _mul,
    "div": _div,
    "complex": _complex,
    "select_n": _select_n,
    "reduce_sum": _reduce_sum,
    "dot_general": _dot_general,
    "transpose": _sparse_only(lambda x, *, permutation: bcoo_transpose(x, permutation=permutation)),
    "broadcast_in_dim": _sparse_only(
        lambda x, *, shape, broadcast_dimensions, **_: bcoo_broadcast_in_dim(
            x, shape=shape, broadcast_dimensions=broadcast_dimensions
        )
    ),
    "concatenate": lambda *xs, dimension: [bcoo_concatenate(xs, dimension=dimension)],
    "reshape": _sparse_only(
        lambda x, *, new_sizes, dimensions=None, **_: bcoo_reshape(x, new_sizes=new_sizes, dimensions=dimensions)
    ),
    "squeeze": _sparse_only(lambda x, *, dimensions: bcoo_squeeze(x, dimensions=dimensions)),
    "slice": _sparse_only(
        lambda x, *, start_indices, limit_indices, strides=None: bcoo_slice(
            x, start_indices=start_indices, limit_indices=limit_indices, strides=strides
        )
    ),
    "dynamic_slice": lambda x, *starts, slice_sizes: [bcoo_dynamic_slice(_operand(x), starts, slice_sizes)],
    "gather": lambda x, idx, *, axes, mode, fill_value: [bcoo_take(_operand(x), _index(idx), axes, mode)],
    "rev": _sparse_only(lambda x, *, dimensions: bcoo_rev(x, dimensions)),
    "while": _while,
    "cond": _cond,
    "scan": _scan,
    "pjit": _call,
    "closed_call": _call,
    "custom_jvp_call": _call,
    "custom_vjp_call": _call,
}


def _primitives():
    """The primitive objects of the unary rules, found by name in lax."""
    for name in (*_LINEAR, *_NONLINEAR):
        prim = getattr(lax, f"{name}_p", None)
        if prim is not None:
            _PRIMS[name] = prim
        else:
            _RULES.pop(name, None)


_primitives()


def bcoo_gather(
    operand: BCOO,
    start_indices,
    dimension_numbers,
    slice_sizes,
    *,
    unique_indices=False,
    indices_are_sorted=False,
    mode=None,
    fill_value=None,
) -> BCOO:
    """lax.gather of a BCOO (JAX's signature), through the sparse rules of the ops lax.gather is made of."""
    return sparsify(
        lambda x: lax.gather(
            x,
            start_indices,
            dimension_numbers,
            slice_sizes,
            unique_indices=unique_indices,
            indices_are_sorted=indices_are_sorted,
            mode=mode,
            fill_value=fill_value,
        )
    )(operand)


# --- the BCOO and BCSR operators, derived from sparsify ------------------------------------------------------


def _swap(f):
    return lambda a, b: f(b, a)


def _sum(self, *args, **kwargs):
    """Sum over axes (a BCOO, or a dense scalar for a full sum)."""
    return sparsify(lambda x: x.sum(*args, **kwargs))(self)


def _reshape(self, *args, **kwargs):
    """The same elements in a new shape."""
    return sparsify(lambda x: x.reshape(*args, **kwargs))(self)


def _astype(self, *args, **kwargs):
    """The array cast to a dtype."""
    return sparsify(lambda x: x.astype(*args, **kwargs))(self)


def _getitem(self, idx):
    return sparsify(lambda x: x[idx])(self)


def _iter(self):
    return iter(self[i] for i in range(self.shape[0]))


def _pow(x, y):
    return sparsify(lambda x: jnp.power(x, y))(x)


_BCOO_METHODS = {
    "astype": _astype,
    "reshape": _reshape,
    "sum": _sum,
    "__abs__": sparsify(jnp.abs),
    "__neg__": sparsify(jnp.negative),
    "__pos__": sparsify(jnp.positive),
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap(jnp.matmul)),
    "__mul__": sparsify(jnp.multiply),
    "__rmul__": sparsify(_swap(jnp.multiply)),
    "__truediv__": sparsify(jnp.divide),
    "__rtruediv__": sparsify(_swap(jnp.divide)),
    "__add__": sparsify(jnp.add),
    "__radd__": sparsify(_swap(jnp.add)),
    "__sub__": sparsify(jnp.subtract),
    "__rsub__": sparsify(_swap(jnp.subtract)),
    "__pow__": _pow,
    "__getitem__": _getitem,
    "__iter__": _iter,
}
_BCSR_METHODS = {
    "__matmul__": sparsify(jnp.matmul),
    "__rmatmul__": sparsify(_swap(jnp.matmul)),
    "__getitem__": _getitem,
}
for _name, _impl in _BCOO_METHODS.items():
    setattr(BCOO, _name, _impl)
for _name, _impl in _BCSR_METHODS.items():
    setattr(BCSR, _name, _impl)
