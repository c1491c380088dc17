"""lax primitives: definitions, shape/dtype rules, and their jvp, vjp and batching rules.

Each primitive's `impl` is the runtime's generic executor (installed by pyjax.runtime), which
lowers the primitive to the kernel IR by name (pyjax.compiler.lowering). Rules here only use
other lax functions, so they work under every transformation.
"""

from __future__ import annotations

import builtins
import math

from pyjax._prng import PRNGKeyArray
from pyjax.core import core, dtypes
from pyjax.core import hooks as _hooks
from pyjax.core.core import Primitive, ShapedArray, bind, get_aval
from pyjax.interpreters import ad, batching
from pyjax.interpreters.ad import Zero
from pyjax.runtime import execute as _execute
from pyjax.runtime.array import Array as _Array

# --- helpers ---------------------------------------------------------------------------------


def _shape_str(s) -> str:
    return "(" + ", ".join(str(d) for d in s) + ("," if len(s) == 1 else "") + ")"


def _aval(x) -> ShapedArray:
    return get_aval(x)


def _prim(name: str, multi: bool = False) -> Primitive:
    p = core.MultiPrimitive(name) if multi else Primitive(name)
    p.impl = _generic_impl(p)
    return p


def _generic_impl(p):
    def impl(*args, **params):
        return _execute.execute(p, args, params)

    return impl


_PY_SCALARS = (builtins.int, builtins.float, builtins.bool, builtins.complex)


def _as_array(x, dtype=None, weak=None):
    """Python scalars -> typed scalar constants; arrays pass through."""
    if isinstance(x, _PY_SCALARS):
        d = dtypes.python_scalar_dtype(x) if dtype is None else dtype
        return _execute.make_scalar(x, d, dtypes.is_weak_scalar(x) if weak is None else weak)
    return x


def _promote_scalars(*args):
    """lax allows Python scalars next to arrays: they take the array operand's dtype (weakly)."""
    ref = next((a for a in args if not isinstance(a, _PY_SCALARS)), None)
    if ref is None:
        return [_as_array(a) for a in args]
    aval = _aval(ref)
    out = []
    for a in args:
        if isinstance(a, _PY_SCALARS):
            a = _execute.make_scalar(a, aval.dtype, True)
            if aval.shape:
                a = broadcast_in_dim(a, aval.shape, ())
        out.append(a)
    return out


# --- elementwise ------------------------------------------------------------------------------


def _unary_abstract(kinds: str, name: str, out_dtype=None):
    def rule(x, **_):
        if x.dtype.kind not in kinds:
            raise TypeError(
                f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of "
                f"{'floating' if kinds == 'f' else 'integer' if kinds == 'iu' else kinds}."
            )
        return ShapedArray(x.shape, out_dtype or x.dtype, x.weak_type and out_dtype is None)

    return rule


def _binary_abstract(kinds: str, name: str, out_dtype=None):
    def rule(x, y, **_):
        if x.shape != y.shape:
            raise TypeError(
                f"{name} got incompatible shapes for broadcasting: {_shape_str(x.shape)}, {_shape_str(y.shape)}."
            )
        if x.dtype is not y.dtype:
            raise TypeError(
                f"lax.{name} requires arguments to have the same dtypes, got {x.dtype.name}, {y.dtype.name}."
            )
        if x.dtype.kind not in kinds:
            raise TypeError(f"{name} does not accept dtype {x.dtype.name}.")
        weak = x.weak_type and y.weak_type  # comparisons of weak operands give weak bools, as in JAX
        return ShapedArray(x.shape, out_dtype or x.dtype, weak)

    return rule


FLOAT, INT, NUM, ALL = "f", "iu", "iuf", "biuf"


def _unop(name: str, kinds: str = FLOAT, out_dtype=None) -> Primitive:
    p = _prim(name)
    p.abstract_eval = _unary_abstract(kinds, name, out_dtype)
    batching.batch_rules[p] = lambda size, vals, dims, **params: (bind(p, vals[0], **params), dims[0])
    return p


def _binop(name: str, kinds: str = NUM, out_dtype=None) -> Primitive:
    p = _prim(name)
    p.abstract_eval = _binary_abstract(kinds, name, out_dtype)
    batching.batch_rules[p] = _broadcasting_batch_rule(p)
    return p


def _broadcasting_batch_rule(p):
    def rule(size, vals, dims, **params):
        d = next(d for d in dims if d is not None)
        vals = [batching.move_to(v, vd, d, size) if vd != d else v for v, vd in zip(vals, dims)]
        return bind(p, *vals, **params), d

    return rule


neg_p = _unop("neg", NUM)
sign_p = _unop("sign", NUM)
floor_p = _unop("floor")
ceil_p = _unop("ceil")
round_p = _unop("round")
is_finite_p = _unop("is_finite", FLOAT, dtypes.bool_)
exp_p = _unop("exp")
exp2_p = _unop("exp2")
log_p = _unop("log")
log1p_p = _unop("log1p")
expm1_p = _unop("expm1")
tanh_p = _unop("tanh")
logistic_p = _unop("logistic")
sin_p = _unop("sin")
cos_p = _unop("cos")
tan_p = _unop("tan")
asin_p = _unop("asin")
acos_p = _unop("acos")
atan_p = _unop("atan")
sinh_p = _unop("sinh")
cosh_p = _unop("cosh")
asinh_p = _unop("asinh")
acosh_p = _unop("acosh")
atanh_p = _unop("atanh")
sqrt_p = _unop("sqrt")
rsqrt_p = _unop("rsqrt")
cbrt_p = _unop("cbrt")
abs_p = _unop("abs", NUM)


def _abs_abstract(x, **params):
    """abs rejects the 4- and 2-bit integers, as JAX's does (not the 1-bit ones)."""
    if x.dtype.name in ("int4", "uint4", "int2", "uint2"):
        raise TypeError(
            f"abs does not accept dtype {x.dtype.name}. Support for narrow-width integers is platform-dependent"
            " and limited to a few specific operations, e.g. basic arithmetic and type casting."
        )
    return _unary_abstract(NUM, "abs")(x, **params)


abs_p.abstract_eval = _abs_abstract
not_p = _unop("not", "biu")
erf_p = _unop("erf")
erfc_p = _unop("erfc")
erf_inv_p = _unop("erf_inv")
lgamma_p = _unop("lgamma")
digamma_p = _unop("digamma")
population_count_p = _unop("population_count", INT)
clz_p = _unop("clz", INT)
integer_pow_p = _unop("integer_pow", NUM)
square_p = _unop("square", NUM)

add_p = _binop("add")
sub_p = _binop("sub")
mul_p = _binop("mul")
div_p = _binop("div")
rem_p = _binop("rem")
pow_p = _binop("pow", FLOAT)
max_p = _binop("max", ALL)
min_p = _binop("min", ALL)
atan2_p = _binop("atan2", FLOAT)
nextafter_p = _binop("nextafter", FLOAT)
and_p = _binop("and", "biu")
or_p = _binop("or", "biu")
xor_p = _binop("xor", "biu")
eq_p = _binop("eq", ALL, dtypes.bool_)
ne_p = _binop("ne", ALL, dtypes.bool_)
lt_p = _binop("lt", ALL, dtypes.bool_)
le_p = _binop("le", ALL, dtypes.bool_)
gt_p = _binop("gt", ALL, dtypes.bool_)
ge_p = _binop("ge", ALL, dtypes.bool_)
shift_left_p = _binop("shift_left", INT)
shift_right_logical_p = _binop("shift_right_logical", INT)
shift_right_arithmetic_p = _binop("shift_right_arithmetic", INT)
ad._add_any_p.impl = _generic_impl(ad._add_any_p)
ad._add_any_p.abstract_eval = _binary_abstract(ALL, "add_any")
batching.batch_rules[ad._add_any_p] = _broadcasting_batch_rule(ad._add_any_p)


def _un(p):
    def f(x, **params):
        return bind(p, _as_array(x), **params)

    f.__name__ = p.name
    return f


