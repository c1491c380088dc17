"""More of jax.lax, composed from existing primitives: special functions (igamma, betainc, zeta,
polygamma, bessel_i0e/i1e), shape helpers (collapse, split, stack, tile, broadcast_to_rank, ...),
integer and float bit tricks (mulhi, reduce_precision), a generic `reduce`, and a few no-ops
(optimization_barrier) and trace-time choices (platform_dependent).
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

from pyjax.core import core, dtypes
from pyjax.core.pytree import tree_flatten, tree_unflatten
from pyjax.lax import lax
from pyjax.lax.slicing import index_in_dim, slice_in_dim

__all__ = [
    "igamma",
    "igammac",
    "igamma_grad_a",
    "random_gamma_grad",
    "betainc",
    "polygamma",
    "zeta",
    "bessel_i0e",
    "bessel_i1e",
    "broadcast_shapes",
    "broadcast_to_rank",
    "broadcast_like",
    "collapse",
    "batch_matmul",
    "mulhi",
    "reduce_precision",
    "optimization_barrier",
    "split",
    "stack",
    "unstack",
    "tile",
    "dtype",
    "empty",
    "index_take",
    "reduce",
    "platform_dependent",
    "approx_max_k",
    "approx_min_k",
]


def _jnp():
    import pyjax.numpy as jnp

    return jnp


def _special():
    from pyjax.scipy import special

    return special


def _float_args(name: str, *xs) -> list:
    """JAX's lax rules for these functions: floating inputs of one dtype (weak scalars adapt)."""
    jnp = _jnp()
    arrs = [x if isinstance(x, core.Tracer) else jnp.asarray(x) for x in xs]
    for a in arrs:
        if a.dtype.kind != "f":
            raise TypeError(f"{name} does not accept dtype {a.dtype.name}. Accepted dtypes are subtypes of floating.")
    strong = {a.dtype for a in arrs if not a.aval.weak_type}
    if len(strong) > 1:
        names = ", ".join(sorted(d.name for d in strong))
        raise TypeError(f"{name} requires arguments to have the same dtypes, got {names}.")
    d = jnp.result_type(*arrs)
    weak = all(a.aval.weak_type for a in arrs)  # all Python scalars: the result stays weak, as in JAX
    return [lax._convert(a, d, weak) for a in arrs]


# --- special functions ------------------------------------------------------------------------


def igamma(a: Any, x: Any) -> Any:
    """Regularized lower incomplete gamma function P(a, x)."""
    return _special().gammainc(*_float_args("igamma", a, x))


def igammac(a: Any, x: Any) -> Any:
    """Regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."""
    return _special().gammaincc(*_float_args("igammac", a, x))


def igamma_grad_a(a: Any, x: Any) -> Any:
    """dP(a, x)/da, the derivative of the regularized lower incomplete gamma in a."""
    from pyjax.api import jvp

    a, x = _float_args("igamma_grad_a", a, x)
    core_fn = _special()._gammainc_core
    return jvp(lambda a_: core_fn(a_, x, False), (a,), (_jnp().ones_like(a),))[1]


def random_gamma_grad(a: Any, x: Any) -> Any:
    """d(sample)/da of a Gamma(a, 1) sample x at fixed CDF value (implicit reparameterization)."""
    from pyjax import random

    a, x = _float_args("random_gamma_grad", a, x)
    return random._gamma_sample_grad(a, x)


def betainc(a: Any, b: Any, x: Any) -> Any:
    """Regularized incomplete beta function I_x(a, b)."""
    return _special().betainc(*_float_args("betainc", a, b, x))


def polygamma(m: Any, x: Any) -> Any:
    """The m-th derivative of the digamma function at x."""
    return _special()._polygamma(*_float_args("polygamma", m, x))


def zeta(x: Any, q: Any) -> Any:
    """Hurwitz zeta function zeta(x, q)."""
    return _special().zeta(*_float_args("zeta", x, q))


