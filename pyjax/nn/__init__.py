"""pyjax.nn: activation functions, softmax and friends, one_hot, and `nn.initializers`.

Values and gradients follow `jax.nn`: relu and relu6 have JAX's custom derivatives (zero at the
kinks), softmax has JAX's custom JVP, and log_softmax / logsumexp subtract a stop-gradient max
for stability.
"""

from __future__ import annotations

import math
import operator
from typing import Any

from pyjax import numpy as jnp
from pyjax.core import core, dtypes
from pyjax.core.core import Tracer, get_aval
from pyjax.custom_derivatives import custom_jvp
from pyjax.lax import lax
from pyjax.nn import initializers  # noqa: F401
from pyjax.nn.block_scaled import get_scaled_dot_general_config, scaled_dot_general, scaled_matmul  # noqa: F401
from pyjax.numpy._promotion import _check_arraylike, _promote_inexact

__all__ = [
    "get_scaled_dot_general_config",
    "scaled_dot_general",
    "scaled_matmul",
    "relu",
    "relu6",
    "sigmoid",
    "softplus",
    "soft_sign",
    "silu",
    "swish",
    "gelu",
    "elu",
    "celu",
    "selu",
    "leaky_relu",
    "hard_tanh",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "log_sigmoid",
    "glu",
    "softmax",
    "log_softmax",
    "logsumexp",
    "logmeanexp",
    "standardize",
    "one_hot",
    "mish",
    "squareplus",
    "sparse_plus",
    "sparse_sigmoid",
    "identity",
    "initializers",
    "tanh",
    "log1mexp",
    "dot_product_attention",
]


def _reduction_axes(ndim: int, axis) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    return tuple(sorted(out))


def logsumexp(
    a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False, where: Any = None
) -> Any:
    """log(sum(b * exp(a))) along axis, stable for large a; optionally returns the sign too."""
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = _promote_inexact("logsumexp", a, b, complex_ok=True)
        a = jnp.where(b != 0, a, -math.inf)
    else:
        (a,) = _promote_inexact("logsumexp", a, complex_ok=True)
    dims = _reduction_axes(a.ndim, axis)
    cplx = a.dtype.kind == "c"  # shifted by the largest real part; the log keeps the phase
    amax = jnp.max(jnp.real(a) if cplx else a, axis=dims, keepdims=keepdims, where=where, initial=-math.inf)
    amax = lax.stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0))).astype(a.dtype)
    amax_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, jnp.broadcast_to(amax_dims, a.shape)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, where=where)
    if cplx and not return_sign:
        return lax.add(lax.log(sumexp), amax)
    sign = lax.sign(sumexp)
    sumexp = lax.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax)
    if return_sign:
        return out, sign
    if b is not None:
        out = jnp.where(sign < 0, lax.full_like(out, math.nan), out)
    return out


def _arr(x, name: str, check: bool = True):
    """x as an array; with check, after JAX's check_arraylike naming `name` (a list raises)."""
    if isinstance(x, Tracer):
        return x
    if check:
        _check_arraylike(name, x)
    try:
        return jnp.asarray(x)
    except TypeError:
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at position 0.") from None


def _inexact(x, name: str):
    """promote_args_inexact: integer and bool inputs become the default float dtype."""
    x = _arr(x, name)
    a = get_aval(x)
    if a.dtype.kind != "f":
        x = lax._convert(x, dtypes.default_float(), a.weak_type)
    return x


def identity(x: Any) -> Any:
    """The identity activation."""
    return _arr(x, "identity")


@custom_jvp
def relu(x: Any) -> Any:
    """max(x, 0); its derivative at 0 is 0, as in JAX."""
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select(x > 0, g, lax.full_like(g, 0)))


@custom_jvp
def relu6(x: Any) -> Any:
    """min(max(x, 0), 6); derivative 0 at both kinks."""
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(lambda g, ans, x: lax.select((x > 0) & (x < 6), g, lax.full_like(g, 0)))


def sigmoid(x: Any) -> Any:
    """1 / (1 + exp(-x))."""
    return lax.logistic(_inexact(x, "sigmoid"))


def softplus(x: Any) -> Any:
    """log(1 + exp(x)), computed stably."""
    return jnp.logaddexp(x, 0)


def soft_sign(x: Any) -> Any:
    """x / (|x| + 1)."""
    x = _arr(x, "soft_sign")
    return x / (jnp.abs(x) + 1)


def silu(x: Any) -> Any:
    """x * sigmoid(x) (also called swish)."""
    x = _arr(x, "silu")
    return x * sigmoid(x)


swish = silu


def mish(x: Any) -> Any:
    """x * tanh(softplus(x))."""
    x = _arr(x, "mish")
    return x * jnp.tanh(softplus(x))


def squareplus(x: Any, b: Any = 4) -> Any:
    """(x + sqrt(x^2 + b)) / 2."""
    _check_arraylike("squareplus", x, b)
    x = _arr(x, "squareplus")
    return (x + jnp.sqrt(jnp.square(x) + b)) / 2


