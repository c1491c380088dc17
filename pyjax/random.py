"""pyjax.random: JAX's default PRNG (threefry2x32), bit-for-bit.

Keys come in JAX's two forms: raw keys (`PRNGKey`), uint32 arrays whose last axis has size 2,
and typed keys (`key`, `wrap_key_data`), `PRNGKeyArray`s of dtype key<fry> wrapping such data
(see pyjax/_prng.py). Every sampler accepts either; `split` and `fold_in` return the form given.

Random bits follow JAX's current ("partitionable") threefry scheme: element i of a sample of
shape S is threefry2x32(key, (hi(i), lo(i))) with i the row-major index, so `bits`, `uniform`,
`randint`, `bernoulli`, `split`, `fold_in`, `permutation` and `choice` give JAX's exact values.
`uniform` reproduces XLA's fused multiply-add when scaling to [minval, maxval) with an exact
FMA emulation. Samplers built on transcendental functions (normal, gumbel, exponential, ...)
apply the same formulas as JAX; they match to the last bit whenever the backend's log/erf
agree with XLA's and otherwise differ by an ulp or two (XLA's erf_inv polynomial is
reproduced, XLA's log1p is not). The rejection and counting samplers (gamma and its family,
poisson, binomial, multinomial) run JAX's algorithms with JAX's key schedules, so they give JAX's
samples too, up to that rounding (which can rarely flip an acceptance).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence

from pyjax._prng import KEY_DTYPE, KeyDtype, PRNGKeyArray
from pyjax.api import jit
from pyjax.core import core, dtypes, minifloat
from pyjax.core.config import config
from pyjax.core.core import Tracer, get_aval
from pyjax.interpreters import ad
from pyjax.lax import lax
from pyjax.lax._util import canonical_axis
from pyjax.lax.decomposed import composed_primitive
from pyjax.lax.special import _gamma_sample_grad

__all__ = [
    "PRNGKey",
    "key",
    "key_data",
    "wrap_key_data",
    "key_impl",
    "key_dtype",
    "split",
    "fold_in",
    "clone",
    "bits",
    "uniform",
    "normal",
    "truncated_normal",
    "bernoulli",
    "randint",
    "choice",
    "permutation",
    "shuffle",
    "categorical",
    "gumbel",
    "exponential",
    "laplace",
    "logistic",
    "cauchy",
    "rademacher",
    "multivariate_normal",
    "orthogonal",
    "lognormal",
    "maxwell",
    "double_sided_maxwell",
    "weibull_min",
    "rayleigh",
    "pareto",
    "triangular",
    "geometric",
    "gamma",
    "loggamma",
    "beta",
    "dirichlet",
    "chisquare",
    "f",
    "t",
    "generalized_normal",
    "wald",
    "poisson",
    "binomial",
    "multinomial",
    "ball",
]

_U32 = dtypes.uint32


def _jnp():
    from pyjax import numpy as jnp

    return jnp


def _lax_pkg():
    from pyjax.lax import sorting as lax_pkg  # sort_key_val and top_k

    return lax_pkg


def _asarray(x, dtype=None):
    return _jnp().asarray(x, dtype=dtype)


def _const(value, dtype):
    return lax.full((), value, dtype)


# --- shapes and dtypes --------------------------------------------------------------------------


def _canon_shape(shape, name: str) -> tuple:
    if isinstance(shape, int) or (hasattr(shape, "__index__") and not isinstance(shape, (tuple, list))):
        shape = (shape,)
    try:
        out = tuple(
            core.concrete_or_error(d, f"The shape argument of jax.random.{name} must be concrete.") for d in shape
        )
        out = tuple(d if isinstance(d, int) else operator.index(d) for d in out)
    except TypeError as e:
        if "concrete" in str(e) or "Abstract" in str(e):
            raise
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None
    for d in out:
        if d < 0:
            raise TypeError(f"Shapes must be 1D sequences of non-negative integers, got {shape}.")
    return out


def _float_dtype(dtype, name: str, allow: str = "float"):
    d = dtypes.canonicalize(float if dtype is None else dtype)
    if d.kind != "f" and not (allow == "inexact" and d.kind == "c"):
        what = "a float or complex dtype" if allow == "inexact" else "a float dtype"
        raise ValueError(f"dtype argument to `{name}` must be {what}, got {d.name}")
    return d


def _int_dtype(dtype, name: str):
    d = dtypes.canonicalize(int if dtype is None else dtype)
    if d.kind not in "iu":
        raise TypeError(f"{name} only accepts integer dtypes, got {d.name}")
    return d


def _broadcast_shapes(*shapes) -> tuple:
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        dims = {s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(dims) > 1:
            raise ValueError(f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}")
        out.append(dims.pop() if dims else 1)
    return tuple(out)


def _check_shape(name: str, shape: tuple, *param_shapes) -> None:
    if param_shapes:
        got = _broadcast_shapes(shape, *param_shapes)
        if got != tuple(shape):
            raise ValueError(
                f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                f"result of broadcasting the shapes must equal the shape argument, but got result "
                f"{got} for shape argument {shape}."
            )


def _shape_of(x) -> tuple:
    if isinstance(x, (int, float, bool)):
        return ()
    return tuple(get_aval(_asarray(x)).shape)


def _bcast(x, shape: tuple):
    """Broadcast x (numpy-style) to shape."""
    xs = get_aval(x).shape
    if xs == shape:
        return x
    return _jnp().broadcast_to(x, shape)


# --- keys -----------------------------------------------------------------------------------------


def _check_key(name: str, key, allow_batched: bool = False):
    """The uint32 data of a raw or typed key, validated; a single key unless allow_batched."""
    if isinstance(key, PRNGKeyArray):
        if not allow_batched and key.ndim != 0:
            raise ValueError(
                f"{name} accepts a single key, but was given a key array of shape {key.shape} != (). "
                f"Use jax.vmap for batching."
            )
        key = key._data
    if isinstance(key, Tracer):
        k = key
    else:
        try:
            k = _asarray(key)
        except TypeError:
            raise TypeError(f"unexpected PRNG key type {type(key)}") from None
    a = get_aval(k)
    if a.dtype is not _U32:
        raise TypeError(
            f"JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; got dtype={a.dtype.name}"
        )
    if not a.shape or a.shape[-1] != 2:
        raise TypeError(
            f"JAX encountered invalid PRNG key data: expected key_data.shape to end with (2,); got "
            f"shape={a.shape} for impl=threefry2x32"
        )
    if not allow_batched and a.ndim != 1:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape {a.shape} != (). "
            f"Use jax.vmap for batching."
        )
    return k


def _key_words(key):
    k0 = lax.reshape(lax.slice(key, (0,), (1,)), ())
    k1 = lax.reshape(lax.slice(key, (1,), (2,)), ())
    return k0, k1


def _seed_words(seed) -> tuple:
    """(hi, lo) uint32 words of an integer seed, as JAX's threefry_seed computes them."""
    if isinstance(seed, (bool, float, complex)):
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        if not -(2**63) <= seed < 2**63:
            raise OverflowError("Python int too large to convert to C long")
        lo = seed % 2**32
        hi = (seed % 2**64) >> 32 if config.jax_enable_x64 else 0
        return _asarray(hi, _U32), _asarray(lo, _U32)
    s = seed if isinstance(seed, Tracer) else _asarray(seed)
    a = get_aval(s)
    if a.dtype.kind not in "iu":
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if a.dtype.bits == 64:
        hi = lax.convert_element_type(lax.shift_right_logical(s, lax.full((), 32, a.dtype)), _U32)
    else:
        hi = lax.full((), 0, _U32)
    return hi, lax.convert_element_type(s, _U32)


def _seed_key_data(name: str, seed):
    """uint32[2] threefry key data from a scalar integer seed."""
    shape = seed.shape if isinstance(seed, Tracer) else _shape_of(seed)
    if shape:
        raise TypeError(
            f"{name} accepts a scalar seed, but was given an array of shape {shape} != (). Use jax.vmap for batching"
        )
    hi, lo = _seed_words(seed)
    return lax.concatenate([lax.reshape(hi, (1,)), lax.reshape(lo, (1,))], 0)


