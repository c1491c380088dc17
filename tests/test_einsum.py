"""jnp.einsum / einsum_path against real JAX: explicit and implicit outputs, ellipsis broadcasting,
diagonals and traces from repeated labels, many operands, dtypes, gradients, jit, vmap and the
subscript errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from oracle import assert_close, check_grads, to_both

RNG = np.random.default_rng(2)
TOL = dict(rtol=1e-4, atol=1e-5)


def _r(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


CASES = [
    ("ij,jk->ik", (2, 3), (3, 4)),
    ("ij,jk", (2, 3), (3, 4)),
    ("Ba,aC", (2, 3), (3, 4)),
    ("ij->ji", (2, 3)),
    ("ij", (2, 3)),
    ("ji", (2, 3)),
    ("ii->i", (3, 3)),
    ("ii", (3, 3)),
    ("iji->j", (2, 3, 2)),
    ("iij->ji", (3, 3, 2)),
    ("i,i->", (4,), (4,)),
    ("i,i", (4,), (4,)),
    ("i,j->ij", (2,), (3,)),
    ("ij,ij->ij", (2, 3), (2, 3)),
    ("ij,ij->", (2, 3), (2, 3)),
    ("bij,bjk->bik", (5, 2, 3), (5, 3, 4)),
    ("bij,jk->bik", (5, 2, 3), (3, 4)),
    ("...ij,...jk->...ik", (5, 1, 2, 3), (4, 3, 2)),
    ("...ij,...jk", (2, 3), (6, 3, 2)),
    ("...i->...", (2, 3, 4)),
    ("...i->i", (2, 3, 4)),
    ("i...->...i", (2, 3, 4)),
    ("ij...,jk...->ik...", (2, 3, 5), (3, 4, 5)),
    ("ij,ij->ij", (1, 3), (2, 3)),
    ("ijk,kl,lm->im", (2, 3, 4), (4, 5), (5, 6)),
    ("ab,bc,cd,de->ae", (3, 10), (10, 2), (2, 8), (8, 4)),
    ("ij,jk,ki->", (3, 4), (4, 5), (5, 3)),
    ("ijk,ijk,ijk->ik", (2, 3, 4), (2, 3, 4), (2, 3, 4)),
    ("i,j,k->ijk", (2,), (3,), (4,)),
    ("ij->", (3, 4)),
    ("i,i->i", (3,), (3,)),
    ("ab,ab,c->c", (2, 3), (2, 3), (4,)),
    ("abc,cd->abd", (2, 0, 3), (3, 4)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_einsum_values(backend, case):
    subs, *shapes = case
    ops = [_r(*s) for s in shapes]
    p, j = to_both(*ops)
    assert_close(pjnp.einsum(subs, *p), jnp.einsum(subs, *j), **TOL)


@pytest.mark.parametrize("case", [c for c in CASES if 0 not in sum(c[1:], ())][::3], ids=lambda c: c[0])
def test_einsum_grads(backend, case):
    subs, *shapes = case
    ops = [_r(*s) for s in shapes]
    check_grads(
        lambda *a: pjnp.einsum(subs, *a), lambda *a: jnp.einsum(subs, *a), ops, argnums=tuple(range(len(ops))), **TOL
    )


def test_einsum_dtypes_and_promotion(backend):
    i = RNG.integers(-3, 4, (2, 3)).astype(np.int32)
    f = _r(3, 4)
    b = RNG.integers(0, 2, (2, 3)).astype(np.bool_)
    for subs, ops in (
        ("ij,jk->ik", (i, f)),
        ("ij->", (i,)),
        ("ij,jk", (i, i.T.copy())),
        ("ij->i", (b,)),
        ("ij,ij->i", (b, b)),
        ("i,i", (np.arange(3, dtype=np.int8), np.arange(3, dtype=np.int8))),
    ):
        p, j = to_both(*ops)
        assert_close(pjnp.einsum(subs, *p), jnp.einsum(subs, *j), **TOL)
    p, j = to_both(f)
    assert_close(pjnp.einsum("ij,->i", p[0], 2.0), jnp.einsum("ij,->i", j[0], 2.0), **TOL)
    assert_close(
        pjnp.einsum("ij,jk->ik", *to_both(i, i.T.copy())[0], preferred_element_type=pjnp.float32),
        jnp.einsum("ij,jk->ik", *to_both(i, i.T.copy())[1], preferred_element_type=jnp.float32),
    )


def test_einsum_sublist_form_optimize_and_path(backend):
    a, b, c = _r(2, 3), _r(3, 4), _r(4, 5)
    p, j = to_both(a, b, c)
    assert_close(pjnp.einsum(p[0], [0, 1], p[1], [1, 2], [0, 2]), jnp.einsum(j[0], [0, 1], j[1], [1, 2], [0, 2]), **TOL)
    assert_close(pjnp.einsum(p[0], [Ellipsis, 1], p[1], [1, 2]), jnp.einsum(j[0], [Ellipsis, 1], j[1], [1, 2]), **TOL)
    for opt in (False, True, "greedy", "optimal"):
        assert_close(pjnp.einsum("ij,jk,kl->il", *p, optimize=opt), jnp.einsum("ij,jk,kl->il", *j, optimize=opt), **TOL)
    path, desc = pjnp.einsum_path("ij,jk,kl->il", *p)
    assert len(path) == 2 and all(len(s) == 2 for s in path) and isinstance(desc, str)
    jpath, _ = jnp.einsum_path("ij,jk,kl->il", *j)
    assert_close(pjnp.einsum("ij,jk,kl->il", *p, optimize=jpath), jnp.einsum("ij,jk,kl->il", *j), **TOL)
    assert_close(pjnp.einsum("ij,jk,kl->il", *p, optimize=path), jnp.einsum("ij,jk,kl->il", *j), **TOL)


def test_einsum_jit_vmap(backend):
    a, b = _r(5, 2, 3), _r(3, 4)
    p, j = to_both(a, b)

    def fp(x, y):
        return pjnp.einsum("ij,jk->ik", x, y)

    def fj(x, y):
        return jnp.einsum("ij,jk->ik", x, y)

    assert_close(pyjax.jit(fp)(p[0][0], p[1]), jax.jit(fj)(j[0][0], j[1]), **TOL)
    assert_close(pyjax.vmap(fp, in_axes=(0, None))(*p), jax.vmap(fj, in_axes=(0, None))(*j), **TOL)
    x = _r(4, 3, 3)
    p, j = to_both(x)
    assert_close(
        pyjax.vmap(lambda m: pjnp.einsum("ii->", m))(p[0]), jax.vmap(lambda m: jnp.einsum("ii->", m))(j[0]), **TOL
    )
    assert_close(
        pyjax.jit(pyjax.grad(lambda m: pjnp.einsum("ij,ji->", m, m)))(p[0][0]),
        jax.jit(jax.grad(lambda m: jnp.einsum("ij,ji->", m, m)))(j[0][0]),
        **TOL,
    )


ERRORS = [
    ("ij,jk->ik", [(2, 3)], "Number of einsum subscripts"),
    ("ij,jk->ik", [(2, 3), (4, 2)], "Size of label 'j'"),
    ("ij->ik", [(2, 3)], "Output character 'k' did not appear"),
    ("ijk", [(2, 3)], "does not contain the correct number of indices"),
    ("ij->ii", [(2, 3)], "appeared more than once"),
    ("i-->", [(3,)], "only contain one '->'"),
    ("i.j", [(2, 3)], "Invalid Ellipses"),
    ("i$", [(2, 3)], "not a valid symbol"),
]


@pytest.mark.parametrize("subs,shapes,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_einsum_errors(subs, shapes, msg):
    ops = [pjnp.ones(s) for s in shapes]
    with pytest.raises(ValueError, match=msg.replace("(", r"\(").replace(".", r"\.")):
        pjnp.einsum(subs, *ops)
    if subs != "i$":  # JAX (via opt_einsum) raises the same class
        with pytest.raises(ValueError):
            jnp.einsum(subs, *[jnp.ones(s) for s in shapes])
