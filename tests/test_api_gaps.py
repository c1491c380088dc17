"""JAX API gaps filled in pyjax, against real JAX on every backend: host callbacks (jax.debug.print,
jax.debug.callback, jax.pure_callback, io_callback) eagerly and under jit / vmap / grad,
linear_transpose, custom_gradient, closure_convert, process/device helpers, jnp packbits /
unpackbits / print options / fromstring / frompyfunc, tree_util additions, and lax extras."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import io_callback as j_io_callback

import pyjax
import pyjax.numpy as pjnp
from pyjax.experimental import io_callback as p_io_callback
from tests.jax_compare import assert_close, check

LIBS = {"jax": (jax, jjnp, j_io_callback), "pyjax": (pyjax, pjnp, p_io_callback)}


def _printed(capsys, fn) -> dict:
    """stdout of fn(jax_module, numpy_module) under JAX and under pyjax."""
    out = {}
    for name, (mod, np_mod, _) in LIBS.items():
        fn(mod, np_mod)
        mod.effects_barrier()
        out[name] = capsys.readouterr().out
    return out


# --- jax.debug.print / jax.debug.callback -------------------------------------------------------------


def _loop_print(jx, jnp):
    def body(i, c):
        jx.debug.print("i={i} c={c:.2f}", i=i, c=c)
        return c * 1.5 + i

    return jx.jit(lambda x: jx.lax.fori_loop(0, 3, body, x))(jnp.float32(1.0))


PRINT_CASES = {
    "eager": lambda jx, jnp: jx.debug.print(
        "x={x} y={} {z:.3f}", jnp.arange(3.0), x=jnp.float32(1.5), z=jnp.float32(2)
    ),
    "jit": lambda jx, jnp: jx.jit(lambda x: jx.debug.print("x={x} y={}", x * 2, x=x))(jnp.arange(3.0)),
    "jit_twice": lambda jx, jnp: [jx.jit(lambda x: jx.debug.print("{}", x + 1))(jnp.float32(v)) for v in (1, 2)],
    "vmap": lambda jx, jnp: jx.vmap(lambda x, y: jx.debug.print("v={} {}", x, y), in_axes=(0, None))(
        jnp.arange(3.0), 7
    ),
    "grad": lambda jx, jnp: jx.grad(lambda x: (jx.debug.print("g={}", x), x * x)[1])(3.0),
    "jit_grad": lambda jx, jnp: jx.jit(jx.grad(lambda x: (jx.debug.print("jg={}", x), jnp.sin(x))[1]))(0.5),
    "grad_jit": lambda jx, jnp: jx.grad(jx.jit(lambda x: (jx.debug.print("gj={}", x), x**3)[1]))(2.0),
    "jvp": lambda jx, jnp: jx.jvp(lambda x: (jx.debug.print("p={}", x), x * 2)[1], (1.0,), (1.0,)),
    "fori_loop": _loop_print,
    "no_placeholder": lambda jx, jnp: jx.debug.print("plain"),
    "static_str": lambda jx, jnp: jx.debug.print("{} and {}", "text", jnp.int32(4)),
    "two_call": lambda jx, jnp: jx.debug.print(ordered=True)("two {}", jnp.ones(2)),
}


@pytest.mark.parametrize("case", sorted(PRINT_CASES))
def test_debug_print_matches_jax(backend, capsys, case):
    out = _printed(capsys, PRINT_CASES[case])
    assert out["pyjax"] == out["jax"]
    assert out["pyjax"]


def test_debug_print_runtime_values_under_jit(backend, capsys):
    """Under jit the print happens at every call with that call's values (traced once)."""
    traces = []

    def f(x):
        traces.append(1)
        pyjax.debug.print("value {}", x)
        return x + 1

    g = pyjax.jit(f)
    for v in (1.0, 2.0, 3.0):
        g(pjnp.float32(v))
    assert capsys.readouterr().out == "value 1.0\nvalue 2.0\nvalue 3.0\n"
    assert len(traces) == 1


