"""The side-by-side benchmark page (site/bench.html): pyjax and jax-js in one page, on wasm and webgpu.

Run once with one round and a short warm-up: every row shows two times and a ratio bar. No timing
assertion (a measurement, not a test of speed); the numbers go to output/bench-page.txt.
"""

from __future__ import annotations

from pathlib import Path

OUTPUT = Path(__file__).resolve().parent / "output"
# matmul 1024² takes seconds per call on SwiftShader (both libraries): wasm only, to keep the suite short
NAMES = {"wasm": ["matmul1024", "chain", "rowSum", "mlpStep"], "webgpu": ["chain", "rowSum", "mlpStep"]}
PLAN = [(d, n) for d, names in NAMES.items() for n in names]


def test_bench_page_shows_both_libraries_and_ratios(chromium, site_url):
    page = chromium.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{site_url}/bench.html")
        page.wait_for_function("() => window.pyjaxBench && !document.getElementById('run').disabled")
        page.set_default_timeout(600_000)
        shown = page.evaluate(
            "(names) => window.pyjaxBench.run({devices: ['wasm', 'webgpu'], names, rounds: 1, warmMs: 0})", NAMES
        )
        assert [(s["device"], s["name"]) for s in shown] == PLAN
        rows = page.evaluate(
            """() => [...document.querySelectorAll('#rows tr')].map((tr) => ({
                 py: tr.querySelector('.py').textContent, jj: tr.querySelector('.jj').textContent,
                 bar: tr.querySelector('.fill').getBoundingClientRect().width, x: tr.querySelector('.x').textContent,
                 ratio: Number(tr.dataset.ratio) }))"""
        )
        assert len(rows) == len(PLAN)
        lines = []
        for (device, name), r in zip(PLAN, rows):
            assert r["py"].endswith(" ms") and r["jj"].endswith(" ms"), r
            assert float(r["py"][:-3]) > 0 and float(r["jj"][:-3]) > 0, r
            assert r["ratio"] > 0 and "faster" in r["x"], r
            assert r["bar"] > 0 or abs(r["ratio"] - 1) < 0.05, r  # a ratio of ~1x draws (almost) no bar
            lines.append(f"{device} {name}: pyjax {r['py']}, jax-js {r['jj']}, {r['x']}")
        assert errors == [], errors
        OUTPUT.mkdir(exist_ok=True)
        (OUTPUT / "bench-page.txt").write_text("\n".join(lines) + "\n")
        print("\n" + "\n".join(lines))
    finally:
        page.close()
