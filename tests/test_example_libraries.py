"""pyjax.example_libraries (optimizers, stax) against jax.example_libraries: the same public names
and signatures, the same OptimizerState pytree, the same parameters after update steps (eager,
jit, schedules), the same stax parameters for a key and the same outputs, a training loop with
JAX's loss curve, and JAX's error types."""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as jopt
from jax.example_libraries import stax as jstax

import pyjax
import pyjax.numpy as pjnp
from pyjax.example_libraries import optimizers as popt
from pyjax.example_libraries import stax as pstax

import jax_compare  # noqa: F401  (keeps JAX's XLA compilations in a persistent cache)

_JAX_CACHE: dict = {}


def _jax_once(key, compute):
    """JAX's reference result, computed once per process (backends share it)."""
    if key not in _JAX_CACHE:
        _JAX_CACHE[key] = compute()
    return _JAX_CACHE[key]


def _f32(*shape, seed=0):
    """Deterministic float32 test data (the same in every worker and for every backend)."""
    return np.random.default_rng([seed, *shape]).normal(size=shape).astype(np.float32)


def assert_tree_close(p, j, rtol=1e-5, atol=1e-6, what="tree"):
    """Same container types (by name), dict keys, lengths, leaf shapes, dtypes and values."""
    if isinstance(j, dict):
        assert isinstance(p, dict) and sorted(p) == sorted(j), f"{what}: {p!r} vs {j!r}"
        for k in j:
            assert_tree_close(p[k], j[k], rtol, atol, f"{what}[{k!r}]")
    elif isinstance(j, (list, tuple)):
        assert type(p).__name__ == type(j).__name__, f"{what}: {type(p)} vs {type(j)}"
        assert len(p) == len(j), f"{what}: length {len(p)} vs {len(j)}"
        for i, (a, b) in enumerate(zip(p, j)):
            assert_tree_close(a, b, rtol, atol, f"{what}[{i}]")
    elif isinstance(j, (jax.Array, pyjax.Array)):
        assert isinstance(p, pyjax.Array), f"{what}: expected an Array, got {type(p)}"
        assert p.shape == j.shape, f"{what}: shape {p.shape} vs {j.shape}"
        assert str(p.dtype) == str(j.dtype), f"{what}: dtype {p.dtype} vs {j.dtype}"
        np.testing.assert_allclose(np.asarray(p), np.asarray(j), rtol=rtol, atol=atol, err_msg=what)
    else:
        assert p == j, f"{what}: {p!r} vs {j!r}"


def _to(tree, lib):
    """numpy leaves -> arrays of lib (jax.numpy or pyjax.numpy), keeping the containers."""
    if isinstance(tree, dict):
        return {k: _to(v, lib) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_to(v, lib) for v in tree)
    return lib.asarray(tree) if isinstance(tree, np.ndarray) else tree


def _shape_eq(p, j):
    """init_fun output shapes: tuples (or lists of tuples) of ints equal to JAX's."""
    if isinstance(j, (list, tuple)) and j and isinstance(j[0], (list, tuple)):
        assert len(p) == len(j)
        for a, b in zip(p, j):
            _shape_eq(a, b)
    else:
        assert tuple(int(d) for d in p) == tuple(int(d) for d in j), (p, j)


# ----------------------------------------------------------------------------- public surface

OPT_NAMES = [
    "optimizer",
    "Optimizer",
    "OptimizerState",
    "sgd",
    "momentum",
    "nesterov",
    "adagrad",
    "rmsprop",
    "rmsprop_momentum",
    "adam",
    "adamax",
    "sm3",
    "constant",
    "exponential_decay",
    "inverse_time_decay",
    "polynomial_decay",
    "piecewise_constant",
    "make_schedule",
    "l2_norm",
    "clip_grads",
    "JoinPoint",
    "unpack_optimizer_state",
    "pack_optimizer_state",
]
STAX_CONSTRUCTORS = [
    "Dense",
    "GeneralConv",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "GeneralConvTranspose",
    "BatchNorm",
    "elementwise",
    "MaxPool",
    "SumPool",
    "AvgPool",
    "FanOut",
    "FanInConcat",
    "Dropout",
    "serial",
    "parallel",
    "shape_dependent",
]
STAX_LAYERS = [
    "Tanh",
    "Relu",
    "Exp",
    "LogSoftmax",
    "Softmax",
    "Softplus",
    "Sigmoid",
    "Elu",
    "LeakyRelu",
    "Selu",
    "Gelu",
    "Flatten",
    "Identity",
    "FanInSum",
]
STAX_REEXPORTS = [
    "glorot",
    "randn",
    "logsoftmax",
    "glorot_normal",
    "normal",
    "ones",
    "zeros",
    "relu",
    "log_softmax",
    "softmax",
    "softplus",
    "sigmoid",
    "elu",
    "leaky_relu",
    "selu",
    "gelu",
    "standardize",
]


