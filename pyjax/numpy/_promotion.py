"""Conversion to arrays (asarray, array), dtype promotion, broadcasting and casting: the
base every pyjax.numpy topic module builds on."""

from __future__ import annotations

import builtins
import math
import numbers
import operator

from pyjax import dtypes as _jax_dtypes
from pyjax._prng import KEY_DTYPE, PRNGKeyArray, key_words
from pyjax.core import core, dtypes
from pyjax.core import hooks as _hooks
from pyjax.core.core import Tracer, get_aval
from pyjax.core.dtypes import DType
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.lax.shapes import broadcast_array, broadcast_shapes
from pyjax.runtime import execute as _execute
from pyjax.runtime.array import Array

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None

__all__ = [
    "ndarray",
    "asarray",
    "array",
    "result_type",
    "broadcast_shapes",
    "broadcast_to",
    "broadcast_arrays",
    "shape",
    "ndim",
    "size",
    "astype",
    "can_cast",
    "isscalar",
    "iscomplexobj",
    "isrealobj",
]


ndarray = Array


_SCALARS = (builtins.int, builtins.float, builtins.bool, builtins.complex)


def _is_array(x) -> bool:
    return isinstance(x, (Array, Tracer))


def _aval(x):
    return get_aval(x)


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
        return [obj], (), dtypes.python_scalar_dtype(obj), dtypes.is_weak_scalar(obj)
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
        return _execute.make_scalar(a, d, dtype is None and dtypes.is_weak_scalar(a))
    if _np is not None and isinstance(a, (_np.ndarray, _np.generic)):
        if a.dtype.kind in "OUSV" and a.dtype.name not in dtypes.ML_DTYPES:  # ml_dtypes' types are kind V
            raise TypeError(f"JAX only supports number and bool dtypes, got array with dtype {a.dtype}")
        return _execute.from_numpy(_np.asarray(a), device, dtype)
    if isinstance(a, PRNGKeyArray) and dtype in (None, KEY_DTYPE):
        return a  # typed keys pass through, as in JAX (numeric functions reject them themselves)
    if hasattr(a, "__jax_array__"):
        return asarray(a.__jax_array__(), dtype)
    if isinstance(a, range) or (isinstance(a, (list, tuple)) and any(isinstance(v, range) for v in a)):
        return asarray(
            [list(v) if isinstance(v, range) else v for v in a] if not isinstance(a, range) else list(a), dtype
        )
    if isinstance(a, (list, tuple)):
        leaves = list(_flatten_nested(a))
        if builtins.any(isinstance(v, PRNGKeyArray) for v in leaves):
            return _stack([asarray(v) for v in a])
        if builtins.any(isinstance(v, Tracer) for v in leaves):
            return _stack([asarray(v) for v in a]).astype(dtype) if dtype else _stack([asarray(v) for v in a])
        flat, shape, d, weak = _infer_dtype_from_nested(a)
        target = dtype or d
        if _np is not None:
            arr = _np.array(flat, dtype=_np.dtype(target.name) if target.name not in dtypes.ML_DTYPES else None)
            out = _execute.from_numpy(arr.reshape(shape), device, target, False)
        else:
            from pyjax.runtime.array import _pack_scalar

            raw = b"".join(_pack_scalar(v, target) for v in flat)
            from pyjax.core.core import ShapedArray

            out = _execute.from_bytes(raw, ShapedArray(shape, target, False), device)
        return out
    if _np is not None and (hasattr(a, "__array__") or _is_buffer(a)):  # array.array, bytearray, memoryview
        return asarray(_np.asarray(a), dtype)
    raise TypeError(f"Value {a!r} with type {type(a)} is not a valid JAX array type.")


def _is_buffer(a) -> bool:
    """a exposes the buffer protocol (NumPy reads it as an array of its item type)."""
    try:
        memoryview(a)
    except TypeError:
        return False
    return not isinstance(a, (str, bytes))


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
        out = out.reshape((1,) * (ndmin - out.ndim) + out.shape)  # jnp.reshape, or a typed key array's
    return out


def _shape_tuple(shape):
    """A shape argument as a tuple of ints; traced or non-integer sizes raise JAX's TypeError."""
    one = isinstance(shape, (builtins.int,)) or (hasattr(shape, "__index__") and not isinstance(shape, (tuple, list)))
    dims = (shape,) if one else tuple(shape)
    try:
        return tuple(operator.index(s) for s in dims)
    except TypeError:
        msg = f"Shapes must be 1D sequences of concrete values of integer type, got {dims}."
        if any(isinstance(d, Tracer) for d in dims):
            msg += "\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller subfunctions."
        raise TypeError(msg) from None


def result_type(*args) -> DType:
    """jnp.result_type with JAX's weak-type lattice (pyjax.dtypes.result_type)."""
    return _jax_dtypes.result_type(*args)


