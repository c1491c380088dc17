"""Complex numbers on real-only backends: the real/imag/complex primitives and complex rules.

A complex array is stored as a real array with a trailing axis of 2 holding (re, im) pairs
(pyjax.runtime.array.complex_phys). Three primitives cross between complex values and real
ones: `real`, `imag` and `complex`. Every other primitive bound with a complex operand is
rewritten by its `complex_rule` (core.bind) into real primitives on the parts, so eager mode,
jit, grad and vmap only ever see real arithmetic, and neither the compiler nor the wasm/webgpu
code generators know complex numbers exist. A primitive without a rule raises a TypeError
naming the dtype instead of computing garbage. Under jit, `physicalize` turns a jaxpr that
carries complex values into a real one over the (..., 2) pairs.

Cotangents follow JAX's convention for complex linear maps (the transpose, not the adjoint):
real^T(ct) = complex(ct, 0), imag^T(ct) = complex(0, -ct), complex^T(ct) = (re ct, -im ct).
Composed with the real rules in between, grad(f)(z) of a real f is df/dx - i df/dy, as in JAX.
"""

from __future__ import annotations

import builtins

from pyjax._typing import Array as ArrayT
from pyjax.compiler.partition import INLINE_CALLS
from pyjax.core import core, dtypes, hooks
from pyjax.core.core import Jaxpr, JaxprEqn, Literal, Primitive, ShapedArray, Var, bind, get_aval
from pyjax.interpreters import ad, batching, staging
from pyjax.interpreters.ad import Zero
from pyjax.lax import lax
from pyjax.runtime import execute
from pyjax.runtime.array import Array, complex_from_phys, complex_phys
from pyjax.runtime.device import default_device

_SCALARS = (builtins.int, builtins.float, builtins.bool, builtins.complex)


def _aval(x) -> ShapedArray:
    return get_aval(x)


def _is_c(x) -> bool:
    return core._is_complex_value(x)


def _arr(x):
    """Python scalars (complex included) -> typed scalar constants; arrays pass through."""
    if isinstance(x, _SCALARS):
        return execute.make_scalar(x, dtypes.python_scalar_dtype(x), dtypes.is_weak_scalar(x))
    return x


def _zeros_like(x):
    return lax.full_like(x, 0)  # keeps x's weak type, so weak complex values stay weak


def _ones_like(x):
    return lax.full_like(x, 1)


def _concrete(x) -> Array:
    return x if type(x) is Array else execute._to_array(x, default_device())


# --- the primitives ----------------------------------------------------------------------------


def _part_abstract(name):
    def rule(x, **_):
        if x.dtype.kind != "c":
            raise TypeError(
                f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of complexfloating."
            )
        return ShapedArray(x.shape, dtypes.real_dtype(x.dtype), x.weak_type)

    return rule


real_p = Primitive("real")
imag_p = Primitive("imag")
complex_p = Primitive("complex")
for _p in (real_p, imag_p, complex_p):
    _p.complex_ok = True
real_p.abstract_eval = _part_abstract("real")
imag_p.abstract_eval = _part_abstract("imag")


@complex_p.def_abstract_eval
def _complex_abstract(x, y):
    if x.shape != y.shape:
        raise TypeError(
            f"complex got incompatible shapes for broadcasting: {lax._shape_str(x.shape)}, {lax._shape_str(y.shape)}."
        )
    if x.dtype is not y.dtype:
        raise TypeError(f"lax.complex requires arguments to have the same dtypes, got {x.dtype.name}, {y.dtype.name}.")
    if x.dtype.name not in ("float32", "float64"):
        raise TypeError(f"complex does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of floating.")
    return ShapedArray(x.shape, dtypes.complex_dtype(x.dtype), x.weak_type and y.weak_type)


def _phys_part(p, k: int):
    """re (k=0) or im (k=1) of a (..., 2) pair array, traced or concrete."""
    shape = _aval(p).shape
    n = len(shape) - 1
    part = lax.slice(p, (0,) * n + (k,), shape[:-1] + (k + 1,))
    return lax.reshape(part, shape[:-1])


def _phys_pack(x, y):
    """The (..., 2) pair array of parts x and y."""
    shape = _aval(x).shape
    return lax.concatenate([lax.reshape(x, shape + (1,)), lax.reshape(y, shape + (1,))], len(shape))


def _with_aval(a: Array, aval: ShapedArray) -> Array:
    if a._buf is None:
        return Array(aval, None, None, a._device, host=a._host)
    return Array(aval, a._buf, a._tracker, a._device)


