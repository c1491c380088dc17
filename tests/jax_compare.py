"""Helpers for conformance tests: run the same program on real JAX and on pyjax and compare
values (dtype-aware tolerances), shapes, exact dtypes and weak types."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

# (rtol, atol) per dtype name
TOLERANCES = {
    "float16": (2e-3, 2e-3),
    "bfloat16": (1.6e-2, 1.6e-2),
    "float32": (2e-5, 2e-6),
    "float64": (1e-12, 1e-13),
}


def _is_pj_array(x) -> bool:
    return isinstance(x, pyjax.Array)


def _is_jax_array(x) -> bool:
    return isinstance(x, jax.Array)


def to_lib(x, lib):
    """numpy arrays become arrays of `lib` (jax.numpy or pyjax.numpy); other values pass through."""
    if isinstance(x, np.ndarray):
        return lib.asarray(x)
    if isinstance(x, dict):
        return {k: to_lib(v, lib) for k, v in x.items()}
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(to_lib(v, lib) for v in x))
    if isinstance(x, (tuple, list)):
        return type(x)(to_lib(v, lib) for v in x)
    return x


def _leaves(tree, tree_util):
    return tree_util.tree_leaves(tree, is_leaf=lambda x: x is None)


def assert_close(pj, jx, rtol=None, atol=None, check_weak=True, what=""):
    """pj (pyjax result, a pytree) matches jx (JAX result) in structure, shape, dtype, weak type, value."""
    pl = _leaves(pj, pyjax.tree_util)
    jl = _leaves(jx, jax.tree_util)
    assert len(pl) == len(jl), f"{what}: {len(pl)} leaves vs JAX {len(jl)}: {pj!r} vs {jx!r}"
    assert (
        type(pj) is type(jx)
        or (_is_pj_array(pj) and _is_jax_array(jx))
        or (isinstance(pj, (tuple, list, dict)) and type(pj).__name__ == type(jx).__name__)
    ), f"{what}: container {type(pj)} vs {type(jx)}"
    for i, (a, b) in enumerate(zip(pl, jl)):
        where = f"{what}[leaf {i}]"
        if b is None:
            assert a is None, where
            continue
        if _is_jax_array(b):
            assert _is_pj_array(a), f"{where}: expected an Array, got {type(a)}: {a!r}"
            assert a.shape == b.shape, f"{where}: shape {a.shape} vs JAX {b.shape}"
            assert str(a.dtype) == str(b.dtype), f"{where}: dtype {a.dtype} vs JAX {b.dtype}"
            if check_weak:
                assert a.weak_type == b.weak_type, f"{where}: weak_type {a.weak_type} vs JAX {b.weak_type}"
            an = np.asarray(a)
            bn = np.asarray(b)
            assert an.dtype == bn.dtype, f"{where}: numpy dtype {an.dtype} vs {bn.dtype}"
            _assert_values(an, bn, str(b.dtype), rtol, atol, where)
        else:
            assert type(a) is type(b), f"{where}: {type(a)} vs {type(b)}"
            if isinstance(b, float) and np.isnan(b):
                assert np.isnan(a), where
            else:
                assert a == b, f"{where}: {a!r} vs {b!r}"


def _assert_values(an, bn, dname, rtol, atol, where):
    if dname in TOLERANCES:
        r, t = TOLERANCES[dname]
        r = r if rtol is None else rtol
        t = t if atol is None else atol
        a64 = an.astype(np.float64)
        b64 = bn.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(a64), np.isnan(b64), err_msg=f"{where}: nan positions")
        inf_b = np.isinf(b64)
        np.testing.assert_array_equal(a64[inf_b], b64[inf_b], err_msg=f"{where}: infinities")
        np.testing.assert_allclose(a64, b64, rtol=r, atol=t, equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(an, bn, err_msg=where)


def run_both(fn, *args, **kwargs):
    """fn(jax_module, numpy_module, *args) on JAX and on pyjax; numpy-array args are converted."""
    jx = fn(jax, jjnp, *to_lib(args, jjnp), **kwargs)
    pj = fn(pyjax, pjnp, *to_lib(args, pjnp), **kwargs)
    return pj, jx


def check(fn, *args, rtol=None, atol=None, check_weak=True, **kwargs):
    """Run fn on both libraries; both raise the same kind of exception, or the results match."""
    try:
        jx = fn(jax, jjnp, *to_lib(args, jjnp), **kwargs)
    except Exception as e:  # JAX rejects it: pyjax must reject it too, with the same class
        with pytest.raises(Exception) as info:
            fn(pyjax, pjnp, *to_lib(args, pjnp), **kwargs)
        assert _same_error_kind(info.value, e), f"pyjax raised {info.value!r}, JAX raised {e!r}"
        return None
    pj = fn(pyjax, pjnp, *to_lib(args, pjnp), **kwargs)
    assert_close(pj, jx, rtol=rtol, atol=atol, check_weak=check_weak)
    return pj


def _same_error_kind(a: BaseException, b: BaseException) -> bool:
    for base in (TypeError, ValueError, IndexError, KeyError, NotImplementedError, ZeroDivisionError):
        if isinstance(b, base):
            return isinstance(a, base)
    return True


def check_all(fn, cases, rtol=None, atol=None, check_weak=True):
    """check(fn, *args) for every args tuple in cases, computing all of JAX's results in one jit (one XLA
    compilation instead of one per case, which dominates test time). Cases JAX rejects fall back to check."""
    try:
        jx_all = jax.jit(lambda: [fn(jax, jjnp, *to_lib(tuple(a), jjnp)) for a in cases])()
    except Exception:
        for a in cases:
            check(fn, *a, rtol=rtol, atol=atol, check_weak=check_weak)
        return
    for i, (a, jx) in enumerate(zip(cases, jx_all)):
        pj = fn(pyjax, pjnp, *to_lib(tuple(a), pjnp))
        assert_close(pj, jx, rtol=rtol, atol=atol, check_weak=check_weak, what=f"case {i}")
