"""What `jax.interpreters` resolves to under alias_jax: the rule tables of custom primitives (ad, batching, mlir) and partial_eval."""

from pyjax.extend.interpreters import ad, batching, mlir, partial_eval  # noqa: F401

__all__ = ["ad", "batching", "mlir", "partial_eval"]
