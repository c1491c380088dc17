"""What `jax._src` resolves to under alias_jax: only the few private modules libraries import at load time."""

from pyjax.extend._jax_src import compiler, xla_bridge  # noqa: F401  (read as attributes of jax._src)