@pytest.mark.parametrize(
    "make",
    [
        lambda jx: jx.debug.print("{}"),
        lambda jx: jx.debug.print("{}", 1, 2),
        lambda jx: jx.debug.print("{x}", y=1),
        lambda jx: jx.debug.print("{}", 1, extra=True),
    ],
)
def test_debug_print_bad_format(make):
    with pytest.raises(Exception) as je:
        make(jax)
    with pytest.raises(type(je.value)):
        make(pyjax)


def test_debug_callback(backend):
    seen = []

    def cb(a, b, *, tag):
        seen.append((np.asarray(a).tolist(), np.asarray(b).tolist(), tag))

    def f(x):
        pyjax.debug.callback(cb, x, x * 2, tag="t")
        return x

    f(pjnp.arange(2.0))
    pyjax.jit(f)(pjnp.arange(2.0) + 1)
    pyjax.vmap(f)(pjnp.arange(2.0))
    pyjax.grad(lambda x: pjnp.sum(f(x)))(pjnp.ones(2))
    assert seen == [
        ([0.0, 1.0], [0.0, 2.0], "t"),
        ([1.0, 2.0], [2.0, 4.0], "t"),
        (0.0, 0.0, "t"),
        (1.0, 2.0, "t"),
        ([1.0, 1.0], [2.0, 2.0], "t"),
    ]
    with pytest.raises(TypeError, match="callable"):
        pyjax.debug.callback(3, 1.0)


# --- pure_callback / io_callback ------------------------------------------------------------------


def _pc(jx, jnp, x, vmap_method=None):
    spec = {"a": jx.ShapeDtypeStruct(x.shape, jnp.float32), "b": jx.ShapeDtypeStruct((), jnp.int32)}
    return jx.pure_callback(
        lambda v: {"a": np.sin(np.asarray(v)) * 2, "b": np.int32(np.asarray(v).size)}, spec, x, vmap_method=vmap_method
    )


X3 = np.array([0.5, -1.0, 2.0], np.float32)


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp, x: _pc(jx, jnp, x),
        lambda jx, jnp, x: jx.jit(lambda v: _pc(jx, jnp, v)["a"] + 1)(x),
        lambda jx, jnp, x: jx.vmap(lambda v: _pc(jx, jnp, v, "sequential"))(x),
        lambda jx, jnp, x: jx.jit(jx.vmap(lambda v: _pc(jx, jnp, v, "sequential_unrolled")))(x),
        lambda jx, jnp, x: jx.vmap(lambda v: _pc(jx, jnp, v, "expand_dims")["a"])(x.reshape(3, 1)),
        lambda jx, jnp, x: jx.vmap(
            lambda v, w: jx.pure_callback(
                lambda a, b: np.asarray(a) * np.asarray(b),
                jx.ShapeDtypeStruct((), jnp.float32),
                v,
                w,
                vmap_method="broadcast_all",
            ),
            in_axes=(0, None),
        )(x, jnp.float32(3)),
        lambda jx, jnp, x: jx.vmap(lambda v: _pc(jx, jnp, v))(x),  # vmap_method=None: NotImplementedError
        lambda jx, jnp, x: jx.grad(lambda v: jnp.sum(_pc(jx, jnp, v)["a"]))(x),  # not differentiable: ValueError
        lambda jx, jnp, x: jx.pure_callback(lambda v: v, jx.ShapeDtypeStruct((3,), jnp.float32), x, vmap_method="bad"),
    ],
)
def test_pure_callback(backend, fn):
    check(fn, X3)


def test_pure_callback_wrong_result_shape(backend):
    f = pyjax.jit(
        lambda x: pyjax.pure_callback(lambda v: np.ones(4, np.float32), pyjax.ShapeDtypeStruct((3,), pjnp.float32), x)
    )
    with pytest.raises(RuntimeError, match="pure_callback"):
        f(pjnp.ones(3))


