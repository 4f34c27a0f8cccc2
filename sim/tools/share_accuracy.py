#!/usr/bin/env python3
"""How well the engine's published expected share predicts the traffic it then gets.

    python3 sim/tools/share_accuracy.py [--sim build/release/sim/weighted-sim] [--out out]
                                        [--seeds 1-5] [--policy engine_default ...] [--write]

Runs every scenario of examples/scenarios/ (each a JSON with backends) on each policy and seed,
without the oracle, and reads from each run's results.json the simulator's share accuracy: per
endpoint and controller cycle, |share.expected published when the cycle began - share.last_cycle
measured when it ended|, in percentage points (the engine policy reads both from the snapshot at
every cycle; sim/policies/engine.cc). Prints a Markdown table with the worst seed's max and p95
per scenario, over every cycle and over the steady cycles: those in which no backend's
behaviour changed (no fault began, ended or was ramping; a prediction made before the change
cannot know it). Load that varies (tidal, rate profiles) counts as steady: the model sees the
rate of the last cycle and must cope. --write puts the table between the `share_accuracy`
markers of docs/benchmark.md.
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


def changes(scenario: dict) -> list[tuple[float, float]]:
    """The closed time intervals in which some backend's behaviour changes."""
    out = []
    for f in scenario.get("faults", []):
        start, end = f["start_s"], f.get("end_s")
        out.append((start, start + f.get("ramp_s", 0)))
        if f["type"] == "flap":
            t = start
            while t < (end if end is not None else scenario["duration_s"]):
                out += [(t, t), (t + f["down_s"], t + f["down_s"])]
                t += f["period_s"]
        if end is not None:
            out.append((end, end + (f.get("recovery_s", 0) if f["type"] == "slow_recovery" else 0)))
    return out


def split(errors: list, spans: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """All errors, and those of cycles [end - interval, end) that no change touches."""
    ends = sorted({e[0] for e in errors})
    interval = min((b - a for a, b in zip(ends, ends[1:])), default=5.0)
    steady = [pp for end, _, pp in errors
              if not any(lo < end and hi >= end - interval for lo, hi in spans)]
    return [e[2] for e in errors], steady


def p95(values: list[float]) -> float:
    v = sorted(values)
    return v[max(0, -(-95 * len(v) // 100) - 1)] if v else float("nan")


def run(sim: str, scenario: Path, policy: str, seed: int, out: Path) -> dict:
    dest = out / "share_accuracy" / scenario.stem / policy / str(seed)
    cmd = [sim, str(scenario), "--policy", policy, "--seed", str(seed), "--no-oracle",
           "--out", str(dest)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads((dest / "results.json").read_text())["summary"][policy]


def table(sim: str, out: Path, policies: list[str], seed_list: list[int]) -> str:
    lines = ["| scenario | policy | all cycles: max (pp) | p95 | steady cycles: max (pp) | p95 | "
             "steady max per seed (pp) | pairs per run (steady) | "
             f"≤ {TARGET_PP:g} pp all / steady |",
             "|---|---|---:|---:|---:|---:|---|---:|---|"]
    for scenario in scenarios():
        spans = changes(json.loads(scenario.read_text()))
        for policy in policies:
            runs = [split(run(sim, scenario, policy, s, out)["share_errors"], spans)
                    for s in seed_list]
            every = [max(a) for a, _ in runs]
            steady = [max(b, default=0.0) for _, b in runs]
            verdict = lambda xs: "met" if max(xs) <= TARGET_PP else "missed"
            lines.append(
                f"| {scenario.stem} | {policy} | {max(every):.1f} | {max(p95(a) for a, _ in runs):.1f} "
                f"| {max(steady):.1f} | {max(p95(b) for _, b in runs):.1f} | "
                + " / ".join(f"{m:.1f}" for m in steady)
                + f" | {len(runs[0][0])} ({len(runs[0][1])}) | {verdict(every)} / {verdict(steady)} |")
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
