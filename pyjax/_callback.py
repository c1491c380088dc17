"""Host callbacks: jax.debug.callback / jax.debug.print, jax.pure_callback, io_callback.

Each is a primitive carrying the Python function. Eagerly its impl calls the function on the
concrete arrays. Under jit the compiler has no lowering for it, so the partitioner makes it a
HostStep: the runtime materializes the inputs when the program reaches that step, calls the
function with concrete Arrays, and uploads what it returns (for pure/io callbacks), so the
callback runs at run time with the actual values, in program order, every call.

Transformations: debug callbacks see primal values under jvp/grad (tangents are dropped) and
run once per element under vmap; pure callbacks refuse differentiation (as JAX does) and batch
by `vmap_method`; io callbacks batch sequentially unless ordered.
"""

from __future__ import annotations

import logging
import string
from collections.abc import Callable
from typing import Any

from pyjax.core import core, dtypes
from pyjax.core.core import ShapedArray, Tracer
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.interpreters import ad, batching
from pyjax.runtime import control
from pyjax.runtime.array import Array

debug_callback_p = core.MultiPrimitive("debug_callback")
pure_callback_p = core.MultiPrimitive("pure_callback")
io_callback_p = core.MultiPrimitive("io_callback")

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all", "legacy_vectorized", None)


def _call(args: list, *, callback, result_avals, name: str, **_) -> list:
    """Call the flat callback on concrete arrays; check and convert what it returns."""
    from pyjax import numpy as jnp

    with core.new_base_main():  # the callback computes eagerly even while a jit is tracing
        outs = callback(*args)
        if not result_avals:
            return []
        leaves = tree_flatten(outs)[0]
        if len(leaves) != len(result_avals):
            raise RuntimeError(
                f"{name}: the callback returned {len(leaves)} arrays, but result_shape_dtypes describes {len(result_avals)}"
            )
        res = []
        for x, aval in zip(leaves, result_avals):
            a = jnp.asarray(x, dtype=aval.dtype)
            if a.shape != aval.shape:
                raise RuntimeError(
                    f"{name}: the callback returned an array of shape {a.shape}, but result_shape_dtypes "
                    f"expects {aval.shape}"
                )
            res.append(a)
        return res


def _abstract_eval(*avals, result_avals, **_):
    return list(result_avals)


for _p in (debug_callback_p, pure_callback_p, io_callback_p):
    _p.def_abstract_eval(_abstract_eval)
    _p.def_impl(lambda *args, _n=_p.name, **params: _call(list(args), name=_n, **params))
    # under jit: a HostStep at run time
    control.register_host_primitive(_p.name, lambda arrays, _n=_p.name, **params: _call(arrays, name=_n, **params))


# --- autodiff -----------------------------------------------------------------------------


def _debug_jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []


def _debug_vjp(primals, needs, **params):
    return debug_callback_p.bind(*primals, **params), lambda cts: [None] * len(primals)


def _no_ad(message: str):
    def rule(*_, **__):
        raise ValueError(message)

    return rule


_PURE_NO_AD = "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients."


ad.jvp_rules[debug_callback_p] = _debug_jvp
ad.vjp_rules[debug_callback_p] = _debug_vjp
ad.jvp_rules[pure_callback_p] = ad.vjp_rules[pure_callback_p] = _no_ad(_PURE_NO_AD)
ad.jvp_rules[io_callback_p] = ad.vjp_rules[io_callback_p] = _no_ad("IO callbacks do not support JVP.")


# --- vmap ---------------------------------------------------------------------------------


def _axis_size(args, dims) -> int:
    return next(core.get_aval(x).shape[d] for x, d in zip(args, dims) if d is not None)


def _debug_batch(size, args, dims, **params):
    """One callback per batch element, in order (JAX unrolls debug callbacks the same way)."""
    from pyjax import lax

    n = _axis_size(args, dims)
    for i in range(n):
        sliced = [x if d is None else lax.index_in_dim(x, i, d, keepdims=False) for x, d in zip(args, dims)]
        debug_callback_p.bind(*sliced, **params)
    return [], []