def sparse_plus(x: Any) -> Any:
    """0 for x <= -1, x for x >= 1, (x + 1)^2 / 4 in between."""
    x = _arr(x, "sparse_plus")
    return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x: Any) -> Any:
    """clip((x + 1) / 2, 0, 1)."""
    return 0.5 * jnp.clip(_arr(x, "sparse_sigmoid", check=False) + 1.0, 0.0, 2.0)


def log_sigmoid(x: Any) -> Any:
    """log(sigmoid(x)) = -softplus(-x)."""
    x = _arr(x, "log_sigmoid")
    return -softplus(-x)


def elu(x: Any, alpha: Any = 1.0) -> Any:
    """x for x > 0, alpha * (exp(x) - 1) otherwise (no NaN gradients for large x)."""
    x = _arr(x, "elu")
    return jnp.where(x > 0, x, alpha * jnp.expm1(jnp.where(x > 0, 0.0, x)))


def leaky_relu(x: Any, negative_slope: Any = 1e-2) -> Any:
    """x for x >= 0, negative_slope * x otherwise."""
    x = _arr(x, "leaky_relu")
    return jnp.where(x >= 0, x, negative_slope * x)


def hard_tanh(x: Any) -> Any:
    """clip(x, -1, 1) with zero derivative outside."""
    x = _arr(x, "hard_tanh")
    return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


def celu(x: Any, alpha: Any = 1.0) -> Any:
    """max(x, 0) + alpha * expm1(min(x, 0) / alpha)."""
    return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x: Any) -> Any:
    """scale * elu(x, alpha) with the self-normalizing constants."""
    alpha = 1.6732632423543772848170429916717
    scale = 1.0507009873554804934193349852946
    return scale * elu(x, alpha)


def gelu(x: Any, approximate: bool = True) -> Any:
    """Gaussian error linear unit: the tanh approximation, or the exact erf form."""
    x = _inexact(x, "gelu")
    d = get_aval(x).dtype
    if approximate:
        c = lax.full((), math.sqrt(2 / math.pi), d)
        cdf = 0.5 * (1.0 + jnp.tanh(c * (x + 0.044715 * (x**3))))
        return x * cdf
    sqrt_half = lax.full((), math.sqrt(0.5), d)
    return (0.5 * x * lax.erfc(-x * sqrt_half)).astype(d)


def glu(x: Any, axis: int = -1) -> Any:
    """Gated linear unit: first half * sigmoid(second half) along axis."""
    x = _arr(x, "glu")
    size = x.shape[axis]
    if size % 2:
        raise AssertionError("axis size must be divisible by 2")
    x1, x2 = jnp.split(x, 2, axis)
    return x1 * sigmoid(x2)


def hard_sigmoid(x: Any) -> Any:
    """relu6(x + 3) / 6."""
    return relu6(x + 3.0) / 6.0


def hard_silu(x: Any) -> Any:
    """x * hard_sigmoid(x)."""
    x = _arr(x, "hard_silu")
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """x - logsumexp(x, axis), shifted by a stop-gradient max for stability."""
    x = _arr(x, "log_softmax")
    x_max = jnp.max(x, axis, where=where, initial=-math.inf, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, -math.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    shifted_lse = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
    result = shifted - shifted_lse
    if where is not None:
        return jnp.where(where, result, -math.inf)
    return result


def _softmax_fwd(x, axis, where, initial):
    x_max = jnp.max(x, axis, where=where, initial=initial, keepdims=True)
    x_safe = x if where is None else jnp.where(where, x, initial)
    unnormalized = jnp.exp(x_safe - x_max)
    result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """exp(x) / sum(exp(x)) along axis, with JAX's custom JVP y * (t - sum(y * t))."""
    x = _arr(x, "max")  # JAX's softmax takes the max first; its error names max
    if isinstance(axis, list):
        axis = tuple(axis)
    return _softmax_with_axis(axis)(x, where)


_SOFTMAX_CACHE: dict = {}


def _softmax_with_axis(axis):
    f = _SOFTMAX_CACHE.get(axis)
    if f is not None:
        return f

    @custom_jvp
    def sm(x, where):
        return _softmax_fwd(x, axis, where, -math.inf)

    def sm_jvp(primals, tangents):
        x, where = primals
        x_dot = tangents[0]
        y = sm(x, where)
        return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))

    sm.defjvp(sm_jvp)
    _SOFTMAX_CACHE[axis] = sm
    return sm


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """log(mean(exp(x))) along axis, computed stably."""
    lse = logsumexp(x, axis=axis, where=where, keepdims=keepdims)
    x = _arr(x, "logmeanexp", check=False)
    ones = jnp.ones(x.shape, get_aval(lse).dtype)
    count = jnp.sum(ones, axis=axis, where=where, keepdims=keepdims)
    return lse - jnp.log(count)