def test_io_callback(backend):
    log = []

    def cb(v):
        log.append(np.asarray(v).tolist())
        return np.asarray(v) * 2

    def run(jx, jnp, io):
        spec = jx.ShapeDtypeStruct((2,), jnp.float32)
        y = jx.jit(lambda x: io(cb, spec, x, ordered=True) + 1)(jnp.arange(2.0))
        z = jx.vmap(lambda x: io(cb, jx.ShapeDtypeStruct((), jnp.float32), x))(jnp.arange(2.0))
        return y, z

    pj = run(pyjax, pjnp, p_io_callback)
    pj_log, log[:] = list(log), []
    jx = run(jax, jjnp, j_io_callback)
    assert_close(pj, jx)
    assert pj_log == log
    for io, mod, np_mod in ((j_io_callback, jax, jjnp), (p_io_callback, pyjax, pjnp)):
        with pytest.raises(ValueError):
            mod.vmap(lambda x: io(cb, mod.ShapeDtypeStruct((), np_mod.float32), x, ordered=True))(np_mod.arange(2.0))


# --- transformations -------------------------------------------------------------------------------


def _lt(jx, jnp, ct):
    def f(x, y):
        return {"s": 2.0 * x - y[::-1], "t": jnp.sum(x) * 3.0}

    s = jx.ShapeDtypeStruct((3,), jnp.float32)
    return jx.linear_transpose(f, s, jnp.zeros(3, jnp.float32))(ct)


def test_linear_transpose(backend):
    check(lambda jx, jnp, a: _lt(jx, jnp, {"s": a, "t": jnp.float32(2.0)}), X3)
    check(lambda jx, jnp, a: jx.linear_transpose(lambda x: x * 2.0, 1.0)(a), np.float32(3.0))
    # errors: integer inputs with float outputs, wrong cotangent tree, wrong cotangent dtype
    check(lambda jx, jnp, a: jx.linear_transpose(lambda x: x * 1.5, jnp.ones(3, jnp.int32))(a), X3)
    check(lambda jx, jnp, a: _lt(jx, jnp, (a, a)), X3)
    check(lambda jx, jnp, a: _lt(jx, jnp, {"s": a.astype(jnp.int32), "t": jnp.float32(2.0)}), X3)


def _cg(jx, jnp):
    @jx.custom_gradient
    def f(x, y):
        out = jnp.sin(x) * y

        def rule(g):
            return g * 10.0 * y, g * jnp.sum(x)

        return out, rule

    @jx.custom_gradient
    def clip_grad(x):
        return x, lambda g: jnp.clip(g, -0.5, 0.5)

    return f, clip_grad


def test_custom_gradient(backend):
    def run(jx, jnp, x):
        f, clip = _cg(jx, jnp)
        v = f(x, 2.0)
        g = jx.grad(lambda a, b: jnp.sum(f(a, b)), argnums=(0, 1))(x, 2.0)
        gj = jx.jit(jx.grad(lambda a: jnp.sum(clip(a) * 3.0)))(x)
        return v, g, gj

    check(run, X3)


def test_closure_convert(backend):
    def run(jx, jnp, x):
        def outer(w):
            def inner(v):
                return jnp.sin(v) * w

            conv, consts = jx.closure_convert(inner, x)
            return jnp.sum(conv(x, *consts)), len(consts)

        val, n = outer(2.0)
        g = jx.grad(lambda w: outer(w)[0])(2.0)
        return val, n, g

    check(run, X3)
    assert pyjax.closure_convert(lambda v: v * 2.0, 1.0)[1] == []


def test_named_scope_and_process_helpers(backend):
    def run(jx, jnp, x):
        with jx.named_scope("block"):
            y = x * 2
        return y, jx.process_index(), jx.process_count(), jx.copy_to_host_async(y)

    check(run, X3)
    with pytest.raises(TypeError):
        with pyjax.named_scope(3):
            pass
    assert pyjax.local_device_count() == len(pyjax.local_devices()) == 1
    assert pyjax.process_indices() == [0] and pyjax.host_count() == 1 and pyjax.host_id() == 0
    keep = pjnp.arange(5.0) + 1
    assert any(a is keep for a in pyjax.live_arrays())
    assert all(a.devices() == {keep.device} for a in pyjax.live_arrays(keep.device.platform))
    assert "devices" in pyjax.print_environment_info(return_string=True)
    arr = pyjax.make_array_from_callback((2, 2), None, lambda idx: np.arange(4.0, dtype=np.float32).reshape(2, 2)[idx])
    assert np.asarray(arr).tolist() == [[0.0, 1.0], [2.0, 3.0]]