def _part_impl(k: int):
    def impl(x):
        x = _concrete(x)
        out_aval = _part_abstract("real" if k == 0 else "imag")(x.aval)
        if x._buf is None:
            h = builtins.complex(x._host)
            return Array(out_aval, None, None, x._device, host=h.imag if k else h.real)
        return _with_aval(_phys_part(complex_phys(x), k), out_aval)

    return impl


def _complex_impl(x, y):
    x, y = _concrete(x), _concrete(y)
    out_aval = _complex_abstract(x.aval, y.aval)
    if x._buf is None and y._buf is None:
        return Array(out_aval, None, None, x._device, host=builtins.complex(x._host, y._host))
    phys_aval = ShapedArray(x.aval.shape + (2,), x.aval.dtype, out_aval.weak_type)
    return complex_from_phys(_with_aval(_phys_pack(x, y), phys_aval), out_aval.dtype)


real_p.impl = _part_impl(0)
imag_p.impl = _part_impl(1)
complex_p.impl = _complex_impl


def real(x) -> ArrayT:
    """lax.real: the real part of a complex array (a float array)."""
    return bind(real_p, _arr(x))


def imag(x) -> ArrayT:
    """lax.imag: the imaginary part of a complex array (a float array)."""
    return bind(imag_p, _arr(x))


def complex(x, y) -> ArrayT:
    """lax.complex: x + i y from float arrays of one dtype (float32 -> complex64)."""
    x, y = lax._broadcast_operands("complex", *lax._promote_scalars(x, y))
    return bind(complex_p, x, y)


def conj(x) -> ArrayT:
    """lax.conj: the complex conjugate (a real operand becomes complex, as in JAX)."""
    x = _arr(x)
    if _is_c(x):
        return bind(complex_p, real(x), lax.neg(imag(x)))
    a = _aval(x)
    x = lax._convert(x, a.dtype if a.dtype.name in ("float32", "float64") else dtypes.default_float(), a.weak_type)
    return bind(complex_p, x, _zeros_like(x))


# --- their derivatives and batching ------------------------------------------------------------


def _part_jvp(p):
    return lambda primals, tangents: (bind(p, primals[0]), bind(p, tangents[0]))


def _complex_jvp(primals, tangents):
    x, y = primals
    tx, ty = (ad.instantiate(t) if type(t) is Zero else t for t in tangents)
    if type(tangents[0]) is Zero:
        tx = _zeros_like(x)
    if type(tangents[1]) is Zero:
        ty = _zeros_like(y)
    return bind(complex_p, x, y), bind(complex_p, tx, ty)


ad.jvp_rules[real_p] = _part_jvp(real_p)
ad.jvp_rules[imag_p] = _part_jvp(imag_p)
ad.jvp_rules[complex_p] = _complex_jvp
ad.transpose_rules[real_p] = lambda ct, x: [bind(complex_p, ct, _zeros_like(ct))]
ad.transpose_rules[imag_p] = lambda ct, x: [bind(complex_p, _zeros_like(ct), lax.neg(ct))]
ad.transpose_rules[complex_p] = lambda ct, x, y: [bind(real_p, ct), lax.neg(bind(imag_p, ct))]
batching.batch_rules[real_p] = lambda size, vals, dims: (bind(real_p, vals[0]), dims[0])
batching.batch_rules[imag_p] = lambda size, vals, dims: (bind(imag_p, vals[0]), dims[0])
batching.batch_rules[complex_p] = lax._broadcasting_batch_rule(complex_p)


# --- complex arithmetic on (re, im) pairs of real arrays ---------------------------------------


def _parts(x):
    return bind(real_p, x), bind(imag_p, x)


def _pack(p):
    return bind(complex_p, p[0], p[1])


def _cmul(p, q):
    (a, b), (c, d) = p, q
    return lax.sub(lax.mul(a, c), lax.mul(b, d)), lax.add(lax.mul(a, d), lax.mul(b, c))


def _cdiv(p, q):
    (a, b), (c, d) = p, q
    den = lax.add(lax.mul(c, c), lax.mul(d, d))
    return lax.div(lax.add(lax.mul(a, c), lax.mul(b, d)), den), lax.div(lax.sub(lax.mul(b, c), lax.mul(a, d)), den)


