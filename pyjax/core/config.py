"""Global flags, JAX-style: `pyjax.config.update("jax_enable_x64", True)`."""

from __future__ import annotations

import os

PRNG_IMPLS = ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")


class Config:
    """Flags read on the hot path are plain attributes; update() validates names."""

    def __init__(self):
        self.jax_enable_x64 = os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true")
        self.jax_platforms = os.environ.get("PYJAX_PLATFORMS") or os.environ.get("JAX_PLATFORMS", "")
        self.jax_debug_nans = False
        self.jax_disable_jit = False
        # Options JAX programs set that pyjax records without acting on them.
        self.jax_debug_infs = False
        self.jax_log_compiles = False
        self.jax_check_tracer_leaks = False
        self.jax_explain_cache_misses = False
        self.jax_enable_checks = False
        self.jax_default_matmul_precision = None
        self.jax_numpy_dtype_promotion = "standard"
        self.jax_numpy_rank_promotion = "allow"
        self.jax_transfer_guard = "allow"
        self.jax_transfer_guard_host_to_device = "allow"
        self.jax_transfer_guard_device_to_host = "allow"
        self.jax_transfer_guard_device_to_device = "allow"
        self.jax_no_tracing = False  # a jit that has to trace raises
        self.jax_no_execution = False  # running a jitted program raises
        self.jax_thread_guard = False
        self.jax_softmax_custom_jvp = False
        self.jax_default_prng_impl = "threefry2x32"
        self.jax_enable_custom_prng = False
        self.jax_legacy_prng_key = "allow"
        self.jax_threefry_partitionable = True
        self.jax_debug_key_reuse = False
        self.jax_allow_f16_reductions = False
        self.jax_array_garbage_collection_guard = None
        self.jax_auto_pcast = True
        self.jax2tf_associative_scan_reductions = False
        self.jax_remove_size_one_mesh_axis_from_type = False
        self._listeners = []

    def config_with_absl(self) -> None:
        """JAX defines its flags with absl here (test mains call it); pyjax's flags are plain attributes: a no-op."""

    def parse_flags_with_absl(self) -> None:
        """As config_with_absl: pyjax reads no absl flags."""

    def update(self, name: str, value) -> None:
        """Set a flag by name; unknown names raise like JAX."""
        if name.startswith("_") or not hasattr(self, name):
            raise AttributeError(f"Unrecognized config option: {name}")
        if name == "jax_default_prng_impl" and value not in PRNG_IMPLS:
            raise ValueError(f"new enum value must be in {list(PRNG_IMPLS)}, got {value} of type {type(value)}.")
        if name == "jax_default_prng_impl" and value != "threefry2x32":
            raise NotImplementedError(f"pyjax implements the threefry2x32 PRNG only, not {value!r}")
        setattr(self, name, value)
        for fn in self._listeners:
            fn(name, value)

    def read(self, name: str):
        return getattr(self, name)

    def on_update(self, fn) -> None:
        """Register fn(name, value) to run after each update (caches depending on flags)."""
        self._listeners.append(fn)

    @property
    def values(self) -> dict:
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}


config = Config()