def PRNGKey(seed, *, impl=None):
    """A raw threefry key, uint32[2], from an integer seed (64-bit seeds in x64 mode)."""
    _check_impl(impl)
    return _seed_key_data("PRNGKey", seed)


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """A typed threefry key (shape (), dtype key<fry>) from an integer seed, as jax.random.key."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    _check_impl(impl if dtype is None else dtype)
    return PRNGKeyArray(_seed_key_data("key", seed))


def _check_impl(impl) -> None:
    if impl is not None and not isinstance(impl, KeyDtype) and str(impl) != "threefry2x32":
        raise ValueError(f'unrecognized PRNG implementation "{impl}". pyjax supports only "threefry2x32".')


def key_dtype(impl_spec=None) -> KeyDtype:
    """The dtype of typed keys of an implementation (key<fry>: pyjax has only threefry2x32)."""
    if impl_spec is not None and not isinstance(impl_spec, (str, KeyDtype)):
        raise TypeError(f"unrecognized type {type(impl_spec)} for specifying PRNG implementation.")
    _check_impl(impl_spec)
    return KEY_DTYPE


def key_data(keys):
    """The uint32 data of typed or raw keys, shape keys.shape + (2,)."""
    return _check_key("key_data", keys, allow_batched=True)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Typed keys of shape (...) from uint32 key data of shape (..., 2)."""
    if impl is not None and dtype is not None:
        raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data")
    _check_impl(impl if dtype is None else dtype)
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data requires uint32 key data, but was given typed keys (dtype key<fry>).")
    data = key_bits_array if isinstance(key_bits_array, Tracer) else _asarray(key_bits_array)
    if get_aval(data).ndim == 0:
        raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; got ndim=0")
    return PRNGKeyArray(_check_key("wrap_key_data", data, allow_batched=True))


def key_impl(keys) -> str:
    """The PRNG implementation of keys; pyjax has only threefry2x32."""
    _check_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def clone(key):
    """Keys have no reuse tracking in pyjax, so clone is the identity."""
    return key


def _iota_2x32(shape: tuple):
    size = math.prod(shape)
    if size >= 2**32:
        raise NotImplementedError("pyjax.random: samples of 2**32 or more elements are not supported")
    hi = lax.full(shape, 0, _U32)
    lo = lax.reshape(lax.iota(_U32, size), shape) if shape else lax.full((), 0, _U32)
    return hi, lo


def _threefry_bits(key, shape: tuple):
    k0, k1 = _key_words(key)
    hi, lo = _iota_2x32(shape)
    return lax.threefry2x32(k0, k1, hi, lo)


def _split_impl(key, shape):
    b1, b2 = _threefry_bits(key, shape)
    nd = len(shape)
    return lax.concatenate([lax.expand_dims(b1, (nd,)), lax.expand_dims(b2, (nd,))], nd)


_split_jit = jit(_split_impl, static_argnums=(1,))


def split(key, num: int | tuple = 2):
    """num new keys (an int or a shape), stacked on a new leading axis."""
    typed = isinstance(key, PRNGKeyArray)
    key = _check_key("split", key)
    shape = tuple(num) if isinstance(num, (tuple, list)) else (num,)
    shape = _canon_shape(shape, "split")
    out = _split_jit(key, shape)
    return PRNGKeyArray(out) if typed else out


def _fold_in_impl(key, data):
    k0, k1 = _key_words(key)
    x0 = lax.full((1,), 0, _U32)
    x1 = lax.reshape(data, (1,))
    o0, o1 = lax.threefry2x32(k0, k1, x0, x1)
    return lax.concatenate([o0, o1], 0)


_fold_in_jit = jit(_fold_in_impl)


def fold_in(key, data):
    """A new key that depends on key and the 32-bit integer data."""
    typed = isinstance(key, PRNGKeyArray)
    key = _check_key("fold_in", key)
    shape = data.shape if isinstance(data, Tracer) else _shape_of(data)
    if shape:
        raise TypeError(
            f"fold_in accepts a scalar, but was given an array ofshape {shape} != (). Use jax.vmap for batching."
        )
    if isinstance(data, int) and not isinstance(data, bool):
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        d = _asarray(data, _U32)
    else:
        d = lax.convert_element_type(data if isinstance(data, Tracer) else _asarray(data), _U32)
    out = _fold_in_jit(key, d)
    return PRNGKeyArray(out) if typed else out


def _bits_impl(key, bit_width: int, shape: tuple):
    b1, b2 = _threefry_bits(key, shape)
    if bit_width == 64:
        u64 = dtypes.uint64
        hi = lax.convert_element_type(b1, u64)
        lo = lax.convert_element_type(b2, u64)
        return lax.bitwise_or(lax.shift_left(hi, lax.full(shape, 32, u64)), lo)
    x = lax.bitwise_xor(b1, b2)
    if bit_width == 32:
        return x
    return lax.convert_element_type(x, {8: dtypes.uint8, 16: dtypes.uint16}[bit_width])


_random_bits = jit(_bits_impl, static_argnums=(1, 2))


def bits(key, shape: Sequence[int] = (), dtype=None, *, out_sharding=None):
    """Uniform random unsigned integers (uint32 by default; uint64 under x64)."""
    key = _check_key("bits", key)
    d = dtypes.canonicalize(dtypes.uint64 if dtype is None else dtype)
    if d.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {d.name}")
    return _random_bits(key, d.bits, _canon_shape(shape, "bits"))


# --- uniform and the samplers built on it ---------------------------------------------------------


def _split_f32(a):
    t = (
        lax.mul(_const(4097.0, a.dtype), a)
        if not get_aval(a).shape
        else lax.mul(lax.full(get_aval(a).shape, 4097.0, get_aval(a).dtype), a)
    )
    hi = lax.sub(t, lax.sub(t, a))
    return hi, lax.sub(a, hi)


def _two_sum(a, b):
    s = lax.add(a, b)
    bb = lax.sub(s, a)
    e = lax.add(lax.sub(a, lax.sub(s, bb)), lax.sub(b, bb))
    return s, e


def _fma32(a, b, c):
    """Correctly rounded a*b + c in float32 from float32 operations (XLA on CPU contracts a*b+c
    into an FMA). Boldo-Melquiond: exact product, exact sum, round-to-odd, then one rounding."""
    shape = get_aval(a).shape
    dt = get_aval(a).dtype
    p = lax.mul(a, b)
    ah, al = _split_f32(a)
    bh, bl = _split_f32(b)
    pe = lax.add(lax.add(lax.add(lax.sub(lax.mul(ah, bh), p), lax.mul(ah, bl)), lax.mul(al, bh)), lax.mul(al, bl))
    th, tl = _two_sum(c, p)
    s, e = _two_sum(tl, pe)
    # round s + e to odd: when inexact and s has an even significand, step one ulp towards e
    inf = lax.full(shape, float("inf"), dt)
    toward = lax.select(lax.gt(e, lax.full(shape, 0.0, dt)), inf, lax.neg(inf))
    sbits = lax.bitcast_convert_type(s, _U32)
    even = lax.eq(lax.bitwise_and(sbits, lax.full(shape, 1, _U32)), lax.full(shape, 0, _U32))
    inexact = lax.ne(e, lax.full(shape, 0.0, dt))
    v = lax.select(lax.bitwise_and(inexact, even), lax.nextafter(s, toward), s)
    return lax.add(th, v)


def _one_bits(d) -> int:
    """The bits of 1.0 in float dtype d."""
    if d.name in dtypes.FLOAT8:
        return minifloat.encode(1.0, d.name)
    info = dtypes.finfo(d)
    return ((1 << (info.nexp - 1)) - 1) << info.nmant


def _uniform_impl(key, minval, maxval, shape: tuple, dtype):
    info = dtypes.finfo(dtype)
    nbits, nmant = info.bits, info.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype.name}.")  # JAX's words
    rng_bits = 8 if nmant < 8 else nbits
    udt = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}[nbits]
    b = _bits_impl(key, rng_bits, shape)
    if rng_bits != nbits:
        b = lax.convert_element_type(b, udt)
    fb = lax.shift_right_logical(b, lax.full(shape, rng_bits - nmant, udt))
    fb = lax.bitwise_or(fb, lax.full(shape, _one_bits(dtype), udt))
    floats = lax.sub(lax.bitcast_convert_type(fb, dtype), lax.full(shape, 1.0, dtype))
    lo = _bcast(lax.convert_element_type(minval, dtype), shape)
    hi = _bcast(lax.convert_element_type(maxval, dtype), shape)
    span = lax.sub(hi, lo)
    if dtype is dtypes.float32:
        scaled = _fma32(floats, span, lo)
    elif dtype is dtypes.float16:
        # XLA evaluates float16 arithmetic in float32 and rounds once at the end
        f32 = dtypes.float32
        scaled = _fma32(*(lax.convert_element_type(v, f32) for v in (floats, span, lo)))
        scaled = lax.convert_element_type(scaled, dtype)
    else:
        scaled = lax.add(lax.mul(floats, span), lo)
    return lax.max(lo, scaled)