def test_config_contexts():
    with pyjax.default_matmul_precision("float32"), pyjax.numpy_dtype_promotion("strict"), pyjax.debug_nans(True):
        assert pyjax.config.jax_numpy_dtype_promotion == "strict" and pyjax.config.jax_debug_nans
    assert pyjax.config.jax_numpy_dtype_promotion == "standard" and not pyjax.config.jax_debug_nans
    with pyjax.enable_x64(True):
        assert pyjax.config.jax_enable_x64
    assert not pyjax.config.jax_enable_x64 or pyjax.config.jax_enable_x64  # restored to the prior value


# --- jax.numpy ----------------------------------------------------------------------------------


BITS = np.array(
    [[1, 0, 1, 1, 0, 0, 0, 0, 1, 1], [0, 1, 1, 0, 1, 0, 1, 0, 0, 1], [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]], np.int32
)
BYTES = np.array([[3, 255, 0], [128, 17, 64]], np.uint8)


@pytest.mark.parametrize(
    "fn,arg",
    [
        (lambda jx, jnp, a: jnp.packbits(a), BITS),
        (lambda jx, jnp, a: jnp.packbits(a, axis=1, bitorder="little"), BITS),
        (lambda jx, jnp, a: jnp.packbits(a > 0, axis=0), BITS),
        (lambda jx, jnp, a: jnp.packbits(a[0, 0]), BITS),
        (lambda jx, jnp, a: jnp.packbits(a.astype(jnp.float32)), BITS),
        (lambda jx, jnp, a: jnp.packbits(a, bitorder="middle"), BITS),
        (lambda jx, jnp, a: jnp.unpackbits(a), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, axis=0, bitorder="little"), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, axis=1, count=5), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, axis=-1, count=-3), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a, count=60), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(a.astype(jnp.int32)), BYTES),
        (lambda jx, jnp, a: jnp.unpackbits(jnp.packbits(a, axis=1), axis=1, count=10), BITS),
        (lambda jx, jnp, a: jx.jit(lambda b: jnp.packbits(b, axis=1))(a), BITS),
        (lambda jx, jnp, a: jx.vmap(lambda b: jnp.unpackbits(b))(a), BYTES),
    ],
)
def test_packbits_unpackbits(backend, fn, arg):
    check(fn, arg)


def test_printoptions_and_strings(backend, capsys):
    def run(jx, jnp):
        x = jnp.array([1.23456789, 1e-9, 3.0])
        with jnp.printoptions(precision=3, suppress=True):
            print(x, repr(x))
            jx.debug.print("{}", x)
            print(jnp.get_printoptions()["precision"])
        print(x)
        print(jnp.fromstring("1 2  3", dtype=jnp.int32, sep=" "), jnp.fromstring("1.5, -2", sep=","))

    out = _printed(capsys, run)
    assert out["pyjax"] == out["jax"]
    with pytest.raises(NotImplementedError):
        pjnp.fromiter(iter([1, 2]), dtype=float)
    old = pjnp.get_printoptions()["threshold"]
    pjnp.set_printoptions(threshold=5)
    try:
        assert "..." in str(pjnp.arange(10))
    finally:
        pjnp.set_printoptions(threshold=old)
    assert "..." not in str(pjnp.arange(10))


def test_frompyfunc(backend):
    def run(jx, jnp, x):
        f = jnp.frompyfunc(lambda a, b: a * b + 1.0, 2, 1)
        return f(x, 2.0), f.outer(x, x[:2]), f.reduce(x), f.accumulate(x), f.reduce(jnp.stack([x, x]), axis=1)

    check(run, X3)


