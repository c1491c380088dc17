"""Every gallery example run in the playground through its test hook, on wasm and on webgpu.

window.pyjaxSite.run(name, device) runs examples/NAME.py in the page's worker; each run must finish
without an error, print what JAX printed for the same file (tests/examples_jax/NAME.txt, compared as
tests/test_examples.py compares the native run: word by word, numbers within the example's tolerance,
timing lines skipped), draw at least one non-empty figure (every example draws) and log no console error.
WebGPU here is SwiftShader, a software adapter (char_transformer takes it ~46 s, digits_cnn ~13 s;
wasm runs each in 1-5 s). One page serves all runs; each run's time (the hook's `ms`) goes to output/gallery-times.txt,
and a finished training demo is screenshotted (desktop and 400 px wide) into output/.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from test_site import OUTPUT, Site

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
import test_examples as native  # noqa: E402

CASES = [pytest.param(name, device, id=f"{name}-{device}") for device in ("wasm", "webgpu") for name in native.GALLERY]
# escape counts of float32 orbits near the set's edge: the GPU's rounding (fused multiply-adds) flips a few points
WEBGPU_TOLERANCE_SCALE = {"mandelbrot": 3}
SCREENSHOT_DEMO = "digits_mlp"


@pytest.fixture(scope="session")
def gallery(chromium, site_url):
    site = Site(chromium, site_url + "/index.html")
    site.page.set_default_timeout(300_000)
    site.times = {}
    yield site
    site.page.close()
    if site.times:
        OUTPUT.mkdir(exist_ok=True)
        lines = [f"{'example':<20} {'device':<7} {'ms':>8}"]
        lines += [f"{n:<20} {d:<7} {ms:>8.0f}" for (n, d), ms in sorted(site.times.items())]
        (OUTPUT / "gallery-times.txt").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("name", "device"), CASES)
def test_example_in_the_page(gallery, name, device):
    errors_before = len(gallery.errors)
    result = gallery.page.evaluate("([n, d]) => window.pyjaxSite.run(n, d)", [name, device])
    gallery.times[name, device] = result["ms"]
    assert result["ok"] and result["error"] is None, result["error"]
    scale = WEBGPU_TOLERANCE_SCALE.get(name, 1) if device == "webgpu" else 1
    native._compare(name, result["stdout"], native._golden(name), scale)
    if name in native.CHECKS:
        native.CHECKS[name](result["stdout"])
    assert result["figures"] >= 1, f"{name} drew no figure on {device}"
    assert gallery.page.locator("#figures .figure").count() >= result["figures"]
    assert gallery.errors[errors_before:] == [], "\n".join(gallery.errors[errors_before:])
    if name == SCREENSHOT_DEMO and device == "wasm":
        OUTPUT.mkdir(exist_ok=True)
        gallery.page.screenshot(path=str(OUTPUT / f"{name}-desktop.png"), full_page=True)
        gallery.page.set_viewport_size({"width": 400, "height": 860})
        gallery.page.screenshot(path=str(OUTPUT / f"{name}-phone.png"), full_page=True)
        gallery.page.set_viewport_size({"width": 1280, "height": 900})
