"""Helpers for conformance tests: run the same program on real JAX and on pyjax and compare
values (dtype-aware tolerances), shapes, exact dtypes and weak types."""

from __future__ import annotations

import os

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

# JAX's XLA compilations dominate the time of oracle tests: keep them in a persistent cache across runs
if not os.environ.get("JAX_COMPILATION_CACHE_DIR"):
    jax.config.update("jax_compilation_cache_dir", os.path.join(os.path.expanduser("~"), ".cache", "pyjax-tests-xla"))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)

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
                wa, wb = getattr(a, "weak_type", False), getattr(b, "weak_type", False)  # JAX's keys have none
                assert wa == wb, f"{where}: weak_type {wa} vs JAX {wb}"
            if str(b.dtype).startswith("key<"):  # typed PRNG keys: compare their uint32 data
                a, b = pyjax.random.key_data(a), jax.random.key_data(b)
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
    if dname in ("complex64", "complex128"):  # each part with its float dtype's tolerances
        part = "float32" if dname == "complex64" else "float64"
        _assert_values(np.real(an).copy(), np.real(bn).copy(), part, rtol, atol, f"{where} (real part)")
        _assert_values(np.imag(an).copy(), np.imag(bn).copy(), part, rtol, atol, f"{where} (imaginary part)")
        return
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


def _pyjax_run(fn, args, kwargs):
    try:
        return fn(pyjax, pjnp, *to_lib(tuple(args), pjnp), **kwargs), None
    except Exception as e:  # compared with JAX's behaviour by the caller
        return None, e


def _arrays_only(tree) -> bool:
    return all(_is_pj_array(x) for x in pyjax.tree_util.tree_leaves(tree))


def _jax_jitted(fn, cases, kwargs):
    """JAX's results for every case from one jitted call: numpy arrays become traced arguments, everything
    else (Python scalars, shapes, dtypes) stays static. One XLA compilation instead of one per jnp function
    and argument signature, which dominates the time of these tests."""
    plans, arrays = [], []
    for args in cases:
        leaves, treedef = jax.tree_util.tree_flatten(tuple(args))
        idx = [i for i, v in enumerate(leaves) if isinstance(v, np.ndarray)]
        arrays += [leaves[i] for i in idx]
        plans.append((leaves, treedef, idx))

    def run(*traced):
        it = iter(traced)
        outs = []
        for leaves, treedef, idx in plans:
            ls = list(leaves)
            for i in idx:
                ls[i] = next(it)
            outs.append(fn(jax, jjnp, *to_lib(treedef.unflatten(ls), jjnp), **kwargs))
        return outs

    return jax.jit(run)(*[jjnp.asarray(a) for a in arrays])


def check(fn, *args, rtol=None, atol=None, check_weak=True, jit_oracle=False, **kwargs):
    """Run fn(module, numpy_module, *args) on JAX and on pyjax: both raise the same kind of exception, or the
    results match (structure, shapes, dtypes, weak types, values).

    jit_oracle=True computes JAX's result under one jax.jit when pyjax returned only arrays (falling back to
    eager JAX if that fails): much faster, for code whose eager and jitted JAX semantics agree (not, e.g.,
    lax.fori_loop, whose eager result is weakly typed)."""
    pj, err = _pyjax_run(fn, args, kwargs)
    jx = None
    if jit_oracle and err is None and _arrays_only(pj):
        try:
            jx = _jax_jitted(fn, [args], kwargs)[0]
        except Exception:
            jx = None
    if jx is None:
        try:
            jx = fn(jax, jjnp, *to_lib(args, jjnp), **kwargs)
        except Exception as e:  # JAX rejects it: pyjax must reject it too, with the same class
            assert err is not None, f"JAX raised {e!r}, pyjax returned {pj!r}"
            assert _same_error_kind(err, e), f"pyjax raised {err!r}, JAX raised {e!r}"
            return None
    if err is not None:
        raise err
    assert_close(pj, jx, rtol=rtol, atol=atol, check_weak=check_weak)
    return pj


