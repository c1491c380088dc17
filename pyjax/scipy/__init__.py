"""pyjax.scipy: JAX's scipy API (jax.scipy)."""
