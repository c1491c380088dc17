"""jax.ad_checkpoint: rematerialization (checkpoint/remat), its policies and checkpoint_name.

pyjax's checkpoint recomputes a function's whole forward pass in the backward pass, whatever the
policy (see custom_derivatives.checkpoint): names given with checkpoint_name choose nothing, so it
returns its argument, and the residual report of JAX's partial evaluator does not exist here.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from pyjax.custom_derivatives import checkpoint, checkpoint_policies, remat

__all__ = [
    "Offloadable",
    "Recompute",
    "Saveable",
    "checkpoint",
    "checkpoint_name",
    "checkpoint_policies",
    "print_saved_residuals",
    "remat",
]


class _PolicyAnswer:
    """What a policy answers for one value: Recompute or Saveable."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


Recompute = _PolicyAnswer("Recompute")
Saveable = _PolicyAnswer("Saveable")


class Offloadable(NamedTuple):
    """A policy's answer: save the value, moved from memory src to memory dst."""

    src: str
    dst: str


def checkpoint_name(x: Any, name: str) -> Any:
    """x, named for checkpoint policies (save_only_these_names, ...); pyjax's policies do not read
    names, so the value passes through unchanged (under every transformation)."""
    del name
    return x


def print_saved_residuals(f, *args, **kwargs) -> None:
    """JAX prints the residuals its partial evaluator saves for grad(f); pyjax records a tape instead."""
    raise NotImplementedError(
        "pyjax: jax.ad_checkpoint.print_saved_residuals is not supported (pyjax's reverse mode records a tape, "
        "not a partial-evaluation residual list)"
    )
