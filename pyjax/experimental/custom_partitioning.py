"""pyjax.experimental.custom_partitioning: a function with user rules for partitioning it across devices.

The rules (def_partition's callbacks, or a Shardy sharding rule) apply when XLA splits the function over
several devices; pyjax has one device, so calls run the function itself, which is what JAX computes there too.
The rule objects keep what they are given, so code that builds them runs unchanged.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ArrayMapping", "BATCHING", "CompoundFactor", "SdyShardingRule", "custom_partitioning"]

BATCHING = "…"  # JAX's marker for batching dimensions in a sharding rule


class CompoundFactor(tuple):
    """Several factors that together make one dimension of a sharding rule."""

    def __new__(cls, *factors):
        return super().__new__(cls, factors)


class ArrayMapping(tuple):
    """The factors of each dimension of one operand or result in a sharding rule."""

    def __new__(cls, *dim_mappings):
        return super().__new__(cls, dim_mappings)


class SdyShardingRule:
    """A Shardy sharding rule: factor mappings of the operands and results (kept, unused on one device)."""

    def __init__(
        self,
        operand_mappings,
        result_mappings,
        *,
        reduction_factors=(),
        need_replication_factors=(),
        permutation_factors=(),
        **factor_sizes,
    ):
        self.operand_mappings = tuple(operand_mappings)
        self.result_mappings = tuple(result_mappings)
        self.reduction_factors = tuple(reduction_factors)
        self.need_replication_factors = tuple(need_replication_factors)
        self.permutation_factors = tuple(permutation_factors)
        self.factor_sizes = factor_sizes

    def __str__(self) -> str:
        return f"SdyShardingRule({self.operand_mappings}, {self.result_mappings}, {self.factor_sizes})"


class custom_partitioning:  # noqa: N801  (JAX's name)
    """fun with custom partitioning rules; called, it runs fun (one device: nothing to partition)."""

    def __init__(self, fun: Callable, static_argnums=()):
        self.fun = fun
        self.static_argnums = tuple(static_argnums)
        self.partition = self.infer_sharding_from_operands = self.propagate_user_sharding = None
        self.sharding_rule = None
        self.__wrapped__ = fun
        self.__name__ = getattr(fun, "__name__", "custom_partitioning")
        self.__doc__ = getattr(fun, "__doc__", None)

    def def_partition(
        self,
        partition,
        infer_sharding_from_operands=None,
        propagate_user_sharding=None,
        decode_shardings=True,
        sharding_rule=None,
        *,
        reduction_factors=(),
        need_replication_factors=(),
        permutation_factors=(),
        **factor_sizes,
    ):
        """Record the partitioning callbacks and sharding rule (a string rule or an SdyShardingRule)."""
        self.partition = partition
        self.infer_sharding_from_operands = infer_sharding_from_operands
        self.propagate_user_sharding = propagate_user_sharding
        self.sharding_rule = sharding_rule
        return partition

    def __call__(self, *args, **kwargs):
        return self.fun(*args, **kwargs)
