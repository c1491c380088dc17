"""Shared pytest setup: the `backend` fixture runs a test once per available pyjax backend.

Which backends: `PYJAX_TEST_BACKENDS` (comma-separated, e.g. `cpu,wasm`) names them
explicitly; a named backend that cannot be created fails the run instead of being skipped
silently. Without the variable, DEFAULT_BACKENDS run: a backend joins that list once its whole
suite is green (it must then be creatable on every machine that runs `make test`).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import importlib
import os
import sys

import pytest

import pyjax

# platform name -> (module, backend class name) that makes the platform testable
_CANDIDATES = {
    "cpu": ("pyjax.backends.cpu", "CpuBackend"),
    "wasm": ("pyjax.backends.wasm", "WasmBackend"),
    "webgpu": ("pyjax.backends.webgpu", "WebGPUBackend"),
}


def _creatable(name: str) -> tuple[bool, str]:
    """Can this backend run tests here? (class exported and device created)."""
    module_name, class_name = _CANDIDATES.get(name, (None, None))
    if module_name is None:
        return False, f"unknown backend {name!r}; known: {', '.join(_CANDIDATES)}"
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # a missing host package makes the backend unavailable
        return False, f"{module_name} does not import: {type(e).__name__}: {e}"
    if getattr(module, class_name, None) is None:
        return False, f"{module_name} has no {class_name} yet"
    try:
        pyjax.devices(name)
    except Exception as e:
        return False, f"{name} device cannot be created: {type(e).__name__}: {e}"
    return True, ""


def _test_backends() -> list[str]:
    requested = os.environ.get("PYJAX_TEST_BACKENDS", "").strip()
    if requested:
        names = [n.strip() for n in requested.split(",") if n.strip()]
        for n in names:
            ok, why = _creatable(n)
            if not ok:
                raise pytest.UsageError(f"PYJAX_TEST_BACKENDS asks for {n!r}, but {why}")
        return names
    return list(DEFAULT_BACKENDS)


# Backends tested when PYJAX_TEST_BACKENDS is unset (a backend joins once its suite is green).
DEFAULT_BACKENDS = ("cpu", "wasm", "webgpu")
TEST_BACKENDS = _test_backends()


def pytest_report_header(config) -> str:
    return f"pyjax test backends: {', '.join(TEST_BACKENDS)}"


@pytest.fixture(params=TEST_BACKENDS)
def backend(request) -> str:
    """The platform name under test; that platform's device is the default device meanwhile."""
    name = request.param
    with pyjax.default_device(pyjax.devices(name)[0]):
        yield name


# A worker's memory stays flat: JAX's compiled executables (about 45 MB per program test, never
# reused by other tests) and pyjax's kernels are dropped whenever the process grew by this much.
# Clearing after every test would recompile the ops most tests share (3x slower).
_CLEAR_AFTER_GROWTH_MB = 600
_rss_at_clear: list = []


def _rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:  # not Linux: never clears
        return 0.0


def pytest_runtest_teardown(item, nextitem):
    rss = _rss_mb()
    if not _rss_at_clear:
        _rss_at_clear.append(rss)
    elif rss - _rss_at_clear[0] > _CLEAR_AFTER_GROWTH_MB:
        jax = sys.modules.get("jax")
        if jax is not None:
            jax.clear_caches()
        pyjax.clear_caches()
        gc.collect()
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6").malloc_trim(0)  # hand freed arenas back, so RSS measures what is live
        _rss_at_clear[0] = _rss_mb()
