#!/usr/bin/env python3
"""The one-judgement targets of docs/benchmark.md, measured on seeds 1-5:

    python3 sim/tools/health_targets.py [--sim build/release/sim/weighted-sim] [--out out/health]
                                        [--scenarios a,b,...] [--json]

For every example scenario (or those named) it runs engine_default on seeds 1-5 and prints the
success TPS and the worst 1-s error rate; on `stall`, the 5-s cycles (from the stall on) in which
the stalled backend got less than 90% of its fair share; on `hard_down` and `sinkhole`, how long
after the fault began the failing backend first read `isolated`, and the states it showed from
the first cycle after the fault began to its end (`healthy`, `recovering` or `unknown` there miss
the target). Run it with another build's simulator (--sim) to compare two engines alike.
"""
from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CYCLE_S = 5


def measure(sim: str, scenario: Path, seed: int, out: Path) -> dict:
    dest = out / scenario.stem / str(seed)
    subprocess.run([sim, str(scenario), "--policy", "engine_default", "--seed", str(seed),
                    "--no-oracle", "--out", str(dest)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = json.loads((dest / "results.json").read_text())
    m = r["summary"]["engine_default"]
    row = {"tps": m["mean_success_tps"], "max_error": m["max_error_rate"]}
    faults = json.loads(scenario.read_text()).get("faults", [])
    if scenario.stem not in ("stall", "hard_down", "sinkhole") or not faults:
        return row
    s = r["series"]["engine_default"]
    f = faults[0]
    b, start = f["backend"], int(f["start_s"])
    end = int(f.get("end_s") or len(s["sent"]))
    mine, total = s["backends"][b]["sent"], s["sent"]
    fair = 1.0 / len(s["backends"])
    below = []
    for c in range(start - start % CYCLE_S, len(total) - CYCLE_S + 1, CYCLE_S):
        t, m_ = sum(total[c:c + CYCLE_S]), sum(mine[c:c + CYCLE_S])
        if t and m_ / t < 0.9 * fair:
            below.append(c)
    row["cycles_below_90pct_fair"] = below
    states = s["backends"][b].get("state")
    if states:
        # Sampled at the end of each second; the first judgement of the fault is one cycle in.
        during = states[start + CYCLE_S:end]
        row["states_during_fault"] = sorted(set(during))
        iso = [i for i in range(start, end) if states[i] == "isolated"]
        row["isolated_after_s"] = iso[0] + 1 - start if iso else None
    return row


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim", default=str(ROOT / "build" / "release" / "sim" / "weighted-sim"))
    ap.add_argument("--out", default=str(ROOT / "out" / "health"))
    ap.add_argument("--scenarios", default="")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    only = set(filter(None, args.scenarios.split(",")))
    results = {}
    for f in sorted((ROOT / "examples" / "scenarios").glob("*.json")):
        if f.stem == "engine_variants" or (only and f.stem not in only):
            continue
        results[f.stem] = [measure(args.sim, f, seed, Path(args.out)) for seed in range(1, 6)]
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    print("| scenario | success TPS, seeds 1-5 | max 1-s error, seeds 1-5 |")
    print("|---|---|---|")
    for name, rows in results.items():
        print(f"| {name} | " + " / ".join(f"{r['tps']:.0f}" for r in rows) + " | " +
              " / ".join(f"{100 * r['max_error']:.2f}%" for r in rows) + " |")
    for name, rows in results.items():
        for seed, r in enumerate(rows, 1):
            extra = {k: v for k, v in r.items() if k not in ("tps", "max_error")}
            if extra:
                print(f"{name} seed {seed}: {json.dumps(extra)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
