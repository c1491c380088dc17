"""jax._src.xla_bridge under alias_jax: pyjax starts no XLA backends, so `_backends` stays empty (chex's
set_n_cpu_devices reads it to see whether it is too late to ask XLA for more CPU devices)."""

_backends: dict = {}