_uniform_jit = jit(_uniform_impl, static_argnums=(3, 4))


def _scalar_or_array(v, dtype):
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return _asarray(v, dtype)
    v = v if isinstance(v, Tracer) else _asarray(v)
    return v


def _check_param_shape(name: str, shape: tuple, *params) -> None:
    for p in params:
        ps = get_aval(p).shape
        try:
            ok = _broadcast_shapes(shape, ps) == shape
        except ValueError:
            ok = False
        if not ok:
            raise TypeError(f"{name}: minval/maxval of shape {ps} cannot be broadcast to the sample shape {shape}.")


def uniform(key, shape: Sequence[int] = (), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Uniform floats in [minval, maxval)."""
    key = _check_key("uniform", key)
    d = _float_dtype(dtype, "uniform")
    shape = _canon_shape(shape, "uniform")
    lo, hi = _scalar_or_array(minval, d), _scalar_or_array(maxval, d)
    _check_param_shape("uniform", shape, lo, hi)
    return _uniform_jit(key, lo, hi, shape, d)


def _nextafter_minus_one(d) -> float:
    return -1.0 + 2.0 ** -(dtypes.finfo(d).nmant + 1)


_ERFINV_SMALL = (
    2.81022636e-08,
    3.43273939e-07,
    -3.5233877e-06,
    -4.39150654e-06,
    0.00021858087,
    -0.00125372503,
    -0.00417768164,
    0.246640727,
    1.50140941,
)
_ERFINV_LARGE = (
    -0.000200214257,
    0.000100950558,
    0.00134934322,
    -0.00367342844,
    0.00573950773,
    -0.0076224613,
    0.00943887047,
    1.00167406,
    2.83297682,
)


def _erf_inv32(x):
    """XLA's float32 erf_inv (Giles' single-precision approximation, FMA-evaluated)."""
    shape = get_aval(x).shape
    f32 = dtypes.float32

    def c(v):
        return lax.full(shape, v, f32)

    w = lax.neg(lax.log1p(lax.neg(lax.mul(x, x))))
    small = lax.lt(w, c(5.0))
    w_small = lax.sub(w, c(2.5))
    w_large = lax.sub(lax.sqrt(w), c(3.0))
    ws = lax.select(small, w_small, w_large)
    p = lax.select(small, c(_ERFINV_SMALL[0]), c(_ERFINV_LARGE[0]))
    for a, b in zip(_ERFINV_SMALL[1:], _ERFINV_LARGE[1:]):
        p = _fma32(p, ws, lax.select(small, c(a), c(b)))
    out = lax.mul(p, x)
    # |x| == 1 gives +-inf, as in XLA
    return lax.select(lax.eq(lax.abs(x), c(1.0)), lax.mul(x, c(float("inf"))), out)


def _erf_inv(u):
    d = get_aval(u).dtype
    if d is dtypes.float32:
        return _erf_inv32(u)
    if d.name in dtypes.NARROW_FLOATS:
        return lax.convert_element_type(_erf_inv32(lax.convert_element_type(u, dtypes.float32)), d)
    return lax.erf_inv(u)


def _normal_impl(key, shape: tuple, dtype):
    lo = lax.full((), _nextafter_minus_one(dtype), dtype)
    hi = lax.full((), 1.0, dtype)
    u = _uniform_impl(key, lo, hi, shape, dtype)
    return lax.mul(lax.full(shape, math.sqrt(2), dtype), _erf_inv(u))


_normal_jit = jit(_normal_impl, static_argnums=(1, 2))


def normal(key, shape: Sequence[int] = (), dtype=None, *, out_sharding=None):
    """Standard normal samples (inverse-CDF of a uniform, as JAX)."""
    key = _check_key("normal", key)
    d = _float_dtype(dtype, "normal", "inexact")
    shape = _canon_shape(shape, "normal")
    if d.kind == "c":  # as JAX: real and imaginary parts from the two halves of a split, / sqrt(2)
        k_re, k_im = split(key)
        real = dtypes.real_dtype(d)
        # XLA divides by the constant as a product with its reciprocal (rounded in the real dtype)
        r = lax.div(lax.full(shape, 1.0, real), lax.full(shape, math.sqrt(2), real))
        return lax.complex(lax.mul(_normal_jit(k_re, shape, real), r), lax.mul(_normal_jit(k_im, shape, real), r))
    return _normal_jit(key, shape, d)


def _truncated_normal_impl(key, lower, upper, shape, dtype):
    sqrt2 = lax.full((), math.sqrt(2), dtype)
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lax.div(lower, _bcast(sqrt2, get_aval(lower).shape)))
    b = lax.erf(lax.div(upper, _bcast(sqrt2, get_aval(upper).shape)))
    u = _uniform_impl(key, a, b, shape, dtype)
    out = lax.mul(lax.full(shape, math.sqrt(2), dtype), _erf_inv(u))
    lo = _bcast(lax.nextafter(lax.stop_gradient(lower), lax.full(get_aval(lower).shape, float("inf"), dtype)), shape)
    hi = _bcast(lax.nextafter(lax.stop_gradient(upper), lax.full(get_aval(upper).shape, -float("inf"), dtype)), shape)
    return lax.min(lax.max(out, lo), hi)


_truncated_normal_jit = jit(_truncated_normal_impl, static_argnums=(3, 4))


def truncated_normal(key, lower, upper, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Standard normal samples truncated to the open interval (lower, upper)."""
    key = _check_key("truncated_normal", key)
    d = _float_dtype(dtype, "truncated_normal")
    lower, upper = _scalar_or_array(lower, d), _scalar_or_array(upper, d)
    if shape is None:
        shape = _broadcast_shapes(get_aval(lower).shape, get_aval(upper).shape)
    else:
        shape = _canon_shape(shape, "truncated_normal")
        _check_shape("truncated_normal", shape, get_aval(lower).shape, get_aval(upper).shape)
    return _truncated_normal_jit(key, lower, upper, shape, d)


def bernoulli(key, p=0.5, shape: Sequence[int] | None = None, mode: str = "low", *, out_sharding=None):
    """Boolean samples that are True with probability p."""
    if shape is not None:
        shape = _canon_shape(shape, "bernoulli")
    if mode not in ("high", "low"):
        raise ValueError(f"got {mode=}, expected 'high' or 'low'")
    key = _check_key("bernoulli", key)
    p = p if isinstance(p, Tracer) else _asarray(p)
    d = get_aval(p).dtype
    if d.kind != "f":
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {d.name}.")
    if shape is None:
        shape = get_aval(p).shape
    else:
        _check_shape("bernoulli", shape, get_aval(p).shape)
    return _bernoulli_jit(key, p, shape, mode)


def _bernoulli_impl(key, p, shape, mode):
    d = get_aval(p).dtype
    zero, one = lax.full((), 0.0, d), lax.full((), 1.0, d)
    if mode == "high":
        u = _uniform_impl(key, zero, one, (2,) + shape, d)
        u1 = lax.reshape(lax.slice(u, (0,) * (len(shape) + 1), (1,) + shape), shape)
        u2 = lax.reshape(lax.slice(u, (1,) + (0,) * len(shape), (2,) + shape), shape)
        u2 = lax.mul(u2, lax.full(shape, 2.0 ** -dtypes.finfo(d).nmant, d))
        return lax.lt(u2, lax.sub(_bcast(p, shape), u1))
    return lax.lt(_uniform_impl(key, zero, one, shape, d), _bcast(p, shape))


_bernoulli_jit = jit(_bernoulli_impl, static_argnums=(2, 3))


def _clip_convert_int(val, dtype):
    """Convert an integer array to dtype, clipping to dtype's range instead of wrapping."""
    vd = get_aval(val).dtype
    vi, di = dtypes.iinfo(vd), dtypes.iinfo(dtype)
    lo, hi = max(di.min, vi.min), min(di.max, vi.max)
    shape = get_aval(val).shape
    val = lax.min(lax.max(val, lax.full(shape, lo, vd)), lax.full(shape, hi, vd))
    return lax.convert_element_type(val, dtype)


