"""lax.bitcast_convert_type across widths (a wider type splits into a trailing axis, a trailing axis folds
into a wider type) and Array.view's numpy rule on top of it, against real JAX on every backend, eagerly,
under jit and vmap."""

from __future__ import annotations

import numpy as np
import pytest

from tests.jax_compare import check

F32 = np.array([1.0, -2.0, 3.5e-3, np.inf], np.float32)
U8 = np.array([[0, 0, 128, 63], [0, 0, 0, 192], [255, 255, 127, 127]], np.uint8)

CASES = {
    "f32_to_u8": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.asarray(F32), jnp.uint8),
    "u8_to_f32": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.asarray(U8), jnp.float32),
    "f32_to_i16": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.asarray(F32), jnp.int16),
    "u16_to_f32": lambda jx, jnp: jx.lax.bitcast_convert_type(
        jnp.asarray(U8.view(np.uint16).reshape(3, 2)), jnp.float32
    ),
    "i32_to_i8_scalar": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.int32(-123456), jnp.int8),
    "f16_to_u8": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.asarray(F32[:3]).astype(jnp.float16), jnp.uint8),
    "i8_to_f16": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.asarray(U8[:, :2]).astype(jnp.int8), jnp.float16),
    "same_width": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.asarray(F32), jnp.int32),
    "jit_split": lambda jx, jnp: jx.jit(lambda a: jx.lax.bitcast_convert_type(a, jnp.uint8))(jnp.asarray(F32)),
    "jit_fold": lambda jx, jnp: jx.jit(lambda a: jx.lax.bitcast_convert_type(a, jnp.float32))(jnp.asarray(U8)),
    "vmap_split": lambda jx, jnp: jx.vmap(lambda a: jx.lax.bitcast_convert_type(a, jnp.uint8))(jnp.asarray(F32)),
    "round_trip": lambda jx, jnp: jx.lax.bitcast_convert_type(
        jx.lax.bitcast_convert_type(jnp.asarray(F32), jnp.uint8), jnp.float32
    ),
    "fold_bad_axis": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.asarray(U8[:, :3]), jnp.float32),
    "bool": lambda jx, jnp: jx.lax.bitcast_convert_type(jnp.array([True]), jnp.uint8),
    "view_f32_u8": lambda jx, jnp: jnp.asarray(F32).view(jnp.uint8),
    "view_u8_f32": lambda jx, jnp: jnp.asarray(U8).view(jnp.float32),
    "view_u8_u16_rows": lambda jx, jnp: jnp.asarray(U8).view(jnp.uint16),
    "view_bad": lambda jx, jnp: jnp.ones(3, jnp.uint8).view(jnp.uint16),
    "view_0d": lambda jx, jnp: jnp.float32(1).view(jnp.uint8),
    "view_bool_u8": lambda jx, jnp: jnp.array([True, False]).view(jnp.uint8),
    "view_f32_bool": lambda jx, jnp: jnp.asarray(F32).view(jnp.bool_),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_bitcast_convert_type(backend, name):
    check(CASES[name])
