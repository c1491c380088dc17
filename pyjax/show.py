"""Figures for examples and demos: line, scatter, band, image, heatmap, hist, and a tqdm-like progress.

    from pyjax import show

    for step in show.progress(range(200), desc="training"):
        ...
        losses.append(float(loss))
        show.line(losses, title="loss", label="train")   # same title: updates that figure in place

Calls with the same `title` update one figure (live, from inside a loop); several `label`s in one
titled figure are several series, and line, scatter and band series mix in one figure (a
Gaussian-process fit: a band, a mean line and the data as a scatter). Arrays may be pyjax arrays,
numpy arrays or (nested) lists; they are read when the figure is sent, so appending to a list and
calling again is cheap. Keep loss lists as Python floats (`float(loss)`): a list of device scalars
is read element by element.

Every figure update goes to a sink as a plain dict of JSON-able values (non-finite numbers become
None), rate-limited per title (the latest update wins; `flush()` sends what is pending, and runs at
exit). Natively the default sink writes a one-line summary per update and a text progress bar to
stderr (stdout stays what the program prints); the playground sets a sink that draws in the page.
Specs, by kind:

    plot     {"kind": "plot", "title", "series": [{"type": "line"|"scatter", "label", "x", "y"}
                                                   | {"type": "band", "label", "x", "lo", "hi"}]}
    image    {"kind": "image", "title", "width", "height", "channels": 1|3, "data": [0..255 ints, row-major]}
    heatmap  {"kind": "heatmap", "title", "rows", "cols", "data": [floats, row-major], "min", "max"}
    hist     {"kind": "hist", "title", "edges": [bins + 1 floats], "counts": [bins ints], "n"}
    progress {"kind": "progress", "title", "n", "total" (or None), "elapsed" (s), "postfix", "done"}
"""

from __future__ import annotations

import atexit
import math
import sys
import time

__all__ = ["line", "scatter", "band", "image", "heatmap", "hist", "progress", "set_sink", "flush", "reset"]

_figures: dict[str, dict] = {}  # title -> {"kind", ...}; plots keep {"series": {label: (type, raw args)}}
_pending: dict[str, dict] = {}  # title -> the newest spec not yet sent
_last_sent: dict[str, float] = {}  # title -> time.monotonic() of its last send


# ---- reading arrays -------------------------------------------------------------------------


def _shape(a, fn: str) -> tuple:
    if hasattr(a, "shape"):
        return tuple(a.shape)
    if isinstance(a, (list, tuple)):
        return (len(a),) + (_shape(a[0], fn) if a else ())
    if isinstance(a, (int, float, bool)) or hasattr(a, "__float__"):
        return ()
    raise TypeError(f"show.{fn}: expected an array or a list of numbers, got {type(a).__name__}")


def _is_complex(a) -> bool:
    kind = getattr(getattr(a, "dtype", None), "kind", "")
    return kind == "c"


def _flat(a, fn: str) -> list:
    """All values of `a`, row-major, as Python numbers (pyjax and numpy arrays read once)."""
    if _is_complex(a):
        raise TypeError(f"show.{fn}: complex values cannot be drawn; pass their real part or abs()")
    if hasattr(a, "tolist") and hasattr(a, "reshape"):
        return a.reshape(-1).tolist()
    if isinstance(a, (list, tuple)):
        out: list = []
        for v in a:
            if isinstance(v, (list, tuple)) or getattr(v, "ndim", 0):
                out.extend(_flat(v, fn))
            else:
                out.append(v)
        return out
    return [a]


def _floats(a, fn: str) -> list:
    """Values as floats for JSON: NaN and infinities become None (a gap in a line)."""
    try:
        values = [float(v) for v in _flat(a, fn)]
    except TypeError as e:
        raise TypeError(f"show.{fn}: values must be real numbers ({e})") from None
    return [v if v - v == 0 else None for v in values]


def _vector(a, fn: str, name: str) -> int:
    """Check that `a` is one-dimensional; return its length."""
    shape = _shape(a, fn)
    if len(shape) != 1:
        raise ValueError(f"show.{fn}: {name} must be one-dimensional, got shape {shape}")
    return shape[0]


