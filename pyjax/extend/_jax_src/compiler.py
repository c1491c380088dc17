"""jax._src.compiler under alias_jax. pyjax compiles no XLA programs, so there is no `backend_compile` hook
for libraries to wrap (chex's restrict_backends checks for one and then restricts nothing)."""
