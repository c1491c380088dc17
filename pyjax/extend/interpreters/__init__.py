"""What `jax.interpreters` resolves to under alias_jax: the rule tables of custom primitives (ad, batching, mlir)."""

from pyjax.extend.interpreters import ad, batching, mlir  # noqa: F401

__all__ = ["ad", "batching", "mlir"]
