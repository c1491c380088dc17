"""lax.custom_linear_solve and lax.custom_root: solves differentiated implicitly, as in JAX.

Built on pyjax's custom_jvp / custom_vjp (no new primitive). The values matvec (or f) closes over
are hoisted with closure_convert into explicit arguments, so they are differentiated too:

- x = solve(matvec, b) is a custom_jvp function of (consts, b) whose jvp is
  x_dot = S(b_dot - d(matvec)/d(consts) . consts_dot, evaluated at x), where S solves with `solve`;
- S is a custom_vjp function: its backward pass solves the transposed system with `transpose_solve`
  (or `solve` when symmetric). Reverse mode replays the jvp rule backwards (pyjax's custom_jvp
  transpose), so gradients flow through S's custom backward pass and never through the iterations.
- custom_root's jvp is the implicit-function theorem: a custom_linear_solve with the linearization of
  f in x at the root as matvec and the user's tangent_solve as both solves.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyjax.core import core
from pyjax.core.core import get_aval
from pyjax.core.pytree import tree_leaves, tree_map, tree_structure
from pyjax.lax.decomposed import composed_primitive

__all__ = ["custom_linear_solve", "custom_root", "linear_solve_p"]


def _api():
    from pyjax import api  # the library calls the transformations lazily (they live above it)

    return api


def _check_same_tree(what: str, a, b) -> None:
    ta, tb = tree_structure(a), tree_structure(b)
    if ta != tb:
        raise TypeError(f"{what} must have the same tree structure as b: got {ta} and {tb}")
    for x, y in zip(tree_leaves(a), tree_leaves(b)):
        ax, ay = get_aval(x), get_aval(y)
        if ax.shape != ay.shape:
            raise ValueError(f"{what} shapes must match b, got {ax.shape} and {ay.shape}")
        if ax.dtype != ay.dtype:
            raise TypeError(f"{what} dtypes must match b, got {ax.dtype.name} and {ay.dtype.name}")


def _sub(a, b):
    return tree_map(lambda u, v: u - v, a, b)


def _nondiff_closure(fn: Callable, *example_args) -> tuple[Callable, list]:
    """fn with the traced values it closes over hoisted (passed back in explicitly, so custom rules see
    their primals) and cut from differentiation: the values a user's solver closes over are constants
    of the solve (JAX ignores their tangents too)."""
    from pyjax.lax import lax

    conv, consts = _api().closure_convert(fn, *example_args)
    return conv, [lax.stop_gradient(c) for c in consts]


def _zeros(tree):
    return tree_map(lambda c: c * 0, tree)


def custom_linear_solve(
    matvec: Callable,
    b: Any,
    solve: Callable,
    transpose_solve: Callable | None = None,
    symmetric: bool = False,
    has_aux: bool = False,
) -> Any:
    """x = solve(matvec, b), differentiated implicitly: jvp and vjp solve again (transpose_solve for the
    transposed system) instead of differentiating through the solver's iterations."""
    from pyjax.custom_derivatives import custom_jvp, custom_vjp

    api = _api()
    if has_aux:
        raise NotImplementedError("pyjax: custom_linear_solve(has_aux=True) is not supported")
    b = tree_map(api._to_jax, b)
    _check_same_tree("matvec output", api.eval_shape(matvec, b), b)
    mv, consts = api.closure_convert(matvec, b)
    consts = list(consts)
    # solvers as functions of (rhs, matvec consts, their own hoisted consts)
    s_conv, s_consts = _nondiff_closure(lambda rhs, *cs: solve(lambda v: mv(v, *cs), rhs), b, *consts)
    _check_same_tree("solve() output", api.eval_shape(lambda r: s_conv(r, *consts, *s_consts), b), b)

    def vecmat(cs, example):
        return lambda ct: api.linear_transpose(lambda v: mv(v, *cs), example)(ct)[0]

    if symmetric:
        t_conv, t_consts = s_conv, s_consts
    elif transpose_solve is not None:
        t_conv, t_consts = _nondiff_closure(lambda ct, *cs: transpose_solve(vecmat(cs, ct), ct), b, *consts)
    else:
        t_conv, t_consts = None, []

    @custom_vjp
    def tangent_solve(cs, scs, tcs, rhs):
        return s_conv(rhs, *cs, *scs)

    def ts_fwd(cs, scs, tcs, rhs):
        return tangent_solve(cs, scs, tcs, rhs), (cs, scs, tcs)

    def ts_bwd(res, ct):
        cs, scs, tcs = res
        if t_conv is None:
            raise TypeError(
                "transpose_solve required for backwards mode automatic differentiation of custom_linear_solve"
            )
        return _zeros(cs), _zeros(scs), _zeros(tcs), t_conv(ct, *cs, *tcs)

    tangent_solve.defvjp(ts_fwd, ts_bwd)

    @custom_jvp
    def _solve(cs, scs, tcs, rhs):
        return s_conv(rhs, *cs, *scs)

    @_solve.defjvp
    def _solve_jvp(primals, tangents):
        cs, scs, tcs, rhs = primals
        cs_dot, rhs_dot = tangents[0], tangents[3]  # the solvers' own constants get no tangent
        x = _solve(cs, scs, tcs, rhs)
        if cs:  # the matvec's own dependence on its closed-over values
            _, mv_dot = api.jvp(lambda *c: mv(x, *c), tuple(cs), tuple(cs_dot))
            rhs_dot = _sub(rhs_dot, mv_dot)
        return x, tangent_solve(cs, scs, tcs, rhs_dot)

    return _solve(consts, s_consts, list(t_consts), b)


