"""jax.experimental.jet against JAX: Taylor coefficients of elementwise, linear, reduction and matmul
functions to order 4, both coefficient conventions (jet, jet2), pytrees of outputs and JAX's errors."""

from __future__ import annotations

import jax.experimental.jet  # noqa: F401  (jax.experimental.jet is a submodule to import, as in pyjax)
import numpy as np
import pytest

import pyjax
import pyjax.experimental.jet  # noqa: F401
from tests.jax_compare import check, check_all

X = np.array([[0.5, -1.25, 0.75], [0.25, 1.5, -0.6]], np.float32)
W = np.array([[0.3, -0.2], [0.1, 0.5], [-0.4, 0.25]], np.float32)
SERIES = [np.sin(X * (k + 2)).astype(np.float32) for k in range(4)]

FUNCTIONS = {
    "sin_cos": lambda n, x: n.sin(x) * n.cos(2 * x),
    "exp_log1p": lambda n, x: n.exp(x) * n.log1p(x * x),
    "rational": lambda n, x: 1 / (1 + x * x) - x**3,
    "tanh_matmul": lambda n, x: n.tanh(x @ W),
    "logistic_sqrt": lambda n, x: n.sqrt(1 + x * x) / (1 + n.exp(-x)),
    "reductions": lambda n, x: n.sum(x**2, axis=0) + n.max(x, axis=1).sum() + n.mean(n.cumsum(x, axis=1)),
    "linear": lambda n, x: (x.T @ x)[::-1] + n.transpose(n.reshape(x, (3, 2))),
}


@pytest.mark.parametrize("kind", ["jet", "jet2"])
def test_jet_matches_jax(backend, kind):
    # order 4 also checks orders 1..3: a term of order k depends only on the input terms up to k
    cases = [(name, X, *SERIES) for name in FUNCTIONS]
    check_all(
        lambda j, n, name, x, *ser: getattr(j.experimental.jet, kind)(lambda v: FUNCTIONS[name](n, v), (x,), (ser,)),
        cases,
        rtol=2e-4,
        atol=2e-5,
    )


def test_jet_orders_pytrees_and_errors():
    y = X[::-1] + 2
    two = lambda n, a, b: {"p": a * b, "q": (n.sin(a) / b, a @ b.T)}  # noqa: E731
    check(lambda j, n, a, b, s: j.experimental.jet.jet(lambda u, v: two(n, u, v), (a, b), ([s], [a])), X, y, SERIES[0])
    check(lambda j, n, a, s, t: j.experimental.jet.jet(n.exp, (a,), ([s, t],)), X, *SERIES[:2])
    check(lambda j, n: j.experimental.jet.jet(lambda v: v**3, (0.5,), ((0.75, 3.0),)))  # weak types kept
    check(lambda j, n, a: j.experimental.jet.jet(lambda v: n.ones(3), (a,), ([a, a],)), X)  # constant: zeros
    with pytest.raises(ValueError, match="inconsistent lengths"):
        pyjax.experimental.jet.jet(np.sin, (X, X), ([X], [X, X]))


@pytest.mark.parametrize("kind", ["jet", "jet2"])
def test_jet_integer_and_bool_outputs(backend, kind):
    """Their series is zero: weak default floats under jet (JAX multiplies by the factorials), zeros of the
    output's own type under jet2."""

    def fun(n, x):
        return n.sin(x), x > 0, n.floor(x).astype(n.int32), n.ones(2, n.int32), 3, n.sum(x * x)

    check(lambda j, n, a, s, t: getattr(j.experimental.jet, kind)(lambda v: fun(n, v), (a,), ([s, t],)), X, *SERIES[:2])


def test_jet_integer_primals(backend):
    """An integer primal's series flows as in JAX's jet: through conversions to float (and so promoted
    arithmetic); integer arithmetic on it is a dtype error (JAX's jet2 keeps an integer series integer
    and computes it: not pyjax's). A zero series leaves the primal a constant."""
    n, s = np.int32(3), np.int32(5)
    jet, jet2 = "jet", "jet2"

    def run(kind, fun, primals, series):
        return lambda j, nn, *a: getattr(j.experimental.jet, kind)(lambda *v: fun(nn, *v), primals, series)

    check(run(jet, lambda nn, x, m: x * m, (2.0, n), ((1.0, 0.5), (s, np.int32(1)))), rtol=1e-6)
    check(run(jet, lambda nn, m: nn.sin(m.astype(nn.float32)), (n,), ((s, s),)), rtol=1e-5)
    check(run(jet, lambda nn, m: m * 2, (n,), ((s, np.int32(2)),)))  # TypeError
    check(run(jet2, lambda nn, m: (m.astype(nn.float32) * 2, m > 2), (n,), ((s, np.int32(2)),)))
    check(run(jet2, lambda nn, x, m: nn.exp(x) * m, (0.5, n), ((1.0,), (s,))), rtol=1e-5)
    f = lambda j, nn, x, m, c: j.experimental.jet.jet(lambda u, v: nn.sin(u * v), (x, m), ((1.0, 0.5), (c, c)))  # noqa: E731
    check(lambda j, nn: j.jit(lambda x, m, c: f(j, nn, x, m, c))(2.0, n, np.int32(2)), rtol=1e-5)
