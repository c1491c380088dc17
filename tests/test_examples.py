"""The gallery (examples/*.py): each example runs natively on wasm, draws its figures, and prints the
values that the same file printed when run on real JAX (its pyjax imports swapped for JAX's).

Each example is executed in this process as `__main__` with stdout captured and pyjax.show's sink
recording the figure specs. JAX's output for each example is kept in tests/examples_jax/NAME.txt (JAX
takes ~10 s per example on this machine, mostly compiling eager ops): `python tests/test_examples.py
[NAME ...]` rewrites those files, and the `slow` tests check that they are still what JAX prints. The
JAX run swaps `import pyjax as jax`, `import pyjax.numpy as jnp` and `from pyjax import lax, ...` for
JAX's modules and pyjax.serialization for `safetensors.flax` (the same load/save API); pyjax.show stays
(it draws JAX arrays too). Printed lines are compared word by word, numbers within a tolerance; lines
with timings (a word "ms") are skipped.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import runpy

import pytest

import pyjax
from pyjax import show

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
GALLERY = sorted(f[:-3] for f in os.listdir(EXAMPLES) if f.endswith(".py") and f != "demo.py")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf")


_ORACLE_IMPORTS = {"show": "from pyjax import show", "serialization": "from safetensors import flax as serialization"}


def _jax_source(src: str) -> str:
    """The example's source with its pyjax imports pointing at JAX (pyjax.show kept)."""
    out = []
    for line in src.splitlines():
        if line.startswith("from pyjax import "):
            names = [n.strip() for n in line[len("from pyjax import ") :].split(",")]
            line = "; ".join(_ORACLE_IMPORTS.get(n, f"from jax import {n}") for n in names)
        elif line.startswith(("import pyjax", "from pyjax.")):
            line = line.replace("pyjax", "jax")
        out.append(line)
    return "\n".join(out) + "\n"


def run_example(name: str, oracle: bool = False) -> tuple[str, list[dict]]:
    """Run examples/NAME.py (on JAX when oracle) and return its stdout and the figure specs it sent."""
    path = os.path.join(EXAMPLES, name + ".py")
    with open(path) as f:
        src = f.read()
    if oracle:
        src = _jax_source(src)
    specs: list[dict] = []
    show.reset()
    show.set_sink(specs.append, interval=0)
    out = io.StringIO()
    try:
        device = contextlib.nullcontext() if oracle else pyjax.default_device(pyjax.devices("wasm")[0])
        with device, contextlib.redirect_stdout(out):
            exec(compile(src, path, "exec"), {"__name__": "__main__", "__file__": path})
            show.flush()
    finally:
        show.set_sink(None)
        show.reset()
    return out.getvalue(), specs


def compare_output(got: str, want: str, rtol: float, atol: float) -> None:
    """Same lines and words; numbers equal within rtol/atol (lines with a word "ms" are timings)."""
    got_lines = [g for g in got.splitlines() if " ms" not in g]
    want_lines = [w for w in want.splitlines() if " ms" not in w]
    assert len(got_lines) == len(want_lines), f"pyjax printed\n{got}\nJAX printed\n{want}"
    for g, w in zip(got_lines, want_lines):
        assert _NUMBER.sub("#", g) == _NUMBER.sub("#", w), f"line differs:\n pyjax: {g}\n   JAX: {w}"
        for a, b in zip(_NUMBER.findall(g), _NUMBER.findall(w)):
            fa, fb = float(a), float(b)
            assert abs(fa - fb) <= atol + rtol * abs(fb), f"{a} vs JAX's {b} in line:\n pyjax: {g}\n   JAX: {w}"


GOLDEN = os.path.join(ROOT, "tests", "examples_jax")
# name -> (rtol, atol, regex of lines not compared); accuracies print 3 decimals, one digit of 297 is 0.0034
TOLERANCE = {"digits_mlp": (1e-3, 0.01, None), "digits_cnn": (1e-2, 0.01, None)}
TOLERANCE["char_transformer"] = (0.05, 0.05, r"^sample: ")  # a flipped argmax changes the rest of a sample
# a point on the set's boundary flips with a 1-ulp change of its grid value, and XLA fuses linspace's
# arithmetic into the jitted caller differently from its eager form (which pyjax's follows)
TOLERANCE["mandelbrot"] = (2e-3, 1e-5, None)
TOLERANCE["devices"] = (1e-3, 1e-5, r" agrees with ")  # JAX has one device here, pyjax several


def _golden(name: str) -> str:
    with open(os.path.join(GOLDEN, name + ".txt")) as f:
        return f.read()


