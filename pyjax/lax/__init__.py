"""pyjax.lax: the primitive operations (JAX's lax API)."""

from pyjax.lax.lax import *  # noqa: F401,F403
from pyjax.lax.lax import abs, max, min, pow, round  # noqa: F401
from pyjax.lax.sorting import sort, sort_key_val, top_k, sort_p  # noqa: F401
from pyjax.lax import linalg  # noqa: F401,E402
from pyjax.lax.slicing import *  # noqa: F401,F403
from pyjax.lax.control_flow import (
    associative_scan,
    cond,
    cond_p,
    fori_loop,
    map,
    scan,
    scan_p,
    switch,
    while_loop,
    while_p,
    optimization_barrier,
    platform_dependent,
    composite,
)  # noqa: F401,E501
from pyjax.lax.convolution import *  # noqa: F401,F403,E402
from pyjax.lax.windowed import *  # noqa: F401,F403,E402
from pyjax.lax.special import *  # noqa: F401,F403,E402
from pyjax.lax.shapes import *  # noqa: F401,F403,E402
from pyjax.lax.bits import *  # noqa: F401,F403,E402
from pyjax.lax.reductions import *  # noqa: F401,F403,E402
from pyjax.lax.parallel import *  # noqa: F401,F403,E402
from pyjax.lax.custom_solve import custom_linear_solve, custom_root  # noqa: F401,E402
from pyjax.lax.gather_scatter import *  # noqa: F401,F403,E402
from pyjax.lax.complex import complex, complex_p, conj, imag, imag_p, real, real_p  # noqa: F401,E402
from pyjax.sharding import with_sharding_constraint  # noqa: F401,E402
from pyjax.lax.types import *  # noqa: F401,F403,E402
from pyjax.lax.fft import *  # noqa: F401,F403,E402
from pyjax.lax.ragged import *  # noqa: F401,F403,E402
from pyjax.lax.rng import *  # noqa: F401,F403,E402
from pyjax.lax.decomposed import *  # noqa: F401,F403,E402
