"""pyjax.scipy: JAX's scipy-compatible modules. Each loads on first use (as JAX's do), which keeps
`import pyjax` fast in the browser."""

import importlib

_SUBMODULES = (
    "cluster",
    "fft",
    "integrate",
    "interpolate",
    "linalg",
    "ndimage",
    "optimize",
    "signal",
    "sparse",
    "spatial",
    "special",
    "stats",
)


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"pyjax.scipy.{name}")
    raise AttributeError(f"module 'pyjax.scipy' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(_SUBMODULES))