def bessel_i0e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 0: exp(-|x|) I0(x)."""
    return _special().i0e(*_float_args("bessel_i0e", x))


def bessel_i1e(x: Any) -> Any:
    """Exponentially scaled modified Bessel function of order 1: exp(-|x|) I1(x)."""
    return _special().i1e(*_float_args("bessel_i1e", x))


# --- shapes -----------------------------------------------------------------------------------


def broadcast_shapes(*shapes: Sequence[int]) -> tuple:
    """The shape that all `shapes` broadcast to (numpy rules); raises ValueError if incompatible."""
    return _jnp().broadcast_shapes(*[tuple(int(d) for d in s) for s in shapes])


def broadcast_to_rank(x: Any, rank: int) -> Any:
    """x with leading size-1 axes added until it has `rank` dimensions."""
    x = _jnp().asarray(x)
    if x.ndim >= rank:
        return x
    return lax.broadcast(x, (1,) * (rank - x.ndim))


def broadcast_like(arr: Any, like_arr: Any) -> Any:
    """arr broadcast to the shape of like_arr (trailing axes aligned)."""
    jnp = _jnp()
    return jnp.broadcast_to(arr, jnp.shape(like_arr))


def collapse(operand: Any, start_dimension: int, stop_dimension: int | None = None) -> Any:
    """Merge the axes start_dimension..stop_dimension-1 of operand into one."""
    x = _jnp().asarray(operand)
    nd = x.ndim
    lo = start_dimension % nd if nd else 0
    hi = nd if stop_dimension is None else (stop_dimension % (nd + 1) if stop_dimension >= 0 else stop_dimension + nd)
    if not 0 <= lo <= hi <= nd:
        raise ValueError(f"collapse: invalid dimensions start={start_dimension}, stop={stop_dimension} for rank {nd}")
    size = math.prod(x.shape[lo:hi])
    return lax.reshape(x, x.shape[:lo] + (size,) + x.shape[hi:])


def batch_matmul(lhs: Any, rhs: Any, precision: Any = None) -> Any:
    """Batched matrix product over the leading axes: (..., m, k) @ (..., k, n)."""
    jnp = _jnp()
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    if lhs.ndim < 2 or lhs.ndim != rhs.ndim:
        raise ValueError(f"batch_matmul requires arguments of equal rank >= 2, got {lhs.ndim} and {rhs.ndim}")
    if lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError(f"batch_matmul requires equal batch dimensions, got {lhs.shape[:-2]} and {rhs.shape[:-2]}")
    batch = tuple(range(lhs.ndim - 2))
    return lax.dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)), precision=precision)


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> list:
    """Split operand along axis into pieces of the given sizes (which must sum to its length)."""
    x = _jnp().asarray(operand)
    axis = axis % builtins.max(x.ndim, 1)
    sizes = [int(s) for s in sizes]
    if builtins.sum(sizes) != x.shape[axis] or builtins.any(s < 0 for s in sizes):
        raise ValueError(
            f"split: sizes {sizes} must be nonnegative and sum to {x.shape[axis]}, the size of axis {axis}"
        )
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(x, start, start + s, axis=axis))
        start += s
    return out


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Stack equally shaped arrays along a new axis."""
    return _jnp().stack(list(operands), axis=axis)


