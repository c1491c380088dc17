"""Split kernel calls, as the browser's wasm threads make them, give the whole call's result.

A wasmtime host posing as a threaded one (the interface of BrowserWasmHost: `threads` and
`split_function`) runs every call of a kernel the backend lets it split as chunks of the
kernel's [lo, hi) range, of random sizes (multiples of the kernel's alignment), in a shuffled order, each with the
scratch of its own "thread", the way shims/wasm.mjs spreads them over its workers. With every
kernel made splittable (SPLIT_WORK = 1), the fuzzer's random kernels (views, reductions,
gathers) and tiled matmuls must match the unsplit backend exactly.
"""

from __future__ import annotations

import contextlib
import random

import numpy as np
import pytest
from hypothesis import given

pytest.importorskip("wasmtime")

from pyjax.backends.wasm import WasmBackend, matmul  # noqa: E402
from pyjax.backends.wasm import backend as backend_mod  # noqa: E402
from pyjax.compiler import ir  # noqa: E402
from pyjax.compiler.ir import Kernel  # noqa: E402
from pyjax.compiler.views import ShapeTracker  # noqa: E402
from pyjax.core import dtypes as D  # noqa: E402
from pyjax.hosts.wasmtime_host import WasmtimeHost  # noqa: E402

from .test_codegen import _matmul_kernel, run  # noqa: E402
from .test_fuzz import FUZZ, _data, _run, kernel_case  # noqa: E402


class SplitHost(WasmtimeHost):
    """Runs split calls chunk by chunk on one thread, in a random order; counts the chunks."""

    threads = 3

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.rng = random.Random(0)
        self.chunks = 0

    def split_function(self, instance, name, lo_arg, align=1, min_rows=1, scratch_arg=-1, scratch_stride=0):
        fn = instance.function(name).unchecked
        host = self

        class Split:
            @staticmethod
            def unchecked(*args):
                lo, hi = args[lo_arg], args[lo_arg + 1]
                # cuts at multiples of `align` from lo, as the shim makes them (1-D kernels run
                # 4-lane SIMD plus a scalar tail, whose math may differ from the lanes' by an ulp)
                places = range(lo + align, hi, align)
                cuts = sorted(host.rng.sample(places, min(len(places), host.rng.randint(1, 5))))
                bounds = [lo, *cuts, hi]
                chunks = list(zip(bounds, bounds[1:]))
                host.rng.shuffle(chunks)
                for t, (a, b) in enumerate(chunks):
                    call = list(args)
                    call[lo_arg], call[lo_arg + 1] = a, b
                    if scratch_arg >= 0:
                        call[scratch_arg] += (t % host.threads) * scratch_stride
                    fn(*call)
                    host.chunks += 1

        return Split()


@contextlib.contextmanager
def split_everything():
    """Let the backend split any kernel (the threshold only applies to threaded hosts)."""
    saved, backend_mod.SPLIT_WORK = backend_mod.SPLIT_WORK, 1
    try:
        yield
    finally:
        backend_mod.SPLIT_WORK = saved


_BACKENDS: list = []


_TILED: dict = {}  # engine -> (whole, split) backends with that engine's matmul tile


def backends():
    if not _BACKENDS:
        _BACKENDS.extend((WasmBackend(), WasmBackend(SplitHost())))
    return _BACKENDS


@FUZZ
@given(kernel_case())
def test_random_kernels_split_match_whole(case):
    kernel, bases, seed = case
    whole, split = backends()
    rng = np.random.RandomState(seed)
    inputs = [_data(shape, dt, rng) for shape, dt in bases]
    with split_everything():
        got = _run(split, kernel, inputs)
    want = _run(whole, kernel, inputs)
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=repr(kernel))


def _matmul_2d(m, k, n, a_t):
    """out[i, j] = sum_k A[i, k] * B[k, j], dot_general's layout (M, N, K) without a batch axis."""
    full = (m, n, k)
    ta = ShapeTracker.contiguous((k, m)).permute((1, 0)) if a_t else ShapeTracker.contiguous((m, k))
    ta = ta.reshape((m, 1, k)).expand(full)
    tb = ShapeTracker.contiguous((k, n)).permute((1, 0)).reshape((1, n, k)).expand(full)
    body = ir.alu("mul", ir.load(0, ta, D.float32), ir.load(1, tb, D.float32))
    return Kernel(full, [D.float32, D.float32], ir.acc(D.float32), "sum", (2,), body)


@pytest.mark.parametrize("b,m,k,n", [(0, 70, 33, 40), (0, 131, 300, 17), (5, 9, 16, 64), (9, 66, 20, 24)])
@pytest.mark.parametrize("a_t", [False, True])
@pytest.mark.parametrize("engine", sorted(matmul.TILES))
def test_matmul_split_matches_whole(b, m, k, n, a_t, engine):
    """Tiled matmuls (each engine's register tile): rows split (b == 0: no batch axis) or batches
    split, own scratch each."""
    if engine not in _TILED:
        _TILED[engine] = (WasmBackend(), WasmBackend(SplitHost()))
        for backend in _TILED[engine]:
            backend.matmul_tile = matmul.TILES[engine]
    whole, split = _TILED[engine]
    rng = np.random.RandomState(0)
    shape_a = ((b,) if b else ()) + ((k, m) if a_t else (m, k))
    A = rng.randn(*shape_a).astype(np.float32)
    B = rng.randn(*(((b,) if b else ()) + (k, n))).astype(np.float32)
    kern = _matmul_kernel(b, m, k, n, a_t=a_t) if b else _matmul_2d(m, k, n, a_t)
    before = split.host.chunks
    with split_everything():
        got = run(split, kern, [A, B])
    np.testing.assert_array_equal(got, run(whole, kern, [A, B]))
    assert split.host.chunks > before + 1
