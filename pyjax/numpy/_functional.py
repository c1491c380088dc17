"""Function transformations over arrays: vectorize (with gufunc signatures), apply_along_axis,
apply_over_axes and piecewise, built on vmap and lax.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Sequence

from pyjax.core import dtypes
from pyjax.interpreters import batching
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _elementwise, _manipulation
from pyjax.numpy._promotion import _check_arraylike, _is_array, asarray, broadcast_shapes, broadcast_to
from pyjax.numpy._util import _arr, _aval, _to_dtype

__all__ = ["apply_along_axis", "apply_over_axes", "vectorize", "piecewise"]


# --- functional helpers -----------------------------------------------------------------------------


def _vmap1(f: Callable, in_axes: Sequence, out_axis: int):
    """vmap of f over positional args (in_axes: int or None per arg); outputs may be pytrees."""
    from pyjax.core import pytree

    def wrapped(*args):
        sizes = {_aval(a).shape[ax] for a, ax in zip(args, in_axes) if ax is not None}
        if len(sizes) != 1:
            raise ValueError(f"vectorized arguments have inconsistent sizes {sorted(sizes)}")
        size = sizes.pop()
        store = {}

        def flat_f(*xs):
            out = f(*xs)
            leaves, store["tree"] = pytree.tree_flatten(out)
            return [_arr(leaf) for leaf in leaves]

        vals, dims = batching.vmap_flat(flat_f, size, list(in_axes), list(args))
        outs = []
        for v, d in zip(vals, dims):
            nd = _aval(v).ndim + (1 if d is None else 0)
            dst = out_axis % nd
            outs.append(batching.move_to(v, d, dst, size))
        return pytree.tree_unflatten(store["tree"], outs)

    return wrapped


def apply_along_axis(func1d: Callable, axis: int, arr, *args, **kwargs):
    """Apply func1d to the 1-D slices of arr along axis (vmapped over the other axes)."""
    a = _arr(arr)
    nd = _aval(a).ndim
    axis = canonical_axis(axis, nd, "apply_along_axis")

    def func(x):
        return func1d(x, *args, **kwargs)

    for i in builtins.range(1, nd - axis):
        func = _vmap1(func, (i,), -1)
    for _ in builtins.range(axis):
        func = _vmap1(func, (0,), 0)
    return func(a)


def apply_over_axes(func: Callable, a, axes: Sequence[int]):
    """Apply func(a, axis) repeatedly over axes, keeping the number of dimensions."""
    a = _arr(a)
    for axis in [axes] if isinstance(axes, builtins.int) else axes:
        b = func(a, axis)
        nd = _aval(a).ndim
        if _aval(b).ndim == nd:
            a = b
        elif _aval(b).ndim == nd - 1:
            a = _manipulation.expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


_DIMS = r"\w+"


_CORE = rf"(?:{_DIMS}(?:,{_DIMS})*)?"


_ARGS = rf"\({_CORE}\)(?:,\({_CORE}\))*"


_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature: str):
    sig = signature.replace(" ", "")
    if not _SIGNATURE.match(sig):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = sig.split("->")
    parse = lambda part: [tuple(re.findall(_DIMS, arg)) for arg in re.findall(rf"\({_CORE}\)", part)]  # noqa: E731
    return parse(ins), parse(outs)


class vectorize:
    """numpy.vectorize via vmap: pyfunc applied over broadcast leading (loop) dimensions; with a
    gufunc signature like '(n),(n)->()' the named core dimensions are passed whole."""

    def __init__(self, pyfunc: Callable, *, excluded=frozenset(), signature: str | None = None):
        self.pyfunc = pyfunc
        self.excluded = frozenset(excluded)
        self.signature = signature
        self.__doc__ = getattr(pyfunc, "__doc__", None)
        self.__name__ = getattr(pyfunc, "__name__", "vectorized")

    def __call__(self, *args, **kwargs):
        excluded = self.excluded
        static_kw = {k: v for k, v in kwargs.items() if k in excluded}
        dyn_kw = [(k, v) for k, v in kwargs.items() if k not in excluded]
        dyn_idx = [i for i in builtins.range(len(args)) if i not in excluded]
        dyn = [_arr(args[i]) for i in dyn_idx] + [_arr(v) for _, v in dyn_kw]
        n_pos = len(dyn_idx)

        def call(*xs):
            full = list(args)
            for i, x in zip(dyn_idx, xs[:n_pos]):
                full[i] = x
            kw = dict(static_kw)
            kw.update({k: x for (k, _), x in zip(dyn_kw, xs[n_pos:])})
            return self.pyfunc(*full, **kw)

        if self.signature is None:
            core_dims = [()] * len(dyn)
            out_core = None
        else:
            core_dims, out_core = _parse_signature(self.signature)
            if len(core_dims) != len(dyn):
                raise TypeError(f"wrong number of positional arguments: expected {len(core_dims)}, got {len(dyn)}")
        sizes: dict = {}
        loop_shapes = []
        for x, cd in zip(dyn, core_dims):
            shape = _aval(x).shape
            if len(cd) > len(shape):
                raise ValueError(
                    f"input with shape {shape} does not have enough dimensions for all core "
                    f"dimensions {cd} of signature {self.signature}"
                )
            for name, s in zip(cd, shape[len(shape) - len(cd) :]):
                if sizes.setdefault(name, s) != s:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: {sizes[name]} vs {s}")
            loop_shapes.append(shape[: len(shape) - len(cd)])
        loop = broadcast_shapes(*loop_shapes) if loop_shapes else ()
        xs = []
        for x, ls in zip(dyn, loop_shapes):
            core_shape = _aval(x).shape[len(ls) :]
            xs.append(broadcast_to(x, tuple(loop) + core_shape) if ls != tuple(loop) else x)
        f = call
        for _ in builtins.range(len(loop)):
            f = _vmap1(f, (0,) * len(xs), 0)
        out = f(*xs)
        if out_core is not None:
            outs = out if isinstance(out, builtins.tuple) else (out,)
            if len(outs) != len(out_core):
                raise ValueError(f"wrong number of outputs from pyfunc: expected {len(out_core)}, got {len(outs)}")
            for o, cd in zip(outs, out_core):
                shape = _aval(o).shape[len(loop) :]
                if len(shape) != len(cd):
                    raise ValueError(f"output shape {shape} does not match core dimensions {cd}")
                for name, s in zip(cd, shape):
                    if sizes.setdefault(name, s) != s:
                        raise ValueError(f"inconsistent size for core dimension {name!r}: {sizes[name]} vs {s}")
        return out


def piecewise(x, condlist, funclist, *args, **kw):
    """Evaluate funclist[i] (a callable or a constant) where condlist[i] holds; a trailing extra
    function is the default. Later conditions win; every function sees all of x."""
    _check_arraylike("piecewise", x)
    x = _arr(x)
    xa = _aval(x)
    nc, nf = len(condlist), len(funclist)
    conds = asarray(condlist, dtype=dtypes.bool_) if not _is_array(condlist) else condlist.astype(bool)
    if nf == nc + 1:
        default, funcs = funclist[-1], list(funclist[:-1])
    elif nf == nc:
        default, funcs = 0, list(funclist)
    else:
        raise ValueError(f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}")

    def value(f):
        v = f(x, *args, **kw) if callable(f) else f
        v = _to_dtype(v, xa.dtype)
        return broadcast_to(v, xa.shape)

    out = value(default)
    for i, f in enumerate(funcs):
        out = _elementwise.where(conds[i], value(f), out)
    return out