def _cabs(p):
    """|a + ib|, scaled by max(|a|, |b|) so squares neither overflow nor underflow."""
    # |v| as v * sign(v): the same value, with derivative 0 at v == 0 (lax.abs's is 1 there, as JAX's),
    # so |z|'s derivative at z = 0 is 0 as in JAX
    a, b = lax.mul(p[0], lax.sign(p[0])), lax.mul(p[1], lax.sign(p[1]))
    m = lax.max(a, b)
    zero = lax.eq(m, _zeros_like(m))
    safe = lax.select(zero, _ones_like(m), m)
    qa, qb = lax.div(a, safe), lax.div(b, safe)
    s = lax.add(lax.mul(qa, qa), lax.mul(qb, qb))
    # at z = 0 take sqrt(1) so the derivative stays finite (it is then 0, as in JAX)
    out = lax.mul(m, lax.sqrt(lax.select(zero, _ones_like(s), s)))
    # an infinite part makes |z| infinite (inf / inf above gave NaN), unless the other is NaN (XLA's)
    inf = lax.full_like(m, float("inf"))
    big = lax.bitwise_and(lax.bitwise_or(lax.eq(a, inf), lax.eq(b, inf)), lax.bitwise_and(lax.eq(a, a), lax.eq(b, b)))
    return lax.select(big, inf, out)


def _cexp(p):
    e = lax.exp(p[0])
    return lax.mul(e, lax.cos(p[1])), lax.mul(e, lax.sin(p[1]))


def _clog(p):
    return lax.log(_cabs(p)), lax.atan2(p[1], p[0])


def _csqrt(p, signed_zero: bool = False):
    """Principal square root: t = sqrt((|a| + |z|) / 2), the other part b / 2t (0 at z = 0).

    On the cut (a < 0, b = 0) JAX gives +i sqrt(-a) even for b = -0.0; signed_zero=True
    gives -i sqrt(-a) there instead, which the inverse functions below rely on."""
    a, b = p
    t = lax.sqrt(lax.mul(lax.add(lax.abs(a), _cabs(p)), 0.5))
    zero = lax.eq(t, _zeros_like(t))
    safe = lax.select(zero, _ones_like(t), t)
    other = lax.select(zero, _zeros_like(t), lax.div(b, lax.mul(safe, 2.0)))
    pos = lax.ge(a, _zeros_like(a))
    re = lax.select(pos, t, lax.abs(other))
    neg = lax.lt(lax.div(_ones_like(b), b) if signed_zero else b, _zeros_like(b))  # 1 / -0.0 < 0
    im = lax.select(pos, other, lax.select(neg, lax.neg(t), t))
    return re, im


# Inverse trig and hyperbolic functions after Kahan ("Branch cuts for complex elementary
# functions"): built from principal square roots of 1 -+ z, so the branch cuts are those of
# numpy and JAX. Kahan's formulas need signed zeros: 1 - z is (1 - a, -b), not (1 - a, 0 - b),
# and the roots honour the sign of a zero. A value on a cut takes the side of +0.0 parts even
# where its parts are -0.0, as JAX does (numpy instead honours the sign there).


def _unsigned(p):
    return tuple(lax.add(q, 0.0) for q in p)  # -0.0 + 0.0 = +0.0; other values unchanged


def _sqrt_s(p):
    return _csqrt(p, signed_zero=True)


def _casin(p):
    a, b = _unsigned(p)
    s, t = _sqrt_s((lax.sub(1.0, a), lax.neg(b))), _sqrt_s((lax.add(a, 1.0), b))
    # Re(s t) >= 0, so atan2 is arctan(a / Re(s t)) with its zero denominator handled
    re = lax.atan2(a, lax.sub(lax.mul(s[0], t[0]), lax.mul(s[1], t[1])))
    return re, lax.asinh(lax.sub(lax.mul(s[0], t[1]), lax.mul(s[1], t[0])))


def _cacos(p):
    a, b = _unsigned(p)
    s, t = _sqrt_s((lax.sub(1.0, a), lax.neg(b))), _sqrt_s((lax.add(a, 1.0), b))
    re = lax.mul(lax.atan2(s[0], t[0]), 2.0)
    return re, lax.asinh(lax.sub(lax.mul(t[0], s[1]), lax.mul(t[1], s[0])))


def _cacosh(p):
    a, b = _unsigned(p)
    s, t = _sqrt_s((lax.sub(a, 1.0), b)), _sqrt_s((lax.add(a, 1.0), b))
    re = lax.asinh(lax.add(lax.mul(s[0], t[0]), lax.mul(s[1], t[1])))
    return re, lax.mul(lax.atan2(s[1], t[0]), 2.0)