def _broadcast_operands(name: str, *args) -> list:
    """JAX's broadcasting of lax's n-ary elementwise operands: 0-d operands go with any shape; the others
    need one rank, and each dimension equal or 1. The primitives take equal shapes: operands are
    broadcast here, so every rule below them (lowering, jvp, transpose, vmap) sees one shape."""
    shapes = [_aval(a).shape for a in args]
    ranked = [s for s in shapes if s]
    if not ranked or all(s == ranked[0] for s in shapes):
        return list(args)
    ranks = {len(s) for s in ranked}
    if len(ranks) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    out = []
    for ds in zip(*ranked):
        sizes = {d for d in ds if d != 1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: {', '.join(map(_shape_str, ranked))}.")
        out.append(sizes.pop() if sizes else 1)
    out = tuple(out)
    return [broadcast_in_dim(a, out, tuple(range(len(s)))) for a, s in zip(args, shapes)]


def _bin(p):
    def f(x, y):
        # operands of one shape, neither a Python scalar (the usual case) need neither step
        if not (
            (type(x) is _Array or isinstance(x, core.Tracer))
            and (type(y) is _Array or isinstance(y, core.Tracer))
            and x.aval.shape == y.aval.shape
        ):
            x, y = _broadcast_operands(p.name, *_promote_scalars(x, y))
        return bind(p, x, y)

    f.__name__ = p.name
    return f


neg, sign, floor, ceil = _un(neg_p), _un(sign_p), _un(floor_p), _un(ceil_p)
is_finite, exp, exp2, log = _un(is_finite_p), _un(exp_p), _un(exp2_p), _un(log_p)
log1p, expm1, tanh, logistic = _un(log1p_p), _un(expm1_p), _un(tanh_p), _un(logistic_p)
sin, cos, tan, asin, acos, atan = _un(sin_p), _un(cos_p), _un(tan_p), _un(asin_p), _un(acos_p), _un(atan_p)
sinh, cosh, asinh, acosh, atanh = _un(sinh_p), _un(cosh_p), _un(asinh_p), _un(acosh_p), _un(atanh_p)
sqrt, rsqrt, cbrt, abs = _un(sqrt_p), _un(rsqrt_p), _un(cbrt_p), _un(abs_p)
bitwise_not, erf, erfc, erf_inv = _un(not_p), _un(erf_p), _un(erfc_p), _un(erf_inv_p)
lgamma, digamma, population_count, clz = _un(lgamma_p), _un(digamma_p), _un(population_count_p), _un(clz_p)
square = _un(square_p)
add, sub, mul, div, rem, pow = _bin(add_p), _bin(sub_p), _bin(mul_p), _bin(div_p), _bin(rem_p), _bin(pow_p)
max, min, atan2, nextafter = _bin(max_p), _bin(min_p), _bin(atan2_p), _bin(nextafter_p)
bitwise_and, bitwise_or, bitwise_xor = _bin(and_p), _bin(or_p), _bin(xor_p)
eq, ne, lt, le, gt, ge = _bin(eq_p), _bin(ne_p), _bin(lt_p), _bin(le_p), _bin(gt_p), _bin(ge_p)
shift_left, shift_right_logical = _bin(shift_left_p), _bin(shift_right_logical_p)
shift_right_arithmetic = _bin(shift_right_arithmetic_p)


class RoundingMethod:
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    return bind(round_p, _as_array(x), rounding_method=int(rounding_method))


def _integer_pow_abstract(x, *, y):
    if x.dtype.kind in "iu" and y < 0:
        raise TypeError(f"Integers cannot be raised to negative powers, got integer_pow({x}, {y})")
    return _unary_abstract(NUM, "integer_pow")(x)


integer_pow_p.abstract_eval = _integer_pow_abstract


def integer_pow(x, y: int):
    return bind(integer_pow_p, _as_array(x), y=int(y))


def reciprocal(x):
    return integer_pow(x, -1)


def _zeros(x):
    return full(_aval(x).shape, 0, _aval(x).dtype)


def _ones(x):
    return full(_aval(x).shape, 1, _aval(x).dtype)


def _defderiv(prim, deriv) -> None:
    """jvp rule of y = prim(x) with f'(x) = deriv(x, y); reverse mode transposes its mul."""

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        y = bind(prim, x, **params)
        return y, bind(mul_p, t, deriv(x, y, **params))

    ad.jvp_rules[prim] = jvp


# Derivatives f'(x) given x and y = f(x).
_D = _defderiv
_D(exp_p, lambda x, y: y)
_D(exp2_p, lambda x, y: mul(y, math.log(2.0)))
_D(log_p, lambda x, y: div(_ones(x), x))
_D(log1p_p, lambda x, y: div(_ones(x), add(x, 1.0)))
_D(expm1_p, lambda x, y: add(y, 1.0))
_D(tanh_p, lambda x, y: sub(1.0, mul(y, y)))
_D(logistic_p, lambda x, y: mul(y, sub(1.0, y)))
_D(sin_p, lambda x, y: cos(x))
_D(cos_p, lambda x, y: neg(sin(x)))
_D(tan_p, lambda x, y: add(1.0, mul(y, y)))
_D(asin_p, lambda x, y: rsqrt(sub(1.0, mul(x, x))))
_D(acos_p, lambda x, y: neg(rsqrt(sub(1.0, mul(x, x)))))
_D(atan_p, lambda x, y: div(_ones(x), add(1.0, mul(x, x))))
_D(sinh_p, lambda x, y: cosh(x))
_D(cosh_p, lambda x, y: sinh(x))
_D(asinh_p, lambda x, y: rsqrt(add(mul(x, x), 1.0)))
_D(acosh_p, lambda x, y: rsqrt(mul(sub(x, 1.0), add(x, 1.0))))
_D(atanh_p, lambda x, y: div(_ones(x), sub(1.0, mul(x, x))))
_D(sqrt_p, lambda x, y: div(0.5, y))
_D(rsqrt_p, lambda x, y: mul(-0.5, div(y, x)))
_D(cbrt_p, lambda x, y: div(_ones(x), mul(3.0, mul(y, y))))
_D(abs_p, lambda x, y: select(ge(x, _zeros(x)), _ones(x), neg(_ones(x))))  # 1 at 0, as JAX
_D(erf_p, lambda x, y: mul(2.0 / math.sqrt(math.pi), exp(neg(mul(x, x)))))
_D(erfc_p, lambda x, y: mul(-2.0 / math.sqrt(math.pi), exp(neg(mul(x, x)))))
_D(erf_inv_p, lambda x, y: mul(math.sqrt(math.pi) / 2.0, exp(mul(y, y))))
_D(lgamma_p, lambda x, y: digamma(x))
_D(square_p, lambda x, y: mul(2, x))
_D(integer_pow_p, lambda x, y, y_: _ipow_deriv(x, y_))
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, population_count_p, clz_p, not_p):
    ad.jvp_rules[_p] = lambda primals, tangents, _p=_p, **params: (
        bind(_p, *primals, **params),
        Zero(_aval(bind(_p, *primals, **params))),
    )


def _trigamma(x):
    """polygamma(1, x): recurrence up to x + 6, asymptotic series, reflection below 1/2."""

    def direct(z):
        acc = _zeros(z)
        for k in range(6):
            acc = add(acc, integer_pow(add(z, float(k)), -2))
        w = add(z, 6.0)
        iw = div(_ones(w), w)
        iw2 = mul(iw, iw)
        series = mul(
            iw,
            add(
                1.0,
                mul(
                    iw,
                    add(
                        0.5,
                        mul(iw, add(1.0 / 6, mul(iw2, add(-1.0 / 30, mul(iw2, add(1.0 / 42, mul(iw2, -1.0 / 30))))))),
                    ),
                ),
            ),
        )
        return add(acc, series)

    small = lt(x, 0.5)
    safe = select(small, sub(1.0, x), x)
    refl = sub(div(full_like(x, math.pi**2), integer_pow(sin(mul(x, math.pi)), 2)), direct(safe))
    return select(small, refl, direct(safe))


_D(digamma_p, lambda x, y: _trigamma(x))


def _ipow_deriv(x, y):
    if y == 0:
        return _zeros(x)
    return mul(float(y), integer_pow(x, y - 1)) if y != 1 else _ones(x)


# integer_pow's deriv gets the exponent as a param named y; adapt the generic rule's signature.
def _fix_ipow():
    def jvp(primals, tangents, y):
        (x,), (t,) = primals, tangents
        return integer_pow(x, y), mul(t, _ipow_deriv(x, y))

    ad.jvp_rules[integer_pow_p] = jvp


_fix_ipow()


def _binary_ad(p, dx, dy):
    """Register jvp/vjp for z = p(x, y) with partials dz/dx = dx(x, y, z), dz/dy = dy(x, y, z)."""

    def jvp(primals, tangents):
        x, y = primals
        z = bind(p, x, y)
        return ad.sum_of_terms(z, tangents, (lambda t: mul(t, dx(x, y, z)), lambda t: mul(t, dy(x, y, z))))

    ad.jvp_rules[p] = jvp


