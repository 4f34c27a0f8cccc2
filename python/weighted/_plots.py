"""Plots of a simulator run (``results.json`` from ``weighted-sim`` or ``weighted.sim.run``).

Runs on its own, without the rest of the ``weighted`` package::

    python3 python/weighted/_plots.py out/results.json out/ [--tradeoff-only]

and is imported by ``python -m weighted.bench`` as ``write_plots(results, out_dir)``.
Only the standard library and matplotlib (Agg backend, no display needed).

Files written into ``out_dir``:
  success_throughput.png  successful responses per second, one line per policy
  error_rate.png          errors / completions per second
  latency_p99.png         p99 latency of each second's completions (log scale)
  traffic_share.png       per policy: each backend's share of requests sent (solid) and the
                          policy's normalised weight for it (dashed), faults shaded
  tradeoff.png            mean success throughput against overall error rate, one point per
                          policy: the throughput/error trade-off of keeping a sick backend in
"""
from __future__ import annotations

import json
import math
import os
import sys
from typing import Any, Dict, List, Sequence

ORACLE = "oracle"


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _moving(values: Sequence[float], window: int = 1) -> List[float]:
    if window <= 1:
        return list(values)
    out = []
    for i in range(len(values)):
        part = values[max(0, i - window + 1): i + 1]
        out.append(sum(part) / len(part))
    return out


def _error_rate(series: Dict[str, Any]) -> List[float]:
    rates = []
    for ok, bad in zip(series["success"], series["errors"]):
        n = ok + bad
        rates.append(100.0 * bad / n if n else float("nan"))
    return rates


def _shade_faults(ax, results: Dict[str, Any]) -> None:
    """Marks fault onsets (red) and ends (green) on an axis."""
    for ev in results["scenario"].get("fault_events", []):
        color = "tab:red" if ev["kind"] == "onset" else "tab:green"
        ax.axvline(ev["t_s"], color=color, linestyle=":", linewidth=1, alpha=0.7)


def _style(policy: str) -> Dict[str, Any]:
    if policy == ORACLE:
        return {"color": "black", "linestyle": "--", "linewidth": 1.5}
    if policy.startswith("engine"):
        return {"linewidth": 2.0}
    return {"linewidth": 1.0, "alpha": 0.8}


