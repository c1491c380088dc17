"""Elementwise functions of jax.numpy (the ufuncs as plain functions: arithmetic, comparisons,
logic, bitwise, transcendental, rounding, complex parts) and where/select/clip."""

from __future__ import annotations

import builtins
import math
import operator

from pyjax.core import dtypes
from pyjax.core.core import Tracer
from pyjax.lax import lax, slicing
from pyjax.numpy import _keys
from pyjax.runtime.array import Array

try:
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None
from pyjax.numpy import _creation
from pyjax.numpy._promotion import (
    _SCALARS,
    _aval,
    _check_arraylike,
    _check_integers,
    _is_array,
    _promote,
    _promote_numeric,
    _strong_unless_all_weak,
    asarray,
    broadcast_shapes,
    broadcast_to,
    iscomplexobj,
    shape,
)
from pyjax.numpy._util import _arr, _concrete_int

__all__ = [
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "exp",
    "exp2",
    "log",
    "log1p",
    "expm1",
    "sqrt",
    "cbrt",
    "asin",
    "acos",
    "atan",
    "asinh",
    "acosh",
    "atanh",
    "log2",
    "log10",
    "negative",
    "positive",
    "absolute",
    "abs",
    "fabs",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "fix",
    "rint",
    "round",
    "around",
    "square",
    "reciprocal",
    "isfinite",
    "isnan",
    "isinf",
    "isposinf",
    "isneginf",
    "signbit",
    "add",
    "multiply",
    "subtract",
    "maximum",
    "minimum",
    "arctan2",
    "atan2",
    "nextafter",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "invert",
    "bitwise_invert",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "left_shift",
    "right_shift",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "true_divide",
    "divide",
    "floor_divide",
    "remainder",
    "mod",
    "fmod",
    "divmod",
    "power",
    "pow",
    "float_power",
    "logaddexp",
    "logaddexp2",
    "hypot",
    "copysign",
    "deg2rad",
    "rad2deg",
    "radians",
    "degrees",
    "sinc",
    "heaviside",
    "gcd",
    "lcm",
    "clip",
    "where",
    "select",
    "nan_to_num",
    "isclose",
    "fmax",
    "fmin",
    "real",
    "imag",
    "conjugate",
    "conj",
    "angle",
    "iscomplex",
    "isreal",
]


def _unary(name, lax_fn, to_float=True, kinds=None):
    def f(x, /):
        (x,) = _promote(name, x, to_float=to_float)
        return lax_fn(x)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"Elementwise {name} (jax.numpy.{name})."
    return f


def _binary(name, lax_fn, to_float=False):
    def f(x1, x2, /):
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


# the array API names: the same functions under JAX's own names (its check_arraylike error names them)
asin, acos, atan = _unary("asin", lax.asin), _unary("acos", lax.acos), _unary("atan", lax.atan)
asinh, acosh, atanh = _unary("asinh", lax.asinh), _unary("acosh", lax.acosh), _unary("atanh", lax.atanh)


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
    if x.dtype.kind == "c":  # each part on its own
        return lax.complex(rint(lax.real(x)), rint(lax.imag(x)))
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
        return _creation.full(x.shape, other_answer, dtypes.bool_)
    (x,) = _promote(name, x)
    if x.dtype.kind == "c":
        return combine(*(_float_test(name, part, other_answer, combine, test) for part in (lax.real(x), lax.imag(x))))
    if x.dtype.kind != "f":
        return _creation.full(x.shape, other_answer, dtypes.bool_)
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
    return lax.eq(x, math.inf) if x.dtype.kind == "f" else _creation.full(x.shape, False, dtypes.bool_)


def isneginf(x, /):
    (x,) = _promote("isneginf", x)
    _no_complex_inf(x)
    return lax.eq(x, -math.inf) if x.dtype.kind == "f" else _creation.full(x.shape, False, dtypes.bool_)


def signbit(x, /):
    (x,) = _promote("signbit", x)
    if x.dtype.kind in "ub":
        return _creation.full(x.shape, False, dtypes.bool_)
    if x.dtype.kind == "i":
        return lax.lt(x, 0)
    if x.dtype.kind == "c":
        raise ValueError(f"jax.numpy.signbit is not well defined for {x.dtype.name}")
    bits = lax.bitcast_convert_type(x, {2: dtypes.int16, 4: dtypes.int32, 8: dtypes.int64}[x.dtype.itemsize])
    return lax.lt(bits, 0)


