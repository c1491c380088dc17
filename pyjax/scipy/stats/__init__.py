"""pyjax.scipy.stats: distributions as submodules (norm, beta, gamma, t, poisson, ...), sem, rankdata, mode and gaussian_kde.

Each distribution other than norm is assembled from the functions in _dists.py into a real
submodule (also importable as `pyjax.scipy.stats.<name>`).
"""

import sys as _sys
import types as _types

from pyjax.scipy.stats import norm  # noqa: F401
from pyjax.scipy.stats._dists import DISTRIBUTIONS as _DISTRIBUTIONS
from pyjax.scipy.stats._kde import gaussian_kde  # noqa: F401
from pyjax.scipy.stats._ranks import ModeResult, mode, rankdata  # noqa: F401


def _make_module(name: str, fns: dict) -> _types.ModuleType:
    mod = _types.ModuleType(f"{__name__}.{name}", f"jax.scipy.stats.{name}: {', '.join(sorted(fns))}.")
    for fn_name, fn in fns.items():
        setattr(mod, fn_name, fn)
    _sys.modules[mod.__name__] = mod
    return mod


for _name, _fns in _DISTRIBUTIONS.items():
    globals()[_name] = _make_module(_name, _fns)


def sem(a, axis=0, ddof: int = 1, nan_policy: str = "propagate", *, keepdims: bool = False):
    """Standard error of the mean: std(a, ddof) / sqrt(n) along axis."""
    import pyjax.numpy as jnp

    if nan_policy not in ("propagate", "omit"):
        raise ValueError(f"nan_policy must be 'propagate' or 'omit', got {nan_policy!r}")
    a = jnp.asarray(a)
    if axis is None:
        a, axis = jnp.ravel(a), 0
    if nan_policy == "omit":
        n = jnp.sum(~jnp.isnan(a), axis=axis, keepdims=keepdims)
        return jnp.nanstd(a, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(n)
    return jnp.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(a.shape[axis])
