"""WebGPU backend benchmark: pyjax on webgpu next to torch (cuBLAS, TF32 off) on the same GPU.

Prints, in one run: f32 matmul 1024/2048/4096 (GFLOP/s), elementwise add of 2^26 floats (GB/s),
row, column and full sums of a 8192 x 8192 matrix (GB/s), a sort of 10^7
floats (Melem/s), an MLP train step (128, 784-256-10) back to back (us), a tiny jitted
call awaited each call (us), a jitted while_loop of 100 trips awaited (ms) and a jitted scan of
100 steps, each a while_loop of 5..8 trips and a cond, awaited (ms, read backs per call). torch columns are skipped when torch or CUDA is absent. Sizes shrink
automatically on a CPU adapter (lavapipe) unless --full is given.

    python bench/webgpu.py [--full] [--reps N] [--default-limits] [--only matmul,add,reduce,sort,mlp,call,while,nested]

Each pyjax timing runs a jitted function `reps` times back to back (the backend records all of
them into command buffers without waiting) and ends with one readback of a few bytes, so
it measures GPU throughput, not Python overhead; the figure is the median of three such windows; three untimed calls first compile and leave
the outputs' buffers in the host's pool (steady state, as torch's caching allocator has it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

import pyjax  # noqa: E402
import pyjax.numpy as jnp  # noqa: E402


def _torch():
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def time_pyjax(f, args, reps: int) -> float:
    """Seconds per call of jitted f (compile excluded, one sync per window): the median of three
    windows of `reps` calls, so that one garbage-collection pause is not the figure."""
    for _ in range(3):  # compile, then let the buffer pool hold the outputs' buffers (steady state)
        out = f(*args)
    _sync(out)
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        for _ in range(reps):
            out = f(*args)
        _sync(out)
        ts.append((time.perf_counter() - t) / reps)
    return sorted(ts)[1]


def _sync(out):
    leaf = out[0] if isinstance(out, (tuple, list)) else out
    leaf.block_until_ready()
    # a tiny readback makes sure the work really finished on every host
    np.asarray(leaf.reshape(-1)[:1])


def time_torch(torch, f, reps: int) -> float:
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    ts = []
    for _ in range(3):  # the median of three windows, as time_pyjax
        t = time.perf_counter()
        for _ in range(reps):
            f()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t) / reps)
    return sorted(ts)[1]


def row(name: str, unit: str, ours: float, theirs: float | None, check: str = ""):
    ratio = f"{ours / theirs * 100:6.1f}%" if theirs else "     -"
    t = f"{theirs:12.1f}" if theirs else f"{'-':>12}"
    print(f"{name:<34} {ours:12.1f} {t} {ratio}  {unit} {check}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="full sizes even on a CPU adapter")
    ap.add_argument("--reps", type=int, default=0, help="repetitions per timing (default: by size)")
    ap.add_argument(
        "--default-limits",
        action="store_true",
        help="keep the WebGPU default limits (128 MiB bindings: too small for 2^26 floats)",
    )
    ap.add_argument("--only", default="", help="comma list: matmul,add,reduce,sort,mlp,call,while,nested")
    args = ap.parse_args()

    from pyjax import hosts

    if not args.default_limits and not hosts.IN_BROWSER:
        from pyjax.hosts.wgpu_host import WgpuHost

        # A pool large enough to keep the 256 MiB buffers of the add benchmark for reuse (what
        # torch's caching allocator does); with the 256 MiB default each timing loop would
        # allocate (and zero) fresh buffers.
        hosts.set_webgpu_host(WgpuHost(adapter_limits=True, pool_bytes=4 << 30))
    dev = pyjax.devices("webgpu")[0]
    host = dev.backend.host
    info = getattr(host, "adapter_info", {})
    cpu_adapter = info.get("adapter_type", "") == "CPU"
    small = cpu_adapter and not args.full
    torch = _torch()
    print(
        f"adapter: {info.get('device', '?')} ({info.get('adapter_type', '?')}, {info.get('backend_type', '?')}, "
        f"{info.get('description', '')})"
    )
    print(
        f"limits: max-buffer {host.limits.get('max-buffer-size')}, binding "
        f"{host.limits.get('max-storage-buffer-binding-size')}, f16={getattr(host, 'has_f16', '?')}"
    )
    print(
        f"torch: {torch.__version__ + ' ' + torch.cuda.get_device_name() if torch else 'not available'}"
        f"{'  (small sizes: CPU adapter; --full for the real ones)' if small else ''}"
    )
    print(f"\n{'benchmark':<34} {'pyjax':>12} {'torch':>12} {'ratio':>7}  unit")
    only = (
        set(args.only.split(","))
        if args.only
        else {"matmul", "add", "reduce", "sort", "mlp", "call", "while", "nested"}
    )
    rng = np.random.default_rng(0)

    with pyjax.default_device(dev):
        if not small:  # let the GPU reach its clocks before the first timing
            w = jnp.asarray(rng.standard_normal((1024, 1024), dtype=np.float32))
            g = pyjax.jit(lambda x: x @ x)
            t_end = time.perf_counter() + 1.5
            while time.perf_counter() < t_end:
                _sync([g(w) for _ in range(10)][-1])
            if torch is not None:
                tw = torch.randn(4096, 4096, device="cuda")
                for _ in range(20):
                    tw @ tw
                torch.cuda.synchronize()
        if "matmul" in only:
            for n in (256, 512) if small else (1024, 2048, 4096):
                reps = args.reps or (2 if small else int(4e12 / (2 * n**3)) + 3)
                a = rng.standard_normal((n, n), dtype=np.float32)
                b = rng.standard_normal((n, n), dtype=np.float32)
                A, B = jnp.asarray(a), jnp.asarray(b)
                f = pyjax.jit(lambda x, y: x @ y)
                dt = time_pyjax(f, (A, B), reps)
                got = np.asarray(f(A, B)[:64])
                err = np.abs(got - a[:64].astype(np.float64) @ b).max() / np.sqrt(n)
                tt = None
                if torch is not None:
                    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
                    tt = 2 * n**3 / time_torch(torch, lambda: ta @ tb, reps) / 1e9
                row(f"matmul f32 {n}x{n}x{n}", "GFLOP/s", 2 * n**3 / dt / 1e9, tt, f"(err/sqrt(n) {err:.1e})")
        if "add" in only:
            n = 1 << (20 if small else 26)
            reps = args.reps or (3 if small else 100)
            x = rng.standard_normal(n, dtype=np.float32)
            y = rng.standard_normal(n, dtype=np.float32)
            X, Y = jnp.asarray(x), jnp.asarray(y)
            f = pyjax.jit(lambda p, q: p + q)
            dt = time_pyjax(f, (X, Y), reps)
            ok = np.array_equal(np.asarray(f(X, Y)[:1000]), (x + y)[:1000])
            tt = None
            if torch is not None:
                tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
                tt = 12 * n / time_torch(torch, lambda: tx + ty, reps) / 1e9
            row(f"add f32 2^{n.bit_length() - 1}", "GB/s", 12 * n / dt / 1e9, tt, f"(correct={ok})")
        if "reduce" in only:
            r, c = (1024, 1024) if small else (8192, 8192)
            reps = args.reps or (3 if small else 100)
            m = rng.standard_normal((r, c), dtype=np.float32)
            M = jnp.asarray(m)
            f = pyjax.jit(lambda p: jnp.sum(p, axis=1))
            dt = time_pyjax(f, (M,), reps)
            err = np.abs(np.asarray(f(M)) - m.astype(np.float64).sum(1)).max()
            tt = None
            if torch is not None:
                tm = torch.from_numpy(m).cuda()
                tt = 4 * r * c / time_torch(torch, lambda: tm.sum(1), reps) / 1e9
            row(f"row sum f32 {r}x{c}", "GB/s", 4 * r * c / dt / 1e9, tt, f"(max err {err:.1e})")
            f1 = pyjax.jit(lambda p: jnp.sum(p, axis=0))
            dt = time_pyjax(f1, (M,), reps)
            err = np.abs(np.asarray(f1(M)) - m.astype(np.float64).sum(0)).max()
            tt = None
            if torch is not None:
                tt = 4 * r * c / time_torch(torch, lambda: tm.sum(0), reps) / 1e9
            row(f"column sum f32 {r}x{c}", "GB/s", 4 * r * c / dt / 1e9, tt, f"(max err {err:.1e})")
            f2 = pyjax.jit(lambda p: jnp.sum(p))
            dt = time_pyjax(f2, (M,), reps)
            tt = None
            if torch is not None:
                tt = 4 * r * c / time_torch(torch, lambda: tm.sum(), reps) / 1e9
            exact = m.astype(np.float64).sum()
            rel = abs(float(f2(M)) - exact) / abs(exact)
            row(f"full sum f32 {r}x{c}", "GB/s", 4 * r * c / dt / 1e9, tt, f"(rel err {rel:.1e})")
        if "sort" in only:
            n = 100_000 if small else 10_000_000
            reps = args.reps or (2 if small else 5)
            s = rng.standard_normal(n, dtype=np.float32)
            S = jnp.asarray(s)
            f = pyjax.jit(jnp.sort)
            dt = time_pyjax(f, (S,), reps)
            ok = np.array_equal(np.asarray(f(S)), np.sort(s))
            tt = None
            if torch is not None:
                ts = torch.from_numpy(s).cuda()
                tt = n / time_torch(torch, lambda: torch.sort(ts), reps) / 1e6
            row(f"sort f32 {n}", "Melem/s", n / dt / 1e6, tt, f"(correct={ok})")
            ok = np.array_equal(np.asarray(pyjax.jit(jnp.argsort)(S)), np.argsort(s, kind="stable"))
            dt = time_pyjax(pyjax.jit(jnp.argsort), (S,), reps)
            tt = None
            if torch is not None:
                tt = n / time_torch(torch, lambda: torch.sort(ts, stable=True).indices, reps) / 1e6
            row(f"argsort f32 {n}", "Melem/s", n / dt / 1e6, tt, f"(correct={ok})")
        if "mlp" in only:
            mlp_row(rng, torch, args.reps or (20 if small else 200))
        if "call" in only:
            call_row(torch, args.reps or (50 if small else 500))
        if "while" in only:
            while_row(rng, torch)
        if "nested" in only:
            nested_row(rng, torch)


def mlp_row(rng, torch, reps: int) -> None:
    """MLP train step (128, 784-256-10, SGD), jitted, `reps` steps back to back (us per step,
    the median of five such windows)."""
    x = rng.standard_normal((128, 784), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[np.arange(128) % 10]
    ws = [rng.standard_normal((784, 256), dtype=np.float32) * 0.05, np.zeros(256, np.float32)]
    ws += [rng.standard_normal((256, 10), dtype=np.float32) * 0.05, np.zeros(10, np.float32)]

    from run import mlp_sgd_step  # bench/run.py: the same workload as make bench's row

    step = mlp_sgd_step(pyjax, jnp)
    p, X, Y = [jnp.asarray(w) for w in ws], jnp.asarray(x), jnp.asarray(y)
    for _ in range(3):
        p, l = step(p, X, Y)
    _sync(l)
    ts = []
    for _ in range(5):  # five windows of back-to-back steps: one garbage collection pause is not the figure
        t = time.perf_counter()
        for _ in range(reps):
            p, l = step(p, X, Y)
        _sync(l)
        ts.append((time.perf_counter() - t) / reps * 1e6)
    ts.sort()
    tt = None
    if torch is not None:
        tp = [torch.from_numpy(w).cuda().requires_grad_() for w in ws]
        tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()

        def tstep():
            h = torch.relu(tx @ tp[0] + tp[1])
            lo = -(torch.log_softmax(h @ tp[2] + tp[3], 1) * ty).sum() / 128
            gs = torch.autograd.grad(lo, tp)
            with torch.no_grad():
                for w, gw in zip(tp, gs):
                    w -= 0.1 * gw

        tt = sorted(time_torch(torch, tstep, reps) * 1e6 for _ in range(5))[2]
    row(
        "MLP train step 128,784-256-10",
        f"us (lower is better; median of 5; min {ts[0]:.1f} max {ts[-1]:.1f})",
        ts[2],
        tt,
    )


def call_row(torch, reps: int) -> None:
    """A tiny jitted call (x * 2 + 1 on 4 floats), its result read back every call (us)."""
    f = pyjax.jit(lambda v: v * 2.0 + 1.0)
    X = jnp.asarray(np.arange(4, dtype=np.float32))
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps // 5):
            np.asarray(f(X))
        ts.append((time.perf_counter() - t) / (reps // 5) * 1e6)
    tt = None
    if torch is not None:
        tx = torch.arange(4, dtype=torch.float32, device="cuda")
        tts = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(reps // 5):
                (tx * 2.0 + 1.0).cpu()
            tts.append((time.perf_counter() - t) / (reps // 5) * 1e6)
        tt = sorted(tts)[2]
    ts.sort()
    row("tiny jitted call, awaited", f"us (median of 5; min {ts[0]:.1f} max {ts[-1]:.1f})", ts[2], tt)


def while_row(rng, torch, trips: int = 100) -> None:
    """A jitted while_loop (v = tanh(v @ W) + 0.1 on 64 floats, the trip counter in the carry), its
    result read back each call (ms, median of 5); torch runs the same loop with the predicate read
    back every trip, as a device-side condition needs there."""
    w = (rng.standard_normal((64, 64), dtype=np.float32) * 0.1).astype(np.float32)
    x = rng.standard_normal(64, dtype=np.float32)
    f = pyjax.jit(
        lambda x, w: pyjax.lax.while_loop(
            lambda c: c[0] < trips, lambda c: (c[0] + 1, jnp.tanh(c[1] @ w) + 0.1), (0, x)
        )[1]
    )
    X, W = jnp.asarray(x), jnp.asarray(w)
    want = x
    for _ in range(trips):
        want = np.tanh(want @ w) + np.float32(0.1)
    out = np.asarray(f(X, W))
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        out = np.asarray(f(X, W))
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    tt = None
    if torch is not None:
        tw, tx = torch.from_numpy(w).cuda(), torch.from_numpy(x).cuda()

        def tloop():
            i, v = torch.zeros((), dtype=torch.int32, device="cuda"), tx
            while bool(i < trips):
                i, v = i + 1, torch.tanh(v @ tw) + 0.1
            return v.cpu()

        tloop()
        tts = []
        for _ in range(5):
            t = time.perf_counter()
            tloop()
            tts.append((time.perf_counter() - t) * 1e3)
        tt = sorted(tts)[2]
    err = float(np.abs(out - want).max())
    row(f"while_loop {trips} trips, awaited", f"ms (lower is better; median of 5; max err {err:.1e})", ts[2], tt)


def nested_row(rng, torch, steps: int = 100) -> None:
    """A jitted scan of `steps` steps, each a while_loop of 5..8 trips (v = tanh(v @ W) + 0.1 on
    64 floats) and a cond, its result read back each call (ms, median of 5, and submits per call:
    nested loops and conds run on the device, replay.py); torch reads every predicate back."""
    w = (rng.standard_normal((64, 64), dtype=np.float32) * 0.1).astype(np.float32)
    x = rng.standard_normal(64, dtype=np.float32)

    def step(c, i):
        c = pyjax.lax.while_loop(lambda t: t[0] < 5 + i % 4, lambda t: (t[0] + 1, jnp.tanh(t[1] @ w) + 0.1), (0, c))[1]
        return pyjax.lax.cond(i % 2 == 0, lambda u: u * 0.5, lambda u: u + 0.25, c), None

    f = pyjax.jit(lambda x: pyjax.lax.scan(step, x, jnp.arange(steps))[0])
    X = jnp.asarray(x)
    want = x
    for i in range(steps):
        for _ in range(5 + i % 4):
            want = np.tanh(want @ w) + np.float32(0.1)
        want = want * np.float32(0.5) if i % 2 == 0 else want + np.float32(0.25)
    out = np.asarray(f(X))
    out = np.asarray(f(X))  # the nested trips recorded grow on the first calls
    host = pyjax.devices("webgpu")[0].backend.host
    submits = host.stats["submits"]
    ts = []
    for _ in range(5):
        t = time.perf_counter()
        out = np.asarray(f(X))
        ts.append((time.perf_counter() - t) * 1e3)
    submits = (host.stats["submits"] - submits) / 5
    ts.sort()
    tt = None
    if torch is not None:
        tw, tx = torch.from_numpy(w).cuda(), torch.from_numpy(x).cuda()

        def tloop():
            v = tx
            for i in range(steps):
                k = torch.zeros((), dtype=torch.int32, device="cuda")
                while bool(k < 5 + i % 4):
                    k, v = k + 1, torch.tanh(v @ tw) + 0.1
                v = v * 0.5 if bool(torch.tensor(i % 2 == 0, device="cuda")) else v + 0.25
            return v.cpu()

        tloop()
        tts = []
        for _ in range(5):
            t = time.perf_counter()
            tloop()
            tts.append((time.perf_counter() - t) * 1e3)
        tt = sorted(tts)[2]
    err = float(np.abs(out - want).max())
    unit = f"ms (lower is better; median of 5; {submits:.0f} submits per call; max err {err:.1e})"
    row(f"scan {steps} x (while 5..8 + cond), awaited", unit, ts[2], tt)


if __name__ == "__main__":
    main()