def _linear_binary(p, sx, sy):
    def jvp(primals, tangents):
        z = bind(p, *primals)
        tx, ty = tangents
        a = Zero(_aval(z)) if type(tx) is Zero else (tx if sx == 1 else neg(tx))
        b = Zero(_aval(z)) if type(ty) is Zero else (ty if sy == 1 else neg(ty))
        return z, ad.add_tangents(a, b)

    ad.jvp_rules[p] = jvp
    ad.transpose_rules[p] = lambda ct, x, y: [ct if sx == 1 else neg(ct), ct if sy == 1 else neg(ct)]


_linear_binary(add_p, 1, 1)
_linear_binary(ad._add_any_p, 1, 1)
_linear_binary(sub_p, 1, -1)
_binary_ad(mul_p, lambda x, y, z: y, lambda x, y, z: x)
_binary_ad(div_p, lambda x, y, z: div(_ones(y), y), lambda x, y, z: neg(div(z, y)))


def _mul_jvp(primals, tangents):
    x, y = primals
    return ad.sum_of_terms(mul(x, y), tangents, (lambda t: mul(t, y), lambda t: mul(x, t)))


def _div_jvp(primals, tangents):
    x, y = primals
    z = div(x, y)
    return ad.sum_of_terms(z, tangents, (lambda t: div(t, y), lambda t: mul(t, neg(div(z, y)))))


ad.jvp_rules[mul_p] = _mul_jvp
ad.jvp_rules[div_p] = _div_jvp
ad.transpose_rules[mul_p] = lambda ct, x, y: [
    None if not ad.is_undefined_primal(x) else mul(ct, y),
    None if not ad.is_undefined_primal(y) else mul(x, ct),
]
ad.transpose_rules[div_p] = lambda ct, x, y: [div(ct, y), None]
ad.jvp_rules[neg_p] = lambda primals, tangents: (
    neg(primals[0]),
    tangents[0] if type(tangents[0]) is Zero else neg(tangents[0]),
)
ad.transpose_rules[neg_p] = lambda ct, x: [neg(ct)]
_binary_ad(rem_p, lambda x, y, z: _ones(x), lambda x, y, z: neg(_trunc(div(x, y))))
_binary_ad(
    pow_p,
    lambda x, y, z: _pow_dx(x, y),
    lambda x, y, z: mul(z, log(select(eq(x, 0.0), _ones(x), x))),  # JAX's: NaN at x == 0 where z is inf
)
_binary_ad(
    atan2_p, lambda x, y, z: div(y, add(mul(x, x), mul(y, y))), lambda x, y, z: div(neg(x), add(mul(x, x), mul(y, y)))
)


def _pow_dx(x, y):
    # d/dx x**y = y * x**(y-1); as JAX, with no special case at y == 0 (NaN at x == y == 0) for the
    # float exponents pow takes (integer exponents go to integer_pow, whose rule gives 0 there)
    return mul(y, pow(x, sub(y, 1.0)))


def _trunc(x):
    return select(lt(x, 0.0), ceil(x), floor(x))


def _minmax_ad(p, pick_x):
    # JAX splits the gradient evenly between equal operands.
    def weights(x, y):
        wx = select(pick_x(x, y), _ones(x), select(eq(x, y), full_like(x, 0.5), _zeros(x)))
        return wx, sub(1.0, wx)

    def jvp(primals, tangents):
        x, y = primals
        z = bind(p, x, y)
        wx, wy = weights(x, y)
        return ad.sum_of_terms(z, tangents, (lambda t: mul(t, wx), lambda t: mul(t, wy)))

    def vjp(primals, needs):
        # Hand-written so the weights are computed only when a cotangent arrives: max often feeds a
        # stop_gradient (softmax, logsumexp), where linearizing would compute them for nothing.
        x, y = primals
        z = bind(p, x, y)

        def backward(ct):
            wx, wy = weights(x, y)
            return [mul(ct, wx), mul(ct, wy)]

        return z, backward

    ad.jvp_rules[p] = jvp
    ad.vjp_rules[p] = vjp


_minmax_ad(max_p, lambda x, y: gt(x, y))
_minmax_ad(min_p, lambda x, y: lt(x, y))


def _nondiff(p):
    def jvp(primals, tangents, **params):
        out = bind(p, *primals, **params)
        if p.multiple_results:
            return out, [Zero(_aval(o)) for o in out]
        return out, Zero(_aval(out))

    ad.jvp_rules[p] = jvp


for _p in (
    eq_p,
    ne_p,
    lt_p,
    le_p,
    gt_p,
    ge_p,
    and_p,
    or_p,
    xor_p,
    nextafter_p,
    shift_left_p,
    shift_right_logical_p,
    shift_right_arithmetic_p,
):
    _nondiff(_p)


# --- select, clamp ------------------------------------------------------------------------------

select_n_p = _prim("select_n")


@select_n_p.def_abstract_eval
def _select_n_abstract(which, *cases):
    if not cases:
        raise TypeError("select_n must have at least one case")
    c0 = cases[0]
    for c in cases[1:]:
        if c.shape != c0.shape or c.dtype is not c0.dtype:
            raise TypeError(f"select_n cases must have the same shapes and dtypes, got {[str(c) for c in cases]}.")
    if which.shape and which.shape != c0.shape:
        raise TypeError(
            f"select_n `which` must be scalar or have the same shape as cases, got "
            f"which shape {_shape_str(which.shape)} but case shape {_shape_str(c0.shape)}."
        )
    if which.dtype.kind not in "bi" and which.dtype.name != "uint32":
        raise TypeError(f"select_n `which` must be boolean or integer type, got {which.dtype.name}.")
    return ShapedArray(c0.shape, c0.dtype, all(c.weak_type for c in cases))


def select_n(which, *cases):
    cases = _promote_scalars(*cases)
    return bind(select_n_p, which, *cases)


def select(pred, on_true, on_false):
    """lax.select: on_true where pred else on_false."""
    if isinstance(on_true, PRNGKeyArray) or isinstance(on_false, PRNGKeyArray):  # typed keys: select their data
        if not (isinstance(on_true, PRNGKeyArray) and isinstance(on_false, PRNGKeyArray)):
            raise TypeError("lax.select: typed PRNG keys can only be selected against keys")
        d = on_true._data
        return PRNGKeyArray(select(broadcast_in_dim(pred, d.shape, tuple(range(_aval(pred).ndim))), d, on_false._data))
    on_true, on_false = _promote_scalars(on_true, on_false)
    pa = _aval(pred)
    ca = _aval(on_true)
    if pa.shape != ca.shape and pa.shape == ():
        pred = broadcast_in_dim(pred, ca.shape, ())
    return bind(select_n_p, pred, on_false, on_true)


def _select_jvp(primals, tangents):
    which, *cases = primals
    z = bind(select_n_p, which, *cases)
    tcases = tangents[1:]
    if all(type(t) is Zero for t in tcases):
        return z, Zero(_aval(z))
    tcases = [ad.instantiate(t) for t in tcases]
    return z, bind(select_n_p, which, *tcases)


def _select_transpose(ct, which, *cases):
    zeros = _zeros(ct)
    outs = [None]
    for i, c in enumerate(cases):
        picks = [zeros] * len(cases)
        picks[i] = ct
        outs.append(bind(select_n_p, which, *picks) if ad.is_undefined_primal(c) else None)
    return outs


ad.jvp_rules[select_n_p] = _select_jvp
ad.transpose_rules[select_n_p] = _select_transpose


def _select_batch(size, vals, dims):
    which, *cases = vals
    wd, *cds = dims
    d = next(d for d in dims if d is not None)
    wa = _aval(which)
    if wa.ndim == 0 and wd is None:
        cases = [batching.move_to(c, cd, d, size) if cd != d else c for c, cd in zip(cases, cds)]
        return bind(select_n_p, which, *cases), d
    # Broadcast a scalar predicate to full shape first.
    case_nd = _aval(cases[0]).ndim - (0 if cds[0] is None else 1)
    if (wa.ndim - (0 if wd is None else 1)) == 0 and case_nd > 0:
        wshape = (
            _aval(cases[0]).shape
            if cds[0] is None
            else tuple(s for i, s in enumerate(_aval(cases[0]).shape) if i != cds[0])
        )
        if wd is None:
            which = broadcast_in_dim(which, wshape, ())
        else:
            which = broadcast_in_dim(which, (size,) + wshape, (0,))
            wd = 0
    vals = [batching.move_to(v, vd, 0, size) for v, vd in zip([which] + list(cases), [wd] + list(cds))]
    return bind(select_n_p, *vals), 0


batching.batch_rules[select_n_p] = _select_batch