def add(x1, x2, /):
    """Elementwise x1 + x2 (logical or for booleans)."""
    x1, x2 = _promote("add", x1, x2)
    return lax.bitwise_or(x1, x2) if x1.dtype is dtypes.bool_ else lax.add(x1, x2)


def multiply(x1, x2, /):
    """Elementwise x1 * x2 (logical and for booleans)."""
    x1, x2 = _promote("multiply", x1, x2)
    return lax.bitwise_and(x1, x2) if x1.dtype is dtypes.bool_ else lax.mul(x1, x2)


subtract = _binary("subtract", lax.sub)


maximum = _binary("maximum", lax.max)


minimum = _binary("minimum", lax.min)


arctan2 = _binary("arctan2", lax.atan2, to_float=True)


atan2 = _binary("atan2", lax.atan2, to_float=True)


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


def _bitwise_not(name):
    def f(x, /):
        (x,) = _promote(name, x)
        if x.dtype.kind == "f":
            raise TypeError(f"{name} is not supported for floating-point dtypes, got {x.dtype.name}.")
        return lax.bitwise_not(x)

    f.__name__ = f.__qualname__ = name
    return f


bitwise_not, invert, bitwise_invert = map(_bitwise_not, ("bitwise_not", "invert", "bitwise_invert"))


def _logical(name, lax_fn):
    def f(x1, x2, /):
        _check_arraylike(name, x1, x2)
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
    _check_arraylike("logical_not", x)
    x = x if _is_array(x) else asarray(x)
    if _aval(x).dtype is not dtypes.bool_:
        x = lax.ne(*_promote("logical_not", x, 0))
    return lax.bitwise_not(x)


def left_shift(x1, x2, /):
    return _left_shift("left_shift", x1, x2)


def bitwise_left_shift(x1, x2, /):
    return _left_shift("bitwise_left_shift", x1, x2)


def _left_shift(name, x1, x2):
    x1, x2 = _promote_numeric(name, x1, x2)
    return lax.shift_left(x1, x2)


def right_shift(x1, x2, /):
    x1, x2 = _promote_numeric("right_shift", x1, x2)
    if x1.dtype.kind == "u":
        return lax.shift_right_logical(x1, x2)
    return lax.shift_right_arithmetic(x1, x2)


bitwise_right_shift = right_shift


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
    _check_arraylike("divmod", x1, x2)
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
    """x ** y for integer arrays as JAX computes it: square-and-multiply over the low six bits of
    y only (more overflows for any |x| > 1), so a negative y uses its two's-complement low bits;
    0 ** y is 0 for every y != 0."""
    one = lax.full_like(y, 1)
    acc = lax.select(
        lax.bitwise_and(lax.eq(x, lax.full_like(x, 0)), lax.ne(y, lax.full_like(y, 0))),
        lax.full_like(x, 0),
        lax.full_like(x, 1),
    )
    for _ in range(6):
        acc = lax.select(lax.eq(lax.bitwise_and(y, one), one), lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, one)
    return acc


def float_power(x1, x2, /):
    x1, x2 = _promote("float_power", x1, x2, to_float=True)
    return lax.pow(x1, x2)


def logaddexp(x1, x2, /):
    x1, x2 = _promote("logaddexp", x1, x2, to_float=True)
    if x1.dtype.kind == "c":
        return _complex_logaddexp(x1, x2, lax.max(x1, x2))
    return _real_logaddexp(x1, x2)


def _logaddexp_formula(x1, x2):
    amax = lax.max(x1, x2)
    delta = lax.sub(x1, x2)
    safe = lax.select(isnan(delta), lax.full_like(delta, 0), delta)
    out = lax.add(amax, lax.log1p(lax.exp(lax.neg(lax.abs(safe)))))
    return lax.select(isnan(delta), lax.add(x1, x2), out)