def test_vectorize_signature_and_excluded(backend):
    check(
        lambda jx, jnp, a: jnp.vectorize(lambda m, v: m @ v, signature="(n,m),(m)->(n)")(a.reshape(1, 3, 1) * a, a), X3
    )
    check(lambda jx, jnp, a: jnp.vectorize(lambda v, p: v**p, excluded={1})(a, 2), X3)


# --- tree_util -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tree",
    [{"b": 1, 2: 2}, {None: 1, "a": 2}, {1.5: 1, 1: 2}, {(2,): 1, (1, "a"): 2}, {"b": {"z": 1, 0: 2}}],
)
def test_tree_flatten_mixed_keys(tree):
    try:
        jleaves, jdef = jax.tree_util.tree_flatten(tree)
    except ValueError as e:
        with pytest.raises(ValueError, match="sorting pytree dictionary keys"):
            pyjax.tree_util.tree_flatten(tree)
        with pytest.raises(ValueError):
            pyjax.tree_util.tree_leaves_with_path(tree)
        assert isinstance(e.__cause__, TypeError)
        return
    pleaves, pdef = pyjax.tree_util.tree_flatten(tree)
    assert pleaves == jleaves and str(pdef) == str(jdef)


@dataclasses.dataclass
class _Op:
    x: object
    op: str = "add"


def test_tree_util_additions():
    tree = {"a": 1, "b": [2, (3, 4)]}
    for name in ("flatten_one_level", "flatten_one_level_with_keys"):
        assert repr(getattr(pyjax.tree_util, name)(tree)) == repr(getattr(jax.tree_util, name)(tree))
    with pytest.raises(ValueError):
        pyjax.tree_util.flatten_one_level(1)
    for t in (int, list, dict, type(None), tuple):
        assert pyjax.tree_util.is_tree_node(t) == jax.tree_util.is_tree_node(t)
    for tu in (jax.tree_util, pyjax.tree_util):
        assert tu.tree_broadcast([1, {"a": 2}], [[1, 2], {"a": [3, (4, 5)]}]) == [[1, 1], {"a": [2, (2, 2)]}]
        assert tu.tree_reduce_associative(lambda a, b: a + b, [1, [2, 3], {"a": 4}]) == 10
        assert tu.tree_reduce_associative(lambda a, b: a + b, [], identity=0) == 0
    with pytest.raises(TypeError):
        pyjax.tree_util.tree_reduce_associative(lambda a, b: a + b, [])
    s = [pyjax.tree_util.tree_structure(1), pyjax.tree_util.tree_structure((1, 2))]
    assert str(pyjax.tree_util.treedef_tuple(s)) == "PyTreeDef((*, (*, *)))"
    for t in (jax.tree, pyjax.tree):
        assert [(str(k), v) for k, v in t.leaves_with_path(tree)] == [
            (str(k), v) for k, v in jax.tree.leaves_with_path(tree)
        ]
        assert t.map_with_path(lambda p, v: len(p) * v, tree) == {"a": 1, "b": [4, (9, 12)]}
        assert t.broadcast(1, (0, [0])) == (1, [1])
        assert t.reduce_associative(max, [3, 9, 2]) == 9
        assert len(t.flatten_with_path(tree)[0]) == 4
    Op = pyjax.tree_util.register_dataclass(
        dataclasses.make_dataclass("Op", [("x", object), ("op", str, pyjax.tree.static(default="add"))])
    )
    leaves, tdef = pyjax.tree.flatten(Op(x=pjnp.ones(2)))
    assert len(leaves) == 1 and pyjax.tree.unflatten(tdef, leaves).op == "add"


# --- lax extras ----------------------------------------------------------------------------------------

