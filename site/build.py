"""Lay out the static site in site/_build: the playground page, web/, shims/, Pyodide, the wheel.

usage: python site/build.py   (run from anywhere; needs `npm install` done in web/)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "site" / "_build"
PYODIDE = ROOT / "web" / "node_modules" / "pyodide"


def build_wheel() -> Path:
    dist = ROOT / "dist"
    for old in dist.glob("pyjax-*.whl"):
        old.unlink()
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return next(dist.glob("pyjax-*-py3-none-any.whl"))


def copy_tree(src: Path, dst: Path, pattern: str = "*") -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.glob(pattern):
        if f.is_file():
            shutil.copy2(f, dst / f.name)


def main() -> Path:
    if not (PYODIDE / "pyodide.mjs").exists():
        sys.exit("site/build.py: Pyodide is missing; run `npm install` in web/ first (make serve does it)")
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    wheel = build_wheel()
    copy_tree(ROOT / "site", OUT, "*.html")
    copy_tree(ROOT / "site", OUT, "*.mjs")
    copy_tree(ROOT / "site", OUT, "*.css")
    copy_tree(ROOT / "web", OUT / "web", "*.mjs")
    copy_tree(ROOT / "shims", OUT / "shims", "*.mjs")
    copy_tree(PYODIDE, OUT / "pyodide")
    (OUT / "wheels").mkdir()
    shutil.copy2(wheel, OUT / "wheels" / wheel.name)
    (OUT / "wheels" / "index.json").write_text(json.dumps({"pyjax": wheel.name}))
    return OUT


if __name__ == "__main__":
    print(main())
