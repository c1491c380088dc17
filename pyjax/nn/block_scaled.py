"""jax.nn.scaled_dot_general: dot_general of operands quantized in blocks along the contracting axis
(mxfp8: float8_e4m3fn values with float8_e8m0fnu power-of-two scales; nvfp4: float4_e2m1fn values with
float8_e4m3fn scales and a global scale), then multiplied as scaled_matmul defines. JAX runs the
quantized product through cuDNN only; pyjax computes JAX's quantization and that definition everywhere.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from pyjax import numpy as jnp
from pyjax.core import dtypes
from pyjax.lax import lax

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general", "scaled_matmul"]


@dataclasses.dataclass
class BlockScaleConfig:
    """How one operand is quantized: values of data_type in blocks of block_size, one scale_type scale each."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode: str, global_scale=None) -> BlockScaleConfig:
    """The quantization config of scaled_dot_general for 'mxfp8' or 'nvfp4' (JAX's block sizes and types)."""
    if mode == "nvfp4":
        scale = jnp.ones((1,), dtypes.float32) if global_scale is None else global_scale
        return BlockScaleConfig("nvfp4", 16, jnp.float4_e2m1fn, jnp.float8_e4m3fn, scale, False)
    if mode == "mxfp8":
        return BlockScaleConfig("mxfp8", 32, jnp.float8_e4m3fn, jnp.float8_e8m0fnu, None, False)
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=dtypes.float32):
    """Block-scaled matmul (B, M, K) x (B, N, K) -> (B, M, N): each operand times its scales repeated over
    blocks of K (block size K // scales.shape[-1]), contracted over K in float32 (JAX's definition; JAX
    runs it through cuDNN only, pyjax computes that definition on every backend)."""
    lhs, rhs, ls, rs = (jnp.asarray(a) for a in (lhs, rhs, lhs_scales, rhs_scales))
    for name, a in (("lhs", lhs), ("rhs", rhs), ("lhs_scales", ls), ("rhs_scales", rs)):
        if a.ndim != 3:
            raise ValueError(f"scaled_matmul: {name} must be 3-D (B, M/N, K), got shape {a.shape}")
    k = lhs.shape[-1]
    if rhs.shape[-1] != k or k % ls.shape[-1] or k % rs.shape[-1]:
        raise ValueError(
            f"scaled_matmul: contracting dims must agree and be divisible by the scales' last dims, got "
            f"{lhs.shape}, {rhs.shape}, {ls.shape}, {rs.shape}"
        )
    f32 = dtypes.float32
    a = lhs.astype(f32) * jnp.repeat(ls.astype(f32), k // ls.shape[-1], axis=-1)
    b = rhs.astype(f32) * jnp.repeat(rs.astype(f32), k // rs.shape[-1], axis=-1)
    out = lax.dot_general(a, b, (((2,), (2,)), ((0,), (0,))), preferred_element_type=f32)
    return out.astype(preferred_element_type)


def _to_bmk(x, contracting: tuple, batch: tuple):
    """x transposed to (batch, free, contracting) axes, each group in x's order, and flattened to (B, M, K)."""
    axes = range(x.ndim)
    free = [d for d in axes if d not in contracting and d not in batch]
    order = [d for d in axes if d in batch] + free + [d for d in axes if d in contracting]
    size = lambda ds: math.prod(x.shape[d] for d in ds)  # noqa: E731
    return jnp.transpose(x, order).reshape(size(batch), size(free), size(contracting))


def _e8m0_round_up(s):
    """float8_e8m0fnu codes (uint8) of positive float32 scales s, rounded up to a power of two (JAX's rule:
    a mantissa rounds the exponent up, except at the largest exponent and for subnormals up to 2**-127)."""
    u32 = dtypes.uint32
    bits = lax.bitcast_convert_type(s.astype(dtypes.float32), u32)
    exp, mant = bits >> 23, bits & 0x7FFFFF
    up = (mant > 0) & (exp != 0xFE) & ~((exp == 0) & (mant <= 0x400000))
    return jnp.where(up, exp + 1, exp).astype(dtypes.uint8)


def _quantize(x, config: BlockScaleConfig):
    """x (B, M, K) as config.data_type values and one config.scale_type scale per block of K."""
    shape, bs = x.shape, config.block_size
    if shape[-1] < bs or shape[-1] % bs:
        raise ValueError(f"scaled_dot_general: the contracting size {shape[-1]} is not a multiple of {bs}")
    x = x.reshape(shape[:-1] + (shape[-1] // bs, bs))
    top = jnp.array(jnp.finfo(config.data_type).max, x.dtype)
    if config.mode == "mxfp8":
        codes = _e8m0_round_up(jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top)
        # code c is 2**(c - 127); code 0, a float32 zero here, stands for 2**-127 (2**-15 in float16)
        scale = lax.bitcast_convert_type(codes.astype(dtypes.uint32) << 23, dtypes.float32)
        scale = jnp.where(scale == 0, 2.0**-15 if x.dtype == dtypes.float16 else 2.0**-127, scale).astype(x.dtype)
        scales = lax.bitcast_convert_type(codes, jnp.float8_e8m0fnu)
    elif config.mode == "nvfp4":
        x = x / config.global_scale
        scale_max = jnp.array(jnp.finfo(config.scale_type).max, x.dtype)
        scales = jnp.clip(jnp.max(jnp.abs(x), axis=-1, keepdims=True) / top, 0, scale_max).astype(config.scale_type)
        scale = scales.astype(dtypes.float32)
    else:
        raise ValueError(f"Unrecognized mode: {config.mode}.")
    q = jnp.clip(x / scale, -top, top).astype(config.data_type).reshape(shape)
    return q, scales.reshape(scales.shape[:-1])


def scaled_dot_general(
    lhs, rhs, dimension_numbers, preferred_element_type=dtypes.float32, configs=None, implementation=None
):
    """dot_general with both operands quantized by configs[0] and configs[1] (see get_scaled_dot_general_config),
    as JAX defines it; without configs, lax.dot_general. (Gradients flow through the quantization as
    through its casts, not through JAX's quantized transposes.)"""
    if configs is None:
        return lax.dot_general(lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type)
    out_dtype = dtypes.dtype(preferred_element_type)
    if out_dtype.name not in ("float32", "bfloat16", "float16"):
        raise TypeError(f"Only support preferred_element_type in (f32, bf16, f16), but got {preferred_element_type}")
    lhs, rhs = jnp.asarray(lhs), jnp.asarray(rhs)
    (lc, rc), (lb, rb) = (tuple(map(tuple, pair)) for pair in dimension_numbers)
    lq, ls = _quantize(_to_bmk(lhs, lc, lb), configs[0])
    rq, rs = _quantize(_to_bmk(rhs, rc, rb), configs[1])
    nvfp4 = configs[0].mode == "nvfp4"
    out = scaled_matmul(lq, rq, ls, rs, preferred_element_type=dtypes.float32 if nvfp4 else out_dtype)
    if nvfp4:
        out = (out * (configs[0].global_scale * configs[1].global_scale)).astype(out_dtype)
    free = lambda x, c, b: [x.shape[d] for d in range(x.ndim) if d not in c and d not in b]  # noqa: E731
    return out.reshape([lhs.shape[d] for d in lb] + free(lhs, lc, lb) + free(rhs, rc, rb))
