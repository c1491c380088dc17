"""jax.numpy core: array creation, dtype promotion, broadcasting, elementwise math, reductions,
shape manipulation and linear algebra products, composed from lax primitives."""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import core, dtypes
from pyjax.core import hooks as _hooks
from pyjax.core.core import Tracer, get_aval
from pyjax.core.dtypes import DType
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.numpy import _keys
from pyjax.runtime import execute as _execute
from pyjax.runtime.array import Array

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None

ndarray = Array
_SCALARS = (builtins.int, builtins.float, builtins.bool, builtins.complex)


def _is_array(x) -> bool:
    return isinstance(x, (Array, Tracer))


def _aval(x):
    return get_aval(x)


# --- creation ---------------------------------------------------------------------------------


def _infer_dtype_from_nested(obj):
    """(flat values, shape, dtype, weak) of nested lists/tuples of scalars and arrays."""
    if isinstance(obj, (list, tuple)):
        if not obj:
            return [], (0,), dtypes.default_float(), False
        parts = [_infer_dtype_from_nested(o) for o in obj]
        shape0 = parts[0][1]
        for p in parts:
            if p[1] != shape0:
                raise ValueError(
                    "setting an array element with a sequence. The requested array has an "
                    "inhomogeneous shape after 1 dimensions."
                )
        d, weak = dtypes.promote([(p[2], p[3]) for p in parts])
        flat = [v for p in parts for v in p[0]]
        return flat, (len(obj),) + shape0, d, weak
    if isinstance(obj, _SCALARS):
        return [obj], (), dtypes.python_scalar_dtype(obj), type(obj) is not builtins.bool
    if isinstance(obj, Array):
        return obj._flat_list(), obj.shape, obj.dtype, obj.weak_type
    if _np is not None and isinstance(obj, (_np.ndarray, _np.generic)):
        a = _np.asarray(obj)
        return a.reshape(-1).tolist(), a.shape, dtypes.canonicalize(a.dtype), False
    raise TypeError(
        f"Value {obj!r} with type {type(obj)} is not a valid JAX array type. Only arrays of numeric "
        f"types are supported by JAX."
    )


def asarray(a, dtype=None, order=None, *, copy=None, device=None) -> Array:
    """Convert to a pyjax array (no copy for pyjax arrays of the right dtype)."""
    if dtype is not None:
        dtype = dtypes.canonicalize(dtype)
    if isinstance(a, Tracer):
        return a if dtype is None else lax.convert_element_type(a, dtype)
    if isinstance(a, Array):
        if dtype is not None and a.dtype is not dtype:
            return lax.convert_element_type(a, dtype)
        if device is not None:
            from pyjax.api import device_put

            return device_put(a, device)
        return a
    if isinstance(a, _SCALARS):
        d = dtypes.python_scalar_dtype(a) if dtype is None else dtype
        return _execute.make_scalar(a, d, dtype is None and type(a) is not builtins.bool)
    if _np is not None and isinstance(a, (_np.ndarray, _np.generic)):
        if a.dtype.kind in "OUSV" and a.dtype.name != "bfloat16":  # ml_dtypes' bfloat16 is kind V
            raise TypeError(f"JAX only supports number and bool dtypes, got array with dtype {a.dtype}")
        return _execute.from_numpy(_np.asarray(a), device, dtype)
    if isinstance(a, _keys.PRNGKeyArray) and dtype in (None, _keys.KEY_DTYPE):
        return a  # typed keys pass through, as in JAX (numeric functions reject them themselves)
    if hasattr(a, "__jax_array__"):
        return asarray(a.__jax_array__(), dtype)
    if isinstance(a, (list, tuple)):
        leaves = list(_flatten_nested(a))
        if _keys.any_key(*leaves):
            return stack([asarray(v) for v in a])
        if builtins.any(isinstance(v, Tracer) for v in leaves):
            return stack([asarray(v) for v in a]).astype(dtype) if dtype else stack([asarray(v) for v in a])
        flat, shape, d, weak = _infer_dtype_from_nested(a)
        target = dtype or d
        if _np is not None:
            arr = _np.array(flat, dtype=_np.dtype(target.name) if target.name != "bfloat16" else None)
            out = _execute.from_numpy(arr.reshape(shape), device, target, False)
        else:
            from pyjax.runtime.array import _pack_scalar

            raw = b"".join(_pack_scalar(v, target) for v in flat)
            from pyjax.core.core import ShapedArray

            out = _execute.from_bytes(raw, ShapedArray(shape, target, False), device)
        return out
    if hasattr(a, "__array__") and _np is not None:
        return asarray(_np.asarray(a), dtype)
    raise TypeError(f"Value {a!r} with type {type(a)} is not a valid JAX array type.")


_hooks.register(asarray=asarray)  # scalar types called as constructors, unpickling (core/hooks.py)


def _flatten_nested(a):
    if isinstance(a, (list, tuple)):
        for v in a:
            yield from _flatten_nested(v)
    else:
        yield a


def array(object, dtype=None, copy=True, order="K", ndmin=0, *, device=None) -> Array:
    out = asarray(object, dtype, device=device)
    if copy and isinstance(object, Array) and out is object:
        out = lax.bind_copy(out) if hasattr(lax, "bind_copy") else core.bind(lax.copy_p, out)
    if ndmin > out.ndim:
        out = reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return out


def _shape_tuple(shape):
    if isinstance(shape, (builtins.int,)) or (hasattr(shape, "__index__") and not isinstance(shape, (tuple, list))):
        return (operator.index(shape),)
    return tuple(operator.index(s) for s in shape)


def _check_shape(fn, shape):
    for s in shape:
        if s < 0:
            raise TypeError(f"{fn}: negative dimensions are not allowed, got shape {shape}")


def zeros(shape, dtype=None, *, device=None):
    shape = _shape_tuple(shape)
    _check_shape("zeros", shape)
    return lax.full(shape, 0, dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float())


def ones(shape, dtype=None, *, device=None):
    shape = _shape_tuple(shape)
    _check_shape("ones", shape)
    return lax.full(shape, 1, dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float())


def empty(shape, dtype=None, *, device=None):
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None, *, device=None):
    shape = _shape_tuple(shape)
    _check_shape("full", shape)
    if (
        _is_array(fill_value)
        or isinstance(fill_value, (list, tuple))
        or (_np is not None and isinstance(fill_value, _np.ndarray))
    ):
        fv = asarray(fill_value, dtype)
        return broadcast_to(fv, shape)
    if dtype is None:
        return broadcast_to(asarray(fill_value), shape)  # a Python scalar fill stays weakly typed, as in JAX
    return lax.full(shape, fill_value, dtypes.canonicalize(dtype))


def _keep_weak(a, out, dtype):
    """*_like of a weakly typed array, without a dtype, is weakly typed too (as in JAX)."""
    if dtype is None and _aval(a).weak_type and not _aval(out).weak_type:
        return lax._convert(out, _aval(out).dtype, True)
    return out


def _like_operand(a):
    """*_like's first argument: an array, or anything with a shape and dtype (a ShapeDtypeStruct), as in JAX."""
    return a if _is_array(a) or type(a) in core.pytype_aval_mappings else asarray(a)


def zeros_like(a, dtype=None, shape=None, *, device=None):
    if isinstance(a, _keys.PRNGKeyArray):
        return _keys.full_like(a, 0, dtype, shape)
    a = _like_operand(a)
    return _keep_weak(a, full(_aval(a).shape if shape is None else shape, 0, dtype or _aval(a).dtype), dtype)


def ones_like(a, dtype=None, shape=None, *, device=None):
    if isinstance(a, _keys.PRNGKeyArray):
        return _keys.full_like(a, 1, dtype, shape)
    a = _like_operand(a)
    return _keep_weak(a, full(_aval(a).shape if shape is None else shape, 1, dtype or _aval(a).dtype), dtype)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    if isinstance(a, _keys.PRNGKeyArray):
        return _keys.full_like(a, fill_value, dtype, shape)
    a = _like_operand(a)
    out = full(_aval(a).shape if shape is None else shape, fill_value, dtype or _aval(a).dtype)
    return out if _is_array(fill_value) and _aval(fill_value).shape else _keep_weak(a, out, dtype)


def empty_like(a, dtype=None, shape=None, *, device=None):
    return zeros_like(a, dtype, shape)


def _concrete_scalar(x, fn):
    if isinstance(x, Tracer):
        x = core.concrete_or_error(x, f"The {fn} argument must be concrete (static); use a Python number.")
    if isinstance(x, Array):
        return x.item()
    return x


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """jnp.arange with static bounds; int bounds give int32 (default int), floats float32."""
    start = _concrete_scalar(start, "arange")
    stop = _concrete_scalar(stop, "arange") if stop is not None else None
    step = _concrete_scalar(step, "arange") if step is not None else None
    if stop is None:
        start, stop = 0, start
    if step is None:
        step = 1
    if step == 0:
        raise ValueError("arange: step cannot be zero")
    if dtype is None:
        d, _ = dtypes.promote([(dtypes.python_scalar_dtype(v), False) for v in (start, stop, step)])
        if builtins.all(isinstance(v, (builtins.int, builtins.bool)) for v in (start, stop, step)):
            d = dtypes.default_int()
    else:
        d = dtypes.canonicalize(dtype)
    n = builtins.max(0, math.ceil((stop - start) / step))
    if d.kind in "iu" and builtins.all(isinstance(v, builtins.int) for v in (start, step)):
        out = lax.iota(d, n)
        if step != 1:
            out = lax.mul(out, lax._promote_scalars(step, out)[0])
        if start != 0:
            out = lax.add(out, lax._promote_scalars(start, out)[0])
        return out
    idx = lax.iota(dtypes.default_float() if d.kind != "f" else d, n)
    out = lax.add(lax.mul(idx, step), start)
    return lax.convert_element_type(out, d)


