"""pyjax.test_util: check_grads (jax.test_util), derivatives checked against finite differences.

check_grads(f, args, order) compares forward mode (jvp) with central differences along random
tangents, and reverse mode (vjp) with forward mode by the inner-product identity
<ct, J t> == <J^T ct, t>, then repeats on the derivative functions up to `order`. Pure pyjax
(no numpy), so it runs under Pyodide too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pyjax import api, random, tree_util
from pyjax import numpy as jnp

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4
# JAX's default gradient tolerances (atol = rtol), by dtype
_TOLERANCE = {"float16": 1e-1, "bfloat16": 1e-1, "float32": 2e-3, "float64": 1e-5, "complex64": 2e-3}
_TOLERANCE["complex128"] = 1e-5


def _tolerance(tree: Any, given: float | None) -> float:
    if given is not None:
        return given
    names = [jnp.result_type(x).name for x in tree_util.tree_leaves(tree)]
    return max((_TOLERANCE.get(n, 0.0) for n in names), default=0.0)


def _random_like(tree: Any, seed: int) -> Any:
    leaves, treedef = tree_util.tree_flatten(tree)
    keys = random.split(random.PRNGKey(seed), max(len(leaves), 1))
    out = []
    for k, x in zip(keys, leaves):
        x = jnp.asarray(x)
        if jnp.issubdtype(x.dtype, jnp.complexfloating):
            re, im = random.normal(k, (2, *x.shape), jnp.float32)
            out.append((re + 1j * im).astype(x.dtype))
        else:
            out.append(random.normal(k, x.shape, jnp.float32).astype(x.dtype))
    return tree_util.tree_unflatten(treedef, out)


def _axpy(a: float, x: Any, y: Any) -> Any:
    return tree_util.tree_map(lambda u, v: (a * u + v).astype(jnp.result_type(v)), x, y)


def _inner(x: Any, y: Any) -> Any:
    terms = [jnp.vdot(u, v) for u, v in zip(tree_util.tree_leaves(x), tree_util.tree_leaves(y))]
    return sum(terms, jnp.asarray(0.0, jnp.float32))


def _numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float) -> Any:
    plus = f(*_axpy(eps, tangents, primals))
    minus = f(*_axpy(-eps, tangents, primals))
    return tree_util.tree_map(lambda p, m: (p - m) / (2 * eps), plus, minus)


def _assert_close(name: str, got: Any, want: Any, atol: float, rtol: float) -> None:
    got_leaves, got_tree = tree_util.tree_flatten(got)
    want_leaves, want_tree = tree_util.tree_flatten(want)
    if got_tree != want_tree:
        raise AssertionError(f"{name}: tree structures differ: {got_tree} vs {want_tree}")
    for i, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g = jnp.asarray(g).astype(jnp.complex64 if jnp.iscomplexobj(g) else jnp.float32)
        w = jnp.asarray(w).astype(g.dtype)
        if g.shape != w.shape:
            raise AssertionError(f"{name}: leaf {i} shapes differ: {g.shape} vs {w.shape}")
        bad = ~(jnp.abs(g - w) <= atol + rtol * jnp.abs(w))
        if bool(jnp.any(bad)):
            err = float(jnp.max(jnp.abs(g - w)))
            raise AssertionError(
                f"{name}: not equal to tolerance rtol={rtol}, atol={atol} "
                f"(leaf {i}, max abs difference {err:g}):\n got {g}\n want {w}"
            )


def check_jvp(f: Callable, f_jvp: Callable, args: Sequence, atol=None, rtol=None, eps=EPS, err_msg: str = "") -> None:
    """f_jvp(args, tangents) against central differences of f along random tangents."""
    atol = _tolerance(args, atol)
    rtol = _tolerance(args, rtol)
    tangents = _random_like(args, 0)
    out, out_dot = f_jvp(args, tangents)
    _assert_close(f"{err_msg} primal".strip(), out, f(*args), atol, rtol)
    _assert_close(f"{err_msg} tangent".strip(), out_dot, _numerical_jvp(f, args, tangents, eps), atol, rtol)


def check_vjp(f: Callable, f_vjp: Callable, args: Sequence, atol=None, rtol=None, eps=EPS, err_msg: str = "") -> None:
    """f_vjp(*args) against forward differences: <ct, J t> (numerically) equals <J^T ct, t>."""
    atol = _tolerance(args, atol)
    rtol = _tolerance(args, rtol)
    out, vjp_fun = f_vjp(*args)
    _assert_close(f"{err_msg} primal".strip(), out, f(*args), atol, rtol)
    tangents = _random_like(args, 1)
    cotangent = _random_like(out, 2)
    ct_in = vjp_fun(cotangent)
    forward = _inner(cotangent, _numerical_jvp(f, args, tangents, eps))
    backward = _inner(ct_in, tangents)
    _assert_close(f"{err_msg} VJP inner product".strip(), backward, forward, atol, rtol)


def check_grads(
    f: Callable,
    args: Sequence,
    order: int,
    modes: Sequence[str] = ("fwd", "rev"),
    atol: float | None = None,
    rtol: float | None = None,
    eps: float | None = None,
) -> None:
    """Check f's derivatives of orders 1..order in forward ("fwd") and reverse ("rev") mode, as jax.test_util does.

    Raises AssertionError naming the mode and order that disagree.
    """
    args = tuple(args)
    eps = EPS if eps is None else eps
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {mode!r}; use 'fwd' and/or 'rev'")
    _check(f, args, order, tuple(modes), atol, rtol, eps, 1)


def _check(f, args, order, modes, atol, rtol, eps, level):
    if "fwd" in modes:
        msg = f"JVP of order {level}"
        check_jvp(f, lambda a, t: api.jvp(f, a, t), args, atol, rtol, eps, msg)
        if order > 1:
            tangents = _random_like(args, 3 + level)
            _check(lambda *a: api.jvp(f, a, tangents)[1], args, order - 1, ("fwd",), atol, rtol, eps, level + 1)
    if "rev" in modes:
        msg = f"VJP of order {level}"
        check_vjp(f, lambda *a: api.vjp(f, *a), args, atol, rtol, eps, msg)
        if order > 1:
            cotangent = _random_like(f(*args), 5 + level)
            _check(lambda *a: api.vjp(f, *a)[1](cotangent), args, order - 1, ("rev",), atol, rtol, eps, level + 1)
