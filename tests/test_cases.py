"""The shared cases (tests/cases.py) on every backend, compared with real JAX."""

from __future__ import annotations

import json
from functools import cache

import jax as real_jax
import jax.numpy as real_jnp
import pytest
from jax import lax as real_lax

import pyjax
import pyjax.numpy as pjnp
from pyjax import lax as plax

from cases import CASES, compare, encode, run_case


@cache
def jax_result(name: str) -> list:
    return json.loads(encode(run_case(CASES[name], real_jax, real_jnp, real_lax), real_jax.tree_util))


@pytest.mark.parametrize("name", sorted(CASES))
def test_case(name, backend):
    got = json.loads(encode(run_case(CASES[name], pyjax, pjnp, plax), pyjax.tree_util))
    compare(got, jax_result(name), name)