def linspace(start, stop, num: int = 50, endpoint: bool = True, retstep: bool = False, dtype=None, axis: int = 0):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start_a, stop_a = asarray(start), asarray(stop)
    d = (
        dtypes.canonicalize(dtype)
        if dtype is not None
        else dtypes.promote(
            [(start_a.dtype, start_a.weak_type), (stop_a.dtype, stop_a.weak_type), (dtypes.default_float(), True)]
        )[0]
    )
    ct = d if d.kind in "fc" else dtypes.default_float()
    s = lax.convert_element_type(start_a, ct)
    e = lax.convert_element_type(stop_a, ct)
    bshape = broadcast_shapes(s.shape, e.shape)
    s, e = broadcast_to(s, bshape), broadcast_to(e, bshape)
    div = (num - 1) if endpoint else num
    iota_shape = (num,) + (1,) * len(bshape)
    it = reshape(lax.iota(ct, num), iota_shape)
    delta = lax.sub(e, s)
    step = (
        lax.div(delta, lax.full(delta.shape, builtins.max(div, 1), ct))
        if div > 0
        else lax.full(delta.shape, math.nan, ct)
    )
    out = lax.add(
        broadcast_to(s, (num,) + bshape),
        lax.mul(broadcast_to(it, (num,) + bshape), broadcast_to(step, (num,) + bshape))
        if div > 0
        else zeros((num,) + bshape, ct),
    )
    if endpoint and num > 1:
        out = concatenate([out[:-1], expand_dims(e, 0)], axis=0)
    out = moveaxis(out, 0, axis)
    out = lax.convert_element_type(out, d) if d.kind != "f" else out
    if retstep:
        return out, step
    return out


def eye(N, M=None, k=0, dtype=None, *, device=None):
    M = N if M is None else M
    d = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    r = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    c = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    return lax.convert_element_type(lax.eq(lax.add(r, k), c), d)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    d = dtypes.canonicalize(dtype) if dtype is not None else dtypes.default_float()
    r = lax.broadcasted_iota(dtypes.int32, (N, M), 0)
    c = lax.broadcasted_iota(dtypes.int32, (N, M), 1)
    return lax.convert_element_type(lax.ge(lax.add(r, k), c), d)


# --- promotion and broadcasting --------------------------------------------------------------


def result_type(*args) -> DType:
    """jnp.result_type with JAX's weak-type lattice."""
    items = []
    for a in args:
        if isinstance(a, (DType, str, type)) or (hasattr(a, "dtype") and isinstance(a, type)):
            try:  # canonicalized before the join, as in JAX: (int8, uint64) -> int32 without x64
                items.append((dtypes.canonicalize(a), False))
                continue
            except TypeError:
                pass
        if isinstance(a, _SCALARS):
            items.append((dtypes.python_scalar_dtype(a), type(a) is not builtins.bool))
        elif _is_array(a):
            av = _aval(a)
            items.append((av.dtype, av.weak_type))
        elif _np is not None and isinstance(a, _np.dtype):
            items.append((dtypes.canonicalize(a), False))
        elif hasattr(a, "dtype"):
            items.append((dtypes.canonicalize(a.dtype), False))
        else:
            items.append((dtypes.canonicalize(a), False))
    if not items:
        raise ValueError("at least one array or dtype is required")
    return dtypes.promote(items)[0]


def _weak_result(*args):
    items = []
    for a in args:
        if isinstance(a, _SCALARS):
            items.append((dtypes.python_scalar_dtype(a), type(a) is not builtins.bool))
        else:
            av = _aval(a)
            items.append((av.dtype, av.weak_type))
    return dtypes.promote(items)


def broadcast_shapes(*shapes):
    shapes = [tuple(s) for s in shapes]
    nd = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {s[i - nd + len(s)] for s in shapes if i - nd + len(s) >= 0}
        sizes.discard(1)
        if len(sizes) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}")
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x, shape):
    if isinstance(x, _keys.PRNGKeyArray):
        return _keys.broadcast_to(x, shape)
    x = x if _is_array(x) else asarray(x)
    shape = _shape_tuple(shape)
    xs = _aval(x).shape
    if xs == shape:
        return x
    nd = len(shape)
    if len(xs) > nd or builtins.any(a not in (1, b) for a, b in zip(xs, shape[nd - len(xs) :])):
        raise ValueError(f"Incompatible shapes for broadcasting: {xs} and requested shape {shape}")
    dims = tuple(range(nd - len(xs), nd))
    # size-1 axes that stay 1 are fine; drop nothing
    return lax.broadcast_in_dim(x, shape, dims)


def broadcast_arrays(*args):
    args = [a if _is_array(a) or isinstance(a, _keys.PRNGKeyArray) else asarray(a) for a in args]
    shape = broadcast_shapes(*[a.shape for a in args])
    return [broadcast_to(a, shape) for a in args]


def _check_int_range(x: int) -> None:
    """JAX passes Python ints to its numpy functions as default-int arguments: out of that range is an
    OverflowError even when the other operand is narrower (which then wraps) or floating."""
    info = dtypes.iinfo(dtypes.default_int())
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {dtypes.default_int().name}")


def _promote(fn: str, *args, to_float: bool = False, keep_int: bool = False):
    """Promote dtypes (weak-type aware) and broadcast shapes of jnp function arguments."""
    args = tuple(a if _is_array(a) or isinstance(a, _SCALARS) else asarray(a) for a in args)
    for a in args:
        if type(a) is builtins.int:
            _check_int_range(a)
    d, weak = _weak_result(*args)
    if to_float and d.kind not in "fc":
        d, weak = dtypes.default_float(), False if not weak else weak
        if builtins.all(isinstance(a, _SCALARS) for a in args):
            weak = True
    out = []
    for a in args:
        if isinstance(a, _SCALARS):
            out.append(_execute.make_scalar(a, d, weak))
        else:
            if not _is_array(a):
                a = asarray(a)
            av = _aval(a)
            if av.dtype is not d or av.weak_type != weak:
                a = lax._convert(a, d, weak)
            out.append(a)
    shapes = [_aval(a).shape for a in out]
    if builtins.any(s != shapes[0] for s in shapes):
        try:
            shape = broadcast_shapes(*shapes)
        except ValueError:
            if builtins.all(len(s) == len(shapes[0]) for s in shapes):  # JAX: equal ranks fail in lax, a TypeError
                raise TypeError(
                    f"{fn} got incompatible shapes for broadcasting: {', '.join(str(s) for s in shapes)}."
                ) from None
            raise ValueError(f"{fn}: Incompatible shapes for broadcasting: shapes={shapes}") from None
        out = [broadcast_to(a, shape) for a in out]
    return out


def _check_arraylike(fn, *args):
    for i, a in enumerate(args):
        if not (
            _is_array(a) or isinstance(a, _SCALARS) or (_np is not None and isinstance(a, (_np.ndarray, _np.generic)))
        ):
            if isinstance(a, (list, tuple)):
                raise TypeError(f"{fn} requires ndarray or scalar arguments, got {type(a).__name__} at position {i}.")
            raise TypeError(f"{fn} requires ndarray or scalar arguments, got {type(a).__name__} at position {i}.")


def _unary(name, lax_fn, to_float=True, kinds=None):
    def f(x, /):
        _check_arraylike(name, x)
        (x,) = _promote(name, x, to_float=to_float)
        return lax_fn(x)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} (jax.numpy.{name})."
    return f


def _binary(name, lax_fn, to_float=False):
    def f(x1, x2, /):
        _check_arraylike(name, x1, x2)
        x1, x2 = _promote(name, x1, x2, to_float=to_float)
        return lax_fn(x1, x2)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} (jax.numpy.{name})."
    return f


sin = _unary("sin", lax.sin)
cos = _unary("cos", lax.cos)
tan = _unary("tan", lax.tan)
arcsin = _unary("arcsin", lax.asin)
arccos = _unary("arccos", lax.acos)
arctan = _unary("arctan", lax.atan)
sinh = _unary("sinh", lax.sinh)
cosh = _unary("cosh", lax.cosh)
tanh = _unary("tanh", lax.tanh)
arcsinh = _unary("arcsinh", lax.asinh)
arccosh = _unary("arccosh", lax.acosh)
arctanh = _unary("arctanh", lax.atanh)
exp = _unary("exp", lax.exp)
exp2 = _unary("exp2", lax.exp2)
log = _unary("log", lax.log)
log1p = _unary("log1p", lax.log1p)
expm1 = _unary("expm1", lax.expm1)
sqrt = _unary("sqrt", lax.sqrt)
cbrt = _unary("cbrt", lax.cbrt)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


def log2(x, /):
    (x,) = _promote("log2", x, to_float=True)
    return _log_scaled(x, 1.0 / math.log(2.0))


def _log_scaled(x, c: float):
    """log(x) * c; a complex log is scaled part by part, as a complex product would turn
    log(0) = -inf + 0j into -inf + nan j."""
    y = lax.log(x)
    if x.dtype.kind == "c":
        return lax.complex(lax.mul(lax.real(y), c), lax.mul(lax.imag(y), c))
    return lax.mul(y, c)


def log10(x, /):
    (x,) = _promote("log10", x, to_float=True)
    return _log_scaled(x, 1.0 / math.log(10.0))


def negative(x, /):
    (x,) = _promote("negative", x)
    if x.dtype is dtypes.bool_:
        raise TypeError("negative does not accept dtype bool.")
    return lax.neg(x)


def positive(x, /):
    (x,) = _promote("positive", x)
    return x


def absolute(x, /):
    (x,) = _promote("absolute", x)
    if x.dtype.kind in "ub":
        return x
    return lax.abs(x)


abs = absolute


def fabs(x, /) -> Array:
    """Elementwise |x| for real x (jax.numpy.fabs); complex input raises TypeError, as in JAX."""
    _check_arraylike("fabs", x)
    (x,) = _promote("fabs", x, to_float=True)
    if x.dtype.kind == "c":
        raise TypeError("ufunc 'fabs' does not support complex dtypes")
    return lax.abs(x)


def sign(x, /):
    (x,) = _promote("sign", x)
    if x.dtype.kind == "b":
        raise TypeError("sign does not accept dtype bool. Accepted dtypes are subtypes of integer, floating.")
    return lax.sign(x)


def floor(x, /):
    (x,) = _promote("floor", x)
    return x if x.dtype.kind not in "fc" else lax.floor(x)


def ceil(x, /):
    (x,) = _promote("ceil", x)
    return x if x.dtype.kind not in "fc" else lax.ceil(x)


def trunc(x, /):
    (x,) = _promote("trunc", x)
    return x if x.dtype.kind not in "fc" else where(lax.lt(x, 0.0), lax.ceil(x), lax.floor(x))


fix = trunc


def rint(x, /):
    (x,) = _promote("rint", x, to_float=True)
    return lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN)


