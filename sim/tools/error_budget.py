#!/usr/bin/env python3
"""The error budget against the static error_cost frontier, on seeds 1-5.

    python3 sim/tools/error_budget.py [--sim build/release/sim/weighted-sim] [--write] [--jobs 2]

For each scenario with a partially failing backend, runs round-robin, the load-aware engine at
a fine sweep of static `picker.error_cost` values, and the engine with `budget.max_error_rate`
at each budget, on seeds 1-5. The target metric is the worst 5-s error rate after the first
10 s of a fault (the simulator's `max_error_rate_5s_settled`). For each budget it finds the
frontier: the static error_cost with the highest mean success throughput whose worst 5-s error
stays within the budget on every seed (one setting a user would have to pick without knowing
the seed). The budget mode meets the target when its own worst 5-s error is within the budget
on every seed and its throughput is at least 97% of the frontier's. With --write, the table
replaces the `error-budget` block of docs/benchmark.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from doc_blocks import replace_block

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ["seed", "open_loop", "all_degraded", "equal_errors"]
SEEDS = [1, 2, 3, 4, 5]
STATIC = [0, 5, 10, 20, 30, 40, 50, 70, 100, 150, 200, 300, 400, 500, 700, 1000, 2000, 5000,
          20000, 100000]
BUDGETS = [0.005, 0.01, 0.02, 0.042, 0.10]
WITHIN = 0.97  # the budget mode's throughput against the frontier's


def static_name(cost) -> str:
    return f"engine_la_error_cost_{cost}"


def budget_name(b) -> str:
    return f"engine_la_budget_{100 * b:g}pct"


def variants() -> dict:
    v = {static_name(c): {"picker": {"error_cost": c}} for c in STATIC}
    v.update({budget_name(b): {"budget": {"max_error_rate": b}} for b in BUDGETS})
    return v


def run(sim: str, engines: Path, name: str, seed: int, tmp: Path) -> dict:
    path = ROOT / "examples" / "scenarios" / f"{name}.json"
    dest = tmp / f"{name}_{seed}"
    cmd = [sim, str(path), "--seed", str(seed), "--engines", str(engines), "--out", str(dest),
           "--policy", "round_robin"]
    for p in variants():
        cmd += ["--policy", p]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((dest / "results.json").read_text())["summary"]


def worst5(r: dict) -> float:
    v = r.get("max_error_rate_5s_settled")
    return 0.0 if v is None else v


def pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def analyse(runs: dict) -> tuple[str, list[str]]:
    """runs[scenario] = [summary per seed]. Returns the table and the misses, one line each."""
    lines = ["| scenario | budget | budget mode: worst 5-s error (max of seeds) | its TPS (mean, min-max) "
             "| frontier: static error_cost | its worst 5-s error | its TPS | TPS ratio (mean; worst seed) "
             "| vs round-robin | target |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    misses = []
    for name, seeds in runs.items():
        rr = [s["round_robin"]["mean_success_tps"] for s in seeds]
        for b in BUDGETS:
            mine = [s[budget_name(b)] for s in seeds]
            tps = [m["mean_success_tps"] for m in mine]
            w = max(worst5(m) for m in mine)
            frontier = None
            for c in STATIC:
                st = [s[static_name(c)] for s in seeds]
                if max(worst5(x) for x in st) <= b:
                    mean = statistics.mean(x["mean_success_tps"] for x in st)
                    if frontier is None or mean > frontier[1]:
                        frontier = (c, mean, st)
            vs_rr = statistics.mean(t / r for t, r in zip(tps, rr))
            held = w <= b
            if frontier is None:
                # No static price holds the budget: the budget mode is judged on minimising
                # errors against the static setting with the lowest worst 5-s error.
                best = min(STATIC, key=lambda c: max(worst5(s[static_name(c)]) for s in seeds))
                bw = max(worst5(s[static_name(best)]) for s in seeds)
                verdict = ("unmeetable: errors minimised" if w <= bw * 1.1 + 0.001
                           else f"unmeetable, errors {pct(w)} vs {pct(bw)}")
                lines.append(f"| {name} | {pct(b)} | {pct(w)} | {statistics.mean(tps):.0f} "
                             f"({min(tps):.0f}-{max(tps):.0f}) | none (least errors: {best}) | "
                             f"{pct(bw)} | - | - | {vs_rr:.2f}x | {verdict} |")
                if not verdict.startswith("unmeetable: errors minimised"):
                    misses.append(f"{name} budget {pct(b)}: {verdict}")
                continue
            c, fmean, st = frontier
            ratios = [t / x["mean_success_tps"] for t, x in zip(tps, st)]
            ratio = statistics.mean(tps) / fmean
            ok_tps = ratio >= WITHIN
            verdict = "met" if held and ok_tps else "missed"
            if not held:
                over = [(seed, worst5(m)) for seed, m in zip(SEEDS, mine) if worst5(m) > b]
                misses.append(f"{name} budget {pct(b)}: worst 5-s error over the budget on seeds "
                              + ", ".join(f"{sd} ({100 * x:.3f}%)" for sd, x in over))
            if not ok_tps:
                misses.append(f"{name} budget {pct(b)}: throughput {ratio:.3f} of the frontier's "
                              f"(error_cost {c}), {100 * (WITHIN - ratio):.1f} points under 0.97")
            lines.append(f"| {name} | {pct(b)} | {pct(w)} | {statistics.mean(tps):.0f} "
                         f"({min(tps):.0f}-{max(tps):.0f}) | {c} | "
                         f"{pct(max(worst5(x) for x in st))} | {fmean:.0f} | "
                         f"{ratio:.3f}; {min(ratios):.3f} | {vs_rr:.2f}x | {verdict} |")
    return "\n".join(lines), misses


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default=str(ROOT / "build" / "release" / "sim" / "weighted-sim"))
    ap.add_argument("--write", action="store_true", help="rewrite docs/benchmark.md's block")
    ap.add_argument("--jobs", type=int, default=2, help="simulator runs at once")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--json", help="also write every run's summary to this file")
    ap.add_argument("--load", help="analyse the summaries a previous --json wrote, without running")
    args = ap.parse_args()
    names = args.scenarios.split(",")
    if args.load:
        runs = json.loads(Path(args.load).read_text())
        names = list(runs)
    else:
        runs = None
    with tempfile.TemporaryDirectory() as tmp:
        if runs is not None:
            jobs, done = [], []
        else:
            jobs = [(n, s) for n in names for s in SEEDS]
        engines = Path(tmp) / "engines.json"
        engines.write_text(json.dumps(variants()))
        with ThreadPoolExecutor(args.jobs) as pool:
            done = list(pool.map(lambda j: run(args.sim, engines, j[0], j[1], Path(tmp)), jobs))
    if runs is None:
        runs = {n: [done[i] for i, j in enumerate(jobs) if j[0] == n] for n in names}
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))
    table, misses = analyse(runs)
    body = table + "\n\n" + ("Every target met." if not misses else
                             "Missed:\n\n" + "\n".join(f"- {m}" for m in misses))
    print(body)
    if args.write:
        doc = ROOT / "docs" / "benchmark.md"
        doc.write_text(replace_block(doc.read_text(), "error-budget", body))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