def _catanh(p):
    """atanh z = log((1 + z) / (1 - z)) / 2, its real part via log1p for accuracy near 0."""
    a, b = p  # atan2 takes the sign of a zero b, as JAX's atanh does
    bb = lax.mul(b, b)
    den = lax.add(lax.mul(lax.sub(1.0, a), lax.sub(1.0, a)), bb)
    re = lax.mul(lax.log1p(lax.div(lax.mul(a, 4.0), den)), 0.25)
    im = lax.atan2(lax.mul(b, 2.0), lax.sub(lax.mul(lax.sub(1.0, a), lax.add(a, 1.0)), bb))
    return re, lax.mul(im, 0.5)


def _via_i(fn, unsigned: bool):
    """f(z) = -i g(i z), e.g. asinh from asin and atan from atanh."""

    def h(p):
        a, b = _unsigned(p) if unsigned else p
        u, v = fn((lax.neg(b), a))
        return v, lax.neg(u)

    return h


def _csin(p):
    a, b = p
    return lax.mul(lax.sin(a), lax.cosh(b)), lax.mul(lax.cos(a), lax.sinh(b))


def _ccos(p):
    a, b = p
    return lax.mul(lax.cos(a), lax.cosh(b)), lax.neg(lax.mul(lax.sin(a), lax.sinh(b)))


def _csinh(p):
    a, b = p
    return lax.mul(lax.sinh(a), lax.cos(b)), lax.mul(lax.cosh(a), lax.sin(b))


def _ccosh(p):
    a, b = p
    return lax.mul(lax.cosh(a), lax.cos(b)), lax.mul(lax.sinh(a), lax.sin(b))


def _cones(p):
    return _ones_like(p[0]), _zeros_like(p[1])


def _cpow_int(p, n: int):
    """p ** n for an integer n by repeated squaring (negative n: the reciprocal)."""
    if n == 0:
        return _cones(p)
    k, out, base = builtins.abs(n), None, p
    while k:
        if k & 1:
            out = base if out is None else _cmul(out, base)
        k >>= 1
        if k:
            base = _cmul(base, base)
    return _cdiv(_cones(p), out) if n < 0 else out


_LN2 = 0.6931471805599453


def _cexpm1(p):
    # re = expm1(a) cos b - 2 sin^2(b/2) keeps precision for small z
    a, b = p
    s = lax.sin(lax.mul(b, 0.5))
    re = lax.sub(lax.mul(lax.expm1(a), lax.cos(b)), lax.mul(lax.mul(s, s), 2.0))
    return re, lax.mul(lax.exp(a), lax.sin(b))


def _clog1p(p):
    q = (lax.add(p[0], 1.0), p[1])
    return lax.log(_cabs(q)), lax.atan2(q[1], q[0])


def _csign(p):
    r = _cabs(p)
    safe = lax.select(lax.eq(r, _zeros_like(r)), _ones_like(r), r)
    return lax.div(p[0], safe), lax.div(p[1], safe)


# --- complex rules ------------------------------------------------------------------------------


def _same_complex(name: str, xs) -> None:
    ds = [_aval(x).dtype for x in xs]
    if builtins.any(d is not ds[0] for d in ds) or ds[0].kind != "c":
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {', '.join(d.name for d in ds)}.")


def _unary(fn, out_real: bool = False):
    def rule(x, **params):
        out = fn(_parts(_arr(x)), **params)
        return out if out_real else _pack(out)

    return rule


def _split_param(v, k: int):
    return (v.imag if k else v.real) if isinstance(v, builtins.complex) else v


def _componentwise(prim, data=None):
    """A rule for a primitive that is R-linear and acts on re and im alike (reshape, add, gather ...).

    data: which operands carry the array's values (the rest, e.g. indices, are shared)."""

    def rule(*args, **params):
        args = [_arr(a) for a in args]
        idx = range(len(args)) if data is None else data(len(args))
        _same_complex(prim.name, [args[i] for i in idx])
        outs = []
        for k in (0, 1):
            ps = {n: _split_param(v, k) for n, v in params.items()}
            ins = [bind(real_p if k == 0 else imag_p, a) if i in idx else a for i, a in enumerate(args)]
            outs.append(bind(prim, *ins, **ps))
        return bind(complex_p, outs[0], outs[1])

    return rule


