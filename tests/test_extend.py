"""pyjax.extend: a custom primitive registered the way JAX libraries do (def_impl, def_abstract_eval,
ad.primitive_jvps/primitive_transposes, batching.primitive_batchers, mlir.register_lowering) runs eagerly,
under jit, grad (both modes, higher order), vmap and make_jaxpr with JAX's values."""

from __future__ import annotations

import jax
import jax.core
import jax.extend
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.interpreters import ad as jad
from jax.interpreters import batching as jbatching
from jax.interpreters import mlir as jmlir

import pyjax
import pyjax.extend
import pyjax.numpy as jnp
from pyjax.extend.interpreters import ad as pad
from pyjax.extend.interpreters import batching as pbatching
from pyjax.extend.interpreters import mlir as pmlir

_LIBS = {
    "pyjax": (pyjax, jnp, pyjax.extend.core, pyjax.extend.core, pad, pbatching, pmlir),
    "jax": (jax, jjnp, jax.extend.core, jax.core, jad, jbatching, jmlir),
}


def _fma_library(name: str, n: list):
    """The custom multiply-add primitive of JAX's "How primitives work", registered on one library."""
    lib, np_, ext, core, ad, batching, mlir = _LIBS[name]
    n[0] += 1
    p = ext.Primitive(f"fma_test{n[0]}")

    def fma(x, y, z):
        return p.bind(x, y, z)

    def impl(x, y, z):
        return np_.add(np_.multiply(x, y), z)

    p.def_impl(impl)
    p.def_abstract_eval(lambda x, y, z: core.ShapedArray(np_.broadcast_shapes(x.shape, y.shape, z.shape), x.dtype))
    mlir.register_lowering(p, mlir.lower_fun(impl, multiple_results=False))

    def jvp(primals, tangents):
        x, y, z = primals
        xt, yt, zt = (ad.instantiate_zeros(t) for t in tangents)
        return fma(x, y, z), fma(xt, y, fma(x, yt, zt))

    def transpose(ct, x, y, z):
        zero = np_.zeros_like(ct)
        ctx = fma(ct, y, zero) if ad.is_undefined_primal(x) else None
        cty = fma(x, ct, zero) if ad.is_undefined_primal(y) else None
        return [ctx, cty, ct if ad.is_undefined_primal(z) else None]

    def batch(args, dims):
        r = max(a.ndim - (d is not None) for a, d in zip(args, dims))
        out = []
        for a, d in zip(args, dims):
            if d is None:
                out.append(a.reshape((1,) * (r + 1 - a.ndim) + a.shape))
            else:
                a = np_.moveaxis(a, d, 0)
                out.append(a.reshape(a.shape[:1] + (1,) * (r + 1 - a.ndim) + a.shape[1:]))
        return fma(*out), 0

    ad.primitive_jvps[p] = jvp
    ad.primitive_transposes[p] = transpose
    batching.primitive_batchers[p] = batch
    return lib, np_, fma


_COUNT = [0]


def _programs(name: str) -> list:
    lib, np_, fma = _fma_library(name, _COUNT)
    x = np_.array([1.0, 2.0, 3.0])
    y = np_.array([2.0, -1.0, 0.5])
    z = np_.array(0.5)

    def f(a, b):
        return np_.sum(fma(a, b, z) * fma(a, a, b))

    return [
        fma(x, y, z),
        lib.jit(fma)(x, y, z),
        lib.grad(f)(x, y),
        lib.grad(f, 1)(x, y),
        lib.jit(lib.grad(f))(x, y),
        lib.vmap(fma, (0, None, None))(np_.stack([x, y]), y, z),
        lib.jvp(f, (x, y), (y, x))[1],
        lib.vmap(lib.grad(f))(np_.stack([x, y]), np_.stack([y, x])),
        lib.hessian(lambda a: f(a, y))(x),
        lib.vmap(fma, (None, 1, None))(x, np_.stack([y, x], 1), z),
    ]


def test_custom_primitive_matches_jax(backend):
    got, want = _programs("pyjax"), _programs("jax")
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape and g.dtype == w.dtype, i
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, err_msg=f"program {i}")


