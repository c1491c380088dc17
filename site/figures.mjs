// Draws pyjax.show's figure specs (see pyjax/show.py): plots and histograms with uPlot, images and
// heatmaps on a canvas, progress bars as HTML. One card per title, updated in place at most once a frame.
import { uPlot } from "./vendor.js";

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"];

// uPlot draws each series through its own path builder: series carry their own x ("facets", mode 2).
function pathOf(draw) {
  return (u, i) => {
    const [xs, ys] = u.data[i];
    const px = (x) => u.valToPos(x, "x", true);
    const py = (y) => u.valToPos(y, "y", true);
    const path = new Path2D();
    const fill = draw(path, xs, ys, px, py, u.series[i]);
    return { stroke: path, fill: fill ? path : null, clip: null, band: null, gaps: null, flags: 0 };
  };
}

const PATHS = {
  line: pathOf((p, xs, ys, px, py) => {
    let pen = false;
    for (let k = 0; k < xs.length; k++) {
      if (ys[k] == null || xs[k] == null) pen = false;
      else if (pen) p.lineTo(px(xs[k]), py(ys[k]));
      else (p.moveTo(px(xs[k]), py(ys[k])), (pen = true));
    }
  }),
  scatter: pathOf((p, xs, ys, px, py) => {
    for (let k = 0; k < xs.length; k++) {
      if (ys[k] == null || xs[k] == null) continue;
      p.moveTo(px(xs[k]) + 3, py(ys[k]));
      p.arc(px(xs[k]), py(ys[k]), 3, 0, 2 * Math.PI);
    }
    return true;
  }),
  band: pathOf((p, xs, ys, px, py) => {
    // the band's facet is a closed polygon: lo forwards, then hi backwards
    for (let k = 0; k < xs.length; k++) if (ys[k] != null) k ? p.lineTo(px(xs[k]), py(ys[k])) : p.moveTo(px(xs[k]), py(ys[k]));
    p.closePath();
    return true;
  }),
  bars: pathOf((p, xs, ys, px, py) => {
    for (let k = 0; k + 1 < xs.length; k++) p.rect(px(xs[k]), py(ys[k]), px(xs[k + 1]) - px(xs[k]) - 1, py(0) - py(ys[k]));
    return true;
  }),
};

function series(s, k) {
  const color = COLORS[k % COLORS.length];
  if (s.type === "band") {
    const x = s.x.concat(s.x.slice().reverse());
    const y = s.lo.concat(s.hi.slice().reverse());
    return { type: "band", data: [x, y], opts: { label: s.label ?? "band", stroke: "transparent", fill: color + "33", paths: PATHS.band } };
  }
  const fill = s.type === "scatter" ? color + "cc" : undefined;
  return { type: s.type, data: [s.x, s.y], opts: { label: s.label ?? s.type, stroke: color, width: 1.5, fill, paths: PATHS[s.type] } };
}

function plotData(spec) {
  if (spec.kind === "hist") {
    const counts = spec.counts.concat([0]);
    return [{ type: "bars", data: [spec.edges, counts], opts: { label: `${spec.n} values`, stroke: COLORS[0], fill: COLORS[0] + "99", paths: PATHS.bars } }];
  }
  return spec.series.map(series);
}

// Heatmaps: a perceptual colormap (viridis, sampled at 5 points and interpolated).
const VIRIDIS = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
function viridis(t) {
  const f = Math.min(Math.max(t, 0), 1) * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(f), VIRIDIS.length - 2);
  const a = VIRIDIS[i], b = VIRIDIS[i + 1], w = f - i;
  return [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * w));
}

function drawPixels(canvas, spec, room) {
  const [w, h] = spec.kind === "image" ? [spec.width, spec.height] : [spec.cols, spec.rows];
  canvas.width = w;
  canvas.height = h;
  const img = new ImageData(Math.max(w, 1), Math.max(h, 1));
  const d = spec.data;
  for (let k = 0; k < w * h; k++) {
    let rgb;
    if (spec.kind === "heatmap") {
      const span = spec.max - spec.min;
      rgb = d[k] == null ? [255, 255, 255] : viridis(span > 0 ? (d[k] - spec.min) / span : 0.5);
    } else rgb = spec.channels === 3 ? [d[3 * k], d[3 * k + 1], d[3 * k + 2]] : [d[k], d[k], d[k]];
    img.data.set([rgb[0], rgb[1], rgb[2], 255], 4 * k);
  }
  if (w * h) canvas.getContext("2d").putImageData(img, 0, 0);
  // scaled up (pixelated, see playground.css) to the plots' width, at most 24 screen pixels a cell
  canvas.style.width = `${Math.min(room, 24 * Math.max(w, 1), (room * w) / Math.max(h, 1))}px`;
  canvas.style.maxWidth = "100%";
}