def _bilinear(prim):
    """f(a + ib, c + id) = f(a, c) - f(b, d) + i (f(a, d) + f(b, c)) for a bilinear f (mul, dot, conv)."""

    def rule(x, y, **params):
        x, y = _arr(x), _arr(y)
        pet = params.get("preferred_element_type")
        if pet is not None and pet.kind == "c":  # real operands accumulated as complex
            x, y = (a if _is_c(a) else lax.convert_element_type(a, pet) for a in (x, y))
        _same_complex(prim.name, [x, y])
        if pet is not None:
            params = dict(params, preferred_element_type=dtypes.real_dtype(pet))
        (a, b), (c, d) = _parts(x), _parts(y)

        def f(u, v):
            return bind(prim, u, v, **params)

        return bind(complex_p, lax.sub(f(a, c), f(b, d)), lax.add(f(a, d), f(b, c)))

    return rule


def _binary(fn, name):
    def rule(x, y, **params):
        x, y = _arr(x), _arr(y)
        _same_complex(name, [x, y])
        return fn(_parts(x), _parts(y))

    return rule


def _convert_rule(x, *, new_dtype, weak_type):
    x = _arr(x)
    if _is_c(x):
        re = bind(real_p, x)
        if new_dtype.kind != "c":  # as in JAX, even to bool: the imaginary part is dropped first
            return lax._convert(re, new_dtype, weak_type)
        rd = dtypes.real_dtype(new_dtype)
        return bind(complex_p, lax._convert(re, rd, weak_type), lax._convert(bind(imag_p, x), rd, weak_type))
    re = lax._convert(x, dtypes.real_dtype(new_dtype), weak_type)
    return bind(complex_p, re, _zeros_like(re))


def _iota_rule(*, dtype, shape, dimension):
    re = bind(lax.iota_p, dtype=dtypes.real_dtype(dtype), shape=shape, dimension=dimension)
    return bind(complex_p, re, _zeros_like(re))


def _halving_reduce(x, axes, combine, empty):
    """Reduce complex x over axes by combining halves (on parts) until one row is left."""
    x = _arr(x)
    shape = _aval(x).shape
    rest = [i for i in range(len(shape)) if i not in axes]
    n = 1
    for a in axes:
        n *= shape[a]
    out_shape = tuple(shape[i] for i in rest)
    p = _parts(lax.reshape(lax.transpose(x, tuple(axes) + tuple(rest)), (n,) + out_shape))
    if n == 0:
        return _pack(empty(tuple(lax.full(out_shape, 0, q.dtype) for q in p)))
    zeros = (0,) * len(out_shape)

    def rows(q, lo, hi):
        return lax.slice(q, (lo,) + zeros, (hi,) + out_shape)

    while n > 1:
        h = n // 2
        lo = tuple(rows(q, 0, h) for q in p)
        hi = tuple(rows(q, h, 2 * h) for q in p)
        out = combine(lo, hi)
        if n % 2:  # the odd row left over joins the next round
            out = tuple(lax.concatenate([o, rows(q, 2 * h, n)], 0) for o, q in zip(out, p))
            h += 1
        p, n = out, h
    return _pack(tuple(lax.reshape(q, out_shape) for q in p))


def _reduce_prod_rule(x, *, axes):
    return _halving_reduce(x, axes, _cmul, _cones)


def _lex_gt(p, q):
    return lax.bitwise_or(lax.gt(p[0], q[0]), lax.bitwise_and(lax.eq(p[0], q[0]), lax.gt(p[1], q[1])))


def _reduce_extremum(largest: bool):
    def combine(p, q):
        first = _lex_gt(p, q) if largest else _lex_gt(q, p)
        return tuple(lax.select(first, a, b) for a, b in zip(p, q))

    def empty(p):
        raise ValueError("zero-size array to reduction operation which has no identity")

    return lambda x, *, axes: _halving_reduce(x, axes, combine, empty)


def _pow_rule(x, y):
    x, y = _arr(x), _arr(y)
    _same_complex("pow", [x, y])
    px, py = _parts(x), _parts(y)
    re, im = _cexp(_cmul(py, _clog(px)))
    # 0 ** y: 1 for y == 0, else 0 (log(0) would give nan)
    x0 = lax.bitwise_and(lax.eq(px[0], _zeros_like(px[0])), lax.eq(px[1], _zeros_like(px[1])))
    y0 = lax.bitwise_and(lax.eq(py[0], _zeros_like(py[0])), lax.eq(py[1], _zeros_like(py[1])))
    fill = lax.select(y0, _ones_like(re), _zeros_like(re))
    return bind(complex_p, lax.select(x0, fill, re), lax.select(x0, _zeros_like(im), im))


