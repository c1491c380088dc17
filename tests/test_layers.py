"""Imports point down the layers only, also inside functions (DESIGN.md, issue 17).

Every module of pyjax/ is parsed with `ast` (nothing is imported, so this takes well under a
second); each `import`/`from ... import` anywhere in it, relative or absolute, and each
`importlib.import_module("pyjax...")` with a literal name, must point to its own layer or to one
that LAYERS lets it use. Inside backends/ and hosts/ each backend or host is its own unit:
units may use the layer's shared modules, never each other (no sideways imports).
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import pathlib
import re

import pytest

PKG = pathlib.Path(__file__).resolve().parent.parent / "pyjax"

# The layers, top to bottom, and the layers each may import besides itself. The library is
# the public API with numpy/, lax/, nn/, scipy/, random, ... (every module not in a folder
# below). A layer needs something from above? Move the piece down, or let the upper layer fill
# a table of the lower one at import (core/hooks.py, the backend and host registries).
LAYERS: dict[str, set[str]] = {
    "library": {"interpreters", "runtime", "compiler", "core"},
    "interpreters": {"core"},
    "runtime": {"compiler", "backends", "core"},
    "backends": {"compiler", "hosts", "core"},
    "compiler": {"core"},
    "hosts": {"core"},
    "core": set(),
}

# Layers whose sub-packages/modules are separate units that must not import each other; the
# modules named here are the layer's shared part, which every unit may use.
UNITS: dict[str, set[str]] = {
    "backends": {"__init__", "base", "limits"},
    "hosts": {"__init__", "webgpu_contract"},
}

# Known violations waiting for their owner, each as (module, imported module) with the reason.
# Empty since interpreters/ad.py stopped importing lax; keep it so.
ALLOWED: set[tuple[str, str]] = set()


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "library"


def unit_of(module: str) -> str | None:
    """backends.wasm.codegen -> 'wasm'; backends.base -> None (shared)."""
    parts = module.split(".")
    if len(parts) < 3 or parts[1] not in UNITS or parts[2] in UNITS[parts[1]]:
        return None
    return parts[2]


@functools.cache
def _is_module(name: str) -> bool:
    path = PKG.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


# Where an import statement starts (module or function level). Only these statements are
# parsed with `ast`: parsing all of pyjax/ takes seconds, the statements milliseconds.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+[\w.]+[ \t]+import\b|import[ \t]+\w)", re.M)
_IMPORT_MODULE = re.compile(r"import_module\(\s*[\"']([\w.]+)")  # importlib with a literal name


def _line_starts(lines: list[str]) -> list[int]:
    """Offsets where each line starts: bisect(starts, offset) is the 1-based line number."""
    return [0, *itertools.accumulate(map(len, lines))]


def _statement(lines: list[str], i: int) -> ast.stmt:
    """The import statement starting at lines[i] (it may continue over the next lines)."""
    for j in range(i + 1, len(lines) + 1):
        try:
            return ast.parse("".join(lines[i:j]).strip()).body[0]
        except SyntaxError:
            continue
    raise SyntaxError(f"unterminated import at line {i + 1}")


def imports(path: pathlib.Path, module: str) -> list[tuple[str, int]]:
    """(imported pyjax module, line) for every import in the file, at any depth."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    text = path.read_text()
    lines = text.splitlines(keepends=True)
    starts = _line_starts(lines)
    found = []
    for m in _IMPORT.finditer(text):
        line = bisect.bisect(starts, m.start())
        node = _statement(lines, line - 1)
        if isinstance(node, ast.Import):
            found += [(a.name, line) for a in node.names]
            continue
        base = node.module or ""
        if node.level:
            up = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join(up + ([node.module] if node.module else []))
        for a in node.names:  # `from pkg import mod` imports pkg.mod
            full = f"{base}.{a.name}"
            found.append((full if _is_module(full) else base, line))
    for m in _IMPORT_MODULE.finditer(text):
        found.append((m.group(1), bisect.bisect(starts, m.start())))
    return [(name, line) for name, line in found if name == "pyjax" or name.startswith("pyjax.")]


def modules() -> list[tuple[pathlib.Path, str]]:
    out = []
    for path in sorted(PKG.rglob("*.py")):
        parts = path.relative_to(PKG.parent).with_suffix("").parts
        out.append((path, ".".join(parts[:-1] if parts[-1] == "__init__" else parts)))
    return out


def violations(files=None) -> list[str]:
    bad = []
    for path, module in files or modules():
        here, unit = layer_of(module), unit_of(module)
        for target, line in imports(path, module):
            there = layer_of(target)
            if target == "pyjax":  # `from pyjax import x` of a non-module: the public API
                there = "library"
            if there == here:
                other = unit_of(target)
                ok = other is None or other == unit
            else:
                ok = there in LAYERS[here]
            if not ok and (module, target) not in ALLOWED:
                bad.append(f"{module}:{line} imports {target} ({here} -> {there})")
    return bad


