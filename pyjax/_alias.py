"""pyjax.alias_jax(): `import jax` (and every `jax.X` submodule) resolves to pyjax.

Unmodified JAX code and libraries built on JAX (optax, chex, ...) then run on pyjax. A meta path
finder placed first on sys.meta_path maps each `jax.X` to `pyjax.X` when it is imported, so
submodules that pyjax loads lazily work too; the modules are pyjax's own objects (`jax.numpy is
pyjax.numpy`). Only the top-level `jax` is a thin module of its own: it forwards every attribute
to pyjax but reports the JAX release whose API pyjax follows as `__version__`, because libraries
compare `jax.__version__` to pick code paths. The real JAX cannot be in the same process: pyjax
refuses to alias once it was imported (its modules and pyjax's would mix).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types

JAX_API_VERSION = "0.10.2"  # the JAX release pyjax's API and tests follow

# jax.X whose pyjax module has another name (JAX's public module vs pyjax's internal package).
# (JAX's jax.core names are a subset of jax.extend.core's; jax.interpreters holds the custom-primitive rule tables)
_RENAMED = {"jax.core": "pyjax.extend.core", "jax.interpreters": "pyjax.extend.interpreters"}
_RENAMED["jax._src.core"] = "pyjax.extend.core"  # before jax._src: the first prefix that matches wins
_RENAMED["jax._src"] = "pyjax.extend._jax_src"  # private modules that libraries import at load time


def _target(fullname: str) -> str:
    for jax_name, pyjax_name in _RENAMED.items():
        if fullname == jax_name or fullname.startswith(jax_name + "."):
            return pyjax_name + fullname[len(jax_name) :]
    return "pyjax" + fullname[len("jax") :]


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system an already imported pyjax module; keeps that module's own spec."""

    def __init__(self, module: types.ModuleType):
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.spec  # module_from_spec overwrote it with the jax.X spec


class _JaxFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("jax."):
            return None
        name = _target(fullname)
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as e:
            if e.name is not None and (name == e.name or name.startswith(e.name + ".")):
                raise ModuleNotFoundError(
                    f"No module named {fullname!r} (pyjax.alias_jax: pyjax has no {name})", name=fullname
                ) from None
            raise
        is_package = hasattr(module, "__path__")
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=is_package)


_FINDER = _JaxFinder()


def _jax_module(pyjax_module: types.ModuleType) -> types.ModuleType:
    """The top-level `jax`: forwards attribute reads to pyjax, reports JAX's API version."""
    jax = types.ModuleType("jax", pyjax_module.__doc__)

    def __getattr__(name):
        renamed = _RENAMED.get("jax." + name)
        return importlib.import_module(renamed) if renamed else getattr(pyjax_module, name)

    def __dir__():
        return sorted(set(dir(pyjax_module)) | set(jax.__dict__))

    jax.__getattr__ = __getattr__
    jax.__dir__ = __dir__
    jax.__version__ = JAX_API_VERSION
    jax.__version_info__ = tuple(int(p) for p in JAX_API_VERSION.split("."))
    jax.__path__ = []  # a package: the finder above resolves its submodules
    jax.__file__ = pyjax_module.__file__
    jax.__spec__ = importlib.machinery.ModuleSpec("jax", None, is_package=True)
    jax.__pyjax__ = pyjax_module
    return jax


def alias_jax() -> types.ModuleType:
    """Make `import jax` and every `jax.X` resolve to pyjax in this process; returns the `jax` module.

    Call it before importing anything that imports jax. Idempotent. Raises RuntimeError when the
    real JAX is already imported (its arrays, tracers and pytrees would not mix with pyjax's).
    """
    import pyjax

    current = sys.modules.get("jax")
    if current is not None and getattr(current, "__pyjax__", None) is pyjax:
        return current
    real = sorted(n for n in sys.modules if n == "jax" or n.startswith(("jax.", "jaxlib")))
    if real:
        raise RuntimeError(
            "pyjax.alias_jax(): the real jax is already imported in this process "
            f"({', '.join(real[:3])}{', ...' if len(real) > 3 else ''}); call alias_jax() before anything imports jax"
        )
    try:  # importing jax registers ml_dtypes' numpy types (np.dtype("bfloat16")); code written for JAX relies on it
        import ml_dtypes  # noqa: F401
    except ImportError:
        pass
    jax = _jax_module(pyjax)
    sys.modules["jax"] = jax
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
    return jax
