"""The playground page (site/), used as a person would: Stop, share links, tracebacks, the gallery.

Python runs in the page's Web Worker; the tests click the page's buttons and read what it shows.
Screenshots of the gallery (desktop and a 400-px-wide phone) go to playwright-tests/output/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

OUTPUT = Path(__file__).resolve().parent / "output"

LOOP = """import pyjax.numpy as jnp
from pyjax import show

x = jnp.zeros(4)
for i in show.progress(range(10**9), desc="endless"):
    x = x + 1
"""

FAILING = """import pyjax.numpy as jnp


def f(x):
    return jnp.ones(3) @ x


print("before the error")
f(jnp.ones(4))
"""


class Site:
    """One playground page; collects console errors."""

    def __init__(self, browser, url: str):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.set_default_timeout(180_000)
        self.open(url)

    def open(self, url: str) -> None:
        self.page.goto(url)
        self.page.wait_for_function("() => window.pyjaxSite")
        self.page.evaluate("() => window.pyjaxSite.ready()")

    def code(self) -> str:
        return self.page.evaluate("() => window.pyjaxSite.code()")

    def output(self) -> str:
        return self.page.inner_text("#output")

    def share_link(self, code: str, device: str) -> str:
        """The link the Share button makes for this code (put in the editor as a paste would)."""
        self.page.evaluate("(c) => window.pyjaxSite.setCode(c)", code)
        self.page.select_option("#device", device)
        self.page.evaluate("() => history.replaceState(null, '', location.pathname)")
        self.page.click("#share")
        self.page.wait_for_function("() => location.hash.includes('code=')")
        return self.page.url

    def open_shared(self, code: str, device: str) -> None:
        """Make a share link, then open it in this tab (as pasting it into the address bar: a hash change)."""
        link = self.share_link(code, device)
        self.page.evaluate("() => window.pyjaxSite.setCode('')")
        self.page.evaluate("() => history.replaceState(null, '', location.pathname)")
        self.page.goto(link)
        self.page.wait_for_function("(c) => window.pyjaxSite.code() === c", arg=code)
        assert self.page.inner_text("#example-title") == "Shared code"

    def run_and_wait(self) -> None:
        self.page.click("#run")
        self.page.wait_for_function("() => !document.getElementById('run').disabled")


@pytest.fixture(scope="module")
def site(chromium, site_url):
    s = Site(chromium, site_url + "/index.html")
    yield s
    s.page.close()


def test_gallery_lists_examples_and_screenshots(site):
    examples = site.page.evaluate("() => window.pyjaxSite.examples()")
    names = {e["name"] for e in examples}
    assert "quickstart" in names and all(e["title"] and e["description"] for e in examples)
    assert site.page.locator("#gallery .card[data-name]").count() == len(examples)
    assert site.page.locator("#gallery a.card[href='bench.html']").count() == 1  # the benchmark page
    site.page.click("#gallery .card[data-name='quickstart']")
    assert site.code().startswith('"""Quickstart')
    result = site.page.evaluate("() => window.pyjaxSite.run('quickstart', 'wasm')")
    assert result["ok"] and result["error"] is None and result["figures"] >= 1, result
    assert "f(1.5) =" in result["stdout"]
    assert site.page.locator("#figures .figure canvas").count() >= 1  # uPlot drew on a canvas
    OUTPUT.mkdir(exist_ok=True)
    site.page.screenshot(path=str(OUTPUT / "site-desktop.png"), full_page=True)
    site.page.set_viewport_size({"width": 400, "height": 860})
    site.page.screenshot(path=str(OUTPUT / "site-phone.png"), full_page=True)
    assert site.page.evaluate("() => document.documentElement.scrollWidth") <= 400  # nothing sideways
    site.page.set_viewport_size({"width": 1280, "height": 900})


def test_stop_interrupts_a_running_loop_then_run_works(site):
    site.open_shared(LOOP, "wasm")
    site.page.click("#run")
    site.page.wait_for_selector("#figures .figure-progress")  # the loop is running
    assert site.page.is_disabled("#run") and site.page.is_enabled("#stop")
    site.page.click("#stop")
    site.page.wait_for_function("() => !document.getElementById('run').disabled")
    out = site.output()
    assert re.search(r"Stopped at line [56]\.", out), out  # a KeyboardInterrupt in the user's loop
    assert "restarted" not in out and "Error" not in out  # not a new worker, nor another exception
    result = site.page.evaluate("() => window.pyjaxSite.run('quickstart', 'wasm')")
    assert result["ok"], result


def test_traceback_shows_the_users_lines(site):
    site.open_shared(FAILING, "wasm")
    site.run_and_wait()
    out = site.output()
    assert "before the error" in out
    error = site.page.inner_text("#output .error")
    assert error.startswith("Traceback (most recent call last):")
    assert 'File "shared.py", line 9, in <module>' in error and 'File "shared.py", line 5, in f' in error
    assert "_pyodide" not in error and "site-packages" not in error  # Pyodide's and pyjax's frames are hidden
    assert error.splitlines()[-1].startswith(("TypeError", "ValueError"))
    assert site.page.inner_text(".cm-error-line") == "    return jnp.ones(3) @ x"
    site.page.evaluate("() => window.pyjaxSite.setCode('x = 1\\nprint(x +)\\n')")
    site.run_and_wait()
    error = site.page.inner_text("#output .error")
    assert 'File "shared.py", line 2' in error and error.splitlines()[-1].startswith("SyntaxError")
    assert site.page.inner_text(".cm-error-line") == "print(x +)"


def test_share_link_round_trips_without_running(site, chromium):
    site.page.click("#gallery .card[data-name='regression']")
    code = site.code() + "\n# an edit of mine\n"
    link = site.share_link(code, "cpu")
    other = Site(chromium, link)
    try:
        assert other.code() == code
        assert other.page.input_value("#device") == "cpu"
        assert "Shared code loaded" in other.output()
        other.page.wait_for_timeout(500)  # a run would have started when Python came up
        assert other.page.is_enabled("#run") and other.page.locator("#figures .figure").count() == 0
        assert "done" not in other.page.inner_text("#status")
        assert other.errors == []
    finally:
        other.page.close()


def test_edits_are_kept_per_example(site):
    site.page.click("#gallery .card[data-name='quickstart']")
    site.page.click(".cm-content")
    site.page.keyboard.press("Control+End")
    site.page.keyboard.type("\n# kept")
    site.page.wait_for_timeout(400)  # saved after 300 ms without typing
    site.page.click("#gallery .card[data-name='regression']")
    site.page.click("#gallery .card[data-name='quickstart']")
    assert site.code().endswith("# kept") and site.page.is_visible("#edited")
    site.page.click("#revert")
    assert not site.code().endswith("# kept")


def test_no_console_errors(site):
    assert site.errors == [], "\n".join(site.errors)