def _weak_result(*args):
    items = []
    for a in args:
        if isinstance(a, _SCALARS):
            items.append((dtypes.python_scalar_dtype(a), dtypes.is_weak_scalar(a)))
        else:
            av = _aval(a)
            items.append((av.dtype, av.weak_type))
    return dtypes.promote(items)


def broadcast_to(x, shape):
    if isinstance(x, PRNGKeyArray):  # over the key words, which stay the last axis
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        return PRNGKeyArray(broadcast_to(x._data, shape + (2,)))
    if not _is_array(x):
        _check_arraylike("broadcast_to", x)
        x = asarray(x)
    return broadcast_array(x, _shape_tuple(shape))


def _same_dtype(arrs):
    a0 = _aval(arrs[0])
    return builtins.all(_aval(a).dtype is a0.dtype and _aval(a).weak_type == a0.weak_type for a in arrs)


def _promote_list(arrays):
    arrs = [a if _is_array(a) else asarray(a) for a in arrays]
    if len(arrs) > 1 and not _same_dtype(arrs):
        d, weak = _weak_result(*arrs)
        arrs = [lax._convert(a, d, weak) for a in arrs]
    return arrs


def _stack(arrays: list, axis=0, dtype=None):
    """jnp.stack of a non-empty list of arrays, or of typed key arrays (stacked over their key words;
    dtype ignored); asarray stacks the elements of a list that holds tracers or keys with it."""
    if builtins.any(isinstance(a, PRNGKeyArray) for a in arrays):
        datas = [key_words(a) for a in arrays]
        return PRNGKeyArray(_stack(datas, axis=canonical_axis(axis, arrays[0].ndim + 1, "stack")))
    arrs = _promote_list(arrays)
    shapes = {_aval(a).shape for a in arrs}
    if len(shapes) > 1:
        raise ValueError("All input arrays must have the same shape.")
    nd = _aval(arrs[0]).ndim + 1
    ax = canonical_axis(axis, nd, "stack")
    arrs = [lax.expand_dims(a, (ax,)) for a in arrs]
    out_ = lax.concatenate(arrs, ax) if len(arrs) > 1 else arrs[0]
    return out_ if dtype is None else lax.convert_element_type(out_, dtype)


def broadcast_arrays(*args):
    _check_arraylike("broadcast_arrays", *args, keys=True)
    args = [a if _is_array(a) or isinstance(a, PRNGKeyArray) else asarray(a) for a in args]
    shape = broadcast_shapes(*[a.shape for a in args])
    return [broadcast_to(a, shape) for a in args]


def _check_int_range(x: int) -> None:
    """JAX passes Python ints to its numpy functions as default-int arguments: out of that range is an
    OverflowError even when the other operand is narrower (which then wraps) or floating."""
    info = dtypes.iinfo(dtypes.default_int())
    if not info.min <= x <= info.max:
        raise OverflowError(f"Python int {x} too large to convert to {dtypes.default_int().name}")


def _promote_fast(args: tuple, to_float: bool):
    """_promote's answer for the common eager cases, without its general machinery (None when
    it takes the general path): operands of one aval (nothing to do), and Python scalars next
    to one non-weak Array whose dtype they take (a float array with ints or floats, an
    int32/int64 array with ints in int32 range), made host constants of its shape as
    broadcast_to makes them eagerly."""
    ref = None
    for a in args:
        if type(a) is Array or isinstance(a, Tracer):
            ref = a
            break
    if ref is None:
        return None
    av = ref.aval
    kind = av.dtype.kind
    if to_float and kind not in "fc":
        return None
    scalars = False
    for a in args:
        t = type(a)
        if t is builtins.float:
            if kind != "f":
                return None
            scalars = True
        elif t is builtins.int:
            if not (kind == "f" or (kind == "i" and av.dtype.itemsize >= 4)) or not -(2**31) <= a < 2**31:
                return None
            scalars = True
        elif (t is not Array and not isinstance(a, Tracer)) or a.aval != av:
            return None
    if not scalars:
        return list(args)
    if type(ref) is not Array or av.weak_type or core.find_top_trace((ref,)) is not None:
        return None
    return [a if type(a) is Array else Array(av, None, None, ref._device, host=a) for a in args]


def _promote(fn: str, *args, to_float: bool = False, keep_int: bool = False):
    """Promote dtypes (weak-type aware) and broadcast shapes of jnp function arguments."""
    fast = _promote_fast(args, to_float)
    if fast is not None:
        return fast
    _check_arraylike(fn, *args)
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


_ARRAYLIKE = (Array, Tracer, *_SCALARS) + ((_np.ndarray, _np.generic) if _np is not None else ())