function progressHTML(el, spec) {
  const frac = spec.total ? Math.min(spec.n / spec.total, 1) : null;
  const rate = spec.n && spec.elapsed > 0 ? `${(spec.n / spec.elapsed).toFixed(1)} it/s` : "";
  el.querySelector(".bar-fill").style.width = frac === null ? "100%" : `${(100 * frac).toFixed(1)}%`;
  el.classList.toggle("indeterminate", frac === null && !spec.done);
  el.classList.toggle("done", spec.done);
  const count = spec.total ? `${spec.n}/${spec.total}` : `${spec.n}`;
  el.querySelector(".bar-text").textContent =
    [count, `${spec.elapsed.toFixed(1)} s`, rate, spec.postfix].filter(Boolean).join(" · ");
}

function nonEmpty(spec) {
  if (spec.kind === "plot") return spec.series.some((s) => s.x.length > 0);
  if (spec.kind === "image") return spec.width * spec.height > 0;
  if (spec.kind === "heatmap") return spec.rows * spec.cols > 0;
  if (spec.kind === "hist") return spec.n > 0;
  return false; // progress bars are not figures
}

export class Figures {
  constructor(container) {
    this.container = container;
    this.cards = new Map(); // title -> {el, kind, plot, spec, shape}
    this.pending = new Map();
    this.frame = 0;
    new ResizeObserver(() => this.resize()).observe(container);
  }

  /** Plot width: two side by side where there is room, else the container's width. */
  plotWidth() {
    const w = this.container.clientWidth;
    return Math.floor(Math.min(Math.max(w >= 520 ? (w - 12) / 2 - 26 : w - 24, 200), 560));
  }

  resize() {
    const width = this.plotWidth();
    for (const c of this.cards.values()) {
      if (c.plot && c.plot.width !== width) c.plot.setSize({ width, height: Math.round(width * 0.55) });
    }
  }

  clear() {
    for (const c of this.cards.values()) if (c.plot) c.plot.destroy();
    this.cards.clear();
    this.pending.clear();
    this.container.replaceChildren();
  }

  /** A spec from the worker (JSON text); drawn on the next animation frame, the newest per title. */
  update(json) {
    const spec = JSON.parse(json);
    this.pending.set(spec.title, spec);
    const card = this.cards.get(spec.title);
    if (card) card.spec = spec;
    else this.cards.set(spec.title, { spec });
    if (!this.frame) this.frame = requestAnimationFrame(() => this.flush());
  }

  /** The number of non-empty figures (plots, images, heatmaps, histograms) received. */
  count() {
    return [...this.cards.values()].filter((c) => nonEmpty(c.spec)).length;
  }

  flush() {
    this.frame = 0;
    for (const spec of this.pending.values()) this.draw(spec);
    this.pending.clear();
  }

  draw(spec) {
    const card = this.cards.get(spec.title);
    if (!card.el) {
      card.el = document.createElement("figure");
      card.el.className = `figure figure-${spec.kind}`;
      const cap = document.createElement("figcaption");
      cap.textContent = spec.title;
      card.el.append(cap);
      if (spec.kind === "progress") {
        card.el.insertAdjacentHTML("beforeend", '<div class="bar"><div class="bar-fill"></div></div><div class="bar-text"></div>');
        this.container.prepend(card.el);
      } else this.container.append(card.el);
    }
    if (spec.kind === "progress") return progressHTML(card.el, spec);
    if (spec.kind === "image" || spec.kind === "heatmap") {
      card.canvas ??= card.el.appendChild(document.createElement("canvas"));
      return drawPixels(card.canvas, spec, this.plotWidth());
    }
    const parts = plotData(spec);
    const shape = parts.map((p) => `${p.opts.label}:${p.type}`).join("|");
    const data = [null, ...parts.map((p) => p.data)];
    if (card.plot && card.shape === shape) return card.plot.setData(data);
    if (card.plot) card.plot.destroy();
    const width = this.plotWidth();
    card.shape = shape;
    card.plot = new uPlot(
      {
        mode: 2,
        width,
        height: Math.round(width * 0.55),
        legend: { live: false, show: spec.kind === "plot" },
        cursor: { show: false },
        scales: { x: { time: false }, y: spec.kind === "hist" ? { range: (u, lo, hi) => [0, hi * 1.05 || 1] } : {} },
        series: [{}, ...parts.map((p) => ({ ...p.opts, facets: [{ scale: "x", auto: true }, { scale: "y", auto: true }] }))],
      },
      data,
      card.el,
    );
  }
}
