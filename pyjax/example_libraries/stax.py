"""pyjax.example_libraries.stax: JAX's small neural-network library of (init_fun, apply_fun) layers.

`init_fun(rng, input_shape) -> (output_shape, params)` and `apply_fun(params, inputs, **kwargs)`.
Keys are split exactly as JAX's stax splits them, and the initializers are pyjax.nn's
(bit-compatible with jax.nn's), so a model initialized from the same key has JAX's parameters.
Shapes may carry -1 for an unknown batch size, as in JAX.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any

from pyjax import lax, random
from pyjax import numpy as jnp
from pyjax.nn import (  # noqa: F401  (re-exported, as JAX's stax does)
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from pyjax.nn.initializers import glorot_normal, normal, ones, zeros

# JAX's backwards-compatible aliases
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

InitFun = Callable[..., tuple[Any, Any]]
ApplyFun = Callable[..., Any]
Layer = tuple[InitFun, ApplyFun]


def Dense(out_dim: int, W_init: Callable = glorot_normal(), b_init: Callable = normal()) -> Layer:
    """A fully-connected layer: inputs @ W + b, with W (in, out_dim) and b (out_dim,)."""

    def init_fun(rng, input_shape):
        k_w, k_b = random.split(rng)
        params = (W_init(k_w, (input_shape[-1], out_dim)), b_init(k_b, (out_dim,)))
        return tuple(input_shape[:-1]) + (out_dim,), params

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


# ----------------------------------------------------------------------------- convolutions


def _conv_layer(shape_fn: Callable, conv_fn: Callable):
    def GeneralConvLayer(
        dimension_numbers: Sequence[str],
        out_chan: int,
        filter_shape: Sequence[int],
        strides: Sequence[int] | None = None,
        padding: Any = "VALID",
        W_init: Callable | None = None,
        b_init: Callable = normal(1e-6),
    ) -> Layer:
        lhs_spec, rhs_spec, out_spec = dimension_numbers
        strides = strides or (1,) * len(filter_shape)
        W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

        def init_fun(rng, input_shape):
            spatial = iter(filter_shape)
            kernel_shape = [
                out_chan if c == "O" else input_shape[lhs_spec.index("C")] if c == "I" else next(spatial)
                for c in rhs_spec
            ]
            output_shape = shape_fn(input_shape, kernel_shape, strides, padding, dimension_numbers)
            bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
            k_w, k_b = random.split(rng)
            return output_shape, (W_init(k_w, kernel_shape), b_init(k_b, bias_shape))

        def apply_fun(params, inputs, **kwargs):
            W, b = params
            return conv_fn(inputs, W, strides, padding, dimension_numbers) + b

        return init_fun, apply_fun

    return GeneralConvLayer


def _conv(x, w, strides, padding, dn):
    ones = (1,) * len(strides)
    return lax.conv_general_dilated(x, w, strides, padding, ones, ones, dimension_numbers=dn)


def _conv_transpose(x, w, strides, padding, dn):
    return lax.conv_transpose(x, w, strides, padding, dimension_numbers=dn)


GeneralConv = _conv_layer(lax.conv_general_shape_tuple, _conv)
GeneralConv.__name__ = GeneralConv.__qualname__ = "GeneralConv"
GeneralConv.__doc__ = "A convolution layer with the given (lhs, rhs, out) dimension_numbers strings and a bias."
Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))

GeneralConvTranspose = _conv_layer(lax.conv_transpose_shape_tuple, _conv_transpose)
GeneralConvTranspose.__name__ = GeneralConvTranspose.__qualname__ = "GeneralConvTranspose"
GeneralConvTranspose.__doc__ = "A transposed-convolution layer (lax.conv_transpose) with a bias."
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


# ----------------------------------------------------------------------------- normalization


def BatchNorm(
    axis: Any = (0, 1, 2),
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
    beta_init: Callable = zeros,
    gamma_init: Callable = ones,
) -> Layer:
    """Batch normalization over `axis` (batch statistics only), with learned beta and gamma."""
    axis = (axis,) if jnp.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k_beta, k_gamma = random.split(rng)
        beta = beta_init(k_beta, shape) if center else ()
        gamma = gamma_init(k_gamma, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[expand] * z + beta[expand]
        if center:
            return z + beta[expand]
        if scale:
            return gamma[expand] * z
        return z

    return init_fun, apply_fun


# ----------------------------------------------------------------------------- elementwise


def elementwise(fun: Callable, **fun_kwargs: Any) -> Layer:
    """A parameterless layer applying fun(inputs, **fun_kwargs)."""
    init_fun = lambda rng, input_shape: (input_shape, ())
    apply_fun = lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)
    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# ----------------------------------------------------------------------------- pooling


def _window_counts(dims, strides, padding):
    """AvgPool's rescaler: divide by the number of real (unpadded) elements in each window."""

    def rescale(outputs, inputs, spec):
        non_spatial = (0, inputs.ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(n for i, n in enumerate(inputs.shape) if i not in non_spatial)
        counts = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.0, lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts

    return rescale


def _pooling_layer(reducer: Callable, init_val: float, rescaler: Callable | None = None):
    def PoolingLayer(
        window_shape: Sequence[int],
        strides: Sequence[int] | None = None,
        padding: Any = "VALID",
        spec: str | None = None,
    ) -> Layer:
        """A pooling layer over the spatial axes of NHWC inputs (or of the layout `spec`)."""
        window_shape = tuple(window_shape)
        strides = tuple(strides or (1,) * len(window_shape))
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial = (0, len(window_shape) + 1) if spec is None else (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones = (1,) * len(window_shape)
            return lax.reduce_window_shape_tuple(input_shape, window_shape, strides, pads, ones, ones), ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _window_counts)


# ----------------------------------------------------------------------------- shape layers


def _flatten() -> Layer:
    def init_fun(rng, input_shape):
        return (input_shape[0], math.prod(input_shape[1:])), ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.reshape(inputs, (inputs.shape[0], -1))

    return init_fun, apply_fun


Flatten = _flatten()  # a layer (not a constructor), as in JAX: flattens all but the leading axis
Identity = (lambda rng, input_shape: (input_shape, ()), lambda params, inputs, **kwargs: inputs)


def FanOut(num: int) -> Layer:
    """A layer copying its input into a list of `num` outputs (for use with parallel)."""
    init_fun = lambda rng, input_shape: ([input_shape] * num, ())
    apply_fun = lambda params, inputs, **kwargs: [inputs] * num
    return init_fun, apply_fun


# a layer summing a sequence of inputs of one shape
FanInSum = (lambda rng, input_shape: (input_shape[0], ()), lambda params, inputs, **kwargs: sum(inputs))


def FanInConcat(axis: int = -1) -> Layer:
    """A layer concatenating a sequence of inputs along `axis`."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (size,) + first[ax + 1 :], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def Dropout(rate: float, mode: str = "train") -> Layer:
    """Dropout keeping each element with probability `rate` (JAX's convention) in mode 'train'.

    apply_fun needs a PRNG key as the keyword `rng`; any other mode is the identity."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
                "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` "
                "where `rng` is a PRNG key (e.g. from `jax.random.key`)."
            )
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


# ----------------------------------------------------------------------------- combinators


def _layer_rngs(kwargs: dict, n: int) -> Sequence:
    """One key per layer, split off the `rng` popped from an apply_fun's kwargs (None each without one)."""
    rng = kwargs.pop("rng", None)
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers: Layer) -> Layer:
    """Compose layers in sequence; each gets its own key split off the incoming one."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, p = init(layer_rng, input_shape)
            params.append(p)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, len(layers))
        for fun, p, r in zip(apply_funs, params, rngs):
            inputs = fun(p, inputs, rng=r, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers: Layer) -> Layer:
    """Apply layers side by side, the i-th to the i-th of a sequence of inputs (see FanOut, FanInSum)."""
    init_funs, apply_funs = zip(*layers)

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        results = [init(r, shape) for init, r, shape in zip(init_funs, rngs, input_shape)]
        # JAX returns zip(*results): unpacks to (output shapes tuple, params tuple)
        return tuple(zip(*results))

    def apply_fun(params, inputs, **kwargs):
        rngs = _layer_rngs(kwargs, len(layers))
        return [f(p, x, rng=r, **kwargs) for f, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer: Callable[[Any], Layer]) -> Layer:
    """Delay building a layer until the input shape is known: make_layer(input_shape) -> layer."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
