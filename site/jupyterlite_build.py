"""PyScript and JupyterLite in site/_build, offline: both run the site's own Pyodide and the pyjax wheel.

site/build.py calls build(out) after laying out Pyodide and the wheel. Three steps:

1. offline_lock: Pyodide's npm package ships no wheels, so `loadPackage("micropip")` (PyScript's
   `packages`, the JupyterLite kernel) fails. The pure-Python wheels the hosts need (micropip, and
   IPython with its dependencies for the kernel) are downloaded once from PyPI at the versions
   Pyodide's lockfile names, placed beside Pyodide, and pyodide-lock.json is rewritten to list only
   those, with their real sha256 (Pyodide checks it).
2. PyScript: @pyscript/core's dist/ (npm, web/package.json) goes to pyscript/ for pyscript.html.
3. JupyterLite: `jupyter lite build` into lite/ with the Pyodide kernel on that Pyodide copy, a
   piplite index holding pyjax and `comm` (the kernel's one dependency outside Pyodide's lock)
   with PyPI turned off, and the notebook site/jupyterlite.ipynb as pyjax.ipynb, and the favicons
   jupyter-server would have served (add_favicons). The kernel's page <-> worker calls get fixes
   for two races that left a cell, or the kernel's start, hanging (patch_coincident).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYSCRIPT = ROOT / "web" / "node_modules" / "@pyscript" / "core" / "dist"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pyjax-site" / "wheels"
NOTEBOOK = ROOT / "site" / "jupyterlite.ipynb"

# Lockfile packages the hosts load by name: PyScript and the kernel load micropip, the kernel
# installs ipython and jedi (their dependencies follow from the lockfile's `depends`).
LOCK_ROOTS = ["micropip", "packaging", "ipython", "jedi"]
# Pure wheels from PyPI for the kernel's piplite index (not in Pyodide's lockfile).
PIPLITE_EXTRA = ["comm==0.2.3"]
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"


def run(cmd: list[str], **kw) -> None:
    """Run a build step quietly; its output is shown only when it fails."""
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f"site/jupyterlite_build.py: {' '.join(cmd)} failed:\n{r.stdout}{r.stderr}")


def download(specs: list[str]) -> dict[str, Path]:
    """The py3 wheels of `specs` (name==version) from PyPI, cached across builds; name -> path."""
    CACHE.mkdir(parents=True, exist_ok=True)
    wanted = {spec.split("==")[0].lower().replace("_", "-"): spec for spec in specs}

    def found() -> dict[str, Path]:
        have = {}
        for whl in CACHE.glob("*.whl"):
            name, version = whl.name.split("-")[:2]
            key = name.lower().replace("_", "-")
            if key in wanted and wanted[key].split("==")[1] == version:
                have[key] = whl
        return have

    missing = [spec for key, spec in wanted.items() if key not in found()]
    if missing:
        cmd = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        cmd += ["--python-version", "3.14", "--implementation", "py", "-d", str(CACHE), *missing]
        run(cmd)
    have = found()
    lost = sorted(set(wanted) - set(have))
    if lost:
        sys.exit(f"site/jupyterlite_build.py: no pure-Python wheel on PyPI for {lost}")
    return have


def offline_lock(pyodide: Path) -> list[str]:
    """Rewrite pyodide/pyodide-lock.json to the LOCK_ROOTS closure, wheels beside it; returns the names."""
    lock_path = pyodide / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text())
    packages = lock["packages"]
    keep, todo = {}, list(LOCK_ROOTS)
    while todo:
        key = todo.pop().lower().replace("_", "-")
        if key not in keep:
            keep[key] = packages[key]
            todo += keep[key]["depends"]
    wheels = download([f"{p['name']}=={p['version']}" for p in keep.values()])
    for entry in keep.values():
        whl = wheels[entry["name"].lower().replace("_", "-")]
        shutil.copy2(whl, pyodide / whl.name)
        entry.update(file_name=whl.name, sha256=hashlib.sha256(whl.read_bytes()).hexdigest())
        entry["unvendored_tests"] = False
    lock["packages"] = dict(sorted(keep.items()))
    lock_path.write_text(json.dumps(lock, indent=1))
    return sorted(keep)


def copy_pyscript(out: Path) -> None:
    if not (PYSCRIPT / "core.js").exists():
        sys.exit("site/jupyterlite_build.py: @pyscript/core is missing; run `npm install` in web/ (make site does it)")
    dst = out / "pyscript"
    dst.mkdir(parents=True, exist_ok=True)
    for f in PYSCRIPT.iterdir():
        if f.suffix in (".js", ".css"):
            shutil.copy2(f, dst / f.name)


def contents_listing(files: Path) -> dict:
    """The Jupyter contents model of the notebook folder (what jupyter-server would index)."""
    when = "2026-01-01T00:00:00Z"
    entries = [
        {
            "name": f.name,
            "path": f.name,
            "type": "notebook",
            "format": None,
            "mimetype": None,
            "content": None,
            "writable": True,
            "created": when,
            "last_modified": when,
            "size": f.stat().st_size,
        }
        for f in sorted(files.glob("*.ipynb"))
    ]
    return {
        "name": "",
        "path": "",
        "type": "directory",
        "format": "json",
        "mimetype": None,
        "content": entries,
        "writable": True,
        "created": when,
        "last_modified": when,
        "size": None,
    }


# Favicons JupyterLite's apps point the page's icon at (idle and busy kernel), which jupyter-server
# ships but `jupyter lite build` does not: without them every kernel state change is a 404.
FAVICONS = ["favicon.ico", "favicon-notebook.ico", "favicon-busy-1.ico"]


def ico_from_png(png: bytes) -> bytes:
    """A one-image .ico holding a PNG (valid since Windows Vista, read by every browser)."""
    width, height = struct.unpack(">II", png[16:24])
    entry = struct.pack("<BBBBHHII", width % 256, height % 256, 0, 0, 1, 32, len(png), 6 + 16)
    return struct.pack("<HHH", 0, 1, 1) + entry + png


def add_favicons(dest: Path) -> None:
    """static/favicons/*.ico from the build's own Jupyter icon, and a <link rel="icon"> in each app's page
    (else the browser asks the server root for /favicon.ico)."""
    icons = dest / "static" / "favicons"
    icons.mkdir(parents=True, exist_ok=True)
    ico = ico_from_png((dest / "icon-120x120.png").read_bytes())
    for name in FAVICONS:
        (icons / name).write_bytes(ico)
    link = '<link rel="icon" href="../static/favicons/favicon.ico">'
    for page in dest.glob("*/index.html"):
        html = page.read_text()
        if link not in html:
            page.write_text(html.replace("</head>", f"  {link}\n  </head>", 1))