def _make_real_logaddexp():
    """logaddexp with JAX's JVP, d/dx1 = exp(x1 - out): exact where the formula's max and abs have
    kinks (x1 == x2, so softplus'(0) is 1/2), and finite at +inf."""
    from pyjax.custom_derivatives import custom_jvp  # (lax level: numpy may use it)

    f = custom_jvp(_logaddexp_formula)

    def finite(v):  # +inf -> 0, so inf - inf does not make the derivative NaN
        return lax.select(lax.eq(v, lax.full_like(v, math.inf)), lax.full_like(v, 0), v)

    @f.defjvp
    def _jvp(primals, tangents):
        (x1, x2), (t1, t2) = primals, tangents
        out = f(x1, x2)
        fo = finite(out)
        d1 = lax.mul(t1, lax.exp(lax.sub(finite(x1), fo)))
        return out, lax.add(d1, lax.mul(t2, lax.exp(lax.sub(finite(x2), fo))))

    return f


_real_logaddexp = _make_real_logaddexp()


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
    """sin(pi x) / (pi x), 1 at 0, with every derivative right at 0 too (its Taylor coefficients there)."""
    (x,) = _promote("sinc", x, to_float=True)
    px = lax.mul(x, math.pi)
    zero = lax.eq(x, 0.0)
    safe = where(zero, lax.full_like(x, 1.0), px)
    return where(zero, _sin_over_u_at_zero(0, px), lax.div(lax.sin(safe), safe))


