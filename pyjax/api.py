"""Public transformations: jit, grad, value_and_grad, vjp, jvp, linearize, vmap, jacfwd, jacrev,
hessian, make_jaxpr, eval_shape, plus device placement helpers."""

from __future__ import annotations

import contextlib
import functools
import inspect
import math
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from pyjax import ref as _ref
from pyjax import stages
from pyjax._prng import KeyAval, PRNGKeyArray
from pyjax.abstract_arrays import ShapeDtypeStruct, _abstractify
from pyjax.core import core, dtypes
from pyjax.core.config import config
from pyjax.core.core import ShapedArray, Tracer, bind, get_aval
from pyjax.core.errors import JAXTypeError
from pyjax.core.lru import LRUCache, cache_size
from pyjax.core.pytree import (
    flatten_fun,
    register_pytree_node,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from pyjax.custom_derivatives import _check_callable, _to_jax, closure_convert, custom_gradient  # noqa: F401  (jax.closure_convert, jax.custom_gradient)
from pyjax.dtypes import float0_zeros, is_float0
from pyjax.interpreters import ad, batching, staging
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax, parallel
from pyjax.lax._util import _arr
from pyjax.pjit import pjit_p
from pyjax.runtime import control, execute
from pyjax.runtime import device as device_mod
from pyjax.runtime.array import Array
from pyjax.runtime.execute import run_jaxpr

# Collectives left in a compiled program (their operand does not vary along the axis) run on the host.
for _p in parallel.COLLECTIVES:
    control.register_host_primitive(_p.name, parallel.host_runner(_p))

# --- argument handling ----------------------------------------------------------------------------


def _is_valid_leaf(x) -> bool:
    return core.valid_jaxtype(x)


def _argnums_tuple(argnums, n, name="argnums"):
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise TypeError(
                f"differentiating with respect to {name}={argnums} requires at least "
                f"{(a if a >= 0 else -a - 1) + 1} positional arguments to be passed by the caller, "
                f"but got only {n} positional arguments."
            )
    return single, tuple(a % n for a in nums)


# --- jit -----------------------------------------------------------------------------------------


class _Float0Out:
    """A float0 output of a jitted function, kept in the output treedef: no buffer, unflattens to float0 zeros."""

    __slots__ = ("shape",)

    def __init__(self, shape: tuple):
        self.shape = tuple(shape)

    def __eq__(self, other):
        return type(other) is _Float0Out and other.shape == self.shape

    def __hash__(self):
        return hash(self.shape)


register_pytree_node(_Float0Out, lambda x: ((), x.shape), lambda shape, _: float0_zeros(shape))


def _checks_nonfinite() -> bool:
    return config.jax_debug_nans or config.jax_debug_infs


def _fast_args(args) -> tuple | None:
    """(key, flat arrays) of __call__'s fast path for these positional arguments, or None where it
    does not apply: each argument an Array (its aval) or a list or tuple of Arrays (its type, its
    length, their avals). The key determines the argument tree and avals, as _stage's key does."""
    key, flat = [], []
    for a in args:
        t = type(a)
        if t is Array:
            key.append(a.aval)
            flat.append(a)
        elif t is list or t is tuple:
            key.append(t)
            key.append(len(a))
            for b in a:
                if type(b) is not Array:
                    return None
                key.append(b.aval)
                flat.append(b)
        else:
            return None
    return tuple(key), flat


_fun_caches: dict = {}  # id(fun) -> (weakref to fun, {jit options: LRUCache})


def _shared_cache(fun, options) -> LRUCache:
    """fun's cache of traced programs under these jit options. jit(f) made again for the same f (and
    options) shares it, as in JAX: `jax.jit(f)(x)` in a loop traces once, and f's Python side effects
    run on the first call only. Keyed by identity (never by f's __eq__); dropped when f is."""
    key = id(fun)
    hit = _fun_caches.get(key)
    if hit is None or hit[0]() is not fun:
        try:
            ref = weakref.ref(
                fun, lambda r, key=key: _fun_caches.pop(key) if _fun_caches.get(key, (r,))[0] is r else None
            )
        except TypeError:  # not weak-referenceable: a cache of its own
            return LRUCache(cache_size("jit", 512))
        hit = _fun_caches[key] = (ref, {})
    try:
        cache = hit[1].get(options)
        if cache is None:
            cache = hit[1][options] = LRUCache(cache_size("jit", 512))
    except TypeError:  # unhashable shardings
        return LRUCache(cache_size("jit", 512))
    return cache


class _Jitted(stages.Wrapped):
    """The callable returned by jit; caches traced jaxprs by argument signature."""

    __signature__ = property(lambda self: self.sig)  # inspect.signature(jit(f)) is f's, as in JAX

    def __init__(
        self, fun, static_argnums, static_argnames, donate_argnums, inline, in_shardings=None, out_shardings=None
    ):
        _check_callable(fun, "jit")
        self.fun = fun
        da = donate_argnums if donate_argnums is not None else ()
        self.donate_argnums = (da,) if isinstance(da, int) else tuple(da)
        if in_shardings is not None or out_shardings is not None:
            from pyjax import sharding as _sh

            _sh.check_leaf_types(in_shardings, "in_shardings")
            _sh.check_leaf_types(out_shardings, "out_shardings")
        self.in_shardings = tuple(in_shardings) if isinstance(in_shardings, list) else in_shardings
        self.out_shardings = out_shardings
        self.static_argnames = tuple(static_argnames or ())
        try:
            self.sig = inspect.signature(fun)
        except (TypeError, ValueError):
            self.sig = None
        sa = static_argnums if static_argnums is not None else ()
        self.static_argnums = (sa,) if isinstance(sa, int) else tuple(sa)
        if self.sig is not None:
            params = list(self.sig.parameters.values())
            # static_argnames also mark the corresponding positions static, and vice versa.
            extra = []
            for nm in self.static_argnames:
                for i, p in enumerate(params):
                    if p.name == nm and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                        extra.append(i)
            self.static_argnums = tuple(sorted(set(self.static_argnums) | set(extra)))
            names = {p.name for p in params}
            has_kwargs = any(p.kind == p.VAR_KEYWORD for p in params)
            for nm in self.static_argnames:
                if nm not in names and not has_kwargs:
                    raise ValueError(
                        f"jit: static_argnames {nm!r} does not name a parameter of "
                        f"{getattr(fun, '__name__', fun)}{self.sig}"
                    )
            self.static_argnames = tuple(
                set(self.static_argnames)
                | {
                    params[i].name
                    for i in self.static_argnums
                    if i < len(params) and params[i].kind in (params[i].POSITIONAL_OR_KEYWORD,)
                }
            )
        self.cache = _shared_cache(  # traced programs per argument signature
            fun,
            (self.static_argnums, frozenset(self.static_argnames), self.donate_argnums, inline)
            + (self.in_shardings, self.out_shardings),
        )
        self.__name__ = getattr(fun, "__name__", "jitted")
        self.__doc__ = getattr(fun, "__doc__", None)
        self.__wrapped__ = fun
        functools.update_wrapper(self, fun, updated=())
        _all_jitted.add(self)
        self._closed_refs: list = []  # Refs made outside fun that it touches (jax.new_ref): inputs and outputs
        self._ref_jit = None  # the jit that traces fun with its Refs' values as data
        self._is_ref_helper = False

    def _call_refs(self, args, kwargs):
        """A call involving Refs (arguments or closed over): their values travel in and out of the program."""
        if self._ref_jit is None:
            self._ref_jit = jit(
                _ref.ref_body(self.fun, self.__name__),
                static_argnums=(1,) + tuple(i + 2 for i in self.static_argnums),
                static_argnames=self.static_argnames,
            )
            self._ref_jit._is_ref_helper = True
        while True:
            try:
                return _ref.call_with_refs(self, self.__name__, list(self._closed_refs), args, kwargs, self._ref_jit)
            except _ref.RefEscape as e:
                if not e.fixable or any(e.ref is r for r in self._closed_refs):
                    raise
                self._closed_refs.append(e.ref)

    def _split(self, args, kwargs):
        if not self.static_argnums and not self.static_argnames:  # nothing static: everything is dynamic
            return (), (), tuple(args), dict(kwargs)
        n = len(args)
        for i in self.static_argnums:
            if i >= n and self.sig is not None:
                params = list(self.sig.parameters.values())
                if i < len(params) and params[i].name not in kwargs and params[i].default is params[i].empty:
                    raise TypeError(f"{self.__name__}() missing required static argument at position {i}")
        static = []
        dyn_args = []
        for i, a in enumerate(args):
            if i in self.static_argnums:
                static.append((i, _hashable_static(a, i)))
            else:
                dyn_args.append(a)
        static_kw, dyn_kw = [], {}
        for k, v in kwargs.items():
            if k in self.static_argnames:
                static_kw.append((k, _hashable_static(v, k)))
            else:
                dyn_kw[k] = v
        return tuple(static), tuple(sorted(static_kw)), tuple(dyn_args), dyn_kw

    def _trace(self, static, static_kw, dyn_args, dyn_kw, in_tree, avals):
        static_d = dict(static)
        n_total = len(static) + len(dyn_args)
        out_tree_box = []

        def flat_fun(*flat):
            args_, kw_ = tree_unflatten(in_tree, list(flat))
            it = iter(args_)
            full = [static_d[i] if i in static_d else next(it) for i in range(n_total)]
            out = self.fun(*full, **kw_, **dict(static_kw))
            leaves, tree = tree_flatten(out)
            _ref.check_not_returned(self.__name__, leaves)
            if any(is_float0(x) for x in leaves):  # float0 outputs (grad of an int input) live in the treedef
                leaves, tree = tree_flatten(
                    tree_unflatten(tree, [_Float0Out(x.shape) if is_float0(x) else x for x in leaves])
                )
            out_tree_box.append(tree)
            return [_check_out_leaf(x) for x in leaves]

        jaxpr, consts = staging.trace_to_jaxpr(flat_fun, avals)
        return jaxpr, consts, out_tree_box[0]

    def __call__(self, *args, **kwargs):
        if config.jax_disable_jit:  # inside disable_jit(): run the Python function op by op
            return self.fun(*args, **kwargs)
        if not kwargs and not self.static_argnums:
            # Fast path: positional arrays (or lists/tuples of arrays), nothing being traced ->
            # cached program, keyed as _fast_args keys it.
            if (
                core.state.dynamic_trace is None
                and not batching.axis_env
                and not _checks_nonfinite()
                and not _user_contexts
                and not self._closed_refs
                and not config.jax_no_execution  # (the slow path raises JAX's error)
            ):
                fast = _fast_args(args)
                if fast is not None:
                    entry = self.cache.get(fast[0])
                    if entry is not None:
                        outs = run_jaxpr(entry[0], fast[1])
                        return tree_unflatten(entry[2], outs) if entry[4] else outs[0]
        try:
            flat, _, _, entry = self._stage(args, kwargs)
        except _ref.HasRefs:
            return self._call_refs(args, kwargs)
        except _ref.RefEscape as e:
            if self._is_ref_helper or not e.fixable:
                raise
            self._closed_refs.append(e.ref)
            return self._call_refs(args, kwargs)
        jaxpr, consts, out_tree = entry[0], entry[1], entry[2]
        if config.jax_no_execution and core.state.dynamic_trace is None:
            raise RuntimeError(
                f"JAX tried to execute function jit({self.__name__}), but the no_execution config option is set"
            )
        try:
            outs = pjit_p.bind(*consts, *flat, jaxpr=jaxpr, name=self.__name__)
        except FloatingPointError as e:
            if not _checks_nonfinite() or core.find_top_trace(flat) is not None:
                raise
            error = e
        else:
            return tree_unflatten(out_tree, outs)
        self._rerun_deoptimized(args, kwargs)
        raise error

    def _rerun_deoptimized(self, args, kwargs) -> None:
        """jax_debug_nans found a nan in this jitted call's outputs: run fun op by op, as JAX does, so that
        the primitive which made it raises (JAX's message first)."""
        print("Invalid nan value encountered in the output of a jax.jit function. Calling the de-optimized version.")
        try:
            with disable_jit():
                self.fun(*args, **kwargs)
        except FloatingPointError as e:
            raise e from None

    def _stage(self, args, kwargs, abstract=False):
        """Flatten a call's arguments and trace them (or find them in the cache): (flat, in_tree, avals, entry).

        abstract=True takes ShapeDtypeStructs as well as arrays (for trace/lower)."""
        static, static_kw, dyn_args, dyn_kw = self._split(args, kwargs)
        flat, in_tree = tree_flatten((dyn_args, dyn_kw))
        if self._closed_refs or _ref.has_refs(flat):
            raise _ref.HasRefs
        if abstract:
            avals = [_abstractify(x) for x in flat]
        else:
            flat = [x if type(x).__name__ == "Array" or isinstance(x, Tracer) else _to_jax(x) for x in flat]
            avals = [get_aval(x) for x in flat]
        key = (static, static_kw, in_tree, tuple(avals))
        if batching.axis_env:  # collectives inside depend on the named axes in scope (JAX keys on them too)
            key += (batching.axis_env_key(),)
        if _user_contexts:  # make_user_context values key the cache too
            key += (_user_context_values(),)
        try:
            entry = self.cache.get(key)
        except TypeError:
            entry = None
        if entry is None or entry[3]:
            if config.jax_no_tracing:
                raise RuntimeError(f"re-tracing function {self.__name__} for `jit`, but 'no_tracing' is set")
            jaxpr, consts, out_tree = self._trace(static, static_kw, dyn_args, dyn_kw, in_tree, avals)
            has_tracer_consts = any(isinstance(c, Tracer) for c in consts)
            if not has_tracer_consts:
                jaxpr, consts = staging.close_over_consts(jaxpr, consts), []
            single_leaf = out_tree.num_leaves == 1 and out_tree.node_type is None
            entry = (jaxpr, consts, out_tree, has_tracer_consts, not single_leaf)
            if self.in_shardings is not None or self.out_shardings is not None:
                self._shardings_for(in_tree, avals, out_tree, jaxpr.out_avals, None)  # validation only
            if not has_tracer_consts:
                self.cache[key] = entry
                if (
                    not kwargs
                    and not self.static_argnums
                    and not batching.axis_env
                    and not _user_contexts  # (their values must key every lookup)
                ):
                    fast = _fast_args(args)
                    if fast is not None:
                        self.cache[fast[0]] = entry
        return flat, in_tree, avals, entry

    def _shardings_for(self, in_tree, avals, out_tree, out_avals, device):
        """Validate in/out_shardings against these argument and output avals; one Sharding (or, where
        unspecified, that of device) per leaf. On one device they change nothing."""
        from pyjax import sharding as _sh
        from pyjax.runtime import device as devmod

        default = devmod.SingleDeviceSharding(device or devmod.default_device())
        args_avals, kw_avals = tree_unflatten(in_tree, list(avals))
        ins = [default] * len(avals)
        if self.in_shardings is not None:
            spec = self.in_shardings
            if isinstance(spec, tuple) and len(spec) != len(args_avals):
                raise ValueError(
                    "pjit in_shardings specification must be a tree prefix of the positional arguments tuple. In "
                    "particular, pjit in_shardings must either be a Sharding, a PartitionSpec, or a tuple of length "
                    "equal to the number of positional arguments. But pjit in_shardings is the wrong length: got a "
                    f"tuple or list of length {len(spec)} for an args tuple of length {len(args_avals)}."
                )
            for i, (s, a) in enumerate(_sh.broadcast_prefix(spec, args_avals, "pjit in_shardings")):
                if s is not None:
                    ins[i] = _sh.resolve(s, "jit", "in_shardings")
                    _sh.check_rank(ins[i], len(a.shape), "pjit arguments")
        outs = [default] * len(out_avals)
        if self.out_shardings is not None and out_avals:
            out_tree_avals = tree_unflatten(out_tree, list(out_avals))
            for i, (s, a) in enumerate(_sh.broadcast_prefix(self.out_shardings, out_tree_avals, "pjit out_shardings")):
                if s is not None:
                    outs[i] = _sh.resolve(s, "jit", "out_shardings")
                    _sh.check_rank(outs[i], len(a.shape), "pjit outputs")
        return ins, outs

    def trace(self, *args, **kwargs) -> stages.Traced:
        """Trace for these arguments (arrays or ShapeDtypeStructs), reusing this function's jit cache."""
        flat, in_tree, avals, entry = self._stage(args, kwargs, abstract=True)
        donated = [False] * len(avals)
        if self.donate_argnums:
            args_leaves = [tree_structure(a).num_leaves for a in tree_unflatten(in_tree, list(avals))[0]]
            dyn_pos = [i for i in range(len(args)) if i not in self.static_argnums]
            k = 0
            for pos, n in zip(dyn_pos, args_leaves):
                for j in range(k, k + n):
                    donated[j] = pos in self.donate_argnums
                k += n
        return stages.Traced(self, in_tree, avals, entry, donated)

    def eval_shape(self, *args, **kwargs):
        """The outputs' shapes and dtypes (ShapeDtypeStructs) for these arguments."""
        return self.trace(*args, **kwargs).out_info

    def clear_cache(self):
        self.cache.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


_all_jitted: weakref.WeakSet = weakref.WeakSet()


@contextlib.contextmanager
def disable_jit(disable: bool = True):
    """Context manager: jit-decorated functions run their Python body eagerly, op by op."""
    prev = config.jax_disable_jit
    config.update("jax_disable_jit", bool(disable))
    try:
        yield
    finally:
        config.update("jax_disable_jit", prev)


def clear_caches() -> None:
    """Drop every jit function's cache of traced and compiled programs, the eager plans and the
    backends' executables (as jax.clear_caches: everything is rebuilt on next use)."""
    for f in list(_all_jitted):
        f.clear_cache()
    execute.clear_caches()


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """Give fun a name in staged programs; pyjax does not record names, so fun is returned as is."""
    _check_callable(fun, "named_call")
    return fun


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Context manager; pyjax evaluates concrete values eagerly already, so this only yields."""
    yield


def typeof(x):
    """The abstract value (ShapedArray) of x, like jax.typeof."""
    if isinstance(x, _ref.Ref):
        return x.aval
    if isinstance(x, PRNGKeyArray):  # typed keys: their shape with the key dtype, as JAX
        return KeyAval(x.shape)
    if isinstance(x, Tracer):
        return x.aval
    if type(x) is Array:
        return x.aval
    return get_aval(_to_jax(x))


def _hashable_static(v, where):
    try:
        hash(v)
    except TypeError:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying "
            f"to hash an object of type {type(v)}, {v!r}. The error was:\nTypeError: unhashable type: "
            f"'{type(v).__name__}'"
        ) from None
    return v


def _check_out_leaf(x):
    if isinstance(x, Tracer):
        return x
    if not _is_valid_leaf(x):
        raise TypeError(f"Value {x!r} of type {type(x)} is not a valid JAX type")
    return x


def jit(
    fun: Callable | None = None,
    *,
    static_argnums=None,
    static_argnames=None,
    donate_argnums=None,
    donate_argnames=None,
    inline: bool = False,
    device=None,
    backend=None,
    keep_unused=False,
    in_shardings=None,
    out_shardings=None,
    **_kw,
) -> Any:
    """Compile fun: trace once per argument signature, fuse into kernels, cache per backend."""
    if fun is None:
        return lambda f: jit(
            f,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            inline=inline,
            in_shardings=in_shardings,
            out_shardings=out_shardings,
        )
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    return _Jitted(fun, static_argnums, static_argnames, donate_argnums, inline, in_shardings, out_shardings)


# --- autodiff ----------------------------------------------------------------------------------


def _check_grad_input(x, allow_int, holomorphic=False):
    d = get_aval(x).dtype
    if holomorphic and d.kind != "c":
        raise TypeError(f"grad with holomorphic=True requires inputs with complex dtype, but got {d.name}.")
    if d.kind not in "fc" and not allow_int:
        raise TypeError(
            f"grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
            f"np.inexact), but got {d.name}. If you want to use Boolean- or integer-valued inputs, "
            f"use vjp or set allow_int to True."
        )


def value_and_grad(
    fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False, reduce_axes=()
) -> Callable:
    """Returns f(*args) -> (value, grad) [with aux as ((value, aux), grad)]."""
    _check_callable(fun, "value_and_grad")

    @functools.wraps(fun)
    def vg(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        dyn = [tree_map(_to_jax, args[i]) for i in nums]
        flat, tree = tree_flatten(dyn)
        for x in flat:
            _check_grad_input(x, allow_int, holomorphic)

        def flat_fun(*xs):
            parts = tree_unflatten(tree, list(xs))
            full = list(args)
            for i, p in zip(nums, parts):
                full[i] = p
            out = fun(*full, **kwargs)
            aux = None
            if has_aux:
                if not (isinstance(out, (tuple, list)) and len(out) == 2):
                    raise TypeError("value_and_grad with has_aux=True requires fun to return a pair (output, aux)")
                out, aux = out
            a = get_aval(out) if core.valid_jaxtype(out) else None
            if a is None or a.shape != ():
                shape = a.shape if a is not None else type(out).__name__
                raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {shape}.")
            if holomorphic and a.dtype.kind != "c":
                raise TypeError(
                    f"grad with holomorphic=True requires outputs with complex dtype, but got {a.dtype.name}."
                )
            if a.dtype.kind != "f" and not holomorphic:
                raise TypeError(
                    f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
                    f"np.floating), but got {a.dtype.name}. For holomorphic differentiation, pass "
                    f"holomorphic=True. For differentiation of non-holomorphic functions involving "
                    f"complex outputs, use jax.vjp directly."
                )
            return [out], aux

        outs, backward, aux = ad.vjp_flat(flat_fun, flat)
        (out,) = outs
        ct = lax.full((), 1.0, get_aval(out).dtype)
        grads = [_tangent_or(g, x) for g, x in zip(backward([ct]), flat)]
        if not holomorphic:  # JAX: the gradient of a real function at complex inputs is never weak
            grads = [
                g if is_float0(g) or get_aval(g).dtype.kind != "c" else lax._convert(g, g.dtype, False) for g in grads
            ]
        g = tree_unflatten(tree, grads)
        g = g[0] if single else tuple(g)
        return ((out, aux), g) if has_aux else (out, g)

    return vg


def _tangent_or(g, x):
    """The (co)tangent for value x: float0 zeros when x is an integer or bool value (JAX), else _zeros_or."""
    a = get_aval(x)
    return float0_zeros(a.shape) if a.dtype.kind in "biu" else _zeros_or(g, x)


def _type_str(d, shape) -> str:
    """JAX's short type in messages: float32[3,4], float0[]."""
    name = "float0" if is_float0(d) else dtypes.dtype(d).name
    return f"{name}[{','.join(str(s) for s in shape)}]"


def _zeros_or(g, x):
    """The gradient for input x (a value or its aval), with x's dtype and weak type (as in JAX); symbolic
    zeros materialized."""
    a = x if isinstance(x, (ShapedArray, KeyAval)) else get_aval(x)
    if type(g) is Zero:
        return lax._convert(lax.full(a.shape, 0, a.dtype), a.dtype, a.weak_type)
    ga = get_aval(g)
    if ga.dtype is a.dtype and ga.weak_type != a.weak_type:
        return lax._convert(g, a.dtype, a.weak_type)
    return g


def grad(
    fun: Callable, argnums=0, has_aux: bool = False, holomorphic: bool = False, allow_int: bool = False, reduce_axes=()
) -> Callable:
    """Gradient of a scalar-output function with respect to argnums."""
    vg = value_and_grad(fun, argnums, has_aux, holomorphic, allow_int)

    @functools.wraps(fun)
    def g(*args, **kwargs):
        if has_aux:
            (_, aux), gr = vg(*args, **kwargs)
            return gr, aux
        return vg(*args, **kwargs)[1]

    return g


def vjp(fun: Callable, *primals, has_aux: bool = False, reduce_axes=()):
    """(out, vjp_fn) or (out, vjp_fn, aux); vjp_fn(cotangent) -> tuple of input cotangents.

    Cotangents of integer or bool values are float0 (given and returned), as in JAX."""
    return _vjp(fun, primals, has_aux, True)


def _vjp(fun: Callable, primals, has_aux: bool, float0: bool):
    """vjp; with float0=False integer inputs get zeros of their own dtype (jacrev vmaps over the result)."""
    _check_callable(fun, "vjp")
    primals_j = [tree_map(_to_jax, p) for p in primals]
    flat, in_tree = tree_flatten(primals_j)
    out_tree_box, aux_box = [], []
    flat_fun = _flat_outputs(fun, in_tree, has_aux, out_tree_box, aux_box)
    outs, backward, aux = ad.vjp_flat(lambda *xs: (flat_fun(*xs), aux_box[-1] if has_aux else None), flat)
    out_tree = out_tree_box[0]
    out_avals = [get_aval(o) for o in outs]

    vjp_fn = VJP(_VJPSpec(out_tree, out_avals, in_tree, [get_aval(x) for x in flat], float0), backward)
    out = tree_unflatten(out_tree, outs)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


class _VJPSpec:
    """What a VJP function knows besides its residuals: the output structure and avals (cotangents are
    checked against them), the inputs' structure and avals, and whether integer inputs get float0."""

    def __init__(self, out_tree, out_avals, in_tree, in_avals, float0):
        self.out_tree, self.out_avals, self.in_tree, self.in_avals, self.float0 = (
            out_tree,
            out_avals,
            in_tree,
            in_avals,
            float0,
        )

    def flat_cts(self, ct) -> list:
        """ct's leaves checked against the outputs; integer outputs' cotangents become symbolic zeros."""
        if tree_structure(ct) != self.out_tree:
            raise ValueError(
                f"vjp cotangent structure {tree_structure(ct)} does not match the function output structure "
                f"{self.out_tree}"
            )
        cts = tree_leaves(ct)
        for i, (c, a) in enumerate(zip(cts, self.out_avals)):
            if is_float0(c) and (c.shape != a.shape or a.dtype.kind not in "biu"):
                raise ValueError(
                    f"unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
                    f"{_type_str(c, c.shape)}, but expected "
                    f"{_type_str(c if a.dtype.kind in 'biu' else a.dtype, a.shape)} because the corresponding "
                    f"output of the differentiated function had JAX type {_type_str(a.dtype, a.shape)}"
                )
            ca = c.shape if is_float0(c) else get_aval(c).shape
            if ca != a.shape:
                raise ValueError(
                    f"Shape of cotangent input to vjp pullback function {ca} must be the same "
                    f"as the shape of corresponding primal input {a.shape}."
                )
            if a.dtype.kind in "biu":  # an integer output carries no cotangent
                cts[i] = Zero(a)
        return cts

    def float0_input(self, i: int) -> bool:
        return self.float0 and self.in_avals[i].dtype.kind in "biu"

    def finish(self, grads) -> tuple:
        """The input cotangents as the inputs' tree: float0 zeros for integer inputs (when float0), else
        the cotangent in the input's dtype and weak type (zeros materialized)."""
        out = [
            float0_zeros(a.shape) if self.float0_input(i) else _zeros_or(g, a)
            for i, (g, a) in enumerate(zip(grads, self.in_avals))
        ]
        return tuple(tree_unflatten(self.in_tree, out))


class _StagedVJP:
    """A VJP function's backward pass as a jaxpr over (residuals, cotangents of the non-integer outputs)
    -> cotangents of the inputs that get one (the treedef's static part); or, for a backward pass that
    needs concrete values and cannot be traced, that pass itself (no leaves then)."""

    def __init__(self, spec: _VJPSpec, jaxpr, backward=None):
        self.spec, self.jaxpr, self.backward = spec, jaxpr, backward


class VJP:
    """The function jax.vjp returns: called with the outputs' cotangent, it gives the inputs' cotangents.
    Like JAX's, it is a pytree whose leaves are the residuals its backward pass reads, so it can be an
    argument of a jitted (or vmapped) function and be called there.

    Made by vjp, it runs the recorded backward pass; flattened, the backward pass is traced once to a
    jaxpr (its captured arrays are the leaves), and a VJP rebuilt from leaves evaluates that jaxpr."""

    def __init__(self, spec: _VJPSpec, backward=None, staged: _StagedVJP | None = None, residuals=()):
        self._spec, self._backward, self._staged, self._residuals = spec, backward, staged, list(residuals)

    def __call__(self, ct):
        spec = self._spec
        cts = spec.flat_cts(ct)
        if self._backward is not None:
            return spec.finish(self._backward(cts))
        live = [c for c, a in zip(cts, spec.out_avals) if a.dtype.kind not in "biu"]
        outs = iter(core.eval_jaxpr(self._staged.jaxpr, self._residuals + live))
        grads = [None if spec.float0_input(i) else next(outs) for i in range(len(spec.in_avals))]
        return spec.finish([Zero(a) if g is None else g for g, a in zip(grads, spec.in_avals)])

    def _stage(self):
        if self._staged is None:
            spec, backward = self._spec, self._backward
            live = [i for i, a in enumerate(spec.out_avals) if a.dtype.kind not in "biu"]

            def run(*cts):
                full = [Zero(a) for a in spec.out_avals]
                for i, c in zip(live, cts):
                    full[i] = c
                grads = backward(full)
                return [
                    _zeros_or(g, a) for i, (g, a) in enumerate(zip(grads, spec.in_avals)) if not spec.float0_input(i)
                ]

            try:
                jaxpr, consts = staging.trace_to_jaxpr(run, [spec.out_avals[i] for i in live])
            except JAXTypeError:  # a rule needed concrete values: the recorded pass, with no leaves
                self._staged, self._residuals = _StagedVJP(spec, None, backward), []
            else:
                jaxpr, consts = staging._inline_literals(jaxpr, consts)
                self._staged, self._residuals = _StagedVJP(spec, jaxpr), list(consts)
        return self._staged, self._residuals

    def tree_flatten(self):
        staged, residuals = self._stage()
        return residuals, staged

    @classmethod
    def tree_unflatten(cls, staged: _StagedVJP, residuals):
        return cls(staged.spec, staged.backward, staged=staged, residuals=residuals)


register_pytree_node(VJP, VJP.tree_flatten, VJP.tree_unflatten)


def jvp(fun: Callable, primals, tangents, has_aux: bool = False):
    """(primals_out, tangents_out) of fun at primals along tangents; integer and bool values have float0
    tangents (given and returned), as in JAX."""
    return _jvp(fun, primals, tangents, has_aux, True)


def _jvp(fun: Callable, primals, tangents, has_aux: bool, float0: bool):
    """jvp; with float0=False integer outputs get zero tangents of their own dtype (jacfwd vmaps over them)."""
    _check_callable(fun, "jvp")
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(
            "primal and tangent arguments to jax.jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    if len(primals) != len(tangents):
        raise ValueError("jvp requires primals and tangents to have the same number of arguments")
    flat_p, tree_p = tree_flatten([tree_map(_to_jax, p) for p in primals])
    flat_t, tree_t = tree_flatten(list(tangents))
    if tree_p != tree_t:
        raise TypeError(
            f"primal and tangent arguments to jax.jvp must have the same tree structure; primals "
            f"have tree structure {tree_p} whereas tangents have tree structure {tree_t}."
        )
    flat_t = [_jvp_tangent(p, t) for p, t in zip(flat_p, flat_t)]
    out_tree_box, aux_box = [], []
    flat_fun = _flat_outputs(fun, tree_p, has_aux, out_tree_box, aux_box)
    outs, touts = ad.jvp_flat(flat_fun, flat_p, flat_t)
    touts = [(_tangent_or if float0 else _zeros_or)(t, o) for t, o in zip(touts, outs)]
    res = tree_unflatten(out_tree_box[0], outs), tree_unflatten(out_tree_box[0], touts)
    if has_aux:
        aux = tree_map(lambda x: x.primal if isinstance(x, ad.JVPTracer) else x, aux_box[0])
        return res + (aux,)
    return res


def _jvp_tangent(p, t):
    """Check a tangent against its primal (JAX's rules: equal dtypes; float0 for integer and bool
    primals); a float0 tangent becomes a symbolic zero."""
    pa = get_aval(p)
    f0 = is_float0(t)
    if not f0:
        t = _to_jax(t)
    shape = t.shape if f0 else get_aval(t).shape
    if pa.shape != shape:
        raise ValueError(
            f"jvp called with different primal and tangent shapes;Got primal shape {pa.shape} and tangent shape as {shape}"
        )
    want_f0 = pa.dtype.kind in "biu"
    if f0 != want_f0 or (not f0 and get_aval(t).dtype is not pa.dtype):
        f0_name = str(t.dtype) if f0 else "[('float0', 'V')]"
        raise TypeError(
            "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in case of "
            f"int/bool primal dtype the tangent dtype must be float0.Got primal dtype {pa.dtype.name} and so "
            f"expected tangent dtype {f0_name if want_f0 else pa.dtype.name}, but got tangent dtype "
            f"{f0_name if f0 else get_aval(t).dtype.name} instead."
        )
    return Zero(pa) if f0 else t


def _flat_outputs(fun: Callable, in_tree, has_aux: bool, out_tree_box: list, aux_box: list) -> Callable:
    """fun over flat inputs returning flat outputs; their tree (and aux) go into the boxes."""

    def flat_fun(*xs):
        out = fun(*tree_unflatten(in_tree, list(xs)))
        if has_aux:
            out, aux = out
            aux_box.append(aux)
        leaves, t = tree_flatten(out)
        out_tree_box.append(t)
        return leaves

    return flat_fun


def linearize(fun: Callable, *primals, has_aux: bool = False):
    """(out, f_jvp): f_jvp(*tangents) evaluates only the linear part (residuals precomputed)."""
    flat_p, tree_p = tree_flatten([tree_map(_to_jax, p) for p in primals])
    avals = [get_aval(x) for x in flat_p]
    out_tree_box, aux_box = [], []
    n = len(flat_p)

    def joint(*args):
        xs, ts = list(args[:n]), list(args[n:])
        outs, touts = ad.jvp_flat(_flat_outputs(fun, tree_p, has_aux, out_tree_box, aux_box), xs, ts)
        return outs + [ad.instantiate(t) for t in touts]

    jaxpr, consts = staging.trace_to_jaxpr(joint, avals + avals)
    if any(isinstance(c, Tracer) for c in consts):
        # Closed-over tracers: fall back to recomputing through jvp.
        out = jvp(fun, primals, primals, has_aux=has_aux)
        return (out[0], lambda *t: jvp(fun, primals, t)[1]) + ((out[2],) if has_aux else ())
    jaxpr = staging.close_over_consts(jaxpr, consts)
    known, unknown, out_unknown = staging.split_known(jaxpr, [False] * n + [True] * n)
    if any(out_unknown[: len(jaxpr.outs) // 2]):
        # A staged primitive mixes primals and tangents (e.g. a scan): recompute through jvp instead.
        out = jvp(fun, primals, primals, has_aux=has_aux)
        return (out[0], lambda *t: jvp(fun, primals, t)[1]) + ((out[2],) if has_aux else ())
    fwd = core.eval_jaxpr(known, flat_p)
    n_out = len(jaxpr.outs) // 2
    n_known = sum(1 for u in out_unknown if not u)
    known_outs, residuals = fwd[:n_known], fwd[n_known:]
    outs = known_outs[:n_out]
    out_tree = out_tree_box[0]

    def f_jvp(*tangents):
        flat_t, tree_t = tree_flatten(list(tangents))
        if tree_t != tree_p:
            raise ValueError("linearize: tangent structure does not match the primals")
        flat_t = [_jvp_tangent(p, t) for p, t in zip(flat_p, flat_t)]
        flat_t = [ad.instantiate(t) for t in flat_t]  # float0 tangents of integer inputs: zeros
        unk = core.eval_jaxpr(unknown, residuals + flat_t)
        it_k, it_u = iter(known_outs[n_out:]), iter(unk)
        touts = [next(it_u) if u else next(it_k) for u in out_unknown[n_out:]]
        touts = [float0_zeros(get_aval(o).shape) if get_aval(o).dtype.kind in "biu" else t for o, t in zip(outs, touts)]
        return tree_unflatten(out_tree, touts)

    res = (tree_unflatten(out_tree, outs), f_jvp)
    if has_aux:
        return res + (aux_box[0],)
    return res


# --- vmap ----------------------------------------------------------------------------------------


def _broadcast_prefix(prefix, tree, what: str) -> list:
    """Leaves of `tree` paired with the `prefix` value covering them."""
    out = []

    def rec(p, t):
        if p is None or isinstance(p, int):
            out.extend([p] * len(tree_leaves(t)))
            return
        pl, pt = tree_flatten(p, is_leaf=lambda x: x is None)
        try:
            subs = pt.flatten_up_to(t)
        except ValueError:
            raise ValueError(
                f"vmap {what} specification must be a tree prefix of the corresponding value, "
                f"got specification {prefix} for value tree {tree_structure(tree)}."
            ) from None
        for pv, sub in zip(pl, subs):
            rec(pv, sub)

    rec(prefix, tree)
    return out


def vmap(
    fun: Callable, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None, sum_match: bool = False
) -> Callable:
    """Vectorize fun over a leading (or given) axis of its arguments. With sum_match, an output mapped
    where out_axes says None is summed over the mapped axis (JAX's option) instead of an error."""
    _check_callable(fun, "vmap")
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or isinstance(in_axes, (int, tuple, dict))):
        raise TypeError(
            f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes}."
        )

    @functools.wraps(fun)
    def batched(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                f"vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got len(in_axes)={len(in_axes)}, "
                f"len(args)={len(args)}"
            )
        args_j = [tree_map(lambda x: x if is_float0(x) else _to_jax(x), a) for a in args]
        flat, in_tree = tree_flatten(args_j)
        axes = _broadcast_prefix(
            in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args), tuple(args_j), "in_axes"
        )
        sizes = set()
        norm_axes = []
        f0_in = {}  # float0 inputs (tangents of integers) skip batching: each example sees float0 zeros
        for i, (x, ax) in enumerate(zip(flat, axes)):
            if is_float0(x):
                shape = tuple(x.shape)
                if ax is not None:
                    if not -len(shape) <= ax < len(shape):
                        raise ValueError(f"vmap: axis {ax} is out of bounds for a float0 argument of shape {shape}")
                    sizes.add(shape[ax % len(shape)])
                    shape = shape[: ax % len(shape)] + shape[ax % len(shape) + 1 :]
                f0_in[i] = float0_zeros(shape)
                norm_axes.append(None)
                continue
            if ax is None:
                norm_axes.append(None)
                continue
            nd = get_aval(x).ndim
            if not -nd <= ax < nd:
                raise ValueError(
                    f"vmap was requested to map its argument along axis {ax}, which implies that "
                    f"its rank should be at least {ax + 1 if ax >= 0 else -ax}, but is only {nd} "
                    f"(its shape is {get_aval(x).shape})"
                )
            ax %= nd
            norm_axes.append(ax)
            sizes.add(get_aval(x).shape[ax])
        if axis_size is not None:
            sizes.add(axis_size)
        if not sizes:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        if len(sizes) > 1:
            desc = ", ".join(
                f"axis {ax} of argument with shape {get_aval(x).shape}"
                for x, ax in zip(flat, norm_axes)
                if ax is not None
            )
            raise ValueError(f"vmap got inconsistent sizes for array axes to be mapped:\n{desc}")
        size = sizes.pop()
        out_tree_box = []

        # unmapped Python scalars reach fun unchanged (as in JAX: e.g. a static argument of a jitted fun)
        raw = tree_flatten(list(args))[0]
        keep = (
            [ax is None and type(r) in (int, float, bool) for r, ax in zip(raw, norm_axes)]
            if len(raw) == len(flat)
            else [False] * len(flat)
        )

        def flat_fun(*xs):
            xs = [r if k else x for x, r, k in zip(xs, raw, keep)] if any(keep) else list(xs)
            xs = [f0_in.get(i, x) for i, x in enumerate(xs)] if f0_in else xs
            a = tree_unflatten(in_tree, xs)
            out = fun(*a, **kwargs)
            leaves, t = tree_flatten(out)
            out_tree_box.append((t, leaves, [tuple(v.shape) if is_float0(v) else None for v in leaves]))
            return [_to_jax(v) if not isinstance(v, Tracer) else v for v in leaves if not is_float0(v)]

        outs, odims = batching.vmap_flat(flat_fun, size, norm_axes, flat, axis_name)
        out_tree, raw_out, f0_out = out_tree_box[0]
        raw_out = [v for v in raw_out if not is_float0(v)]
        if any(s is not None for s in f0_out):  # float0 outputs come back as float0 zeros, batched
            it = iter(zip(outs, odims))
            pairs = [next(it) if s is None else (s, "float0") for s in f0_out]
            outs, odims = [p[0] for p in pairs], [p[1] for p in pairs]
        skeleton = tree_unflatten(out_tree, [0] * out_tree.num_leaves)
        oaxes = _broadcast_prefix(out_axes, skeleton, "out_axes")
        res = []
        raw_it = iter(raw_out)
        for o, d, oa in zip(outs, odims, oaxes):
            raw_o = None if d == "float0" else next(raw_it)
            if d == "float0":
                if oa is not None and not -len(o) - 1 <= oa <= len(o):
                    raise ValueError(f"axis {oa} is out of bounds for array of dimension {len(o) + 1}")
                ax = None if oa is None else oa % (len(o) + 1)
                res.append(float0_zeros(o if ax is None else o[:ax] + (size,) + o[ax:]))
                continue
            if oa is None:
                if d is not None and sum_match:
                    o, d = lax.reduce_sum(o, (d,)), None
                elif d is not None:
                    raise ValueError(f"at vmap out_axes, got axis spec None but output was batched on axis {d}")
                # an unmapped Python scalar result comes back as it is, as in JAX
                res.append(raw_o if type(raw_o) in (int, float, bool, complex) else o)
                continue
            nd = get_aval(o).ndim + (1 if d is None else 0)
            if not -nd <= oa < nd:
                raise ValueError(f"vmap out_axes: axis {oa} is out of bounds for array of dimension {nd}")
            res.append(batching.move_to(o, d, oa % nd, size))
        return tree_unflatten(out_tree, res)

    return batched


def _check_axis_spec(spec, what: str) -> None:
    """in_axes / out_axes: ints and None, in (nested) tuples, lists and dicts (JAX's TypeError otherwise)."""
    if spec is None or (isinstance(spec, int) and not isinstance(spec, bool)):
        return
    if isinstance(spec, (tuple, list, dict)):
        for v in spec.values() if isinstance(spec, dict) else spec:
            _check_axis_spec(v, what)
        return
    raise TypeError(
        f"pmap {what} must be an int, None, or (nested) container with those types as leaves, but got {spec}."
    )


def _index_tuple(nums) -> tuple:
    return (nums,) if isinstance(nums, int) else tuple(nums)


def _replace_none(spec):
    """The axis spec with None leaves mapped to 0 (pmap's out_axes=None: take device 0's copy afterwards)."""
    if spec is None:
        return 0
    if isinstance(spec, dict):
        return {k: _replace_none(v) for k, v in spec.items()}
    if isinstance(spec, (tuple, list)):
        return type(spec)(_replace_none(v) for v in spec)
    return spec


def pmap(
    fun: Callable,
    axis_name=None,
    *,
    in_axes=0,
    out_axes=0,
    static_broadcasted_argnums=(),
    devices=None,
    backend=None,
    axis_size=None,
    donate_argnums=(),
) -> Callable:
    """Map fun over a leading (in_axes) axis across devices, jit-compiled: jit(vmap(fun, axis_name=...)).

    As JAX's pmap: in_axes covers the positional arguments (a tuple as long as them), keyword arguments
    are mapped over axis 0, static_broadcasted_argnums are passed unmapped and must be hashable,
    out_axes=None returns one device's copy. pyjax has one device per platform, so the mapped size is at
    most len(devices) (default: the devices of `backend`, else the default platform's); the computation
    runs on devices[0] or on `backend`'s device. donate_argnums is accepted as jit's (a hint)."""
    _check_callable(fun, "pmap")
    static = _index_tuple(static_broadcasted_argnums)
    if any(i < 0 for i in static):
        raise ValueError(f"pmap: static_broadcasted_argnums must be non-negative, got {static}")
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")
    if devices is not None and not len(devices):
        raise ValueError("'devices' argument to pmap must be non-empty, or None.")
    target = devices[0] if devices is not None else (device_mod.devices(backend)[0] if backend else None)
    n_dev = len(devices) if devices is not None else device_mod.device_count(backend)
    out_spec = _replace_none(out_axes)
    donate = _index_tuple(donate_argnums)

    def call_mapped(dyn_idx, args, axes, *dyn_and_kw):
        *dyn, kwargs = dyn_and_kw

        def call(*d, **kw):
            full = list(args)
            for i, v in zip(dyn_idx, d):
                full[i] = v
            return fun(*full, **kw)

        out = vmap(lambda *xs: call(*xs[:-1], **xs[-1]), in_axes=(*axes, 0), out_axes=out_spec, axis_name=axis_name)(
            *dyn, kwargs
        )
        if out_spec == out_axes:
            return out
        specs = _broadcast_prefix(out_axes, out, "out_axes")
        leaves, tree = tree_flatten(out)
        return tree_unflatten(tree, [x[0] if a is None else x for x, a in zip(leaves, specs)])

    @functools.wraps(fun)
    def pmapped(*args, **kwargs):
        n = len(args)
        if static and max(static) >= n:
            raise ValueError(
                f"pmapped function has static_broadcasted_argnums={static} but was called with only {n} "
                "positional argument(s). All static broadcasted arguments must be passed positionally."
            )
        if isinstance(in_axes, tuple) and len(in_axes) != n:
            raise ValueError(
                f"pmap in_axes specification must be a tree prefix of the corresponding value, got "
                f"specification {in_axes} for value tree {tree_structure(args)}."
            )
        if isinstance(in_axes, (list, dict)):
            raise ValueError(
                f"pmap in_axes must be a tuple over the positional arguments (or an int or None), got "
                f"{type(in_axes).__name__} {in_axes} (JAX raises a pytree structure error)"
            )
        dyn_idx = [i for i in range(n) if i not in static]
        dyn = [args[i] for i in dyn_idx]
        axes = tuple(in_axes[i] for i in dyn_idx) if isinstance(in_axes, tuple) else (in_axes,) * len(dyn)
        specs = _broadcast_prefix(axes, tuple(dyn), "in_axes") + [0] * len(tree_leaves(kwargs))
        sizes = [
            get_aval(_to_jax(x)).shape[a] if -get_aval(_to_jax(x)).ndim <= a < get_aval(_to_jax(x)).ndim else None
            for x, a in zip(tree_leaves(dyn) + tree_leaves(kwargs), specs)
            if a is not None
        ]
        if not sizes:
            raise ValueError("pmap requires at least one argument with a mapped axis.")
        size = sizes[0]
        if axis_size is not None and size is not None and axis_size != size:
            raise ValueError(f"Specified axis_size {axis_size} doesn't match received axis_size {size}.")
        if size is not None and size > n_dev:
            raise ValueError(
                f"compiling computation that requires {size} logical devices, but only {n_dev} XLA "
                f"devices are available (num_replicas={size})"
            )
        statics = tuple((i, _hashable_static(args[i], i)) for i in sorted({i for i in static}))
        key = (statics, tuple(dyn_idx), tree_structure((dyn, kwargs)))
        jitted = cache.get(key)
        if jitted is None:
            donated = tuple(k for k, i in enumerate(dyn_idx) if i in donate)
            jitted = cache[key] = jit(
                functools.partial(call_mapped, tuple(dyn_idx), args, axes), donate_argnums=donated
            )
        if target is None:
            return jitted(*dyn, kwargs)
        with device_mod.default_device_ctx(target):
            return jitted(*dyn, kwargs)

    cache: dict = {}
    return pmapped


# --- jacobians -----------------------------------------------------------------------------------


def _std_basis(aval: ShapedArray):
    n = math.prod(aval.shape)
    rows, cols = (lax.broadcasted_iota(dtypes.int32, (n, n), d) for d in (0, 1))
    eye = lax.convert_element_type(lax.eq(rows, cols), aval.dtype)
    basis = lax.reshape(eye, (n,) + aval.shape)
    return lax._convert(basis, aval.dtype, aval.weak_type)  # weak inputs get weak Jacobians, as in JAX


def jacrev(fun: Callable, argnums=0, has_aux: bool = False, holomorphic=False, allow_int=False) -> Callable:
    """Jacobian by reverse mode: one vjp per output element, vectorized with vmap."""

    def jac(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        dyn = tuple(args[i] for i in nums)

        def f_dyn(*d):
            full = list(args)
            for i, v in zip(nums, d):
                full[i] = v
            return fun(*full, **kwargs)

        if holomorphic:
            for x in tree_leaves(dyn):
                _check_holomorphic_dtype("jacrev", "inputs", get_aval(x).dtype)
        for x in tree_leaves(dyn):
            d = get_aval(_to_jax(x)).dtype
            if d.kind in "biu" and not allow_int:
                raise TypeError(
                    f"jacrev requires real- or complex-valued inputs (input dtype that is a sub-dtype of np.inexact), "
                    f"but got {d.name}. If you want to use Boolean- or integer-valued inputs, use vjp or set "
                    "allow_int to True."
                )
        res = _vjp(f_dyn, dyn, has_aux, False)
        out, vjp_fn = res[0], res[1]
        out_leaves, out_tree = tree_flatten(out)
        for o in out_leaves:
            _check_jac_dtype("jacrev", "outputs", get_aval(o).dtype, holomorphic)
        in_leaves_tree = tree_structure(dyn)
        per_out = []
        for k, o in enumerate(out_leaves):
            oa = get_aval(o)
            basis = _std_basis(oa)

            def pull(c, k=k):
                cts = [lax.zeros_like_array(ol) for ol in out_leaves]
                cts[k] = c
                return vjp_fn(tree_unflatten(out_tree, cts))

            g = vmap(pull)(basis)  # tuple over dyn args, leading axis = output elements
            g = tree_map(lambda x, oa=oa: lax.reshape(x, oa.shape + x.shape[1:]), g)
            per_out.append(g if not single else g[0])
        del in_leaves_tree
        result = tree_unflatten(out_tree, per_out)
        return (result, res[2]) if has_aux else result

    return jac


def jacfwd(fun: Callable, argnums=0, has_aux: bool = False, holomorphic=False) -> Callable:
    """Jacobian by forward mode: one jvp per input element, vectorized with vmap."""

    def jac(*args, **kwargs):
        single, nums = _argnums_tuple(argnums, len(args))
        dyn = [tree_map(_to_jax, args[i]) for i in nums]
        flat, tree = tree_flatten(dyn)
        for x in flat:
            _check_jac_dtype("jacfwd", "inputs", get_aval(x).dtype, holomorphic)

        def f_flat(*xs):
            parts = tree_unflatten(tree, list(xs))
            full = list(args)
            for i, p in zip(nums, parts):
                full[i] = p
            return fun(*full, **kwargs)

        per_in = []
        aux = None
        out_tree = None
        for k, x in enumerate(flat):
            xa = get_aval(x)
            basis = _std_basis(xa)

            def push(t, k=k):
                tans = [lax.zeros_like_array(v) for v in flat]
                tans[k] = t
                r = _jvp(f_flat, tuple(flat), tuple(tans), has_aux, False)
                return (r[1], r[2]) if has_aux else r[1]

            r = vmap(push)(basis)
            if has_aux:
                r, aux_b = r
                aux = tree_map(lambda a: a[0], aux_b)
            leaves, out_tree = tree_flatten(r)
            # vmap put the input-element axis first: move it last and unflatten it to x's shape
            per_in.append([lax.reshape(lax.moveaxis_lax(v, 0, -1), v.shape[1:] + xa.shape) for v in leaves])
        # per_in[k][j]: jacobian of output leaf j w.r.t. input leaf k
        n_out = out_tree.num_leaves
        per_out = []
        for j in range(n_out):
            in_parts = tree_unflatten(tree, [per_in[k][j] for k in range(len(flat))])
            per_out.append(in_parts[0] if single else tuple(in_parts))
        result = tree_unflatten(out_tree, per_out)
        return (result, aux) if has_aux else result

    return jac


def hessian(fun: Callable, argnums=0, has_aux: bool = False, holomorphic=False) -> Callable:
    inner = jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic)
    return jacfwd(inner, argnums, has_aux=has_aux, holomorphic=holomorphic)


def _check_holomorphic_dtype(name: str, what: str, d) -> None:
    if d.kind != "c":
        raise TypeError(f"{name} with holomorphic=True requires {what} with complex dtype, but got {d.name}.")


def _check_jac_dtype(name: str, what: str, d, holomorphic: bool) -> None:
    """JAX: complex inputs (jacfwd) or outputs (jacrev) need holomorphic=True, which needs them complex."""
    if holomorphic:
        _check_holomorphic_dtype(name, what, d)
    elif d.kind in "c" or (d.kind in "biu" and name == "jacfwd"):
        direct = "jax.jvp" if name == "jacfwd" else "jax.vjp"
        involving = "complex inputs or integer inputs" if name == "jacfwd" else f"complex {what}"
        raise TypeError(
            f"{name} requires real-valued {what} ({what[:-1]} dtype that is a sub-dtype of np.floating), but got "
            f"{d.name}. For holomorphic differentiation, pass holomorphic=True. For differentiation of "
            f"non-holomorphic functions involving {involving}, use {direct} directly."
        )
    elif d.kind in "biu":  # jacrev's outputs
        raise TypeError(
            f"{name} requires real-valued {what} ({what[:-1]} dtype that is a sub-dtype of np.floating), but got "
            f"{d.name}. For differentiation of functions with integer outputs, use jax.vjp directly."
        )


# --- staging helpers -------------------------------------------------------------------------------


def make_jaxpr(
    fun: Callable, static_argnums=(), axis_env=None, return_shape: bool = False, abstracted_axes=None
) -> Callable:
    """make_jaxpr(f)(*args) -> ClosedJaxpr (printable, JAX's format)."""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)

    @functools.wraps(fun)
    def mk(*args, **kwargs):
        dyn = [a for i, a in enumerate(args) if i not in static_argnums]
        flat, tree = tree_flatten((dyn, kwargs))
        avals = [_abstractify(x) for x in flat]
        out_box = []

        def flat_fun(*xs):
            d, kw = tree_unflatten(tree, list(xs))
            it = iter(d)
            full = [args[i] if i in static_argnums else next(it) for i in range(len(args))]
            out = fun(*full, **kw)
            leaves, t = tree_flatten(out)
            out_box.append((t, [get_aval(v) for v in leaves]))
            return leaves

        env = [batching.AxisData(int(size), name) for name, size in (axis_env or ())]
        batching.axis_env.extend(env)  # collectives stage with these names and sizes (no vmap behind them)
        try:
            jaxpr, consts = staging.trace_to_jaxpr(flat_fun, avals)
        finally:
            for a in env:
                batching.axis_env.remove(a)
        closed = core.ClosedJaxpr(jaxpr, consts)
        if return_shape:
            t, oav = out_box[0]
            return closed, tree_unflatten(t, [ShapeDtypeStruct(a.shape, a.dtype) for a in oav])
        return closed

    return mk


