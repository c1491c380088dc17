"""Primitives JAX exports that pyjax writes as compositions of its own ops: clamp_p, conj_p,
igamma_p, zeta_p, top_k_p, split_p, fft_p, ... (the table _DECOMPOSITIONS, with JAX's parameters).

lax's functions do not bind them: they bind the decomposition, which jit fuses. Binding one
directly (interpreters of jaxprs, custom rules written against JAX's primitives) runs its
decomposition eagerly, stages one equation under JAX's name, and is differentiated and batched by
transforming the decomposition; under jit the equation runs on the host (runtime/control.py), as
a user primitive does. Complex operands run the decomposition inline.
"""

from __future__ import annotations

import functools

from pyjax.core import core
from pyjax.interpreters import ad, batching, staging
from pyjax.runtime import control


def _lax():
    """The public pyjax.lax (the decompositions call its functions, wherever their modules put them)."""
    import pyjax.lax

    return pyjax.lax


def _top_k(x, *, k, axis=-1):
    nd = core.get_aval(x).ndim
    axis %= nd
    if axis == nd - 1:
        return _lax().top_k(x, k)
    moved = _lax().transpose(x, tuple(d for d in range(nd) if d != axis) + (axis,))
    back = tuple(range(axis)) + (nd - 1,) + tuple(range(axis, nd - 1))
    return [_lax().transpose(o, back) for o in _lax().top_k(moved, k)]


def _call(fn_name: str, *param_names: str):
    """A decomposition calling pyjax.lax.<fn_name>(*operands, *params in this order)."""
    return lambda *xs, **params: getattr(_lax(), fn_name)(*xs, *(params[n] for n in param_names))


# name -> (decomposition taking the operands and JAX's params, multiple results)
_DECOMPOSITIONS = {
    "clamp": (_call("clamp"), False),
    "conj": (lambda x, input_dtype=None: _lax().conj(x), False),
    **{
        n: (_call(n), False)
        for n in ("igamma", "igammac", "igamma_grad_a", "polygamma", "zeta", "bessel_i0e", "bessel_i1e", "mulhi")
    },
    "regularized_incomplete_beta": (_call("betainc"), False),
    "reduce_precision": (_call("reduce_precision", "exponent_bits", "mantissa_bits"), False),
    "top_k": (_top_k, True),
    "squeeze": (_call("squeeze", "dimensions"), False),
    "split": (lambda x, sizes, axis=0: _lax().split(x, sizes, axis), True),
    "tile": (_call("tile", "reps"), False),
    "stack": (lambda *xs, axis=0: _lax().stack(xs, axis), False),
    "unstack": (lambda x, axis=0: _lax().unstack(x, axis), True),
    "fft": (_call("fft", "fft_type", "fft_lengths"), False),
    "optimization_barrier": (lambda *xs: _lax().optimization_barrier(xs), True),
}


def _make(name: str, fn, multi: bool) -> core.Primitive:
    p = core.MultiPrimitive(name) if multi else core.Primitive(name)

    def flat(*args, **params):
        out = fn(*args, **params)
        return list(out) if multi else [out]

    p.impl = flat if multi else fn
    p.complex_rule = p.impl

    def abstract_eval(*avals, **params):
        jaxpr, _ = staging.trace_to_jaxpr(functools.partial(flat, **params), list(avals))
        outs = [o.aval for o in jaxpr.outs]
        return outs if multi else outs[0]

    def jvp(primals, tangents, **params):
        outs, touts = ad.jvp_flat(functools.partial(flat, **params), list(primals), list(tangents))
        return (outs, touts) if multi else (outs[0], touts[0])

    def batch(size, vals, dims, **params):
        outs, odims = batching.vmap_flat(functools.partial(flat, **params), size, list(dims), list(vals))
        return (outs, odims) if multi else (outs[0], odims[0])

    p.abstract_eval = abstract_eval
    ad.jvp_rules[p] = jvp
    batching.batch_rules[p] = batch
    control.register_host_primitive(name, lambda arrays, **params: flat(*arrays, **params))
    return p


for _name, (_fn, _multi) in _DECOMPOSITIONS.items():
    globals()[f"{_name}_p"] = _make(_name, _fn, _multi)

__all__ = [f"{n}_p" for n in _DECOMPOSITIONS]
