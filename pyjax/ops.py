"""jax.ops: segment reductions (sum, prod, max, min of the rows of `data` grouped by segment id).

Each is a scatter into `num_segments` rows: ids outside [0, num_segments) are dropped (negative
ones too, unlike `.at[]` indexing), and empty segments hold the reduction's identity, as in JAX.
"""

from __future__ import annotations

from pyjax.core import dtypes

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


_UPDATE = {"sum": "add", "prod": "multiply", "max": "max", "min": "min"}  # reduction -> .at[] method


def _segment(name: str, op: str, data, segment_ids, num_segments):
    import pyjax.numpy as jnp

    data, ids = jnp.asarray(data), jnp.asarray(segment_ids)
    if not jnp.issubdtype(ids.dtype, jnp.integer):
        raise TypeError(f"{name}: segment_ids must be integers, got dtype {ids.dtype}")
    if ids.ndim != 1 or data.ndim < 1 or ids.shape[0] != data.shape[0]:
        raise ValueError(
            f"{name}: segment_ids must be one-dimensional with one id per row of data; got shapes "
            f"{ids.shape} and {data.shape}"
        )
    if num_segments is None:
        # JAX's rule; needs concrete ids (under jit it raises a concretization error)
        num_segments = int(jnp.max(ids)) + 1 if ids.shape[0] else 0
    num_segments = int(num_segments)
    if num_segments < 0:
        raise ValueError(f"{name}: num_segments must be non-negative, got {num_segments}")
    ids = jnp.where(ids < 0, num_segments, ids)  # negative ids are out of range, not from the end
    out = jnp.full((num_segments,) + data.shape[1:], dtypes.reduction_identity(op, data.dtype), data.dtype)
    return getattr(out.at[ids], _UPDATE[op])(data, mode="drop")


def _segment_function(op: str, doc: str):
    """One public segment reduction: JAX's signature (the sorting/bucket hints are accepted and
    unused, since the scatter is correct for any order), reducing with `op`."""
    name = f"segment_{op}"

    def segment(
        data,
        segment_ids,
        num_segments: int | None = None,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        bucket_size: int | None = None,
        mode=None,
    ):
        return _segment(name, op, data, segment_ids, num_segments)

    segment.__name__ = segment.__qualname__ = name
    segment.__doc__ = doc
    return segment


segment_sum = _segment_function("sum", "Sum of the rows of `data` in each segment (0 for an empty one).")
segment_prod = _segment_function("prod", "Product of the rows of `data` in each segment (1 for an empty one).")
segment_max = _segment_function(
    "max", "Maximum of the rows of `data` in each segment (-inf, or the dtype's minimum, if empty)."
)
segment_min = _segment_function(
    "min", "Minimum of the rows of `data` in each segment (inf, or the dtype's maximum, if empty)."
)
