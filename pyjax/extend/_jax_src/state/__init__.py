"""jax._src.state under alias_jax: the mutable-reference types libraries import at load time."""