def round(a, decimals: int = 0, out=None):
    (a,) = _promote("round", a)
    if a.dtype.kind == "b":
        raise ValueError("round: data type bool not inexact")
    if a.dtype.kind == "c":  # each part on its own
        return lax.complex(round(lax.real(a), decimals), round(lax.imag(a), decimals))
    if a.dtype.kind != "f":
        if decimals >= 0:
            return a
        f = 10 ** (-decimals)
        af = lax.convert_element_type(a, dtypes.default_float())
        r = lax.mul(lax.round(lax.div(af, float(f)), lax.RoundingMethod.TO_NEAREST_EVEN), float(f))
        return lax.convert_element_type(r, a.dtype)
    if decimals == 0:
        return lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN)
    f = float(10**decimals)
    return lax.div(lax.round(lax.mul(a, f), lax.RoundingMethod.TO_NEAREST_EVEN), f)


around = round


def square(x, /):
    (x,) = _promote_numeric("square", x)
    return lax.mul(x, x)


def reciprocal(x, /):
    (x,) = _promote("reciprocal", x, to_float=True)
    return lax.div(lax.full_like(x, 1), x)


def _float_test(name: str, x, other_answer: bool, combine, test):
    """isfinite/isnan/isinf: `test` on real floats; keys and other non-float dtypes give
    `other_answer` everywhere; a complex value `combine`s the tests of its two parts."""
    if isinstance(x, _keys.PRNGKeyArray):
        return full(x.shape, other_answer, dtypes.bool_)
    (x,) = _promote(name, x)
    if x.dtype.kind == "c":
        return combine(*(_float_test(name, part, other_answer, combine, test) for part in (lax.real(x), lax.imag(x))))
    if x.dtype.kind != "f":
        return full(x.shape, other_answer, dtypes.bool_)
    return test(x)


def _finite(x):
    out = lax.is_finite(x)
    return lax._convert(out, dtypes.bool_, True) if x.aval.weak_type else out


def _infinite(x):
    out = lax.eq(lax.abs(x), math.inf)
    return lax._convert(out, dtypes.bool_, False) if _aval(out).weak_type else out  # JAX's isinf is never weak


def isfinite(x, /):
    return _float_test("isfinite", x, True, lax.bitwise_and, _finite)


def isnan(x, /):
    return _float_test("isnan", x, False, lax.bitwise_or, lambda x: lax.ne(x, x))


def isinf(x, /):
    return _float_test("isinf", x, False, lax.bitwise_or, _infinite)


def _no_complex_inf(x) -> None:
    if x.dtype.kind == "c":  # +inf has no single complex counterpart
        raise ValueError("isposinf/isneginf are not well defined for complex types")


def isposinf(x, /):
    (x,) = _promote("isposinf", x)
    _no_complex_inf(x)
    return lax.eq(x, math.inf) if x.dtype.kind == "f" else full(x.shape, False, dtypes.bool_)


def isneginf(x, /):
    (x,) = _promote("isneginf", x)
    _no_complex_inf(x)
    return lax.eq(x, -math.inf) if x.dtype.kind == "f" else full(x.shape, False, dtypes.bool_)


def signbit(x, /):
    (x,) = _promote("signbit", x)
    if x.dtype.kind in "ub":
        return full(x.shape, False, dtypes.bool_)
    if x.dtype.kind == "i":
        return lax.lt(x, 0)
    if x.dtype.kind == "c":
        raise ValueError(f"jax.numpy.signbit is not well defined for {x.dtype.name}")
    bits = lax.bitcast_convert_type(x, {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[x.dtype.itemsize])
    return lax.lt(bits, 0)


def _promote_numeric(fn: str, *args):
    """Promote like _promote, then booleans become the default integer (JAX's promote_args_numeric)."""
    out = _promote(fn, *args)
    if _aval(out[0]).dtype is dtypes.bool_:
        out = [lax.convert_element_type(a, dtypes.default_int()) for a in out]
    return out


def add(x1, x2, /):
    """Elementwise x1 + x2 (logical or for booleans)."""
    _check_arraylike("add", x1, x2)
    x1, x2 = _promote("add", x1, x2)
    return lax.bitwise_or(x1, x2) if x1.dtype is dtypes.bool_ else lax.add(x1, x2)


def multiply(x1, x2, /):
    """Elementwise x1 * x2 (logical and for booleans)."""
    _check_arraylike("multiply", x1, x2)
    x1, x2 = _promote("multiply", x1, x2)
    return lax.bitwise_and(x1, x2) if x1.dtype is dtypes.bool_ else lax.mul(x1, x2)


subtract = _binary("subtract", lax.sub)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, to_float=True)
atan2 = arctan2
nextafter = _binary("nextafter", lax.nextafter, to_float=True)
equal = _keys.comparing(_binary("equal", lax.eq), operator.eq)
not_equal = _keys.comparing(_binary("not_equal", lax.ne), operator.ne)
less = _binary("less", lax.lt)
less_equal = _binary("less_equal", lax.le)
greater = _binary("greater", lax.gt)
greater_equal = _binary("greater_equal", lax.ge)


def _bool_or_bitwise(name, lax_fn):
    def f(x1, x2, /):
        x1, x2 = _promote(name, x1, x2)
        if x1.dtype.kind == "f":
            raise TypeError(f"{name} is not supported for floating-point dtypes, got {x1.dtype.name}.")
        return lax_fn(x1, x2)

    f.__name__ = name
    return f


bitwise_and = _bool_or_bitwise("bitwise_and", lax.bitwise_and)
bitwise_or = _bool_or_bitwise("bitwise_or", lax.bitwise_or)
bitwise_xor = _bool_or_bitwise("bitwise_xor", lax.bitwise_xor)


def bitwise_not(x, /):
    (x,) = _promote("bitwise_not", x)
    if x.dtype.kind == "f":
        raise TypeError(f"bitwise_not is not supported for floating-point dtypes, got {x.dtype.name}.")
    return lax.bitwise_not(x)


invert = bitwise_invert = bitwise_not


def _logical(name, lax_fn):
    def f(x1, x2, /):
        a = lax.ne(*_promote(name, x1, 0)) if _aval_or(x1).dtype is not dtypes.bool_ else asarray(x1)
        b = lax.ne(*_promote(name, x2, 0)) if _aval_or(x2).dtype is not dtypes.bool_ else asarray(x2)
        a, b = _promote(name, a, b)
        return lax_fn(a, b)

    f.__name__ = name
    return f


def _aval_or(x):
    return _aval(x if _is_array(x) else asarray(x))


logical_and = _logical("logical_and", lax.bitwise_and)
logical_or = _logical("logical_or", lax.bitwise_or)
logical_xor = _logical("logical_xor", lax.bitwise_xor)


def logical_not(x, /):
    x = x if _is_array(x) else asarray(x)
    if _aval(x).dtype is not dtypes.bool_:
        x = lax.ne(*_promote("logical_not", x, 0))
    return lax.bitwise_not(x)


def left_shift(x1, x2, /):
    x1, x2 = _promote_numeric("left_shift", x1, x2)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    x1, x2 = _promote_numeric("right_shift", x1, x2)
    if x1.dtype.kind == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def true_divide(x1, x2, /):
    x1, x2 = _promote("true_divide", x1, x2, to_float=True)
    return lax.div(x1, x2)


divide = true_divide


def floor_divide(x1, x2, /):
    x1, x2 = _promote_numeric("floor_divide", x1, x2)
    if x1.dtype.kind in "iu":
        q = lax.div(x1, x2)
        if x1.dtype.kind == "u":
            return q
        # Round toward -inf when signs differ and the division is inexact (sign test as JAX, also for x2 == 0).
        r = lax.rem(x1, x2)
        fix_ = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.sign(x1), lax.sign(x2)))
        return lax.select(fix_, lax.sub(q, lax.full_like(q, 1)), q)
    # floats: (x1 - fmod(x1, x2)) / x2, stepped down when the remainder's sign differs from x2's (JAX's rule:
    # exact quotients, and nan where the remainder is nan, e.g. inf // 1)
    mod = lax.rem(x1, x2)
    div = lax.div(lax.select(lax.eq(x2, 0.0), x1, lax.sub(x1, mod)), x2)  # x / 0 stays +-inf
    fix_ = lax.bitwise_and(lax.ne(mod, 0.0), lax.ne(lax.sign(x2), lax.sign(mod)))
    div = lax.select(fix_, lax.sub(div, lax.full_like(div, 1)), div)
    return lax.round(div, lax.RoundingMethod.TO_NEAREST_EVEN)


def remainder(x1, x2, /):
    x1, x2 = _promote_numeric("remainder", x1, x2)
    r = lax.rem(x1, x2)
    if x1.dtype.kind == "u":
        return lax.select(lax.eq(x2, 0), lax.full_like(r, 0), r)  # x % 0 is 0, as in JAX
    fix_ = lax.bitwise_and(lax.ne(r, 0), lax.ne(lax.lt(r, 0), lax.lt(x2, 0)))
    if x1.dtype.kind in "iu":
        r = lax.select(lax.eq(x2, 0), lax.full_like(r, 0), r)
    return lax.select(fix_, lax.add(r, x2), r)


mod = remainder


def fmod(x1, x2, /):
    x1, x2 = _promote_numeric("fmod", x1, x2)
    return lax.rem(x1, x2)


def divmod(x1, x2, /):
    return floor_divide(x1, x2), remainder(x1, x2)


def _concrete_int_exponent(x2) -> int | None:
    """x2 as an int where operator.index takes it (JAX then uses integer_pow, keeping the base's dtype and
    weak type): numpy integers and concrete 0-d integer or bool arrays; None otherwise."""
    if isinstance(x2, (Tracer, *_SCALARS)) or (isinstance(x2, Array) and (x2.ndim or x2.dtype.kind not in "iub")):
        return None
    try:
        return operator.index(x2)
    except TypeError:
        return None


def power(x1, x2, /):
    n = _concrete_int_exponent(x2)
    if isinstance(x2, builtins.int) and not isinstance(x2, builtins.bool) and not isinstance(x1, _SCALARS):
        n = x2
    if n is not None:
        (x1,) = _promote_numeric("power", x1)
        return lax.integer_pow(x1, n)  # an integer to a negative power: lax's TypeError
    exp_strong_int = _is_array(x2) and _aval(x2).dtype.kind in "iub" and not _aval(x2).weak_type
    x1, x2 = _promote_numeric("power", x1, x2)
    if x1.dtype.kind in "iu":
        return _int_power(x1, x2)
    out = lax.pow(x1, x2)
    if exp_strong_int and out.aval.weak_type:  # JAX: a float base with an integer-array exponent is not weak
        out = lax._convert(out, out.dtype, False)
    return out


