// A time plot in SVG with both axes, gridlines, event markers and one polyline per series.
// No dependencies: the page must work from a console with no network.
"use strict";
window.weightedPlot = (function () {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = ["#1565c0", "#c62828", "#2e7d32", "#ef8f00", "#6a1b9a", "#00838f", "#5d4037",
                  "#ad1457", "#827717", "#37474f"];

  function svgEl(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Round tick steps (1, 2, 5 x 10^k) so that about `count` ticks span [0, max].
  function ticks(max, count) {
    const raw = max / count;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
    const out = [];
    for (let v = 0; v <= max + step * 1e-9; v += step) out.push(v);
    return out;
  }

  function colorOf(i) { return COLORS[i % COLORS.length]; }

  // opts: {t: [s], series: {key: [v|null]}, events: [{time_s, type, endpoint}], yMax (optional),
  //        yLabel, format: (v) => text}
  function draw(svg, opts) {
    svg.replaceChildren();
    const W = 900, H = 260, L = 58, R = 12, T = 12, B = 30;
    const t = opts.t || [];
    const keys = Object.keys(opts.series || {});
    if (t.length === 0) {
      svg.appendChild(svgEl("text", { x: W / 2, y: H / 2, "text-anchor": "middle", fill: "#777" },
                            "no history yet"));
      return keys;
    }
    const t0 = t[0], t1 = Math.max(t[t.length - 1], t0 + 1);
    let ymax = opts.yMax || 0;
    if (!opts.yMax) {
      for (const k of keys) for (const v of opts.series[k]) if (v !== null && v > ymax) ymax = v;
      if (ymax <= 0) ymax = 1;
      ymax *= 1.05;
    }
    const x = (v) => L + (W - L - R) * (v - t0) / (t1 - t0);
    const y = (v) => H - B - (H - T - B) * v / ymax;
    const fmt = opts.format || ((v) => String(Math.round(v)));
    const axis = svgEl("g", { class: "axis" });
    for (const v of ticks(ymax, 4)) {
      axis.appendChild(svgEl("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), class: "grid" }));
      axis.appendChild(svgEl("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end",
                                       class: "tick y-tick" }, fmt(v)));
    }
    for (const v of ticks(t1 - t0, 6)) {
      axis.appendChild(svgEl("line", { x1: x(t0 + v), x2: x(t0 + v), y1: H - B, y2: H - B + 4,
                                       class: "grid" }));
      axis.appendChild(svgEl("text", { x: x(t0 + v), y: H - B + 16, "text-anchor": "middle",
                                       class: "tick x-tick" }, (t0 + v).toFixed(0) + " s"));
    }
    axis.appendChild(svgEl("line", { x1: L, x2: L, y1: T, y2: H - B, class: "frame" }));
    axis.appendChild(svgEl("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "frame" }));
    axis.appendChild(svgEl("text", { x: 12, y: (H - B) / 2, class: "axis-label",
                                     transform: "rotate(-90 12 " + (H - B) / 2 + ")",
                                     "text-anchor": "middle" }, opts.yLabel || ""));
    svg.appendChild(axis);
    for (const ev of opts.events || []) {
      if (ev.time_s < t0 || ev.time_s > t1) continue;
      const line = svgEl("line", { x1: x(ev.time_s), x2: x(ev.time_s), y1: T, y2: H - B,
                                   class: "event-marker event-" + ev.type });
      line.appendChild(svgEl("title", {}, ev.type + " " + (ev.endpoint || "") + " @" +
                                          Number(ev.time_s).toFixed(1) + " s"));
      svg.appendChild(line);
    }
    if (opts.cursor !== undefined && t[opts.cursor] !== undefined) {
      svg.appendChild(svgEl("line", { x1: x(t[opts.cursor]), x2: x(t[opts.cursor]), y1: T,
                                      y2: H - B, class: "cursor" }));
    }
    keys.forEach((k, i) => {
      const pts = [];
      opts.series[k].forEach((v, j) => { if (v !== null && j < t.length) pts.push(x(t[j]) + "," + y(v)); });
      svg.appendChild(svgEl("polyline", { points: pts.join(" "), fill: "none",
                                          stroke: colorOf(i), "stroke-width": "2",
                                          "data-series": k }));
    });
    return keys;
  }

  return { draw, colorOf };
})();
