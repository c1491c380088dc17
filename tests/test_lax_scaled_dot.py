"""lax.scaled_dot against JAX: block scales over the contracting dimension, bfloat16 rounding, the default
and explicit dimension numbers, preferred element types and JAX's shape errors."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax

RNG = np.random.default_rng(3)


def _e8m0(x):
    """Scales that JAX's float8_e8m0fnu holds exactly (powers of two), as float32 for pyjax."""
    return np.asarray(np.asarray(x, np.float32).astype(jjnp.float8_e8m0fnu).astype(np.float32))


def test_scaled_dot_matches_jax():
    lhs, rhs = RNG.standard_normal((2, 3, 8), np.float32), RNG.standard_normal((2, 8, 4), np.float32)
    ls, rs = _e8m0(np.abs(RNG.standard_normal((2, 3, 2)))), _e8m0(np.abs(RNG.standard_normal((2, 2, 4))))
    for kw in ({}, {"preferred_element_type": np.float32}):
        want = jax.lax.scaled_dot(
            lhs, rhs, lhs_scale=ls.astype(jjnp.float8_e8m0fnu), rhs_scale=rs.astype(jjnp.float8_e8m0fnu), **kw
        )
        got = pyjax.lax.scaled_dot(lhs, rhs, lhs_scale=ls, rhs_scale=rs, **kw)
        assert str(got.dtype) == str(want.dtype) and got.shape == want.shape
        np.testing.assert_allclose(np.asarray(got, np.float32), np.asarray(want, np.float32), rtol=1e-2, atol=1e-2)
    a, b = RNG.standard_normal((4, 6), np.float32), RNG.standard_normal((5, 6), np.float32)
    dn = (((1,), (1,)), ((), ()))
    want = jax.lax.scaled_dot(a, b, dimension_numbers=dn, preferred_element_type=np.float32)
    np.testing.assert_allclose(
        pyjax.lax.scaled_dot(a, b, dimension_numbers=dn, preferred_element_type=np.float32), want, rtol=1e-5
    )
    for lib in (jax, pyjax):
        with pytest.raises(TypeError, match="must be at least 2"):
            lib.lax.scaled_dot(lhs, rhs, lhs_scale=np.ones((2, 3, 8), np.float32))
        with pytest.raises(TypeError, match="0-rank and 1-rank"):
            lib.lax.scaled_dot(np.ones(3, np.float32), np.ones(3, np.float32))
