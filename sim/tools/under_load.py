#!/usr/bin/env python3
"""Judgement under load: the hot-fleet scenarios on seeds 1-5, every peer beside the engine.

    python3 sim/tools/under_load.py [--sim build/release/sim/weighted-sim] [--write]

Runs each scenario below with every peer policy (round-robin, random, the P2C peers, gRPC WRR,
Envoy outlier detection stock and with always_eject_one_host), the engine's default profile, the
scenario's own engine variants (`engine_configs`) and the oracle, on seeds 1-5, and prints one
row per policy: success throughput and worst 1-s error rate (median over the seeds, then the
range), and for the engine its weight changes and isolations per run (its events). With
--write, the table replaces the `under-load` block of docs/benchmark.md.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from doc_blocks import write_block

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ["saturation_slow2x", "saturation_slow5x", "noise_hot", "equal_errors", "two_degrade"]
# Every peer the simulator has (docs/benchmark.md, section 4) but the static-weights supplier,
# which on these equal-weight fleets is round-robin.
POLICIES = ["round_robin", "random", "least_request", "peak_ewma", "grpc_wrr", "envoy_outlier",
            "envoy_outlier_eject_one", "engine_default"]
SEEDS = [1, 2, 3, 4, 5]


def run(sim: str, name: str, seed: int, tmp: Path) -> dict:
    path = ROOT / "examples" / "scenarios" / f"{name}.json"
    variants = list(json.loads(path.read_text()).get("engine_configs", {}))
    dest = tmp / f"{name}_{seed}"
    cmd = [sim, str(path), "--seed", str(seed), "--out", str(dest)]
    for p in POLICIES + variants:
        cmd += ["--policy", p]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((dest / "results.json").read_text())["summary"]


def spread(values, fmt) -> str:
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def table(sim: str) -> str:
    lines = ["| scenario | policy | success TPS | max 1-s error | weight changes | isolations |",
             "|---|---|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in SCENARIOS:
            runs = [run(sim, name, s, Path(tmp)) for s in SEEDS]
            first = name
            order = [p for p in POLICIES if p in runs[0]]
            order += sorted(p for p in runs[0] if p not in POLICIES and p != "oracle") + ["oracle"]
            for p in order:
                rows = [r[p] for r in runs]
                decided = "weight_changes" in rows[0]
                wc = spread([r["weight_changes"] for r in rows], str) if decided else ""
                iso = spread([r["isolations"] for r in rows], str) if decided else ""
                lines.append(f"| {first} | {p} | "
                             f"{spread([r['mean_success_tps'] for r in rows], lambda x: f'{x:.0f}')} | "
                             f"{spread([100 * r['max_error_rate'] for r in rows], lambda x: f'{x:.1f}%')} | "
                             f"{wc} | {iso} |")
                first = ""
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default=str(ROOT / "build" / "release" / "sim" / "weighted-sim"))
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    body = table(args.sim)
    if not args.write:
        print(body)
        return 0
    write_block("under-load", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
