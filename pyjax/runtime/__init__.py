"""runtime layer: concrete arrays, devices, eager execution and compiled programs."""

from pyjax.runtime import control as _control  # noqa: F401  (imports execute and plans: each lends its upward calls through core/hooks.py)
from pyjax.runtime import execute as _execute  # noqa: F401
from pyjax.runtime.array import Array, Buffer  # noqa: F401
