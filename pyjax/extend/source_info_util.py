"""pyjax.extend.source_info_util (jax.extend.source_info_util): excluding library paths from the source
locations reported to users (shares traceback_util's list: pyjax keeps one)."""

from pyjax.extend._jax_src.traceback_util import register_exclusion

__all__ = ["register_exclusion"]
