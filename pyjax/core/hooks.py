"""The few library functions that lower layers call, registered by the library at import.

core, interpreters and runtime must not import pyjax.lax or pyjax.numpy (imports point down,
tests/test_layers.py), yet a few corners need an array op: a scalar type called as a
constructor (`jnp.float32(1)`), vmap moving a batch axis, the runtime stacking rows without a
device copy or making a complex jaxpr real. pyjax.lax and pyjax.numpy fill this table when
they are imported, so the dependency points down and nothing is patched.
"""

from __future__ import annotations

from collections.abc import Callable

# name -> function: asarray (numpy); transpose, broadcast_in_dim, reshape, concatenate, full (lax:
# full makes ad's symbolic zeros concrete);
# aval_sharding (pyjax.sharding: what jax.typeof(x).sharding answers);
# physicalize (lax.complex: a jaxpr over complex values as one over real pairs)
# eig, schur (numpy.linalg: the Schur QR iterations behind lax.linalg.eig/schur, written with numpy ops)
# materialize, program_plan, run_host (runtime.execute, .plans, .control: the runtime's modules stack
# array < execute < plans < control, and three calls recurse upwards: an Array reads a view through a
# contiguous copy, a program runs through its plan and runs its host steps, which run programs again)
array_ops: dict[str, Callable] = {}


# Operators, methods and properties of arrays and tracers (x + y, x[i], x.sum(), x.T):
# pyjax.numpy fills these for the names core.ArrayMethods declares (Tracer's and Array's base).
methods: dict[str, Callable] = {}
properties: dict[str, Callable] = {}


def register(**fns: Callable) -> None:
    """Lend functions of an upper layer to the lower ones (called once at the library's import)."""
    array_ops.update(fns)


def op(name: str) -> Callable:
    """The registered function `name`; a clear error when the library was never imported."""
    try:
        return array_ops[name]
    except KeyError:
        raise RuntimeError(f"pyjax: {name!r} is not registered yet: import pyjax first") from None
