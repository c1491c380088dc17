"""pyjax.experimental.jet: Taylor-mode derivatives, `jet(fun, primals, series)` with JAX's conventions.

The input series describes a path x(t) = x0 + sum_k series[k-1] t^k / k! (with factorial_scaled, the
default, series[k-1] is the k-th derivative of x at t=0; jet2 takes plain Taylor coefficients); the output
series holds the derivatives of t -> fun(x(t)) at t=0 in the same convention. Nested first-order jvp along
t computes them exactly (every primitive with a jvp rule is covered, where JAX's jet needs a Taylor rule per
primitive); the price is 2^K evaluations of fun for order K, which is small for the orders jet is used at.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

from pyjax.api import _jvp
from pyjax.core import core, dtypes
from pyjax.core.core import Tracer, get_aval
from pyjax.core.pytree import tree_flatten, tree_structure, tree_unflatten, treedef_is_leaf
from pyjax.interpreters import ad, batching
from pyjax.lax import lax
from pyjax.lax._util import _arr

__all__ = ["jet", "jet2", "fact"]


def fact(n):
    """n! as a float (JAX's helper in this module)."""
    return float(math.factorial(int(n)))


# An integer primal's series still flows, as in JAX's jet, which treats integers as reals: a conversion to
# float passes the series on (and so does arithmetic promoting the integer to float); comparisons, floor and
# the like drop it. The value stays the integer x0; along t it carries, as a float tangent, the derivatives
# of a float path: integer_path(x0, path) is x0 whose tangent is the path's. Integer arithmetic on such a
# series is a dtype error, as in JAX's jet (whose factorial scaling turns integer series into floats).
integer_path_p = core.Primitive("jet_integer_path")
integer_path_p.impl = lambda x0, path: x0
integer_path_p.def_abstract_eval(lambda x0, path: x0)


def _integer_path(x0, path):
    if isinstance(core.find_top_trace((x0, path)), ad.JVPTrace):
        return integer_path_p.bind(x0, path)
    return x0  # below the jvps along t (eagerly, or staged by jit or vmap) it is just x0


ad.jvp_rules[integer_path_p] = lambda primals, tangents: (_integer_path(*primals), tangents[1])
batching.batch_rules[integer_path_p] = lambda size, vals, dims: (
    integer_path_p.bind(*(batching.move_to(v, d, 0, size) for v, d in zip(vals, dims))),
    0,
)


def _nonzero(terms) -> bool:
    """Might a series be non-zero (a traced one might)?"""
    return any(
        isinstance(c, Tracer) or bool(lax.reduce_or(lax.ne(c, lax.full_like(c, 0)), tuple(range(c.ndim))))
        for c in terms
    )


def _path(x0, terms, t):
    """x0 + t*(c1 + t/2*(c2 + t/3*(c3 + ...))): the point at t of the path whose k-th derivative at 0 is c_k."""
    a = get_aval(x0)
    if not terms:
        return x0
    if a.dtype.kind not in "fc":
        if not _nonzero(terms):
            return x0
        f = dtypes.promote(
            [(get_aval(c).dtype, get_aval(c).weak_type) for c in terms] + [(dtypes.default_float(), True)]
        )[0]
        path = _path(lax._convert(x0, f, True), [lax._convert(c, f, True) for c in terms], t)
        return _integer_path(x0, path)
    t = lax._convert(t, a.dtype, a.weak_type)
    acc = terms[-1]
    for k in range(len(terms) - 1, 0, -1):
        acc = terms[k - 1] + t / (k + 1) * acc
    return x0 + t * acc


def _like(term, out):
    """term with out's dtype and weak type (JAX's series terms type like their primal)."""
    a = get_aval(out)
    return lax._convert(term, a.dtype, a.weak_type)


def jet(fun: Callable, primals, series, factorial_scaled: bool = True, **_):
    """(fun(*primals), series_out): the derivatives of fun along the path that primals and series describe."""
    try:
        (order,) = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not treedef_is_leaf(tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, term in enumerate(terms):
            if not treedef_is_leaf(tree_structure(term)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    primals = [_arr(x) for x in primals]
    series = [[_arr(c) for c in terms] for terms in series]
    if not factorial_scaled:
        series = [[c * fact(k) for k, c in enumerate(terms, 1)] for terms in series]
    floats = [get_aval(x).dtype for x in primals if get_aval(x).dtype.kind in "fc"]
    tdtype = dtypes.real_dtype(floats[0]) if floats else dtypes.default_float()
    tree_box = []

    def derivs0(t):
        out = fun(*[_path(x, terms, t) for x, terms in zip(primals, series)])
        leaves, tree = tree_flatten(out)
        tree_box.append(tree)
        return [leaves]

    def lift(h, t):
        outs, tangents = _jvp(h, (t,), (lax.full((), 1, tdtype),), False, False)
        return outs + [tangents[-1]]

    derivs = derivs0
    for _k in range(order):
        derivs = functools.partial(lift, derivs)
    levels = derivs(lax.full((), 0, tdtype))
    tree = tree_box[-1]
    outs = levels[0]
    out_series = [
        _series_like(o, [levels[k][i] for k in range(1, order + 1)], factorial_scaled) for i, o in enumerate(outs)
    ]
    return tree_unflatten(tree, outs), tree_unflatten(tree, out_series)


def _series_like(out, terms, factorial_scaled: bool):
    """An output's series in JAX's convention and types: like the output for a float output; for an
    integer or bool one, weak default floats under jet (JAX scales every term by a weakly typed
    factorial), the output's own type under jet2. Its series is zero unless it carries an integer
    input's series (a float tangent)."""
    if not factorial_scaled:
        terms = [c / fact(k) for k, c in enumerate(terms, 1)]
    if get_aval(out).dtype.kind in "biu" and factorial_scaled:
        return [lax._convert(c, dtypes.default_float(), True) for c in terms]
    return [_like(c, out) for c in terms]


jet2 = functools.partial(jet, factorial_scaled=False)