def _sequential(prim, args, dims, params):
    from pyjax.lax import control_flow

    moved = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(args, dims)]
    batched = [x for x, d in zip(moved, dims) if d is not None]

    def one(xs):
        it = iter(xs)
        full = [x if d is None else next(it) for x, d in zip(moved, dims)]
        return prim.bind(*full, **params)

    outs = control_flow.map(one, batched)
    return list(outs), [0] * len(outs)


def _pure_batch(size, args, dims, *, vmap_method, result_avals, **params):
    from pyjax.lax import lax

    n = _axis_size(args, dims)
    params = dict(params, vmap_method=vmap_method)
    if vmap_method in ("sequential", "sequential_unrolled"):
        return _sequential(pure_callback_p, args, dims, dict(params, result_avals=result_avals))
    batched_avals = tuple(a.update(shape=(n,) + a.shape) for a in result_avals)
    if vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
        k = n if vmap_method == "broadcast_all" else 1
        new = []
        for x, d in zip(args, dims):
            if d is None:
                new.append(x if vmap_method == "legacy_vectorized" else lax.broadcast(x, (k,)))
            else:
                new.append(batching.moveaxis(x, d, 0))
        outs = pure_callback_p.bind(*new, result_avals=batched_avals, **params)
        return list(outs), [0] * len(outs)
    raise NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmap_method is one of "
        "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. "
        f"Got vmap_method={vmap_method!r}."
    )


def _io_batch(size, args, dims, *, ordered, **params):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    return _sequential(io_callback_p, args, dims, dict(params, ordered=False))


batching.batch_rules[debug_callback_p] = _debug_batch
batching.batch_rules[pure_callback_p] = _pure_batch
batching.batch_rules[io_callback_p] = _io_batch


# --- public API ---------------------------------------------------------------------------


def _is_array_leaf(x) -> bool:
    return isinstance(x, (Tracer, Array, bool, int, float)) or core.valid_jaxtype(x)


def _split_args(callback: Callable, args: tuple, kwargs: dict) -> tuple[list, Callable]:
    """Flatten (args, kwargs): the array-like leaves (traced) and a function of those leaves
    that calls callback with everything else passed through statically."""
    flat, tree = tree_flatten((args, kwargs))
    dyn, static = [], {}
    for i, x in enumerate(flat):
        if _is_array_leaf(x):
            dyn.append(x)
        else:
            static[i] = x

    def call(*dyn_vals):
        it = iter(dyn_vals)
        a, k = tree_unflatten(tree, [static[i] if i in static else next(it) for i in range(len(flat))])
        return callback(*a, **k)

    call.__name__ = getattr(callback, "__name__", "callback")
    return dyn, call


def _result_avals(name: str, result_shape_dtypes) -> tuple[list, Any]:
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for x in leaves:
        if not (hasattr(x, "shape") and hasattr(x, "dtype")):
            raise TypeError(
                f"{name}: result_shape_dtypes must be a pytree of objects with shape and dtype "
                f"(e.g. jax.ShapeDtypeStruct), got {x!r}"
            )
        avals.append(ShapedArray(tuple(int(d) for d in x.shape), dtypes.canonicalize(x.dtype)))
    return avals, tree


def _now_or_later(name: str, go: Callable, first, args: tuple, kwargs: dict):
    """The two forms of debug_callback/debug_print: given its function (or format) `first`, run
    `go` now; without one, hand `go` back to be called later (the two-call form)."""
    if first is not None:
        go(first, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"{name} received unexpected arguments in the two-call form: {args=} {kwargs=}")
    return go