def standardize(
    x: Any,
    axis: Any = -1,
    mean: Any = None,
    variance: Any = None,
    epsilon: Any = 1e-5,
    where: Any = None,
    *,
    algorithm: str = "fast",
) -> Any:
    """(x - mean) / sqrt(variance + epsilon), statistics along axis unless given."""
    x = _arr(x, "standardize")
    if mean is None:
        mean = jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True, where=where)
        elif algorithm == "fast":
            variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - jnp.square(mean)
            variance = jnp.clip(variance, 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """x[..., None] == arange(num_classes), as dtype (default float), new axis at `axis`."""
    num_classes = core.concrete_or_error(num_classes, "The error arose in jax.nn.one_hot argument `num_classes`.")
    num_classes = operator.index(num_classes)  # a float count is a TypeError, as in JAX
    x = _arr(x, "one_hot", check=False)  # JAX takes lists here
    d = dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)
    nd = x.ndim
    if not -(nd + 1) <= axis <= nd:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd + 1}")
    pos = axis % (nd + 1)
    lhs = lax.expand_dims(x, (pos,))
    rhs_shape = [1] * nd
    rhs_shape.insert(pos, num_classes)
    rhs = lax.broadcasted_iota(get_aval(x).dtype, rhs_shape, pos)
    return (lhs == rhs).astype(d)


def tanh(x: Any) -> Any:
    """Hyperbolic tangent (jax.nn.tanh is jax.numpy.tanh)."""
    return jnp.tanh(x)


def log1mexp(x: Any) -> Any:
    """log(1 - exp(-x)) for x > 0, switching between two forms at log 2 for accuracy."""
    x = _inexact(x, "log1mexp")
    small = x < math.log(2)
    return jnp.where(small, jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


def dot_product_attention(
    query: Any,
    key: Any,
    value: Any,
    bias: Any = None,
    mask: Any = None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths: Any = None,
    key_value_seq_lengths: Any = None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
):
    """Scaled dot-product attention softmax(q k^T * scale + bias, masked) v over (B, T, N, H) arrays.

    key/value are (B, S, K, H) with N a multiple of K (grouped-query attention); 3-D inputs omit B.
    bias and the boolean mask (True keeps) broadcast to (B, N, T, S). The softmax runs in float32.
    """
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    q, k, v = (_arr(t, "dot_product_attention", check=False) for t in (query, key, value))
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(
            f"query, key and value must have 3 or 4 dimensions, got {query.ndim}, {key.ndim}, {value.ndim}"
        )
    B, T, N, H = q.shape
    _, S, K, _ = k.shape
    if k.shape != v.shape or k.shape[0] != B or k.shape[-1] != H:
        raise ValueError(f"Incompatible shapes: query {q.shape}, key {k.shape}, value {v.shape}")
    if N % K:
        raise ValueError(f"The number of query heads must be a multiple of key/value heads, but got {N} vs {K}")
    if N != K:  # grouped-query attention: query head n reads key/value head n // (N // K)
        k, v = jnp.repeat(k, N // K, axis=2), jnp.repeat(v, N // K, axis=2)
    scale = 1.0 / math.sqrt(H) if scale is None else scale
    logits_dtype = dtypes.promote_types(q.dtype, dtypes.float32)
    logits = jnp.einsum("BTNH,BSNH->BNTS", q, k, preferred_element_type=logits_dtype) * jnp.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + _arr(bias, "dot_product_attention", check=False)).astype(logits_dtype)
    keep = None if mask is None else _arr(mask, "dot_product_attention", check=False).astype(bool)
    tpos, spos = jnp.arange(T)[:, None], jnp.arange(S)[None, :]

    def both(a, b):
        return b if a is None else a & b

    if is_causal:
        keep = both(keep, tpos >= spos)
    if local_window_size is not None:
        left, right = (
            (local_window_size, local_window_size) if isinstance(local_window_size, int) else local_window_size
        )
        keep = both(keep, (tpos <= spos + left) & (tpos >= spos - right))
    if query_seq_lengths is not None:
        keep = both(keep, (jnp.arange(T)[None, :, None] < jnp.asarray(query_seq_lengths)[:, None, None])[:, None])
    if key_value_seq_lengths is not None:
        kv_keep = jnp.arange(S)[None, None, :] < jnp.asarray(key_value_seq_lengths)[:, None, None]
        keep = both(keep, kv_keep[:, None])
    if keep is not None:
        big_neg = -0.7 * min(float(dtypes.finfo(logits_dtype).max), float(dtypes.finfo(dtypes.float32).max))
        logits = jnp.where(keep, logits, jnp.asarray(big_neg, logits_dtype))
    logits = logits.astype(dtypes.float32)
    probs = softmax(logits, axis=-1).astype(k.dtype)
    out = jnp.einsum("BNTS,BSNH->BTNH", probs, v)
    if query_seq_lengths is not None:
        rows = jnp.arange(T)[None, :] < jnp.asarray(query_seq_lengths)[:, None]
        out = out * rows[:, :, None, None].astype(out.dtype)
    if return_residual:
        lse = jnp.moveaxis(logsumexp(logits, axis=-1), 1, 2)  # (B, T, N)
        return (out[0], lse[0]) if unbatched else (out, lse)
    return out[0] if unbatched else out
