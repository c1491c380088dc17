"""lax.scaled_dot: dot_general of block-scaled operands, (lhs * lhs_scale) @ (rhs * rhs_scale), as JAX's
reference implementation computes it: each scale element covers a block of the contracting dimension,
operands and scales are rounded to bfloat16, the product accumulates in preferred_element_type
(bfloat16 by default). pyjax has no float8_e8m0fnu, so scales come in any float dtype; missing ones are 1.
"""

from __future__ import annotations

from typing import Any

from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax

__all__ = ["scaled_dot"]


def _check_scale(side: str, shape: tuple, scale_shape: tuple, contracting) -> None:
    for i, size in enumerate(shape):
        if i in contracting:
            if size % scale_shape[i]:
                raise TypeError(
                    f"{side} contracting dim {i} of size {size} must be divisible by its scale's dim size {scale_shape[i]}."
                )
            if size // scale_shape[i] < 2:
                raise TypeError(
                    f"The ratio of {side} contracting dim {i} to its scale's dim size ({size // scale_shape[i]}) must be at least 2."
                )
        elif scale_shape[i] != size:
            raise TypeError(f"{side} dim {i} of size {size} does not match scale dim size {scale_shape[i]}.")


def _check(lhs, rhs, lhs_scale, rhs_scale, dimension_numbers) -> None:
    (lc, rc), (lb, rb) = dimension_numbers
    ranks = {len(lhs), len(rhs), len(lhs_scale), len(rhs_scale)}
    if len(ranks) != 1:
        raise TypeError(
            f"All input tensors must have the same rank. Got lhs rank: {len(lhs)} rhs rank: {len(rhs)} "
            f"lhs_scale rank: {len(lhs_scale)} rhs_scale rank: {len(rhs_scale)}."
        )
    if len(lb) != len(rb):
        raise TypeError(f"LHS and RHS must have the same number of batch dimensions, got {len(lb)} and {len(rb)}.")
    if len(lc) != len(rc):
        raise TypeError(
            f"LHS and RHS must have the same number of contracting dimensions, got {len(lc)} and {len(rc)}."
        )
    for i, j in zip(lb, rb):
        if len({lhs[i], rhs[j], lhs_scale[i], rhs_scale[j]}) != 1:
            raise TypeError(f"All input tensors must have the same batch dimension size for batch dims ({i}, {j}).")
    for i, j in zip(lc, rc):
        if lhs[i] != rhs[j]:
            raise TypeError(
                f"LHS contracting dim {i} of size {lhs[i]} does not match RHS contracting dim {j} of size {rhs[j]}."
            )
    _check_scale("LHS", lhs, lhs_scale, lc)
    _check_scale("RHS", rhs, rhs_scale, rc)


def _expand_scale(scale, shape: tuple, contracting) -> Any:
    """Repeat each scale element over its block of every contracting dimension."""
    for i in contracting:
        s = get_aval(scale).shape
        if s[i] != shape[i]:
            block = shape[i] // s[i]
            wide = s[: i + 1] + (block,) + s[i + 1 :]
            dims = tuple(d for d in range(len(wide)) if d != i + 1)
            scale = lax.reshape(lax.broadcast_in_dim(scale, wide, dims), s[:i] + (shape[i],) + s[i + 1 :])
    return scale


def _scaled(x, scale, contracting):
    bf16 = dtypes.bfloat16
    shape = get_aval(x).shape
    if scale is None:
        return lax.convert_element_type(x, bf16)
    scale = lax.convert_element_type(_expand_scale(lax._as_array(scale), shape, contracting), bf16)
    return lax.mul(lax.convert_element_type(x, bf16), scale)


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None, preferred_element_type=None):
    """(lhs * lhs_scale) @ (rhs * rhs_scale) in preferred_element_type (bfloat16 by default), the scales
    repeated over blocks of the contracting dimensions."""
    lhs, rhs = lax._as_array(lhs), lax._as_array(rhs)
    ls, rs = get_aval(lhs).shape, get_aval(rhs).shape
    if dimension_numbers is None:
        n = len(ls)
        if n < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), (lb, rb) = dimension_numbers
    dimension_numbers = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))

    def scale_shape(s, shape, contracting):
        return (
            get_aval(lax._as_array(s)).shape
            if s is not None
            else tuple(1 if i in contracting else d for i, d in enumerate(shape))
        )

    ls_shape, rs_shape = scale_shape(lhs_scale, ls, lc), scale_shape(rhs_scale, rs, rc)
    _check(ls, rs, ls_shape, rs_shape, dimension_numbers)
    out = dtypes.canonicalize(preferred_element_type if preferred_element_type is not None else dtypes.bfloat16)
    return lax.dot_general(
        _scaled(lhs, lhs_scale, lc), _scaled(rhs, rhs_scale, rc), dimension_numbers, preferred_element_type=out
    )
