"""Single-device sharding API (jax.sharding, device_put, with_sharding_constraint, jit shardings) vs JAX."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp

from jax_compare import check


def _mesh(mod, names=("x", "y"), explicit=False):
    t = mod.sharding.AxisType.Explicit if explicit else mod.sharding.AxisType.Auto
    return mod.make_mesh((1,) * len(names), names, axis_types=(t,) * len(names))


def _ns(mod, *spec, explicit=False):
    return mod.sharding.NamedSharding(_mesh(mod, explicit=explicit), mod.sharding.PartitionSpec(*spec))


X = np.arange(12, dtype=np.float32).reshape(4, 3)


def test_partition_spec_matches_jax():
    for mod in (jax, pyjax):
        P = mod.sharding.PartitionSpec
        assert mod.P is P
    for args in [("x", None), (), ("x",), (("x", "y"), None)]:
        p, j = pyjax.P(*args), jax.P(*args)
        assert repr(p) == repr(j) and len(p) == len(j) and list(p) == list(j)
        assert (p == pyjax.P(*args)) and hash(p) == hash(pyjax.P(*args)) and p != tuple(args)


def test_mesh_matches_jax():
    pm, jm = pyjax.make_mesh((1, 1), ("x", "y")), jax.make_mesh((1, 1), ("x", "y"))
    assert dict(pm.shape) == dict(jm.shape) and pm.axis_names == jm.axis_names and pm.size == jm.size
    assert pm.devices.shape == jm.devices.shape and repr(pm.axis_types) == repr(jm.axis_types)
    assert str(pm) == str(jm) and repr(pm) == repr(jm)
    assert pm.devices.flat[0] is pyjax.devices()[0]
    assert pm == pyjax.make_mesh((1, 1), ("x", "y")) and hash(pm) == hash(pyjax.make_mesh((1, 1), ("x", "y")))
    direct = pyjax.sharding.Mesh(pyjax.devices(), "a")
    assert repr(direct) == repr(jax.sharding.Mesh(jax.devices(), "a"))


@pytest.mark.parametrize("shape,names", [((2,), ("x",)), ((1, 2), ("a", "b")), ((1, 1), ("x",))])
def test_make_mesh_errors(shape, names):
    for mod in (jax, pyjax):
        with pytest.raises(ValueError):
            mod.make_mesh(shape, names)


def test_named_sharding_validation():
    m = pyjax.make_mesh((1, 1), ("x", "y"))
    jm = jax.make_mesh((1, 1), ("x", "y"))
    with pytest.raises(ValueError, match="Resource axis: z"):
        pyjax.sharding.NamedSharding(m, pyjax.P("z"))
    with pytest.raises(ValueError, match="Resource axis: z"):
        jax.sharding.NamedSharding(jm, jax.P("z"))
    with pytest.raises(pyjax.sharding.DuplicateSpecError):
        pyjax.sharding.NamedSharding(m, pyjax.P("x", "x"))
    s, js = _ns(pyjax, "x"), _ns(jax, "x")
    assert repr(s) == repr(js)
    assert s.shard_shape((4, 3)) == js.shard_shape((4, 3)) == (4, 3)
    assert s.is_fully_replicated and s.num_devices == 1 and s.device_set == {pyjax.devices()[0]}
    assert s == _ns(pyjax, "x") and s.is_equivalent_to(_ns(pyjax, "x", None), 2)
    assert list(s.devices_indices_map((4, 3)).values()) == [(slice(None), slice(None))]


def test_device_put_with_sharding(backend):
    def run(mod, jnp, x):
        s = _ns(mod, "x")
        y = mod.device_put(x, s)
        assert y.sharding == s
        sd = mod.device_put(x, mod.sharding.SingleDeviceSharding(mod.devices()[0]))
        assert isinstance(sd.sharding, mod.sharding.SingleDeviceSharding)
        return y * 2, sd + 1, mod.device_put((x, x), (s, None))

    check(run, X)
    default = pjnp.ones(3).sharding
    assert isinstance(default, pyjax.sharding.Sharding) and default.device is pyjax.devices(backend)[0]
    assert repr(default) == repr(jax.numpy.ones(3).sharding).replace("CpuDevice(id=0)", repr(default.device))


def test_device_put_spec_too_long():
    check(lambda mod, jnp, x: mod.device_put(x, _ns(mod, "x", "y")), np.ones(3, np.float32))


def test_with_sharding_constraint_identity(backend):
    def run(mod, jnp, x):
        s = _ns(mod, "x")
        wsc = mod.lax.with_sharding_constraint
        return mod.jit(lambda a: wsc(a * 2, s))(x), wsc((x, x), s), wsc((x, x), (s, s))

    check(run, X)


@pytest.mark.parametrize(
    "make",
    [
        lambda mod: None,
        lambda mod: 3,
        lambda mod: mod.P("x"),  # no mesh in context
        lambda mod: _ns(mod, "x", explicit=True),  # explicit axes: use reshard
        lambda mod: _ns(mod, "x", "y", None),  # longer than the rank
        lambda mod: (_ns(mod, "x"),) * 3,  # not a prefix
    ],
)
def test_with_sharding_constraint_errors(make):
    check(lambda mod, jnp, x: mod.lax.with_sharding_constraint((x, x), make(mod)), X)


def test_set_mesh_and_partition_specs(backend):
    def run(mod, jnp, x):
        m = _mesh(mod)
        with mod.set_mesh(m):
            assert mod.sharding.get_mesh() == m
            out = mod.jit(lambda a: mod.lax.with_sharding_constraint(a + 1, mod.P("x")), in_shardings=mod.P("x"))(x)
        assert mod.sharding.get_mesh().empty
        return out

    check(run, X)


def test_jit_shardings(backend):
    def run(mod, jnp, x):
        s = _ns(mod, "x")
        return mod.jit(lambda a, b: (a * b, a.sum()), in_shardings=(s, None), out_shardings=(s, None))(x, x)

    check(run, X)


@pytest.mark.parametrize(
    "kwargs",
    [
        lambda mod: {"in_shardings": _ns(mod, "x", "y", None)},
        lambda mod: {"in_shardings": (_ns(mod, "x"),) * 2},
        lambda mod: {"in_shardings": mod.P("x")},
        lambda mod: {"out_shardings": _ns(mod, "x", "y", None)},
    ],
)
def test_jit_sharding_errors(kwargs):
    check(lambda mod, jnp, x: mod.jit(lambda a: a * 2, **kwargs(mod))(x), X)
    with pytest.raises(TypeError):
        pyjax.jit(lambda a: a, in_shardings=3)
    with pytest.raises(TypeError):
        jax.jit(lambda a: a, in_shardings=3)


def test_reshard_explicit(backend):
    def run(mod, jnp, x):
        return mod.sharding.reshard(x, _ns(mod, "x", explicit=True)) + 1

    check(run, X)
    check(lambda mod, jnp, x: mod.sharding.reshard(x, mod.P("x")), X)  # no mesh: ValueError
    check(lambda mod, jnp, x: mod.sharding.reshard(x, _ns(mod, "x")), X)  # auto axes: ValueError


def test_lowered_with_shardings():
    s = _ns(pyjax, "x")
    c = pyjax.jit(lambda a: a * 2, in_shardings=s, out_shardings=s).lower(pyjax.ShapeDtypeStruct((4, 3), "float32"))
    c = c.compile()
    assert c.input_shardings == ((s,), {}) and c.output_shardings == s


def test_abstract_mesh_and_format_as_jax():
    """sharding.AbstractMesh (a mesh's axes without devices) and experimental.layout's Format/Layout."""
    import jax.experimental.layout as jlayout
    import jax.sharding as jsharding

    import pyjax.experimental.layout as playout
    import pyjax.sharding as psharding

    for lib, sh, lay in ((pyjax, psharding, playout), (jax, jsharding, jlayout)):
        m = sh.AbstractMesh((2, 3), ("x", "y"))
        assert (m.axis_names, m.axis_sizes, m.size, m.empty) == (("x", "y"), (2, 3), 6, False)
        assert dict(m.shape) == {"x": 2, "y": 3} and m == sh.AbstractMesh((2, 3), ("x", "y"))
        assert m != sh.AbstractMesh((3, 2), ("x", "y"))
        assert all(t == sh.AxisType.Auto for t in m.axis_types)
        s = sh.SingleDeviceSharding(lib.devices()[0])
        f = lay.Format(lay.Layout((1, 0)), s)
        assert f.layout.major_to_minor == (1, 0) and f.sharding == s
        assert f == lay.Format(lay.Layout((1, 0)), s) and lay.Format().layout is None
        with pytest.raises(ValueError, match="Sharding has to be concrete"):
            lay.Format(lay.Layout((1, 0)), None)


def test_sharding_extras_as_jax():
    for j in (jax, pyjax):
        d = j.devices()[0]
        s = j.sharding.make_single_device_sharding(d)
        assert s.device_set == {d} and s.memory_kind == "device"
        am = j.sharding.AbstractMesh((1,), ("x",))
        with j.sharding.use_abstract_mesh(am):
            assert j.sharding.get_abstract_mesh().axis_names == ("x",)
        f = j.sharding.auto_axes(lambda x: x * 2, axes="x", out_sharding=j.P())
        with j.sharding.set_mesh(_mesh(j, ("x",), explicit=True)):
            assert float(f(j.numpy.float32(2.0))) == 4.0
        a = j.sharding.AbstractDevice("cpu", None, "cpu")
        assert a == j.sharding.AbstractDevice("cpu", None, "cpu")


def test_out_sharding_keywords_accepted_as_jax():
    """lax and random functions that take out_sharding/sharding in JAX take it in pyjax (flax.nnx passes it)."""
    import inspect

    missing = []
    for jmod, pmod in ((jax.lax, pyjax.lax), (jax.random, pyjax.random)):
        for name in dir(jmod):
            f = getattr(jmod, name)
            if name.startswith("_") or not callable(f):
                continue
            try:
                params = inspect.signature(f).parameters
            except (TypeError, ValueError):
                continue
            for kw in ("out_sharding", "sharding"):
                if kw in params and hasattr(pmod, name):
                    pp = inspect.signature(getattr(pmod, name)).parameters
                    if kw not in pp and not any(p.kind == p.VAR_KEYWORD for p in pp.values()):
                        missing.append(f"{jmod.__name__}.{name}({kw}=)")
    assert not [m for m in missing if "ragged" not in m and "rng_bit_generator" not in m and "reduce_sum" not in m], (
        missing
    )
    k = pyjax.random.key(0)
    assert pyjax.random.normal(k, (2,), out_sharding=None).shape == (2,)


def test_manual_axis_type_as_jax():
    """ManualAxisType: interned by its axis sets, JAX's repr, errors, update/to_ct_mat and vur."""
    for lib in (jax, pyjax):
        M = lib.sharding.ManualAxisType
        m = M(varying={"x"}, reduced={"y"})
        assert M(varying=frozenset({"x"}), reduced={"y"}) is m and M().empty and not m.empty
        assert m.vur == {"x", "y"} and m.to_ct_mat() is M(varying={"x"}, unreduced={"y"})
        assert m.update(varying=set()) is M(reduced={"y"})
        with pytest.raises(ValueError, match="varying and unreduced cannot have common mesh axes"):
            M(varying={"x"}, unreduced={"x"})
    assert repr(pyjax.sharding.ManualAxisType(varying={"x"})) == repr(jax.sharding.ManualAxisType(varying={"x"}))
