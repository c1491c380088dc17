"""jax.checkpoint / remat: values and gradients (grad, jit, hessian, jvp, vmap, closures, static_argnums)
match JAX for every policy, and reverse mode really recomputes the forward pass unless the policy saves
everything."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from tests.jax_compare import check

R = np.random.RandomState(3)
W = R.randn(3, 3).astype(np.float32)
X = R.randn(3).astype(np.float32)
POLICIES = [None, "nothing_saveable", "everything_saveable", "dots_saveable"]


def _net(jx, jnp, policy):
    pol = None if policy is None else getattr(jx.checkpoint_policies, policy)

    def layer(w, x):
        return jnp.tanh(w @ x)

    def f(w, x):
        block = jx.checkpoint(lambda y: layer(w, layer(w, y)), policy=pol)
        return jnp.sum(block(x) ** 2)

    return f


CASES = {
    "value": lambda jx, jnp, p, w, x: _net(jx, jnp, p)(w, x),
    "grad": lambda jx, jnp, p, w, x: jx.grad(_net(jx, jnp, p), argnums=(0, 1))(w, x),
    "jit_grad": lambda jx, jnp, p, w, x: jx.jit(jx.grad(_net(jx, jnp, p)))(w, x),
    "hessian": lambda jx, jnp, p, w, x: jx.hessian(_net(jx, jnp, p), argnums=1)(w, x),
    "jvp": lambda jx, jnp, p, w, x: jx.jvp(lambda w_: _net(jx, jnp, p)(w_, x), (w,), (w,)),
    "vmap_grad": lambda jx, jnp, p, w, x: jx.vmap(jx.grad(_net(jx, jnp, p)), in_axes=(None, 0))(w, jnp.stack([x, -x])),
    "remat_alias": lambda jx, jnp, p, w, x: jx.grad(lambda x_: jnp.sum(jx.remat(jnp.sin)(x_) * x_))(x),
    "static_argnums": lambda jx, jnp, p, w, x: jx.grad(
        lambda x_: jnp.sum(jx.checkpoint(lambda a, n: a**n, static_argnums=1)(x_, 3))
    )(x),
    "decorator_kwargs": lambda jx, jnp, p, w, x: jx.grad(
        lambda x_: functools.partial(jx.checkpoint, prevent_cse=False)(lambda a, *, k: jnp.sum(jnp.exp(a) * k))(
            x_, k=2.0
        )
    )(x),
}


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_checkpoint_matches_jax(backend, name, policy):
    check(lambda jx, jnp, w, x: CASES[name](jx, jnp, policy, w, x), W, X, rtol=1e-5, atol=1e-6)


def _count(jaxpr, prim: str) -> int:
    return sum(1 for e in jaxpr.eqns if e.primitive.name == prim) + sum(
        _count(v, prim) for e in jaxpr.eqns for v in e.params.values() if hasattr(v, "eqns")
    )


@pytest.mark.parametrize("policy,tanhs", [(None, 2), ("nothing_saveable", 2), ("everything_saveable", 1)])
def test_reverse_mode_recomputes_forward(policy, tanhs):
    pol = None if policy is None else getattr(pyjax.checkpoint_policies, policy)
    w = pjnp.asarray(W)
    g = pyjax.grad(lambda x: pjnp.sum(pyjax.checkpoint(lambda y: pjnp.tanh(w @ y), policy=pol)(x)))
    assert _count(pyjax.make_jaxpr(g)(pjnp.asarray(X)).jaxpr, "tanh") == tanhs


def test_checkpoint_bad_argument():
    with pytest.raises(TypeError):
        pyjax.checkpoint(3)


def test_debug_breakpoint_without_terminal_warns_and_continues():
    # pytest's stdin is not a terminal: pyjax cannot stop, so it warns and returns the token
    with pytest.warns(RuntimeWarning, match="breakpoint"):
        assert pyjax.debug.breakpoint(token=3) == 3
    with pytest.warns(RuntimeWarning, match="breakpoint"):
        out = pyjax.jit(lambda x: (pyjax.debug.breakpoint(), x * 2)[1])(pjnp.float32(2.0))
    assert float(out) == 4.0


def test_checkpoint_non_array_arguments(backend):
    def run(jx, jnp, x):
        def f(x_, flag, name, scale=1.0):
            y = jnp.sin(x_) if flag else jnp.cos(x_)
            return jnp.sum(y * scale) if name == "sum" else y

        return jx.grad(lambda x_: jx.checkpoint(f, static_argnums=(1, 2))(x_, True, "sum", scale=x_[0]))(x)

    check(run, X)
