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
from pyjax.lax.custom_solve import custom_linear_solve, custom_root, linear_solve_p  # noqa: F401,E402
from pyjax.lax.gather_scatter import *  # noqa: F401,F403,E402
from pyjax.lax.complex import complex, complex_p, conj, imag, imag_p, real, real_p  # noqa: F401,E402
from pyjax.sharding import with_sharding_constraint  # noqa: F401,E402
from pyjax.lax.types import *  # noqa: F401,F403,E402
from pyjax.lax.fft import *  # noqa: F401,F403,E402
from pyjax.lax.ragged import *  # noqa: F401,F403,E402
from pyjax.lax.rng import *  # noqa: F401,F403,E402
from pyjax.lax.scaled_dot import scaled_dot  # noqa: F401,E402
from pyjax.lax.tokens import *  # noqa: F401,F403,E402
from pyjax.lax.lifting import *  # noqa: F401,F403,E402
import functools as _functools  # noqa: E402

from pyjax.lax import bits as _bits  # noqa: E402
from pyjax.lax import decomposed as _decomposed  # noqa: E402


# JAX's primitives that pyjax composes from its own ops (lax/decomposed.py): name -> (the public
# function, by name, or a meaning with JAX's operands and params; multiple results). lax's
# functions bind their decompositions; these serve direct binds.
_ns = globals()
globals().update(
    _decomposed.make_table(
        {
            **{
                n: (n, False)
                for n in (
                    "clamp igamma igammac igamma_grad_a polygamma zeta bessel_i0e bessel_i1e "
                    "reduce_precision mulhi squeeze tile fft"
                ).split()
            },
            "conj": (lambda x, input_dtype=None: _ns["conj"](x), False),
            "regularized_incomplete_beta": ("betainc", False),
            "top_k": (
                _functools.partial(_decomposed.top_k_along, top_k=_ns["top_k"], transpose=_ns["transpose"]),
                True,
            ),
            "split": ("split", True),
            "stack": (lambda *xs, axis=0: _ns["stack"](xs, axis), False),
            "unstack": ("unstack", True),
            "optimization_barrier": (lambda *xs: _ns["optimization_barrier"](xs), True),
            **{
                f"scatter-{op}": (_decomposed.scatter_meaning(_ns[f"scatter_{op}"]), False)
                for op in ("add", "sub", "mul", "min", "max")
            },
            "reduce": (_decomposed.reduce_meaning(_ns["reduce"]), True),
            "reduce_window": (_decomposed.reduce_window_meaning(_ns["reduce_window"]), True),
            "stage": (lambda x: x, False),
            "dce_sink": (lambda *xs, prevent_mlir_dce=False: [], True),
            "approx_top_k": (_decomposed.approx_top_k_meaning(_ns["approx_max_k"], _ns["approx_min_k"]), True),
            **{f"{d}_to": (_functools.partial(_bits.total_order_compare, d), False) for d in ("eq", "le", "lt")},
            "sharding_constraint": (lambda x, **_: x, False),
            "device_put": (_decomposed.device_put_meaning, True),
        },
        _ns,
    )
)
