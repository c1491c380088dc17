"""site/pyscript.html: PyScript (from npm) on the site's Pyodide installs the pyjax wheel and trains on WebGPU.

The page's losses are compared with the same training in JAX natively; the page must not touch the network
beyond the local server (PyScript and Pyodide default to a CDN, so this checks that nothing does).
"""

from __future__ import annotations

import json
from urllib.parse import urlparse

import numpy as np
import pytest


def jax_losses(steps: int = 10) -> list[float]:
    """The page's training (site/pyscript.html) in JAX."""
    import jax
    import jax.numpy as jnp

    def loss(w, b, x, y):
        return jnp.mean((x @ w + b - y) ** 2)

    @jax.jit
    def step(w, b, x, y):
        gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, x, y)
        return w - 0.3 * gw, b - 0.3 * gb

    x = jnp.linspace(-1.0, 1.0, 24).reshape(8, 3)
    y = x @ jnp.array([[1.0], [-2.0], [0.5]]) + 0.25
    w, b = jnp.zeros((3, 1)), jnp.zeros(())
    out = []
    for _ in range(steps):
        out.append(float(loss(w, b, x, y)))
        w, b = step(w, b, x, y)
    return out


def open_offline(chromium, url: str, ready: str, timeout_ms: int = 180_000, init_script: str | None = None):
    """Open url with every request off 127.0.0.1 refused; wait for the `ready` JS expression.
    `init_script` (JS) runs in the page before its own scripts.

    Returns (page, result of ready, refused URLs, console errors)."""
    context = chromium.new_context()  # routes set on the context also see the page's Workers' requests
    if init_script:
        context.add_init_script(init_script)
    page = context.new_page()
    refused, errors = [], []

    def route(r):
        if urlparse(r.request.url).hostname in ("127.0.0.1", "localhost"):
            return r.continue_()
        refused.append(r.request.url)
        return r.abort()

    context.route("**/*", route)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.goto(url)
    try:
        handle = page.wait_for_function(ready, timeout=timeout_ms)
    except Exception as e:
        context.close()
        raise AssertionError(f"{url} did not finish: {e}\nconsole errors: {errors}\nrefused: {refused}") from None
    return page, handle.json_value(), refused, errors


@pytest.fixture(scope="module")
def pyscript_run(chromium, site_url):
    page, raw, refused, errors = open_offline(chromium, f"{site_url}/pyscript.html", "() => window.pyjaxResult")
    text = page.inner_text("#log")
    page.context.close()
    return json.loads(raw), text, refused, errors


def test_pyscript_trains_on_webgpu_like_jax(pyscript_run):
    result, text, refused, errors = pyscript_run
    assert refused == [], f"the page reached beyond the local server: {refused}"
    assert result["platform"] == "webgpu", (result, errors)
    losses = result["losses"]
    assert all(a > b for a, b in zip(losses, losses[1:])), losses
    np.testing.assert_allclose(losses, jax_losses(len(losses)), rtol=2e-5, atol=1e-6)
    assert "step 0: loss" in text and "step 9: loss" in text, text
    print(f"\nPyScript start-up (Pyodide ready -> first loss): {result['first_ms']:.0f} ms")