def _same_length(fn: str, **vectors) -> None:
    lengths = {name: _vector(v, fn, name) for name, v in vectors.items()}
    if len(set(lengths.values())) > 1:
        got = ", ".join(f"{k} has {n}" for k, n in lengths.items())
        raise ValueError(f"show.{fn}: arrays must have the same length ({got})")


def _check_title(title, fn: str) -> str:
    if not isinstance(title, str) or not title:
        raise TypeError(f"show.{fn}: title must be a non-empty string, got {title!r}")
    return title


# ---- figures ---------------------------------------------------------------------------------


def _plot(fn: str, title: str, label, raw: tuple) -> None:
    title = _check_title(title, fn)
    fig = _figures.get(title)
    if fig is None or fig["kind"] != "plot":
        _claim(title, "plot", fn)
        fig = _figures[title] = {"kind": "plot", "series": {}}
    fig["series"][label] = (fn, raw)
    _send(title, lambda: _plot_spec(title, fig))


def _plot_spec(title: str, fig: dict) -> dict:
    series = []
    for label, (kind, raw) in fig["series"].items():
        if kind == "band":
            x, lo, hi = raw
            series.append(
                {"type": kind, "label": label, "x": _floats(x, kind), "lo": _floats(lo, kind), "hi": _floats(hi, kind)}
            )
        else:
            x, y = raw
            ys = _floats(y, kind)
            xs = [float(i) for i in range(len(ys))] if x is None else _floats(x, kind)
            series.append({"type": kind, "label": label, "x": xs, "y": ys})
    return {"kind": "plot", "title": title, "series": series}


def _claim(title: str, kind: str, fn: str) -> None:
    """A title names one figure of one kind (plots mix line, scatter and band series)."""
    fig = _figures.get(title)
    if fig is not None and fig["kind"] != kind:
        raise ValueError(f"show.{fn}: figure {title!r} is already a {fig['kind']}; give this one another title")


def line(y, x=None, *, title: str, label=None) -> None:
    """Draw y against x (default 0, 1, ...) as a line; the same title and label replace that line."""
    if x is None:
        _vector(y, "line", "y")
    else:
        _same_length("line", x=x, y=y)
    _plot("line", title, label, (x, y))


def scatter(x, y, *, title: str, label=None) -> None:
    """Draw points (x[i], y[i]); the same title and label replace those points."""
    _same_length("scatter", x=x, y=y)
    _plot("scatter", title, label, (x, y))


def band(x, lo, hi, *, title: str, label=None) -> None:
    """Shade between lo and hi along x (uncertainty bands); combine with line() under one title."""
    _same_length("band", x=x, lo=lo, hi=hi)
    _plot("band", title, label, (x, lo, hi))


def image(a, *, title: str) -> None:
    """Draw a 2-D grayscale or HxWx3 RGB image: floats in [0, 1] (clipped) or uint8."""
    title = _check_title(title, "image")
    shape = _shape(a, "image")
    if not (len(shape) == 2 or (len(shape) == 3 and shape[2] == 3)):
        raise ValueError(f"show.image: expected a 2-D (grayscale) or HxWx3 (RGB) array, got shape {shape}")
    _claim(title, "image", "image")
    _figures[title] = {"kind": "image"}
    spec = {
        "kind": "image",
        "title": title,
        "width": shape[1],
        "height": shape[0],
        "channels": 1 + 2 * (len(shape) == 3),
    }
    _send(title, lambda: {**spec, "data": _pixels(a)})


def _pixels(a) -> list:
    if str(getattr(a, "dtype", "")) == "uint8":
        return [int(v) for v in _flat(a, "image")]
    if type(a).__module__.startswith("pyjax") and hasattr(a, "dtype"):
        import pyjax.numpy as jnp  # scale on the device: one small kernel instead of a Python loop

        a = jnp.clip(jnp.nan_to_num(jnp.asarray(a, jnp.float32), nan=0.0, posinf=1.0, neginf=0.0), 0.0, 1.0)
        return jnp.floor(a * 255.0 + 0.5).astype(jnp.uint8).reshape(-1).tolist()
    return [int(min(max(v, 0.0), 1.0) * 255.0 + 0.5) if v is not None else 0 for v in _floats(a, "image")]