def eval_shape(fun: Callable, *args, **kwargs):
    """Output shapes/dtypes of fun without running it."""
    flat, tree = tree_flatten((args, kwargs))
    flat_fun, out_trees = flatten_fun(fun, tree)
    jaxpr, _ = staging.trace_to_jaxpr(flat_fun, [_abstractify(x) for x in flat])
    return tree_unflatten(
        out_trees[0], [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in jaxpr.out_avals]
    )


# --- devices --------------------------------------------------------------------------------------


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """Place every leaf of x on device (default: the default device) and commit it there.

    device may also be a Sharding or PartitionSpec (or a pytree prefix of them): validated, then the
    leaf goes to its one device and remembers the sharding (pyjax has one device, so no data moves)."""
    from pyjax import sharding as _sh
    from pyjax.runtime import device as devmod
    from pyjax.runtime.array import Array
    from pyjax.runtime.execute import transfer

    if isinstance(device, str):
        device = devmod.get_device(device)
    if device is not None and not isinstance(device, devmod.Device):
        pairs = _sh.broadcast_prefix(device, x, "device_put device")
        leaves, tree = tree_flatten(x)
        out = []
        for (s, _), v in zip(pairs, leaves):
            if s is None:
                out.append(device_put(v))
                continue
            s = _sh.resolve(s, "device_put", "device")
            _sh.check_rank(s, len(getattr(_abstractify(v), "shape", ())), "device_put args")
            r = device_put(v, _sh.device_of(s))
            if type(r) is Array and not isinstance(s, devmod.SingleDeviceSharding):
                r = Array(r.aval, r._buf, r._tracker, r._device, r._host) if r is v else r
                r._committed, r._sharding = True, s
            out.append(r)
        return tree_unflatten(tree, out)
    target = device or devmod.default_device()

    def put(v):
        if isinstance(v, Tracer):
            return v
        a = _to_jax(v)
        if type(a) is Array:
            out = transfer(a, target)
            if out is a and device is not None:
                out = Array(a.aval, a._buf, a._tracker, a._device, a._host)
            if device is not None:
                out._committed = True
            return out
        return a

    return tree_map(put, x)