def _params_of(f):
    sig = inspect.signature(f)
    out = []
    for p in sig.parameters.values():
        d = p.default
        simple = d is inspect.Parameter.empty or d is None or isinstance(d, (int, float, str, tuple))
        out.append((p.name, p.kind, d if simple else "<callable>"))
    return out


def test_public_names_and_signatures():
    for name in OPT_NAMES:
        assert hasattr(popt, name), name
        if inspect.isfunction(getattr(jopt, name)):
            assert _params_of(getattr(popt, name)) == _params_of(getattr(jopt, name)), name
    for name in STAX_CONSTRUCTORS:
        assert hasattr(pstax, name), name
        assert _params_of(getattr(pstax, name)) == _params_of(getattr(jstax, name)), name
    for name in STAX_LAYERS:
        layer = getattr(pstax, name)
        assert isinstance(layer, tuple) and len(layer) == 2 and all(map(callable, layer)), name
    for name in STAX_REEXPORTS:
        assert callable(getattr(pstax, name)), name
    assert popt.Optimizer._fields == jopt.Optimizer._fields
    assert popt.OptimizerState._fields == jopt.OptimizerState._fields
    assert popt.sgd.__name__ == "sgd" and popt.adam.__doc__
    import pyjax.example_libraries.optimizers as direct

    assert direct is popt


# ----------------------------------------------------------------------------- optimizers

PARAMS = {"w": _f32(3, 4), "pair": (_f32(4), _f32()), "nested": [{"k": _f32(2, 2, 3)}]}
GRADS = [
    {"w": _f32(3, 4, seed=i), "pair": (_f32(4, seed=i), _f32(seed=i)), "nested": [{"k": _f32(2, 2, 3, seed=i)}]}
    for i in range(1, 5)
]
# give some gradient entries exact zeros (adagrad/sm3 take the where(accum > 0) branch)
GRADS[0]["w"][0, :] = 0.0

OPTIMIZERS = {
    "sgd": ((0.1,), {}),
    "momentum": ((0.1,), {"mass": 0.9}),
    "nesterov": ((0.05, 0.8), {}),
    "adagrad": ((0.1,), {}),
    "rmsprop": ((0.01,), {"gamma": 0.8}),
    "rmsprop_momentum": ((0.01,), {}),
    "adam": ((0.01,), {}),
    "adamax": ((0.02,), {"b1": 0.8}),
    "sm3": ((0.1,), {"momentum": 0.5}),
}


def _run_optimizer(mod, lib, name, jit_fn, step_size=None, steps=4):
    args, kwargs = OPTIMIZERS[name]
    if step_size is not None:
        args = (step_size,) + args[1:]
    init, update, get_params = getattr(mod, name)(*args, **kwargs)
    state = init(_to(PARAMS, lib))
    upd = jit_fn(update) if jit_fn else update
    for i in range(steps):
        state = upd(i, _to(GRADS[i], lib), state)
    return state, get_params(state)


