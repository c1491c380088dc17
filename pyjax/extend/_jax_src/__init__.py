"""What `jax._src` resolves to under alias_jax: only the few private modules libraries import at load time."""