def block_until_ready(x):
    """Wait for every array leaf of x to be computed; returns x."""
    for leaf in tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


async def device_get_async(x):
    """Await every array leaf of x and return them as nested Python lists (browser-friendly)."""
    from pyjax.runtime.array import Array as _Concrete

    leaves, tree = tree_flatten(x)
    out = [await v.tolist_async() if isinstance(v, _Concrete) else v for v in leaves]
    return tree_unflatten(tree, out)


def device_get(x):
    import numpy as np

    return tree_map(lambda v: np.asarray(v) if hasattr(v, "_numpy") else v, x)


Sequence = Sequence
bind = bind


# --- transformations built from the ones above ----------------------------------------------------


def linear_transpose(fun: Callable, *primals, reduce_axes=()) -> Callable:
    """The transpose of the linear function fun, at inputs shaped like primals.

    primals only give shapes and dtypes (arrays or ShapeDtypeStructs). The returned function
    maps an output cotangent to a tuple of input cotangents (one per positional argument).
    """
    _check_callable(fun, "linear_transpose")
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to transpose is deprecated")
    flat, in_tree = tree_flatten(primals)
    in_avals = [_abstractify(x) for x in flat]
    out_shape = eval_shape(fun, *tree_unflatten(in_tree, [ShapeDtypeStruct(a.shape, a.dtype) for a in in_avals]))
    out_leaves, out_tree = tree_flatten(out_shape)
    kinds = [a.dtype.kind for a in in_avals] + [o.dtype.kind for o in out_leaves]
    if not (all(k in "fc" for k in kinds) or all(k in "iu" for k in kinds)):
        raise TypeError(
            "linear_transpose only supports [float or complex] -> [float or complex], and integer -> integer "
            f"functions, but got {[a.dtype.name for a in in_avals]} -> {[o.dtype.name for o in out_leaves]}."
        )
    zeros = [lax.full(a.shape, 0, a.dtype) for a in in_avals]
    _, pullback = vjp(lambda *xs: fun(*xs), *tree_unflatten(in_tree, zeros))

    def transposed(out_cotangent):
        leaves, tree = tree_flatten(out_cotangent)
        if tree != out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected {out_tree} but got {tree}")
        for c, o in zip(leaves, out_leaves):
            a = get_aval(_to_jax(c))
            if a.shape != o.shape or a.dtype != o.dtype:
                raise TypeError(
                    "cotangent type does not match function output, expected "
                    f"{ShapedArray(o.shape, o.dtype).str_short()} but got {a.str_short()}"
                )
        return tuple(pullback(out_cotangent))

    return transposed