# A module-level `alias.name = value`: rebinding a name of another module at import.
_PATCH = re.compile(r"^([A-Za-z_]\w*)\.([A-Za-z_]\w*)[ \t]*=[^=]", re.M)


def patches(files=None) -> list[str]:
    """Module-level assignments into a module of another layer (import-time monkey-patching):
    the lower layer should declare a table that the upper one fills instead."""
    bad = []
    for path, module in files or modules():
        text = path.read_text()
        lines = text.splitlines(keepends=True)
        starts = _line_starts(lines)
        aliases = {}  # name bound at module level -> the pyjax module it names
        for m in _IMPORT.finditer(text):
            line = bisect.bisect(starts, m.start()) - 1
            if lines[line][:1].isspace():
                continue
            node = _statement(lines, line)
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if _is_module(f"{node.module}.{a.name}"):
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
            elif isinstance(node, ast.Import):
                aliases.update({a.asname: a.name for a in node.names if a.asname})
        for m in _PATCH.finditer(text):
            target = aliases.get(m.group(1), "")
            if target.startswith("pyjax.") and layer_of(target) != layer_of(module):
                line = bisect.bisect(starts, m.start())
                bad.append(f"{module}:{line} assigns {target}.{m.group(2)}")
    return bad


def test_layer_table_is_acyclic():
    seen: dict[str, set[str]] = {}

    def below(layer: str) -> set[str]:
        if layer not in seen:
            seen[layer] = set()
            for lower in LAYERS[layer]:
                seen[layer] |= {lower} | below(lower)
        return seen[layer]

    for layer in LAYERS:
        assert layer not in below(layer), f"layer {layer} can reach itself"


def test_imports_point_down():
    bad = violations()
    assert not bad, "imports against the layers (see LAYERS in tests/test_layers.py):\n" + "\n".join(bad)


def test_allow_list_is_current():
    """An entry of ALLOWED that no longer occurs must go."""
    live = {(m, t) for path, m in modules() for t, _ in imports(path, m)}
    assert not ALLOWED - live, f"stale ALLOWED entries: {sorted(ALLOWED - live)}"


@pytest.mark.parametrize(
    "module, source",
    [
        ("pyjax.core.dtypes", "def f():\n    from pyjax.numpy import asarray\n"),
        ("pyjax.interpreters.batching", "def f():\n    from ..lax import lax\n"),
        ("pyjax.runtime.device", "import pyjax.hosts.browser\n"),
        ("pyjax.backends.wasm.codegen", "from pyjax.backends.webgpu import wgsl\n"),
        ("pyjax.hosts.browser", "from . import wgpu_host\n"),
        ("pyjax.compiler.ir", "import importlib\nimportlib.import_module('pyjax.runtime.array')\n"),
    ],
)
def test_an_upward_import_fails(tmp_path, module, source):
    """The checker itself: an added upward or sideways import is reported."""
    path = tmp_path / "m.py"
    path.write_text(source)
    assert len(violations([(path, module)])) == 1


def test_no_monkey_patching_across_layers():
    bad = patches()
    assert not bad, "import-time assignments into another layer's module:\n" + "\n".join(bad)


def test_a_patch_fails(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("from pyjax.runtime import execute\n\nexecute.physicalize = len\nexecute.x == 1\n")
    assert patches([(path, "pyjax.lax.complex")]) == ["pyjax.lax.complex:3 assigns pyjax.runtime.execute.physicalize"]


# The library's own layers, top to bottom, as in JAX: lax (with the transformations and types it
# uses, LAX_LEVEL) below numpy, numpy below random, nn and scipy; each may import the ones listed.
# A library module belongs to the part named by its top-level name (pyjax.<name>...); modules named
# nowhere (pyjax/__init__, experimental, example_libraries, image, ...) sit on top and may use all.
LIBRARY: dict[str, set[str]] = {
    "scipy": {"nn", "random", "numpy", "lax"},
    "nn": {"random", "numpy", "lax"},
    "random": {"numpy", "lax"},
    "numpy": {"lax"},
    "lax": set(),
}
LAX_LEVEL = {"lax", "api", "custom_derivatives", "custom_batching", "stages", "pjit", "abstract_arrays", "ref"}
LAX_LEVEL |= {"sharding", "_prng"}
LAX_LEVEL |= {"_typing", "dtypes", "errors", "tree_util"}


def library_part(module: str) -> str | None:
    """pyjax.numpy._ufuncs -> 'numpy', pyjax.api -> 'lax', pyjax (the package) -> 'top'; None outside
    the library layer."""
    parts = module.split(".")
    if layer_of(module) != "library":
        return None
    if len(parts) < 2:
        return "top"
    return parts[1] if parts[1] in LIBRARY else "lax" if parts[1] in LAX_LEVEL else "top"


def library_violations(files=None) -> list[str]:
    bad = []
    for path, module in files or modules():
        here = library_part(module)
        if here in (None, "top"):
            continue
        for target, line in imports(path, module):
            there = library_part(target)
            if there is not None and there != here and there not in LIBRARY[here]:
                bad.append(f"{module}:{line} imports {target} ({here} -> {there})")
    return bad


def test_library_imports_point_down():
    bad = library_violations()
    assert not bad, "imports against the library's layers (see LIBRARY in tests/test_layers.py):\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "module, source",
    [
        ("pyjax.lax.linalg", "def f():\n    from pyjax import numpy as jnp\n"),
        ("pyjax.api", "def f():\n    from pyjax.numpy import asarray\n"),
        ("pyjax.numpy.linalg", "def f():\n    from pyjax.scipy import linalg\n"),
        ("pyjax.nn", "from pyjax.scipy.special import logsumexp\n"),
        ("pyjax.scipy.linalg", "def f():\n    import pyjax\n"),
    ],
)
def test_an_upward_library_import_fails(tmp_path, module, source):
    path = tmp_path / "m.py"
    path.write_text(source)
    assert len(library_violations([(path, module)])) == 1


