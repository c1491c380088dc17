"""pytest plugin (-p alias_plugin): alias `jax` to pyjax before any test module imports it.

`--eco-every=N` keeps every N-th collected test (a fixed, deterministic sample of a long suite)."""

import pyjax

pyjax.alias_jax()


def pytest_addoption(parser):
    parser.addoption("--eco-every", type=int, default=1, help="run every N-th collected test only")


def pytest_collection_modifyitems(config, items):
    every = config.getoption("--eco-every")
    if every > 1:
        items[:] = items[::every]
