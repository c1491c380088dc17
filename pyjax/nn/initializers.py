"""pyjax.nn.initializers: JAX's parameter initializers, giving the same values for the same key.

Each factory returns `init(key, shape, dtype=...) -> Array`. Variance-scaling initializers
(glorot/xavier, he/kaiming, lecun) compute fan-in/fan-out exactly as JAX and draw from
pyjax.random, which reproduces JAX's threefry streams.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from pyjax import numpy as jnp
from pyjax import random
from pyjax.core import dtypes

__all__ = [
    "zeros",
    "ones",
    "constant",
    "uniform",
    "normal",
    "truncated_normal",
    "variance_scaling",
    "glorot_uniform",
    "glorot_normal",
    "xavier_uniform",
    "xavier_normal",
    "lecun_uniform",
    "lecun_normal",
    "he_uniform",
    "he_normal",
    "kaiming_uniform",
    "kaiming_normal",
    "orthogonal",
    "delta_orthogonal",
    "Initializer",
]

Initializer = Callable[..., Any]


def _dtype(dtype):
    return dtypes.default_float() if dtype is None else dtypes.canonicalize(dtype)


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An all-zeros array (the key is ignored)."""
    return jnp.zeros(_shape(shape), _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None) -> Any:
    """An all-ones array (the key is ignored)."""
    return jnp.ones(_shape(shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling arrays with value."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(_shape(shape), value, dtype=_dtype(dtype))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Uniform samples in [0, scale)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        d = _dtype(dtype)
        return random.uniform(key, _shape(shape), d) * jnp.array(scale, d)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """Normal samples with standard deviation stddev."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        d = _dtype(dtype)
        return random.normal(key, _shape(shape), d) * jnp.array(stddev, d)

    return init


def truncated_normal(stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0) -> Initializer:
    """Truncated normal samples in (lower, upper), scaled by stddev."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        d = _dtype(dtype)
        return random.truncated_normal(key, lower, upper, _shape(shape), d) * jnp.array(stddev, d)

    return init


def _compute_fans(shape: tuple, in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = ()) -> tuple:
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor with "
            f"default in_axis. Must be at least 2D or specify in_axis explicitly."
        )

    def size(axes):
        return shape[axes] if isinstance(axes, int) else math.prod(shape[i] for i in axes)

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def variance_scaling(
    scale: Any,
    mode: str,
    distribution: str,
    in_axis: Any = -2,
    out_axis: Any = -1,
    batch_axis: Any = (),
    dtype: Any = None,
) -> Initializer:
    """Samples with variance scale / n, n the fan-in, fan-out, their mean or their geometric mean."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        d = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=d)
        if distribution == "truncated_normal":
            stddev = jnp.sqrt(variance) / jnp.array(0.87962566103423978, d)
            return random.truncated_normal(key, -2, 2, shape, d) * stddev
        if distribution == "normal":
            return random.normal(key, shape, d) * jnp.sqrt(variance)
        if distribution == "uniform":
            return random.uniform(key, shape, d, -1) * jnp.sqrt(3 * variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def _preset(name: str, scale: float, mode: str, distribution: str) -> Callable[..., Initializer]:
    """A named variance_scaling preset with JAX's (in_axis, out_axis, batch_axis, dtype) signature."""

    def preset(in_axis: Any = -2, out_axis: Any = -1, batch_axis: Any = (), dtype: Any = None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    preset.__name__ = preset.__qualname__ = name
    preset.__doc__ = f"variance_scaling({scale}, {mode!r}, {distribution!r})."
    return preset


glorot_uniform = _preset("glorot_uniform", 1.0, "fan_avg", "uniform")
glorot_normal = _preset("glorot_normal", 1.0, "fan_avg", "truncated_normal")
lecun_uniform = _preset("lecun_uniform", 1.0, "fan_in", "uniform")
lecun_normal = _preset("lecun_normal", 1.0, "fan_in", "truncated_normal")
he_uniform = _preset("he_uniform", 2.0, "fan_in", "uniform")
he_normal = _preset("he_normal", 2.0, "fan_in", "truncated_normal")
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Matrices (reshaped to shape) with orthonormal rows or columns, times scale; needs jnp.linalg.qr."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        d = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, d)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        matrix_shape = (n_cols, n_rows) if n_rows < n_cols else (n_rows, n_cols)
        a = random.normal(key, matrix_shape, d)
        q, r = jnp.linalg.qr(a)
        q = q * jnp.sign(jnp.diag(r))
        if n_rows < n_cols:
            q = q.T
        q = jnp.reshape(
            q, tuple(s for i, s in enumerate(shape) if i != column_axis % len(shape)) + (shape[column_axis],)
        )
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, d) * q

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """Orthogonal initializer for convolution kernels: orthogonal matrix at the spatial center."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        shape = _shape(shape)
        d = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=d)(key, shape[-2:])
        w = jnp.zeros(shape, d)
        center = tuple(s // 2 for s in shape[:-2])
        return w.at[center].set(ortho)

    return init