def custom_root(
    f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable, has_aux: bool = False
) -> Any:
    """The root solve(f, initial_guess) of f, differentiated by the implicit-function theorem: tangents
    solve the linearized system with tangent_solve(g, y) (g: the linearization of f at the root)."""
    from pyjax.custom_derivatives import custom_jvp

    api = _api()
    if has_aux:
        raise NotImplementedError("pyjax: custom_root(has_aux=True) is not supported")
    guess = tree_map(api._to_jax, initial_guess)
    fc, consts = api.closure_convert(f, guess)
    consts = list(consts)
    r_conv, r_consts = _nondiff_closure(lambda x0, *cs: solve(lambda v: fc(v, *cs), x0), guess, *consts)
    _check_same_tree("solve() output", api.eval_shape(lambda g: r_conv(g, *consts, *r_consts), guess), guess)

    @custom_jvp
    def _root(cs, rcs, x0):
        return r_conv(x0, *cs, *rcs)

    @_root.defjvp
    def _root_jvp(primals, tangents):
        cs, rcs, x0 = primals
        cs_dot = tangents[0]  # the root depends on neither the initial guess nor the solver's constants
        x = _root(cs, rcs, x0)
        if not cs:
            return x, tree_map(lambda v: v * 0, x)
        _, f_dot = api.jvp(lambda *c: fc(x, *c), tuple(cs), tuple(cs_dot))
        rhs = tree_map(lambda v: -v, f_dot)

        def linearized(t):
            return api.jvp(lambda v: fc(v, *cs), (x,), (t,))[1]

        x_dot = custom_linear_solve(linearized, rhs, solve=tangent_solve, transpose_solve=tangent_solve)
        return x, x_dot

    return _root(consts, r_consts, guess)


def _linear_solve_meaning(*args, const_lengths, jaxprs):
    """JAX's linear_solve_p (custom_linear_solve's primitive): operands are the consts of matvec, vecmat,
    solve and transpose_solve (const_lengths of each), then b's leaves; the value is `solve` applied to b."""
    counts = list(const_lengths)
    start = sum(counts[:2])
    consts, b = args[start : start + counts[2]], args[sum(counts) :]
    solve = jaxprs[2]
    return core.eval_jaxpr(getattr(solve, "jaxpr", solve), [*getattr(solve, "consts", ()), *consts, *b])


linear_solve_p = composed_primitive("custom_linear_solve", _linear_solve_meaning, multi=True)