# coincident: the Pyodide kernel's calls between the page and its worker where the page is cross-origin
# isolated (@jupyterlite/pyodide-kernel 0.8). A call posts its request with an Int32Array over a
# SharedArrayBuffer and waits until the callee makes word 0 nonzero: the page (async) with
# `Atomics.waitAsync(sab, 0).value.then(...)`, the worker (sync) with `Atomics.wait(sab, 0, 0)`.
# A result string comes in a second round: the caller posts a buffer and the callee writes the
# string's UTF-16 codes into it from index 0, then notifies. Two races when the caller's thread is
# descheduled between posting and waiting (a loaded machine), fixed here in the built files:
# 1. The callee answered before the page waited: waitAsync then returns synchronously with a string
#    ("not-equal"), `.value.then` is not a function, the TypeError rejects the kernel's execute
#    handler and the cell's reply never comes: the kernel stays busy after the cell printed
#    everything ("A(...).value.then is not a function" in the page; about 1 run in 5 of the
#    notebook on a loaded 2-core machine, nearly always the last cell). Fix: coincident gets a
#    waitAsync whose synchronous answers come as resolved promises (COINCIDENT_ATOMICS).
# 2. The waiter looked while the string was half written: its first code already made word 0
#    nonzero, so wait returned "not-equal" and JSON.parse read zeros (seen as Pyodide's fatal error
#    "Bad control character in string literal in JSON" from a drive request while the kernel
#    started: no cell ever runs). Fix: word 0 is written last, atomically (COINCIDENT_WRITE).
COINCIDENT_ATOMICS = re.compile(r"(\{notify:[\w$]+,wait:[\w$]+,waitAsync:[\w$]+\}=)Atomics\b")
SETTLED_WAIT_ASYNC = (
    "{notify:Atomics.notify,wait:Atomics.wait,waitAsync:Atomics.waitAsync&&((...a)=>{"
    "const r=Atomics.waitAsync(...a);return r.async?r:{async:!1,value:Promise.resolve(r.value)}})}"
)
COINCIDENT_WRITE = re.compile(
    r"for\(let ([\w$]+)=new ([\w$]+)\(([\w$]+)\.buffer\),([\w$]+)=0;\4<([\w$]+)\.length;\4\+\+\)\1\[\4\]=\5\.charCodeAt\(\4\)"
)


