"""pyjax.extend (jax.extend): the public API for libraries that build on JAX's internals.

`core` (Primitive, ShapedArray, Jaxpr, ClosedJaxpr, Var, Literal, ...), `linear_util`, and, as
`pyjax.extend.interpreters` (what `jax.interpreters` resolves to under alias_jax), the
custom-primitive registration tables `ad.primitive_jvps`/`primitive_transposes`,
`batching.primitive_batchers` and `mlir.register_lowering`.
"""

from pyjax.extend import core, linear_util, source_info_util  # noqa: F401

__all__ = ["core", "linear_util", "source_info_util"]