def _scatter_rule(x, idx, u, *, axes, kind, unique_indices):
    S = _slicing()
    x, u = _arr(x), _arr(u)
    if kind in ("set", "add"):
        return _componentwise(S.scatter_p, lambda n: (0, 2))(
            x, idx, u, axes=axes, kind=kind, unique_indices=unique_indices
        )
    _same_complex("scatter", [x, u])

    def sc(k, a, b):
        return bind(S.scatter_p, a, idx, b, axes=axes, kind=k, unique_indices=unique_indices)

    (xr, xi), (ur, ui) = _parts(x), _parts(u)
    if kind == "mul":
        if unique_indices:  # each entry meets at most one update: an exact complex product
            g = _parts(bind(S.gather_p, x, idx, axes=axes, mode="fill", fill_value=0))
            return sc("set", x, _pack(_cmul(g, _parts(u))))
        # Repeated indices: multiply magnitudes and add angles (real scatters), then rotate x.
        # Untouched entries get exactly 1 + 0i; gradients for u raise as for a real scatter_mul.
        mag = sc("mul", _ones_like(xr), _cabs((ur, ui)))
        ang = sc("add", _zeros_like(xr), lax.atan2(ui, ur))
        return _pack(_cmul((xr, xi), (lax.mul(mag, lax.cos(ang)), lax.mul(mag, lax.sin(ang)))))
    # min / max in lexicographic order: the extreme real part, then the extreme imaginary part
    # among the candidates (x's entry and its updates) that have that real part
    re = sc(kind, xr, ur)
    at_u = bind(S.gather_p, re, idx, axes=axes, mode="fill", fill_value=0)
    worst = lax.full_like(xi, float("-inf") if kind == "max" else float("inf"))
    worst_u = lax.full_like(ui, float("-inf") if kind == "max" else float("inf"))
    im = sc(kind, lax.select(lax.eq(xr, re), xi, worst), lax.select(lax.eq(ur, at_u), ui, worst_u))
    return bind(complex_p, re, im)


def _eq_rule(x, y):
    x, y = _arr(x), _arr(y)
    _same_complex("eq", [x, y])
    (a, b), (c, d) = _parts(x), _parts(y)
    return lax.bitwise_and(lax.eq(a, c), lax.eq(b, d))


def _ne_rule(x, y):
    x, y = _arr(x), _arr(y)
    _same_complex("ne", [x, y])
    (a, b), (c, d) = _parts(x), _parts(y)
    return lax.bitwise_or(lax.ne(a, c), lax.ne(b, d))


def _lexicographic(strict_real, name):
    """Order complex values by real part, then imaginary part (JAX's complex comparisons)."""

    def rule(x, y):
        x, y = _arr(x), _arr(y)
        _same_complex(name, [x, y])
        (a, b), (c, d) = _parts(x), _parts(y)
        return lax.bitwise_or(strict_real(a, c), lax.bitwise_and(lax.eq(a, c), _ORDER[name](b, d)))

    return rule


_ORDER = {"lt": lax.lt, "le": lax.le, "gt": lax.gt, "ge": lax.ge}


def _extremum(pick_gt: bool, name: str):
    def rule(x, y):
        x, y = _arr(x), _arr(y)
        _same_complex(name, [x, y])
        first = _lexicographic(lax.gt if pick_gt else lax.lt, "gt" if pick_gt else "lt")(x, y)
        return bind(lax.select_n_p, first, y, x)

    return rule


def _sort_rule(*ops, dimension, is_stable, num_keys):
    """Sort with complex operands: each becomes (re, im) operands, and a complex key two keys
    (lexicographic order, as JAX sorts complex values)."""
    from pyjax.lax import sorting

    flat, widths, keys = [], [], 0
    for i, o in enumerate(ops):
        o = _arr(o)
        parts = list(_parts(o)) if _is_c(o) else [o]
        flat += parts
        widths.append(len(parts))
        keys += len(parts) if i < num_keys else 0
    outs = bind(sorting.sort_p, *flat, dimension=dimension, is_stable=is_stable, num_keys=keys)
    res, k = [], 0
    for w in widths:
        res.append(bind(complex_p, outs[k], outs[k + 1]) if w == 2 else outs[k])
        k += w
    return res


def _cumprod_rule(x, *, axis, reverse):
    """Inclusive complex cumulative product by doubling: log2(n) shifted complex multiplies."""
    x = _arr(x)
    if reverse:
        x = lax.rev(x, (axis,))
    p = _parts(x)
    shape = _aval(x).shape
    n, shift = shape[axis], 1
    while shift < n:
        limit = shape[:axis] + (n - shift,) + shape[axis + 1 :]
        cfg = [(0, 0, 0)] * len(shape)
        cfg[axis] = (shift, 0, 0)
        prev = tuple(lax.pad(lax.slice(q, (0,) * len(shape), limit), fill, cfg) for q, fill in zip(p, (1.0, 0.0)))
        p, shift = _cmul(p, prev), shift * 2
    out = _pack(p)
    return lax.rev(out, (axis,)) if reverse else out


