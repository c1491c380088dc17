"""jax.extend.core.primitives: lax's primitive objects by their JAX names (add_p, dot_general_p, ...)."""

from __future__ import annotations

import sys

import pyjax.lax  # noqa: F401  (loads lax's modules)
from pyjax.core import core as _core

# every `<name>_p` Primitive defined by a module of pyjax.lax
_found: dict = {}
for _name, _mod in sorted(sys.modules.items()):
    if _name == "pyjax.lax" or _name.startswith("pyjax.lax."):
        for _k, _v in vars(_mod).items():
            if _k.endswith("_p") and len(_k) > 2 and isinstance(_v, _core.Primitive):
                _found.setdefault(_k, _v)
globals().update(_found)
__all__ = sorted(_found)
