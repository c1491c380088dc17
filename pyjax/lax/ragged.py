"""ragged_dot / ragged_dot_general: grouped matmuls (mixture-of-experts code) as one masked
dot_general, so they are differentiable and batchable.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.lax import lax
from pyjax.lax._util import _arr
from pyjax.lax.types import DotDimensionNumbers, PrecisionLike

__all__ = ["RaggedDotDimensionNumbers", "ragged_dot", "ragged_dot_general"]


# --- ragged dot -----------------------------------------------------------------------------------


class RaggedDotDimensionNumbers:
    """Dimension numbers of ragged_dot_general: dot_general's, the lhs ragged dimension, the rhs group one."""

    __slots__ = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")

    def __init__(
        self,
        dot_dimension_numbers: DotDimensionNumbers,
        lhs_ragged_dimensions: Sequence[int],
        rhs_group_dimensions: Sequence[int],
    ) -> None:
        (lc, rc), (lb, rb) = dot_dimension_numbers
        ints = lambda s: tuple(operator.index(i) for i in s)  # noqa: E731
        object.__setattr__(self, "dot_dimension_numbers", ((ints(lc), ints(rc)), (ints(lb), ints(rb))))
        object.__setattr__(self, "lhs_ragged_dimensions", ints(lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions", ints(rhs_group_dimensions))

    def __setattr__(self, name, value):
        raise AttributeError("RaggedDotDimensionNumbers is immutable")

    def _key(self) -> tuple:
        return (self.dot_dimension_numbers, self.lhs_ragged_dimensions, self.rhs_group_dimensions)

    def __eq__(self, other) -> bool:
        return isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"RaggedDotDimensionNumbers(dot_dimension_numbers={self.dot_dimension_numbers}, "
            f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
            f"rhs_group_dimensions={self.rhs_group_dimensions})"
        )


_RAGGED_DOT_DN = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))


def ragged_dot(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    precision: PrecisionLike = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
) -> Any:
    """Grouped matmul: consecutive row blocks of lhs (m, k), sized by group_sizes (g,), each times
    its own rhs[i] (k, n); rows past sum(group_sizes) are zero. The core op of mixture-of-experts."""
    return ragged_dot_general(lhs, rhs, group_sizes, _RAGGED_DOT_DN, precision, preferred_element_type, group_offset)


def _group_mask(group_sizes, dims_shape: tuple, n: int):
    """Boolean (dims..., n, g): position i along a ragged axis of length n lies in group j."""
    gs = lax.convert_element_type(group_sizes, dtypes.int32)
    g = get_aval(gs).shape[-1]
    ends = lax.cumsum(gs, axis=get_aval(gs).ndim - 1)
    starts = lax.sub(ends, gs)
    nd = len(dims_shape)
    shape = dims_shape + (n, g)
    keep = tuple(range(nd)) + (nd + 1,)
    pos = lax.broadcasted_iota(dtypes.int32, shape, nd)
    lo = lax.broadcast_in_dim(starts, shape, keep)
    hi = lax.broadcast_in_dim(ends, shape, keep)
    return lax.bitwise_and(lax.ge(pos, lo), lax.lt(pos, hi))


def ragged_dot_general(
    lhs: Any,
    rhs: Any,
    group_sizes: Any,
    ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
    precision: PrecisionLike = None,
    preferred_element_type: Any = None,
    group_offset: Any = None,
) -> Any:
    """dot_general with one ragged lhs dimension split into groups by group_sizes: a non-contracting
    one (each group meets its own rhs slice along the rhs group dimension), a contracting one (one
    partial product per group, stacked in a new leading axis) or a batch one (plain dot_general)."""
    if group_offset is not None:
        raise NotImplementedError("ragged_dot: group_offset is not supported by pyjax")
    dn = ragged_dot_dimension_numbers
    lhs, rhs, group_sizes = _arr(lhs), _arr(rhs), _arr(group_sizes)
    la, ra, ga = get_aval(lhs), get_aval(rhs), get_aval(group_sizes)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    if ga.dtype.kind not in "iu":
        raise TypeError("ragged_dot_general requires that group_sizes.dtype is subtype of np.integer.")
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension.")
    r = dn.lhs_ragged_dimensions[0] % la.ndim if la.ndim else 0
    mode = "contracting" if r in lc else "batch" if r in lb else "noncontracting"
    rg = dn.rhs_group_dimensions
    if mode == "noncontracting":
        if len(rg) != 1:
            raise TypeError(
                "ragged_dot_general requires exactly one rhs group dimension when lhs ragged dimension "
                "is noncontracting."
            )
        if rg[0] in rc or rg[0] in rb:
            raise TypeError(
                "ragged_dot_general requires rhs group dimension numbers to be distinct from contracting "
                "and batch dimensions."
            )
    elif rg:
        raise TypeError(
            "ragged_dot_general requires zero group dimensions in the rhs when lhs ragged dimension is "
            "contracting or batch."
        )
    if ga.ndim < 1:
        raise TypeError("expected rank of group_sizes to be >=1.")
    g = ga.shape[-1]
    d = preferred_element_type
    if d is None and la.dtype is not ra.dtype:
        d = dtypes.promote_types(la.dtype, ra.dtype)
    if mode == "noncontracting":
        if ra.shape[rg[0]] != g:
            raise TypeError(f"expected rhs group dimension size to be {g}, got {ra.shape[rg[0]]}.")
    # dimensions of group_sizes other than g: the batch dims, then the outer dims of the ragged kind
    if mode == "batch":
        outer = [i for i in lb if i < r]
    elif mode == "contracting":
        outer = [i for i in lc if i < r]
    else:
        outer = [i for i in range(r) if i not in lc and i not in lb]
    lead = [] if mode == "batch" else list(lb)
    gs_dims = lead + outer
    if ga.ndim > 1:
        want = tuple(la.shape[i] for i in gs_dims) + (g,)
        if ga.shape != want:
            raise TypeError(f"expected group_sizes to have shape {want}, got {ga.shape}.")
    else:
        gs_dims = []
    if mode == "batch":
        # every batch element is in exactly one group; XLA computes all of them
        return lax.dot_general(lhs, rhs, dn.dot_dimension_numbers, precision, d)
    gdims_shape = tuple(la.shape[i] for i in gs_dims)
    mask = _group_mask(group_sizes, gdims_shape, la.shape[r])  # (gs dims..., n, g)
    full = la.shape + (g,)
    mask = lax.broadcast_in_dim(mask, full, tuple(gs_dims) + (r, la.ndim))
    lhs_g = lax.broadcast_in_dim(lhs, full, tuple(range(la.ndim)))
    lhs_g = lax.select(mask, lhs_g, lax.full_like(lhs_g, 0))
    if mode == "noncontracting":
        gdn = ((tuple(lc) + (la.ndim,), tuple(rc) + (rg[0],)), (tuple(lb), tuple(rb)))
        return lax.dot_general(lhs_g, rhs, gdn, precision, d)
    out = lax.dot_general(lhs_g, rhs, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb))), precision, d)
    # g is lhs's last free dimension: after the batch dims and lhs's other free dims
    n_lhs_free = la.ndim - len(lc) - len(lb)
    gpos = len(lb) + n_lhs_free
    nd = get_aval(out).ndim
    return lax.transpose(out, (gpos,) + tuple(i for i in range(nd) if i != gpos))
