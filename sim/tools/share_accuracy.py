#!/usr/bin/env python3
"""How well the engine's published expected share predicts the traffic it then gets.

    python3 sim/tools/share_accuracy.py [--sim build/release/sim/weighted-sim] [--out out]
                                        [--seeds 1-5] [--policy engine_default ...] [--write]

Runs every scenario of examples/scenarios/ (each a JSON with backends) on each policy and seed,
without the oracle, and reads from each run's results.json the simulator's share accuracy: per
endpoint and controller cycle, |share.expected published when the cycle began - share.last_cycle
measured when it ended|, in percentage points (the engine policy reads both from the snapshot at
every cycle; sim/policies/engine.cc). Prints a Markdown table with the worst seed's max and p95
per scenario; --write puts it between the `share_accuracy` markers of docs/benchmark.md.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_tables import ROOT, replace_block  # noqa: E402

TARGET_PP = 5.0


def scenarios() -> list[Path]:
    out = []
    for path in sorted((ROOT / "examples" / "scenarios").glob("*.json")):
        if "backends" in json.loads(path.read_text()):  # engine_variants.json is not a scenario
            out.append(path)
    return out


def seeds(spec: str) -> list[int]:
    lo, _, hi = spec.partition("-")
    return list(range(int(lo), int(hi or lo) + 1))


def run(sim: str, scenario: Path, policy: str, seed: int, out: Path) -> dict:
    dest = out / "share_accuracy" / scenario.stem / policy / str(seed)
    cmd = [sim, str(scenario), "--policy", policy, "--seed", str(seed), "--no-oracle",
           "--out", str(dest)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((dest / "results.json").read_text())["summary"][policy]


def table(sim: str, out: Path, policies: list[str], seed_list: list[int]) -> str:
    lines = ["| scenario | policy | max (pp) | p95 (pp) | max per seed (pp) | pairs per run | "
             f"≤ {TARGET_PP:g} pp |",
             "|---|---|---:|---:|---|---:|---|"]
    for scenario in scenarios():
        for policy in policies:
            runs = [run(sim, scenario, policy, s, out) for s in seed_list]
            maxes = [r["share_error_max_pp"] for r in runs]
            p95s = [r["share_error_p95_pp"] for r in runs]
            pairs = sorted(r["share_error_samples"] for r in runs)[len(runs) // 2]
            ok = "met" if max(maxes) <= TARGET_PP else "missed"
            lines.append(f"| {scenario.stem} | {policy} | {max(maxes):.1f} | {max(p95s):.1f} | "
                         + " / ".join(f"{m:.1f}" for m in maxes) + f" | {pairs} | {ok} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default=str(ROOT / "build" / "release" / "sim" / "weighted-sim"))
    ap.add_argument("--out", default=str(ROOT / "out"))
    ap.add_argument("--seeds", default="1-5")
    ap.add_argument("--policy", action="append", help="engine policies (default: engine_default)")
    ap.add_argument("--write", action="store_true", help="update docs/benchmark.md")
    args = ap.parse_args()
    body = table(args.sim, Path(args.out), args.policy or ["engine_default"], seeds(args.seeds))
    print(body)
    if args.write:
        doc = ROOT / "docs" / "benchmark.md"
        doc.write_text(replace_block(doc.read_text(), "share_accuracy", body))
        print(f"updated {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