pow = power


def _int_power(x, y):
    # square-and-multiply over the bits of y (y >= 0), vectorized with lax ops
    acc = lax.full_like(x, 1)
    base = x
    e = y
    for _ in range(x.dtype.bits):
        bit = lax.bitwise_and(e, lax.full_like(e, 1))
        acc = lax.select(lax.eq(bit, 1), lax.mul(acc, base), acc)
        base = lax.mul(base, base)
        e = lax.shift_right_logical(e, lax.full_like(e, 1))
    return acc


def float_power(x1, x2, /):
    x1, x2 = _promote("float_power", x1, x2, to_float=True)
    return lax.pow(x1, x2)


def logaddexp(x1, x2, /):
    x1, x2 = _promote("logaddexp", x1, x2, to_float=True)
    amax = lax.max(x1, x2)
    if x1.dtype.kind == "c":
        return _complex_logaddexp(x1, x2, amax)
    delta = lax.sub(x1, x2)
    safe = lax.select(isnan(delta), lax.full_like(delta, 0), delta)
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(safe)))))
    return lax.select(isnan(delta), lax.add(x1, x2), out)


def _complex_logaddexp(x1, x2, amax):
    """log(exp(x1) + exp(x2)) for complex inputs: amax + log1p(exp(other - amax)), with the imaginary
    part wrapped into [-pi, pi) as JAX does (the principal branch of the logarithm)."""
    other = lax.select(lax.eq(x1, amax), x2, x1)  # the one that is not amax, exactly
    out = lax.add(amax, lax.log1p(lax.exp(lax.sub(other, amax))))
    im = lax.imag(out)
    two_pi = lax.full_like(im, 2 * math.pi)
    r = lax.rem(lax.add(im, lax.full_like(im, math.pi)), two_pi)
    r = lax.select(lax.lt(r, lax.full_like(r, 0)), lax.add(r, two_pi), r)
    return lax.complex(lax.real(out), lax.sub(r, lax.full_like(r, math.pi)))


def logaddexp2(x1, x2, /):
    a1, a2 = x1, x2
    x1, x2 = _promote("logaddexp2", x1, x2, to_float=True)
    ln2 = math.log(2.0)
    return _strong_unless_all_weak(lax.div(logaddexp(lax.mul(x1, ln2), lax.mul(x2, ln2)), ln2), a1, a2)


def _strong_unless_all_weak(x, *args):
    """JAX's hypot/heaviside/logaddexp2 results are weakly typed only when every input is."""
    if _aval(x).weak_type and not builtins.all(
        isinstance(a, _SCALARS) or (_is_array(a) and _aval(a).weak_type) for a in args
    ):
        return lax._convert(x, _aval(x).dtype, False)
    return x


def hypot(x1, x2, /):
    a1, a2 = x1, x2
    x1, x2 = _promote("hypot", x1, x2, to_float=True)
    x1, x2 = lax.abs(x1), lax.abs(x2)
    big, small = lax.max(x1, x2), lax.min(x1, x2)
    safe = lax.select(lax.eq(big, 0.0), lax.full_like(big, 1), big)
    r = lax.div(small, safe)
    out = lax.mul(big, lax.sqrt(lax.add(lax.full_like(r, 1), lax.mul(r, r))))  # no overflow for large inputs
    out = lax.select(lax.eq(big, 0.0), big, out)
    out = lax.select(lax.bitwise_or(lax.eq(x1, math.inf), lax.eq(x2, math.inf)), lax.full_like(out, math.inf), out)
    return _strong_unless_all_weak(out, a1, a2)


