"""pyjax.experimental.sparse.ad: grad, value_and_grad, jacfwd, jacrev that differentiate sparse arguments
with respect to their stored data only (the gradient keeps the argument's sparsity pattern), as in JAX."""

from __future__ import annotations

import functools
import operator

import pyjax
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.experimental.sparse._base import JAXSparse

__all__ = ["grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]


def _is_sparse(x):
    return isinstance(x, JAXSparse)


def _with_data(sp, data):
    """sp with its data buffer replaced (data may carry extra leading axes: a Jacobian's output axes)."""
    bufs, tree = tree_flatten(sp)
    extra = data.ndim - bufs[0].ndim
    rest = (
        [pyjax.numpy.broadcast_to(b, tuple(data.shape[:extra]) + tuple(b.shape)) for b in bufs[1:]]
        if extra
        else bufs[1:]
    )
    return tree_unflatten(tree, [data, *rest])


def _sparse_transform(transform, fun, argnums, has_aux, kwargs):
    """transform (pyjax.grad, ...) of fun with the sparse leaves of the argnums arguments differentiated
    through their data; gradients come back in the arguments' structure, sparse leaves as sparse arrays."""
    nums = (operator.index(argnums),) if isinstance(argnums, int) else tuple(map(operator.index, argnums))

    @functools.wraps(fun)
    def run(*args, **fkwargs):
        if any(not 0 <= i < len(args) for i in nums):
            raise ValueError(f"argnums={argnums} out of range for {len(args)} positional arguments")
        trees = [tree_flatten(args[i], is_leaf=_is_sparse) for i in nums]
        diff = [[x.data if _is_sparse(x) else x for x in leaves] for leaves, _ in trees]

        def rebuild(k, values):
            leaves, tree = trees[k]
            return tree_unflatten(tree, [_with_data(x, v) if _is_sparse(x) else v for x, v in zip(leaves, values)])

        def inner(*values):
            a = list(args)
            for k, i in enumerate(nums):
                a[i] = rebuild(k, values[k])
            return fun(*a, **fkwargs)

        out = transform(inner, argnums=tuple(range(len(nums))), has_aux=has_aux, **kwargs)(*diff)

        def post(grads):
            gs = tuple(rebuild(k, g) for k, g in enumerate(grads))
            return gs[0] if len(gs) == 1 else gs

        return out, post

    return run


def value_and_grad(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware pyjax.value_and_grad: the gradient of a sparse argument is sparse, on its sparsity pattern."""

    def f(*args, **fkwargs):
        (val, grads), post = _sparse_transform(pyjax.value_and_grad, fun, argnums, has_aux, kwargs)(*args, **fkwargs)
        return val, post(grads)

    return functools.wraps(fun)(f)


def grad(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware pyjax.grad: the gradient of a sparse argument is sparse, on its sparsity pattern."""
    return _jac_like(pyjax.grad, fun, argnums, has_aux, kwargs)


def jacfwd(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware pyjax.jacfwd (dense outputs): sparse arguments are differentiated through their data."""
    return _jac_like(pyjax.jacfwd, fun, argnums, has_aux, kwargs)


def jacrev(fun, argnums=0, has_aux=False, **kwargs):
    """Sparse-aware pyjax.jacrev (dense outputs): sparse arguments are differentiated through their data."""
    return _jac_like(pyjax.jacrev, fun, argnums, has_aux, kwargs)


jacobian = jacrev


def _jac_like(transform, fun, argnums, has_aux, kwargs):
    def f(*args, **fkwargs):
        out, post = _sparse_transform(transform, fun, argnums, has_aux, kwargs)(*args, **fkwargs)
        return (post(out[0]), out[1]) if has_aux else post(out)

    return functools.wraps(fun)(f)
