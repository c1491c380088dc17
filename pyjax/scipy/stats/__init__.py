"""pyjax.scipy.stats: distributions (currently `norm`)."""

from pyjax.scipy.stats import norm  # noqa: F401