def copysign(x1, x2, /):
    x1, x2 = _promote("copysign", x1, x2, to_float=True)
    return where(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def deg2rad(x, /):
    (x,) = _promote("deg2rad", x, to_float=True)
    return lax.mul(x, math.pi / 180)


def rad2deg(x, /):
    (x,) = _promote("rad2deg", x, to_float=True)
    return lax.mul(x, 180 / math.pi)


radians, degrees = deg2rad, rad2deg


def sinc(x, /):
    (x,) = _promote("sinc", x, to_float=True)
    px = lax.mul(x, math.pi)
    safe = where(lax.eq(x, 0.0), lax.full_like(x, 1.0), px)
    return where(lax.eq(x, 0.0), lax.full_like(x, 1.0), lax.div(lax.sin(safe), safe))


def heaviside(x1, x2, /):
    a1, a2 = x1, x2
    x1, x2 = _promote("heaviside", x1, x2, to_float=True)
    out = lax.select(lax.eq(x1, 0.0), x2, x1)  # nan stays nan
    out = lax.select(lax.gt(x1, 0.0), lax.full_like(x1, 1), out)
    out = lax.select(lax.lt(x1, 0.0), lax.full_like(x1, 0), out)
    return _strong_unless_all_weak(out, a1, a2)


def _check_integers(fn, *args):
    for a in args:
        if _aval(a).dtype.kind not in "iu":
            raise ValueError(f"Arguments to jax.numpy.{fn} must be integers.")


def gcd(x1, x2, /):
    x1, x2 = _promote("gcd", x1, x2)
    _check_integers("gcd", x1, x2)
    a, b = lax.abs(x1), lax.abs(x2)
    for _ in range(x1.dtype.bits * 2):
        nz = lax.ne(b, 0)
        safe_b = lax.select(nz, b, lax.full_like(b, 1))
        a, b = lax.select(nz, b, a), lax.select(nz, lax.rem(a, safe_b), b)
    return a


def lcm(x1, x2, /):
    x1, x2 = _promote("lcm", x1, x2)
    _check_integers("lcm", x1, x2)
    g = gcd(x1, x2)
    safe = lax.select(lax.eq(g, 0), lax.full_like(g, 1), g)
    return lax.select(lax.eq(g, 0), lax.full_like(g, 0), lax.abs(lax.mul(lax.div(x1, safe), x2)))


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """jnp.clip(x, min, max): NaN bounds propagate as in JAX."""
    x = arr if arr is not None else a
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    x = x if _is_array(x) else asarray(x)
    if builtins.any(v is not None and iscomplexobj(v) for v in (x, lo, hi)):  # no order to clip by
        raise ValueError(
            "Clip received a complex value either through the input or the min/max keywords. Complex values "
            "have no ordering and cannot be clipped. Please convert to a real value or array by taking the "
            "real or imaginary components via jax.numpy.real/imag respectively."
        )
    if lo is not None:
        x = maximum(lo, x) if not isinstance(lo, _SCALARS) else maximum(x, lo)
    if hi is not None:
        x = minimum(hi, x) if not isinstance(hi, _SCALARS) else minimum(x, hi)
    return x


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """jnp.where(c, x, y) elementwise; where(c) alone is nonzero (concrete only)."""
    if x is None and y is None:
        from pyjax.numpy._indexing import nonzero

        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError(
            "Either both or neither of the x and y arguments should be provided to jax.numpy.where, "
            "got " + ("x=None" if x is None else "y=None")
        )
    if _keys.any_key(x, y):  # selecting between typed PRNG keys
        return _keys.where(condition, x, y)
    c = condition if _is_array(condition) else asarray(condition)
    if _aval(c).dtype is not dtypes.bool_:
        c = lax.ne(*_promote("where", c, 0))
    x, y = _promote("where", x, y)
    shape = broadcast_shapes(_aval(c).shape, _aval(x).shape)
    return lax.select(broadcast_to(c, shape), broadcast_to(x, shape), broadcast_to(y, shape))


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = where(c, v, out)
    return asarray(out)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = x if _is_array(x) else asarray(x)
    if x.dtype.kind == "c":  # each part on its own
        parts = [nan_to_num(p, copy, nan, posinf, neginf) for p in (lax.real(x), lax.imag(x))]
        return lax.complex(*parts)
    if x.dtype.kind != "f":
        return x
    info = dtypes.finfo(x.dtype)
    x = where(isnan(x), nan, x)
    x = where(lax.eq(x, math.inf), info.max if posinf is None else posinf, x)
    return where(lax.eq(x, -math.inf), info.min if neginf is None else neginf, x)


# --- reductions ----------------------------------------------------------------------------------


def _reduce_axes(fn, x, axis):
    nd = _aval(x).ndim
    if axis is None:
        return tuple(range(nd))
    axes = (
        (axis,)
        if isinstance(axis, builtins.int) or hasattr(axis, "__index__") and not isinstance(axis, (tuple, list))
        else tuple(axis)
    )
    out = []
    for a in axes:
        a = operator.index(a)
        if not -nd <= a < nd:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {nd}")
        out.append(a % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: duplicate value in 'axis': {axis}")
    return tuple(sorted(out))


def _keep(y, shape, axes, keepdims):
    if not keepdims:
        return y
    return lax.reshape(y, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _strong(a):
    """The array as a concrete (non-weak) dtype: JAX's reductions never return weakly typed results."""
    a = a if _is_array(a) else asarray(a)
    av = _aval(a)
    return lax._convert(a, av.dtype, False) if av.weak_type else a


def _reduction(name, lax_fn, bool_op=None, upcast_bool_int=False, has_initial=True, identity=None):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
        if out is not None:
            raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
        a = _strong(a)
        axes = _reduce_axes(name, a, axis)
        av = _aval(a)
        if dtype is not None:
            a = lax.convert_element_type(a, dtype)
        elif (
            upcast_bool_int
            and av.dtype.kind in "bi"
            and av.dtype.itemsize < 4
            or (upcast_bool_int and av.dtype.kind == "b")
        ):
            a = lax.convert_element_type(a, dtypes.default_int())
        elif upcast_bool_int and av.dtype.kind == "u" and av.dtype.itemsize < 4:
            a = lax.convert_element_type(a, dtypes.uint32)
        if where is not None:
            if identity is None:
                if initial is None:
                    raise ValueError(
                        f"reduction operation {name} does not have an identity, so to use a where "
                        f"mask one has to specify 'initial'"
                    )
                fillv = initial
            else:
                fillv = identity(_aval(a).dtype)
            a = _where_fill(where, a, fillv)
        if identity is None and initial is None:
            for ax in axes:
                if av.shape[ax] == 0:
                    raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
        y = lax_fn(a, axes)
        if initial is not None:
            y = _combine_initial(name, y, initial)
        return _keep(y, av.shape, axes, keepdims)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: reduce over axis (None = all axes)."
    return f


def _where_fill(_where_fn, a, fillv):
    w = _where_fn if _is_array(_where_fn) else asarray(_where_fn)
    w = broadcast_to(w, _aval(a).shape)
    return lax.select(w, a, lax.full_like(a, fillv))


def _combine_initial(name, y, initial):
    if name in ("sum",):
        return add(y, initial)
    if name == "prod":
        return multiply(y, initial)
    if name in ("max", "amax"):
        return maximum(y, initial)
    if name in ("min", "amin"):
        return minimum(y, initial)
    return y


def _lax_sum(a, axes):
    if _aval(a).dtype is dtypes.bool_:
        a = lax.convert_element_type(a, dtypes.default_int())
    return lax.reduce_sum(a, axes)


def _lax_prod(a, axes):
    if _aval(a).dtype is dtypes.bool_:
        a = lax.convert_element_type(a, dtypes.default_int())
    return lax.reduce_prod(a, axes)


def _lax_max(a, axes):
    return lax.reduce_or(a, axes) if _aval(a).dtype is dtypes.bool_ else lax.reduce_max(a, axes)


def _lax_min(a, axes):
    return lax.reduce_and(a, axes) if _aval(a).dtype is dtypes.bool_ else lax.reduce_min(a, axes)


def _ident_zero(d):
    return 0


def _ident_one(d):
    return 1


sum = _reduction("sum", _lax_sum, upcast_bool_int=True, identity=_ident_zero)
prod = _reduction("prod", _lax_prod, upcast_bool_int=True, identity=_ident_one)
max = _reduction("max", _lax_max)
min = _reduction("min", _lax_min)
amax, amin = max, min


def _to_bool(a):
    a = _strong(a)
    if _aval(a).dtype is not dtypes.bool_:
        a = lax.ne(*_promote("any", a, 0))
    return a


def _truth_reduce(name: str, reduce, identity: bool, a, axis, keepdims, where):
    """all/any: `reduce` the truth values of a over axis, masked-out entries counting as `identity`."""
    a = _to_bool(a)
    axes = _reduce_axes(name, a, axis)
    if where is not None:
        a = _where_fill(where, a, identity)
    return _keep(reduce(a, axes), _aval(a).shape, axes, keepdims)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    return _truth_reduce("all", lax.reduce_and, True, a, axis, keepdims, where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    return _truth_reduce("any", lax.reduce_or, False, a, axis, keepdims, where)


alltrue, sometrue = all, any


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    a = _strong(a)
    axes = _reduce_axes("mean", a, axis)
    av = _aval(a)
    if dtype is None:
        d = av.dtype if av.dtype.kind in "fc" else dtypes.default_float()
    else:
        d = dtypes.canonicalize(dtype)
    x = lax.convert_element_type(a, d) if av.dtype is not d else a
    if where is not None:
        w = broadcast_to(where if _is_array(where) else asarray(where), av.shape)
        s = sum(x, axis=axes, keepdims=keepdims, where=w)
        n = sum(lax.convert_element_type(w, d), axis=axes, keepdims=keepdims)
        return lax.div(s, n)
    s = lax.reduce_sum(x, axes)
    n = _count(av.shape, axes)
    y = lax.div(s, lax.full_like(s, n)) if n else lax.div(s, lax.full_like(s, 0))
    return _keep(y, av.shape, axes, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    a = _strong(a)
    if correction is not None:
        ddof = correction
    axes = _reduce_axes("var", a, axis)
    av = _aval(a)
    d = (
        dtypes.canonicalize(dtype)
        if dtype is not None
        else (av.dtype if av.dtype.kind in "fc" else dtypes.default_float())
    )
    x = lax.convert_element_type(a, d) if av.dtype is not d else a
    m = mean(x, axis=axes, keepdims=True, where=where)
    c = lax.sub(x, broadcast_to(m, av.shape))
    if d.kind == "c":  # the variance of complex values is real: mean |x - mean|^2
        c = lax.abs(c)
        d = dtypes.real_dtype(d)
    sq = lax.mul(c, c)
    if where is not None:
        w = broadcast_to(where if _is_array(where) else asarray(where), av.shape)
        n = sum(lax.convert_element_type(w, d), axis=axes, keepdims=keepdims)
        s = sum(sq, axis=axes, keepdims=keepdims, where=w)
        return lax.div(s, lax.sub(n, float(ddof)))
    n = _count(av.shape, axes) - ddof
    s = lax.reduce_sum(sq, axes)
    y = lax.div(s, lax.full_like(s, builtins.max(n, 0)))
    return _keep(y, av.shape, axes, keepdims)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, correction=correction))


def _arg(name, lax_fn):
    def f(a, axis=None, out=None, keepdims=False):
        a = a if _is_array(a) else asarray(a)
        av = _aval(a)
        if axis is None:
            if av.size == 0:
                raise ValueError(f"attempt to get {name} of an empty sequence")
            flat = ravel(a)
            r = lax_fn(flat, 0, dtypes.default_int())
            return lax.reshape(r, (1,) * av.ndim) if keepdims else r
        (ax,) = _reduce_axes(name, a, axis)
        if av.shape[ax] == 0:  # nothing to choose from (an empty result along a full axis is fine)
            raise ValueError(f"attempt to get {name} of an empty sequence")
        r = lax_fn(a, ax, dtypes.default_int())
        return lax.expand_dims(r, (ax,)) if keepdims else r

    f.__name__ = name
    return f


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)


def _cumulative(name, lax_fn, bool_to_int=True):
    def f(a, axis=None, dtype=None, out=None):
        a = _strong(a)
        if axis is None:
            a = ravel(a)
            axis = 0
        (ax,) = _reduce_axes(name, a, axis)
        if dtype is not None:
            a = lax.convert_element_type(a, dtype)
        elif _aval(a).dtype.kind == "b" and bool_to_int:
            a = lax.convert_element_type(a, dtypes.default_int())
        return lax_fn(a, ax)

    f.__name__ = name
    return f


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)
cumulative_sum = cumsum
cumulative_prod = cumprod


def ptp(a, axis=None, out=None, keepdims=False):
    return subtract(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    return sum(lax.ne(*_promote("count_nonzero", a, 0)), axis=axis, keepdims=keepdims, dtype=dtypes.default_int())


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    a = a if _is_array(a) else asarray(a)
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        n = lax.full_like(avg, _count(a.shape, _reduce_axes("average", a, axis)))
        return (avg, n) if returned else avg
    w = weights if _is_array(weights) else asarray(weights)
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise ValueError("average: weights shape must match a, or be 1-D along axis")
        if w.shape[0] != a.shape[operator.index(axis) % a.ndim]:
            raise ValueError(
                f"average: shape of weights {w.shape} must be consistent with the length of axis {axis} of a {a.shape}"
            )
        shape = [1] * a.ndim
        shape[operator.index(axis) % a.ndim] = w.shape[0]
        w = reshape(w, shape)
    a, w = _promote("average", a, w, to_float=True)
    wsum = sum(broadcast_to(w, a.shape), axis=axis, keepdims=keepdims)
    avg = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), wsum)
    return (avg, wsum) if returned else avg


# --- shape manipulation ---------------------------------------------------------------------------


def shape(a):
    return _aval(a if _is_array(a) else asarray(a)).shape


def ndim(a):
    return _aval(a if _is_array(a) else asarray(a)).ndim


def size(a, axis=None):
    s = shape(a)
    return math.prod(s) if axis is None else s[axis]


