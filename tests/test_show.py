"""pyjax.show: the figure specs a sink receives, rate limiting, the native text output, bad input."""

from __future__ import annotations

import numpy as np
import pytest

import pyjax.numpy as jnp
from pyjax import show


@pytest.fixture
def specs():
    """Every figure update, unthrottled, as the sink receives it."""
    got: list[dict] = []
    show.reset()
    show.set_sink(got.append, interval=0)
    yield got
    show.set_sink(None)
    show.reset()


def test_line_series_update_in_place(specs):
    show.line([1, 2, 3], title="loss", label="train")
    show.line(jnp.array([0.5, float("nan"), np.inf]), title="loss", label="test")
    show.line(np.array([1.0, 0.5]), x=[10, 20], title="loss", label="train")  # replaces "train"
    assert specs[-1] == {
        "kind": "plot",
        "title": "loss",
        "series": [
            {"type": "line", "label": "train", "x": [10.0, 20.0], "y": [1.0, 0.5]},
            {"type": "line", "label": "test", "x": [0.0, 1.0, 2.0], "y": [0.5, None, None]},
        ],
    }


def test_plot_mixes_band_line_scatter(specs):
    x = jnp.linspace(0.0, 1.0, 3)
    show.band(x, x - 1, x + 1, title="gp", label="95%")
    show.line(x * 2, x, title="gp", label="mean")
    show.scatter([0.5], [jnp.float32(1.5)], title="gp", label="data")  # a list holding a device scalar
    series = specs[-1]["series"]
    assert [s["type"] for s in series] == ["band", "line", "scatter"]
    assert series[0]["lo"] == [-1.0, -0.5, 0.0] and series[0]["hi"] == [1.0, 1.5, 2.0]
    assert series[1]["y"] == [0.0, 1.0, 2.0] and series[2] == {
        "type": "scatter",
        "label": "data",
        "x": [0.5],
        "y": [1.5],
    }


def test_image_pixels(specs, backend):
    show.image(jnp.array([[-0.5, 0.0, 0.5], [1.0, 2.0, float("nan")]]), title="gray")
    assert specs[-1] == {
        "kind": "image", "title": "gray", "width": 3, "height": 2, "channels": 1, "data": [0, 0, 128, 255, 255, 0]
    }  # fmt: skip
    rgb = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    for a in (rgb, jnp.asarray(rgb)):  # uint8 is 0..255
        show.image(a, title="rgb")
        assert specs[-1]["channels"] == 3 and specs[-1]["data"] == list(range(12))
    show.image(rgb.tolist(), title="rgb")  # lists, like float arrays, are 0..1
    assert specs[-1]["data"] == [0] + [255] * 11
    show.image(np.array([[0.25, 0.75]]), title="np")
    assert specs[-1]["data"] == [64, 191]


def test_heatmap_and_hist(specs):
    show.heatmap(jnp.arange(6.0).reshape(2, 3) - 1, title="attn")
    assert specs[-1] == {
        "kind": "heatmap", "title": "attn", "rows": 2, "cols": 3, "data": [-1.0, 0.0, 1.0, 2.0, 3.0, 4.0], "min": -1.0, "max": 4.0
    }  # fmt: skip
    values = np.random.default_rng(0).normal(size=1000)
    show.hist(jnp.asarray(values.reshape(10, 100)), bins=7, title="samples")
    counts, edges = np.histogram(values.astype(np.float32).astype(np.float64), bins=7)
    assert specs[-1]["counts"] == counts.tolist() and specs[-1]["n"] == 1000
    np.testing.assert_allclose(specs[-1]["edges"], edges, rtol=1e-12)


def test_progress(specs):
    seen = list(show.progress(range(3), desc="train"))
    assert seen == [0, 1, 2]
    bars = [(s["title"], s["n"], s["total"], s["done"]) for s in specs]
    assert bars == [("train", 0, 3, False), ("train", 1, 3, False), ("train", 2, 3, False), ("train", 3, 3, False),
                    ("train", 3, 3, True)]  # fmt: skip
    specs.clear()
    for _ in show.progress(range(2)):
        with show.progress(total=4) as inner:  # nested bars without a desc get their own titles
            inner.update(4)
            inner.set_postfix(loss=0.25)
    assert {s["title"] for s in specs} == {"progress", "progress 2"}
    inner_last = [s for s in specs if s["title"] == "progress 2"][-1]
    assert inner_last["postfix"] == "loss=0.25" and inner_last["n"] == 4 and inner_last["done"]


def test_rate_limit_keeps_latest_and_flushes():
    got: list[dict] = []
    show.reset()
    show.set_sink(got.append, interval=3600)
    try:
        ys = []
        for i in range(5):
            ys.append(float(i))
            show.line(ys, title="live")
        assert [len(s["series"][0]["y"]) for s in got] == [1]  # the first update only; the rest wait
        show.flush()
        assert [len(s["series"][0]["y"]) for s in got] == [1, 5]
    finally:
        show.set_sink(None)
        show.reset()


def test_native_text_output(capsys):
    show.reset()
    show.set_sink(None)
    show.line([3.0, 2.0, 1.5], title="loss", label="train")
    show.image(np.zeros((4, 5, 3)), title="frame")
    list(show.progress(range(4), desc="fit"))
    show.flush()
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert lines[0] == "[loss] line 'train': 3 points, last 1.5"
    assert lines[1] == "[frame] image 4x5 RGB"
    assert lines[-1].startswith("fit: 100%|####################| 4/4 [")
    show.reset()


@pytest.mark.parametrize(
    "call, error, match",
    [
        (
            lambda: show.line([[1, 2]], title="t"),
            ValueError,
            r"show.line: y must be one-dimensional, got shape \(1, 2\)",
        ),
        (lambda: show.scatter([1, 2], [1], title="t"), ValueError, "show.scatter: arrays must have the same length"),
        (lambda: show.image(np.zeros((2, 2, 4)), title="t"), ValueError, "show.image: expected a 2-D"),
        (lambda: show.heatmap([1.0, 2.0], title="t"), ValueError, "show.heatmap: expected a 2-D array"),
        (lambda: show.hist([1.0], bins=0, title="t"), ValueError, "show.hist: bins must be a positive integer"),
        (lambda: show.line([1.0], title=""), TypeError, "show.line: title must be a non-empty string"),
        (lambda: show.line("abc", title="t"), TypeError, "show.line: expected an array or a list of numbers"),
        (lambda: show.line(jnp.array([1j]), title="t"), TypeError, "show.line: complex values cannot be drawn"),
        (lambda: show.set_sink(3), TypeError, "show.set_sink: expected a callable"),
        (lambda: show.progress(None, total=-1), ValueError, "show.progress: total must be"),
    ],
)
def test_bad_input(specs, call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_one_title_one_kind(specs):
    show.line([1.0], title="t")
    with pytest.raises(ValueError, match="show.image: figure 't' is already a plot"):
        show.image([[0.0]], title="t")