def clamp(min, x, max):
    """lax.clamp(min, x, max)."""
    x = _as_array(x)
    ax = _aval(x)
    lo, hi = _promote_scalars(min, x)[0], _promote_scalars(max, x)[0]
    if _aval(lo).shape != ax.shape:
        lo = broadcast_in_dim(lo, ax.shape, ())
    if _aval(hi).shape != ax.shape:
        hi = broadcast_in_dim(hi, ax.shape, ())
    return bind(min_p, bind(max_p, x, lo), hi)


# --- dtype conversion -------------------------------------------------------------------------

convert_element_type_p = _prim("convert_element_type")


@convert_element_type_p.def_abstract_eval
def _convert_abstract(x, new_dtype, weak_type):
    return ShapedArray(x.shape, new_dtype, weak_type)


def convert_element_type(x, new_dtype):
    """Convert to new_dtype (canonicalized for x64)."""
    new_dtype = dtypes.canonicalize(new_dtype)
    return _convert(x, new_dtype, False)


def _convert(x, new_dtype, weak_type):
    if isinstance(x, _PY_SCALARS):
        return _execute.make_scalar(x, new_dtype, weak_type)
    a = _aval(x)
    if a.dtype is new_dtype and a.weak_type == weak_type:
        return x
    return bind(convert_element_type_p, x, new_dtype=new_dtype, weak_type=weak_type)


def _convert_jvp(primals, tangents, new_dtype, weak_type):
    (x,), (t,) = primals, tangents
    z = bind(convert_element_type_p, x, new_dtype=new_dtype, weak_type=weak_type)
    # an integer x has no tangent (a symbolic zero, or integer placeholders while reverse mode
    # linearizes), except in jet, where an integer primal carries its series as a float tangent that a
    # conversion to float passes on (as JAX's jet does)
    if type(t) is Zero or new_dtype.kind not in "f" or _aval(t).dtype.kind not in "f":
        return z, Zero(_aval(z))
    return z, bind(convert_element_type_p, t, new_dtype=new_dtype, weak_type=weak_type)


ad.jvp_rules[convert_element_type_p] = _convert_jvp
ad.transpose_rules[convert_element_type_p] = lambda ct, x, new_dtype, weak_type: [
    bind(convert_element_type_p, ct, new_dtype=x.aval.dtype, weak_type=x.aval.weak_type)
]
batching.batch_rules[convert_element_type_p] = lambda size, vals, dims, **p: (
    bind(convert_element_type_p, vals[0], **p),
    dims[0],
)

bitcast_convert_type_p = _prim("bitcast_convert_type")


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract(x, new_dtype):
    if x.dtype.itemsize != new_dtype.itemsize:
        raise TypeError(
            "bitcast_convert_type between types of different widths is not supported: "
            f"{x.dtype.name} -> {new_dtype.name}"
        )
    return ShapedArray(x.shape, new_dtype)


_UNSIGNED_OF_SIZE = {1: dtypes.uint8, 2: dtypes.uint16, 4: dtypes.uint32, 8: dtypes.uint64}


def bitcast_convert_type(x, new_dtype):
    """x's bits read as new_dtype. Between widths (as JAX): a wider type becomes a trailing axis of
    size ratio (least significant part first), and a trailing axis of that size folds back into one
    wider element. Composed from same-width bitcasts, shifts and masks on unsigned integers."""
    x, new = _as_array(x), dtypes.dtype(new_dtype)
    a = _aval(x)
    if a.dtype is not new and (a.dtype.kind in "bc" or new.kind in "bc"):
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the operand and destination "
            f"types match. Got operand dtype={a.dtype.name}, new_dtype={new.name}. Consider using the arr.view() "
            "method instead."
        )
    wide, narrow = builtins.max(a.dtype.itemsize, new.itemsize), builtins.min(a.dtype.itemsize, new.itemsize)
    if wide == narrow:
        return bind(bitcast_convert_type_p, x, new_dtype=new)
    ratio, bits = wide // narrow, 8 * narrow
    uw, un = _UNSIGNED_OF_SIZE[wide], _UNSIGNED_OF_SIZE[narrow]
    if a.dtype.itemsize == wide:  # split: [...] -> [..., ratio]
        u = bind(bitcast_convert_type_p, x, new_dtype=uw)
        mask = full(a.shape, (1 << bits) - 1, uw)
        parts = [
            expand_dims(
                convert_element_type(bitwise_and(shift_right_logical(u, full(a.shape, bits * i, uw)), mask), un),
                (a.ndim,),
            )
            for i in range(ratio)
        ]
        return bind(bitcast_convert_type_p, concatenate(parts, a.ndim), new_dtype=new)
    if not a.shape or a.shape[-1] != ratio:  # fold: [..., ratio] -> [...]
        last = a.shape[-1] if a.shape else 1
        raise ValueError(
            f"Attempting to convert array of shape {a.shape} from {a.dtype.name} of size {8 * a.dtype.itemsize} bits to "
            f"{new.name} of size {8 * new.itemsize}, bits but {last} * {8 * a.dtype.itemsize} != {8 * new.itemsize}"
        )
    u = convert_element_type(bind(bitcast_convert_type_p, x, new_dtype=un), uw)
    shifted = shift_left(u, mul(broadcasted_iota(uw, a.shape, a.ndim - 1), full(a.shape, bits, uw)))
    return bind(
        bitcast_convert_type_p, reduce_sum(shifted, (a.ndim - 1,)), new_dtype=new
    )  # the parts' bits are disjoint


_nondiff(bitcast_convert_type_p)
batching.batch_rules[bitcast_convert_type_p] = lambda size, vals, dims, **p: (
    bind(bitcast_convert_type_p, vals[0], **p),
    dims[0],
)


# --- creation -------------------------------------------------------------------------------

iota_p = _prim("iota")


@iota_p.def_abstract_eval
def _iota_abstract(*, dtype, shape, dimension):
    return ShapedArray(shape, dtype)


def iota(dtype, size: int):
    return bind(iota_p, dtype=dtypes.canonicalize(dtype), shape=(int(size),), dimension=0)