def _sin_over_u_derivative(order: int, u):
    """The order-th derivative of sin(u)/u at u = 0, shaped like u: 0 for odd orders, (-1)^(k/2)/(k+1) for
    even k (from sin(u)/u = sum_k (-1)^k u^(2k) / (2k+1)!)."""
    value = 0.0 if order % 2 else (-1) ** (order // 2) / (order + 1)
    return lax.add(lax.mul(u, 0.0), value)


def _make_sin_over_u_at_zero():
    from pyjax.custom_derivatives import custom_jvp  # (lax level: numpy may use it)

    f = custom_jvp(_sin_over_u_derivative, nondiff_argnums=(0,))

    @f.defjvp
    def _jvp(order, primals, tangents):  # d/du of the order-th derivative is the next one
        (u,), (t,) = primals, tangents
        return f(order, u), lax.mul(f(order + 1, u), t)

    return f


_sin_over_u_at_zero = _make_sin_over_u_at_zero()


def heaviside(x1, x2, /):
    a1, a2 = x1, x2
    x1, x2 = _promote("heaviside", x1, x2, to_float=True)
    out = lax.select(lax.eq(x1, 0.0), x2, x1)  # nan stays nan
    out = lax.select(lax.gt(x1, 0.0), lax.full_like(x1, 1), out)
    out = lax.select(lax.lt(x1, 0.0), lax.full_like(x1, 0), out)
    return _strong_unless_all_weak(out, a1, a2)


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
    _check_arraylike("clip", x)
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
        _check_arraylike("where", condition)
        return nonzero(condition, size=size, fill_value=fill_value)
    _check_arraylike("where", condition, x, y, keys=True)  # a missing x or y is a None: JAX's TypeError
    if _keys.any_key(x, y):  # selecting between typed PRNG keys
        return _keys.where(condition, x, y, where)
    c = condition if _is_array(condition) else asarray(condition)
    if _aval(c).dtype is not dtypes.bool_:
        c = lax.ne(*_promote("where", c, 0))
    x, y = _promote("where", x, y)
    shape = broadcast_shapes(_aval(c).shape, _aval(x).shape)
    return lax.select(broadcast_to(c, shape), broadcast_to(x, shape), broadcast_to(y, shape))


def nonzero(a, *, size=None, fill_value=None):
    """jnp.nonzero: index arrays of the nonzero entries; under jit `size` must be given (pads with
    fill_value, default 0, or truncates)."""
    _check_arraylike("nonzero", a)
    a = _arr(a)
    aa = _aval(a)
    if aa.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = a if aa.dtype.kind == "b" else lax.ne(a, lax.full(aa.shape, 0, aa.dtype))
    flat = lax.reshape(mask, (aa.size,))
    if size is None:
        count = lax.reduce_sum(lax.convert_element_type(flat, dtypes.int32), (0,))
        size = _concrete_int(
            count,
            "The size argument of jnp.nonzero must be statically specified to use "
            "jnp.nonzero within JAX transformations.",
        )
    size = operator.index(size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * aa.ndim
    if len(fills) != aa.ndim:
        raise ValueError(f"fill_value must be a scalar or a tuple of length {aa.ndim}; got {fill_value}")
    n = aa.size
    pos = lax.sub(lax.cumsum(lax.convert_element_type(flat, dtypes.int32), 0), lax.full((n,), 1, dtypes.int32))
    pos = lax.select(flat, pos, lax.full((n,), size, dtypes.int32))  # non-hits land out of range: dropped
    ind = lax.reshape(pos, (n, 1))
    out = []
    for d in range(aa.ndim):
        inner = math.prod(aa.shape[d + 1 :])
        coord = lax.rem(
            lax.div(lax.iota(dtypes.int32, n), lax.full((n,), builtins.max(inner, 1), dtypes.int32)),
            lax.full((n,), builtins.max(aa.shape[d], 1), dtypes.int32),
        )
        f = fills[d]
        if f is None or isinstance(f, (builtins.int, builtins.bool)):
            base = lax.full((size,), 0 if f is None else builtins.int(f), dtypes.int32)
        else:  # an array or traced fill value (len(x) under jit)
            base = lax.broadcast_in_dim(lax.convert_element_type(_arr(f), dtypes.int32), (size,), ())
        out.append(slicing.scatter_axes(base, ind, coord, (0,), "set") if n else base)
    return tuple(out)


def select(condlist, choicelist, default=0):
    _check_arraylike("select", *condlist, *choicelist, default)
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = where(c, v, out)
    return asarray(out)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    _check_arraylike("nan_to_num", x)
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


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote("isclose", a, b)
    if a.dtype.kind not in "fc":
        return equal(a, b)
    out = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    out = logical_or(out, equal(a, b))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return out


def fmax(x1, x2, /):
    """Elementwise maximum that ignores NaN (returns the other operand where one is NaN)."""
    _check_arraylike("greater", x1, x2)  # JAX's fmax first calls greater, whose name its error gives
    x1, x2 = _promote("fmax", x1, x2)
    # JAX's formulation: a tie (and -0 vs 0) picks x2, and the gradient goes to one side, not half
    return where(lax.bitwise_or(greater(x1, x2), isnan(x2)), x1, x2)


def fmin(x1, x2, /):
    """Elementwise minimum that ignores NaN (returns the other operand where one is NaN)."""
    _check_arraylike("less", x1, x2)  # as fmax, with less
    x1, x2 = _promote("fmin", x1, x2)
    return where(lax.bitwise_or(less(x1, x2), isnan(x2)), x1, x2)  # as fmax


def _is_complex_arr(x) -> bool:
    return _aval(x).dtype.kind == "c"


def real(val, /):
    """Real part: a float array for complex input, the array itself otherwise."""
    _check_arraylike("real", val)
    val = val if _is_array(val) else asarray(val)
    return lax.real(val) if _is_complex_arr(val) else val


def imag(val, /):
    """Imaginary part: a float array for complex input, zeros of the same dtype otherwise."""
    _check_arraylike("imag", val)
    val = val if _is_array(val) else asarray(val)
    return lax.imag(val) if _is_complex_arr(val) else _creation.zeros_like(val)


def conjugate(x, /):
    """Complex conjugate (real input is returned unchanged, as in JAX)."""
    _check_arraylike("conjugate", x)
    x = x if _is_array(x) else asarray(x)
    return lax.conj(x) if _is_complex_arr(x) else x


conj = conjugate


def angle(z, deg: bool = False):
    """The argument of z: atan2(imag, real), in radians or degrees (a float array)."""
    _check_arraylike("angle", z)
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
    _check_arraylike("imag", x)  # JAX's iscomplex calls imag first
    x = x if _is_array(x) else asarray(x)
    if _is_complex_arr(x):
        return lax.ne(lax.imag(x), 0.0)
    return _creation.full(shape(x), False, dtypes.bool_)


def isreal(x, /):
    """Elementwise: the imaginary part is zero (always True for real dtypes)."""
    _check_arraylike("imag", x)  # as iscomplex
    x = x if _is_array(x) else asarray(x)
    if _is_complex_arr(x):
        return lax.eq(lax.imag(x), 0.0)
    return _creation.full(shape(x), True, dtypes.bool_)
