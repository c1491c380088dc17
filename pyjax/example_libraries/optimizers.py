"""pyjax.example_libraries.optimizers: JAX's example optimizers, as (init, update, get_params) triples.

An optimizer is written for one array and lifted to pytrees of parameters by the `optimizer`
decorator. Its state is an `OptimizerState` pytree: the per-leaf states flattened into
`packed_state`, with the outer (`tree_def`) and per-leaf (`subtree_defs`) structures as static
data, so it can be passed through `jit`, `grad` and `vmap` as JAX's can.
"""

from __future__ import annotations

import functools
from collections import namedtuple
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from pyjax import numpy as jnp
from pyjax import tree_util

Array = Any
Params = Any  # a pytree of arrays
State = Any  # one leaf's optimizer state (itself a small pytree)
Updates = Params  # gradients: same structure as the parameters
Step = int
Schedule = Callable[[Step], Any]

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
# Only packed_state holds leaves; the two structures are static (aux) data, as in JAX.
tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], aux[0], aux[1]),
)

InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]


class Optimizer(NamedTuple):
    """The (init_fn, update_fn, params_fn) triple an optimizer constructor returns."""

    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_each(trees: Any) -> tuple[tuple, tuple]:
    """Flatten each tree: (tuple of leaf lists, tuple of treedefs), JAX's unzip2 layout."""
    pairs = [tree_util.tree_flatten(t) for t in trees]
    return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)


def _unflatten_each(treedefs: Any, leaf_lists: Any) -> list:
    if len(treedefs) != len(leaf_lists):
        raise ValueError(f"optimizer state has {len(leaf_lists)} leaf states for {len(treedefs)} structures.")
    return [tree_util.tree_unflatten(t, ls) for t, ls in zip(treedefs, leaf_lists)]


def optimizer(opt_maker: Callable[..., Any]) -> Callable[..., Optimizer]:
    """Decorator lifting an optimizer written for single arrays to pytrees of parameters.

    `opt_maker(*args)` returns (init, update, get_params) for one array; the result returns an
    `Optimizer` whose functions take parameter pytrees and an `OptimizerState`."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs) -> Optimizer:
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree: Params) -> OptimizerState:
            x0_leaves, tree = tree_util.tree_flatten(x0_tree)
            packed, subtrees = _flatten_each([init(x0) for x0 in x0_leaves])
            return OptimizerState(packed, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i: Step, grad_tree: Updates, opt_state: OptimizerState) -> OptimizerState:
            packed, tree, subtrees = opt_state
            grad_leaves, grad_tree_def = tree_util.tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError(
                    "optimizer update function was passed a gradient tree that did not match the "
                    f"parameter tree structure with which it was initialized: parameter tree {tree} "
                    f"and grad tree {grad_tree_def}."
                )
            states = _unflatten_each(subtrees, packed)
            new_states = [update(i, g, s) for g, s in zip(grad_leaves, states)]
            new_packed, new_subtrees = _flatten_each(new_states)
            for before, after in zip(subtrees, new_subtrees):
                if before != after:
                    raise TypeError(
                        "optimizer update function produced an output structure that did not match "
                        f"its input structure: input {before} and output {after}."
                    )
            return OptimizerState(new_packed, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state: OptimizerState) -> Params:
            packed, tree, subtrees = opt_state
            leaves = [get_params(s) for s in _unflatten_each(subtrees, packed)]
            return tree_util.tree_unflatten(tree, leaves)

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


# ----------------------------------------------------------------------------- optimizers


def _first(state: Any) -> Any:
    return state[0]


def _ema(average, x, decay: float):
    """The exponential moving average `average` updated by x: decay * average + (1 - decay) * x."""
    return (1 - decay) * x + decay * average


def _with_zeros(n: int):
    """An optimizer init: the parameters, then n zero-initialized state arrays like them."""
    return lambda x0: (x0,) + tuple(jnp.zeros_like(x0) for _ in range(n))


@optimizer
def sgd(step_size: float | Schedule) -> Optimizer:
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    lr = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - lr(i) * g

    def get_params(x):
        return x

    return Optimizer(init, update, get_params)


@optimizer
def momentum(step_size: float | Schedule, mass: float) -> Optimizer:
    """SGD with (heavy-ball) momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    lr = make_schedule(step_size)

    init = _with_zeros(1)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - lr(i) * v, v

    return init, update, _first


