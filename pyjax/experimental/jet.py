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
from pyjax.core import dtypes
from pyjax.core.core import get_aval
from pyjax.core.pytree import tree_flatten, tree_structure, tree_unflatten, treedef_is_leaf
from pyjax.lax import lax
from pyjax.lax._util import _arr

__all__ = ["jet", "jet2", "fact"]


def fact(n):
    """n! as a float (JAX's helper in this module)."""
    return float(math.factorial(int(n)))


def _path(x0, terms, t):
    """x0 + t*(c1 + t/2*(c2 + t/3*(c3 + ...))): the point at t of the path whose k-th derivative at 0 is c_k."""
    a = get_aval(x0)
    if not terms or a.dtype.kind not in "fc":
        return x0
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
    out_series = [[_like(levels[k][i], o) for k in range(1, order + 1)] for i, o in enumerate(outs)]
    if not factorial_scaled:
        out_series = [[c / fact(k) for k, c in enumerate(terms, 1)] for terms in out_series]
    out_series = [_discrete_series(o, terms, factorial_scaled) for o, terms in zip(outs, out_series)]
    return tree_unflatten(tree, outs), tree_unflatten(tree, out_series)


def _discrete_series(out, terms, factorial_scaled: bool):
    """An integer or bool output's series is zero, typed as JAX's: zeros like the output, which JAX's
    factorial scaling (a multiplication by a weakly typed float) turns into weak default floats."""
    a = get_aval(out)
    if a.dtype.kind not in "biu":
        return terms
    if factorial_scaled:
        return [lax._convert(lax.full(a.shape, 0, dtypes.default_float()), dtypes.default_float(), True)] * len(terms)
    return [lax._convert(lax.full(a.shape, 0, a.dtype), a.dtype, a.weak_type)] * len(terms)


jet2 = functools.partial(jet, factorial_scaled=False)
