#!/usr/bin/env python3
"""Refreshes the generated tables of docs/benchmark.md from `make demo`'s output.

    python3 sim/tools/benchmark_tables.py [--sim build/release/sim/weighted-sim] [--out out]

Reads OUT/table.md and OUT/tradeoff/results.json (written by `make demo`), runs the other
example scenarios with the simulator into OUT/scenarios/, and rewrites the blocks between
`<!-- BEGIN name -->` and `<!-- END name -->` markers in docs/benchmark.md. Nothing is typed in
by hand, so the document shows exactly what the command produces.
"""
from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

from doc_blocks import replace_block

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ["open_loop", "hard_down", "flapping", "slow_recovery", "sinkhole", "heterogeneous",
             "all_degraded", "tidal", "stall"]
SCENARIO_POLICIES = ["round_robin", "least_request", "peak_ewma", "grpc_wrr",
                     "envoy_outlier_eject_one", "engine_default", "engine_weighted", "oracle"]


def pct(x):
    return f"{100 * x:.1f}%"


def secs(x):
    return "never" if x is None else f"{x:.0f}"


def tradeoff_table(results) -> str:
    lines = ["| policy | success TPS | vs round-robin | overall error | max error (1 s) | "
             "recovery (s) | p99 (ms) | to sick backends |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    rr = results["summary"]["round_robin"]["mean_success_tps"]
    rows = sorted(results["policies"], key=lambda p: -results["summary"][p]["mean_success_tps"])
    for p in rows:
        m = results["summary"][p]
        lines.append(f"| {p} | {m['mean_success_tps']:.0f} | {m['mean_success_tps'] / rr:.2f}x | "
                     f"{pct(m['error_rate'])} | {pct(m['max_error_rate'])} | "
                     f"{secs(m['recovery_s'])} | {m['p99_ms']:.0f} | {pct(m['sick_share'])} |")
    return "\n".join(lines)


def scenarios_table(sim: str, out: Path) -> str:
    lines = ["| scenario | metric | " + " | ".join(SCENARIO_POLICIES) + " |",
             "|---|---|" + "---:|" * len(SCENARIO_POLICIES)]
    for name in SCENARIOS:
        dest = out / "scenarios" / name
        cmd = [sim, str(ROOT / "examples" / "scenarios" / f"{name}.json"), "--out", str(dest)]
        for p in SCENARIO_POLICIES[:-1]:
            cmd += ["--policy", p]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        s = json.loads((dest / "results.json").read_text())["summary"]
        cells = lambda f: " | ".join(f(s[p]) for p in SCENARIO_POLICIES)
        lines.append(f"| {name} | success TPS | " + cells(lambda m: f"{m['mean_success_tps']:.0f}") + " |")
        lines.append("| | errors: overall (max 1 s) | " + cells(
            lambda m: f"{pct(m['error_rate'])} ({100 * m['max_error_rate']:.0f}%)") + " |")
        lines.append("| | p99 (ms) | " + cells(lambda m: f"{m['p99_ms']:.0f}") + " |")
        lines.append("| | to sick backends | " + cells(
            lambda m: "n/a" if m["sick_share"] is None else f"{100 * m['sick_share']:.0f}%") + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default=str(ROOT / "build" / "release" / "sim" / "weighted-sim"))
    ap.add_argument("--out", default=str(ROOT / "out"))
    args = ap.parse_args()
    out = Path(args.out)
    table = (out / "table.md").read_text().strip()
    commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--", "core"],
                            capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "core"],
                           capture_output=True, text=True, check=True).stdout.strip()
    results = ("```\n$ make demo\n```\n\n" + table + "\n\nEngine: `core/` at commit `" + commit + "`"
               + (" plus uncommitted changes" if dirty else "") + ".")
    doc = ROOT / "docs" / "benchmark.md"
    text = doc.read_text()
    text = replace_block(text, "results", results)
    text = replace_block(text, "tradeoff", tradeoff_table(
        json.loads((out / "tradeoff" / "results.json").read_text())))
    text = replace_block(text, "scenarios", scenarios_table(args.sim, out))
    doc.write_text(text)
    print(f"updated {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
