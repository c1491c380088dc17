"""The playground's part of the site build: the editor and charting bundle, and the examples gallery.

`build(out)` writes into site/_build (called by site/build.py):
- vendor.js: CodeMirror 6 (Python mode) and uPlot from web/node_modules, bundled by esbuild (no network),
  and uPlot's stylesheet as vendor.css;
- examples.json: each examples/*.py (but demo.py, the native demo) with its title and description
  (the docstring's first line and first paragraph) and its code, plus the data files the examples
  read (examples/data/, copied to examples/data/ beside the page and into Pyodide's file system).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "web" / "node_modules"
EXAMPLES = ROOT / "examples"
NOT_IN_GALLERY = {"demo"}  # the native demo (argparse, sys.path): `make demo`
DATA_SUFFIXES = {".safetensors", ".txt", ".json", ".csv", ".bin"}


def bundle(out: Path) -> None:
    esbuild = NODE_MODULES / ".bin" / "esbuild"
    if not esbuild.exists():
        raise SystemExit("site/build.py: esbuild is missing; run `npm install` in web/ (make serve does it)")
    subprocess.run(
        [str(esbuild), str(ROOT / "site" / "vendor" / "entry.js"), "--bundle", "--format=esm", "--minify",
         "--log-level=warning", f"--outfile={out / 'vendor.js'}"],
        check=True,
        env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
    )  # fmt: skip
    shutil.copy2(NODE_MODULES / "uplot" / "dist" / "uPlot.min.css", out / "vendor.css")


def describe(source: str, name: str) -> tuple[str, str]:
    """(title, description) from the module docstring: its first line, then its first paragraph."""
    doc = ast.get_docstring(ast.parse(source)) or name
    title, _, rest = doc.partition("\n")
    description = " ".join(rest.strip().split("\n\n")[0].replace("`", "").split())
    return title.strip().rstrip("."), description


def examples(out: Path) -> list[dict]:
    items = []
    for path in sorted(EXAMPLES.glob("*.py")):
        if path.stem in NOT_IN_GALLERY or path.stem.startswith("_"):
            continue
        code = path.read_text()
        title, description = describe(code, path.stem)
        items.append({"name": path.stem, "title": title, "description": description, "code": code})
    data = []
    for f in sorted((EXAMPLES / "data").glob("*")) if (EXAMPLES / "data").is_dir() else []:
        if f.is_file() and f.suffix in DATA_SUFFIXES:
            (out / "examples" / "data").mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, out / "examples" / "data" / f.name)
            data.append(f"data/{f.name}")
    (out / "examples.json").write_text(json.dumps({"examples": items, "data": data}))
    return items


def build(out: Path) -> None:
    bundle(out)
    examples(out)