def _randint_impl(key, minval, maxval, shape, dtype):
    nbits = dtype.bits
    udt = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}[nbits]
    maxval_dtype = get_aval(maxval).dtype
    dmax = _clip_convert_int(lax.full((), dtypes.iinfo(dtype).max, dtype), maxval_dtype)
    out_of_range = lax.gt(maxval, _bcast(dmax, get_aval(maxval).shape))
    minval = _bcast(_clip_convert_int(minval, dtype), shape)
    maxval = _bcast(_clip_convert_int(maxval, dtype), shape)
    out_of_range = _bcast(out_of_range, shape)
    k = _split_impl(key, (2,))
    k1 = lax.reshape(lax.slice(k, (0, 0), (1, 2)), (2,))
    k2 = lax.reshape(lax.slice(k, (1, 0), (2, 2)), (2,))
    higher, lower = _bits_impl(k1, nbits, shape), _bits_impl(k2, nbits, shape)
    span = lax.convert_element_type(lax.sub(maxval, minval), udt)
    one = lax.full(shape, 1, udt)
    span = lax.select(lax.le(maxval, minval), one, span)
    span = lax.select(lax.bitwise_and(out_of_range, lax.gt(maxval, minval)), lax.add(span, one), span)
    mult = lax.rem(lax.full(shape, 2 ** (nbits // 2), udt), span)
    mult = lax.rem(lax.mul(mult, mult), span)
    off = lax.add(lax.mul(lax.rem(higher, span), mult), lax.rem(lower, span))
    off = lax.rem(off, span)
    return lax.add(minval, lax.convert_element_type(off, dtype))


_randint_jit = jit(_randint_impl, static_argnums=(3, 4))


def randint(key, shape: Sequence[int], minval, maxval, dtype=None, *, out_sharding=None):
    """Uniform integers in [minval, maxval) (JAX's modulus-based sampler, same bias)."""
    key = _check_key("randint", key)
    d = _int_dtype(dtype, "randint")
    shape = _canon_shape(shape, "randint")
    info = dtypes.iinfo(d)
    jnp = _jnp()
    minval = minval if isinstance(minval, Tracer) else jnp.asarray(minval)
    maxval = maxval if isinstance(maxval, Tracer) else jnp.asarray(maxval)
    sample_d = d
    if info.bits < 32:
        sample_d = dtypes.int32
        minval = jnp.clip(jnp.asarray(minval).astype("int32"), int(info.min), int(info.max))
        maxval = jnp.clip(jnp.asarray(maxval).astype("int32"), int(info.min), int(info.max) + 1)
    _check_shape("randint", shape, get_aval(minval).shape, get_aval(maxval).shape)
    if get_aval(minval).dtype.kind not in "iu":
        minval = jnp.asarray(minval).astype(int)
    if get_aval(maxval).dtype.kind not in "iu":
        maxval = jnp.asarray(maxval).astype(int)
    out = _randint_jit(key, minval, maxval, shape, sample_d)
    return out if sample_d is d else lax.convert_element_type(out, d)


def _shuffle(key, x, axis: int):
    size = math.prod(get_aval(x).shape)
    num_rounds = int(math.ceil(3 * math.log(max(1, size)) / math.log(2**32 - 1)))
    for _ in range(num_rounds):
        k = _split_impl(key, (2,))
        key = lax.reshape(lax.slice(k, (0, 0), (1, 2)), (2,))
        subkey = lax.reshape(lax.slice(k, (1, 0), (2, 2)), (2,))
        sort_keys = _bits_impl(subkey, 32, get_aval(x).shape)
        _, x = _lax_pkg().sort_key_val(sort_keys, x, axis)
    return x


_shuffle_jit = jit(_shuffle, static_argnums=(2,))


def permutation(key, x, axis: int = 0, independent: bool = False, *, out_sharding=None):
    """A random permutation of arange(x) (int x) or of x along axis."""
    key = _check_key("permutation", key)
    jnp = _jnp()
    xa = x if isinstance(x, Tracer) else jnp.asarray(x)
    a = get_aval(xa)
    if not a.ndim:
        if a.dtype.kind not in "iu":
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = int(core.concrete_or_error(xa, "argument x of jax.random.permutation()"))
        return _shuffle_jit(key, jnp.arange(r), 0)
    axis = canonical_axis(axis, a.ndim)
    if independent or a.ndim == 1:
        return _shuffle_jit(key, xa, axis)
    ind = _shuffle_jit(key, jnp.arange(a.shape[axis]), 0)
    return jnp.take(xa, ind, axis=axis)


def shuffle(key, x, axis: int = 0):
    """Shuffle x along axis (deprecated in JAX; equals permutation(..., independent=True))."""
    key = _check_key("shuffle", key)
    xa = x if isinstance(x, Tracer) else _asarray(x)
    return _shuffle_jit(key, xa, canonical_axis(axis, max(1, get_aval(xa).ndim)))


def choice(key, a, shape: Sequence[int] = (), replace: bool = True, p=None, axis: int = 0, mode=None):
    """Random samples from a (an array, or arange(a) for an int) with or without replacement."""
    key = _check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    jnp = _jnp()
    arr = a if isinstance(a, Tracer) else jnp.asarray(a)
    aa = get_aval(arr)
    if aa.ndim == 0:
        n_inputs = int(core.concrete_or_error(arr, "The error occurred in jax.random.choice()"))
    else:
        axis = canonical_axis(axis, aa.ndim)
        n_inputs = aa.shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=aa.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size {n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if aa.ndim == 0 else jnp.take(arr, ind, axis=axis)
        else:
            perm = permutation(key, n_inputs if aa.ndim == 0 else arr, axis)
            idx = (slice(None),) * (axis if aa.ndim else 0) + (slice(n_draws),)
            result = perm[idx]
    else:
        p_arr = p if isinstance(p, Tracer) else jnp.asarray(p)
        if get_aval(p_arr).dtype.kind != "f":
            p_arr = p_arr.astype(dtypes.default_float())
        if tuple(get_aval(p_arr).shape) != (n_inputs,):
            raise ValueError(
                f"p must be None or a 1D vector with the same size as a.shape[axis]. p has shape "
                f"{tuple(get_aval(p_arr).shape)} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            r = p_cuml[-1] * (1 - uniform(key, shape, dtype=get_aval(p_cuml).dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            g = gumbel(key, (n_inputs,), dtype=get_aval(p_arr).dtype, mode=mode) + jnp.log(p_arr)
            ind = _lax_pkg().top_k(g, n_draws)[1].astype(int)
        result = ind if aa.ndim == 0 else jnp.take(arr, ind, axis=axis)
    out_shape = shape if aa.ndim == 0 else aa.shape[:axis] + shape + aa.shape[axis + 1 :]
    return result.reshape(out_shape)


def _gumbel_impl(key, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if mode == "high":
        u = _uniform_impl(key, lax.full((), 0.0, dtype), lax.full((), 1.0, dtype), (2,) + shape, dtype)
        nd = len(shape)
        high = lax.reshape(lax.slice(u, (0,) * (nd + 1), (1,) + shape), shape)
        low = lax.reshape(lax.slice(u, (1,) + (0,) * nd, (2,) + shape), shape)
        alt = lax.add(
            lax.add(high, lax.mul(lax.full(shape, 2.0**-info.nmant, dtype), low)), lax.full(shape, info.tiny, dtype)
        )
        x = lax.select(lax.ge(high, lax.full(shape, 0.5, dtype)), high, alt)
        return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
    u = _uniform_impl(key, lax.full((), info.tiny, dtype), lax.full((), 1.0, dtype), shape, dtype)
    return lax.neg(lax.log(lax.neg(lax.log(u))))


_gumbel_jit = jit(_gumbel_impl, static_argnums=(1, 2, 3))


def gumbel(key, shape: Sequence[int] = (), dtype=None, mode: str | None = None, *, out_sharding=None):
    """Standard Gumbel samples."""
    key = _check_key("gumbel", key)
    d = _float_dtype(dtype, "gumbel")
    if mode is None:
        mode = "low"
    if mode not in ("high", "low"):
        if mode == "highest":
            raise NotImplementedError("gumbel(mode='highest') is not supported by pyjax; use 'high'")
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel_jit(key, _canon_shape(shape, "gumbel"), d, mode)


def categorical(
    key,
    logits,
    axis: int = -1,
    shape: Sequence[int] | None = None,
    replace: bool = True,
    mode: str | None = None,
    *,
    out_sharding=None,
):
    """Samples of category indices from unnormalized log-probabilities along axis."""
    key = _check_key("categorical", key)
    jnp = _jnp()
    logits = logits if isinstance(logits, Tracer) else jnp.asarray(logits)
    la = get_aval(logits)
    axis_c = canonical_axis(axis, la.ndim)
    batch_shape = tuple(s for i, s in enumerate(la.shape) if i != axis_c)
    if shape is None:
        shape = batch_shape
    else:
        shape = _canon_shape(shape, "categorical")
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[: len(shape) - len(batch_shape)]
    if replace:
        ax = axis_c - la.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(ax % la.ndim, la.shape[ax])
        g = gumbel(key, (*prefix, *logits_shape), la.dtype, mode=mode)
        return jnp.argmax(g + lax.expand_dims(logits, tuple(range(len(prefix)))), axis=ax)
    logits = logits + gumbel(key, la.shape, la.dtype, mode=mode)
    k = math.prod(prefix)
    if k > la.shape[axis_c]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of categories ({la.shape[axis_c]})."
        )
    _, indices = _lax_pkg().top_k(jnp.moveaxis(logits, axis_c, -1), k)
    nd = indices.ndim
    return lax.reshape(indices, shape, (nd - 1, *range(nd - 1)))


def _simple(name: str, body):
    """A sampler f(key, shape=(), dtype=None) whose values are body(key, shape, dtype)."""
    jitted = jit(body, static_argnums=(1, 2))

    def sampler(key, shape: Sequence[int] = (), dtype=None, *, out_sharding=None):
        key = _check_key(name, key)
        d = _float_dtype(dtype, name)
        return jitted(key, _canon_shape(shape, name), d)

    sampler.__name__ = sampler.__qualname__ = name
    return sampler


def _u(key, shape, dtype, lo, hi):
    return _uniform_impl(key, lax.full((), lo, dtype), lax.full((), hi, dtype), shape, dtype)


def _exponential_impl(key, shape, dtype):
    return lax.neg(lax.log1p(lax.neg(_u(key, shape, dtype, 0.0, 1.0))))


def _laplace_impl(key, shape, dtype):
    epsneg = 2.0 ** -(dtypes.finfo(dtype).nmant + 1)
    u = _u(key, shape, dtype, -1.0 + epsneg, 1.0)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic_impl(key, shape, dtype):
    x = _u(key, shape, dtype, dtypes.finfo(dtype).tiny, 1.0)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


def _cauchy_impl(key, shape, dtype):
    u = _u(key, shape, dtype, dtypes.finfo(dtype).eps, 1.0)
    return lax.tan(lax.mul(lax.full(shape, math.pi, dtype), lax.sub(u, lax.full(shape, 0.5, dtype))))


exponential = _simple("exponential", _exponential_impl)
exponential.__doc__ = "Standard exponential samples."
laplace = _simple("laplace", _laplace_impl)
laplace.__doc__ = "Standard Laplace samples."
logistic = _simple("logistic", _logistic_impl)
logistic.__doc__ = "Standard logistic samples."
cauchy = _simple("cauchy", _cauchy_impl)
cauchy.__doc__ = "Standard Cauchy samples."


def rademacher(key, shape: Sequence[int] = (), dtype=None, *, out_sharding=None):
    """Samples of -1 or +1 with equal probability (integer dtype by default)."""
    key = _check_key("rademacher", key)
    d = dtypes.canonicalize(int if dtype is None else dtype)
    b = bernoulli(key, 0.5, _canon_shape(shape, "rademacher"))
    b = lax.convert_element_type(b, d)
    two = lax.full(get_aval(b).shape, 2, d)
    return lax.sub(lax.mul(two, b), lax.full(get_aval(b).shape, 1, d))


def lognormal(key, sigma=1.0, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """exp(sigma * standard normal)."""
    key = _check_key("lognormal", key)
    d = _float_dtype(dtype, "lognormal")
    sigma = _scalar_or_array(sigma, d)
    shape = get_aval(sigma).shape if shape is None else _canon_shape(shape, "lognormal")
    return _jnp().exp(normal(key, shape, d) * sigma)


def maxwell(key, shape: Sequence[int] = (), dtype=None, *, out_sharding=None):
    """Maxwell samples: the norm of three standard normals."""
    key = _check_key("maxwell", key)
    d = _float_dtype(dtype, "maxwell")
    shape = _canon_shape(shape, "maxwell")
    x = normal(key, shape + (3,), d)
    return _jnp().linalg.norm(x, axis=-1) if hasattr(_jnp(), "linalg") else _jnp().sqrt(_jnp().sum(x * x, axis=-1))


def double_sided_maxwell(key, loc, scale, shape: Sequence[int] = (), dtype=None):
    """Double-sided Maxwell samples with location loc and scale scale."""
    key = _check_key("double_sided_maxwell", key)
    d = _float_dtype(dtype, "double_sided_maxwell")
    shape = _canon_shape(shape, "double_sided_maxwell")
    params_shapes = _broadcast_shapes(_shape_of(loc), _shape_of(scale))
    if not shape:
        shape = params_shapes
    shape = shape + params_shapes
    maxwell_key, rademacher_key = _two_keys(key)
    x = maxwell(maxwell_key, shape, d)
    rs = rademacher(rademacher_key, shape=shape, dtype=d)
    return rs * x * scale + loc


def weibull_min(key, scale, concentration, shape: Sequence[int] = (), dtype=None):
    """Weibull samples: scale * (-log1p(-u)) ** (1 / concentration)."""
    key = _check_key("weibull_min", key)
    d = _float_dtype(dtype, "weibull_min")
    jnp = _jnp()
    u = uniform(key, _canon_shape(shape, "weibull_min"), d, 0.0, 1.0)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


def rayleigh(key, scale, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Rayleigh samples: scale * sqrt(-2 log u)."""
    key = _check_key("rayleigh", key)
    d = _float_dtype(dtype, "rayleigh")
    scale = _scalar_or_array(scale, d)
    shape = get_aval(scale).shape if shape is None else _canon_shape(shape, "rayleigh")
    jnp = _jnp()
    u = uniform(key, shape, d, 0.0, 1.0)
    log_u = jnp.log(u)
    return jnp.sqrt(lax.full(shape, -2.0, d) * log_u) * scale.astype(d)


def pareto(key, b, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Pareto samples: exp(exponential / b)."""
    key = _check_key("pareto", key)
    d = _float_dtype(dtype, "pareto")
    b = _scalar_or_array(b, d)
    shape = get_aval(b).shape if shape is None else _canon_shape(shape, "pareto")
    e = exponential(key, shape, d)
    return _jnp().exp(e / b.astype(d))


def geometric(key, p, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Geometric samples: number of Bernoulli(p) trials until the first success."""
    key = _check_key("geometric", key)
    d = _int_dtype(dtype, "geometric")
    jnp = _jnp()
    p = _scalar_or_array(p, dtypes.default_float())
    shape = get_aval(p).shape if shape is None else _canon_shape(shape, "geometric")
    u = uniform(key, shape, get_aval(p).dtype)
    log_u = jnp.log(jnp.where(u == 0, 1, u))
    return (jnp.floor(log_u / jnp.broadcast_to(jnp.log1p(-p), shape)) + 1).astype(d)


def triangular(key, left, mode, right, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Triangular samples on [left, right] with the given mode."""
    key = _check_key("triangular", key)
    d = _float_dtype(dtype, "triangular")
    jnp = _jnp()
    left, mode, right = (_scalar_or_array(v, d) for v in (left, mode, right))
    if shape is None:
        shape = _broadcast_shapes(*(get_aval(v).shape for v in (left, mode, right)))
    else:
        shape = _canon_shape(shape, "triangular")
    fc = (mode - left) / (right - left)
    u = uniform(key, shape, d)
    out1 = left + jnp.sqrt(u * (right - left) * (mode - left))
    out2 = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
    return jnp.where(u < fc, out1, out2)


def multivariate_normal(
    key, mean, cov, shape: Sequence[int] | None = None, dtype=None, method: str = "cholesky", *, out_sharding=None
):
    """Multivariate normal samples: mean + factor(cov) @ standard normal."""
    key = _check_key("multivariate_normal", key)
    jnp = _jnp()
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean = mean if isinstance(mean, Tracer) else jnp.asarray(mean)
    cov = cov if isinstance(cov, Tracer) else jnp.asarray(cov)
    common = dtypes.promote_types(get_aval(mean).dtype, get_aval(cov).dtype)
    if common.kind != "f":
        common = dtypes.default_float()
    mean, cov = mean.astype(common), cov.astype(common)
    d = common if dtype is None else _float_dtype(dtype, "multivariate_normal")
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got cov.shape == {tuple(cov.shape)}."
        )
    if shape is None:
        shape = _broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    else:
        shape = _canon_shape(shape, "multivariate_normal")
        _check_shape("normal", shape, tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = normal(key, shape + (n,), d)
    return mean + jnp.matmul(factor, z[..., None])[..., 0]


def orthogonal(key, n: int, shape: Sequence[int] = (), dtype=None, m: int | None = None, *, out_sharding=None):
    """Random matrices with orthonormal columns (or rows), uniform under the Haar measure."""
    key = _check_key("orthogonal", key)
    d = _float_dtype(dtype, "orthogonal")
    shape = _canon_shape(shape, "orthogonal")
    n = int(core.concrete_or_error(n, "The error occurred in jax.random.orthogonal()"))
    m_ = n if m is None else int(core.concrete_or_error(m, "The error occurred in jax.random.orthogonal()"))
    jnp = _jnp()
    z = normal(key, (*shape, max(n, m_), min(n, m_)), d)
    q, r = jnp.linalg.qr(z)
    diag = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(diag), -2)
    return jnp.swapaxes(x, -1, -2) if n < m_ else x


# --- gamma family, counting distributions -------------------------------------------------------
#
# These run JAX's algorithms with JAX's key schedules, so the same key gives the same samples:
# gamma draws each element from its own key (split(key, size)) with Marsaglia-Tsang's nested
# rejection loops, vmapped (batched while_loops); poisson and binomial run whole-array loops that
# split one key per round, and keep JAX's quirks (the last accepted proposal wins, and both regimes
# run on every element with placeholder parameters) because they decide which draws are used.

# A cap on the rounds of the whole-array rejection loops. JAX loops up to dtype max (forever in
# practice); every valid parameter is accepted with probability > 0.5 per round, so the cap only
# turns JAX's hangs on degenerate input (e.g. binomial(n=inf, p=0)) into a result.
_MAX_ROUNDS = 100_000


def _while(cond, body, init):
    from pyjax.lax.control_flow import while_loop

    return while_loop(cond, body, init)


def _keys(key, n: int) -> tuple:
    """split(key, n) as a tuple of n keys."""
    ks = _split_impl(key, (n,))
    return tuple(lax.reshape(lax.slice(ks, (i, 0), (i + 1, 2)), (2,)) for i in range(n))


def _two_keys(key):
    return _keys(key, 2)


def _gamma_one(key, alpha, log_space: bool):
    """One Gamma(alpha) sample (its log if log_space) from its own key: JAX's Marsaglia-Tsang loop."""
    dt = get_aval(alpha).dtype

    def c(v):
        return lax.full((), v, dt)

    zero, one = c(0.0), c(1.0)
    # alpha < 1 is boosted: Gamma(alpha) = Gamma(alpha + 1) * U ** (1 / alpha)
    boost_mask = lax.ge(alpha, one)
    d = lax.sub(lax.select(boost_mask, alpha, lax.add(alpha, one)), c(1.0 / 3.0))
    cc = lax.div(c(1.0 / 3.0), lax.sqrt(d))

    def rejected(state):
        _, xx, v3, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(c(0.0331), lax.mul(xx, xx))))
        bound = lax.add(lax.mul(xx, c(0.5)), lax.mul(d, lax.add(lax.sub(one, v3), lax.log(v3))))
        return lax.bitwise_and(squeeze, lax.ge(lax.log(u), bound))

    def propose(state):
        k, x_key, u_key = _keys(state[0], 3)

        def next_x(kxv):
            kx, sub = _keys(kxv[0], 2)
            x = _normal_impl(sub, (), dt)
            return kx, x, lax.add(one, lax.mul(x, cc))

        _, x, v = _while(lambda kxv: lax.le(kxv[2], zero), next_x, (x_key, zero, c(-1.0)))
        return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), _u(u_key, (), dt, 0.0, 1.0)

    key, subkey = _keys(key, 2)
    v3 = _while(rejected, propose, (key, zero, one, c(2.0)))[2]  # the initial state is rejected
    if log_space:
        log_u = lax.neg(_exponential_impl(subkey, (), dt))
        skip = lax.bitwise_or(boost_mask, lax.eq(log_u, zero))
        log_boost = lax.select(skip, zero, lax.mul(log_u, lax.div(one, alpha)))
        return lax.add(lax.add(lax.log(d), lax.log(v3)), log_boost)
    u = lax.sub(one, _u(subkey, (), dt, 0.0, 1.0))
    boost = lax.select(boost_mask, one, lax.pow(u, lax.div(one, alpha)))
    return lax.mul(lax.mul(d, v3), boost)


def _gamma_impl(key, a, shape, dtype, log_space):
    """Gamma(a) samples (logs if log_space): element i uses split(key, size)[i], as in JAX."""
    from pyjax.api import vmap

    a = _bcast(lax.convert_element_type(a, dtype), shape)
    n = math.prod(shape)
    if n == 0:
        return a
    keys = _split_impl(key, (n,))
    out = vmap(lambda k, x: _gamma_one(k, x, log_space))(keys, lax.reshape(a, (n,)))
    return lax.reshape(out, shape)


_gamma_jit = jit(_gamma_impl, static_argnums=(2, 3, 4))


def _shape_params(name: str, shape, *params):
    """The sample shape: broadcast of the parameter shapes if shape is None, else checked against them."""
    shapes = [get_aval(p).shape for p in params]
    if shape is None:
        return _broadcast_shapes(*shapes)
    shape = _canon_shape(shape, name)
    _check_shape(name, shape, *shapes)
    return shape


def _gamma_sampler(name: str, key, a, shape, dtype, log_space: bool):
    from pyjax.custom_derivatives import custom_jvp

    key = _check_key(name, key)
    d = _float_dtype(dtype, name)
    a = _scalar_or_array(a, d)
    shape = _shape_params(name, shape, a)
    f = custom_jvp(lambda a: _gamma_jit(key, a, shape, d, log_space))

    @f.defjvp
    def _implicit_jvp(primals, tangents):
        (a,), (da,) = primals, tangents
        out = _gamma_jit(key, a, shape, d, log_space)
        z = _jnp().exp(out) if log_space else out
        ab = _bcast(lax.convert_element_type(a, d), shape)
        dz = _gamma_sample_grad(ab, lax.stop_gradient(z)) * _bcast(lax.convert_element_type(da, d), shape)
        return out, dz / z if log_space else dz

    return f(a)


def _random_gamma_meaning(key, a, *, log_space=False):
    """JAX's random_gamma_p: Gamma(a) samples for each key (a's leading axes follow the keys' axes), each
    key split over the rest of a, as jax.random.gamma draws them."""
    from pyjax.api import vmap

    data, a = lax._as_array(key), lax._as_array(a)

    def one(k, x):
        return _gamma_impl(k, x, get_aval(x).shape, get_aval(x).dtype, log_space)

    for _ in range(get_aval(data).ndim - 1):
        one = vmap(one)
    return one(data, a)


def _random_gamma_jvp(primals, tangents, *, log_space=False):
    key, a = primals
    out = _random_gamma_p.bind(key, a, log_space=log_space)
    da = tangents[1]
    if type(da) is ad.Zero:
        return out, ad.Zero(get_aval(out))
    z = lax.exp(out) if log_space else out
    dz = lax.mul(_gamma_sample_grad(a, lax.stop_gradient(z)), da)
    return out, lax.div(dz, z) if log_space else dz


class _KeyOperandPrimitive(core.Primitive):
    """A primitive whose first operand is a key: typed keys are bound as their uint32 data (pyjax's
    transformations trace numbers only)."""

    def __init__(self, inner: core.Primitive):
        super().__init__(inner.name)
        self.inner = inner

    def bind(self, key, *args, **params):
        return self.inner.bind(key_data(key) if isinstance(key, PRNGKeyArray) else key, *args, **params)


_random_gamma_p = composed_primitive("random_gamma", _random_gamma_meaning)
ad.jvp_rules[_random_gamma_p] = _random_gamma_jvp
random_gamma_p = _KeyOperandPrimitive(_random_gamma_p)


def gamma(key, a, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Gamma(a, 1) samples (Marsaglia-Tsang rejection), differentiable in a by implicit reparameterization."""
    return _gamma_sampler("gamma", key, a, shape, dtype, False)


def loggamma(key, a, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Logs of Gamma(a, 1) samples, computed in log space (accurate for tiny a)."""
    return _gamma_sampler("loggamma", key, a, shape, dtype, True)


def beta(key, a, b, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Beta(a, b) samples as X / (X + Y) with X ~ Gamma(a), Y ~ Gamma(b) (in log space)."""
    key = _check_key("beta", key)
    d = _float_dtype(dtype, "beta")
    a, b = _scalar_or_array(a, d), _scalar_or_array(b, d)
    shape = _shape_params("beta", shape, a, b)
    jnp = _jnp()
    key_a, key_b = _two_keys(key)
    la, lb = loggamma(key_a, a, shape, d), loggamma(key_b, b, shape, d)
    m = jnp.maximum(la, lb)
    ga, gb = jnp.exp(la - m), jnp.exp(lb - m)
    return ga / (ga + gb)


def dirichlet(key, alpha, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Dirichlet(alpha) samples over the last axis of alpha: softmax of log-gamma samples."""
    key = _check_key("dirichlet", key)
    d = _float_dtype(dtype, "dirichlet")
    alpha = _scalar_or_array(alpha, d)
    sa = get_aval(alpha).shape
    if len(sa) < 1:
        raise ValueError(f"The concentration parameter should be at least 1-dimensional, got {sa}")
    if shape is None:
        shape = sa[:-1]
    else:
        shape = _canon_shape(shape, "dirichlet")
        _check_shape("dirichlet", shape, sa[:-1])
    jnp = _jnp()
    lg = loggamma(key, alpha, shape + sa[-1:], d)
    e = jnp.exp(lg - lax.stop_gradient(jnp.max(lg, axis=-1, keepdims=True)))
    return e / jnp.sum(e, axis=-1, keepdims=True)


def chisquare(key, df, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Chi-square(df) samples: 2 * Gamma(df / 2)."""
    key = _check_key("chisquare", key)
    d = _float_dtype(dtype, "chisquare")
    df = _scalar_or_array(df, d)
    shape = _shape_params("chisquare", shape, df)
    return _jnp().exp(loggamma(key, df.astype(d) / 2, shape, d)) * 2


def f(key, dfnum, dfden, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """F(dfnum, dfden) samples: ratio of scaled chi-square samples."""
    key = _check_key("f", key)
    d = _float_dtype(dtype, "f")
    dfnum, dfden = _scalar_or_array(dfnum, d).astype(d), _scalar_or_array(dfden, d).astype(d)
    shape = _shape_params("f", shape, dfnum, dfden)
    key_den, key_num = _two_keys(key)
    return (chisquare(key_num, dfnum, shape, d) / dfnum) / (chisquare(key_den, dfden, shape, d) / dfden)


def t(key, df, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Student's t(df) samples: normal * sqrt(df / 2 / Gamma(df / 2))."""
    key = _check_key("t", key)
    d = _float_dtype(dtype, "t")
    df = _scalar_or_array(df, d).astype(d)
    shape = _shape_params("t", shape, df)
    key_n, key_g = _two_keys(key)
    half = df / 2
    return normal(key_n, shape, d) * _jnp().sqrt(half / gamma(key_g, half, shape, d))


def generalized_normal(key, p, shape: Sequence[int] = (), dtype=None, *, out_sharding=None):
    """Generalized normal samples with density proportional to exp(-|x| ** p)."""
    key = _check_key("generalized_normal", key)
    d = _float_dtype(dtype, "generalized_normal")
    shape = _canon_shape(shape, "generalized_normal")
    key_g, key_r = _two_keys(key)
    g = gamma(key_g, 1 / _scalar_or_array(p, d), shape, d)
    r = rademacher(key_r, shape, d)
    return r * g ** (1 / _scalar_or_array(p, d))


def wald(key, mean, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Wald (inverse Gaussian, scale 1) samples by the Michael-Schucany-Haas transformation."""
    key = _check_key("wald", key)
    d = _float_dtype(dtype, "wald")
    mean = _scalar_or_array(mean, d)
    shape = _shape_params("wald", shape, mean)
    jnp = _jnp()
    k1, k2 = _two_keys(key)
    mean = jnp.broadcast_to(mean.astype(d), shape)
    y = normal(k1, shape, d) ** 2
    z = uniform(k2, shape, d)
    mean_sq = mean**2
    x = mean + mean_sq * y / 2 - mean / 2 * jnp.sqrt(4 * mean * y + mean_sq * y**2)
    return jnp.where(z <= mean / (mean + x), x, mean_sq / x)


def _at_least_1d(impl):
    """impl run on shape (1,) when the sample is a scalar (keeps every op at rank >= 1); the draws
    are the same, since element 0 of a (1,)-shaped sample uses the counter a ()-shaped one does."""

    def run(key, *args):
        *params, shape, dtype = args
        if shape:
            return impl(key, *params, shape, dtype)
        return lax.reshape(impl(key, *(lax.reshape(p, (1,)) for p in params), (1,), dtype), ())

    return run


def _rounds_left(i, dtype):
    """JAX bounds its count loops by the largest value of the result dtype (capped, see _MAX_ROUNDS)."""
    limit = dtypes.iinfo(dtype).max if dtype.kind in "iu" else _MAX_ROUNDS
    return i < min(limit, _MAX_ROUNDS)


_LANCZOS = (
    676.520368121885098567009190444019,
    -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,
    -176.61502916214059906584551354,
    12.507343278686904814458936853,
    -0.13857109526572011689554707,
    9.984369578019570859563e-6,
    1.50563273514931155834e-7,
)


def _madd(a, b, c):
    """a * b + c rounded once in float32, as XLA's CPU code contracts it into an FMA."""
    if get_aval(a).dtype is dtypes.float32:
        shape = _broadcast_shapes(get_aval(a).shape, get_aval(b).shape, get_aval(c).shape)
        return _fma32(_bcast(a, shape), _bcast(b, shape), _bcast(c, shape))
    return a * b + c


def _lgamma(x):
    """XLA's lgamma (Lanczos, g = 7, n = 9) for x >= 0.5: the rejection tests subtract lgamma from
    numbers of the same size, so its last bits decide acceptances and must be XLA's."""
    jnp = _jnp()
    z = x - 1
    a = jnp.full_like(x, 0.99999999999980993227684700473478)
    for i, coeff in enumerate(_LANCZOS):
        a = a + coeff / (z + (i + 1))
    t = 7.5 + z
    log_t = math.log(7.5) + jnp.log1p(z / 7.5)
    log_y = _madd(z + 0.5 - t / log_t, log_t, jnp.full_like(x, (math.log(2) + math.log(math.pi)) / 2))
    return jnp.where(jnp.isinf(x), float("inf"), log_y + jnp.log(a))


def _poisson_knuth(key, lam, shape, dtype):
    """Knuth: count uniforms until their product drops below exp(-lam); one split key per round."""
    jnp = _jnp()

    def body(carry):
        i, k, rng, log_prod = carry
        rng, sub = _two_keys(rng)
        k = jnp.where(log_prod > -lam, k + 1, k)
        return i + 1, k, rng, log_prod + jnp.log(_u(sub, shape, lam.dtype, 0.0, 1.0))

    def more(carry):
        return jnp.any(carry[3] > -lam) & _rounds_left(carry[0], dtype)

    init = (jnp.zeros((), dtypes.int32), jnp.zeros(shape, dtype), key, jnp.zeros(shape, lam.dtype))
    return _while(more, body, init)[1] - 1


def _until_accepted(propose, key, shape, fdtype, dtype):
    """Transformed rejection sampling: each round draws two uniform keys, `propose(k0, k1)` gives
    candidates (in fdtype) and which are accepted; rounds run until every element has accepted once
    (a later acceptance overwrites an earlier one, as in JAX)."""
    jnp = _jnp()

    def body(carry):
        i, k_out, accepted, rng = carry
        rng, k0, k1 = _keys(rng, 3)
        k, accept = propose(k0, k1)
        return i + 1, jnp.where(accept, k, k_out), accepted | accept, rng

    def more(carry):
        return jnp.any(~carry[2]) & _rounds_left(carry[0], dtype)

    init = (jnp.zeros((), dtypes.int32), jnp.full(shape, -1.0, fdtype), jnp.zeros(shape, bool), key)
    return _while(more, body, init)[1].astype(dtype)


def _poisson_rejection(key, lam, shape, dtype):
    """Hormann's transformed rejection (PTRS), run until every element has accepted once."""
    jnp = _jnp()
    log_lam = jnp.log(lam)
    b = 0.931 + 2.53 * jnp.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def propose(k0, k1):
        u = _u(k0, shape, lam.dtype, 0.0, 1.0) - 0.5
        v = _u(k1, shape, lam.dtype, 0.0, 1.0)
        us = 0.5 - jnp.abs(u)
        k = jnp.floor(_madd(2 * a / us + b, u, lam) + 0.43)
        s = jnp.log(v * inv_alpha / (a / (us * us) + b))
        t_ = _madd(k, log_lam, -lam) - _lgamma(k + 1)
        accept1 = (us >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((us < 0.013) & (v > us))
        return k, accept1 | (~reject & (s <= t_))

    return _until_accepted(propose, key, shape, lam.dtype, dtype)


def _poisson_impl(key, lam, shape, dtype):
    """Knuth's method for lam < 10 (or NaN), rejection otherwise; both run on every element."""
    jnp = _jnp()
    lam = _bcast(lam, shape)
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = jnp.where(use_knuth, lam, 0.0)
    lam_rejection = jnp.where(use_knuth, 1e5, lam)
    out = jnp.where(
        use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype), _poisson_rejection(key, lam_rejection, shape, dtype)
    )
    return jnp.where(lam == 0, 0, out).astype(dtype)


_poisson_jit = jit(_at_least_1d(_poisson_impl), static_argnums=(2, 3))


def poisson(key, lam, shape: Sequence[int] | None = None, dtype=None, *, out_sharding=None):
    """Poisson(lam) counts (integer dtype); -1 where lam is negative or NaN, as in JAX."""
    key = _check_key("poisson", key)
    d = _int_dtype(dtype, "poisson")
    lam = _scalar_or_array(lam, dtypes.float32)
    shape = _shape_params("poisson", shape, lam)
    # JAX samples in float32 whatever lam's dtype
    lam = lax.convert_element_type(lax.stop_gradient(lam), dtypes.float32)
    return _poisson_jit(key, lam, shape, d)


_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_approx_tail(k):
    """log(k!) minus its Stirling approximation: tabulated for k <= 9, a series beyond."""
    jnp = _jnp()
    kc = jnp.clip(k, 0.0, 9.0)
    kp1sq = (kc + 1) * (kc + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (kc + 1)
    idx = jnp.floor(kc)
    table = jnp.full(get_aval(k).shape, _STIRLING_TAIL[0], get_aval(k).dtype)
    for i, v in enumerate(_STIRLING_TAIL[1:], 1):  # a select chain instead of a gather: every backend has it
        table = jnp.where(idx == i, v, table)
    return jnp.where(k <= 9, table, approx)


def _binomial_inversion(key, count, prob, shape, dtype):
    """Count geometric waiting times until their sum passes count (one split key per round)."""
    jnp = _jnp()
    log1mp = jnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, rng = carry
        sub, rng = _two_keys(rng)  # JAX's order here: the subkey is the first half
        num_geom = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
        geom = jnp.ceil(jnp.log(_u(sub, shape, prob.dtype, 0.0, 1.0)) / log1mp)
        return i + 1, num_geom, geom_sum + geom, rng

    def more(carry):
        return jnp.any(carry[2] <= count) & _rounds_left(carry[0], dtype)

    zeros = jnp.zeros(shape, prob.dtype)
    return (_while(more, body, (jnp.zeros((), dtypes.int32), zeros, zeros, key))[1] - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype):
    """Hormann's BTRS transformed rejection, run until every element has accepted once."""
    jnp = _jnp()
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def propose(k0, k1):
        u = _u(k0, shape, prob.dtype, 0.0, 1.0)
        v = _u(k1, shape, prob.dtype, 0.0, 1.0)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
            + _stirling_approx_tail(m)
            + _stirling_approx_tail(count - m)
            - _stirling_approx_tail(k)
            - _stirling_approx_tail(count - k)
        )
        return k, accept1 | (~reject & (v <= ub))

    return _until_accepted(propose, key, shape, prob.dtype, dtype)


def _binomial_impl(key, count, prob, shape, dtype):
    """Inversion where count * min(p, 1 - p) <= 10, BTRS otherwise (both run on every element);
    NaN for invalid parameters, inf for infinite counts, as in JAX."""
    jnp = _jnp()
    fd = get_aval(prob).dtype
    count = _bcast(lax.convert_element_type(count, fd), shape)
    prob = _bcast(prob, shape)
    p_lt_half = prob < 0.5
    q = jnp.where(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = jnp.where(q_is_nan | q_l_0, 0.01, q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = jnp.where(use_inversion, count, 0.0)
    count_btrs = jnp.where(use_inversion, 1e4, count)
    q_btrs = jnp.where(use_inversion, 0.5, q)
    samples = jnp.where(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype),
        _btrs(key, count_btrs, q_btrs, shape, dtype),
    )
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = jnp.where(invalid, float("nan"), samples)
    samples = jnp.where(count_inf & ~invalid, float("inf"), samples)
    keep = p_lt_half | count_nan_or_neg | q_is_nan | count_inf
    return jnp.where(keep, samples, count.astype(dtype) - samples).astype(dtype)


_binomial_jit = jit(_at_least_1d(_binomial_impl), static_argnums=(3, 4))


def _inexact(x):
    """x as an array of an inexact dtype (JAX's promote_dtypes_inexact for one argument)."""
    x = x if isinstance(x, Tracer) else _asarray(x)
    if get_aval(x).dtype.kind not in "fc":
        x = x.astype(dtypes.default_float())
    return x


def binomial(key, n, p, shape: Sequence[int] | None = None, dtype=None):
    """Binomial(n, p) counts (as floats, like JAX); NaN for invalid n or p. Computed in p's float dtype."""
    key = _check_key("binomial", key)
    d = _float_dtype(dtype, "binomial")
    n, p = _scalar_or_array(n, d), _inexact(p)
    shape = _shape_params("binomial", shape, n, p)
    return _binomial_jit(key, lax.stop_gradient(n), lax.stop_gradient(p), shape, d)


def _reverse_cumsum0(p):
    """Sums of p[i:] along axis 0, each added left to right (the order of XLA's reduce_window on CPU)."""
    jnp = _jnp()
    k = get_aval(p).shape[0]
    row = lax.broadcasted_iota(dtypes.int32, get_aval(p).shape, 0)
    acc = jnp.zeros_like(p)
    for j in range(k):  # output row i adds p[j] for j >= i, in increasing j
        acc = acc + jnp.where(row <= j, p[j], 0)
    return acc


def multinomial(key, n, p, *, shape: Sequence[int] | None = None, dtype=None, unroll=1):
    """Multinomial(n, p) counts over the last axis of p, as a chain of conditional binomials."""
    key = _check_key("multinomial", key)
    d = _float_dtype(dtype, "multinomial")
    jnp = _jnp()
    n, p = _scalar_or_array(n, None), _scalar_or_array(p, None)
    sp = get_aval(p).shape
    if len(sp) < 1:
        raise ValueError(f"multinomial: p must be at least 1-dimensional, got shape {sp}")
    if shape is None:
        shape = _broadcast_shapes(get_aval(n).shape, sp[:-1]) + sp[-1:]
    else:
        shape = _canon_shape(shape, "multinomial")
        _check_shape("multinomial", shape[:-1], get_aval(n).shape)
        _check_shape("multinomial", shape, sp)
    common = jnp.result_type(n, p)
    common = common if dtypes.canonicalize(common).kind in "fc" else dtypes.default_float()
    k = sp[-1]
    remainder = jnp.broadcast_to(n, shape[:-1]).astype(common)
    p = jnp.moveaxis(jnp.broadcast_to(p, shape).astype(common), -1, 0)
    remaining = _reverse_cumsum0(p)
    ratios = jnp.clip(p / jnp.where(remaining == 0, 1, remaining), 0, 1)
    keys = _keys(key, k)
    counts = []
    for i in range(k):  # JAX's scan over (ratios, keys), unrolled
        count = binomial(keys[i], remainder, ratios[i], dtype=get_aval(remainder).dtype)
        remainder = remainder - count
        counts.append(count)
    return jnp.stack(counts, axis=-1).astype(d)


def ball(key, d: int, p: float = 2, shape: Sequence[int] = (), dtype=None, *, out_sharding=None):
    """Uniform samples from the unit p-norm ball in d dimensions (generalized normals over an exponential)."""
    key = _check_key("ball", key)
    d_ = core.concrete_or_error(d, "The error occurred in jax.random.ball()")
    if not isinstance(d_, int) or isinstance(d_, bool) or d_ < 1:
        raise ValueError(f"d must be a positive integer, got {d!r}")
    dt = _float_dtype(dtype, "ball")
    shape = _canon_shape(shape, "ball")
    jnp = _jnp()
    k1, k2 = _two_keys(key)
    g = generalized_normal(k1, p, shape + (d_,), dt)
    e = exponential(k2, shape, dt)
    return g / ((jnp.sum(jnp.abs(g) ** p, axis=-1) + e) ** (1 / p))[..., None]
