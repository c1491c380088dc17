"""Global flags, JAX-style: `pyjax.config.update("jax_enable_x64", True)`."""

from __future__ import annotations

import os

PRNG_IMPLS = ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32")


# The flags' defaults (set as attributes of the Config; environment-dependent ones in __init__).
DEFAULTS = {
    "jax_debug_nans": False,
    "jax_disable_jit": False,
    # Options JAX programs set that pyjax records without acting on them.
    "jax_debug_infs": False,
    "jax_log_compiles": False,
    "jax_check_tracer_leaks": False,
    "jax_explain_cache_misses": False,
    "jax_enable_checks": False,
    "jax_default_matmul_precision": None,
    "jax_numpy_dtype_promotion": "standard",
    "jax_numpy_rank_promotion": "allow",
    "jax_transfer_guard": "allow",
    "jax_transfer_guard_host_to_device": "allow",
    "jax_transfer_guard_device_to_host": "allow",
    "jax_transfer_guard_device_to_device": "allow",
    "jax_no_tracing": False,  # a jit that has to trace raises
    "jax_no_execution": False,  # running a jitted program raises
    "jax_thread_guard": False,
    "jax_softmax_custom_jvp": False,
    "jax_default_prng_impl": "threefry2x32",
    "jax_enable_custom_prng": False,
    "jax_legacy_prng_key": "allow",
    "jax_threefry_partitionable": True,
    "jax_debug_key_reuse": False,
    "jax_allow_f16_reductions": False,
    "jax_array_garbage_collection_guard": None,
    "jax_auto_pcast": True,
    "jax2tf_associative_scan_reductions": False,
    "jax_remove_size_one_mesh_axis_from_type": False,
}


class Config:
    """Flags read on the hot path are plain attributes; update() validates names."""

    def __init__(self):
        self.jax_enable_x64 = os.environ.get("JAX_ENABLE_X64", "").lower() in ("1", "true")
        self.jax_platforms = os.environ.get("PYJAX_PLATFORMS") or os.environ.get("JAX_PLATFORMS", "")
        self.__dict__.update(DEFAULTS)
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
