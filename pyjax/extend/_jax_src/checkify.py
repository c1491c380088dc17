"""jax._src.checkify under alias_jax: the public checkify module (flax.nnx imports it by this name)."""

from typing import Any

from pyjax.experimental.checkify import *  # noqa: F403
from pyjax.experimental.checkify import Error, checkify, user_checks  # noqa: F401

JaxException = ErrorCategory  # noqa: F405  (the base of the check kinds)

Out = Any  # the checkified function's output type (used in annotations)
