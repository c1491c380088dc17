"""pyjax.example_libraries: JAX's small example libraries, `optimizers` and `stax`.

As in JAX, the submodules are not imported here: `from pyjax.example_libraries import optimizers, stax`.
"""
