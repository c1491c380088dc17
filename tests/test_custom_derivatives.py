"""custom_jvp / custom_vjp / checkpoint against real JAX: the custom rules are used (not the
function's own derivative) under jvp, grad, jit(grad), grad(jit), vmap of both, higher order,
nondiff_argnums, pytrees; JAX's errors."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from jax_compare import check


def close(a, b, rtol=1e-5, atol=1e-6):
    ta, tb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(ta) == len(tb)
    for x, y in zip(ta, tb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.shape == y.shape, (x.shape, y.shape)
        assert x.dtype == y.dtype, (x.dtype, y.dtype)
        np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def make_jvp(lib, np_):
    """f(x, y) = sin(x) * y whose custom jvp deliberately differs (factor 2 on x's tangent)."""

    @lib.custom_jvp
    def f(x, y):
        return np_.sin(x) * y

    @f.defjvp
    def f_jvp(primals, tangents):
        x, y = primals
        tx, ty = tangents
        return f(x, y), 2.0 * np_.cos(x) * y * tx + np_.sin(x) * ty

    return f


FP, FJ = make_jvp(pyjax, pjnp), make_jvp(jax, jnp)
X = np.array([0.5, 1.0, -2.0], np.float32)
Y = np.array([2.0, 3.0, 0.5], np.float32)


def both(fn_p, fn_j, *args):
    pa = [pjnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args]
    close(fn_p(*pa), fn_j(*args))


def test_custom_jvp_value_and_jvp(backend):
    both(FP, FJ, X, Y)
    both(
        lambda x, y: pyjax.jvp(FP, (x, y), (pjnp.ones(3), pjnp.zeros(3))),
        lambda x, y: jax.jvp(FJ, (x, y), (jnp.ones(3), jnp.zeros(3))),
        X,
        Y,
    )


def test_custom_jvp_grad_variants(backend):
    gp = pyjax.grad(lambda x, y: pjnp.sum(FP(x, y)), argnums=(0, 1))
    gj = jax.grad(lambda x, y: jnp.sum(FJ(x, y)), argnums=(0, 1))
    both(gp, gj, X, Y)
    both(pyjax.jit(gp), jax.jit(gj), X, Y)
    both(
        pyjax.grad(lambda x, y: pjnp.sum(pyjax.jit(FP)(x, y)), argnums=(0, 1)),
        jax.grad(lambda x, y: jnp.sum(jax.jit(FJ)(x, y)), argnums=(0, 1)),
        X,
        Y,
    )
    both(pyjax.vmap(pyjax.grad(FP)), jax.vmap(jax.grad(FJ)), X, Y)
    both(
        pyjax.grad(lambda x: pjnp.sum(pyjax.vmap(FP)(x, pjnp.asarray(Y)))),
        jax.grad(lambda x: jnp.sum(jax.vmap(FJ)(x, Y))),
        X,
    )
    both(pyjax.jacfwd(FP), jax.jacfwd(FJ), X, Y)
    both(pyjax.jacrev(FP), jax.jacrev(FJ), X, Y)


def test_custom_jvp_higher_order(backend):
    both(pyjax.grad(pyjax.grad(FP)), jax.grad(jax.grad(FJ)), 0.7, 1.3)
    both(pyjax.jacfwd(pyjax.grad(FP)), jax.jacfwd(jax.grad(FJ)), 0.7, 1.3)


def test_custom_jvp_vmap_and_jit_values(backend):
    both(pyjax.vmap(FP), jax.vmap(FJ), X, Y)
    both(pyjax.vmap(FP, in_axes=(0, None)), jax.vmap(FJ, in_axes=(0, None)), X, 2.0)
    both(pyjax.jit(FP), jax.jit(FJ), X, Y)
    both(
        pyjax.vmap(lambda x, y: pyjax.jvp(FP, (x, y), (1.0, 0.0))),
        jax.vmap(lambda x, y: jax.jvp(FJ, (x, y), (1.0, 0.0))),
        X,
        Y,
    )
    both(pyjax.jit(pyjax.vmap(pyjax.grad(FP))), jax.jit(jax.vmap(jax.grad(FJ))), X, Y)


def test_custom_jvp_is_staged(backend):
    jaxpr = pyjax.make_jaxpr(FP)(pjnp.asarray(X), pjnp.asarray(Y))
    assert "custom_jvp_call" in str(jaxpr)


def test_custom_jvp_closure_over_jit_tracer(backend):
    def outer(lib, np_, c, x):
        @lib.custom_jvp
        def g(x):
            return np_.sin(x) * c

        g.defjvp(lambda p, t: (g(p[0]), 3.0 * t[0] * c))
        return np_.sum(g(x))

    both(
        pyjax.jit(pyjax.grad(functools.partial(outer, pyjax, pjnp), argnums=1)),
        jax.jit(jax.grad(functools.partial(outer, jax, jnp), argnums=1)),
        2.0,
        X,
    )


def test_defjvps(backend):
    def make(lib, np_):
        @lib.custom_jvp
        def f(x, y):
            return x * y

        f.defjvps(lambda g, ans, x, y: 3.0 * g * y, None)
        return f

    fp, fj = make(pyjax, pjnp), make(jax, jnp)
    both(
        pyjax.grad(lambda x, y: pjnp.sum(fp(x, y)), argnums=(0, 1)),
        jax.grad(lambda x, y: jnp.sum(fj(x, y)), argnums=(0, 1)),
        X,
        Y,
    )
    both(lambda x, y: pyjax.jvp(fp, (x, y), (x, y)), lambda x, y: jax.jvp(fj, (x, y), (x, y)), X, Y)


def test_custom_jvp_nondiff_argnums_and_pytrees(backend):
    def make(lib, np_):
        @functools.partial(lib.custom_jvp, nondiff_argnums=(0,))
        def f(power, d):
            return {"a": d["x"] ** power, "b": d["x"] * d["y"]}

        @f.defjvp
        def f_jvp(power, primals, tangents):
            (d,), (t,) = primals, tangents
            out = f(power, d)
            return out, {"a": 10.0 * t["x"], "b": t["x"] * d["y"] + d["x"] * t["y"]}

        return f

    fp, fj = make(pyjax, pjnp), make(jax, jnp)
    dp = {"x": pjnp.asarray(X), "y": pjnp.asarray(Y)}
    dj = {"x": X, "y": Y}
    close(fp(3, dp), fj(3, dj))
    gp = pyjax.grad(lambda d: pjnp.sum(fp(2, d)["a"]) + pjnp.sum(fp(2, d)["b"]))(dp)
    gj = jax.grad(lambda d: jnp.sum(fj(2, d)["a"]) + jnp.sum(fj(2, d)["b"]))(dj)
    close(gp, gj)
    close(pyjax.jit(lambda d: fp(2, d))(dp), jax.jit(lambda d: fj(2, d))(dj))


def test_custom_jvp_kwargs(backend):
    gp = pyjax.grad(lambda x: FP(x, y=2.0))(1.0)
    gj = jax.grad(lambda x: FJ(x, y=2.0))(1.0)
    close(gp, gj)


def test_custom_jvp_errors(backend):
    @pyjax.custom_jvp
    def f(x):
        return pjnp.sin(x)

    with pytest.raises(AttributeError, match="No JVP defined"):
        f(1.0)
    f.defjvp(lambda p, t: (f(p[0]), (t[0], 1.0)))
    with pytest.raises(TypeError, match="equal container"):
        pyjax.jvp(f, (1.0,), (1.0,))
    f.defjvp(lambda p, t: (f(p[0]), pjnp.ones(3)))
    with pytest.raises(TypeError, match="shapes and dtypes"):
        pyjax.jvp(f, (1.0,), (1.0,))


# --- custom_vjp ---------------------------------------------------------------------------------


def make_vjp(lib, np_):
    @lib.custom_vjp
    def h(x, y):
        return np_.sin(x) * y

    def h_fwd(x, y):
        return h(x, y), (np_.cos(x), x, y)

    def h_bwd(res, g):
        c, x, y = res
        return 3.0 * g * c * y, g * np_.sin(x) * 0.5

    h.defvjp(h_fwd, h_bwd)
    return h


HP, HJ = make_vjp(pyjax, pjnp), make_vjp(jax, jnp)


def test_custom_vjp_variants(backend):
    both(HP, HJ, X, Y)
    gp = pyjax.grad(lambda x, y: pjnp.sum(HP(x, y)), argnums=(0, 1))
    gj = jax.grad(lambda x, y: jnp.sum(HJ(x, y)), argnums=(0, 1))
    both(gp, gj, X, Y)
    both(pyjax.jit(gp), jax.jit(gj), X, Y)
    both(
        pyjax.grad(lambda x, y: pjnp.sum(pyjax.jit(HP)(x, y)), argnums=(0, 1)),
        jax.grad(lambda x, y: jnp.sum(jax.jit(HJ)(x, y)), argnums=(0, 1)),
        X,
        Y,
    )
    both(pyjax.vmap(pyjax.grad(HP, argnums=(0, 1))), jax.vmap(jax.grad(HJ, argnums=(0, 1))), X, Y)
    both(
        pyjax.grad(lambda x: pjnp.sum(pyjax.vmap(HP, in_axes=(0, None))(x, 2.0))),
        jax.grad(lambda x: jnp.sum(jax.vmap(HJ, in_axes=(0, None))(x, 2.0))),
        X,
    )
    both(pyjax.vmap(HP), jax.vmap(HJ), X, Y)
    both(pyjax.jacrev(HP), jax.jacrev(HJ), X, Y)
    vp = pyjax.vjp(HP, pjnp.asarray(X), pjnp.asarray(Y))
    vj = jax.vjp(HJ, X, Y)
    close(vp[0], vj[0])
    close(vp[1](pjnp.ones(3)), vj[1](jnp.ones(3)))


def test_custom_vjp_nondiff_and_none_cotangent(backend):
    def make(lib, np_):
        @functools.partial(lib.custom_vjp, nondiff_argnums=(1,))
        def clip_grad(x, limit):
            return x

        def fwd(x, limit):
            return x, None

        def bwd(limit, _, g):
            return (np_.clip(g, -limit, limit),)

        clip_grad.defvjp(fwd, bwd)

        @lib.custom_vjp
        def two(x, y):
            return x * y

        two.defvjp(lambda x, y: (x * y, y), lambda y, g: (g * y, None))
        return clip_grad, two

    (cp, tp), (cj, tj) = make(pyjax, pjnp), make(jax, jnp)
    both(pyjax.grad(lambda x: pjnp.sum(cp(x * 5.0, 2.0))), jax.grad(lambda x: jnp.sum(cj(x * 5.0, 2.0))), X)
    both(
        pyjax.grad(lambda x, y: pjnp.sum(tp(x, y)), argnums=(0, 1)),
        jax.grad(lambda x, y: jnp.sum(tj(x, y)), argnums=(0, 1)),
        X,
        Y,
    )


def test_custom_vjp_errors(backend):
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        pyjax.jvp(HP, (pjnp.asarray(X), pjnp.asarray(Y)), (pjnp.ones(3), pjnp.ones(3)))

    @pyjax.custom_vjp
    def f(x):
        return pjnp.sin(x)

    f.defvjp(lambda x: (f(x), x), lambda r, g: (g, g))
    with pytest.raises(TypeError, match="Custom VJP bwd rule must produce an output"):
        pyjax.grad(f)(1.0)
    f.defvjp(lambda x: (f(x), x), lambda r, g: g)
    with pytest.raises(TypeError, match="Custom VJP bwd rule must produce an output"):
        pyjax.grad(f)(1.0)

    @pyjax.custom_vjp
    def g(x):
        return x

    with pytest.raises(AttributeError, match="No VJP defined"):
        g(1.0)


def test_custom_vjp_integer_input(backend):
    def make(lib, np_):
        @lib.custom_vjp
        def f(x, n):
            return x * n

        f.defvjp(lambda x, n: (x * n, n), lambda n, g: (g * n * 2.0, None))
        return f

    fp, fj = make(pyjax, pjnp), make(jax, jnp)
    both(pyjax.grad(lambda x: pjnp.sum(fp(x, 3))), jax.grad(lambda x: jnp.sum(fj(x, 3))), X)


# --- checkpoint -----------------------------------------------------------------------------------


def test_checkpoint_grads(backend):
    def body(np_, x):
        return np_.sin(np_.sin(x) * 2.0)

    fp = pyjax.checkpoint(functools.partial(body, pjnp))
    fj = jax.checkpoint(functools.partial(body, jnp))
    both(pyjax.grad(lambda x: pjnp.sum(fp(x))), jax.grad(lambda x: jnp.sum(fj(x))), X)
    both(
        pyjax.jit(pyjax.grad(lambda x: pjnp.sum(pyjax.remat(fp)(x)))),
        jax.jit(jax.grad(lambda x: jnp.sum(jax.remat(fj)(x)))),
        X,
    )
    dec = pyjax.checkpoint(policy=pyjax.checkpoint_policies.nothing_saveable)(functools.partial(body, pjnp))
    both(pyjax.grad(lambda x: pjnp.sum(dec(x))), jax.grad(lambda x: jnp.sum(fj(x))), X)


def _symbolic_zero_runs(jx, np_, cd) -> list:
    """defjvp/defvjp(symbolic_zeros=True): which tangents/cotangents arrive as SymbolicZero, which inputs
    are perturbed, and the derivatives."""
    seen = []

    @jx.custom_jvp
    def f(x, y):
        return x * y

    def f_jvp(p, t):
        (x, y), (tx, ty) = p, t
        seen.append(tuple(isinstance(v, cd.SymbolicZero) for v in t))
        if isinstance(tx, cd.SymbolicZero):
            return f(x, y), x * ty
        if isinstance(ty, cd.SymbolicZero):
            return f(x, y), tx * y
        return f(x, y), tx * y + x * ty

    f.defjvp(f_jvp, symbolic_zeros=True)

    @jx.custom_vjp
    def h(x, y):
        return x * y, x + y

    def h_fwd(x, y):
        seen.append((type(x).__name__, x.perturbed, y.perturbed))
        return h(x.value, y.value), (x.value, y.value)

    def h_bwd(res, ct):
        seen.append(tuple(isinstance(c, cd.SymbolicZero) for c in ct))
        (x, y), (c0, c1) = res, ct
        c0 = 0.0 if isinstance(c0, cd.SymbolicZero) else c0
        c1 = 0.0 if isinstance(c1, cd.SymbolicZero) else c1
        return c0 * y + c1, c0 * x + c1

    h.defvjp(h_fwd, h_bwd, symbolic_zeros=True)
    two, three = np_.float32(2.0), np_.float32(3.0)
    results = [
        jx.grad(f)(two, three),
        jx.jvp(lambda x: f(x, three), (two,), (np_.float32(1.0),))[1],
        jx.grad(f, argnums=(0, 1))(two, three),
        jx.grad(f, argnums=1)(two, three),
        jx.jit(jx.grad(f))(two, three),
        jx.vmap(jx.grad(f))(np_.arange(3.0), np_.ones(3)),
        jx.grad(lambda x: h(x, three)[0])(two),
        jx.grad(lambda x, y: h(x, y)[1], argnums=(0, 1))(two, three),
    ]
    return [np.asarray(r).tolist() for r in jx.tree_util.tree_leaves(results)] + seen


def test_symbolic_zeros_match_jax():
    import jax.custom_derivatives as jcd

    import pyjax.custom_derivatives as pcd

    assert _symbolic_zero_runs(pyjax, pjnp, pcd) == _symbolic_zero_runs(jax, jnp, jcd)


def _linear_call_program(j, jnp, x, y):
    cd = j.custom_derivatives
    lc = lambda r, v: cd.linear_call(lambda a, b: a * b, lambda a, ct: ct * a * 10, r, v)  # noqa: E731
    ident = lambda v: cd.linear_call(lambda _, b: b, lambda _, ct: 7.0 * jnp.ones_like(ct), (), v)  # noqa: E731
    once = j.linear_transpose(ident, y)
    return (
        lc(x, y),
        j.grad(lambda v: lc(x, v).sum())(y),
        j.jvp(lambda v: lc(x, v), (y,), (jnp.ones_like(y),)),
        j.jit(j.grad(lambda v: lc(x, v).sum()))(y),
        once(y),
        j.linear_transpose(lambda c: once(c)[0], y)(y),
    )


def test_linear_call_matches_jax(backend):
    check(_linear_call_program, np.array([2.0, 3.0], np.float32), np.array([1.0, -1.0], np.float32))


def test_zero_from_primal_closure_convert_custom_gradient_exported():
    for j in (jax, pyjax):
        z = j.custom_derivatives.zero_from_primal({"a": 1.0, "b": j.numpy.arange(3)})
        assert z["b"].dtype == j.dtypes.float0 and z["b"].shape == (3,)
        assert float(z["a"]) == 0.0 and z["a"].dtype == np.float32 and z["a"].weak_type
        assert j.custom_derivatives.closure_convert is j.closure_convert
        assert j.custom_derivatives.custom_gradient is j.custom_gradient