def check_jit(fn, *args, **kwargs):
    """check with JAX's result computed under jax.jit (see check's jit_oracle)."""
    return check(fn, *args, jit_oracle=True, **kwargs)


def check_all(fn, cases, rtol=None, atol=None, check_weak=True):
    """check_jit(fn, *args) for every args tuple in cases, with all of JAX's results from one jitted call."""
    results = [_pyjax_run(fn, a, {}) for a in cases]
    if all(e is None and _arrays_only(r) for r, e in results):
        try:
            jx_all = _jax_jitted(fn, cases, {})
        except Exception:
            jx_all = None
        if jx_all is not None:
            for i, ((pj, _), jx) in enumerate(zip(results, jx_all)):
                assert_close(pj, jx, rtol=rtol, atol=atol, check_weak=check_weak, what=f"case {i}")
            return
    for a in cases:
        check(fn, *a, rtol=rtol, atol=atol, check_weak=check_weak, jit_oracle=True)


def _same_error_kind(a: BaseException, b: BaseException) -> bool:
    if isinstance(b, (NameError, SyntaxError, AssertionError)):
        raise b  # a bug in the test's function, not a behaviour to compare
    for base in (TypeError, ValueError, IndexError, KeyError, NotImplementedError, ZeroDivisionError):
        if isinstance(b, base):
            return isinstance(a, base)
    # anything else (JAX's own error classes, RuntimeError, ...): some class beyond Exception in common
    return any(isinstance(a, c) for c in type(b).__mro__ if c not in (Exception, BaseException, object))


def rand(shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def grad_check(fn, *args, argnums=0, rtol=1e-4, atol=1e-4):
    """grad of sum(fn(...)**2) (or of fn if scalar) matches JAX."""

    def make(lib):
        def loss(*a):
            out = fn(lib, *a)
            return lib.numpy.sum(out * out)

        return lib.grad(loss, argnums=argnums)

    pj = make(pyjax)(*[pjnp.asarray(a) for a in args])
    jx = make(jax)(*[jjnp.asarray(a) for a in args])
    if isinstance(jx, tuple):
        for p, j in zip(pj, jx):
            np.testing.assert_allclose(np.asarray(p), np.asarray(j), rtol=rtol, atol=atol)
    else:
        np.testing.assert_allclose(np.asarray(pj), np.asarray(jx), rtol=rtol, atol=atol)


def assert_case_matches(case, tol=2e-5):
    """case(L), L = pyjax.numpy and jax.numpy: the same shapes, dtypes and values (tuples elementwise)."""
    got, want = case(pjnp), case(jjnp)
    got = got if isinstance(got, (tuple, list)) else [got]
    want = want if isinstance(want, (tuple, list)) else [want]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) and np.asarray(g).dtype == np.asarray(w).dtype, (g, w)
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=tol, atol=tol)


def printed(capsys, fn) -> dict:
    """stdout of fn(jax_module, numpy_module) under JAX and under pyjax."""
    out = {}
    for name, mod, np_mod in (("jax", jax, jjnp), ("pyjax", pyjax, pjnp)):
        fn(mod, np_mod)
        mod.effects_barrier()
        out[name] = capsys.readouterr().out
    return out


def assert_promotes_as_jax(a, b):
    """pjnp.promote_types(a, b) is JAX's, both ways round, or raises JAX's TypePromotionError (its message too)."""
    try:
        want = jjnp.promote_types(a, b).name
    except jax.dtypes.TypePromotionError as e:
        with pytest.raises(pyjax.dtypes.TypePromotionError) as got:
            pjnp.promote_types(a, b)
        assert str(got.value) == str(e)
        with pytest.raises(pyjax.dtypes.TypePromotionError):
            pjnp.promote_types(b, a)
        return
    assert pjnp.promote_types(a, b).name == want == pjnp.promote_types(b, a).name