def _line_plot(plt, results, out_dir, name, ylabel, values_of, log=False) -> str:
    fig, ax = plt.subplots(figsize=(11, 5.5))
    for policy in results["policies"]:
        series = results["series"][policy]
        ax.plot(series["t_s"], values_of(series), label=policy, **_style(policy))
    _shade_faults(ax, results)
    ax.set_xlabel("simulated time (s)")
    ax.set_ylabel(ylabel)
    if log:
        ax.set_yscale("log")
    ax.set_title(f"{results['scenario']['name']}: {ylabel}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, ncol=2, loc="best")
    path = os.path.join(out_dir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _share_plot(plt, results, out_dir) -> str:
    policies = results["policies"]
    cols = 3
    rows = math.ceil(len(policies) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.2 * rows), sharex=True, sharey=True,
                             squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, policy in enumerate(policies):
        ax = axes[i // cols][i % cols]
        series = results["series"][policy]
        t = series["t_s"]
        for b, backend in enumerate(series["backends"]):
            color = colors[b % len(colors)]
            ax.plot(t, _moving(backend["share"], 3), color=color, linewidth=1.2,
                    label=f"{backend['id']} share")
            weights = [float("nan") if w is None else w for w in backend["weight"]]
            if not all(math.isnan(w) for w in weights):
                ax.plot(t, weights, color=color, linestyle="--", linewidth=1.0,
                        label=f"{backend['id']} weight")
            sick = backend["sick"]
            for s, flag in enumerate(sick):
                if flag:
                    ax.axvspan(s, s + 1, color=color, alpha=0.04, linewidth=0)
        ax.set_title(policy, fontsize=9)
        ax.set_ylim(0, 1)
        ax.grid(True, alpha=0.3)
        if i == 0:
            ax.legend(fontsize=6, ncol=2)
    for j in range(len(policies), rows * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle(f"{results['scenario']['name']}: traffic share (solid, 3-s mean) and weight "
                 f"(dashed) per backend; shaded = backend sick", fontsize=10)
    fig.supxlabel("simulated time (s)", fontsize=9)
    path = os.path.join(out_dir, "traffic_share.png")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _place_labels(ax, points, line_pt=9.0, char_pt=4.3):
    """Labels for (x, y, text) points without overlaps: policies at the same point share one
    label; the others go right of their point (left of it near the right edge), and a label that
    would cover one already placed
    moves down a line at a time, with a leader line back to its point. (adjustText does this
    better but needs scipy; a greedy pass is enough for a few dozen points.)"""
    merged = {}
    for x, y, text in points:
        merged.setdefault((round(x, 2), round(y, 1)), (x, y, []))[2].append(text)
    to_pt = 72.0 / ax.figure.dpi
    placed = []  # (left, bottom, right, top) in points, figure coordinates
    right_edge = ax.bbox.x1 * to_pt
    for x, y, texts in sorted(merged.values(), key=lambda p: -p[1]):
        text = " = ".join(texts)
        px, py = ax.transData.transform((x, y)) * to_pt
        width = char_pt * len(text)
        flip = px + 5 + width > right_edge
        left, bottom = (px - 5 - width if flip else px + 5), py + 3
        while any(left < r and left + width > l and bottom < t and bottom + line_pt > b
                  for l, b, r, t in placed):
            bottom -= line_pt
        placed.append((left, bottom, left + width, bottom + line_pt))
        moved = bottom != py + 3
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(-5 if flip else 5, bottom - py),
                    ha="right" if flip else "left", fontsize=7,
                    arrowprops={"arrowstyle": "-", "lw": 0.4, "color": "0.5"} if moved else None)


def _tradeoff_plot(plt, results, out_dir) -> str:
    fig, ax = plt.subplots(figsize=(9, 6))
    points = []
    for policy in results["policies"]:
        m = results["summary"][policy]
        x, y = 100.0 * m["error_rate"], m["mean_success_tps"]
        budget = policy.startswith("engine_la_budget_")
        marker = "*" if policy == ORACLE else ("D" if budget else
                                               "o" if policy.startswith("engine") else "s")
        color = "black" if policy == ORACLE else ("tab:green" if budget else
                                                   "tab:blue" if policy.startswith("engine")
                                                   else "tab:gray")
        ax.scatter([x], [y], marker=marker, s=70 if marker != "*" else 160, color=color, zorder=3)
        points.append((x, y, policy))
    ax.set_xlabel("overall error rate (%)  (lower is better)")
    ax.set_ylabel("mean success throughput (TPS)  (higher is better)")
    ax.set_title(f"{results['scenario']['name']}: success throughput against error rate "
                 "(blue = engine, green = error budget, gray = peers)")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    _place_labels(ax, points)  # after the layout: placement works in the final coordinates
    path = os.path.join(out_dir, "tradeoff.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_plots(results: Dict[str, Any], out_dir: str, tradeoff_only: bool = False) -> List[str]:
    """Writes the PNGs described in the module docstring; returns their paths.

    Needs the per-second series (a run with ``"series": true``, the default); with summaries
    only, or with ``tradeoff_only``, just the trade-off plot is written.
    """
    plt = _pyplot()
    os.makedirs(out_dir, exist_ok=True)
    written = [_tradeoff_plot(plt, results, out_dir)]
    if tradeoff_only or "series" not in results:
        return written
    written.append(_line_plot(plt, results, out_dir, "success_throughput.png",
                              "success throughput (responses/s)", lambda s: s["success"]))
    written.append(_line_plot(plt, results, out_dir, "error_rate.png", "error rate (%)",
                              _error_rate))
    written.append(_line_plot(plt, results, out_dir, "latency_p99.png", "p99 latency (ms)",
                              lambda s: [v if v and v > 0 else float("nan")
                                         for v in s["p99_latency_ms"]], log=True))
    written.append(_share_plot(plt, results, out_dir))
    return written


def main(argv: Sequence[str]) -> int:
    args = [a for a in argv[1:] if a != "--tradeoff-only"]
    if len(args) != 2:
        print("usage: python3 _plots.py RESULTS.json OUT_DIR [--tradeoff-only]", file=sys.stderr)
        return 2
    with open(args[0], encoding="utf-8") as f:
        results = json.load(f)
    for path in write_plots(results, args[1], tradeoff_only="--tradeoff-only" in argv):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