def heatmap(m, *, title: str) -> None:
    """Draw a 2-D array as colored cells (a colormap from its minimum to its maximum)."""
    title = _check_title(title, "heatmap")
    shape = _shape(m, "heatmap")
    if len(shape) != 2:
        raise ValueError(f"show.heatmap: expected a 2-D array, got shape {shape}")
    _claim(title, "heatmap", "heatmap")
    _figures[title] = {"kind": "heatmap"}

    def spec():
        data = _floats(m, "heatmap")
        finite = [v for v in data if v is not None]
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 0.0)
        return {
            "kind": "heatmap",
            "title": title,
            "rows": shape[0],
            "cols": shape[1],
            "data": data,
            "min": lo,
            "max": hi,
        }

    _send(title, spec)


def hist(values, bins: int = 30, *, title: str) -> None:
    """Draw a histogram of all values (any shape) in `bins` equal bins; non-finite values are dropped."""
    title = _check_title(title, "hist")
    if not isinstance(bins, int) or isinstance(bins, bool) or bins < 1:
        raise ValueError(f"show.hist: bins must be a positive integer, got {bins!r}")
    _shape(values, "hist")
    _claim(title, "hist", "hist")
    _figures[title] = {"kind": "hist"}

    def spec():
        data = [v for v in _floats(values, "hist") if v is not None]
        lo, hi = (min(data), max(data)) if data else (0.0, 1.0)
        if hi == lo:
            lo, hi = lo - 0.5, hi + 0.5
        width = (hi - lo) / bins
        counts = [0] * bins
        for v in data:
            counts[min(int((v - lo) / width), bins - 1)] += 1
        edges = [lo + i * width for i in range(bins)] + [hi]
        return {"kind": "hist", "title": title, "edges": edges, "counts": counts, "n": len(data)}

    _send(title, spec)


class progress:
    """Wrap an iterable like tqdm: `for i in show.progress(range(n), desc="training"): ...`.

    Draws a bar in the page and a text bar natively (stderr). Also `update(n)`, `set_postfix(**values)`
    and `close()` for loops that are not a single iterable.
    """

    def __init__(self, iterable=None, total=None, desc=None):
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)
        if total is not None and (not isinstance(total, int) or total < 0):
            raise ValueError(f"show.progress: total must be a non-negative integer or None, got {total!r}")
        self.iterable, self.total, self.n = iterable, total, 0
        self.title = desc if desc else _free_progress_title()
        _claim(self.title, "progress", "progress")
        _figures[self.title] = {"kind": "progress", "bar": self}
        self.postfix = ""
        self._start = time.monotonic()
        self._done = False
        self._send()

    def __len__(self):
        return self.total if self.total is not None else len(self.iterable)

    def __iter__(self):
        if self.iterable is None:
            raise TypeError("show.progress: nothing to iterate; pass an iterable or call update()")
        try:
            for item in self.iterable:
                yield item
                self.n += 1
                self._send()
        finally:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n
        self._send()

    def set_postfix(self, **values) -> None:
        self.postfix = ", ".join(f"{k}={_short(v)}" for k, v in values.items())
        self._send()

    def close(self) -> None:
        if not self._done:
            self._done = True
            self._send()
            flush(self.title)

    def _send(self) -> None:
        spec = {
            "kind": "progress",
            "title": self.title,
            "n": self.n,
            "total": self.total,
            "elapsed": time.monotonic() - self._start,
            "postfix": self.postfix,
            "done": self._done,
        }
        _send(self.title, lambda: spec)


def _free_progress_title() -> str:
    """ "progress", or "progress 2", ... while other bars are running (nested loops)."""
    running = {t for t, f in _figures.items() if f["kind"] == "progress" and not f["bar"]._done}
    return next(t for t in ["progress"] + [f"progress {k}" for k in range(2, len(running) + 2)] if t not in running)