@contextlib.contextmanager
def named_scope(name: str):
    """Context manager naming the operations inside it (pyjax records no names: a no-op)."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


# --- processes, devices and buffers ---------------------------------------------------------------


def process_index(backend=None) -> int:
    """This process's index among the processes of a multi-process run (always 0 in pyjax)."""
    return 0


def process_count(backend=None) -> int:
    """How many processes take part in the computation (always 1 in pyjax)."""
    return 1


def process_indices(backend=None) -> list[int]:
    """The indices of all processes (just [0])."""
    return [0]


def local_device_count(backend=None) -> int:
    """How many devices this process can address (of backend, or of the default platform)."""
    from pyjax.runtime import device as devmod

    return len(devmod.local_devices(backend=backend))


def live_arrays(platform: str | None = None) -> list:
    """The concrete arrays alive now that hold device buffers (optionally only on platform)."""
    import gc

    out = []
    for obj in gc.get_objects():
        if type(obj) is Array and obj._buf is not None:
            if platform is None or obj._device.platform == platform:
                out.append(obj)
    return out


def copy_to_host_async(x):
    """Start copying every array of the pytree x to the host (a hint: pyjax copies on demand); returns x."""
    for leaf in tree_leaves(x):
        if hasattr(leaf, "copy_to_host_async"):
            leaf.copy_to_host_async()
    return x


