"""What `jax._src` resolves to under alias_jax: only the few private modules libraries import at load time."""

from pyjax.extend import core  # noqa: F401  (jax._src.core: `from jax._src import core` reads the attribute)
from pyjax.extend._jax_src import compiler, dispatch, dtypes, traceback_util, util, xla_bridge  # noqa: F401