def _short(v) -> str:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    return f"{f:.4g}" if not float(f).is_integer() or abs(f) >= 1e6 else str(int(f))


# ---- sending -------------------------------------------------------------------------------


def _send(title: str, make) -> None:
    """Send the figure now, or keep it as pending if this title was sent less than an interval ago.

    `make` builds the spec (reading the arrays) only when it is sent: a loop that updates a figure
    faster than the sink's rate pays for reading only the updates that are drawn.
    """
    now = time.monotonic()
    if now - _last_sent.get(title, -math.inf) >= _sink[1]:
        _pending.pop(title, None)
        _last_sent[title] = now
        _sink[0](make())
    else:
        _pending[title] = make


def flush(title: str | None = None) -> None:
    """Send the pending update of one figure (or of all): the final state of a loop."""
    for t in [title] if title is not None else list(_pending):
        make = _pending.pop(t, None)
        if make is not None:
            _last_sent[t] = time.monotonic()
            _sink[0](make())


def reset() -> None:
    """Forget all figures and drop pending updates (the playground does this before each run)."""
    _figures.clear()
    _pending.clear()
    _last_sent.clear()


def set_sink(fn=None, *, interval: float = 0.05) -> None:
    """Send figure specs to fn(spec), at most one per title every `interval` seconds (0: every update).

    `set_sink(None)` restores the default: one text line per update (at most one a second per
    figure) and a text progress bar, on stderr.
    """
    if fn is not None and not callable(fn):
        raise TypeError(f"show.set_sink: expected a callable or None, got {type(fn).__name__}")
    flush()  # what the old sink has not drawn yet goes to it
    _last_sent.clear()
    _sink[:] = [_text_sink, 1.0] if fn is None else [fn, float(interval)]


def _summary(spec: dict) -> str:
    kind, title = spec["kind"], spec["title"]
    if kind == "plot":
        parts = []
        for s in spec["series"]:
            name = f"{s['type']} {s['label']!r}" if s["label"] is not None else s["type"]
            last = s["y"][-1] if s.get("y") else None
            parts.append(f"{name}: {len(s['x'])} points" + (f", last {last:.6g}" if last is not None else ""))
        return f"[{title}] " + "; ".join(parts)
    if kind == "image":
        mode = "RGB" if spec["channels"] == 3 else "grayscale"
        return f"[{title}] image {spec['height']}x{spec['width']} {mode}"
    if kind == "heatmap":
        return f"[{title}] heatmap {spec['rows']}x{spec['cols']}, values {spec['min']:.4g} to {spec['max']:.4g}"
    return f"[{title}] histogram of {spec['n']} values in {len(spec['counts'])} bins, {spec['edges'][0]:.4g} to {spec['edges'][-1]:.4g}"


def _bar(spec: dict) -> str:
    n, total, elapsed = spec["n"], spec["total"], spec["elapsed"]
    rate = f"{n / elapsed:.1f} it/s" if n and elapsed > 0 else "? it/s"
    tail = f" [{elapsed:.1f}s, {rate}{', ' + spec['postfix'] if spec['postfix'] else ''}]"
    if not total:
        return f"{spec['title']}: {n} it{tail}"
    filled = min(20, 20 * n // total)
    return f"{spec['title']}: {100 * n // total:3d}%|{'#' * filled}{' ' * (20 - filled)}| {n}/{total}{tail}"


def _text_sink(spec: dict) -> None:
    """Natively: a summary line per figure update, a progress bar redrawn in place on a terminal."""
    err = sys.stderr
    if spec["kind"] != "progress":
        err.write(_summary(spec) + "\n")
    elif err.isatty():
        err.write("\r" + _bar(spec) + ("\n" if spec["done"] else ""))
    else:
        err.write(_bar(spec) + "\n")
    err.flush()


_sink: list = [_text_sink, 1.0]  # [fn, minimum seconds between sends of one title]
atexit.register(flush)