def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    """jnp.reshape with -1 inference; order='F' reverses axes around a C reshape."""
    if shape is None:
        shape = newshape
    if isinstance(a, _keys.PRNGKeyArray):
        return a.reshape(shape)
    a = a if _is_array(a) else asarray(a)
    av = _aval(a)
    shape = _shape_tuple(shape)
    if builtins.sum(1 for s in shape if s == -1) > 1:
        raise TypeError(f"reshape: can only specify one unknown axis size with a `-1` value, got {shape}")
    if -1 in shape:
        known = math.prod(s for s in shape if s != -1)
        if known == 0 or av.size % known:
            raise TypeError(f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {shape}")
        shape = tuple(av.size // known if s == -1 else s for s in shape)
    if math.prod(shape) != av.size:
        raise TypeError(
            f"cannot reshape array of shape {av.shape} (size {av.size}) into shape {shape} (size {math.prod(shape)})"
        )
    if order == "F":
        return transpose(lax.reshape(transpose(a), shape[::-1]))
    return lax.reshape(a, shape)


def ravel(a, order="C"):
    a = a if _is_array(a) else asarray(a)
    return reshape(a, (-1,) if _aval(a).size else (0,), order=order)


def transpose(a, axes=None):
    a = a if _is_array(a) else asarray(a)
    nd = _aval(a).ndim
    if axes is None:
        axes = tuple(range(nd - 1, -1, -1))
    axes = tuple(operator.index(x) for x in axes)
    for x in axes:
        if not -nd <= x < nd:
            raise ValueError(f"transpose: axis {x} is out of bounds for array of dimension {nd}")
    if len(axes) != nd or sorted(x % nd if nd else x for x in axes) != list(range(nd)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got permutation {axes} "
            f"for operand shape {_aval(a).shape}."
        )
    return lax.transpose(a, tuple(x % nd for x in axes))


def permute_dims(a, axes):
    return transpose(a, axes)


def matrix_transpose(x, /):
    return swapaxes(x, -1, -2)


def moveaxis(a, source, destination):
    a = a if _is_array(a) else asarray(a)
    nd = _aval(a).ndim
    src = [source] if isinstance(source, builtins.int) else list(source)
    dst = [destination] if isinstance(destination, builtins.int) else list(destination)
    if len(src) != len(dst):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    src = [canonical_axis(s, nd, "moveaxis") for s in src]
    dst = [canonical_axis(d, nd, "moveaxis") for d in dst]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(a, tuple(order))


def swapaxes(a, axis1, axis2):
    a = a if _is_array(a) else asarray(a)
    nd = _aval(a).ndim
    perm = list(range(nd))
    i, j = canonical_axis(axis1, nd, "swapaxes"), canonical_axis(axis2, nd, "swapaxes")
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, tuple(perm))


def expand_dims(a, axis):
    if isinstance(a, _keys.PRNGKeyArray):
        return _keys.expand_dims(a, axis)
    a = a if _is_array(a) else asarray(a)
    axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
    nd = _aval(a).ndim + len(axes)
    norm = sorted(canonical_axis(x, nd, "expand_dims") for x in axes)
    if len(set(norm)) != len(norm):
        raise ValueError("repeated axis in expand_dims")
    return lax.expand_dims(a, norm)


def squeeze(a, axis=None):
    if isinstance(a, _keys.PRNGKeyArray):
        return a.squeeze(axis)
    a = a if _is_array(a) else asarray(a)
    shp = _aval(a).shape
    if axis is None:
        axes = tuple(i for i, s in enumerate(shp) if s == 1)
    else:
        axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
        axes = tuple(canonical_axis(x, len(shp), "squeeze") for x in axes)
        for x in axes:
            if shp[x] != 1:
                raise ValueError(
                    f"cannot select an axis to squeeze out which has size not equal to one, "
                    f"got shape={shp} and dimensions={axes}"
                )
    return lax.squeeze(a, axes)


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if ndim(a) == 0 else asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        out.append(reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = reshape(a, a.shape + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def concatenate(arrays, axis=0, dtype=None):
    if not isinstance(arrays, (list, tuple)) and not _is_array(arrays):
        raise TypeError("concatenate requires a sequence of arrays")
    arrays = list(arrays) if not _is_array(arrays) else [arrays[i] for i in range(len(arrays))]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if _keys.any_key(arrays):  # typed PRNG keys concatenate like arrays, as in JAX
        return _keys.concatenate(arrays, axis)
    arrs = [a if _is_array(a) else asarray(a) for a in arrays]
    if axis is None:
        arrs = [ravel(a) for a in arrs]
        axis = 0
    nd = _aval(arrs[0]).ndim
    if nd == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    for a in arrs:
        if _aval(a).ndim != nd:
            raise TypeError(
                f"Cannot concatenate arrays with different numbers of dimensions: got "
                f"{', '.join(str(_aval(x).shape) for x in arrs)}."
            )
    ax = canonical_axis(axis, nd, "concatenate")
    arrs = _promote_list(arrs)
    if dtype is not None:
        arrs = [lax.convert_element_type(a, dtype) for a in arrs]
    for a in arrs:
        sa, s0 = _aval(a).shape, _aval(arrs[0]).shape
        if builtins.any(x != y for i, (x, y) in enumerate(zip(sa, s0)) if i != ax):
            raise TypeError(
                f"Cannot concatenate arrays with shapes that differ in dimensions other than the one "
                f"being concatenated: concatenating along dimension {ax} for shapes "
                f"{', '.join(str(_aval(x).shape) for x in arrs)}. "
                f"All the input array dimensions except for the concatenation axis must match exactly, "
                f"but along dimension {[i for i, (x, y) in enumerate(zip(sa, s0)) if x != y and i != ax][0]}"
                f", the array at index 0 has size {s0} and the other array has shape {sa}"
            )
    return lax.concatenate(arrs, ax)


def _same_dtype(arrs):
    a0 = _aval(arrs[0])
    return builtins.all(_aval(a).dtype is a0.dtype and _aval(a).weak_type == a0.weak_type for a in arrs)


concat = concatenate


def _promote_list(arrays):
    arrs = [a if _is_array(a) else asarray(a) for a in arrays]
    if len(arrs) > 1 and not _same_dtype(arrs):
        d, weak = _weak_result(*arrs)
        arrs = [lax._convert(a, d, weak) for a in arrs]
    return arrs


def stack(arrays, axis=0, out=None, dtype=None):
    arrays = list(arrays) if not _is_array(arrays) else [arrays[i] for i in range(len(arrays))]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    if _keys.any_key(arrays):  # typed PRNG keys stack like arrays, as in JAX
        return _keys.stack(arrays, axis)
    arrs = _promote_list(arrays)
    shapes = {_aval(a).shape for a in arrs}
    if len(shapes) > 1:
        raise ValueError("All input arrays must have the same shape.")
    nd = _aval(arrs[0]).ndim + 1
    ax = canonical_axis(axis, nd, "stack")
    arrs = [lax.expand_dims(a, (ax,)) for a in arrs]
    out_ = lax.concatenate(arrs, ax) if len(arrs) > 1 else arrs[0]
    return out_ if dtype is None else lax.convert_element_type(out_, dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(a) for a in tup], axis=0, dtype=dtype)


row_stack = vstack


def hstack(tup, dtype=None):
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, dtype=dtype)


def dstack(tup, dtype=None):
    return concatenate([atleast_3d(a) for a in tup], axis=2, dtype=dtype)


def column_stack(tup):
    arrs = [reshape(a, (-1, 1)) if ndim(a) == 1 else asarray(a) for a in tup]
    return concatenate(arrs, axis=1)


def split(ary, indices_or_sections, axis=0):
    return _split("split", ary, indices_or_sections, axis)


def _split(fn, ary, indices_or_sections, axis):
    ary = ary if _is_array(ary) else asarray(ary)
    nd = _aval(ary).ndim
    ax = canonical_axis(axis, nd, fn)
    n = _aval(ary).shape[ax]
    if isinstance(indices_or_sections, (builtins.int, builtins.float)) or (
        hasattr(indices_or_sections, "__index__") and not isinstance(indices_or_sections, (list, tuple, Array))
    ):
        ios = indices_or_sections
        sections = builtins.int(ios) if isinstance(ios, builtins.float) else operator.index(ios)  # JAX truncates
        if sections == 0:  # JAX's class (numpy's is ValueError)
            raise ZeroDivisionError(f"{fn}: the number of sections must be larger than 0")
        if sections < 0:
            raise ValueError("number sections must be larger than 0.")
        if fn == "split" and n % sections:
            raise ValueError(f"array split does not result in an equal division: rest is {n % sections}")
        if fn == "split":
            idx = [i * (n // sections) for i in range(1, sections)]
        else:
            q, r = builtins.divmod(n, sections)
            sizes = [q + 1] * r + [q] * (sections - r)
            idx, acc = [], 0
            for s in sizes[:-1]:
                acc += s
                idx.append(acc)
    else:
        idx = [
            operator.index(i)
            for i in (indices_or_sections.tolist() if isinstance(indices_or_sections, Array) else indices_or_sections)
        ]
    bounds = [0] + [builtins.min(builtins.max(i if i >= 0 else i + n, 0), n) for i in idx] + [n]
    out = []
    shp = _aval(ary).shape
    for b, e in zip(bounds[:-1], bounds[1:]):
        start = [0] * nd
        lim = list(shp)
        start[ax], lim[ax] = b, builtins.max(b, e)
        out.append(lax.slice(ary, start, lim))
    return out


def array_split(ary, indices_or_sections, axis=0):
    return _split("array_split", ary, indices_or_sections, axis)


def hsplit(ary, indices_or_sections):
    if ndim(ary) == 0:  # JAX's class for a 0-d array
        raise IndexError("hsplit: needs an array of at least 1 dimension, got a 0-d array")
    return split(ary, indices_or_sections, axis=1 if ndim(ary) > 1 else 0)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    if ndim(ary) < 3:  # JAX's class for too few dimensions
        raise IndexError(f"dsplit: needs an array of at least 3 dimensions, got {ndim(ary)}")
    return split(ary, indices_or_sections, axis=2)


def tile(A, reps):
    A = A if _is_array(A) else asarray(A)
    reps = (reps,) if isinstance(reps, builtins.int) else tuple(reps)
    nd = builtins.max(len(reps), A.ndim)
    A = reshape(A, (1,) * (nd - A.ndim) + A.shape)
    reps = (1,) * (nd - len(reps)) + reps
    # broadcast to (r0, s0, r1, s1, ...) then merge
    shape = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, A.shape)):
        shape += [r, s]
        dims.append(2 * i + 1)
    b = lax.broadcast_in_dim(A, tuple(shape), tuple(dims))
    return reshape(b, tuple(r * s for r, s in zip(reps, A.shape)))


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    _check_arraylike("repeat", a, repeats)
    a = a if _is_array(a) else asarray(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = canonical_axis(axis, a.ndim, "repeat")
    if isinstance(repeats, builtins.int) or (
        isinstance(repeats, Array) and repeats.ndim == 0 and not isinstance(repeats, Tracer)
    ):
        r = builtins.int(repeats)
        shp = a.shape
        b = lax.broadcast_in_dim(
            a, shp[: ax + 1] + (r,) + shp[ax + 1 :], tuple(range(ax + 1)) + tuple(range(ax + 2, a.ndim + 1))
        )
        return reshape(b, shp[:ax] + (shp[ax] * r,) + shp[ax + 1 :])
    reps = [builtins.int(v) for v in (repeats.tolist() if hasattr(repeats, "tolist") else repeats)]
    if len(reps) != a.shape[ax]:
        raise ValueError(f"repeat: repeats length {len(reps)} does not match axis size {a.shape[ax]}")
    from pyjax.numpy._indexing import take

    idx = [i for i, r in enumerate(reps) for _ in range(r)]
    return take(a, asarray(idx, dtype=dtypes.int32), axis=ax)


def flip(m, axis=None):
    m = m if _is_array(m) else asarray(m)
    axes = _reduce_axes("flip", m, axis)
    return lax.rev(m, axes)


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    a = a if _is_array(a) else asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, builtins.int) else tuple(shift)
    axes = (axis,) if isinstance(axis, builtins.int) else tuple(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(axes) == 1 and len(shifts) > 1:
        axes = axes * len(shifts)
    for s, ax in zip(shifts, axes):
        ax = canonical_axis(ax, a.ndim, "roll")
        n = a.shape[ax]
        if n == 0:
            continue
        s = operator.index(s) % n
        if s:
            first = (
                lax.slice_in_dim(a, n - s, n, axis=ax) if hasattr(lax, "slice_in_dim") else _slice_axis(a, n - s, n, ax)
            )
            rest = _slice_axis(a, 0, n - s, ax)
            a = lax.concatenate([first, rest], ax)
    return a


def _slice_axis(a, b, e, ax):
    start = [0] * a.ndim
    lim = list(a.shape)
    start[ax], lim[ax] = b, e
    return lax.slice(a, start, lim)


def rot90(m, k=1, axes=(0, 1)):
    m = asarray(m)
    if m.ndim < 2:
        raise ValueError(
            "rot90 requires its first argument to have ndim at least two, but got first argument of shape "
            f"{m.shape}, which has ndim {m.ndim}"
        )
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must hold two axes, got {tuple(axes)}")
    a0, a1 = (canonical_axis(a, m.ndim, "rot90") for a in axes)
    if a0 == a1:
        raise ValueError("Axes must be different")
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    perm = list(range(m.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return transpose(flip(m, a1), perm)
    return flip(transpose(m, perm), a1)


def pad(array, pad_width, mode="constant", constant_values=0, **kwargs):
    """jnp.pad: modes constant, edge, reflect, symmetric, wrap (static widths)."""
    a = array if _is_array(array) else asarray(array)
    nd = a.ndim
    pw = _pad_widths(pad_width, nd)
    if mode == "constant":
        cv = constant_values
        if isinstance(cv, _SCALARS):
            return lax.pad(
                a, lax._promote_scalars(cv, a)[0] if False else _scalar_like(cv, a), [(lo, hi, 0) for lo, hi in pw]
            )
        cvs = _pad_widths(cv, nd)
        out = a
        for ax, (lo_v, hi_v) in enumerate(cvs):
            lo, hi = pw[ax]
            cfg = [(0, 0, 0)] * nd
            cfg[ax] = (lo, 0, 0)
            out = lax.pad(out, _scalar_like(lo_v, a), cfg)
            cfg[ax] = (0, hi, 0)
            out = lax.pad(out, _scalar_like(hi_v, a), cfg)
        return out
    out = a
    for ax, (lo, hi) in enumerate(pw):
        if lo == 0 and hi == 0:
            continue
        n = out.shape[ax]
        from pyjax.numpy._indexing import take

        if mode == "edge":
            idx = [0] * lo + list(range(n)) + [n - 1] * hi
        elif mode == "wrap":
            idx = [(i - lo) % n for i in range(lo + n + hi)]
        elif mode in ("reflect", "symmetric"):
            idx = [_reflect(i - lo, n, mode == "symmetric") for i in range(lo + n + hi)]
        else:
            raise NotImplementedError(f"jnp.pad mode {mode!r} is not supported")
        out = take(out, asarray(idx, dtype=dtypes.int32), axis=ax)
    return out


def _reflect(i, n, symmetric):
    if n == 1:
        return 0
    period = 2 * n if symmetric else 2 * (n - 1)
    i %= period
    if symmetric:
        return i if i < n else period - 1 - i
    return i if i < n else period - i


def _scalar_like(v, a):
    return _execute.make_scalar(v, _aval(a).dtype, False)


def _pad_widths(pw, nd):
    """pad_width broadcast to one (before, after) pair per axis, as numpy broadcasts it to (nd, 2)."""
    given = pw
    if hasattr(pw, "tolist"):
        pw = pw.tolist()
    if not isinstance(pw, (list, tuple)):
        rows = [[pw]]
    elif builtins.all(not isinstance(p, (list, tuple)) for p in pw):
        rows = [list(pw)]
    else:
        rows = [list(p) if isinstance(p, (list, tuple)) else [p] for p in pw]
    if len(rows) not in (1, nd) or len({len(r) for r in rows}) != 1 or len(rows[0]) not in (1, 2):
        raise ValueError(
            f"jnp.pad: pad_width {given!r} cannot be broadcast to one (before, after) pair for each of {nd} axes"
        )
    return [(operator.index(r[0]), operator.index(r[-1])) for r in (rows * nd if len(rows) == 1 else rows)]


def _triangle(fn: str, m, k, keep):
    """m with zeros where keep(row + k, col) is false: tril keeps >=, triu keeps <=."""
    m = m if _is_array(m) else asarray(m)
    if m.ndim < 2:
        raise ValueError(f"{fn} requires an array of at least 2 dimensions")
    n, mm = m.shape[-2:]
    mask = keep(
        lax.add(lax.broadcasted_iota(dtypes.int32, (n, mm), 0), k), lax.broadcasted_iota(dtypes.int32, (n, mm), 1)
    )
    return where(mask, m, zeros_like(m))


def tril(m, k=0):
    return _triangle("tril", m, k, lax.ge)


def triu(m, k=0):
    return _triangle("triu", m, k, lax.le)


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = a if _is_array(a) else asarray(a)
    nd = a.ndim
    ax1, ax2 = canonical_axis(axis1, nd, "diagonal"), canonical_axis(axis2, nd, "diagonal")
    a = moveaxis(a, (ax1, ax2), (-2, -1))
    n, m = a.shape[-2:]
    if offset >= 0:
        k = builtins.max(0, builtins.min(n, m - offset))
        rows, cols = list(range(k)), [i + offset for i in range(k)]
    else:
        k = builtins.max(0, builtins.min(n + offset, m))
        rows, cols = [i - offset for i in range(k)], list(range(k))
    if k == 0:
        return zeros(a.shape[:-2] + (0,), a.dtype)
    # diagonal as a strided view: flatten the last two axes and take every (m+1)-th element
    flat = reshape(a, a.shape[:-2] + (n * m,))
    start = rows[0] * m + cols[0]
    lead = a.ndim - 2
    return lax.slice(
        flat, [0] * lead + [start], list(a.shape[:-2]) + [start + (k - 1) * (m + 1) + 1], [1] * lead + [m + 1]
    )


def diag(v, k=0):
    """1-D input: a matrix with v on diagonal k; 2-D input: its k-th diagonal."""
    v = v if _is_array(v) else asarray(v)
    if v.ndim == 1:
        n = v.shape[0] + builtins.abs(k)
        r = lax.broadcasted_iota(dtypes.int32, (n, n), 0)
        c = lax.broadcasted_iota(dtypes.int32, (n, n), 1)
        # Row i holds v[i] when k >= 0 (column i + k); column j holds v[j] when k < 0.
        if k >= 0:
            vals = broadcast_to(reshape(pad(v, [(0, k)]), (n, 1)), (n, n))
        else:
            vals = broadcast_to(reshape(pad(v, [(0, -k)]), (1, n)), (n, n))
        return where(lax.eq(lax.add(r, k), c), vals, zeros((n, n), v.dtype))
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("diag input must be 1d or 2d")


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    xs = [ravel(asarray(x)) for x in xi]
    nd = len(xs)
    if indexing == "xy" and nd >= 2:
        xs[0], xs[1] = xs[1], xs[0]
    shape = tuple(x.shape[0] for x in xs)
    out = []
    for i, x in enumerate(xs):
        s = [1] * nd
        s[i] = x.shape[0]
        r = reshape(x, s)
        out.append(r if sparse else broadcast_to(r, shape))
    if indexing == "xy" and nd >= 2:
        out[0], out[1] = out[1], out[0]
    return out


# --- products ------------------------------------------------------------------------------------


def _dot_promote(fn, a, b, preferred_element_type=None):
    a, b = _promote(fn, a, b) if not (_is_array(a) and _is_array(b) and _aval(a).dtype is _aval(b).dtype) else (a, b)
    return a, b


def matmul(a, b, *, precision=None, preferred_element_type=None):
    """Matrix product with numpy's broadcasting over batch dimensions."""
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(
            f"matmul: Input operand {0 if a.ndim == 0 else 1} does not have enough dimensions "
            f"(has 0, requires at least 1)"
        )
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if a_vec:
        a = reshape(a, (1, a.shape[0]))
    if b_vec:
        b = reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise TypeError(
            f"matmul: dot_general requires contracting dimensions to have the same shape, got "
            f"({a.shape[-1]},) and ({b.shape[-2]},): operand shapes {a.shape} and {b.shape}."
        )
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    # Broadcast-only batch dims of size 1 can be squeezed into free dims; keep it simple: broadcast.
    a_full = broadcast_to(a, batch + a.shape[-2:]) if a.shape[:-2] != batch else a
    b_full = broadcast_to(b, batch + b.shape[-2:]) if b.shape[:-2] != batch else b
    nb = len(batch)
    out = lax.dot_general(
        a_full,
        b_full,
        (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
        preferred_element_type=preferred_element_type,
    )
    if a_vec and b_vec:
        return reshape(out, batch)
    if a_vec:
        return reshape(out, batch + (b.shape[-1],))
    if b_vec:
        return reshape(out, batch + (a.shape[-2],))
    return out


def dot(a, b, *, precision=None, preferred_element_type=None):
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim <= 2:
        return matmul(a, b, preferred_element_type=preferred_element_type)
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    if a.shape[-1] != b.shape[-2]:
        raise TypeError(
            f"dot: dot_general requires contracting dimensions to have the same shape, got "
            f"({a.shape[-1]},) and ({b.shape[-2]},): operand shapes {a.shape} and {b.shape}."
        )
    return lax.dot_general(
        a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())), preferred_element_type=preferred_element_type
    )


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating the first (for complex input)."""
    return dot(conj(ravel(a)), ravel(b), precision=precision, preferred_element_type=preferred_element_type)


def inner(a, b):
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    if a.shape[-1] != b.shape[-1]:
        raise TypeError(f"inner: last dimensions must match, got {a.shape} and {b.shape}")
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a, b, out=None):
    a, b = ravel(asarray(a)), ravel(asarray(b))
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    a = a if _is_array(a) else asarray(a)
    b = b if _is_array(b) else asarray(b)
    if isinstance(axes, builtins.int):
        if axes > builtins.min(a.ndim, b.ndim) or axes < 0:
            raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks ({a.ndim} and {b.ndim})")
        ca = tuple(range(a.ndim - axes, a.ndim))
        cb = tuple(range(axes))
    else:
        ca, cb = axes
        ca = (ca,) if isinstance(ca, builtins.int) else tuple(ca)
        cb = (cb,) if isinstance(cb, builtins.int) else tuple(cb)
        ca = tuple(canonical_axis(x, a.ndim, "tensordot") for x in ca)
        cb = tuple(canonical_axis(x, b.ndim, "tensordot") for x in cb)
    d, weak = _weak_result(a, b)
    a, b = lax._convert(a, d, weak), lax._convert(b, d, weak)
    for x, y in zip(ca, cb):
        if a.shape[x] != b.shape[y]:
            raise TypeError(
                f"tensordot requires contracted axes to have the same size: got {a.shape} and "
                f"{b.shape} with axes ({ca}, {cb})"
            )
    return lax.dot_general(a, b, ((ca, cb), ((), ())), preferred_element_type=preferred_element_type)


def kron(a, b):
    a, b = asarray(a), asarray(b)
    nd = builtins.max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    ea = reshape(a, tuple(x for s in a.shape for x in (s, 1)))
    eb = reshape(b, tuple(x for s in b.shape for x in (1, s)))
    return reshape(multiply(ea, eb), tuple(x * y for x, y in zip(a.shape, b.shape)))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(asarray(a), axisa, -1)
    b = moveaxis(asarray(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == b.shape[-1] == 2:  # 2-vectors: the z component alone, as numpy
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else zeros_like(a0)  # a 2-vector has z = 0
    b2 = b[..., 2] if b.shape[-1] == 3 else zeros_like(b0)
    c = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(c, -1, axisc)


# --- misc -----------------------------------------------------------------------------------------


def astype(x, dtype, /, *, copy=False, device=None):
    x = x if _is_array(x) else asarray(x)
    _warn_complex_to_real(x, dtype)
    return lax.convert_element_type(x, dtype)


def _warn_complex_to_real(x, dtype) -> None:
    """JAX warns when a cast drops the imaginary part (and keeps the real part)."""
    if _aval(x).dtype.kind == "c" and dtypes.dtype(dtype).kind != "c":
        import warnings

        warnings.warn(
            "Casting from complex to real dtypes will soon raise a ValueError. Please first use "
            "jnp.real or jnp.imag to take the real/imaginary component of your input.",
            DeprecationWarning,
            stacklevel=3,
        )


def can_cast(from_, to, casting="safe"):
    f = dtypes.dtype(from_ if not _is_array(from_) else _aval(from_).dtype)
    return dtypes.promote_types(f, to) == dtypes.dtype(to)


def isscalar(element):
    if _is_array(element):
        return _aval(element).ndim == 0
    return isinstance(element, (builtins.int, builtins.float, builtins.bool, complex))


def iscomplexobj(x):
    """True when x has a complex dtype (the dtype is checked, not the values)."""
    if x is None:
        return False
    try:
        d = _aval(x).dtype if _is_array(x) or isinstance(x, _SCALARS) else dtypes.dtype(getattr(x, "dtype", x))
    except TypeError:
        return False
    return d.kind == "c"


def isrealobj(x):
    """Not iscomplexobj(x)."""
    return not iscomplexobj(x)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote("isclose", a, b)
    if a.dtype.kind not in "fc":
        return equal(a, b)
    out = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    out = logical_or(out, equal(a, b))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def array_equiv(a1, a2):
    try:
        a1, a2 = broadcast_arrays(a1, a2)
    except ValueError:
        return asarray(False)
    return all(equal(a1, a2))


def copy(a, order=None):
    return array(a, copy=True)


def interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation of (xp, fp) at x (numpy.interp)."""
    from pyjax.numpy._indexing import take
    from pyjax.numpy._sorting import argsort

    x, xp, fp = asarray(x), asarray(xp), asarray(fp)
    if ndim(xp) != 1 or ndim(fp) != 1 or xp.shape[0] != fp.shape[0]:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    d = result_type(x, xp, fp)
    d = d if d.kind in "fc" else dtypes.default_float()
    x, xp, fp = (lax.convert_element_type(a, d) for a in (x, xp, fp))
    if period is not None:
        # wrap x and xp into [0, period) and pad xp with one point past each end
        period = abs(period)
        x, xp = x % period, xp % period
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    i = clip(searchsorted_right(xp, x), 1, xp.shape[0] - 1)
    x0, y0, y1 = take(xp, i - 1), take(fp, i - 1), take(fp, i)
    dx = take(xp, i) - x0
    flat = dx == 0  # repeated xp: the left value, no division by zero
    out = where(flat, y0, y0 + ((x - x0) / where(flat, ones_like(dx), dx)) * (y1 - y0))
    if period is None:
        out = where(x < xp[0], fp[0] if left is None else left, out)
        out = where(x > xp[-1], fp[-1] if right is None else right, out)
    return out


def searchsorted_right(a, v):
    from pyjax.numpy._sorting import searchsorted

    return searchsorted(a, v, side="right")


# --- nan-aware reductions, fmax/fmin, complex-part stand-ins, bit counting ---------------------------


def fmax(x1, x2, /):
    """Elementwise maximum that ignores NaN (returns the other operand where one is NaN)."""
    x1, x2 = _promote("fmax", x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, lax.max(x1, x2)))


def fmin(x1, x2, /):
    """Elementwise minimum that ignores NaN (returns the other operand where one is NaN)."""
    x1, x2 = _promote("fmin", x1, x2)
    return where(isnan(x2), x1, where(isnan(x1), x2, lax.min(x1, x2)))


def _is_complex_arr(x) -> bool:
    return _aval(x).dtype.kind == "c"


def real(val, /):
    """Real part: a float array for complex input, the array itself otherwise."""
    val = val if _is_array(val) else asarray(val)
    return lax.real(val) if _is_complex_arr(val) else val


def imag(val, /):
    """Imaginary part: a float array for complex input, zeros of the same dtype otherwise."""
    val = val if _is_array(val) else asarray(val)
    return lax.imag(val) if _is_complex_arr(val) else zeros_like(val)


def conjugate(x, /):
    """Complex conjugate (real input is returned unchanged, as in JAX)."""
    x = x if _is_array(x) else asarray(x)
    return lax.conj(x) if _is_complex_arr(x) else x


conj = conjugate


def angle(z, deg: bool = False):
    """The argument of z: atan2(imag, real), in radians or degrees (a float array)."""
    z = z if _is_array(z) else asarray(z)
    if _is_complex_arr(z):
        re, im = lax.real(z), lax.imag(z)
    else:
        (re,) = _promote("angle", z, to_float=True)
        im = lax._zeros(re)
    out = lax.atan2(im, re)
    return lax.mul(out, 180.0 / math.pi) if deg else out


def iscomplex(x, /):
    """Elementwise: the imaginary part is nonzero (always False for real dtypes)."""
    x = x if _is_array(x) else asarray(x)
    if _is_complex_arr(x):
        return lax.ne(lax.imag(x), 0.0)
    return full(shape(x), False, dtypes.bool_)


def isreal(x, /):
    """Elementwise: the imaginary part is zero (always True for real dtypes)."""
    x = x if _is_array(x) else asarray(x)
    if _is_complex_arr(x):
        return lax.eq(lax.imag(x), 0.0)
    return full(shape(x), True, dtypes.bool_)


def _nan_replaced(a, value):
    a = a if _is_array(a) else asarray(a)
    if _aval(a).dtype.kind != "f":
        return a
    return lax.select(lax.ne(a, a), lax.full_like(a, value), a)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Sum treating NaN as zero."""
    return sum(_nan_replaced(a, 0), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product treating NaN as one."""
    return prod(_nan_replaced(a, 1), axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)


def _nan_extreme(name, red, fill):
    def f(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        a = a if _is_array(a) else asarray(a)
        if _aval(a).dtype.kind != "f":
            return red(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        nan_mask = isnan(a)
        y = red(_nan_replaced(a, fill), axis=axis, keepdims=keepdims, initial=initial, where=where)
        all_nan = all(nan_mask, axis=axis, keepdims=keepdims, where=where)
        return _where_fn(all_nan, math.nan, y)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: {red.__name__} ignoring NaN (NaN where a slice is all NaN)."
    return f


_where_fn = where
nanmax = _nan_extreme("nanmax", max, -math.inf)
nanmin = _nan_extreme("nanmin", min, math.inf)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean over the non-NaN elements (NaN where there are none)."""
    a = a if _is_array(a) else asarray(a)
    if _aval(a).dtype.kind != "f":
        return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    ok = lax.bitwise_not(isnan(a))
    if where is not None:
        ok = logical_and(ok, where)
    return mean(a, axis=axis, dtype=dtype, keepdims=keepdims, where=ok)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    """Variance over the non-NaN elements."""
    a = a if _is_array(a) else asarray(a)
    if _aval(a).dtype.kind != "f":
        return var(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, correction=correction)
    ok = lax.bitwise_not(isnan(a))
    if where is not None:
        ok = logical_and(ok, where)
    return var(
        _nan_replaced(a, 0), axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=ok, correction=correction
    )


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, correction=None):
    """Standard deviation over the non-NaN elements."""
    return sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, correction=correction))


def _nan_arg(name, fn, fill):
    def f(a, axis=None, out=None, keepdims=False):
        a = a if _is_array(a) else asarray(a)
        if _aval(a).dtype.kind != "f":
            return fn(a, axis=axis, keepdims=keepdims)
        nan_mask = isnan(a)
        r = fn(_nan_replaced(a, fill), axis=axis, keepdims=keepdims)
        return _where_fn(all(nan_mask, axis=axis, keepdims=keepdims), -1, r)

    f.__name__ = name
    f.__doc__ = f"jax.numpy.{name}: index of the extreme ignoring NaN (-1 where a slice is all NaN)."
    return f


nanargmax = _nan_arg("nanargmax", argmax, -math.inf)
nanargmin = _nan_arg("nanargmin", argmin, math.inf)


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as zero."""
    return cumsum(_nan_replaced(a, 0), axis=axis, dtype=dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as one."""
    return cumprod(_nan_replaced(a, 1), axis=axis, dtype=dtype)


def bitwise_count(x, /):
    """Number of 1 bits in |x| for each element (uint8, as in JAX)."""
    (x,) = _promote("bitwise_count", x)
    d = x.dtype
    if d.kind not in "iub":
        raise TypeError(f"bitwise_count requires integer or bool input, got {d.name}.")
    if d.kind == "b":
        return lax.convert_element_type(x, dtypes.uint8)
    if d.kind == "i":
        x = lax.abs(x)
    u = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}[d.bits]
    x = lax.bitcast_convert_type(x, u) if d.kind == "i" else x
    count = lax.full_like(x, 0)
    for k in range(d.bits):
        count = lax.add(count, lax.bitwise_and(lax.shift_right_logical(x, lax.full_like(x, k)), lax.full_like(x, 1)))
    return lax.convert_element_type(count, dtypes.uint8)


# Element-moving functions accept typed PRNG key arrays too, as in JAX.
ravel, transpose, moveaxis, swapaxes = map(_keys.lifted, (ravel, transpose, moveaxis, swapaxes))
split, array_split, tile, repeat = map(_keys.lifted, (split, array_split, tile, repeat))
flip, fliplr, flipud, roll, rot90 = map(_keys.lifted, (flip, fliplr, flipud, roll, rot90))
atleast_1d, atleast_2d, atleast_3d = map(_keys.lifted, (atleast_1d, atleast_2d, atleast_3d))