def _compare(name: str, got: str, want: str, scale: float = 1.0) -> None:
    rtol, atol, skip = TOLERANCE.get(name, (1e-3, 1e-5, None))
    if skip:
        got, want = ("\n".join(x for x in text.splitlines() if not re.search(skip, x)) for text in (got, want))
    compare_output(got, want, rtol * scale, atol * scale)


def _drawn(spec: dict) -> bool:
    """Whether a figure spec has something to draw."""
    if spec["kind"] == "plot":
        return any(len(s.get("y") or s.get("lo") or []) for s in spec["series"])
    return bool(spec.get("data") or spec.get("counts") or spec["kind"] == "progress")


def test_gallery_has_its_examples():
    assert len(GALLERY) >= 12, GALLERY
    assert sorted(f[:-4] for f in os.listdir(GOLDEN)) == GALLERY, "every example needs JAX's output"


@pytest.mark.parametrize("name", GALLERY)
def test_example_source(name):
    """A docstring (title line, blank, 1-3 sentences), JAX-style imports, no numpy (Pyodide has none)."""
    with open(os.path.join(EXAMPLES, name + ".py")) as f:
        src = f.read()
    tree = ast.parse(src)
    doc = ast.get_docstring(tree)
    assert doc and "\n\n" in doc, f"{name}: docstring needs a title line, a blank line and a description"
    title, description = doc.split("\n\n", 1)
    assert "\n" not in title and len(title) < 80 and description.strip()
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m.split(".")[0] in ("numpy", "jax") for m in imported), f"{name} imports {imported}"
    assert "import pyjax as jax" in src and "import pyjax.numpy as jnp" in src


@pytest.mark.parametrize("name", GALLERY)
def test_example_matches_jax(name):
    out, specs = run_example(name)
    _compare(name, out, _golden(name))
    drawn = [s for s in specs if s["kind"] != "progress"]
    assert drawn and all(_drawn(s) for s in drawn), f"{name} drew {[(s['kind'], s['title']) for s in specs]}"
    if name in CHECKS:
        CHECKS[name](out)


def _number_after(out: str, words: str) -> float:
    return float(re.findall(re.escape(words) + r"\s*([-+\d.e]+)", out)[-1])


def _at_least(words: str, bar: float):
    def check(out):
        assert _number_after(out, words) >= bar, f"{words!r} below {bar}:\n{out}"

    return check


def _check_devices(out):
    """Every other device agrees with the first on every program (JAX's run has only one device)."""
    for d in ("webgpu", "cpu"):
        if re.search(rf"^\s*{d}: sort", out, re.M):
            assert f"{d} agrees with wasm on: sort, argsort, cholesky, triangular_solve" in out, out


def _check_transformer(out):
    assert _number_after(out, "loss") < 1.0, out


CHECKS = {  # bars beyond matching JAX
    "digits_mlp": _at_least("test accuracy", 0.9),
    "digits_cnn": _at_least("final test accuracy", 0.88),
    "pretrained_digits": _at_least("test accuracy", 0.88),
    "char_transformer": _check_transformer,
    "devices": _check_devices,
}


def test_data_files_rebuild_from_their_sources(tmp_path):
    """The committed digits and text are what examples/data/build.py makes from scikit-learn and `this`."""
    pytest.importorskip("sklearn")
    pytest.importorskip("safetensors")
    build = runpy.run_path(os.path.join(EXAMPLES, "data", "build.py"))
    for name, make in (("digits.safetensors", build["build_digits"]), ("zen.txt", build["build_zen"])):
        make(str(tmp_path / name))
        with open(tmp_path / name, "rb") as f, open(os.path.join(EXAMPLES, "data", name), "rb") as g:
            assert f.read() == g.read(), f"examples/data/{name} is stale: rerun examples/data/build.py"


@pytest.mark.slow
@pytest.mark.parametrize("name", GALLERY)
def test_jax_output_is_current(name, request):
    """tests/examples_jax/NAME.txt is what JAX prints for the example today (rewrite it if this fails)."""
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("JAX's run of every example takes minutes: pytest -m slow tests/test_examples.py")
    out, _ = run_example(name, oracle=True)
    _compare(name, out, _golden(name), scale=0.1)


if __name__ == "__main__":
    import sys

    os.makedirs(GOLDEN, exist_ok=True)
    for name in sys.argv[1:] or GALLERY:
        out, _ = run_example(name, oracle=True)
        with open(os.path.join(GOLDEN, name + ".txt"), "w") as f:
            f.write(out)
        print(f"{name}: {len(out.splitlines())} lines")