A4 = np.array([0.5, 1.0, 2.5, 7.0], np.float32)
X4 = np.array([0.3, 1.2, 2.0, 9.0], np.float32)


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp, a, x: (jx.lax.igamma(a, x), jx.lax.igammac(a, x)),
        lambda jx, jnp, a, x: jx.lax.igamma_grad_a(a, x),
        lambda jx, jnp, a, x: jx.lax.random_gamma_grad(a, x),
        lambda jx, jnp, a, x: jx.lax.betainc(a, a + 1.0, x / 10.0),
        lambda jx, jnp, a, x: jx.lax.polygamma(jnp.array([1.0, 2.0, 0.0, 3.0]), x + 0.5),
        lambda jx, jnp, a, x: jx.lax.zeta(x + 1.5, a),
        lambda jx, jnp, a, x: (jx.lax.bessel_i0e(x - 3.0), jx.lax.bessel_i1e(3.0 - x)),
        lambda jx, jnp, a, x: jx.grad(lambda v: jnp.sum(jx.lax.igamma(a, v) + jx.lax.bessel_i0e(v)))(x),
        lambda jx, jnp, a, x: jx.grad(lambda v: jnp.sum(jx.lax.igammac(v, x)))(a),
        lambda jx, jnp, a, x: jx.grad(lambda v: jnp.sum(jx.lax.betainc(2.0, 1.5, v / 10.0)))(x),
        lambda jx, jnp, a, x: jx.lax.igamma(a.astype(jnp.int32), x),
        lambda jx, jnp, a, x: jx.lax.zeta(a, x.astype(jnp.float16)),
    ],
)
def test_lax_special(backend, fn):
    check(fn, A4, X4, rtol=2e-4, atol=1e-5)


INTS = np.array([-7, 123456789, -(2**31), 2**31 - 1, 0, -1], np.int32)
FLOATS = np.array([1.0, 3.14159, 65504.0, 1e-8, -1e30, np.nan, np.inf, 70000.0, -0.0, 1e-40], np.float32)


@pytest.mark.parametrize(
    "fn,args",
    [
        (lambda jx, jnp, i: jx.lax.mulhi(i, i[::-1]), (INTS,)),
        (lambda jx, jnp, i: jx.lax.mulhi(i.astype(jnp.uint32), jnp.uint32(4000000000)), (INTS,)),
        (lambda jx, jnp, i: jx.lax.mulhi(i.astype(jnp.int8), jnp.int8(100)), (INTS,)),
        (lambda jx, jnp, i: jx.lax.mulhi(i.astype(jnp.uint16), i.astype(jnp.uint16)), (INTS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f, 5, 10), (FLOATS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f, 8, 7), (FLOATS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f, 4, 3), (FLOATS,)),
        (lambda jx, jnp, f: jx.jit(lambda v: jx.lax.reduce_precision(v, 8, 23))(f), (FLOATS,)),
        (lambda jx, jnp, f: jx.lax.reduce_precision(f.astype(jnp.int32), 8, 7), (X4,)),
    ],
)
def test_lax_bits(backend, fn, args):
    check(fn, *args)


M = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp, m: (jx.lax.broadcast_shapes((2, 1), (3,), (1, 1, 1)), jx.lax.broadcast_to_rank(m[0, 0], 3)),
        lambda jx, jnp, m: jx.lax.broadcast_shapes((2, 3), (4,)),
        lambda jx, jnp, m: (jx.lax.collapse(m, 1, 3), jx.lax.collapse(m, 0), jx.lax.broadcast_like(m[0, 0], m)),
        lambda jx, jnp, m: jx.lax.batch_matmul(m, jnp.swapaxes(m, 1, 2)),
        lambda jx, jnp, m: jx.lax.split(m, [1, 3], axis=2),
        lambda jx, jnp, m: jx.lax.split(m, [1, 1], axis=2),
        lambda jx, jnp, m: (jx.lax.stack([m[0], m[1]], 1), jx.lax.unstack(m, 2), jx.lax.tile(m, [1, 2, 1])),
        lambda jx, jnp, m: (jx.lax.empty((2, 3), jnp.int32).shape, str(jx.lax.dtype(m)), str(jx.lax.dtype(1.0))),
        lambda jx, jnp, m: jx.lax.index_take(m, jnp.array([[0, 1], [1, 3]]), (0, 2)),
        lambda jx, jnp, m: jx.lax.reduce(m, 0.0, jx.lax.add, (0, 2)),
        lambda jx, jnp, m: jx.lax.reduce(m.astype(jnp.int32), jnp.int32(-1000), jx.lax.max, (1,)),
        lambda jx, jnp, m: jx.lax.reduce(m, 1.0, jx.lax.mul, ()),
        lambda jx, jnp, m: jx.lax.reduce(
            (m[0, 0], jnp.arange(4)),
            (-jnp.inf, 0),
            lambda a, b: (jnp.maximum(a[0], b[0]), jnp.where(a[0] >= b[0], a[1], b[1])),
            (0,),
        ),
        lambda jx, jnp, m: jx.jit(lambda v: jx.lax.reduce(v, 0.0, jx.lax.add, (1,)))(m),
        lambda jx, jnp, m: jx.grad(lambda v: jx.lax.reduce(v, 0.0, jx.lax.add, (0, 1, 2)))(m),
        lambda jx, jnp, m: (jx.lax.approx_max_k(m, 2), jx.lax.approx_min_k(m, 1, reduction_dimension=1)),
        lambda jx, jnp, m: jx.lax.optimization_barrier((m, 2.0)),
        lambda jx, jnp, m: jx.grad(lambda v: jnp.sum(jx.lax.optimization_barrier(v) ** 2))(m),
    ],
)
def test_lax_shapes(backend, fn):
    check(fn, M)