def broadcasted_iota(dtype, shape, dimension: int, *, out_sharding=None):
    shape = tuple(int(s) for s in shape)
    return bind(iota_p, dtype=dtypes.canonicalize(dtype), shape=shape, dimension=int(dimension))


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of shape filled with fill_value (a scalar, possibly traced)."""
    shape = tuple(int(s) for s in shape) if not isinstance(shape, int) else (shape,)
    if isinstance(fill_value, _PY_SCALARS):
        if dtype is None:
            d, weak = dtypes.python_scalar_dtype(fill_value), dtypes.is_weak_scalar(fill_value)
        else:
            d, weak = dtypes.canonicalize(dtype), False
        x = _execute.make_scalar(fill_value, d, weak)
    else:
        x = fill_value
        a = _aval(x)
        if a.shape:
            raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape {a.shape}.")
        if dtype is not None:
            x = convert_element_type(x, dtype)
    return broadcast_in_dim(x, shape, ()) if shape else x


def full_like(x, fill_value, dtype=None, shape=None, *, sharding=None):
    a = _aval(x)
    d = a.dtype if dtype is None else dtypes.canonicalize(dtype)
    s = a.shape if shape is None else shape
    out = full(s, fill_value, d)
    if dtype is None and a.weak_type:
        out = _convert(out, d, True)
    return out


def zeros_like_array(x):
    return full_like(x, 0)


# --- shape ops ----------------------------------------------------------------------------------

broadcast_in_dim_p = _prim("broadcast_in_dim")


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract(x, *, shape, broadcast_dimensions):
    if len(broadcast_dimensions) != x.ndim:
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; "
            f"got broadcast_dimensions {broadcast_dimensions} for operand ndim {x.ndim}."
        )
    for i, d in enumerate(broadcast_dimensions):
        if not 0 <= d < len(shape) or x.shape[i] not in (1, shape[d]):
            raise TypeError(
                f"broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
                f"their corresponding dimensions in the target broadcast shape; got operand of "
                f"shape {_shape_str(x.shape)}, target broadcast shape {_shape_str(shape)}, "
                f"broadcast_dimensions {broadcast_dimensions}"
            )
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def broadcast_in_dim(x, shape, broadcast_dimensions, *, out_sharding=None):
    x = _as_array(x)
    shape = tuple(int(s) for s in shape)
    broadcast_dimensions = tuple(int(d) for d in broadcast_dimensions)
    a = _aval(x)
    if a.shape == shape and broadcast_dimensions == tuple(range(len(shape))):
        return x
    return bind(broadcast_in_dim_p, x, shape=shape, broadcast_dimensions=broadcast_dimensions)


def broadcast(x, sizes, *, out_sharding=None):
    a = _aval(x)
    dims = tuple(range(len(sizes), len(sizes) + a.ndim))
    return broadcast_in_dim(x, tuple(sizes) + a.shape, dims)


def _bcast_jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    z = bind(broadcast_in_dim_p, x, **params)
    return z, Zero(_aval(z)) if type(t) is Zero else bind(broadcast_in_dim_p, t, **params)


def _bcast_transpose(ct, x_aval, shape, broadcast_dimensions):
    # Sum over new axes and over axes that were size 1 and got expanded.
    sum_axes = [i for i in range(len(shape)) if i not in broadcast_dimensions]
    keep_one = [i for i, d in enumerate(broadcast_dimensions) if x_aval.shape[i] == 1 and shape[d] != 1]
    sum_axes += [broadcast_dimensions[i] for i in keep_one]
    out = reduce_sum(ct, tuple(sorted(sum_axes))) if sum_axes else ct
    return reshape(out, x_aval.shape) if _aval(out).shape != x_aval.shape else out


def _bcast_batch(size, vals, dims, shape, broadcast_dimensions):
    (x,), (d,) = vals, dims
    x = batching.moveaxis(x, d, 0)
    new_shape = (size,) + shape
    new_dims = (0,) + tuple(b + 1 for b in broadcast_dimensions)
    return bind(broadcast_in_dim_p, x, shape=new_shape, broadcast_dimensions=new_dims), 0


ad.jvp_rules[broadcast_in_dim_p] = _bcast_jvp
ad.transpose_rules[broadcast_in_dim_p] = lambda ct, x, **params: [_bcast_transpose(ct, x.aval, **params)]
batching.batch_rules[broadcast_in_dim_p] = _bcast_batch

reshape_p = _prim("reshape")


@reshape_p.def_abstract_eval
def _reshape_abstract(x, *, new_sizes, dimensions):
    if math.prod(new_sizes) != x.size:
        raise TypeError(
            f"reshape total size must be unchanged, got new_sizes {_shape_str(new_sizes)} "
            f"(of total size {math.prod(new_sizes)}) for shape {_shape_str(x.shape)} "
            f"(of total size {x.size})."
        )
    return ShapedArray(tuple(new_sizes), x.dtype, x.weak_type)


def reshape(x, new_sizes, dimensions=None, *, out_sharding=None):
    x = _as_array(x)
    new_sizes = tuple(int(s) for s in new_sizes)
    if dimensions is not None:
        x = transpose(x, dimensions)
    if _aval(x).shape == new_sizes:
        return x
    return bind(reshape_p, x, new_sizes=new_sizes, dimensions=None)


def _linear_unary(p, transpose_fn):
    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        z = bind(p, x, **params)
        return z, Zero(_aval(z)) if type(t) is Zero else bind(p, t, **params)

    ad.jvp_rules[p] = jvp
    ad.transpose_rules[p] = lambda ct, x, **params: [transpose_fn(ct, x.aval, **params)]


_linear_unary(reshape_p, lambda ct, xa, **_: reshape(ct, xa.shape))


def _reshape_batch(size, vals, dims, new_sizes, dimensions):
    x = batching.moveaxis(vals[0], dims[0], 0)
    return reshape(x, (size,) + new_sizes), 0


batching.batch_rules[reshape_p] = _reshape_batch

transpose_p = _prim("transpose")


@transpose_p.def_abstract_eval
def _transpose_abstract(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise TypeError(
            f"transpose permutation isn't a permutation of operand dimensions, got "
            f"permutation {permutation} for operand shape {_shape_str(x.shape)}."
        )
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


def transpose(x, permutation):
    x = _as_array(x)
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))) and len(permutation) == _aval(x).ndim:
        return x
    return bind(transpose_p, x, permutation=permutation)


def _inv_perm(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


_linear_unary(transpose_p, lambda ct, xa, permutation: transpose(ct, _inv_perm(permutation)))
batching.batch_rules[transpose_p] = lambda size, vals, dims, permutation: (
    bind(transpose_p, batching.moveaxis(vals[0], dims[0], 0), permutation=(0,) + tuple(p + 1 for p in permutation)),
    0,
)


def squeeze(x, dimensions):
    a = _aval(x)
    dims = tuple(sorted(d % a.ndim for d in dimensions))
    for d in dims:
        if a.shape[d] != 1:
            raise ValueError(
                f"cannot select an axis to squeeze out which has size not equal to one, "
                f"got shape={_shape_str(a.shape)} and dimensions={tuple(dimensions)}"
            )
    return reshape(x, tuple(s for i, s in enumerate(a.shape) if i not in dims))


def expand_dims(x, dimensions):
    a = _aval(x)
    nd = a.ndim + len(dimensions)
    dims = sorted(d % nd for d in dimensions)
    shape = list(a.shape)
    for d in dims:
        shape.insert(d, 1)
    return reshape(x, tuple(shape))


slice_p = _prim("slice")


@slice_p.def_abstract_eval
def _slice_abstract(x, *, start_indices, limit_indices, strides):
    if len(start_indices) != x.ndim or len(limit_indices) != x.ndim:
        raise TypeError(
            f"slice start_indices must have length equal to the number of dimensions of the "
            f"operand, got indices {start_indices} for operand shape {_shape_str(x.shape)}."
        )
    for s, l, n in zip(start_indices, limit_indices, x.shape):
        if not (0 <= s <= l <= n):
            raise TypeError(
                f"slice start_indices {start_indices} and limit_indices {limit_indices} "
                f"out of bounds for operand shape {_shape_str(x.shape)}."
            )
    st = strides or (1,) * x.ndim
    shape = tuple((l - s + k - 1) // k if l > s else 0 for s, l, k in zip(start_indices, limit_indices, st))
    return ShapedArray(shape, x.dtype, x.weak_type)


def slice(x, start_indices, limit_indices, strides=None):
    x = _as_array(x)
    st = tuple(int(s) for s in strides) if strides is not None else None
    if st is not None and all(s == 1 for s in st):
        st = None
    start_indices = tuple(int(s) for s in start_indices)
    limit_indices = tuple(int(s) for s in limit_indices)
    if st is None and start_indices == (0,) * len(start_indices) and limit_indices == _aval(x).shape:
        return x
    return bind(slice_p, x, start_indices=start_indices, limit_indices=limit_indices, strides=st)


def _slice_transpose(ct, xa, start_indices, limit_indices, strides):
    st = strides or (1,) * xa.ndim
    ca = _aval(ct)
    cfg = []
    for s, n, k, c in zip(start_indices, xa.shape, st, ca.shape):
        real_hi = s + (c - 1) * k + 1 if c > 0 else s
        cfg.append((s, n - real_hi, k - 1))
    return pad(ct, _zero_scalar(ca.dtype), cfg)


def _zero_scalar(d):
    return _execute.make_scalar(0, d, False)


_linear_unary(slice_p, _slice_transpose)


def _slice_batch(size, vals, dims, start_indices, limit_indices, strides):
    x = batching.moveaxis(vals[0], dims[0], 0)
    st = None if strides is None else (1,) + strides
    return bind(slice_p, x, start_indices=(0,) + start_indices, limit_indices=(size,) + limit_indices, strides=st), 0


batching.batch_rules[slice_p] = _slice_batch

rev_p = _prim("rev")
rev_p.abstract_eval = lambda x, *, dimensions: x
_linear_unary(rev_p, lambda ct, xa, dimensions: rev(ct, dimensions))
batching.batch_rules[rev_p] = lambda size, vals, dims, dimensions: (
    bind(rev_p, batching.moveaxis(vals[0], dims[0], 0), dimensions=tuple(d + 1 for d in dimensions)),
    0,
)


def rev(x, dimensions):
    dims = tuple(sorted(int(d) for d in dimensions))
    return bind(rev_p, _as_array(x), dimensions=dims) if dims else x


pad_p = _prim("pad")


@pad_p.def_abstract_eval
def _pad_abstract(x, padval, *, padding_config):
    if padval.shape:
        raise TypeError(f"pad padding_value must be a scalar, got shape {_shape_str(padval.shape)}.")
    if padval.dtype is not x.dtype:
        raise TypeError(
            f"pad operand and padding_value must be same dtype: got {x.dtype.name} and {padval.dtype.name}."
        )
    if len(padding_config) != x.ndim:
        raise ValueError(
            f"length of padding_config must equal the number of axes of operand, got "
            f"padding_config {padding_config} for operand shape {_shape_str(x.shape)}"
        )
    shape = []
    for n, (lo, hi, interior) in zip(x.shape, padding_config):
        if interior < 0:
            raise ValueError(f"interior padding in padding_config must be nonnegative, got {padding_config}")
        s = lo + hi + n + builtins.max(0, n - 1) * interior
        if s < 0:
            raise ValueError(f"Dimension size after padding is not at least 0, got result shape ({s},)")
        shape.append(s)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def pad(x, padding_value, padding_config):
    x = _as_array(x)
    xa = _aval(x)
    padding_value = (
        _promote_scalars(padding_value, x)[0]
        if not isinstance(padding_value, (builtins.int, builtins.float, builtins.bool))
        else _execute.make_scalar(padding_value, xa.dtype, xa.weak_type)
    )
    if _aval(padding_value).shape:
        padding_value = reshape(padding_value, ())
    cfg = tuple((int(lo), int(hi), int(i)) for lo, hi, i in padding_config)
    return bind(pad_p, x, padding_value, padding_config=cfg)


def _pad_jvp(primals, tangents, padding_config):
    x, pv = primals
    tx, tp = tangents
    z = bind(pad_p, x, pv, padding_config=padding_config)
    if type(tx) is Zero and type(tp) is Zero:
        return z, Zero(_aval(z))
    return z, bind(pad_p, ad.instantiate(tx), ad.instantiate(tp), padding_config=padding_config)


def _pad_transpose(ct, x, pv, padding_config):
    xa = _aval(x)
    # Undo negative padding first by padding the cotangent, then strided-slice out x.
    ct_x = ct
    lo_fix = [builtins.max(0, -lo) for lo, _, _ in padding_config]
    hi_fix = [builtins.max(0, -hi) for _, hi, _ in padding_config]
    if any(lo_fix) or any(hi_fix):
        ct_x = pad(ct_x, 0, [(a, b, 0) for a, b in zip(lo_fix, hi_fix)])
    starts = [builtins.max(lo, 0) for lo, _, _ in padding_config]
    ca = _aval(ct_x)
    limits = [s + (n - 1) * (i + 1) + 1 if n else s for s, n, (_, _, i) in zip(starts, xa.shape, padding_config)]
    limits = [builtins.min(li, c) for li, c in zip(limits, ca.shape)]
    strides = [i + 1 for _, _, i in padding_config]
    gx = slice(ct_x, starts, limits, strides)
    total = reduce_sum(ct, tuple(range(_aval(ct).ndim)))
    gp = sub(total, reduce_sum(gx, tuple(range(xa.ndim)))) if ad.is_undefined_primal(pv) else None
    return [gx, gp]


ad.jvp_rules[pad_p] = _pad_jvp
ad.transpose_rules[pad_p] = _pad_transpose


def _pad_batch(size, vals, dims, padding_config):
    x, pv = vals
    xd, pd = dims
    if pd is not None:
        # Batched padding value: pad with zeros then select the per-example value.
        x = batching.move_to(x, xd, 0, size)
        z = bind(pad_p, x, _zero_scalar(_aval(x).dtype), padding_config=((0, 0, 0),) + padding_config)
        mask = bind(
            pad_p,
            full(_aval(x).shape[1:], True, dtypes.bool_),
            _execute.make_scalar(False, dtypes.bool_, False),
            padding_config=padding_config,
        )
        za = _aval(z)
        pvb = broadcast_in_dim(batching.moveaxis(pv, pd, 0), za.shape, (0,))
        return select(broadcast_in_dim(mask, za.shape, tuple(range(1, za.ndim))), z, pvb), 0
    x = batching.moveaxis(x, xd, 0)
    return bind(pad_p, x, pv, padding_config=((0, 0, 0),) + padding_config), 0


batching.batch_rules[pad_p] = _pad_batch

concatenate_p = _prim("concatenate")


@concatenate_p.def_abstract_eval
def _concat_abstract(*xs, dimension):
    if not xs:
        raise TypeError("concatenate requires at least one operand")
    x0 = xs[0]
    if not 0 <= dimension < x0.ndim:
        raise TypeError(
            f"concatenate dimension out of bounds: dimension {dimension} for shapes "
            f"{', '.join(_shape_str(x.shape) for x in xs)}."
        )
    for x in xs:
        if x.ndim != x0.ndim or any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape)) if i != dimension):
            raise TypeError(
                "Cannot concatenate arrays with shapes that differ in dimensions other than "
                f"the one being concatenated: concatenating along dimension {dimension} for "
                f"shapes {', '.join(_shape_str(x.shape) for x in xs)}."
            )
        if x.dtype is not x0.dtype:
            raise TypeError(
                f"concatenate requires arguments to have the same dtypes, got {', '.join(x.dtype.name for x in xs)}."
            )
    shape = list(x0.shape)
    shape[dimension] = builtins.sum(x.shape[dimension] for x in xs)
    return ShapedArray(tuple(shape), x0.dtype, all(x.weak_type for x in xs))


def concatenate(operands, dimension: int):
    operands = [_as_array(x) for x in operands]
    if len(operands) == 1:
        return operands[0]
    return bind(concatenate_p, *operands, dimension=int(dimension))


def _concat_jvp(primals, tangents, dimension):
    z = bind(concatenate_p, *primals, dimension=dimension)
    if all(type(t) is Zero for t in tangents):
        return z, Zero(_aval(z))
    return z, bind(concatenate_p, *[ad.instantiate(t) for t in tangents], dimension=dimension)


def _concat_transpose(ct, *args, dimension):
    ca = _aval(ct)
    outs, off = [], 0
    for x in args:
        s = _aval(x).shape[dimension]
        if ad.is_undefined_primal(x):
            start = [0] * ca.ndim
            lim = list(ca.shape)
            start[dimension], lim[dimension] = off, off + s
            outs.append(slice(ct, start, lim))
        else:
            outs.append(None)
        off += s
    return outs


def _concat_batch(size, vals, dims, dimension):
    vals = [batching.move_to(v, d, 0, size) for v, d in zip(vals, dims)]
    return bind(concatenate_p, *vals, dimension=dimension + 1), 0


ad.jvp_rules[concatenate_p] = _concat_jvp
ad.transpose_rules[concatenate_p] = _concat_transpose
batching.batch_rules[concatenate_p] = _concat_batch

# --- reductions ---------------------------------------------------------------------------------


def _reduce_abstract(name, kinds=ALL, bool_ok=True):
    def rule(x, *, axes, **_):
        for a in axes:
            if not 0 <= a < x.ndim:
                raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension {x.ndim}")
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return ShapedArray(shape, x.dtype, x.weak_type)

    return rule


def _reduce_batch(p):
    def rule(size, vals, dims, axes, **params):
        (x,), (d,) = vals, dims
        x = batching.moveaxis(x, d, 0)
        return bind(p, x, axes=tuple(a + 1 for a in axes), **params), 0

    return rule


def _norm_axes(x, axes):
    nd = _aval(x).ndim
    return tuple(sorted(int(a) % nd if nd else int(a) for a in axes))


def _reduction(name):
    """(primitive, public function) of one lax reduction; the function binds it over `axes`
    (negative axes counted from the end)."""
    p = _prim(name)
    p.abstract_eval = _reduce_abstract(name)
    batching.batch_rules[p] = _reduce_batch(p)

    def reduce(x, axes):
        return bind(p, _as_array(x), axes=_norm_axes(x, axes))

    reduce.__name__ = reduce.__qualname__ = name
    reduce.__doc__ = f"{name} of `x` over `axes`."
    return p, reduce


reduce_sum_p, reduce_sum = _reduction("reduce_sum")
reduce_max_p, reduce_max = _reduction("reduce_max")
reduce_min_p, reduce_min = _reduction("reduce_min")
reduce_prod_p, reduce_prod = _reduction("reduce_prod")
reduce_and_p, reduce_and = _reduction("reduce_and")
reduce_or_p, reduce_or = _reduction("reduce_or")
reduce_xor_p, reduce_xor = _reduction("reduce_xor")


def _keep_shape(x_shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(x_shape))


def _expand_back(y, x_shape, axes):
    """Broadcast a reduced result back over the reduced axes."""
    kept = tuple(i for i in range(len(x_shape)) if i not in axes)
    return broadcast_in_dim(y, x_shape, kept)


def _sum_jvp(primals, tangents, axes):
    (x,), (t,) = primals, tangents
    z = reduce_sum(x, axes)
    return z, Zero(_aval(z)) if type(t) is Zero else reduce_sum(t, axes)


ad.jvp_rules[reduce_sum_p] = _sum_jvp
ad.transpose_rules[reduce_sum_p] = lambda ct, x, axes: [_expand_back(ct, x.aval.shape, axes)]


def _chooser_jvp_weights(x, z, axes):
    # Gradient of max/min goes to the arg(s) equal to the result, split evenly (JAX's rule).
    shape = _aval(x).shape
    zb = _expand_back(z, shape, axes)
    mask = convert_element_type(eq(x, zb), _aval(x).dtype)
    counts = _expand_back(reduce_sum(mask, axes), shape, axes)
    return div(mask, counts)


def _chooser_ad(p):
    def jvp(primals, tangents, axes):
        (x,), (t,) = primals, tangents
        z = bind(p, x, axes=axes)
        if type(t) is Zero:
            return z, Zero(_aval(z))
        return z, reduce_sum(mul(t, _chooser_jvp_weights(x, z, axes)), axes)

    def vjp(primals, needs, axes):  # lazy weights, as for max/min above
        (x,) = primals
        z = bind(p, x, axes=axes)
        shape = _aval(x).shape
        return z, lambda ct: [mul(_expand_back(ct, shape, axes), _chooser_jvp_weights(x, z, axes))]

    ad.jvp_rules[p] = jvp
    ad.vjp_rules[p] = vjp


_chooser_ad(reduce_max_p)
_chooser_ad(reduce_min_p)


def _prod_grad(x, axes, z):
    # d prod / dx_i = prod_{j != i} x_j, computed without division so zeros are handled.
    shape = _aval(x).shape
    n = len(shape)
    perm = [i for i in range(n) if i not in axes] + list(axes)
    xt = transpose(x, perm)
    kept = [shape[i] for i in range(n) if i not in axes]
    m = math.prod(shape[i] for i in axes)
    xf = reshape(xt, tuple(kept) + (m,))
    excl_l = cumprod(xf, axis=len(kept), reverse=False)
    excl_r = cumprod(xf, axis=len(kept), reverse=True)
    one = full(tuple(kept) + (1,), 1, _aval(x).dtype)
    left = concatenate([one, slice(excl_l, [0] * len(kept) + [0], kept + [m - 1])], len(kept)) if m > 1 else one
    right = concatenate([slice(excl_r, [0] * len(kept) + [1], kept + [m]), one], len(kept)) if m > 1 else one
    g = mul(left, right)
    g = reshape(g, tuple(_aval(xt).shape))
    return transpose(g, _inv_perm(perm))


def _prod_jvp(primals, tangents, axes):
    (x,), (t,) = primals, tangents
    z = reduce_prod(x, axes)
    if type(t) is Zero:
        return z, Zero(_aval(z))
    return z, reduce_sum(mul(t, _prod_grad(x, axes, z)), axes)


ad.jvp_rules[reduce_prod_p] = _prod_jvp
for _p in (reduce_and_p, reduce_or_p, reduce_xor_p):
    _nondiff(_p)

argmax_p = _prim("argmax")
argmin_p = _prim("argmin")


def _arg_abstract(x, *, axes, index_dtype):
    (a,) = axes
    if not 0 <= a < x.ndim:
        raise ValueError(f"argmax/argmin: axis {a} is out of bounds for array of dimension {x.ndim}")
    if x.shape[a] == 0:
        raise ValueError(f"argmin and argmax require non-empty reduced dimension. operand.shape={x.shape} axis={a}")
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i != a), index_dtype)


argmax_p.abstract_eval = _arg_abstract
argmin_p.abstract_eval = _arg_abstract
_nondiff(argmax_p)
_nondiff(argmin_p)
batching.batch_rules[argmax_p] = _reduce_batch(argmax_p)
batching.batch_rules[argmin_p] = _reduce_batch(argmin_p)


def argmax(x, axis: int, index_dtype):
    x = _as_array(x)
    return bind(
        argmax_p, x, axes=(int(axis) % builtins.max(_aval(x).ndim, 1),), index_dtype=dtypes.canonicalize(index_dtype)
    )


def argmin(x, axis: int, index_dtype):
    x = _as_array(x)
    return bind(
        argmin_p, x, axes=(int(axis) % builtins.max(_aval(x).ndim, 1),), index_dtype=dtypes.canonicalize(index_dtype)
    )


# --- cumulative reductions (a Routine: associative scans along one axis) ----------------------

cumsum_p = _prim("cumsum")
cumprod_p = _prim("cumprod")
cummax_p = _prim("cummax")
cummin_p = _prim("cummin")
cumlogsumexp_p = _prim("cumlogsumexp")
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    _p.abstract_eval = lambda x, *, axis, reverse: x
    batching.batch_rules[_p] = (
        lambda p: (
            lambda size, vals, dims, axis, reverse: (
                bind(p, batching.moveaxis(vals[0], dims[0], 0), axis=axis + 1, reverse=reverse),
                0,
            )
        )
    )(_p)


def _cum(p):
    def f(x, axis: int = 0, reverse: bool = False):
        x = _as_array(x)
        nd = _aval(x).ndim
        if not -nd <= axis < nd:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd}")
        return bind(p, x, axis=int(axis) % nd, reverse=bool(reverse))

    f.__name__ = p.name
    return f


cumsum, cumprod, cummax, cummin = _cum(cumsum_p), _cum(cumprod_p), _cum(cummax_p), _cum(cummin_p)
cumlogsumexp = _cum(cumlogsumexp_p)


def _cumsum_jvp(primals, tangents, axis, reverse):
    (x,), (t,) = primals, tangents
    z = cumsum(x, axis, reverse)
    return z, Zero(_aval(z)) if type(t) is Zero else cumsum(t, axis, reverse)


ad.jvp_rules[cumsum_p] = _cumsum_jvp
ad.transpose_rules[cumsum_p] = lambda ct, x, axis, reverse: [cumsum(ct, axis, not reverse)]


def _cumprod_grad_fn(x, axis, reverse, t):
    """Tangent of cumprod: dy_i = sum_{j<=i} t_j * y_{j-1} * prod_{j<k<=i} x_k (exact with zeros)."""
    xa = _aval(x)
    n = xa.shape[axis]
    last = xa.ndim - 1
    xs = moveaxis_lax(x, axis, -1)
    ts = moveaxis_lax(t, axis, -1)
    if reverse:
        xs, ts = rev(xs, (last,)), rev(ts, (last,))
    lead = tuple(_aval(xs).shape[:-1])
    nl = len(lead)
    sq = lead + (n, n)  # axes (..., j, i)
    jj = broadcasted_iota(dtypes.int32, sq, nl)
    ii = broadcasted_iota(dtypes.int32, sq, nl + 1)
    xi = broadcast_in_dim(xs, sq, tuple(range(nl)) + (nl + 1,))
    between = cumprod(select(gt(ii, jj), xi, full_like(xi, 1)), nl + 1)
    between = select(ge(ii, jj), between, full_like(between, 0))
    y = cumprod(xs, last)
    one = full(lead + (1,), 1, xa.dtype)
    y_prev = concatenate([one, slice(y, (0,) * xs_ndim(xs), lead + (n - 1,))], last) if n > 1 else one
    w = broadcast_in_dim(mul(ts, y_prev), sq, tuple(range(nl)) + (nl,))
    out = reduce_sum(mul(between, w), (nl,))
    if reverse:
        out = rev(out, (last,))
    return moveaxis_lax(out, -1, axis)


def xs_ndim(x):
    return _aval(x).ndim


def moveaxis_lax(x, src, dst):
    nd = _aval(x).ndim
    return batching.moveaxis(x, src % nd, dst % nd)


def _cumprod_jvp(primals, tangents, axis, reverse):
    (x,), (t,) = primals, tangents
    z = cumprod(x, axis, reverse)
    if type(t) is Zero:
        return z, Zero(_aval(z))
    return z, _cumprod_grad_fn(x, axis, reverse, t)


ad.jvp_rules[cumprod_p] = _cumprod_jvp


# cummax/cummin's JVPs are JAX's, the JVP of an associative scan of max/min: lax/control_flow.py


def _cumlse_jvp(primals, tangents, axis, reverse):
    (x,), (t,) = primals, tangents
    z = cumlogsumexp(x, axis, reverse)
    if type(t) is Zero:
        return z, Zero(_aval(z))
    # d z_i = sum_{j<=i} exp(x_j - z_i) t_j
    m = reduce_max(x, (axis,))
    mb = _expand_back(m, _aval(x).shape, (axis,))
    w = exp(sub(x, mb))
    num = cumsum(mul(w, t), axis, reverse)
    den = cumsum(w, axis, reverse)
    return z, div(num, den)


ad.jvp_rules[cumlogsumexp_p] = _cumlse_jvp

# --- dot_general ------------------------------------------------------------------------------

dot_general_p = _prim("dot_general")


@dot_general_p.def_abstract_eval
def _dot_general_abstract(x, y, *, dimension_numbers, precision=None, preferred_element_type=None):
    (xc, yc), (xb, yb) = dimension_numbers
    for a, b in zip(xc, yc):
        if x.shape[a] != y.shape[b]:
            raise TypeError(
                f"dot_general requires contracting dimensions to have the same shape, got "
                f"{tuple(x.shape[i] for i in xc)} and {tuple(y.shape[i] for i in yc)}."
            )
    for a, b in zip(xb, yb):
        if x.shape[a] != y.shape[b]:
            raise TypeError(
                f"dot_general requires lhs batch dimensions and rhs batch dimensions to have "
                f"the same shape, got {tuple(x.shape[i] for i in xb)} and "
                f"{tuple(y.shape[i] for i in yb)}."
            )
    if x.dtype is not y.dtype and preferred_element_type is None:
        raise TypeError(f"dot_general requires operands of the same dtype, got {x.dtype.name} and {y.dtype.name}")
    xf = [i for i in range(x.ndim) if i not in xc and i not in xb]
    yf = [i for i in range(y.ndim) if i not in yc and i not in yb]
    shape = tuple(x.shape[i] for i in xb) + tuple(x.shape[i] for i in xf) + tuple(y.shape[i] for i in yf)
    d = preferred_element_type or x.dtype
    return ShapedArray(shape, d, x.weak_type and y.weak_type)


def dot_general(x, y, dimension_numbers, precision=None, preferred_element_type=None, *, out_sharding=None):
    (xc, yc), (xb, yb) = dimension_numbers
    dn = (
        (tuple(int(i) for i in xc), tuple(int(i) for i in yc)),
        (tuple(int(i) for i in xb), tuple(int(i) for i in yb)),
    )
    pet = dtypes.canonicalize(preferred_element_type) if preferred_element_type is not None else None
    return bind(
        dot_general_p, _as_array(x), _as_array(y), dimension_numbers=dn, precision=None, preferred_element_type=pet
    )


def dot(x, y, precision=None, preferred_element_type=None, *, out_sharding=None):
    xa, ya = _aval(x), _aval(y)
    if xa.ndim > 2 or ya.ndim > 2 or xa.ndim == 0 or ya.ndim == 0:
        raise TypeError(f"dot requires 1-D or 2-D operands, got shapes {xa.shape} and {ya.shape}")
    return dot_general(x, y, (((xa.ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)


def _dot_transpose(ct, x, y, dimension_numbers, precision, preferred_element_type):
    xa, ya = _aval(x), _aval(y)
    (xc, yc), (xb, yb) = dimension_numbers

    def grad_x(ct, y, xa, ya, xc, yc, xb, yb, swap):
        x_kept = [i for i in range(xa.ndim) if i not in xc and i not in xb]
        y_kept = [i for i in range(ya.ndim) if i not in yc and i not in yb]
        nb = len(xb)
        # Output axes: batch, then lhs free axes, then rhs free axes (swapped roles for the rhs).
        ans_batch = list(range(nb))
        first = len(y_kept) if swap else len(x_kept)
        ans_y = list(range(nb, nb + len(y_kept))) if swap else list(range(nb + first, nb + first + len(y_kept)))
        # g[b, x_kept, y_contract] = sum over ans_y of ct * y[b, y_kept, y_contract]
        g = dot_general(
            ct,
            y,
            ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(yb))),
            preferred_element_type=preferred_element_type,
        )
        # g axes: batch, ans_x (x_kept order), then y's remaining (contracting, in y order)
        y_rest = [i for i in range(ya.ndim) if i not in y_kept and i not in yb]
        x_from_y = {b: a for a, b in zip(xc, yc)}
        current = list(xb) + x_kept + [x_from_y[i] for i in y_rest]
        perm = [current.index(i) for i in range(xa.ndim)]
        g = transpose(g, perm)
        if _aval(g).dtype is not xa.dtype:
            g = convert_element_type(g, xa.dtype)
        return g

    gx = grad_x(ct, y, xa, ya, xc, yc, xb, yb, False) if ad.is_undefined_primal(x) else None
    gy = grad_x(ct, x, ya, xa, yc, xc, yb, xb, True) if ad.is_undefined_primal(y) else None
    return [gx, gy]


def _dot_batch(size, vals, dims, dimension_numbers, precision, preferred_element_type):
    x, y = vals
    xd, yd = dims
    (xc, yc), (xb, yb) = dimension_numbers
    if xd is not None and yd is not None:
        # New batch dimension at 0 on both sides.
        x = batching.moveaxis(x, xd, 0)
        y = batching.moveaxis(y, yd, 0)
        dn = (
            (tuple(c + 1 for c in xc), tuple(c + 1 for c in yc)),
            ((0,) + tuple(b + 1 for b in xb), (0,) + tuple(b + 1 for b in yb)),
        )
        return dot_general(x, y, dn, preferred_element_type=preferred_element_type), 0
    if xd is not None:
        # Batch axis becomes a free lhs axis; it lands after the batch dims in the output.
        x = batching.moveaxis(x, xd, _aval(x).ndim - 1)
        nb = len(xb)
        x_kept = [i for i in range(_aval(x).ndim - 1) if i not in xc and i not in xb]
        z = dot_general(x, y, dimension_numbers, preferred_element_type=preferred_element_type)
        return z, nb + len(x_kept)
    y = batching.moveaxis(y, yd, _aval(y).ndim - 1)
    z = dot_general(x, y, dimension_numbers, preferred_element_type=preferred_element_type)
    return z, _aval(z).ndim - 1


ad.jvp_rules[dot_general_p] = ad.bilinear_jvp(dot_general_p)
ad.transpose_rules[dot_general_p] = _dot_transpose
batching.batch_rules[dot_general_p] = _dot_batch

# --- stop_gradient, copy ------------------------------------------------------------------------

stop_gradient_p = _prim("stop_gradient")
stop_gradient_p.abstract_eval = lambda x: x
_nondiff(stop_gradient_p)
batching.batch_rules[stop_gradient_p] = lambda size, vals, dims: (bind(stop_gradient_p, vals[0]), dims[0])


def stop_gradient(x):
    """Identity whose derivative is zero; applies to every leaf of a pytree."""
    from pyjax.core.pytree import tree_map

    def sg(v):
        v = _as_array(v)
        if _aval(v).dtype.kind not in "fc":
            return v
        return bind(stop_gradient_p, v)

    return tree_map(sg, x)


copy_p = _prim("copy")
copy_p.abstract_eval = lambda x: x
_linear_unary(copy_p, lambda ct, xa: ct)
batching.batch_rules[copy_p] = lambda size, vals, dims: (bind(copy_p, vals[0]), dims[0])

# --- PRNG ---------------------------------------------------------------------------------------

threefry2x32_p = _prim("threefry2x32", multi=True)


@threefry2x32_p.def_abstract_eval
def _threefry_abstract(k0, k1, x0, x1):
    for a in (k0, k1, x0, x1):
        if a.dtype is not dtypes.uint32:
            raise TypeError(f"threefry2x32 requires uint32 arguments, got {a.dtype.name}")
    shape = x0.shape
    return [ShapedArray(shape, dtypes.uint32), ShapedArray(shape, dtypes.uint32)]


_nondiff(threefry2x32_p)
batching.batch_rules[threefry2x32_p] = lambda size, vals, dims: (
    threefry2x32_p.bind(
        *[
            batching.move_to(v, d, 0, size) if _aval(v).ndim or d is not None else broadcast_in_dim(v, (size,), ())
            for v, d in zip(vals, dims)
        ]
    ),
    [0, 0],
)


def threefry2x32(k0, k1, x0, x1):
    shape = _aval(x0).shape
    k0 = broadcast_in_dim(k0, shape, ()) if _aval(k0).shape != shape else k0
    k1 = broadcast_in_dim(k1, shape, ()) if _aval(k1).shape != shape else k1
    return threefry2x32_p.bind(k0, k1, x0, x1)


# The array ops that vmap's batch-axis moves, the runtime's stacking and ad's zeros need (core/hooks.py).
_hooks.register(
    transpose=transpose, broadcast_in_dim=broadcast_in_dim, reshape=reshape, concatenate=concatenate, full=full
)

__all__ = [n for n in dir() if not n.startswith("_")]