@pytest.mark.parametrize("use_jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_optimizer_steps(backend, name, use_jit):
    ps, pp = _run_optimizer(popt, pjnp, name, pyjax.jit if use_jit else None)
    js, jp = _jax_once(("opt", name, use_jit), lambda: _run_optimizer(jopt, jnp, name, jax.jit if use_jit else None))
    assert_tree_close(pp, jp, what=f"{name} params")
    assert isinstance(ps, popt.OptimizerState)
    assert ps.tree_def.num_leaves == js.tree_def.num_leaves
    assert [t.num_leaves for t in ps.subtree_defs] == [t.num_leaves for t in js.subtree_defs]
    pl, jl = pyjax.tree_util.tree_leaves(ps), jax.tree_util.tree_leaves(js)
    assert len(pl) == len(jl)
    for a, b in zip(pl, jl):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


SCHEDULES = {
    "constant": ("constant", (0.1,), {}),
    "exponential_decay": ("exponential_decay", (0.1, 2, 0.5), {}),
    "inverse_time_decay": ("inverse_time_decay", (0.1, 2, 0.5), {}),
    "inverse_time_decay_staircase": ("inverse_time_decay", (0.1, 2, 0.5), {"staircase": True}),
    "polynomial_decay": ("polynomial_decay", (0.1, 3, 0.01), {"power": 2.0}),
    "piecewise_constant": ("piecewise_constant", ([1, 3], [0.1, 0.05, 0.01]), {}),
}


def _schedule(mod, key):
    name, args, kwargs = SCHEDULES[key]
    return getattr(mod, name)(*args, **kwargs)


@pytest.mark.parametrize("key", list(SCHEDULES))
def test_schedule_values(key):
    ps, js = _schedule(popt, key), _schedule(jopt, key)
    for i in range(6):
        np.testing.assert_allclose(np.asarray(ps(i)), np.asarray(js(i)), rtol=1e-6)
        traced = pyjax.jit(ps)(pjnp.int32(i))
        np.testing.assert_allclose(np.asarray(traced), np.asarray(jax.jit(js)(jnp.int32(i))), rtol=1e-6)


@pytest.mark.parametrize("key", list(SCHEDULES))
@pytest.mark.parametrize("name", ["sgd", "adam", "rmsprop_momentum"])
def test_optimizer_with_schedule_jit(name, key):
    _, pp = _run_optimizer(popt, pjnp, name, pyjax.jit, step_size=_schedule(popt, key))
    _, jp = _run_optimizer(jopt, jnp, name, jax.jit, step_size=_schedule(jopt, key))
    assert_tree_close(pp, jp, what=f"{name}/{key}")


def test_make_schedule():
    f = lambda i: 0.5 / (i + 1)
    assert popt.make_schedule(f) is f
    assert popt.make_schedule(0.3)(7) == 0.3
    assert float(popt.make_schedule(pjnp.float32(0.25))(3)) == 0.25
    for bad in ([0.1, 0.2], np.ones(3, np.float32)):
        with pytest.raises(TypeError):
            jopt.make_schedule(bad)
        with pytest.raises(TypeError):
            popt.make_schedule(bad)
    with pytest.raises(TypeError):
        popt.sgd([0.1, 0.2])


def test_piecewise_constant_errors():
    for bounds, values in (([1, 2], [0.1, 0.2]), ([[1]], [[0.1, 0.2]]), ([1], [0.1, 0.2, 0.3])):
        with pytest.raises(ValueError):
            jopt.piecewise_constant(bounds, values)
        with pytest.raises(ValueError):
            popt.piecewise_constant(bounds, values)


def test_optimizer_state_pytree():
    init, update, get_params = popt.momentum(0.1, 0.9)
    jinit, _, _ = jopt.momentum(0.1, 0.9)
    state, jstate = init(_to(PARAMS, pjnp)), jinit(_to(PARAMS, jnp))
    assert type(state).__name__ == "OptimizerState" and state._fields == jstate._fields
    # packed_state is the only child; the structures are static data
    assert type(state.packed_state) is tuple and all(type(s) is list for s in state.packed_state)
    assert len(state.packed_state) == len(jstate.packed_state) == 4
    assert str(state.tree_def) == str(jstate.tree_def)
    assert [str(t) for t in state.subtree_defs] == [str(t) for t in jstate.subtree_defs]
    leaves, treedef = pyjax.tree_util.tree_flatten(state)
    assert len(leaves) == len(jax.tree_util.tree_leaves(jstate)) == 8
    back = pyjax.tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(back, popt.OptimizerState) and back.tree_def == state.tree_def
    # a jit argument and result; tree_map over it keeps it an OptimizerState
    out = pyjax.jit(lambda s: pyjax.tree_util.tree_map(lambda x: x * 2, s))(state)
    assert isinstance(out, popt.OptimizerState)
    assert_tree_close(get_params(out), pyjax.tree_util.tree_map(lambda x: x * 2, _to(PARAMS, pjnp)))
    # grad through get_params of a state
    g = pyjax.grad(lambda s: pjnp.sum(get_params(s)["w"]))(state)
    assert isinstance(g, popt.OptimizerState)
    np.testing.assert_array_equal(np.asarray(get_params(g)["w"]), np.ones((3, 4), np.float32))
    # the params invariant
    assert_tree_close(get_params(state), _to(PARAMS, pjnp))


def test_pack_unpack_roundtrip():
    init, update, get_params = popt.adam(0.01)
    jinit, jupdate, _ = jopt.adam(0.01)
    state = update(0, _to(GRADS[0], pjnp), init(_to(PARAMS, pjnp)))
    jstate = jupdate(0, _to(GRADS[0], jnp), jinit(_to(PARAMS, jnp)))
    marked, jmarked = popt.unpack_optimizer_state(state), jopt.unpack_optimizer_state(jstate)
    assert isinstance(marked["w"], popt.JoinPoint) and type(marked["pair"]) is tuple
    assert_tree_close(marked["w"].subtree, jmarked["w"].subtree)
    assert_tree_close(list(marked["nested"][0]["k"]), list(jmarked["nested"][0]["k"]))
    packed = popt.pack_optimizer_state(marked)
    assert isinstance(packed, popt.OptimizerState) and packed.tree_def == state.tree_def
    assert_tree_close(get_params(packed), get_params(state))
    assert_tree_close(
        get_params(update(1, _to(GRADS[1], pjnp), packed)), get_params(update(1, _to(GRADS[1], pjnp), state))
    )
    with pytest.raises(AssertionError):
        jopt.pack_optimizer_state({"a": jnp.ones(2)})
    with pytest.raises(AssertionError):
        popt.pack_optimizer_state({"a": pjnp.ones(2)})


def test_update_errors():
    for mod, lib in ((jopt, jnp), (popt, pjnp)):
        init, update, _ = mod.sgd(0.1)
        state = init({"a": lib.ones(2), "b": lib.ones(3)})
        with pytest.raises(TypeError, match="did not match the parameter tree"):
            update(0, {"a": lib.ones(2)}, state)
        with pytest.raises(TypeError):
            update(0, [lib.ones(2), lib.ones(3)], state)

        @mod.optimizer
        def bad(step_size):
            return (lambda x: (x, x), lambda i, g, s: (s[0],), lambda s: s[0])

        init, update, _ = bad(0.1)
        with pytest.raises(TypeError, match="output structure"):
            update(0, lib.ones(2), init(lib.ones(2)))


def test_custom_optimizer_decorator(backend):
    def make(mod, lib):
        @mod.optimizer
        def signsgd(step_size):
            """sign SGD."""
            lr = mod.make_schedule(step_size)
            return (lambda x: {"x": x}, lambda i, g, s: {"x": s["x"] - lr(i) * lib.sign(g)}, lambda s: s["x"])

        return signsgd

    popt_f, jopt_f = make(popt, pjnp), make(jopt, jnp)
    assert popt_f.__name__ == "signsgd" and popt_f.__doc__ == "sign SGD."
    pi, pu, pg = popt_f(0.1)
    ji, ju, jg = jopt_f(0.1)
    ps, js = pi(_to(PARAMS, pjnp)), ji(_to(PARAMS, jnp))
    for i in range(2):
        ps, js = pyjax.jit(pu)(i, _to(GRADS[i], pjnp), ps), jax.jit(ju)(i, _to(GRADS[i], jnp), js)
    assert_tree_close(pg(ps), jg(js))


def test_empty_and_scalar_params():
    for mod in (popt, jopt):
        init, update, get_params = mod.adam(0.1)
        state = init([])
        assert state.packed_state == () and get_params(update(0, [], state)) == []
    pi, pu, pg = popt.sgd(0.5)
    ji, ju, jg = jopt.sgd(0.5)
    assert_tree_close(
        pg(pu(0, pjnp.float32(2.0), pi(pjnp.float32(1.0)))), jg(ju(0, jnp.float32(2.0), ji(jnp.float32(1.0))))
    )


def test_l2_norm_and_clip_grads(backend):
    g = GRADS[1]
    assert_tree_close(popt.l2_norm(_to(g, pjnp)), jopt.l2_norm(_to(g, jnp)))
    for max_norm in (0.5, 1e3):
        assert_tree_close(popt.clip_grads(_to(g, pjnp), max_norm), jopt.clip_grads(_to(g, jnp), max_norm))
    assert_tree_close(
        pyjax.jit(popt.clip_grads)(_to(g, pjnp), 1.0), jax.jit(jopt.clip_grads)(_to(g, jnp), 1.0), what="jit clip"
    )


# ----------------------------------------------------------------------------- stax


def _compare_model(builder, input_shape, x, seed=0, rtol=1e-5, atol=1e-5, apply_kwargs=None, init_shape=None):
    """Init both from PRNGKey(seed), compare output shapes, params and apply outputs."""
    pinit, papply = builder(pstax)
    jinit, japply = builder(jstax)
    pshape, pparams = pinit(pyjax.random.PRNGKey(seed), init_shape or input_shape)
    pk = {k: (pyjax.random.PRNGKey(v) if k == "rng" else v) for k, v in (apply_kwargs or {}).items()}
    pout = papply(pparams, _to(x, pjnp), **pk)

    def reference():
        jshape, jparams = jinit(jax.random.PRNGKey(seed), init_shape or input_shape)
        jk = {k: (jax.random.PRNGKey(v) if k == "rng" else v) for k, v in (apply_kwargs or {}).items()}
        return jshape, jparams, japply(jparams, _to(x, jnp), **jk)

    closure = tuple(repr(c.cell_contents) for c in builder.__closure__ or ())
    key = (builder.__qualname__, closure, input_shape, seed, x.tobytes(), tuple(sorted((apply_kwargs or {}).items())))
    jshape, jparams, jout = _jax_once(key, reference)
    _shape_eq(pshape, jshape)
    assert_tree_close(pparams, jparams, what="params")
    assert_tree_close(pout, jout, rtol=rtol, atol=atol, what="outputs")
    return pparams, papply, jparams, japply


def _mlp(s):
    return s.serial(s.Dense(16), s.Relu, s.Dense(8), s.Tanh, s.Dense(3), s.LogSoftmax)


def test_stax_mlp(backend):
    x = _f32(5, 7)
    pparams, papply, jparams, japply = _compare_model(_mlp, (-1, 7), x, seed=3)
    assert_tree_close(pyjax.jit(papply)(pparams, pjnp.asarray(x)), jax.jit(japply)(jparams, x), atol=1e-5)


def _cnn(s):
    return s.serial(
        s.Conv(4, (3, 3), padding="SAME"),
        s.BatchNorm(),
        s.Relu,
        s.MaxPool((2, 2), strides=(2, 2)),
        s.Conv(6, (2, 2), strides=(1, 1)),
        s.AvgPool((2, 2), padding="SAME"),
        s.SumPool((2, 1)),
        s.Flatten,
        s.Dense(3),
        s.Softmax,
    )


def test_stax_cnn(backend):
    x = _f32(2, 8, 8, 3)
    _compare_model(_cnn, (2, 8, 8, 3), x, seed=1)
    # a -1 batch in the init shape flows through every layer as in JAX
    jshape, _ = _cnn(jstax)[0](jax.random.PRNGKey(0), (-1, 8, 8, 3))
    pshape, _ = _cnn(pstax)[0](pyjax.random.PRNGKey(0), (-1, 8, 8, 3))
    _shape_eq(pshape, jshape)


def test_stax_cnn_grad(backend):
    x, y = _f32(2, 8, 8, 3), np.eye(3, dtype=np.float32)[[0, 2]]
    pinit, papply = _cnn(pstax)
    jinit, japply = _cnn(jstax)
    _, pparams = pinit(pyjax.random.PRNGKey(5), x.shape)
    _, jparams = jinit(jax.random.PRNGKey(5), x.shape)
    ploss = lambda p: -pjnp.sum(pjnp.log(papply(p, pjnp.asarray(x))) * y)
    jloss = lambda p: -jnp.sum(jnp.log(japply(p, x)) * y)
    assert_tree_close(pyjax.jit(pyjax.grad(ploss))(pparams), jax.grad(jloss)(jparams), rtol=1e-4, atol=1e-5)


def _nchw(s):
    return s.serial(
        s.GeneralConv(("NCHW", "OIHW", "NCHW"), 3, (2, 3), strides=(1, 2), padding=[(1, 0), (0, 1)]),
        s.MaxPool((2, 2), spec="NCHW", padding="SAME"),
        s.AvgPool((3, 2), strides=(1, 2), spec="NCHW", padding="SAME"),
        s.BatchNorm(axis=(0, 2, 3), center=False),
        s.Elu,
    )


def test_stax_general_conv_and_spec(backend):
    _compare_model(_nchw, (2, 2, 7, 6), _f32(2, 2, 7, 6), seed=2)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_stax_conv_transpose(backend, padding):
    def model(s):
        return s.serial(s.ConvTranspose(3, (3, 2), strides=(2, 1), padding=padding), s.Selu)

    _compare_model(model, (2, 4, 5, 2), _f32(2, 4, 5, 2), seed=4)

    def model1d(s):
        return s.serial(s.Conv1DTranspose(2, (3,), strides=(2,), padding=padding), s.Gelu)

    _compare_model(model1d, (1, 5, 3), _f32(1, 5, 3), seed=6)

    def general(s):
        return s.GeneralConvTranspose(("NCH", "OIH", "NCH"), 2, (2,), strides=(3,), padding=padding)

    _compare_model(general, (2, 3, 4), _f32(2, 3, 4), seed=7)


@pytest.mark.parametrize("kwargs", [{}, {"center": False}, {"scale": False}, {"center": False, "scale": False}])
def test_stax_batchnorm_variants(kwargs):
    def model(s):
        return s.BatchNorm(axis=0, epsilon=1e-3, **kwargs)

    _compare_model(model, (6, 4), _f32(6, 4) * 3 + 1, seed=8)

    def model_init(s):
        return s.BatchNorm(beta_init=s.randn(0.5), gamma_init=s.normal(2.0))

    _compare_model(model_init, (2, 3, 3, 4), _f32(2, 3, 3, 4), seed=9)


def _branches(s):
    return s.serial(
        s.Dense(6),
        s.FanOut(3),
        s.parallel(s.Dense(6), s.Identity, s.serial(s.Dense(6), s.Sigmoid)),
        s.FanInSum,
        s.FanOut(2),
        s.parallel(s.Softplus, s.serial(s.Dense(2), s.LeakyRelu)),
        s.FanInConcat(),
        s.Exp,
    )


def test_stax_fan_and_parallel(backend):
    pparams, *_ = _compare_model(_branches, (4, 5), _f32(4, 5), seed=10)
    assert type(pparams[2]) is tuple and len(pparams[2]) == 3
    # parallel's init unpacks to (shapes, params) as JAX's zip does
    shapes, params = pstax.parallel(pstax.Dense(2), pstax.Dense(3))[0](pyjax.random.PRNGKey(0), [(1, 4), (1, 5)])
    jshapes, jparams = jstax.parallel(jstax.Dense(2), jstax.Dense(3))[0](jax.random.PRNGKey(0), [(1, 4), (1, 5)])
    _shape_eq(shapes, jshapes)
    assert_tree_close(params, jparams)

    def concat0(s):
        return s.serial(s.FanOut(2), s.parallel(s.Tanh, s.Dense(5)), s.FanInConcat(axis=0))

    _compare_model(concat0, (3, 5), _f32(3, 5), seed=11)


@pytest.mark.parametrize("mode", ["train", "test"])
def test_stax_dropout(backend, mode):
    def model(s):
        return s.serial(s.Dense(32), s.Dropout(0.7, mode=mode), s.Relu, s.Dropout(0.5, mode), s.Dense(2))

    _compare_model(model, (4, 6), _f32(4, 6), seed=12, apply_kwargs={"rng": 13})
    # a new-style key works too
    pinit, papply = model(pstax)
    jinit, japply = model(jstax)
    _, pparams = pinit(pyjax.random.key(1), (4, 6))
    _, jparams = jinit(jax.random.key(1), (4, 6))
    assert_tree_close(pparams, jparams)
    x = _f32(4, 6)
    out = papply(pparams, pjnp.asarray(x), rng=pyjax.random.key(2))
    assert_tree_close(out, japply(jparams, x, rng=jax.random.key(2)), atol=1e-5)


def test_stax_dropout_requires_rng():
    for s, lib in ((jstax, jnp), (pstax, pjnp)):
        _, apply = s.Dropout(0.5)
        with pytest.raises(ValueError, match="PRNG key"):
            apply((), lib.ones(3))
        with pytest.raises(ValueError):
            s.serial(s.Dense(2), s.Dropout(0.5))[1]([(lib.ones((3, 2)), lib.ones(2)), ()], lib.ones((1, 3)))


@pytest.mark.parametrize("name", [n for n in STAX_LAYERS if n not in ("Flatten", "FanInSum")])
def test_stax_elementwise_layers(name):
    x = _f32(3, 5) * 2

    def model(s):
        return getattr(s, name)

    _compare_model(model, (3, 5), x)


def test_stax_elementwise_custom_and_shape_dependent(backend):
    def model(s):
        return s.serial(
            s.elementwise(s.softmax, axis=0),
            s.shape_dependent(lambda shape: s.Dense(shape[-1] * 2)),
            s.elementwise(s.leaky_relu, negative_slope=0.3),
        )

    _compare_model(model, (3, 4), _f32(3, 4), seed=14)


def test_stax_initializer_aliases():
    key_p, key_j = pyjax.random.PRNGKey(0), jax.random.PRNGKey(0)
    for name, args in (("glorot", ()), ("randn", (0.3,)), ("glorot_normal", (0, 1)), ("normal", ())):
        assert_tree_close(getattr(pstax, name)(*args)(key_p, (4, 3)), getattr(jstax, name)(*args)(key_j, (4, 3)))
    assert_tree_close(pstax.ones(key_p, (2,)), jstax.ones(key_j, (2,)))
    assert_tree_close(pstax.logsoftmax(pjnp.arange(3.0)), jstax.logsoftmax(jnp.arange(3.0)))


def test_stax_bad_inputs():
    for s, lib in ((jstax, jnp), (pstax, pjnp)):
        init, apply = s.Dense(3)
        _, params = init(pyjax.random.PRNGKey(0) if s is pstax else jax.random.PRNGKey(0), (2, 4))
        with pytest.raises(TypeError):
            apply(params, lib.ones((2, 5)))
        with pytest.raises(TypeError):
            s.GeneralConv(("NHWC", "HWIO", "NHWX"), 2, (1, 1))[0](None, (1, 2, 2, 1))
        with pytest.raises(ValueError):
            s.MaxPool((2, 2), spec="HWCX")


# ----------------------------------------------------------------------------- training


def _train(lib_jax, jnp_mod, stax_mod, opt_mod, x, y, steps=8):
    init_random_params, predict = stax_mod.serial(
        stax_mod.Dense(16), stax_mod.Relu, stax_mod.Dense(16), stax_mod.Relu, stax_mod.Dense(3), stax_mod.LogSoftmax
    )
    _, params = init_random_params(lib_jax.random.PRNGKey(0), (-1, x.shape[1]))
    opt_init, opt_update, get_params = opt_mod.adam(step_size=0.01)

    def loss(params, batch):
        inputs, targets = batch
        return -jnp_mod.mean(jnp_mod.sum(predict(params, inputs) * targets, axis=1))

    @lib_jax.jit
    def update(i, opt_state, batch):
        value, grads = lib_jax.value_and_grad(loss)(get_params(opt_state), batch)
        return value, opt_update(i, grads, opt_state)

    opt_state = opt_init(params)
    losses = []
    batch = (jnp_mod.asarray(x), jnp_mod.asarray(y))
    for i in range(steps):
        value, opt_state = update(i, opt_state, batch)
        losses.append(float(value))
    return np.array(losses), get_params(opt_state)


def test_training_loop(backend):
    x = _f32(16, 6)
    y = np.eye(3, dtype=np.float32)[np.random.default_rng(1).integers(0, 3, 16)]
    plosses, pparams = _train(pyjax, pjnp, pstax, popt, x, y)
    jlosses, jparams = _jax_once("train", lambda: _train(jax, jnp, jstax, jopt, x, y))
    np.testing.assert_allclose(plosses, jlosses, rtol=1e-4, atol=1e-6)
    assert plosses[-1] < plosses[0]
    assert_tree_close(pparams, jparams, rtol=1e-4, atol=1e-5)