def unstack(x: Any, axis: int = 0) -> tuple:
    """The slices of x along axis, as a tuple."""
    x = _jnp().asarray(x)
    axis = axis % builtins.max(x.ndim, 1)
    return tuple(index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """operand repeated reps[i] times along each axis (len(reps) must equal the rank)."""
    x = _jnp().asarray(operand)
    reps = tuple(int(r) for r in reps)
    if len(reps) != x.ndim:
        raise ValueError(f"tile: len(reps)={len(reps)} must equal operand.ndim={x.ndim}")
    return _jnp().tile(x, reps)


def dtype(x: Any) -> Any:
    """The canonical dtype of a value, array or dtype-like."""
    if hasattr(x, "dtype"):
        return dtypes.canonicalize(x.dtype)
    if isinstance(x, (bool, int, float)):
        return dtypes.canonicalize(dtypes.python_scalar_dtype(x))
    return dtypes.canonicalize(x)


def empty(shape: Sequence[int], dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of the given shape and dtype (zeros: pyjax has no uninitialized memory)."""
    return lax.full(tuple(shape), 0, dtypes.canonicalize(dtype))


def index_take(src: Any, idxs: Any, axes: Sequence[int]) -> Any:
    """src indexed along `axes` by the columns of idxs: src[idxs[:, 0], idxs[:, 1], ...] on those axes."""
    jnp = _jnp()
    src, idxs = jnp.asarray(src), jnp.asarray(idxs)
    axes = [a % src.ndim for a in axes]
    if idxs.ndim != 2 or idxs.shape[1] != len(axes):
        raise ValueError(f"index_take: idxs must have shape (n, {len(axes)}), got {idxs.shape}")
    rest = [a for a in range(src.ndim) if a not in axes]
    moved = jnp.transpose(src, axes + rest)
    return moved[tuple(idxs[:, k] for k in range(len(axes)))]


# --- integer and float bit manipulation ---------------------------------------------------------


def mulhi(x: Any, y: Any, /) -> Any:
    """The high half of the double-width integer product x * y (per element, same integer dtype)."""
    jnp = _jnp()
    x, y = jnp.asarray(x), jnp.asarray(y)
    if x.dtype != y.dtype or x.dtype.kind not in "iu":
        raise TypeError(
            f"mulhi requires two integer arguments of the same dtype, got {x.dtype.name} and {y.dtype.name}"
        )
    bits = x.dtype.itemsize * 8
    half = bits // 2
    u = dtypes.canonicalize(f"uint{bits}")
    a, b = lax.convert_element_type(x, u), lax.convert_element_type(y, u)
    mask = jnp.asarray((1 << half) - 1, u)
    sh = jnp.asarray(half, u)
    a_lo, a_hi = a & mask, (a >> sh)
    b_lo, b_hi = b & mask, (b >> sh)
    lo_lo = a_lo * b_lo
    mid1 = a_hi * b_lo + (lo_lo >> sh)
    mid2 = a_lo * b_hi + (mid1 & mask)
    hi = a_hi * b_hi + (mid1 >> sh) + (mid2 >> sh)
    if x.dtype.kind == "u":
        return hi
    # signed: subtract the contributions of the two's-complement sign bits
    zero = jnp.asarray(0, u)
    hi = hi - jnp.where(x < 0, b, zero) - jnp.where(y < 0, a, zero)
    return lax.convert_element_type(hi, x.dtype)


_FLOAT_LAYOUT = {"float16": (5, 10, "uint16"), "bfloat16": (8, 7, "uint16"), "float32": (8, 23, "uint32")}
_FLOAT_LAYOUT["float64"] = (11, 52, "uint64")


def reduce_precision(operand: Any, exponent_bits: int, mantissa_bits: int) -> Any:
    """Round a float array to the precision of a float with the given exponent and mantissa bits.

    Mantissas round to nearest even; exponents out of the narrower range give inf or signed zero.
    """
    jnp = _jnp()
    x = jnp.asarray(operand)
    if x.dtype.kind != "f":
        raise TypeError(
            f"reduce_precision does not accept dtype {x.dtype.name}. Accepted dtypes are subtypes of floating."
        )
    exponent_bits, mantissa_bits = int(exponent_bits), int(mantissa_bits)
    if exponent_bits < 1 or mantissa_bits < 0:
        raise ValueError(
            f"reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got {exponent_bits}, {mantissa_bits}"
        )
    src_exp, src_man, uname = _FLOAT_LAYOUT[x.dtype.name]
    u = dtypes.canonicalize(uname)
    nbits = u.itemsize * 8

    def c(v):
        return jnp.asarray(v, u)

    bits = lax.bitcast_convert_type(x, u)
    if mantissa_bits < src_man:
        drop = src_man - mantissa_bits
        last = 1 << drop
        bias = ((bits & c(last)) >> c(drop)) + c((last >> 1) - 1)
        bits = (bits + bias) & c(((1 << nbits) - 1) ^ (last - 1))
    if exponent_bits < src_exp:
        exp_mask = ((1 << src_exp) - 1) << src_man
        src_bias = (1 << (src_exp - 1)) - 1
        new_bias = (1 << (exponent_bits - 1)) - 1
        exponent = bits & c(exp_mask)
        sign = bits & c(1 << (nbits - 1))
        over = exponent > c((src_bias + new_bias) << src_man)
        under = exponent <= c((src_bias - new_bias) << src_man)
        bits = jnp.where(over, sign | c(exp_mask), jnp.where(under, sign, bits))
    out = lax.bitcast_convert_type(bits, x.dtype)
    if mantissa_bits < src_man:
        out = jnp.where(jnp.isnan(x), x, out)
    return out


# --- reductions and barriers ---------------------------------------------------------------------


def reduce(
    operands: Any, init_values: Any, computation: Callable, dimensions: Sequence[int], out_sharding: Any = None
) -> Any:
    """Reduce operands over `dimensions` with a binary computation and its identity init_values.

    operands and init_values may be matching pytrees (a variadic reduction); computation maps
    (accumulators, values) -> accumulators and must be associative and elementwise (it is
    applied to whole arrays, pairwise in a balanced tree).
    """
    jnp = _jnp()
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(f"reduce: operands {tree} and init_values {init_tree} must have the same structure")
    ops = [jnp.asarray(o) for o in flat_ops]
    shape = ops[0].shape
    if builtins.any(o.shape != shape for o in ops):
        raise ValueError("reduce: all operands must have the same shape")
    nd = len(shape)
    dims = sorted({d % nd for d in dimensions}) if nd else []
    keep = [d for d in range(nd) if d not in dims]
    n = math.prod(shape[d] for d in dims)
    xs = [lax.reshape(lax.transpose(o, tuple(dims + keep)), (n,) + tuple(shape[d] for d in keep)) for o in ops]
    inits = [jnp.asarray(i, dtype=o.dtype) for i, o in zip(flat_init, ops)]

    def combine(a: list, b: list) -> list:
        out = computation(tree_unflatten(tree, a), tree_unflatten(tree, b))
        return tree_flatten(out)[0]

    while n > 1:
        h = n // 2
        pairs = combine([x[:h] for x in xs], [x[h : 2 * h] for x in xs])
        xs = [lax.concatenate([p, x[2 * h :]], 0) if n % 2 else p for p, x in zip(pairs, xs)]
        n = h + n % 2
    rest = tuple(shape[d] for d in keep)
    if n == 0:
        res = [lax.full(rest, i, i.dtype) for i in inits]
    else:
        res = combine([lax.broadcast(i, rest) for i in inits], [x[0] for x in xs])
    res = [lax.convert_element_type(r, o.dtype) for r, o in zip(res, ops)]
    return tree_unflatten(tree, res)


def optimization_barrier(operand: Any, /) -> Any:
    """Identity on a pytree of arrays (pyjax does not reorder across it; nothing to prevent)."""
    from pyjax.core.pytree import tree_map

    jnp = _jnp()
    return tree_map(lambda x: x if isinstance(x, core.Tracer) else jnp.asarray(x), operand)


def platform_dependent(*args: Any, default: Callable | None = None, **per_platform: Callable) -> Any:
    """Call the function registered for the current default platform (cpu, wasm, webgpu), else default."""
    from pyjax.runtime.device import default_backend

    fn = per_platform.get(default_backend(), default)
    if fn is None:
        raise NotImplementedError(
            f"platform_dependent: no implementation for platform {default_backend()!r} and no default; "
            f"given: {sorted(per_platform)}"
        )
    return fn(*args)


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> list:
    """The k largest values along reduction_dimension and their indices (exact in pyjax)."""
    return _top_k_along(operand, k, reduction_dimension, largest=True)


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> list:
    """The k smallest values along reduction_dimension and their indices (exact in pyjax)."""
    return _top_k_along(operand, k, reduction_dimension, largest=False)


def _top_k_along(operand, k, axis, largest: bool):
    from pyjax.lax.sorting import top_k

    jnp = _jnp()
    x = jnp.asarray(operand)
    axis = axis % x.ndim
    moved = jnp.moveaxis(x, axis, -1)
    vals, idx = top_k(moved if largest else -moved, int(k))
    if not largest:
        vals = -vals
    return [jnp.moveaxis(vals, -1, axis), jnp.moveaxis(idx, -1, axis)]
