"""jax.shard_map (and jax.experimental.shard_map) on one device vs JAX: values, collectives over mesh axes,
grad/jit/vmap of it, the varying-axes check on out_specs, and spec errors."""

from __future__ import annotations

import importlib
import warnings

import jax
import numpy as np
import pytest

import pyjax

from jax_compare import check

X = np.arange(8, dtype=np.float32).reshape(4, 2)


def _mesh(j, names=("x",), explicit=False):
    t = j.sharding.AxisType.Explicit if explicit else j.sharding.AxisType.Auto
    return j.make_mesh((1,) * len(names), names, axis_types=(t,) * len(names))


def _sm(j, f, in_specs, out_specs, names=("x",), **kw):
    return j.shard_map(f, mesh=_mesh(j, names), in_specs=in_specs, out_specs=out_specs, **kw)


CASES = {
    "psum": lambda j, P: _sm(j, lambda a: j.lax.psum(a.sum(0), "x"), P("x"), P()),
    "local": lambda j, P: _sm(j, lambda a: a * 2 + 1, P("x", None), P("x")),
    "pmean_pair": lambda j, P: _sm(j, lambda a: (j.lax.pmean(a, "x"), a), P("x"), (P(), P("x"))),
    "all_gather": lambda j, P: _sm(j, lambda a: j.lax.all_gather(a, "x", tiled=True), P("x"), P(), check_vma=False),
    "axis_index": lambda j, P: _sm(j, lambda a: a + j.lax.axis_index("x"), P("x"), P("x")),
    "replicated": lambda j, P: _sm(j, lambda a: a * j.lax.axis_size("x"), P(), P()),
    "pcast_scan": lambda j, P: _sm(
        j,
        lambda a: j.lax.scan(lambda c, y: (c + y, y), j.lax.pcast(j.numpy.zeros(2), "x", to="varying"), a)[0],
        P("x"),
        P("x"),
    ),
    "two_axes": lambda j, P: _sm(
        j,
        lambda a, b: (j.lax.psum(a, ("x", "y")), b * j.lax.axis_index("y")),
        (P(("x", "y")), P(None, "y")),
        (P(), P("x", "y")),
        names=("x", "y"),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_shard_map_matches_jax(backend, case):
    def fn(j, jnp, x):
        f = CASES[case](j, j.sharding.PartitionSpec)
        return f(x, x) if case == "two_axes" else f(x)

    check(fn, X)


def test_shard_map_transforms(backend):
    def fn(j, jnp, x):
        f = _sm(j, lambda a: j.lax.psum((a**2).sum(0), "x"), j.P("x"), j.P())
        return j.jit(f)(x), j.grad(lambda a: f(a).sum())(x), j.vmap(f)(jnp.stack([x, x + 1]))

    check(fn, X)


BAD = {
    "unknown_axis": lambda j, P: _sm(j, lambda a: a, P("y"), P("y")),
    "spec_too_long": lambda j, P: _sm(j, lambda a: a, P(None, None, "x"), P()),
    "out_too_long": lambda j, P: _sm(j, lambda a: a, P(), P(None, None, "x")),
    "specs_tree": lambda j, P: _sm(j, lambda a: a, (P(), P()), P()),
    "varying_out": lambda j, P: _sm(j, lambda a: a.sum(), P("x"), P()),
    "varying_mixed": lambda j, P: _sm(j, lambda a: a + j.lax.psum(a, "x"), P("x"), P()),
    "no_in_specs_auto": lambda j, P: j.shard_map(lambda a: a, mesh=_mesh(j), out_specs=P()),
    "no_mesh": lambda j, P: j.shard_map(lambda a: a, in_specs=P(), out_specs=P()),
    "axis_names": lambda j, P: j.shard_map(lambda a: a, mesh=_mesh(j), in_specs=P(), out_specs=P(), axis_names={"q"}),
    "pcast_to": lambda j, P: _sm(j, lambda a: j.lax.pcast(a, "x", to="bogus"), P(), P()),
    "pcast_twice": lambda j, P: _sm(j, lambda a: j.lax.pcast(a, "x", to="varying"), P("x"), P("x")),
}


@pytest.mark.parametrize("case", list(BAD))
def test_shard_map_errors_as_jax(case):
    for j in (jax, pyjax):
        with pytest.raises((ValueError, TypeError)) as info:
            BAD[case](j, j.sharding.PartitionSpec)(j.numpy.asarray(X))
        if j is jax:
            kind = info.type
        else:
            assert info.type is kind, (case, info.value)


def test_shard_map_api_forms():
    for j in (jax, pyjax):
        P, mesh = j.sharding.PartitionSpec, _mesh(j)
        x = j.numpy.asarray(X)
        with j.sharding.set_mesh(mesh):
            assert j.shard_map(lambda a: a + 1, in_specs=P("x"), out_specs=P("x"))(x).shape == (4, 2)

        @j.shard_map(mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        def dec(a):
            return a - 1

        assert np.array_equal(np.asarray(dec(x)), X - 1)
        with warnings.catch_warnings():  # JAX deprecates the module
            warnings.simplefilter("ignore", DeprecationWarning)
            old = importlib.import_module(j.__name__ + ".experimental.shard_map").shard_map
        np.testing.assert_array_equal(np.asarray(old(lambda a: a * 2, mesh, P("x"), P("x"))(x)), X * 2)
        with pytest.raises(ValueError):
            old(lambda a: a * 2, mesh, P("x"), P())(x)
        assert old(lambda a: a * 2, mesh, P("x"), P(), check_rep=False)(x).shape == (4, 2)
        out = j.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
        assert repr(out.sharding.spec) == "P('x',)"
        with pytest.raises(TypeError):
            j.shard_map(3, mesh=mesh, in_specs=P(), out_specs=P())


def test_shard_map_explicit_mesh_specs():
    for j in (jax, pyjax):
        P, mesh = j.sharding.PartitionSpec, _mesh(j, explicit=True)
        x = j.numpy.asarray(X)
        xs = j.device_put(x, j.sharding.NamedSharding(mesh, P("x")))
        with pytest.raises(ValueError, match="does not match the specs of the input"):
            j.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
        assert j.shard_map(lambda a: a, mesh=mesh, out_specs=P("x"))(xs).shape == (4, 2)
        assert j.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P(), out_specs=P())(x).shape == (4, 2)


def _smap_program(j, jnp, x):
    with j.sharding.set_mesh(_mesh(j)):
        f = j.smap(lambda a: a * 2 + j.lax.axis_index("x"), in_axes=0, out_axes=0, axis_name="x")
        g = j.smap(lambda a, b: j.lax.psum(a.sum(), "x") + b, in_axes=(0, None), out_axes=None, axis_name="x")
        h = j.smap(lambda a: a.T, in_axes=1, out_axes=0, axis_name="x")
        return f(x[0]), g(x[0], 1.0), h(x)


def test_smap_matches_jax(backend):
    check(_smap_program, X)


def test_smap_needs_a_mesh_as_jax():
    for j in (jax, pyjax):
        with pytest.raises(ValueError, match="context mesh cannot be empty"):
            j.smap(lambda a: a, in_axes=0, out_axes=0, axis_name="x")(j.numpy.ones(2))
