"""The shared cases (tests/cases.py) inside Pyodide in Chromium, compared with JAX natively.

Backends: PYJAX_BROWSER_BACKENDS (comma list; default below). Each runs on the page's main
thread and in a module Web Worker.
"""

from __future__ import annotations

import json
import os
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from cases import CASES, compare, encode, run_case  # noqa: E402

CASES_SRC = (ROOT / "tests" / "cases.py").read_text()
BACKENDS = [b for b in os.environ.get("PYJAX_BROWSER_BACKENDS", "cpu,wasm,webgpu").split(",") if b]


@cache
def jax_result(name: str) -> list:
    import jax
    import jax.numpy as jnp
    from jax import lax

    return json.loads(encode(run_case(CASES[name], jax, jnp, lax), jax.tree_util))


def _program(name: str, backend: str) -> str:
    return (
        CASES_SRC
        + f"""
import pyjax, pyjax.numpy as _jnp
from pyjax import lax as _lax
await pyjax.init_async({backend!r})
encode(run_case(CASES[{name!r}], pyjax, _jnp, _lax), pyjax.tree_util)
"""
    )


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_case_in_page(pyjax_page, name, backend):
    got = pyjax_page.run_json(_program(name, backend))
    compare(got, jax_result(name), f"{name}@{backend}")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["grad_mlp", "jit_train_steps", "reductions"])
def test_case_in_worker(pyjax_worker_page, name, backend):
    got = pyjax_worker_page.run_json(_program(name, backend))
    compare(got, jax_result(name), f"{name}@{backend}/worker")


def test_no_console_errors(pyjax_page, pyjax_worker_page):
    pyjax_page.run("1 + 1")
    assert pyjax_page.errors == [] and pyjax_worker_page.errors == []
