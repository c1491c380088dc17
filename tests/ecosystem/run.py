"""Run optax's and chex's own test suites (shipped inside their packages) on pyjax through alias_jax.

    python tests/ecosystem/run.py [--suites optax chex] [--every N] [--timeout S] [--match SUBSTR] [--models]

Each test file runs in its own pytest process (`-p alias_plugin` aliases jax first, on the cpu
backend unless JAX_PLATFORMS says otherwise); prints per-file and total pass/fail/error/skip counts
and the most common failure reasons. `--every N` runs a fixed sample: every N-th test of each file.
The full run takes hours on a 2-core machine; `make ecosystem` runs it. `--models` also trains the
small models of models.py (equinox, flax; those whose package is installed) on pyjax and on JAX and
prints whether they agree (`--suites` with no names: only the models).
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))


def suite_files(suite: str) -> tuple[str, list[str]]:
    """(site-packages dir, test files relative to it) of an installed package."""
    spec = importlib.util.find_spec(suite)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{suite} is not installed (pip install {suite})")
    pkg = list(spec.submodule_search_locations)[0]
    root = os.path.dirname(pkg)
    files = []
    for d, _, names in os.walk(pkg):
        files += [os.path.relpath(os.path.join(d, n), root) for n in names if n.endswith("_test.py")]
    return root, sorted(files)


def run_file(root: str, path: str | list, every: int, timeout: float, extra: list[str]) -> dict:
    """Counts and failure reasons of one pytest process over path (a test file, or a list of them)."""
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "report.xml")
        cmd = [sys.executable, "-m", "pytest", "-p", "alias_plugin", "-p", "no:cacheprovider", "-p", "no:playwright"]
        paths = [path] if isinstance(path, str) else list(path)
        cmd += ["-q", f"--rootdir={tmp}", f"--junitxml={xml}", f"--eco-every={every}", *extra, *paths]
        env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
        env.setdefault("JAX_PLATFORMS", "cpu")
        try:
            proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
            tail = proc.stdout[-2000:] + proc.stderr[-2000:]
        except subprocess.TimeoutExpired:
            tail = "timeout"
        return _parse(xml, tail)


def compare_models(names: list) -> tuple[dict, dict]:
    """models.py's results for names: (on pyjax through the alias, in a subprocess; on JAX, here)."""
    import json

    import jax
    import models

    cmd = [sys.executable, os.path.join(HERE, "models.py"), "--pyjax", *names]
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"models.py --pyjax failed: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout), models.run_all(jax, names)


def run_models() -> None:
    import models

    names = [n for n, pkg in models.PACKAGES.items() if importlib.util.find_spec(pkg) is not None]
    skipped = sorted(set(models.MODELS) - set(names))
    if not names:
        print(f"\nmodels: none of {sorted(set(models.PACKAGES.values()))} is installed")
        return
    got, want = compare_models(names)
    print("\nmodels (pyjax through alias_jax vs JAX):")
    for name in names:
        g, w = got[name], want[name]
        if isinstance(w, str):
            verdict = f"fails on JAX: {w}"
        elif isinstance(g, str):
            verdict = f"fails on pyjax: {g}"
        else:
            worst = max((abs(a - b) for a, b in zip(g, w)), default=0.0)
            verdict = f"{'agrees' if models.agree(g, w) else 'DIFFERS'} (largest difference {worst:.2g})"
        print(f"  {name:20s} {verdict}")
    for name in skipped:
        print(f"  {name:20s} skipped ({models.PACKAGES[name]} is not installed)")


def _reason(el) -> str:
    msg = (el.get("message") or el.text or "").strip().splitlines()
    text = msg[0] if msg else el.tag
    text = re.sub(r"0x[0-9a-f]+", "0x..", text)
    text = re.sub(r"\d+(\.\d+)?", "N", text)
    return text[:140]


def _parse(xml: str, tail: str) -> dict:
    counts = collections.Counter()
    reasons = collections.Counter()
    if not os.path.exists(xml):
        counts["error"] += 1
        reasons[f"file did not run: {tail.strip().splitlines()[-1] if tail.strip() else '?'}"[:140]] += 1
        return {"counts": counts, "reasons": reasons}
    for case in ET.parse(xml).getroot().iter("testcase"):
        kinds = [c for c in case if c.tag in ("failure", "error", "skipped")]
        if not kinds:
            counts["passed"] += 1
            continue
        el = kinds[0]
        kind = {"failure": "failed", "error": "error", "skipped": "skipped"}[el.tag]
        counts[kind] += 1
        if kind != "skipped":
            reasons[_reason(el)] += 1
    if tail == "timeout":
        counts["error"] += 1
        reasons["file timed out"] += 1
    return {"counts": counts, "reasons": reasons}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suites", nargs="*", default=["optax", "chex"])
    ap.add_argument("--every", type=int, default=1, help="run every N-th test of each file (a fixed sample)")
    ap.add_argument("--timeout", type=float, default=3600, help="seconds per test file")
    ap.add_argument("--match", default="", help="only files whose path contains this")
    ap.add_argument("--reasons", type=int, default=15, help="how many failure reasons to print")
    ap.add_argument("--models", action="store_true", help="also compare models.py's trainings with JAX")
    args, extra = ap.parse_known_args(argv)
    total = collections.Counter()
    reasons = collections.Counter()
    for suite in args.suites:
        root, files = suite_files(suite)
        suite_total = collections.Counter()
        for path in files:
            if args.match not in path:
                continue
            res = run_file(root, path, args.every, args.timeout, extra)
            c = res["counts"]
            suite_total.update(c)
            reasons.update(res["reasons"])
            print(
                f"{path:60s} passed {c['passed']:5d} failed {c['failed']:4d} error {c['error']:4d} "
                f"skipped {c['skipped']:4d}",
                flush=True,
            )
        _summary(suite, suite_total)
        total.update(suite_total)
    if len(args.suites) > 1:
        _summary("all", total)
    if args.suites:
        print("\nmost common failure reasons:")
        for text, n in reasons.most_common(args.reasons):
            print(f"{n:5d}  {text}")
    if args.models:
        run_models()
    return 0


def _summary(name: str, c: collections.Counter) -> None:
    ran = c["passed"] + c["failed"] + c["error"]
    pct = 100.0 * c["passed"] / ran if ran else 0.0
    print(
        f"== {name}: {c['passed']} passed, {c['failed']} failed, {c['error']} errors, {c['skipped']} skipped "
        f"({pct:.1f}% of those run passed)",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
