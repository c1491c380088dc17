"""Convolutions and windowed reductions vs JAX: values, gradients, jit, vmap, errors, and the
window view / kernel shape they lower to."""

from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import pyjax
import pyjax.numpy as pjnp
from pyjax.compiler.views import ShapeTracker, View
from pyjax.core import dtypes
from tests.jax_compare import check

RTOL, ATOL = 2e-4, 2e-4


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _close(a, b, rtol=RTOL, atol=ATOL):
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), rtol=rtol, atol=atol)


def _shape_in(spec: str, sizes: dict) -> tuple:
    return tuple(sizes[c] for c in spec)


# --- the window view ----------------------------------------------------------------------------


def _read(tracker: ShapeTracker, buf: np.ndarray) -> np.ndarray:
    """Evaluate a tracker over a flat buffer by brute force (masked positions read 0)."""
    from pyjax.compiler import ir

    out = np.zeros(tracker.shape)
    for index in np.ndindex(*tracker.shape):
        with ir.shape_context(tracker.shape):
            off, ok = ir.view_index(tracker, tuple(ir.const(i, dtypes.int32) for i in index))
        if ok.arg:
            out[index] = buf[off.arg]
    return out


@pytest.mark.parametrize("n,k,step,dil", [(7, 3, 1, 1), (9, 2, 2, 3), (5, 5, 1, 1), (6, 3, 2, 2), (6, 1, 4, 1)])
def test_window_view(n, k, step, dil):
    buf = np.arange(3 * n, dtype=np.float64)
    tr = ShapeTracker.contiguous((3, n)).window(1, k, step, dil)
    ref = np.lib.stride_tricks.sliding_window_view(buf.reshape(3, n), (k - 1) * dil + 1, axis=1)[:, ::step, ::dil]
    assert tr.shape == ref.shape
    assert tr.single_strided
    np.testing.assert_array_equal(_read(tr, buf), ref)


def test_window_view_of_padded_axis_pushes_a_view():
    buf = np.arange(12, dtype=np.float64)
    tr = ShapeTracker.contiguous((3, 4)).pad(((0, 0), (1, 2))).window(1, 3, 2, 1)
    assert len(tr.views) == 2
    padded = np.pad(buf.reshape(3, 4), ((0, 0), (1, 2)))
    ref = np.lib.stride_tricks.sliding_window_view(padded, 3, axis=1)[:, ::2]
    np.testing.assert_array_equal(_read(tr, buf), ref)
    # a mask on another axis survives in place
    v = View((3, 4), (4, 1), 0, ((1, 3), (0, 4))).window(1, 2, 1, 1)
    assert v is not None and v.mask == ((1, 3), (0, 3), (0, 2))


# --- conv_general_dilated: values, gradients, jit, vmap ------------------------------------------

# (dimension numbers, lhs sizes, rhs sizes)
LAYOUTS_2D = [
    (None, "NCHW", "OIHW", "NCHW"),
    (("NHWC", "HWIO", "NHWC"), "NHWC", "HWIO", "NHWC"),
    (("NCHW", "HWIO", "NHWC"), "NCHW", "HWIO", "NHWC"),
    (("HWCN", "OIWH", "CNWH"), "HWCN", "OIWH", "CNWH"),
]