def test_custom_primitive_jaxpr_and_errors(backend):
    _, np_, fma = _fma_library("pyjax", _COUNT)
    closed = pyjax.make_jaxpr(lambda a: fma(a, a, 1.0))(np_.ones(2))
    assert [e.primitive.name for e in closed.eqns] == [f"fma_test{_COUNT[0]}"]
    bare = pyjax.extend.core.Primitive("no_rules")
    bare.def_abstract_eval(lambda a: a)
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'no_rules'"):
        bare.bind(np_.ones(2))
    with pytest.raises(NotImplementedError, match="no_rules"):
        pyjax.grad(lambda a: bare.bind(a).sum())(np_.ones(2))
    with pytest.raises(NotImplementedError, match="no_rules"):
        pyjax.vmap(bare.bind)(np_.ones((2, 2)))
    assert pyjax.jit(bare.bind).trace(np_.ones(2)).out_info.shape == (2,)


def test_extend_core_names():
    c = pyjax.extend.core
    aval = c.ShapedArray((2, 3), np.float32)
    assert isinstance(aval, c.ShapedArray) and aval.dtype == jnp.float32 and aval.shape == (2, 3)
    assert isinstance(c.get_aval(jnp.ones(2)), c.ShapedArray) and not isinstance(2.0, c.ShapedArray)
    closed = pyjax.make_jaxpr(lambda a: jnp.sin(a) * 2)(1.0)
    assert isinstance(closed, c.ClosedJaxpr) and isinstance(closed.jaxpr, c.Jaxpr)
    assert float(c.jaxpr_as_fun(closed.jaxpr)(*closed.consts, 0.5)[0]) == pytest.approx(2 * np.sin(0.5))
    assert float(c.eval_jaxpr(closed.jaxpr, closed.consts, 0.5)[0]) == pytest.approx(2 * np.sin(0.5))
    wrapped = pyjax.extend.linear_util.wrap_init(lambda a, k: a + k, {"k": 2})
    assert wrapped.call_wrapped(1) == 3


def _partial_eval_run(name: str) -> list:
    if name == "jax":
        from jax._src import api_util
        from jax._src import linear_util as lu
        from jax.interpreters import partial_eval as pe

        lib, np_, core = jax, jjnp, jax.core
        wrap = lambda f: lu.wrap_init(f, debug_info=api_util.debug_info("t", f, (1, 2), {}))  # noqa: E731
    else:
        from pyjax.extend import linear_util as lu
        from pyjax.extend.interpreters import partial_eval as pe

        lib, np_, core = pyjax, jnp, pyjax.extend.core
        wrap = lu.wrap_init
    fun = wrap(lambda x, c: [x * 2 + c, c * 3, np_.sin(c)])
    pvals = [pe.PartialVal.unknown(core.ShapedArray((2,), np.float32)), pe.PartialVal.known(np.float32(1.5))]
    jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(fun, pvals)
    kinds = [pv.is_known() for pv in out_pvals]
    known = [float(pv.get_known()) for pv in out_pvals if pv.is_known()]
    rest = core.eval_jaxpr(jaxpr, consts, np_.array([1.0, 2.0], np.float32))
    del lib
    return [kinds, known, [np.asarray(r).tolist() for r in rest]]


def test_partial_eval_matches_jax():
    """jax.interpreters.partial_eval.trace_to_jaxpr_nounits: which outputs are known, their values, the rest."""
    assert _partial_eval_run("pyjax") == _partial_eval_run("jax")