def _slicing():
    from pyjax.lax import slicing

    return slicing


def _install() -> None:
    L = lax
    S = _slicing()
    one = lambda n: (0,)  # noqa: E731
    for p in (L.neg_p, L.reshape_p, L.transpose_p, L.broadcast_in_dim_p, L.slice_p, L.rev_p, L.reduce_sum_p):
        p.complex_rule = _componentwise(p, one)
    for p in (L.cumsum_p, L.copy_p, L.stop_gradient_p, S.gather_p, S.dynamic_slice_p):
        p.complex_rule = _componentwise(p, one)
    for p in (L.add_p, L.sub_p, ad._add_any_p, L.pad_p, S.dynamic_update_slice_p):
        p.complex_rule = _componentwise(p, lambda n: (0, 1))
    L.concatenate_p.complex_rule = _componentwise(L.concatenate_p)
    L.select_n_p.complex_rule = _componentwise(L.select_n_p, lambda n: tuple(range(1, n)))
    S.scatter_p.complex_rule = _scatter_rule
    L.mul_p.complex_rule = _bilinear(L.mul_p)
    L.dot_general_p.complex_rule = _bilinear(L.dot_general_p)
    from pyjax.lax import convolution

    convolution.conv_general_dilated_p.complex_rule = _bilinear(convolution.conv_general_dilated_p)
    L.div_p.complex_rule = _binary(lambda p, q: _pack(_cdiv(p, q)), "div")
    L.pow_p.complex_rule = _pow_rule
    L.eq_p.complex_rule = _eq_rule
    L.lt_p.complex_rule = _lexicographic(lax.lt, "lt")
    L.le_p.complex_rule = _lexicographic(lax.lt, "le")
    L.gt_p.complex_rule = _lexicographic(lax.gt, "gt")
    L.ge_p.complex_rule = _lexicographic(lax.gt, "ge")
    L.max_p.complex_rule = _extremum(True, "max")
    L.min_p.complex_rule = _extremum(False, "min")
    L.ne_p.complex_rule = _ne_rule
    L.abs_p.complex_rule = _unary(_cabs, out_real=True)
    L.exp_p.complex_rule = _unary(_cexp)
    L.log_p.complex_rule = _unary(_clog)
    L.sqrt_p.complex_rule = _unary(_csqrt)
    L.rsqrt_p.complex_rule = _unary(lambda p: _cdiv(_cones(p), _csqrt(p)))
    L.sin_p.complex_rule = _unary(_csin)
    L.cos_p.complex_rule = _unary(_ccos)
    L.tan_p.complex_rule = _unary(lambda p: _cdiv(_csin(p), _ccos(p)))
    L.asin_p.complex_rule = _unary(_casin)
    L.acos_p.complex_rule = _unary(_cacos)
    L.atan_p.complex_rule = _unary(_via_i(_catanh, False))
    L.asinh_p.complex_rule = _unary(_via_i(_casin, True))
    L.acosh_p.complex_rule = _unary(_cacosh)
    L.atanh_p.complex_rule = _unary(_catanh)
    L.sinh_p.complex_rule = _unary(_csinh)
    L.cosh_p.complex_rule = _unary(_ccosh)
    L.tanh_p.complex_rule = _unary(lambda p: _cdiv(_csinh(p), _ccosh(p)))
    L.expm1_p.complex_rule = _unary(_cexpm1)
    L.exp2_p.complex_rule = _unary(lambda p: _cexp((lax.mul(p[0], _LN2), lax.mul(p[1], _LN2))))
    L.log1p_p.complex_rule = _unary(_clog1p)
    L.sign_p.complex_rule = _unary(_csign)
    L.square_p.complex_rule = _unary(lambda p: _cmul(p, p))
    L.integer_pow_p.complex_rule = _unary(lambda p, y: _cpow_int(p, y))
    L.reduce_prod_p.complex_rule = _reduce_prod_rule
    L.reduce_max_p.complex_rule = _reduce_extremum(True)
    L.reduce_min_p.complex_rule = _reduce_extremum(False)
    L.cumprod_p.complex_rule = _cumprod_rule
    from pyjax.lax import sorting

    sorting.sort_p.complex_rule = _sort_rule
    L.convert_element_type_p.complex_rule = _convert_rule
    L.iota_p.complex_rule = _iota_rule