def _check_arraylike(fn, *args, keys: bool = False, none: bool = False):
    """JAX's check_arraylike: every arg an array, a tracer, a scalar or an object with __jax_array__,
    else JAX's TypeError naming fn and the position of the first that is not (a Python list or tuple,
    most often). Typed key arrays pass only with keys=True (the functions that move elements), so that
    numeric functions keep refusing them; None passes with none=True (JAX's check_arraylike_or_none).
    The one place pyjax.numpy, linalg, fft, scipy and nn make this check."""
    for a in args:  # the common case, all arrays or scalars, in one isinstance each
        if not isinstance(a, _ARRAYLIKE):
            break
    else:
        return
    for i, a in enumerate(args):
        if not isinstance(a, _ARRAYLIKE) and not (
            hasattr(a, "__jax_array__") and (keys or not isinstance(a, PRNGKeyArray))
        ):
            if none:
                if a is None:
                    continue
                raise TypeError(f"{fn} requires ndarray, scalar, or None arguments, got {type(a)} at position {i}.")
            raise TypeError(f"{fn} requires ndarray or scalar arguments, got {type(a)} at position {i}.")


def _promote_inexact(name: str, *args, complex_ok: bool = False) -> list:
    """promote_args_inexact (scipy.special, nn, scipy.stats): a common dtype for args, made floating if it is integer or bool.

    Complex arguments are refused (as JAX refuses them) unless the function handles them."""
    _check_arraylike(name, *args)
    arrs = []
    for a in args:
        if isinstance(a, Tracer):
            arrs.append(a)
            continue
        try:
            arrs.append(asarray(a))
        except TypeError:
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(a)}.") from None
    d, weak = dtypes.promote([(get_aval(a).dtype, get_aval(a).weak_type) for a in arrs])
    if d.kind == "c" and not complex_ok:
        if name in ("entr", "kl_div", "rel_entr"):
            raise ValueError(f"{name} does not support complex-valued inputs.")
        raise TypeError(f"{name} does not accept dtype {d.name}. Accepted dtypes are subtypes of floating.")
    if d.kind not in "fc":
        d = dtypes.default_float()
    out = [lax._convert(a, d, weak) if get_aval(a).dtype is not d or get_aval(a).weak_type != weak else a for a in arrs]
    if len(out) > 1:
        out = list(broadcast_arrays(*out))
    return out


def _inexact(fn: str, *args):
    """Arrays of the common floating dtype (ints and bools promote to the default float; complex stays
    complex: primitives without a complex rule then raise). numpy.linalg and the Schur iterations use it."""
    args = [a if _is_array(a) else asarray(a) for a in args]
    d, weak = _weak_result(*args)
    if d.kind not in "fc":
        d, weak = dtypes.default_float(), False
    return [lax._convert(a, d, weak) if _aval(a).dtype is not d or _aval(a).weak_type != weak else a for a in args]


def _promote_numeric(fn: str, *args):
    """Promote like _promote, then booleans become the default integer (JAX's promote_args_numeric)."""
    out = _promote(fn, *args)
    if _aval(out[0]).dtype is dtypes.bool_:
        out = [lax.convert_element_type(a, dtypes.default_int()) for a in out]
    return out


def _strong_unless_all_weak(x, *args):
    """JAX's hypot/heaviside/logaddexp2 results are weakly typed only when every input is."""
    if _aval(x).weak_type and not builtins.all(
        isinstance(a, _SCALARS) or (_is_array(a) and _aval(a).weak_type) for a in args
    ):
        return lax._convert(x, _aval(x).dtype, False)
    return x


def _check_integers(fn, *args):
    for a in args:
        if _aval(a).dtype.kind not in "iu":
            raise ValueError(f"Arguments to jax.numpy.{fn} must be integers.")


def shape(a):
    return _aval(a if _is_array(a) else asarray(a)).shape


def ndim(a):
    return _aval(a if _is_array(a) else asarray(a)).ndim


def size(a, axis=None):
    """The number of elements of a, or along axis (an int or a tuple of axes)."""
    s = shape(a)
    if axis is None:
        return math.prod(s)
    return math.prod(s[i] for i in axis) if isinstance(axis, (tuple, list)) else s[axis]


def astype(x, dtype, /, *, copy=False, device=None):
    _check_arraylike("astype", x)
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
    """True for Python and NumPy scalars (numpy.isscalar: numbers, strings, np.int32(1)) and for 0-d arrays
    (JAX's or NumPy's), as jnp.isscalar."""
    if _is_array(element):
        return _aval(element).ndim == 0
    if isinstance(element, (numbers.Number, str, bytes)):  # NumPy's number scalars are Numbers too
        return True
    return getattr(element, "ndim", None) == 0 and type(element).__module__ == "numpy"  # np.bool_, 0-d ndarray


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