def import_cycles(files=None) -> list[list[str]]:
    """The import cycles of pyjax: strongly connected components of more than one module in the
    graph of module- and function-level imports (Tarjan's algorithm), largest first."""
    graph: dict[str, set[str]] = {}
    for path, module in files or modules():
        graph.setdefault(module, set()).update(t for t, _ in imports(path, module) if t not in (module, "pyjax"))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            v, edges = work[-1]
            w = next((w for w in edges if w in graph), None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    i = len(stack) - stack[::-1].index(v) - 1
                    component, stack[i:] = stack[i:], []
                    for m in component:
                        index[m] = len(graph) + 1  # done: no longer on the stack
                    if len(component) > 1:
                        found.append(sorted(component))
            elif w not in index:
                index[w] = low[w] = len(index)
                stack.append(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in stack:
                low[v] = min(low[v], index[w])
    return sorted(found, key=len, reverse=True)


# The library's one big import cycle (numpy <-> lax <-> api, issue 17): 60 modules in session 10, 55 since
# pyjax.dtypes and _prng stopped importing numpy, 39 since numpy._ufuncs and random import the lax
# submodules they use (control_flow, sorting) instead of the whole pyjax.lax package, 34 since lax._util,
# control_flow, parallel and slicing stopped importing numpy (the lazy import moved to lax._lazy_numpy),
# 9 (numpy's own topic modules) since api and custom_derivatives convert through lax (_arr, iota, reshape)
# instead of importing numpy; lax.linalg is written with lax ops (eig/schur reach the Schur iterations
# through core/hooks.py), which leaves numpy.linalg <-> scipy._schur (5 modules); lax.special, fft, shapes,
# bits, reductions and ragged are written with lax ops too, and lax._lazy_numpy is gone. The Schur iterations
# moved to numpy._schur and logsumexp to nn, so LIBRARY's order (lax < numpy < random < nn < scipy) holds.
# numpy._schur keeps only what eig/schur need (scipy's hessenberg, qr_multiply, sqrtm, ... went back to
# scipy) and uses numpy's topic modules, not the package; api <-> custom_derivatives <-> stages is gone
# (pjit_p and ShapeDtypeStruct moved below both, closure_convert and custom_gradient to custom_derivatives).
# The small cycles inside one layer went too (numpy._bits; cpu's python_eval/routines_linalg and webgpu's
# renderer/matmul through a shared lower module; compiler.lowering, whose rule modules partition imports).
# runtime's array/control/execute/plans (4) went: they stack array < execute < plans < control, and the
# three calls that recurse upwards (materialize, run a host step, plan a program) go through
# core/hooks.py, filled at import. numpy's topic modules (9) went too; they stack _promotion (with
# stack's array part) < _keys (handed the jnp function it lifts by its caller) < _util < _creation <
# _elementwise (with nonzero, which where(c) is) < _reductions < _manipulation (with take, which insert,
# delete, put, repeat, pad and sorting use) < _sorting < _indexing; linspace/logspace/geomspace/meshgrid
# moved from _creation to _ranges, above them. No import cycle is left: keep it so.
# `python tests/test_layers.py` lists the cycles.
LARGEST_CYCLE = 0
CYCLES = 0


def test_import_cycles_do_not_grow():
    sizes = [len(c) for c in import_cycles()]
    assert not sizes or sizes[0] <= LARGEST_CYCLE, f"largest import cycle: {sizes[0]} modules (was {LARGEST_CYCLE})"
    assert len(sizes) <= CYCLES, f"{len(sizes)} import cycles (was {CYCLES}): `python tests/test_layers.py` lists them"


def test_a_cycle_is_found(tmp_path):
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text("def f():\n    import pyjax.lax.b\n")
    b.write_text("import pyjax.lax.a\n")
    c.write_text("import pyjax.lax.a\n")
    files = [(a, "pyjax.lax.a"), (b, "pyjax.lax.b"), (c, "pyjax.lax.c")]
    assert import_cycles(files) == [["pyjax.lax.a", "pyjax.lax.b"]]


if __name__ == "__main__":
    for cycle in import_cycles():
        print(len(cycle), " ".join(cycle))