CASES_2D = [
    dict(window_strides=(1, 1), padding="VALID"),
    dict(window_strides=(2, 1), padding="SAME"),
    dict(window_strides=(1, 2), padding="SAME_LOWER"),
    dict(window_strides=(2, 3), padding=((1, 2), (0, 1)), rhs_dilation=(2, 1)),
    dict(window_strides=(1, 1), padding=((2, 1), (-1, 2)), lhs_dilation=(2, 3)),
    dict(window_strides=(2, 2), padding=((1, 1), (1, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 2)),
]


def _operands(layout, groups=1, bgroups=1, n=2, c=4, o=6, h=7, w=6, kh=3, kw=2, seed=0):
    _, lspec, rspec, _ = layout
    lhs = _rand(_shape_in(lspec, dict(N=n * bgroups, C=c * groups, H=h, W=w)), seed)
    rhs = _rand(_shape_in(rspec, dict(O=o * groups * bgroups, I=c, H=kh, W=kw)), seed + 1)
    return lhs, rhs


def _both(fn, *args):
    return fn(pyjax, *[pjnp.asarray(a) for a in args]), fn(jax, *[jjnp.asarray(a) for a in args])


@pytest.mark.parametrize("layout", LAYOUTS_2D, ids=lambda x: str(x[0]))
@pytest.mark.parametrize("case", range(len(CASES_2D)))
def test_conv2d_value_and_grads(backend, layout, case):
    kw = CASES_2D[case]
    dn = layout[0]
    lhs, rhs = _operands(layout)

    def f(lib, x, y):
        return lib.lax.conv_general_dilated(x, y, dimension_numbers=dn, **kw)

    pj, jx = _both(f, lhs, rhs)
    assert pj.shape == jx.shape and str(pj.dtype) == str(jx.dtype)
    _close(pj, jx)
    ct = _rand(jx.shape, 5)

    def g(lib, x, y):
        out, vjp = lib.vjp(lambda a, b: f(lib, a, b), x, y)
        return vjp(lib.numpy.asarray(ct))

    (pgl, pgr), (jgl, jgr) = _both(g, lhs, rhs)
    _close(pgl, jgl)
    _close(pgr, jgr)


@pytest.mark.parametrize("groups,bgroups", [(2, 1), (3, 1), (1, 2), (1, 3)])
@pytest.mark.parametrize("layout", LAYOUTS_2D[:3], ids=lambda x: str(x[0]))
@pytest.mark.parametrize("case", [0, 1, 3, 5])
def test_conv_groups_value_and_grads(backend, groups, bgroups, layout, case):
    kw = CASES_2D[case]
    dn = layout[0]
    lhs, rhs = _operands(layout, groups=groups, bgroups=bgroups, c=2, o=2)

    def f(lib, x, y):
        return lib.lax.conv_general_dilated(
            x, y, dimension_numbers=dn, feature_group_count=groups, batch_group_count=bgroups, **kw
        )

    pj, jx = _both(f, lhs, rhs)
    assert pj.shape == jx.shape
    _close(pj, jx)
    ct = _rand(jx.shape, 7)

    def g(lib, x, y):
        return lib.vjp(lambda a, b: f(lib, a, b), x, y)[1](lib.numpy.asarray(ct))

    (pgl, pgr), (jgl, jgr) = _both(g, lhs, rhs)
    _close(pgl, jgl)
    _close(pgr, jgr)


@pytest.mark.parametrize(
    "dn,lshape,rshape,kw",
    [
        (("NWC", "WIO", "NWC"), (2, 9, 3), (3, 3, 4), dict(window_strides=(2,), padding="SAME")),
        (None, (2, 3, 9), (4, 3, 2), dict(window_strides=(1,), padding=((2, 0),), rhs_dilation=(3,))),
        (
            ("NCDHW", "OIDHW", "NCDHW"),
            (1, 2, 5, 4, 6),
            (3, 2, 2, 3, 2),
            dict(window_strides=(1, 2, 1), padding="SAME", rhs_dilation=(1, 1, 2)),
        ),
        (
            ("NDHWC", "DHWIO", "NDHWC"),
            (2, 4, 5, 3, 2),
            (2, 2, 2, 2, 4),
            dict(window_strides=(2, 1, 1), padding=((0, 1), (1, 0), (1, 1)), lhs_dilation=(1, 2, 1)),
        ),
        (("NC", "IO", "NC"), (3, 4), (4, 5), dict(window_strides=(), padding=())),
    ],
)
def test_conv_1d_3d_0d(backend, dn, lshape, rshape, kw):
    lhs, rhs = _rand(lshape, 1), _rand(rshape, 2)

    def f(lib, x, y):
        return lib.lax.conv_general_dilated(x, y, dimension_numbers=dn, **kw)

    pj, jx = _both(f, lhs, rhs)
    assert pj.shape == jx.shape
    _close(pj, jx)

    def loss(lib, x, y):
        return lib.numpy.sum(lib.numpy.sin(f(lib, x, y)))

    pg, jg = _both(lambda lib, x, y: lib.grad(lambda a, b: loss(lib, a, b), argnums=(0, 1))(x, y), lhs, rhs)
    _close(pg[0], jg[0])
    _close(pg[1], jg[1])


def test_conv_jvp_and_jit(backend):
    lhs, rhs = _operands(LAYOUTS_2D[1])
    tl, tr = _rand(lhs.shape, 3), _rand(rhs.shape, 4)
    dn = LAYOUTS_2D[1][0]

    def f(lib, x, y):
        return lib.nn.relu(lib.lax.conv_general_dilated(x, y, (2, 1), "SAME", dimension_numbers=dn)) * 2.0

    def j(lib, x, y, a, b):
        return lib.jvp(lambda p, q: f(lib, p, q), (x, y), (a, b))

    (pp, pt), (jp, jt) = _both(j, lhs, rhs, tl, tr)
    _close(pp, jp)
    _close(pt, jt)
    pj, jx = _both(lambda lib, x, y: lib.jit(lambda a, b: f(lib, a, b))(x, y), lhs, rhs)
    _close(pj, jx)
    pg, jg = _both(
        lambda lib, x, y: lib.jit(lib.grad(lambda a, b: lib.numpy.sum(f(lib, a, b) ** 2), argnums=(0, 1)))(x, y),
        lhs,
        rhs,
    )
    _close(pg[0], jg[0], rtol=1e-3, atol=1e-3)
    _close(pg[1], jg[1], rtol=1e-3, atol=1e-3)


def test_conv_second_order(backend):
    lhs, rhs = _rand((1, 2, 5, 5), 1), _rand((3, 2, 2, 2), 2)

    def f(lib, x, y):
        def loss(a):
            return lib.numpy.sum(lib.numpy.tanh(lib.lax.conv(a, y, (1, 1), "SAME")))

        return lib.grad(lambda a: lib.numpy.sum(lib.grad(loss)(a) ** 2))(x)

    pj, jx = _both(f, lhs, rhs)
    _close(pj, jx, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("groups,bgroups", [(1, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1)])
@pytest.mark.parametrize("layout", [LAYOUTS_2D[0], LAYOUTS_2D[2]], ids=lambda x: str(x[0]))
def test_conv_vmap(backend, groups, bgroups, in_axes, layout):
    dn = layout[0]
    lhs, rhs = _operands(layout, groups=groups, bgroups=bgroups, c=2, o=2, h=5, w=4)
    V = 3
    lb = np.stack([lhs + i for i in range(V)], axis=in_axes[0]) if in_axes[0] is not None else lhs
    rb = np.stack([rhs * (i + 1) for i in range(V)], axis=in_axes[1]) if in_axes[1] is not None else rhs

    def f(lib, x, y):
        conv = lambda a, b: lib.lax.conv_general_dilated(  # noqa: E731
            a,
            b,
            (2, 1),
            ((1, 0), (1, 1)),
            rhs_dilation=(1, 2),
            dimension_numbers=dn,
            feature_group_count=groups,
            batch_group_count=bgroups,
        )
        return lib.vmap(conv, in_axes=in_axes)(x, y)

    pj, jx = _both(f, lb, rb)
    assert pj.shape == jx.shape
    _close(pj, jx)

    def g(lib, x, y):
        def loss(a, b):
            return lib.numpy.sum(lib.numpy.cos(f(lib, a, b)))

        return lib.grad(loss, argnums=(0, 1))(x, y)

    pg, jg = _both(g, lb, rb)
    _close(pg[0], jg[0])
    _close(pg[1], jg[1])


def test_conv_dtypes(backend):
    lhs, rhs = _rand((1, 2, 5, 5), 1), _rand((3, 2, 3, 3), 2)
    for dt in ("float16", "bfloat16", "float32"):
        check(
            lambda lib, np_, x, y: lib.lax.conv(x.astype(dt), y.astype(dt), (1, 1), "SAME"),
            lhs,
            rhs,
            rtol=5e-2,
            atol=5e-2,
        )
    li = np.random.RandomState(0).randint(-3, 4, (1, 2, 5, 5)).astype(np.int32)
    ri = np.random.RandomState(1).randint(-3, 4, (3, 2, 3, 3)).astype(np.int32)
    check(lambda lib, np_, x, y: lib.lax.conv(x, y, (1, 1), "VALID"), li, ri)
    check(
        lambda lib, np_, x, y: lib.lax.conv_general_dilated(x, y, (1, 1), "VALID", preferred_element_type=np_.float32),
        li,
        ri,
    )
    check(
        lambda lib, np_, x, y: lib.lax.conv_general_dilated(
            x.astype(np_.float16), y.astype(np_.float16), (1, 1), "SAME", preferred_element_type=np_.float32
        ),
        lhs,
        rhs,
        rtol=1e-2,
        atol=1e-2,
    )


def test_conv_wrappers(backend):
    lhs, rhs = _rand((2, 3, 8, 7), 1), _rand((4, 3, 3, 2), 2)
    check(lambda lib, np_, x, y: lib.lax.conv(x, y, (2, 2), "SAME"), lhs, rhs, rtol=RTOL, atol=ATOL)
    check(
        lambda lib, np_, x, y: lib.lax.conv_with_general_padding(x, y, (1, 2), ((1, 1), (2, 0)), (2, 1), (1, 2)),
        lhs,
        rhs,
        rtol=RTOL,
        atol=ATOL,
    )
    x, k = _rand((2, 5, 6, 3), 3), _rand((3, 2, 3, 4), 4)
    for pad in ("SAME", "VALID", ((1, 2), (0, 1))):
        for strides in ((1, 1), (2, 2), (2, 3)):
            for tk in (False, True):
                kk = k if not tk else _rand((3, 2, 4, 3), 5)
                check(
                    lambda lib, np_, a, b: lib.lax.conv_transpose(a, b, strides, pad, transpose_kernel=tk),
                    x,
                    kk,
                    rtol=RTOL,
                    atol=ATOL,
                )
    check(
        lambda lib, np_, a, b: lib.lax.conv_transpose(
            a, b, (2, 1), "SAME", rhs_dilation=(1, 2), dimension_numbers=("NCHW", "OIHW", "NCHW")
        ),
        _rand((1, 4, 5, 5), 6),
        _rand((3, 4, 2, 3), 7),
        rtol=RTOL,
        atol=ATOL,
    )
    check(
        lambda lib, np_, a: lib.lax.conv_general_dilated_patches(a, (2, 3), (1, 2), "SAME"), lhs, rtol=RTOL, atol=ATOL
    )
    pg, jg = _both(
        lambda lib, a, b: lib.grad(
            lambda u, v: lib.numpy.sum(lib.lax.conv_transpose(u, v, (2, 2), "SAME") ** 2), argnums=(0, 1)
        )(a, b),
        x,
        k,
    )
    _close(pg[0], jg[0], rtol=1e-3, atol=1e-3)
    _close(pg[1], jg[1], rtol=1e-3, atol=1e-3)


def test_conv_dimension_numbers_helpers():
    for spec in (("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("HWCN", "OIWH", "CNWH")):
        a = pyjax.lax.conv_dimension_numbers((1,) * 4, (1,) * 4, spec)
        b = jax.lax.conv_dimension_numbers((1,) * 4, (1,) * 4, spec)
        assert tuple(a) == tuple(tuple(s) for s in b)
    assert pyjax.lax.padtype_to_pads((7, 8), (3, 2), (2, 3), "SAME") == jax.lax.padtype_to_pads(
        (7, 8), (3, 2), (2, 3), "SAME"
    )
    assert pyjax.lax.padtype_to_pads((7, 8), (4, 2), (1, 3), "SAME_LOWER") == jax.lax.padtype_to_pads(
        (7, 8), (4, 2), (1, 3), "SAME_LOWER"
    )


@pytest.mark.parametrize(
    "args",
    [
        dict(lhs=(1, 4, 5, 5), rhs=(2, 3, 3, 3), kw=dict(feature_group_count=1)),  # channel mismatch
        dict(lhs=(1, 4, 5, 5), rhs=(3, 2, 3, 3), kw=dict(feature_group_count=2)),  # O not multiple of G
        dict(lhs=(3, 4, 5, 5), rhs=(4, 4, 3, 3), kw=dict(batch_group_count=2)),  # N not multiple of B
        dict(lhs=(2, 4, 5, 5), rhs=(4, 2, 3, 3), kw=dict(batch_group_count=2, feature_group_count=2)),
        dict(lhs=(1, 4, 5), rhs=(2, 4, 3, 3), kw={}),  # rank mismatch
        dict(lhs=(1, 4, 5, 5), rhs=(2, 4, 3, 3), kw=dict(dimension_numbers=("NCHW", "OIHW"))),
        dict(lhs=(1, 4, 5, 5), rhs=(2, 4, 3, 3), kw=dict(dimension_numbers=("NCHW", "OIHW", "NCXW"))),
        dict(lhs=(1, 4, 5, 5), rhs=(2, 4, 3, 3), kw=dict(lhs_dilation=(2, 2), padding="SAME")),
        dict(lhs=(1, 4, 5, 5), rhs=(2, 4, 3, 3), kw=dict(padding="FOO")),
    ],
)
def test_conv_errors(backend, args):
    kw = dict(args["kw"])
    padding = kw.pop("padding", "VALID")
    check(
        lambda lib, np_, x, y: lib.lax.conv_general_dilated(x, y, (1,) * (x.ndim - 2), padding, **kw),
        _rand(args["lhs"]),
        _rand(args["rhs"]),
    )


def test_conv_dtype_mismatch_error(backend):
    with pytest.raises(TypeError, match="same dtypes"):
        pyjax.lax.conv(pjnp.ones((1, 1, 3, 3)), pjnp.ones((1, 1, 2, 2), dtype=pjnp.float16), (1, 1), "VALID")


def test_conv_kernel_is_one_reduction():
    """The lowering is one sum Kernel whose body multiplies two loads (window view x kernel)."""

    def f(x, y):
        return pyjax.lax.conv_general_dilated(x, y, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    jaxpr = pyjax.make_jaxpr(f)(pjnp.ones((2, 6, 6, 3)), pjnp.ones((3, 3, 3, 4)))
    from pyjax.compiler import lowering
    from pyjax.compiler.views import ShapeTracker as ST
    from pyjax.core import dtypes

    class Ctx(lowering.Context):
        def __init__(self):
            self.kernels = []

        def materialize(self, x):
            k, _ = lowering.to_kernel(x)
            self.kernels.append(k)
            return lowering.source_load(("m", len(self.kernels)), ST.contiguous(x.shape), x.dtype)

    ctx = Ctx()
    lhs = lowering.source_load(0, ST.contiguous((2, 6, 6, 3)), dtypes.float32)
    rhs = lowering.source_load(1, ST.contiguous((3, 3, 3, 4)), dtypes.float32)
    eqn = jaxpr.jaxpr.eqns[0]
    out = lowering.rules["conv_general_dilated"](ctx, lhs, rhs, **eqn.params)
    assert ctx.kernels == []  # no padding: nothing materialized
    k, _ = lowering.to_kernel(out)
    assert k.reduce_op == "sum" and k.body.op == "mul"
    assert k.shape == (2, 4, 4, 4, 3, 3, 3) and k.reduce_axes == (4, 5, 6)
    loads = [s for s in k.body.srcs if s.op == "load"]
    assert len(loads) == 2 and all(s.arg[1].single_strided for s in loads)


# --- reduce_window ----------------------------------------------------------------------------

RW_CASES = [
    dict(window_dimensions=(2, 2), window_strides=(2, 2), padding="VALID"),
    dict(window_dimensions=(3, 3), window_strides=(1, 1), padding="SAME"),
    dict(window_dimensions=(3, 2), window_strides=(2, 1), padding=((1, 2), (0, 1))),
    dict(
        window_dimensions=(2, 3),
        window_strides=(1, 2),
        padding=((1, 0), (2, 1)),
        base_dilation=(2, 1),
        window_dilation=(1, 2),
    ),
    dict(window_dimensions=(1, 3), window_strides=(1, 1), padding=((0, 0), (-1, 2))),
]


@pytest.mark.parametrize("case", range(len(RW_CASES)))
@pytest.mark.parametrize("op", ["add", "max", "min", "mul"])
def test_reduce_window_value_and_grad(backend, case, op):
    kw = RW_CASES[case]
    x = _rand((5, 7), case) * 0.7 + (1.5 if op == "mul" else 0.0)
    init = {"add": 0.0, "max": -np.inf, "min": np.inf, "mul": 1.0}[op]

    def f(lib, a):
        return lib.lax.reduce_window(a, init, getattr(lib.lax, op), **kw)

    pj, jx = _both(f, x)
    assert pj.shape == jx.shape
    _close(pj, jx)
    ct = _rand(jx.shape, 9)
    t = _rand(x.shape, 11)
    pt, jt = _both(lambda lib, a, b: lib.jvp(lambda u: f(lib, u), (a,), (b,))[1], x, t)
    _close(pt, jt)
    pg = pyjax.vjp(lambda u: f(pyjax, u), pjnp.asarray(x))[1](pjnp.asarray(ct))
    try:
        jg = jax.vjp(lambda u: f(jax, u), jjnp.asarray(x))[1](jjnp.asarray(ct))
    except (NotImplementedError, TypeError, ValueError):
        # JAX has no max-pool VJP with window dilation or negative padding, and no product VJP:
        # check that pyjax's
        # vjp is the transpose of the (JAX-checked) jvp
        _close(np.vdot(np.asarray(pg[0]), t), np.vdot(ct, np.asarray(jt)))
        return
    _close(pg[0], jg[0])


def test_reduce_window_ties_pick_first(backend):
    x = np.array([[1.0, 1.0, 0.0], [1.0, 0.5, 1.0], [0.0, 1.0, 1.0]], np.float32)

    def f(lib, a):
        return lib.grad(
            lambda u: lib.numpy.sum(lib.lax.reduce_window(u, -lib.numpy.inf, lib.lax.max, (2, 2), (1, 1), "VALID"))
        )(a)

    pj, jx = _both(f, x)
    _close(pj, jx)


def test_reduce_window_pooling_jit_vmap(backend):
    x = _rand((3, 8, 8, 2), 4)

    def pool(lib, a):
        mx = lib.lax.reduce_window(a, -lib.numpy.inf, lib.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        av = lib.lax.reduce_window(a, 0.0, lib.lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME") / 9.0
        return lib.numpy.sum(mx**2) + lib.numpy.sum(lib.numpy.sin(av))

    pj, jx = _both(lambda lib, a: lib.jit(lib.value_and_grad(lambda u: pool(lib, u)))(a), x)
    _close(pj[0], jx[0])
    _close(pj[1], jx[1])

    def single(lib, a):
        return lib.lax.reduce_window(a, -lib.numpy.inf, lib.lax.max, (2, 2, 1), (2, 2, 1), "VALID")

    pv, jv = _both(lambda lib, a: lib.vmap(lambda u: single(lib, u), in_axes=3, out_axes=1)(a), x)
    _close(pv, jv)
    pg, jg = _both(lambda lib, a: lib.grad(lambda u: lib.numpy.sum(lib.vmap(lambda v: single(lib, v) ** 2)(u)))(a), x)
    _close(pg, jg)


def test_reduce_window_init_and_computations(backend):
    x = _rand((6, 5), 2)
    # non-identity init values, traced or concrete, and computations given as jnp functions
    check(
        lambda lib, np_, a: lib.lax.reduce_window(a, 1.5, lib.lax.add, (2, 2), (1, 1), ((1, 1), (0, 1))),
        x,
        rtol=RTOL,
        atol=ATOL,
    )
    check(lambda lib, np_, a: lib.lax.reduce_window(a, 0.25, lib.lax.max, (3, 2), (2, 1), "SAME"), x)
    check(lambda lib, np_, a: lib.lax.reduce_window(a, 0.0, np_.add, (2, 2), (1, 1), "VALID"), x, rtol=RTOL, atol=ATOL)
    check(
        lambda lib, np_, a: lib.lax.reduce_window(a, -np_.inf, lambda u, v: np_.maximum(u, v), (2, 2), (1, 1), "VALID"),
        x,
    )
    check(
        lambda lib, np_, a: lib.jit(lambda u, c: lib.lax.reduce_window(u, c, lib.lax.add, (2, 3), (1, 1), "SAME"))(
            a, np_.float32(0.5)
        ),
        x,
        rtol=RTOL,
        atol=ATOL,
    )
    xi = np.arange(30, dtype=np.int32).reshape(6, 5) % 7
    for op, init in (("add", 0), ("max", np.iinfo(np.int32).min), ("min", np.iinfo(np.int32).max), ("mul", 1)):
        check(
            lambda lib, np_, a: lib.lax.reduce_window(
                a, np_.int32(init), getattr(lib.lax, op), (2, 2), (1, 2), ((1, 0), (0, 1))
            ),
            xi,
        )
    xb = xi > 3
    check(lambda lib, np_, a: lib.lax.reduce_window(a, False, lib.lax.bitwise_or, (2, 2), (1, 1), "VALID"), xb)
    check(lambda lib, np_, a: lib.lax.reduce_window(a, True, lib.lax.bitwise_and, (2, 2), (1, 1), "SAME"), xb)


def test_reduce_window_errors(backend):
    x = pjnp.ones((4, 4))
    with pytest.raises(TypeError):
        pyjax.lax.reduce_window(x, 0.0, pyjax.lax.add, (2,))
    with pytest.raises(ValueError, match="same tree structure"):
        pyjax.lax.reduce_window((x, x), (0.0,), lambda a, b: a, (2, 2))


def _argmax_pair(lax):
    def comp(a, b):
        pick = a[0] >= b[0]
        return lax.select(pick, a[0], b[0]), lax.select(pick, a[1], b[1])

    return comp


def test_reduce_window_variadic_and_any_computation(backend):
    """Several operands with a tuple computation (a windowed argmax), and a computation that is no
    monoid (padding and dilation holes are skipped, the init seeds each window once), as JAX."""
    x = np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8]], np.float32)
    idx = np.arange(12, dtype=np.int32).reshape(3, 4)
    inits = (np.float32(-np.inf), np.int32(-1))
    for win, strides, pad, bdil, wdil in (
        ((2, 2), (1, 1), "SAME", None, None),
        ((2, 2), (1, 2), ((1, 0), (0, 1)), (1, 2), (2, 1)),
    ):
        check(
            lambda lib, np_, a, i: lib.lax.reduce_window(
                (a, i), inits, _argmax_pair(lib.lax), win, strides, pad, base_dilation=bdil, window_dilation=wdil
            ),
            x,
            idx,
        )
    check(
        lambda lib, np_, a: lib.lax.reduce_window(
            a, np_.float32(0.5), lambda u, v: u + v + u * v, (2, 2), (1, 1), "SAME"
        ),
        x / 10,
    )
    check(
        lambda lib, np_, a, i: lib.jit(
            lambda a: lib.lax.reduce_window((a, i), inits, _argmax_pair(lib.lax), (2, 2), (1, 1), "SAME")
        )(a),
        x,
        idx,
    )


def test_avg_pool_grad_3d_with_dilation(backend):
    x = _rand((2, 6, 5, 4), 8)

    def f(lib, a):
        def loss(u):
            y = lib.lax.reduce_window(
                u,
                0.0,
                lib.lax.add,
                (1, 2, 3, 2),
                (1, 2, 1, 2),
                ((0, 0), (1, 1), (2, 0), (0, 1)),
                base_dilation=(1, 1, 2, 1),
                window_dilation=(1, 2, 1, 1),
            )
            return lib.numpy.sum(y * y)

        return lib.grad(loss)(a)

    pj, jx = _both(f, x)
    _close(pj, jx, rtol=1e-3, atol=1e-3)


# --- jnp.convolve / correlate ---------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("na,nv", [(7, 3), (3, 7), (5, 5), (6, 1), (4, 2)])
def test_convolve_correlate(backend, mode, na, nv):
    a, v = _rand((na,), 1), _rand((nv,), 2)
    check(lambda lib, np_, x, y: np_.convolve(x, y, mode=mode), a, v, rtol=RTOL, atol=ATOL)
    check(lambda lib, np_, x, y: np_.correlate(x, y, mode=mode), a, v, rtol=RTOL, atol=ATOL)
    pg, jg = _both(
        lambda lib, x, y: lib.grad(
            lambda p, q: lib.numpy.sum(lib.numpy.convolve(p, q, mode=mode) ** 2), argnums=(0, 1)
        )(x, y),
        a,
        v,
    )
    _close(pg[0], jg[0])
    _close(pg[1], jg[1])


def test_convolve_dtypes_and_errors(backend):
    ai = np.arange(5, dtype=np.int32)
    check(lambda lib, np_, x: np_.convolve(x, x), ai)
    check(lambda lib, np_, x: np_.correlate(x, x[:3], mode="same"), ai)
    check(lambda lib, np_, x: np_.convolve(x, x.astype(np_.float32)), ai, rtol=RTOL, atol=ATOL)
    check(lambda lib, np_, x: np_.convolve(x.reshape(1, 5), x), ai)
    check(lambda lib, np_, x: np_.convolve(x[:0], x), ai)
    check(lambda lib, np_, x: np_.convolve(x, x, mode="bogus"), ai)


SHAPE_CASES = [
    ((8, 3, 32, 32), (16, 3, 3, 3), (1, 1), "SAME", ("NCHW", "OIHW", "NCHW")),
    ((-1, 28, 28, 1), (5, 5, 1, 4), (2, 2), "VALID", ("NHWC", "HWIO", "NHWC")),  # stax's unknown batch
    ((4, 9, 7, 2), (3, 2, 2, 6), (2, 3), [(1, 2), (0, 1)], ("NHWC", "HWIO", "NHWC")),
    ((4, 10, 3), (3, 3, 5), (2,), "SAME", ("NHC", "HIO", "NHC")),
    ((4, 10, 3), (3, 3, 5), (2,), [(1, 1), (2, 2)], ("NHC", "HIO", "NHC")),  # wrong number of pads
]


@pytest.mark.parametrize("name", ["conv_general_shape_tuple", "conv_transpose_shape_tuple"])
@pytest.mark.parametrize("case", range(len(SHAPE_CASES)))
def test_conv_shape_tuples(name, case):
    """lax's conv output-shape helpers (stax builds on them) give JAX's shapes and errors."""
    args = SHAPE_CASES[case]
    try:
        want = tuple(int(d) for d in getattr(jax.lax, name)(*args))
    except Exception as e:
        with pytest.raises(type(e)):
            getattr(pyjax.lax, name)(*args)
        return
    assert getattr(pyjax.lax, name)(*args) == want


rng = np.random.default_rng(7)


def _r(*shape):
    return rng.standard_normal(shape).astype(np.float32)


TOL = dict(rtol=1e-4, atol=1e-4)


# --- conv_general_dilated_local -----------------------------------------------------------------

LOCAL_CASES = [
    (("NCHW", "OIHW", "NCHW"), (2, 3, 6, 5), (4, 12, 5, 4), (2, 2), (1, 1), "VALID", None, None),
    (("NHWC", "HWIO", "NHWC"), (2, 6, 5, 3), (3, 5, 18, 4), (3, 2), (2, 1), "SAME", None, None),
    (None, (2, 3, 7), (4, 9, 6), (3,), (1,), ((1, 0),), None, None),
    (None, (1, 2, 7), (3, 4, 5), (2,), (1,), "VALID", None, (2,)),
]


@pytest.mark.parametrize("case", range(len(LOCAL_CASES)))
def test_conv_general_dilated_local(backend, case):
    dn, ls, rs, fs, st, pad, ld, rd = LOCAL_CASES[case]
    lhs, rhs = _r(*ls), _r(*rs)

    def f(jx, jnp, lhs, rhs):
        return jx.lax.conv_general_dilated_local(lhs, rhs, st, pad, fs, ld, rd, dn)

    check(f, lhs, rhs, **TOL)
    check(lambda jx, jnp, a, b: jx.grad(lambda a, b: jnp.sum(f(jx, jnp, a, b) ** 2), (0, 1))(a, b), lhs, rhs, **TOL)
