"""jax._src.tree_util under alias_jax: the public tree_util plus `_registry` (type -> node kind), which
flax.nnx reads with `type(x) in _registry` to tell pytree nodes."""

from pyjax.core.pytree import _registry  # noqa: F401
from pyjax.tree_util import *  # noqa: F403
