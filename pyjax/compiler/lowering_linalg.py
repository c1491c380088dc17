"""Lowering rules for the linalg primitives (registered into lowering.rules by name).

`cholesky` and `triangular_solve` are lowered in lowering.py; `lu` (three outputs: the packed
factors, LAPACK-style pivots and the row permutation) is a Routine of the same name.
"""

from __future__ import annotations

from pyjax.compiler import lowering
from pyjax.compiler.ir import Routine
from pyjax.core import dtypes
from pyjax.core.core import ShapedArray


def _lu(ctx, x):
    m, n = x.shape[-2:]
    batch = x.shape[:-2]
    out_avals = (
        ShapedArray(x.shape, x.dtype),
        ShapedArray(batch + (min(m, n),), dtypes.int32),
        ShapedArray(batch + (m,), dtypes.int32),
    )
    return ctx.routine(Routine("lu", {}, (ShapedArray(x.shape, x.dtype),), out_avals), [x])


lowering.rules["lu"] = _lu