def debug_callback(
    callback: Callable | None = None, *args: Any, ordered: bool = False, partitioned: bool = False, **kwargs: Any
):
    """Call `callback(*args, **kwargs)` with concrete values, eagerly or at run time under jit.

    Array arguments arrive as concrete arrays (primal values under differentiation, one call
    per element under vmap); the callback's return value is ignored. Without `callback`, returns
    a function taking (callback, *args, **kwargs) (JAX's two-call form).
    """

    def go(cb, *c_args, **c_kwargs):
        if not callable(cb):
            raise TypeError(
                f"first argument to jax.debug.callback must be callable, but got an object of type {type(cb)}"
            )
        dyn, call = _split_args(cb, c_args, c_kwargs)

        def flat(*vals):
            call(*vals)
            return ()

        flat.__name__ = call.__name__
        debug_callback_p.bind(*dyn, callback=flat, result_avals=(), ordered=ordered, _effect=True)

    return _now_or_later("debug_callback", go, callback, args, kwargs)


class _FormatChecker(string.Formatter):
    """Checks a format string against its arguments without formatting anything."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        unused_kw = [k for k in kwargs if k not in used_args]
        if unused_kw:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be passing an f-string "
                '(i.e, `f"{x}"`) into `jax.debug.print` and instead should pass in a regular string.'
            )


def debug_print(
    fmt: str | None = None,
    *args: Any,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    _use_logging: bool = False,
    **kwargs: Any,
):
    """Print `fmt.format(*args, **kwargs)` with the runtime values (also inside jit, vmap, grad).

    Print options active when the call is traced (jnp.printoptions) are used when printing. With
    _use_logging (jax.debug.log) the message goes to the logger "jax._src.debugging" at INFO instead.
    """
    from pyjax.runtime import printing

    def go(f, *c_args, **c_kwargs):
        if not isinstance(f, str):
            raise TypeError(f"jax.debug.print: the format must be a str, got {type(f).__name__}")
        if not skip_format_check:
            _FormatChecker().format(f, *c_args, **c_kwargs)
        has_fields = bool(f) and next(iter(string.Formatter().parse(f)))[1] is not None
        opts = printing.get_printoptions()

        def show(*a, **k):
            with printing.printoptions(**opts):
                msg = f.format(*a, **k) if has_fields else " ".join([f, *(str(x) for x in a)])
            if _use_logging:
                logging.getLogger("jax._src.debugging").info(msg)
            else:
                print(msg)

        go_cb(show, *c_args, **c_kwargs)

    go_cb = debug_callback(ordered=ordered, partitioned=partitioned)
    return _now_or_later("debug_print", go, fmt, args, kwargs)


def pure_callback(
    callback: Callable,
    result_shape_dtypes: Any,
    *args: Any,
    sharding=None,
    vmap_method: str | None = None,
    **kwargs: Any,
):
    """Call a pure Python function from traced code; its results must match `result_shape_dtypes`.

    The callback receives concrete arrays and may return numpy arrays, lists or Arrays. Under
    vmap, `vmap_method` says how: "sequential" loops over the batch, "expand_dims" /
    "broadcast_all" call it once on the batched arrays. Not differentiable (use custom_jvp).
    """
    if not callable(callback):
        raise TypeError(f"pure_callback: callback must be callable, got {type(callback).__name__}")
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(f"vmap_method must be on of the allowed methods {list(_VMAP_METHODS)}, but got: {vmap_method}")
    avals, out_tree = _result_avals("pure_callback", result_shape_dtypes)
    dyn, flat = _split_args(callback, args, kwargs)
    outs = pure_callback_p.bind(*dyn, callback=flat, result_avals=tuple(avals), vmap_method=vmap_method)
    return tree_unflatten(out_tree, list(outs))


def io_callback(
    callback: Callable, result_shape_dtypes: Any, *args: Any, sharding=None, ordered: bool = False, **kwargs: Any
):
    """Call an impure Python function from traced code (never dropped, runs at run time under jit)."""
    if not callable(callback):
        raise TypeError(f"io_callback: callback must be callable, got {type(callback).__name__}")
    avals, out_tree = _result_avals("io_callback", result_shape_dtypes)
    dyn, flat = _split_args(callback, args, kwargs)
    outs = io_callback_p.bind(*dyn, callback=flat, result_avals=tuple(avals), ordered=ordered, _effect=True)
    return tree_unflatten(out_tree, list(outs))