def effects_barrier() -> None:
    """Wait until every pending computation and callback has finished."""
    from pyjax.runtime import device as devmod

    for d in devmod._devices.values():
        if d._backend is not None:
            d._backend.synchronize()


def make_array_from_callback(shape, sharding, data_callback: Callable, dtype=None):
    """An array of shape built from data_callback(index) (one device: index covers everything)."""
    shape = tuple(shape)
    data = data_callback(tuple(slice(None) for _ in shape))
    out = _arr(data) if dtype is None else lax.convert_element_type(_arr(data), dtype)
    if out.shape != shape:
        raise ValueError(f"make_array_from_callback: the callback returned shape {out.shape}, expected {shape}")
    return out


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None):
    """The array whose shards are `arrays` (one device: one array holding the whole shape)."""
    shape = tuple(shape)
    arrays = list(arrays)
    if len(arrays) != 1:
        raise ValueError(f"pyjax runs on one device: expected 1 single-device array, got {len(arrays)}")
    out = _arr(arrays[0])
    if tuple(out.shape) != shape:
        raise ValueError(
            f"Expected shard shape {shape} doesn't match the single device array shape {tuple(out.shape)}."
        )
    if dtype is not None:
        out = lax.convert_element_type(out, dtype)
    return device_put(out, sharding)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The global array of this (only) process's local data, placed with sharding."""
    out = _arr(local_data)
    if global_shape is not None and tuple(global_shape) != tuple(out.shape):
        raise ValueError(
            f"pyjax runs in one process: global_shape {tuple(global_shape)} must equal the local data's "
            f"shape {tuple(out.shape)}"
        )
    return device_put(out, sharding)