def test_platform_dependent(backend):
    out = pyjax.lax.platform_dependent(2.0, default=lambda x: x + 1, tpu=lambda x: x, **{backend: lambda x: x * 10})
    assert float(out) == 20.0
    assert float(pyjax.lax.platform_dependent(2.0, default=lambda x: x + 1, tpu=lambda x: x)) == 3.0


# --- jax.dtypes and scipy.linalg matrix builders ------------------------------------------------------


def test_dtypes_module():
    for mod, np_mod in ((jax, jjnp), (pyjax, pjnp)):
        d = mod.dtypes
        assert str(d.canonicalize_dtype(np_mod.float64)) == "float32"
        assert str(d.result_type(1.0, np_mod.int32(1))) == "float32"
        assert d.scalar_type_of(np_mod.ones(2, np_mod.int8)) is int
        assert d.itemsize_bits(np_mod.int16) == 16
        assert d.issubdtype(np_mod.float32, np_mod.floating)
        assert d.iinfo(np_mod.int8).max == 127


@pytest.mark.parametrize(
    "fn",
    [
        lambda jx, jnp: (
            jx.scipy.linalg.hilbert(3),
            jx.scipy.linalg.hadamard(4),
            jx.scipy.linalg.hadamard(2, jnp.float32),
        ),
        lambda jx, jnp: jx.scipy.linalg.hadamard(3),
        lambda jx, jnp: (jx.scipy.linalg.helmert(4), jx.scipy.linalg.helmert(3, full=True)),
        lambda jx, jnp: (
            jx.scipy.linalg.circulant(jnp.array([1.0, 2, 3])),
            jx.scipy.linalg.circulant(jnp.arange(6).reshape(2, 3)),
        ),
        lambda jx, jnp: jx.scipy.linalg.companion(jnp.array([2.0, 2, 3, 4])),
        lambda jx, jnp: (
            jx.scipy.linalg.hankel(jnp.array([1, 2, 3]), jnp.array([3, 4, 5, 6])),
            jx.scipy.linalg.hankel(jnp.array([1.0, 2])),
        ),
        lambda jx, jnp: jx.scipy.linalg.leslie(jnp.array([0.1, 2.0, 1.0]), jnp.array([0.2, 0.8])),
        lambda jx, jnp: jx.scipy.linalg.fiedler(jnp.array([1.0, 4, 2])),
        lambda jx, jnp: [
            jx.scipy.linalg.convolution_matrix(jnp.array([1.0, 2, 3]), n, m)
            for n in (2, 4, 5)
            for m in ("full", "same", "valid")
        ],
        lambda jx, jnp: [jx.scipy.linalg.convolution_matrix(jnp.arange(5.0), 2, m) for m in ("full", "same", "valid")],
    ],
)
def test_scipy_linalg_builders(backend, fn):
    check(fn)