@optimizer
def nesterov(step_size: float | Schedule, mass: float) -> Optimizer:
    """SGD with Nesterov momentum: the step uses mass * v + g after updating v."""
    lr = make_schedule(step_size)

    init = _with_zeros(1)

    def update(i, g, state):
        x, v = state
        v = mass * v + g
        return x - lr(i) * (mass * v + g), v

    return init, update, _first


@optimizer
def adagrad(step_size: float | Schedule, momentum: float = 0.9) -> Optimizer:
    """Adagrad (Duchi et al. 2011) with momentum on the normalized gradient."""
    lr = make_schedule(step_size)

    init = _with_zeros(2)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        inv_root = jnp.where(g_sq > 0, 1.0 / jnp.sqrt(g_sq), 0.0)
        m = _ema(m, g * inv_root, momentum)
        return x - lr(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8) -> Optimizer:
    """RMSProp: divide the step by a running root mean square of the gradients."""
    lr = make_schedule(step_size)

    init = _with_zeros(1)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = _ema(avg_sq, jnp.square(g), gamma)
        return x - lr(i) * g / jnp.sqrt(avg_sq + eps), avg_sq

    return init, update, _first


@optimizer
def rmsprop_momentum(
    step_size: float | Schedule, gamma: float = 0.9, eps: float = 1e-8, momentum: float = 0.9
) -> Optimizer:
    """RMSProp with momentum on the normalized step."""
    lr = make_schedule(step_size)

    init = _with_zeros(2)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = _ema(avg_sq, jnp.square(g), gamma)
        mom = momentum * mom + lr(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom

    return init, update, _first


@optimizer
def adam(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Optimizer:
    """Adam (Kingma & Ba): bias-corrected first and second moment estimates."""
    lr = make_schedule(step_size)

    init = _with_zeros(2)

    def update(i, g, state):
        x, m, v = state
        m = _ema(m, g, b1)
        v = _ema(v, jnp.square(g), b2)
        # the decay powers are taken in the moments' dtype, as JAX does
        m_hat = m / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - jnp.asarray(b2, m.dtype) ** (i + 1))
        return x - lr(i) * m_hat / (jnp.sqrt(v_hat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size: float | Schedule, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8) -> Optimizer:
    """AdaMax: Adam with an exponentially weighted infinity norm instead of the second moment."""
    lr = make_schedule(step_size)

    init = _with_zeros(2)

    def update(i, g, state):
        x, m, u = state
        m = _ema(m, g, b1)
        u = jnp.maximum(b2 * u, jnp.abs(g))
        x = x - (lr(i) / (1 - jnp.asarray(b1, m.dtype) ** (i + 1))) * m / (u + eps)
        return x, m, u

    return init, update, _first


@optimizer
def sm3(step_size: float | Schedule, momentum: float = 0.9) -> Optimizer:
    """SM3 (Anil et al. 2019): one accumulator vector per axis instead of one per element."""
    lr = make_schedule(step_size)

    def along(ndim, v, axis):
        # view the 1-D accumulator v as an ndim array varying only along `axis`
        return v[tuple(slice(None) if d == axis else None for d in range(ndim))]

    def init(x0):
        shape = x0.shape
        x0 = jnp.atleast_1d(x0)
        accumulators = [jnp.zeros(n, dtype=x0.dtype) for n in x0.shape]
        return x0, jnp.zeros_like(x0), accumulators, shape

    def update(i, g, state):
        x, m, vs, shape = state
        bounds = [along(g.ndim, v, a) for a, v in enumerate(vs)]
        accum = functools.reduce(jnp.minimum, bounds) + jnp.square(g)
        inv_root = jnp.where(accum > 0, 1.0 / jnp.sqrt(accum), 0)
        m = _ema(m, g * inv_root, momentum)
        x = x - lr(i) * m
        vs = [accum.max([d for d in range(x.ndim) if d != a]) for a in range(x.ndim)]
        return x, m, vs, shape

    def get_params(state):
        x, _, _, shape = state
        return x.reshape(shape)

    return init, update, get_params


# ----------------------------------------------------------------------------- schedules


def constant(step_size: Any) -> Schedule:
    """The schedule that always returns step_size."""

    def schedule(i):
        return step_size

    return schedule


def exponential_decay(step_size: Any, decay_steps: Any, decay_rate: Any) -> Schedule:
    """step_size * decay_rate ** (i / decay_steps)."""

    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)

    return schedule


def inverse_time_decay(step_size: Any, decay_steps: Any, decay_rate: Any, staircase: bool = False) -> Schedule:
    """step_size / (1 + decay_rate * i / decay_steps), with i / decay_steps floored if staircase."""
    if staircase:

        def schedule(i):
            return step_size / (1 + decay_rate * jnp.floor(i / decay_steps))

    else:

        def schedule(i):
            return step_size / (1 + decay_rate * i / decay_steps)

    return schedule


def polynomial_decay(step_size: Any, decay_steps: Any, final_step_size: Any, power: float = 1.0) -> Schedule:
    """Decay from step_size to final_step_size over decay_steps as (1 - i / decay_steps) ** power."""

    def schedule(step_num):
        step_num = jnp.minimum(step_num, decay_steps)
        frac = (1 - step_num / decay_steps) ** power
        return frac * (step_size - final_step_size) + final_step_size

    return schedule


def piecewise_constant(boundaries: Any, values: Any) -> Schedule:
    """values[k] for steps i with exactly k boundaries below i (len(values) == len(boundaries) + 1)."""
    boundaries = jnp.array(boundaries)
    values = jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[jnp.sum(i > boundaries)]

    return schedule


def make_schedule(scalar_or_schedule: float | Schedule) -> Schedule:
    """A callable passes through; a scalar becomes a constant schedule; anything else is a TypeError."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ----------------------------------------------------------------------------- utilities


def l2_norm(tree: Any) -> Array:
    """The l2 norm of all the leaves of a pytree of arrays together (e.g. for weight decay)."""
    leaves = tree_util.tree_leaves(tree)
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree: Any, max_norm: Any) -> Any:
    """Scale a pytree of gradients down so that its l2 norm is at most max_norm."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


# ----------------------------------------------------------------------------- serialization


class JoinPoint:
    """Marks where an outer pytree (the parameters) joins an inner one (a leaf's state)."""

    def __init__(self, subtree: Any) -> None:
        self.subtree = subtree

    def __iter__(self) -> Iterator[Any]:
        # looks like a one-element container, as JAX's does, for serializers that iterate
        yield self.subtree


def unpack_optimizer_state(opt_state: OptimizerState) -> Any:
    """An OptimizerState as a pytree of the parameters' structure with JoinPoint leaves (for saving)."""
    packed, tree, subtrees = opt_state
    return tree_util.tree_unflatten(tree, [JoinPoint(s) for s in _unflatten_each(subtrees, packed)])


def pack_optimizer_state(marked_pytree: Any) -> OptimizerState:
    """The inverse of unpack_optimizer_state: rebuild an OptimizerState from JoinPoint leaves."""
    joins, tree = tree_util.tree_flatten(marked_pytree)
    assert all(isinstance(j, JoinPoint) for j in joins)
    packed, subtrees = _flatten_each([j.subtree for j in joins])
    return OptimizerState(packed, tree, subtrees)
