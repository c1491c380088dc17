"""Comparison helpers: pyjax results against real JAX (the oracle), values and gradients.

Usage in a test file (tests/ is on sys.path when pytest runs):

    from oracle import assert_close, check_grads, to_both

    px, jx = to_both(np.arange(3.0, dtype=np.float32))
    assert_close(pjnp.sin(px), jnp.sin(jx))
    check_grads(lambda x: pjnp.sum(pjnp.sin(x)), lambda x: jnp.sum(jnp.sin(x)), (np.arange(3.0),))
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import pyjax
import pyjax.numpy as pjnp

# Default tolerances per result dtype name: (rtol, atol). Integers and bools compare exactly.
TOLERANCES: dict[str, tuple[float, float]] = {
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float32": (2e-5, 2e-6),
    "float64": (1e-12, 1e-14),
}


def tolerance(dtype_name: str, rtol: float | None = None, atol: float | None = None) -> tuple[float, float]:
    """(rtol, atol) for a dtype name, with explicit overrides taking precedence."""
    r, a = TOLERANCES.get(dtype_name, (0.0, 0.0))
    return (r if rtol is None else rtol), (a if atol is None else atol)


def _dtype_name(x: Any) -> str:
    d = getattr(x, "dtype", None)
    if d is None:
        return type(x).__name__  # Python scalars: 'float', 'int', 'bool'
    return getattr(d, "name", str(d))


def _to_numpy(x: Any) -> np.ndarray:
    """Host copy of a pyjax/JAX array or scalar, widened so every dtype (bfloat16 too) compares."""
    name = _dtype_name(x)
    if isinstance(x, pyjax.Array):
        if name in ("bfloat16", "float16"):
            x = x.astype(pyjax.numpy.float32)
        a = np.asarray(x.tolist() if name == "bfloat16" else x)
    else:
        a = np.asarray(x)
    if a.dtype.kind == "f" or name == "bfloat16":
        return a.astype(np.float64)
    return a


def assert_close(
    actual: Any,
    expected: Any,
    rtol: float | None = None,
    atol: float | None = None,
    *,
    check_dtype: bool = True,
    check_weak_type: bool = False,
    err_msg: str = "",
) -> None:
    """Assert pyjax result(s) equal JAX's: same pytree structure, shapes, dtype names and close values.

    Tolerances default per dtype (TOLERANCES); NaNs compare equal to NaNs, infinities by sign.
    """
    a_leaves, a_tree = pyjax.tree_util.tree_flatten(actual)
    e_leaves, e_tree = jax.tree_util.tree_flatten(expected)
    assert len(a_leaves) == len(e_leaves), (
        f"{err_msg} pytree mismatch: pyjax has {len(a_leaves)} leaves ({a_tree}), jax has {len(e_leaves)} ({e_tree})"
    )
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        where = f"{err_msg} leaf {i}: " if len(a_leaves) > 1 else (f"{err_msg}: " if err_msg else "")
        _assert_leaf_close(a, e, rtol, atol, check_dtype, check_weak_type, where)


def _assert_leaf_close(a, e, rtol, atol, check_dtype, check_weak_type, where) -> None:
    a_shape, e_shape = tuple(np.shape(a)), tuple(np.shape(e))
    assert a_shape == e_shape, f"{where}shape {a_shape} != jax shape {e_shape}"
    a_name, e_name = _dtype_name(a), _dtype_name(e)
    if check_dtype:
        assert a_name == e_name, f"{where}dtype {a_name} != jax dtype {e_name}"
    if check_weak_type:
        a_weak = bool(getattr(a, "weak_type", not hasattr(a, "dtype")))
        e_weak = bool(getattr(e, "weak_type", not hasattr(e, "dtype")))
        assert a_weak == e_weak, f"{where}weak_type {a_weak} != jax weak_type {e_weak}"
    an, en = _to_numpy(a), _to_numpy(e)
    if an.dtype.kind in "biu" and en.dtype.kind in "biu":
        if not np.array_equal(an, en):
            bad = np.argwhere(an != en)[:5].tolist()
            raise AssertionError(f"{where}integer values differ at {bad}:\npyjax {an}\njax   {en}")
        return
    r, t = tolerance(e_name if e_name in TOLERANCES else a_name, rtol, atol)
    np.testing.assert_allclose(an, en, rtol=r, atol=t, equal_nan=True, err_msg=f"{where}pyjax vs jax ({e_name})")


def to_both(*args: Any, dtype: Any = None) -> tuple[list, list]:
    """Convert numpy inputs (pytrees of arrays; Python scalars pass through, staying weak) for both libraries.

    Returns (pyjax_args, jax_args) as lists, in argument order.
    """

    def conv(lib):
        def one(x):
            if isinstance(x, (bool, int, float)):
                return x
            a = np.asarray(x)
            return lib.asarray(a, dtype=dtype) if dtype is not None else lib.asarray(a)

        return one

    p = [pyjax.tree_util.tree_map(conv(pjnp), a) for a in args]
    j = [jax.tree_util.tree_map(conv(jnp), a) for a in args]
    return p, j


def _cotangent_like(out_np: np.ndarray, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(np.shape(out_np)).astype(out_np.dtype)


def check_grads(
    f_pyjax: Callable,
    f_jax: Callable,
    args: Sequence[Any],
    argnums: int | Sequence[int] = 0,
    *,
    modes: Sequence[str] = ("rev", "fwd"),
    rtol: float | None = None,
    atol: float | None = None,
    seed: int = 0,
) -> None:
    """Compare values and derivatives of f_pyjax with f_jax at args (numpy arrays or Python scalars).

    Scalar outputs compare `grad`; other outputs compare a `vjp` with a fixed random cotangent.
    "fwd" compares `jvp` with fixed random tangents for the float arguments in argnums.
    """
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    p_args, j_args = to_both(*args)
    p_out, j_out = f_pyjax(*p_args), f_jax(*j_args)
    assert_close(p_out, j_out, rtol, atol, err_msg="value")

    if "rev" in modes:
        j_leaves = jax.tree_util.tree_leaves(j_out)
        if len(j_leaves) == 1 and np.shape(j_leaves[0]) == () and not isinstance(j_out, (tuple, list, dict)):
            pg = pyjax.grad(f_pyjax, argnums=argnums)(*p_args)
            jg = jax.grad(f_jax, argnums=argnums)(*j_args)
            assert_close(pg, jg, rtol, atol, err_msg="grad")
        else:

            def p_fix(*xs):
                full = list(p_args)
                for k, x in zip(nums, xs):
                    full[k] = x
                return f_pyjax(*full)

            def j_fix(*xs):
                full = list(j_args)
                for k, x in zip(nums, xs):
                    full[k] = x
                return f_jax(*full)

            p_o, p_vjp = pyjax.vjp(p_fix, *[p_args[k] for k in nums])
            j_o, j_vjp = jax.vjp(j_fix, *[j_args[k] for k in nums])
            cts_np = jax.tree_util.tree_map(lambda o: _cotangent_like(np.asarray(o), seed), j_o)
            p_ct = pyjax.tree_util.tree_map(pjnp.asarray, cts_np)
            j_ct = jax.tree_util.tree_map(jnp.asarray, cts_np)
            assert_close(p_vjp(p_ct), j_vjp(j_ct), rtol, atol, err_msg="vjp")

    if "fwd" in modes:
        rng = np.random.default_rng(seed + 1)
        primals_np = [np.asarray(args[k]) for k in nums]
        tangents_np = [rng.standard_normal(p.shape).astype(p.dtype) for p in primals_np]

        def p_fix(*xs):
            full = list(p_args)
            for k, x in zip(nums, xs):
                full[k] = x
            return f_pyjax(*full)

        def j_fix(*xs):
            full = list(j_args)
            for k, x in zip(nums, xs):
                full[k] = x
            return f_jax(*full)

        p_res = pyjax.jvp(p_fix, tuple(p_args[k] for k in nums), tuple(pjnp.asarray(t) for t in tangents_np))
        j_res = jax.jvp(j_fix, tuple(j_args[k] for k in nums), tuple(jnp.asarray(t) for t in tangents_np))
        assert_close(p_res, j_res, rtol, atol, err_msg="jvp")
