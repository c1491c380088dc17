"""Differential tests of the kernel compiler: views, the index simplifier, fusion decisions.

Random movement-op chains and random expression graphs are evaluated by the cpu backend
(numpy and pure-Python paths) and compared with numpy applying the same operations.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pyjax
import pyjax.numpy as jnp
from pyjax.backends.cpu import numpy_eval, python_eval
from pyjax.compiler import ir, lowering
from pyjax.compiler.lowering import Lazy, source_load
from pyjax.compiler.partition import KernelStep, Partitioner, compile_jaxpr
from pyjax.compiler.views import ShapeTracker
from pyjax.core import dtypes
from pyjax.interpreters import staging

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# --- movement chains --------------------------------------------------------------------------


@st.composite
def movement_chain(draw):
    ndim = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(ndim))
    ops = []
    cur = shape
    for _ in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["permute", "reshape", "expand", "shrink", "flip", "stride", "pad"]))
        nd = len(cur)
        if kind == "permute":
            perm = tuple(draw(st.permutations(range(nd))))
            ops.append((kind, perm))
            cur = tuple(cur[p] for p in perm)
        elif kind == "reshape":
            n = math.prod(cur)
            # split into a random factorization of n
            dims, rest = [], n
            while rest > 1 and len(dims) < 3:
                divs = [d for d in range(2, rest + 1) if rest % d == 0]
                d = draw(st.sampled_from(divs))
                dims.append(d)
                rest //= d
            new = tuple(dims) + ((rest,) if rest > 1 else ())
            new = new or (1,)
            if draw(st.booleans()):
                new = new + (1,)
            ops.append((kind, new))
            cur = new
        elif kind == "expand":
            ones = [i for i, s in enumerate(cur) if s == 1]
            if not ones:
                continue
            new = tuple(draw(st.integers(1, 3)) if i in ones else s for i, s in enumerate(cur))
            ops.append((kind, new))
            cur = new
        elif kind == "shrink":
            bounds = []
            for s in cur:
                b = draw(st.integers(0, s - 1))
                e = draw(st.integers(b + 1, s))
                bounds.append((b, e))
            ops.append((kind, tuple(bounds)))
            cur = tuple(e - b for b, e in bounds)
        elif kind == "flip":
            axes = tuple(i for i in range(nd) if draw(st.booleans()))
            ops.append((kind, axes))
        elif kind == "stride":
            ax = draw(st.integers(0, nd - 1))
            step = draw(st.integers(1, 3))
            ops.append((kind, (ax, step)))
            cur = tuple((s + step - 1) // step if i == ax else s for i, s in enumerate(cur))
        elif kind == "pad":
            pads = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(nd))
            ops.append((kind, pads))
            cur = tuple(s + lo + hi for s, (lo, hi) in zip(cur, pads))
    return shape, ops


def _apply_numpy(a, ops):
    for kind, arg in ops:
        if kind == "permute":
            a = np.transpose(a, arg)
        elif kind == "reshape":
            a = np.reshape(a, arg)
        elif kind == "expand":
            a = np.broadcast_to(a, arg)
        elif kind == "shrink":
            a = a[tuple(slice(b, e) for b, e in arg)]
        elif kind == "flip":
            a = np.flip(a, arg) if arg else a
        elif kind == "stride":
            ax, step = arg
            idx = [slice(None)] * a.ndim
            idx[ax] = slice(None, None, step)
            a = a[tuple(idx)]
        elif kind == "pad":
            a = np.pad(a, arg)
    return a


def _apply_tracker(tr, ops):
    for kind, arg in ops:
        if kind == "permute":
            tr = tr.permute(arg)
        elif kind == "reshape":
            tr = tr.reshape(arg)
        elif kind == "expand":
            tr = tr.expand(arg)
        elif kind == "shrink":
            tr = tr.shrink(arg)
        elif kind == "flip":
            tr = tr.flip(arg)
        elif kind == "stride":
            tr = tr.stride(*arg)
        elif kind == "pad":
            tr = tr.pad(arg)
    return tr


@SETTINGS
@given(movement_chain())
def test_shape_tracker_matches_numpy(chain):
    shape, ops = chain
    base = np.arange(1, math.prod(shape) + 1, dtype=np.float32).reshape(shape)
    want = _apply_numpy(base, ops)
    tr = _apply_tracker(ShapeTracker.contiguous(shape), ops)
    assert tr.shape == want.shape
    kernel, _ = lowering.to_kernel(source_load(0, tr, dtypes.float32))
    got = numpy_eval.run_kernel(kernel, [base.reshape(-1)]).reshape(want.shape)
    np.testing.assert_array_equal(got, want)
    if want.size <= 64:
        got_py = np.array(python_eval.run_kernel(kernel, [base.reshape(-1).tolist()]), np.float32)
        np.testing.assert_array_equal(got_py.reshape(want.shape), want)


@SETTINGS
@given(movement_chain())
def test_movement_through_expressions(chain):
    """Movement ops pushed through elementwise expressions and iotas (lowering._move)."""
    shape, ops = chain
    base = np.linspace(-2, 2, math.prod(shape), dtype=np.float32).reshape(shape)
    x = source_load(0, ShapeTracker.contiguous(shape), dtypes.float32)
    io = lowering._iota(None, dtype=dtypes.float32, shape=shape, dimension=len(shape) - 1)
    lz = lowering.elementwise(None, [x, io], lambda a, b: ir.alu("add", ir.alu("mul", a, a), b))
    ctx = Partitioner(1)
    for kind, arg in ops:
        if kind == "permute":
            lz = lowering.permute(ctx, lz, arg)
        elif kind == "reshape":
            lz = lowering.reshape(ctx, lz, arg)
        elif kind == "expand":
            lz = lowering.broadcast_in_dim(ctx, lz, arg, tuple(range(len(arg))))
        elif kind == "shrink":
            lz = lowering.shrink(ctx, lz, arg)
        elif kind == "flip":
            lz = lowering.flip(ctx, lz, arg)
        elif kind == "stride":
            steps = [1] * len(lz.shape)
            steps[arg[0]] = arg[1]
            lz = lowering.stride(ctx, lz, steps)
        elif kind == "pad":
            lz = lowering.pad_zero(ctx, lz, arg)
    io_np = np.broadcast_to(np.arange(shape[-1], dtype=np.float32), shape)
    want = _apply_numpy(base * base + io_np, ops)
    kernel, _ = lowering.to_kernel(lz)
    got = numpy_eval.run_kernel(kernel, [base.reshape(-1)]).reshape(want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-6)


# --- index simplifier soundness ---------------------------------------------------------------


@st.composite
def int_expr(draw, nvars=2, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.booleans()):
            return ("idx", draw(st.integers(0, nvars - 1)))
        return ("const", draw(st.integers(0, 12)))
    op = draw(st.sampled_from(["add", "mul", "idiv", "mod", "sub"]))
    a = draw(int_expr(nvars, depth - 1))
    if op in ("idiv", "mod", "mul"):
        b = ("const", draw(st.integers(1, 9)))
    else:
        b = draw(int_expr(nvars, depth - 1))
    return (op, a, b)


def _build(e, simplify):
    if e[0] == "idx":
        return ir.idx(e[1])
    if e[0] == "const":
        return ir.const(e[1], dtypes.int32)
    a, b = _build(e[1], simplify), _build(e[2], simplify)
    if simplify:
        return ir.alu(e[0], a, b)
    return ir.node(e[0], dtypes.int32, (a, b))


def _eval(n, env):
    if n.op == "const":
        return n.arg
    if n.op == "idx":
        return env[n.arg]
    a, b = (_eval(s, env) for s in n.srcs)
    return {"add": a + b, "sub": a - b, "mul": a * b, "idiv": a // b if b else 0, "mod": a % b if b else 0}[n.op]


def _nonneg(e, env):
    """Evaluate the raw tree; None if a div/mod sees a negative operand (outside the IR's contract)."""
    if e[0] == "idx":
        return env[e[1]]
    if e[0] == "const":
        return e[1]
    a, b = _nonneg(e[1], env), _nonneg(e[2], env)
    if a is None or b is None:
        return None
    if e[0] in ("idiv", "mod"):
        if a < 0:
            return None
        return a // b if e[0] == "idiv" else a % b
    return {"add": a + b, "sub": a - b, "mul": a * b}[e[0]]


@SETTINGS
@given(int_expr(), st.tuples(st.integers(1, 6), st.integers(1, 6)))
def test_simplifier_is_sound(e, shape):
    with ir.shape_context(shape):
        simple = _build(e, True)
    for env in itertools.product(*[range(s) for s in shape]):
        want = _nonneg(e, env)
        if want is None:
            continue
        assert _eval(simple, env) == want, (e, env, ir.render(simple))


def test_simplifier_folds_reshape_roundtrip():
    with ir.shape_context((4, 6)):
        i, j = ir.idx(0), ir.idx(1)
        flat = i * 6 + j
        assert (flat // 6) is i
        assert (flat % 6) is j


# --- fusion decisions ---------------------------------------------------------------------------


def _program(f, *args):
    jaxpr, consts = staging.trace_to_jaxpr(lambda *a: [f(*a)], [pyjax.core.core.get_aval(a) for a in args])
    jaxpr = staging.close_over_consts(jaxpr, consts)
    specs = [(a.dtype, ShapeTracker.contiguous(a.shape)) for a in args]
    return compile_jaxpr(jaxpr, specs, lambda v, av: lowering.constant(v, av.dtype, av.shape))


def _kernels(prog):
    return [s for s in prog.steps if isinstance(s, KernelStep)]


def test_sum_of_exp_times_y_is_one_kernel():
    x, y = jnp.ones((8, 16)), jnp.ones((8, 16))
    prog = _program(lambda x, y: jnp.sum(jnp.exp(x) * y), x, y)
    assert len(_kernels(prog)) == 1
    k = _kernels(prog)[0].kernel
    assert k.reduce_op == "sum"


def test_elementwise_chain_is_one_kernel():
    x = jnp.ones((1024,))
    prog = _program(lambda x: jnp.tanh(x * 1.5 + 0.5) * jnp.exp(-x * x) + jnp.sin(x), x)
    assert len(_kernels(prog)) == 1


def test_reduction_epilogue_fuses():
    x = jnp.ones((4, 32))
    prog = _program(lambda x: jnp.sqrt(jnp.sum(x * x, axis=1)) + 1.0, x)
    assert len(_kernels(prog)) == 1


def test_matmul_with_bias_and_relu_is_one_kernel():
    a, b, c = jnp.ones((8, 4)), jnp.ones((4, 5)), jnp.ones((5,))
    prog = _program(lambda a, b, c: jnp.maximum(a @ b + c, 0.0), a, b, c)
    assert len(_kernels(prog)) == 1


def test_expensive_shared_value_is_materialized():
    x = jnp.ones((64,))

    def f(x):
        e = jnp.exp(jnp.sin(x))
        return jnp.sum(e) + jnp.max(e)

    prog = _program(f, x)
    # e is computed once, then the two reductions (+ the final add fused into one of them)
    assert len(_kernels(prog)) == 3


def test_cheap_value_two_routines_read_is_computed_once():
    x = jnp.ones((8, 16))

    def f(x):
        h = jnp.maximum(x, 0.0) * 2.0  # cheap: stays lazy, but each routine needs it as a buffer
        return jnp.sort(h, axis=1) + jnp.cumsum(h, axis=1)

    kernels = _kernels(_program(f, x))
    computes_h = [k for k in kernels if k.kernel.reduce_op is None and "max" in ir.render(k.kernel.epilogue)]
    assert len(computes_h) == 1, [k.kernel for k in kernels]


def test_views_of_inputs_need_no_kernel():
    x = jnp.ones((4, 6))
    prog = _program(lambda x: x.T[1:, ::2], x)
    assert not prog.steps and prog.outputs[0][0] == "buf"


def test_softmax_values_match_numpy():
    x = np.random.RandomState(0).randn(5, 7).astype(np.float32)
    f = pyjax.jit(
        lambda x: (
            jnp.exp(x - jnp.max(x, axis=1, keepdims=True))
            / jnp.sum(jnp.exp(x - jnp.max(x, axis=1, keepdims=True)), axis=1, keepdims=True)
        )
    )
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(np.asarray(f(x)), e / e.sum(1, keepdims=True), rtol=1e-6)


def test_lazy_is_repr():
    lz = Lazy((2,), dtypes.float32, ir.const(1.0, dtypes.float32))
    assert "Lazy" in repr(lz)
