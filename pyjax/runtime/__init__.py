"""runtime layer: concrete arrays, devices, eager execution and compiled programs."""

from pyjax.runtime import execute as _execute  # noqa: F401  (installs core.executor)
from pyjax.runtime.array import Array, Buffer  # noqa: F401
