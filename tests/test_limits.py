"""Arrays beyond a device's limits fail up front with a clear error (issue 15, item 2).

wasm and webgpu kernels index with 32-bit integers and hold buffers in wasm32's 4 GiB memory or
under WebGPU's maxBufferSize: `jnp.ones((2**31 + 64,), jnp.uint8) + 1` read back zeros on wasm,
lazy shapes of 2^31 elements failed in WGSL, and `jnp.zeros((10**6, 10**6)).sum()` ran for
minutes. JAX raises RESOURCE_EXHAUSTED when it allocates; pyjax raises ResourceExhaustedError
(a JaxRuntimeError and a MemoryError) before allocating anything. No test allocates gigabytes.
"""

from __future__ import annotations

import gc

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax.backends.limits import INDEX_LIMIT, ResourceExhaustedError
from pyjax.errors import JaxRuntimeError

LIMITED = ("wasm", "webgpu")


def _used(be) -> tuple:
    """Live buffers, and MiB in use on wasm (a scalar's upload may be queued for freeing)."""
    gc.collect()
    alloc = getattr(be, "alloc", None)
    return be.live_buffers(), (alloc.used_bytes >> 20 if alloc is not None else None)


@pytest.fixture
def limited(backend):
    if backend not in LIMITED:
        pytest.skip("the cpu reference backend has no device limits")
    return pyjax.devices(backend)[0].backend


def test_huge_zeros_raise_at_creation(limited):
    """jnp.zeros((10**6, 10**6)) is 4 TB: refused where JAX refuses it, naming size and limit."""
    with pytest.raises(ResourceExhaustedError, match=r"RESOURCE_EXHAUSTED.*4000000000000 bytes.*at most \d+ bytes"):
        jnp.zeros((10**6, 10**6))
    assert issubclass(ResourceExhaustedError, JaxRuntimeError) and issubclass(ResourceExhaustedError, MemoryError)


def test_lazy_huge_reduction_raises_before_running(limited):
    """A reduction over 2^31 + 64 lazy elements needs 64-bit indices (or a 2 GiB buffer): refused."""
    before = _used(limited)
    with pytest.raises(ResourceExhaustedError, match=r"2147483712"):
        jnp.zeros((INDEX_LIMIT + 65,), jnp.uint8).sum()
    assert _used(limited) == before


def test_broadcast_beyond_indexing_raises_before_allocating(limited):
    """A real buffer broadcast (a view) to 2^31 + 64 elements, then computed on: nothing allocated."""
    x = jnp.asarray(np.arange(64, dtype=np.uint8))
    big = jnp.broadcast_to(x, (2**25 + 1, 64))  # a view: no allocation yet
    before = _used(limited)
    with pytest.raises(ResourceExhaustedError, match=r"2147483712"):
        big + 1
    assert _used(limited) == before
    np.testing.assert_array_equal(np.asarray(x + 1), np.arange(1, 65, dtype=np.uint8))  # still usable


def test_just_below_the_limits_is_not_refused(limited):
    """The checks only refuse what exceeds the limits: a lazy array just under them is fine."""
    n = min(INDEX_LIMIT, limited.max_buffer_bytes)
    z = jnp.zeros((n,), jnp.uint8)  # lazy: nothing allocated
    assert z.shape == (n,)


def test_big_reduction_space_with_small_operands_is_not_refused():
    """A 2048^3 matmul makes 8.6e9 products, yet every operand, output and index stays below
    2^22: it compiles (it was refused as beyond 32-bit indexing). Its output beyond 2^31 elements
    is refused."""
    from pyjax.backends import limits
    from pyjax.backends.wasm import matmul
    from pyjax.compiler import ir
    from pyjax.compiler.ir import Kernel

    limits.check_kernel(matmul.tuning_kernel(2048), "wasm")  # raises nothing
    k = matmul.tuning_kernel(2**16)  # 2^32 outputs
    with pytest.raises(ResourceExhaustedError, match=r"4294967296"):
        limits.check_kernel(k, "wasm")
    wide = Kernel((2**31,), [], ir.const(1.0, k.out_dtype))  # one axis beyond 32-bit indexing
    with pytest.raises(ResourceExhaustedError, match=r"2147483648"):
        limits.check_kernel(wide, "webgpu")
