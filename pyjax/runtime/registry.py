"""What the runtime's upper modules lend to its lower ones, registered when pyjax.runtime is imported.

The runtime's modules stack up: array (Array, Buffer) < execute (eager ops, programs) < plans
(whole-program and loop plans) < control (host steps: cond, while, scan, callbacks). Three calls
go the other way, because the work itself recurses: an Array reads a view through a contiguous
copy (execute.materialize), a program runs its host steps (control.run, which runs sub-jaxprs as
programs again) and through its plan (plans.program_plan, which compiles loop bodies). The upper
modules fill this table at import, so every import points down (tests/test_layers.py).
"""

from __future__ import annotations

from collections.abc import Callable

_lent: dict[str, Callable] = {}


def register(**fns: Callable) -> None:
    """Lend functions to the modules below (pyjax.runtime's __init__ imports every lender)."""
    _lent.update(fns)


def materialize(arr):
    """execute.materialize: a contiguous copy of arr."""
    return _lent["materialize"](arr)


def run_host(eqn, arrays: list) -> list:
    """control.run: one host step's equation run on concrete arrays."""
    return _lent["run_host"](eqn, arrays)


def program_plan(program, device):
    """plans.program_plan: program's plan on device, or False to run it step by step."""
    return _lent["program_plan"](program, device)