_install()


# --- jit: a jaxpr with complex values -> the same computation on (..., 2) pairs -----------------


def _phys_aval(a: ShapedArray) -> ShapedArray:
    if a.dtype.kind != "c":
        return a
    return ShapedArray(a.shape + (2,), dtypes.real_dtype(a.dtype), a.weak_type)


def _phys_eval(jaxpr, args: list) -> list:
    env = dict(zip(jaxpr.in_binders, args))

    def read(x):
        if type(x) is Literal:
            return complex_phys(_concrete(x.val)) if x.aval.dtype.kind == "c" else x.val
        return env[x]

    for e in jaxpr.eqns:
        ins = [read(x) for x in e.inputs]
        p = e.primitive
        if p is real_p or p is imag_p:
            outs = [_phys_part(ins[0], 0 if p is real_p else 1)]
        elif p is complex_p:
            outs = [_phys_pack(*ins)]
        elif not builtins.any(v.aval.dtype.kind == "c" for v in list(e.inputs) + list(e.out_binders)):
            r = bind(p, *ins, **e.params)
            outs = r if p.multiple_results else [r]
        elif p.name in INLINE_CALLS:
            sub = e.params[INLINE_CALLS[p.name]]
            sub = getattr(sub, "jaxpr", sub)
            outs = _phys_eval(sub, ins)
        elif p.name in _CONTROL:
            # cond / while / scan: the same loop over physical sub-jaxprs (pairs stay on the last
            # axis, so scan's slicing and stacking along axis 0 are unchanged)
            params = {k: _phys_param(v) for k, v in e.params.items()}
            outs = bind(p, *ins, **params)
        else:
            raise TypeError(f"{p.name} does not accept complex operands under jit.")
        env.update(zip(e.out_binders, outs))
    return [read(x) for x in jaxpr.outs]


_CONTROL = ("cond", "while", "scan")


def _phys_param(v):
    if isinstance(v, Jaxpr):
        return physicalize(v) if _has_complex_vars(v) else v
    if isinstance(v, tuple) and v and builtins.all(isinstance(x, Jaxpr) for x in v):
        return tuple(_phys_param(x) for x in v)
    return v


def _has_complex_vars(j) -> bool:
    return execute._has_complex_vars(j)


def _through_jit(p, impl):
    """Eager impl of a control-flow primitive: with complex operands, run it as a one-equation
    jaxpr (made physical by run_jaxpr), since the host loops handle real buffers only."""
    cache: dict = {}

    def run(*args, **params):
        if not builtins.any(_is_c(a) for a in args):
            return impl(*args, **params)
        avals = [_aval(a) for a in args]
        try:
            key = (tuple(avals), tuple(params.items()))
            jaxpr = cache.get(key)
        except TypeError:
            key, jaxpr = None, None
        if jaxpr is None:
            outs = p.abstract_eval(*avals, **params)
            ins = [Var(a) for a in avals]
            outv = [Var(a) for a in outs]
            jaxpr = Jaxpr(ins, [JaxprEqn(p, ins, params, outv)], outv)
            if key is not None:
                if len(cache) > 256:  # bounded: entries keep their sub-jaxprs alive
                    cache.clear()
                cache[key] = jaxpr
        return execute.run_jaxpr(jaxpr, list(args))

    return run


def _install_control() -> None:
    from pyjax.lax import control_flow

    for p in (control_flow.cond_p, control_flow.while_p, control_flow.scan_p):
        p.complex_ok = True
        p.impl = _through_jit(p, p.impl)
    from pyjax import custom_derivatives

    # their impl evaluates the jaxpr with bind, so complex rules apply inside
    custom_derivatives.custom_jvp_call_p.complex_ok = True
    custom_derivatives.custom_vjp_call_p.complex_ok = True
    from pyjax import custom_batching

    custom_batching.custom_vmap_call_p.complex_ok = True


def physicalize(jaxpr: Jaxpr) -> Jaxpr:
    """A real jaxpr computing jaxpr with every complex value replaced by its (..., 2) pairs."""
    return staging.trace_closed(lambda *xs: _phys_eval(jaxpr, list(xs)), [_phys_aval(a) for a in jaxpr.in_avals])


hooks.register(physicalize=physicalize)  # the runtime makes jitted jaxprs real with it
_install_control()

# pyjax.lax.lax is where library code finds lax functions (pyjax.lax re-exports these too).
lax.real, lax.imag, lax.complex, lax.conj = real, imag, complex, conj
