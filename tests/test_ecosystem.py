"""optax and chex on pyjax through alias_jax (issue 16): a fixed sample of their own test suites, optax's
optimizers against JAX, and (when installed) equinox and flax linen MLPs trained as on JAX. `make ecosystem`
runs the whole suites and every model (tests/ecosystem/run.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ECO = os.path.join(HERE, "ecosystem")
sys.path.insert(0, ECO)
import models  # noqa: E402
import optimizers  # noqa: E402
import run as eco_run  # noqa: E402

# (package, test files, -k expression): a fixed sample of the libraries' own tests, all passing on pyjax
SAMPLE = [
    (
        "chex",
        ["chex/_src/asserts_test.py", "chex/_src/dimensions_test.py"],
        "ShapeAssertTest or RankAssertTest or ScalarAssertTest or dimensions_test",
    ),
    ("optax", ["optax/_src/update_test.py", "optax/schedules/_join_test.py"], ""),
]


@pytest.mark.parametrize("package, paths, select", SAMPLE, ids=[s[0] for s in SAMPLE])
def test_library_suite_sample(package, paths, select):
    root, files = eco_run.suite_files(package)
    assert set(paths) <= set(files)
    res = eco_run.run_file(root, paths, every=1, timeout=300, extra=["-k", select] if select else [])
    counts = res["counts"]
    assert counts["passed"] >= 5 and counts["failed"] == counts["error"] == 0, (dict(counts), dict(res["reasons"]))


def _compare(names: list) -> None:
    cmd = [sys.executable, os.path.join(ECO, "optimizers.py"), "--pyjax", *names]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout)
    import jax
    import optax

    want = optimizers.run_all(jax, optax, names)
    assert got.keys() == want.keys()
    for key, w in want.items():
        g = got[key]
        assert not isinstance(w, str), f"{key} fails on JAX: {w}"
        assert not isinstance(g, str), f"{key} fails on pyjax: {g}"
        assert all(abs(a - b) <= 1e-5 + 1e-4 * abs(b) for a, b in zip(g, w)), (key, g, w)


@pytest.mark.slow  # 10-20 s each (the library's jit on JAX, a pyjax subprocess): make ecosystem runs them
@pytest.mark.parametrize(
    "model, library",
    [
        ("equinox_mlp", "equinox"),
        ("flax_linen_mlp", "flax"),  # flax imports jnp.float8_e4m3fnuz & co at import time
        ("flax_nnx_mlp", "flax"),
    ],
)
def test_model_matches_jax(model, library):
    pytest.importorskip(library)
    got, want = eco_run.compare_models([model])
    assert not isinstance(want[model], str), want
    assert not isinstance(got[model], str), got
    assert models.agree(got[model], want[model]), (got, want)


def test_optax_optimizers_sample():
    _compare(["adam", "adafactor", "noisy_sgd", "lbfgs"])


@pytest.mark.slow
def test_optax_optimizers_all(request):
    """All 34 optimizers of optax's alias_test against JAX (about a minute of JAX compiling)."""
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("pytest -m slow tests/test_ecosystem.py")
    _compare([])