def fwd_and_bwd(fun: Callable, argnums=0, has_aux: bool = False, jitted: bool = True):
    """(fwd, bwd): fwd(*primals) -> (fun(*primals), residuals[, aux]); bwd(residuals, cotangent) -> the
    cotangents of the argnums inputs (one, or a tuple for a sequence). The residuals are the primals:
    bwd replays the forward pass inside its own (jitted, compiled once) program."""
    single = isinstance(argnums, int)
    nums = (argnums,) if single else tuple(argnums)

    def fwd(*primals):
        out = fun(*primals)
        if has_aux:
            return out[0], primals, out[1]
        return out, primals

    def bwd(residuals, cotangent):
        def wrt(*diff):
            full = list(residuals)
            for i, d in zip(nums, diff):
                full[i] = d
            out = fun(*full)
            return out[0] if has_aux else out

        _, pullback = vjp(wrt, *[residuals[i] for i in nums])
        cts = pullback(cotangent)
        return cts[0] if single else tuple(cts)

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)


def print_environment_info(return_string: bool = False):
    """Versions and devices (like jax.print_environment_info)."""
    import platform
    import sys

    from pyjax.runtime import device as devmod

    lines = [
        "pyjax:    " + __import__("pyjax").__version__,
        "python:   " + sys.version.replace("\n", " "),
        "platform: " + platform.platform(),
        "devices:  " + ", ".join(str(d) for d in devmod.devices()),
    ]
    text = "\n".join(lines)
    if return_string:
        return text
    print(text)
    return None


