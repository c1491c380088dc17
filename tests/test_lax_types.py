"""The small lax types (Precision, DotAlgorithm, DotAlgorithmPreset, ...; pyjax/lax/types.py) against
real JAX.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
from tests.jax_compare import check

rng = np.random.default_rng(7)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


TOL = dict(rtol=1e-4, atol=1e-4)


def test_precision_types(backend):
    x, y = _r(3, 4), _r(4, 2)
    for name in ("DEFAULT", "F32_F32_F32", "BF16_BF16_F32"):
        check(lambda jx, jnp, x, y: jnp.dot(x, y, precision=getattr(jx.lax.DotAlgorithmPreset, name)), x, y, **TOL)
    # JAX's CPU backend rejects explicit DotAlgorithms; pyjax accepts and ignores them
    alg = pyjax.lax.DotAlgorithm("float32", "float32", "float32")
    np.testing.assert_allclose(np.asarray(pyjax.lax.dot(x, y, precision=alg)), x @ y, **TOL)
    for t in jax.lax.DotAlgorithmPreset:
        p = getattr(pyjax.lax.DotAlgorithmPreset, t.name)
        assert p.value == t.value and str(p) == str(t) and repr(p) == repr(t)
    for t in jax.lax.RandomAlgorithm:
        assert int(getattr(pyjax.lax.RandomAlgorithm, t.name)) == int(t)
    for t in jax.lax.AccuracyMode:
        assert getattr(pyjax.lax.AccuracyMode, t.name).value == t.value
    assert pyjax.lax.DotAlgorithm("f32", "f32", "f32")._fields == jax.lax.DotAlgorithm._fields
    assert pyjax.lax.Tolerance(atol=1e-3).atol == 1e-3
    with pytest.raises(ValueError):
        pyjax.lax.Tolerance()
    assert pyjax.lax.DotDimensionNumbers is not None and pyjax.lax.PrecisionLike is not None