def test_mapped_avals_and_axis_batchers_match_jax():
    for core, ext in ((pyjax.extend.core, pyjax.extend.core), (jax.core, jax.extend.core)):
        a = core.ShapedArray((3, 4), np.float32)
        assert ext.mapped_aval(4, 1, a).shape == (3,)
        assert ext.unmapped_aval(5, 0, a).shape == (5, 3, 4)
        assert ext.mapped_aval(4, None, a).shape == (3, 4)
    calls = []
    for name, (lib, np_, ext, core, _, batching, mlir) in _LIBS.items():
        prim = ext.Primitive(f"axis_double_{name}")
        prim.def_impl(lambda x: x * 2)
        prim.def_abstract_eval(lambda a: core.ShapedArray(a.shape, a.dtype))
        mlir.register_lowering(prim, mlir.lower_fun(lambda x: x * 2, multiple_results=False))

        def rule(size, axis_name, trace_type, vals, dims, prim=prim, name=name):
            calls.append((name, size, axis_name, list(dims)))
            return prim.bind(vals[0]), dims[0]

        batching.axis_primitive_batchers[prim] = rule
        out = lib.vmap(prim.bind, axis_name="i")(np_.arange(3.0))
        assert np.asarray(out).tolist() == [0.0, 2.0, 4.0]
    assert calls[0][1:] == calls[1][1:] == (3, "i", [0])


def test_trace_state_changes_under_transformations():
    """jax.core.get_opaque_trace_state: equal under the same transformations, different inside one (flax)."""
    for lib, get in ((pyjax, pyjax.extend.core.get_opaque_trace_state), (jax, jax.extend.core.get_opaque_trace_state)):
        outer = get(convention="flax")
        assert get(convention="flax") == outer
        inside = []
        lib.jit(lambda x: inside.append(get(convention="flax")) or x)(1.0)
        assert inside[0] != outer


def _eqn_program(j, x):
    return j.numpy.sin(x) * 2 + j.lax.fori_loop(0, 2, lambda i, c: c + 1.0, x)


def test_extend_core_jaxpr_tools_as_jax():
    for j in (jax, pyjax):
        core = j.extend.core
        cj = j.make_jaxpr(lambda x: _eqn_program(j, x))(1.0)
        core.check_jaxpr(cj.jaxpr)
        subs = list(core.subjaxprs(cj.jaxpr))
        assert len(subs) >= 1 and all(hasattr(s, "eqns") for s in subs)
        assert core.primitives.sin_p.name == "sin" and core.primitives.add_p.name == "add"
        assert core.primal_dtype_to_tangent_dtype(np.int32) == j.dtypes.float0
        assert core.primal_dtype_to_tangent_dtype(np.float32) == np.float32
        assert isinstance(core.no_effects, (set, frozenset)) and not core.no_effects
        assert issubclass(type("E", (core.Effect,), {}), core.Effect)
        assert core.find_top_trace([1.0]) is None or not j.extend.core.unsafe_am_i_under_a_jit_DO_NOT_USE()
        assert j.jit(lambda x: x + core.unsafe_am_i_under_a_jit_DO_NOT_USE())(1.0) == 2.0
        assert (
            j.vmap(lambda x: x + core.unsafe_am_i_under_a_vmap_DO_NOT_USE())(jjnp.ones(2) if j is jax else jnp.ones(2))[
                0
            ]
            == 2.0
        )


def test_check_jaxpr_rejects_an_ill_typed_jaxpr():
    cj = pyjax.make_jaxpr(lambda x: pyjax.numpy.sin(x))(1.0)
    eqn = cj.jaxpr.eqns[0]
    eqn.outvars[0].aval = eqn.outvars[0].aval.update(shape=(3,))
    with pytest.raises(pyjax.extend.core.JaxprTypeError):
        pyjax.extend.core.check_jaxpr(cj.jaxpr)


def test_hijax_names_load_and_refuse_use():
    from pyjax.experimental import hijax

    class Prim(hijax.HiPrimitive):
        pass

    hijax.control_flow_allowed_effects.add_type(pyjax.extend.core.Effect)
    with pytest.raises(NotImplementedError, match="hijax"):
        Prim("p").bind(1.0)
    assert str(pyjax.typeof(pyjax.random.key(0))) == str(jax.typeof(jax.random.key(0))) == "key<fry>[]"


def test_extend_core_array_types_and_errors():
    for j in (jax, pyjax):
        assert np.ndarray in j.extend.core.array_types and np.float32 in j.extend.core.array_types
        assert issubclass(j.extend.core.InconclusiveDimensionOperation, Exception)
    assert type(pyjax.numpy.ones(2)) in pyjax.extend.core.array_types