def _config_context(option: str, doc: str, default=True):
    """A JAX-style config context manager: `with jax.<name>(value):` sets option inside."""

    @contextlib.contextmanager
    def ctx(new_val=default):
        prev = config.read(option)
        config.update(option, new_val)
        try:
            yield
        finally:
            config.update(option, prev)

    ctx.__doc__ = doc
    return ctx


enable_x64 = _config_context("jax_enable_x64", "Enable 64-bit dtypes inside the block.")
debug_nans = _config_context("jax_debug_nans", "Set jax_debug_nans inside the block.")
debug_infs = _config_context("jax_debug_infs", "Set jax_debug_infs inside the block (recorded only).")
log_compiles = _config_context("jax_log_compiles", "Set jax_log_compiles inside the block (recorded only).")
checking_leaks = _config_context("jax_check_tracer_leaks", "Set jax_check_tracer_leaks inside the block.")
check_tracer_leaks = checking_leaks
explain_cache_misses = _config_context("jax_explain_cache_misses", "Recorded only.")
enable_checks = _config_context("jax_enable_checks", "Recorded only.")
default_matmul_precision = _config_context(
    "jax_default_matmul_precision",
    "Set the default matmul precision inside the block (pyjax computes in full float32).",
    None,
)
numpy_dtype_promotion = _config_context(
    "jax_numpy_dtype_promotion", "Set the dtype promotion mode inside the block (recorded only).", "standard"
)
numpy_rank_promotion = _config_context(
    "jax_numpy_rank_promotion", "Set the rank promotion mode inside the block (recorded only).", "allow"
)
transfer_guard = _config_context(
    "jax_transfer_guard", "Set the transfer guard inside the block (recorded only).", "allow"
)
transfer_guard_host_to_device = _config_context(
    "jax_transfer_guard_host_to_device", "Set the host-to-device transfer guard (recorded only).", "allow"
)
transfer_guard_device_to_host = _config_context(
    "jax_transfer_guard_device_to_host", "Set the device-to-host transfer guard (recorded only).", "allow"
)
transfer_guard_device_to_device = _config_context(
    "jax_transfer_guard_device_to_device", "Set the device-to-device transfer guard (recorded only).", "allow"
)
no_tracing = _config_context("jax_no_tracing", "Inside the block, a jit that has to trace raises RuntimeError.")
no_execution = _config_context(
    "jax_no_execution", "Inside the block, running a jitted program raises RuntimeError (eager ops still run)."
)
thread_guard = _config_context("jax_thread_guard", "Recorded only (pyjax's traces are per thread).")
softmax_custom_jvp = _config_context("jax_softmax_custom_jvp", "Recorded only (pyjax's softmax has one jvp).")
default_prng_impl = _config_context(
    "jax_default_prng_impl", "Set the default PRNG implementation (pyjax has threefry2x32).", "threefry2x32"
)
enable_custom_prng = _config_context("jax_enable_custom_prng", "Recorded only.")
legacy_prng_key = _config_context("jax_legacy_prng_key", "Recorded only.", "allow")
threefry_partitionable = _config_context("jax_threefry_partitionable", "Recorded only.")
debug_key_reuse = _config_context("jax_debug_key_reuse", "Recorded only.")
allow_f16_reductions = _config_context("jax_allow_f16_reductions", "Recorded only.")
array_garbage_collection_guard = _config_context("jax_array_garbage_collection_guard", "Recorded only.", "allow")
auto_pcast = _config_context("jax_auto_pcast", "Recorded only (shard_map casts varying values implicitly).")
jax2tf_associative_scan_reductions = _config_context("jax2tf_associative_scan_reductions", "Recorded only.")
remove_size_one_mesh_axis_from_type = _config_context("jax_remove_size_one_mesh_axis_from_type", "Recorded only.")


_user_contexts: list = []  # weak references to make_user_context's contexts: their values key jit's caches


def _user_context_values() -> tuple:
    live = [r() for r in _user_contexts]
    if any(c is None for c in live):
        _user_contexts[:] = [r for r, c in zip(_user_contexts, live) if c is not None]
    return tuple(c.value for c in live if c is not None)


class UserConfig:
    """A jit-cache-sensitive value: `with ctx(v):` sets it; jitted functions retrace when it changes."""

    def __init__(self, default_value):
        self._global = default_value
        self._stack: list = []

    @property
    def value(self):
        return self._stack[-1] if self._stack else self._global

    def get_global(self):
        return self._global

    def set_global(self, value) -> None:
        self._global = value

    @contextlib.contextmanager
    def __call__(self, new_val):
        self._stack.append(new_val)
        try:
            yield
        finally:
            self._stack.pop()


def make_user_context(default_value=None) -> UserConfig:
    """A new jit-cache-sensitive context (JAX's make_user_context)."""
    ctx = UserConfig(default_value)
    _user_contexts.append(weakref.ref(ctx))
    return ctx


def host_ids(backend=None) -> list:
    """The process indices (pyjax: one process, [0])."""
    return [0]
