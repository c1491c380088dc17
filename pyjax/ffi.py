"""jax.ffi: calls into native (C/C++/CUDA) code registered with XLA. pyjax has no XLA and, in a browser tab,
no native code to call, so every entry point raises NotImplementedError saying so (use pure_callback to
call Python, which runs everywhere pyjax does)."""

from __future__ import annotations

from typing import Any

_WHY = (
    "pyjax has no XLA custom calls and no native code in a browser tab: jax.ffi is not supported "
    "(jax.pure_callback calls Python from traced code)"
)


def _unsupported(name: str):
    def fn(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"jax.ffi.{name}: {_WHY}")

    fn.__name__ = name
    fn.__doc__ = f"Not supported: {_WHY}."
    return fn


# every jax.ffi entry point, each a stub that raises
_ENTRY_POINTS = (
    "build_ffi_lowering_function",
    "ffi_call",
    "ffi_lowering",
    "include_dir",
    "pycapsule",
    "register_ffi_target",
    "register_ffi_target_as_batch_partitionable",
    "register_ffi_type",
    "register_ffi_type_id",
)
globals().update({name: _unsupported(name) for name in _ENTRY_POINTS})
__all__ = list(_ENTRY_POINTS)
