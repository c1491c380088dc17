"""Lay out the static site in site/_build: the playground page, web/, Pyodide, the wheel (which carries its JS).

usage: python site/build.py   (run from anywhere; needs `npm install` done in web/)
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import jupyterlite_build
import playground_build

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


def add_bytecode(wheel: Path, out: Path) -> None:
    """Copy the wheel to `out` with Pyodide's CPython bytecode added under __pycache__/.

    The sources stay, so it is still a valid py3-none-any wheel (other Pythons ignore the
    cpython-3XX.pyc files); in the page it cuts `import pyjax` from ~0.8 s to ~0.1 s.
    """
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(wheel) as z:
            z.extractall(tmp)
            names = z.namelist()
        subprocess.run(["node", str(ROOT / "site" / "precompile.mjs"), str(PYODIDE), tmp], check=True)
        record = next(n for n in names if n.endswith(".dist-info/RECORD"))
        pycs = sorted(str(f.relative_to(tmp)) for f in Path(tmp).rglob("*.pyc"))
        lines = []
        for name in pycs:
            data = (Path(tmp) / name).read_bytes()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            lines.append(f"{name},sha256={digest},{len(data)}")
        with open(Path(tmp) / record, "a") as f:
            f.write("".join(line + "\n" for line in lines))
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
            for name in [n for n in names if n != record] + pycs + [record]:
                z.write(Path(tmp) / name, name)


def copy_tree(src: Path, dst: Path, pattern: str = "*") -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for f in src.glob(pattern):
        if f.is_file():
            shutil.copy2(f, dst / f.name)


def copy_bench(out: Path) -> None:
    """bench.html's parts: the workloads of both libraries (bench/browser_*) and jax-js from npm."""
    copy_tree(ROOT / "bench", out / "bench", "browser_*.*")
    copy_tree(ROOT / "web" / "node_modules" / "@jax-js" / "jax" / "dist", out / "jaxjs", "*.js")


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
    copy_tree(PYODIDE, OUT / "pyodide")
    (OUT / "wheels").mkdir()
    add_bytecode(wheel, OUT / "wheels" / wheel.name)
    (OUT / "wheels" / "index.json").write_text(json.dumps({"pyjax": wheel.name}))
    copy_bench(OUT)
    playground_build.build(OUT)  # the editor/chart bundle and the examples gallery
    jupyterlite_build.build(OUT)  # PyScript and JupyterLite on the same Pyodide, offline
    return OUT


if __name__ == "__main__":
    print(main())