def _write_word0_last(m: re.Match) -> str:
    t, u16, buf, i, s = m[1], m[2], m[3], m[4], m[5]
    return (
        f"{{let {t}=new {u16}({buf}.buffer);for(let {i}=2;{i}<{s}.length;{i}++){t}[{i}]={s}.charCodeAt({i});"
        f"Atomics.store(new Int32Array({buf}.buffer),0,{s}.charCodeAt(0)|({s}.length>1?{s}.charCodeAt(1)<<16:0))}}"
    )


def patch_coincident(dest: Path) -> list[Path]:
    """Fix coincident's two races (above) in the Pyodide kernel extension's files; returns the files
    patched. An extension where either pattern is missing stops the build: check whether its
    coincident still has the races, and update or drop the patch."""
    patched = []
    found = {"waitAsync": 0, "write": 0}
    for js in sorted((dest / "extensions" / "@jupyterlite" / "pyodide-kernel-extension").rglob("*.js")):
        text = js.read_text()
        new, a = COINCIDENT_ATOMICS.subn(lambda m: m[1] + SETTLED_WAIT_ASYNC, text)
        new, w = COINCIDENT_WRITE.subn(_write_word0_last, new)
        found["waitAsync"] += a
        found["write"] += w
        if a or w:
            js.write_text(new)
            patched.append(js)
    if not all(found.values()):
        sys.exit(
            f"site/jupyterlite_build.py: coincident's code changed in the Pyodide kernel extension ({found} "
            "places patched): check whether its waitAsync(...).value.then and half-written-answer races are "
            "still there, and update or drop patch_coincident"
        )
    return patched


def build_lite(out: Path, wheel: Path) -> Path:
    """`jupyter lite build` into out/lite with the Pyodide kernel on out/pyodide, offline."""
    dest = out / "lite"
    with tempfile.TemporaryDirectory() as tmp:
        lite = Path(tmp)
        shutil.copytree(out / "pyodide", lite / "static" / "pyodide")
        (lite / "pypi").mkdir()
        shutil.copy2(wheel, lite / "pypi" / wheel.name)
        for whl in download(PIPLITE_EXTRA).values():
            shutil.copy2(whl, lite / "pypi" / whl.name)
        page_config = {
            "contentsAllJsonFile": "all.json",  # the listing contents_listing() writes
            "exposeAppInBrowser": "true",  # window.jupyterapp, for the Playwright test
            "litePluginSettings": {KERNEL_PLUGIN: {"disablePyPIFallback": True}},
        }
        (lite / "jupyter-lite.json").write_text(json.dumps({"jupyter-config-data": page_config}))
        config = {"LiteBuildConfig": {"no_sourcemaps": True, "apps": ["lab", "notebooks"]}}
        (lite / "jupyter_lite_config.json").write_text(json.dumps(config))
        cmd = [sys.executable, "-m", "jupyterlite_core", "build", "--lite-dir", str(lite), "--output-dir", str(dest)]
        run(cmd, cwd=lite)
    patch_coincident(dest)
    add_favicons(dest)
    files = dest / "files"
    files.mkdir(exist_ok=True)
    shutil.copy2(NOTEBOOK, files / "pyjax.ipynb")
    (dest / "api" / "contents").mkdir(parents=True, exist_ok=True)
    (dest / "api" / "contents" / "all.json").write_text(json.dumps(contents_listing(files)))
    return dest


def build(out: Path) -> None:
    """PyScript's runtime and the JupyterLite deployment in `out` (site/_build), after site/build.py's layout."""
    wheel = out / "wheels" / json.loads((out / "wheels" / "index.json").read_text())["pyjax"]
    offline_lock(out / "pyodide")
    copy_pyscript(out)
    config = {"interpreter": "./pyodide/pyodide.mjs", "packages": [f"./wheels/{wheel.name}"]}
    (out / "pyscript.json").write_text(json.dumps(config))
    build_lite(out, wheel)
