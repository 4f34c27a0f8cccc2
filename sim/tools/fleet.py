#!/usr/bin/env python3
"""A fleet of engines: time to drain a sick backend against the number of clients.

    python3 sim/tools/fleet.py [--sim build/release/sim/weighted-sim] [--clients 1,10,100,1000]
                               [--backends 50] [--rps 5000] [--duration 60] [--write]
    python3 sim/tools/fleet.py --scale [--clients 10000] [--backends 500] [--duration 120]

The grid: M backends (the seed's backend: 8 workers, queue 128, lognormal 20 ms) under a fixed
open-loop total load, split over N clients, each with its own policy instance (its own engine,
seed and subset client id). At 20 s backend b0 starts failing 15% of its requests (the seed's
leak, at once rather than over 5 s), or, in a second run, slows 5x (the seed's GC pause: service x5, +0.3 CPU); both last to
the end. Per policy and client count it reports:

- time to drain: seconds from the onset until the sick backend's share of all requests falls
  to a quarter of its share before the onset (the mean over the 10 s before) and stays there to
  the end of the run; "never" if it does not; and the same to half of its share;
- max/mean load: the largest backend's requests over the mean backend's, over the fault-free
  seconds 5-20 (Poisson noise alone gives round-robin a few percent);
- the run's wall and CPU time (this process's children, so the simulator alone).

The engine runs six ways: `default` (client-side signals only: no scrape, no header),
`subset` (subset.mode auto), `reports` (the backends' load report on every response:
cpu, memory, rps, eps and the mean service time, named_metrics.latency_ms), `both`, `polled`
(auto subsets, and every backend's figures every 5 s whatever the client's traffic, as the
Prometheus source with its error_rate and latency_ms queries brings them)
and `aperture` (the same with the deterministic aperture: each client knows its place in the
fleet); the peers without subsetting, as they ship. With --write the
table replaces the `fleet` block of docs/benchmark.md and the plot is written to
docs/img/fleet_drain.png.

--scale runs the fleet-size target once (10,000 clients x 500 backends x 120 s, the issue's
100,000 requests/s) for the engine with subsetting and server reports, and prints its wall and
CPU time and peak memory.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from doc_blocks import write_block

ROOT = Path(__file__).resolve().parents[2]
ONSET_S = 20
FAULTS = {
    "leak 15%": {"type": "leak", "backend": 0, "start_s": ONSET_S, "ramp_s": 0},
    "slow 5x": {"type": "gc", "backend": 0, "start_s": ONSET_S},
}
NONE = {"sim": {"resources": "none"}}
# The servers' reports carry their mean service time too (named_metrics.latency_ms), as the
# Python and Spring server modules send it.
HEADER = {"sim": {"resources": "header", "server_latency": True}}
AUTO = {"subset": {"mode": "auto"}}
POLL = {"sim": {"resources": "poll", "server_latency": True}}
APERTURE_POLL = {"sim": {"resources": "poll", "server_latency": True, "aperture": True}}
ENGINES = {
    "engine_default": NONE,
    "engine_subset": {**AUTO, **NONE},
    "engine_reports": HEADER,
    "engine_both": {**AUTO, **HEADER},
    "engine_polled": {**AUTO, **POLL},
    "engine_aperture": {**AUTO, **APERTURE_POLL},
}
PEERS = ["round_robin", "peak_ewma", "grpc_wrr", "envoy_outlier", "envoy_outlier_eject_one"]


def scenario(backends: int, clients: int, rps: float, duration: float, fault: dict) -> dict:
    return {
        "name": "fleet", "duration_s": duration, "seed": 1,
        "description": f"{clients} clients, {backends} backends, {rps:g} requests/s in total",
        "backend_defaults": {"workers": 8, "queue_limit": 128,
                             "service": {"dist": "lognormal", "mean_ms": 20, "log_sigma": 0.5}},
        "backends": [{} for _ in range(backends)],
        "faults": [fault],
        "load": {"type": "open", "rate_per_s": rps, "timeout_ms": 1000},
        "clients": {"count": clients},
        "engine_configs": ENGINES,
    }


def run(sim: str, sc: dict, policy: str, tmp: Path) -> tuple[dict, float, float]:
    """Runs one policy in a directory of its own; returns its results, wall seconds and CPU
    seconds (the child's own, so that runs side by side (--jobs) count apart)."""
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / "scenario.json"
    path.write_text(json.dumps(sc))
    out = tmp / "out"
    t0 = time.monotonic()
    child = subprocess.Popen([sim, str(path), "--policy", policy, "--no-oracle", "--out", str(out)],
                             stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, child.args)
    cpu = usage.ru_utime + usage.ru_stime
    return json.loads((out / "results.json").read_text()), wall, cpu


def drain_time(series: dict, fraction: float, backend: int = 0) -> float | None:
    """Seconds from the onset until the backend's share is at most `fraction` of its share
    before the onset, for good; None if it is still above at the end."""
    sent = series["sent"]
    mine = series["backends"][backend]["sent"]
    share = [m / s if s else 0.0 for m, s in zip(mine, sent)]
    before = share[ONSET_S - 10:ONSET_S]
    limit = fraction * sum(before) / len(before)
    last_over = None
    for t in range(ONSET_S, len(share)):
        if share[t] > limit:
            last_over = t
    if last_over is None:
        return 0.0
    if last_over >= len(share) - 1:
        return None  # still above at the end
    return float(last_over + 1 - ONSET_S)


def balance(series: dict) -> float:
    totals = [sum(b["sent"][5:ONSET_S]) for b in series["backends"]]
    mean = sum(totals) / len(totals)
    return max(totals) / mean if mean else float("nan")


def grid(args) -> list[dict]:
    rows = []
    policies = list(ENGINES) + PEERS
    if args.only:
        policies = [p for p in policies if p in args.only.split(",")]
    faults = {k: v for k, v in FAULTS.items() if not args.faults or k in args.faults.split(",")}
    cells = [(f, n, p) for f in faults for n in args.clients for p in policies]

    def one(i: int, cell: tuple) -> dict:
        fault_name, n, p = cell
        sc = scenario(args.backends, n, args.rps, args.duration, faults[fault_name])
        res, wall, cpu = run(args.sim, sc, p, Path(tmp) / str(i))
        series = res["series"][p]
        row = {"fault": fault_name, "clients": n, "policy": p,
               "drain_s": drain_time(series, 0.25),
               "halve_s": drain_time(series, 0.5), "max_mean": balance(series),
               "error_rate": res["summary"][p]["error_rate"],
               "wall_s": wall, "cpu_s": cpu}
        print(json.dumps(row), file=sys.stderr, flush=True)
        return row

    with tempfile.TemporaryDirectory() as tmp:
        # Runs side by side share the machine: their wall times are longer, not their CPU.
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            rows = list(pool.map(one, range(len(cells)), cells))
    return rows


def fmt_drain(d: float | None) -> str:
    return "never" if d is None else f"{d:.0f}"


def table(rows: list[dict], args) -> str:
    clients = sorted({r["clients"] for r in rows})
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    lines = []
    for fault in FAULTS:
        lines += [f"Time to drain (s), {fault}: to a quarter of its share / to half of it", "",
                  "| policy | " + " | ".join(f"{n:,} clients" for n in clients) + " |",
                  "|---|" + "---:|" * len(clients)]
        for p in policies:
            cells = []
            for n in clients:
                r = [x for x in rows if x["fault"] == fault and x["clients"] == n
                     and x["policy"] == p]
                cells.append(f"{fmt_drain(r[0]['drain_s'])} / {fmt_drain(r[0]['halve_s'])}"
                             if r else "-")
            lines.append(f"| {p} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["Max/mean backend load over seconds 5-20 (before the fault; leak runs):", "",
              "| policy | " + " | ".join(f"{n:,} clients" for n in clients) + " |",
              "|---|" + "---:|" * len(clients)]
    for p in policies:
        cells = []
        for n in clients:
            r = [x for x in rows if x["fault"] == "leak 15%" and x["clients"] == n
                 and x["policy"] == p]
            cells.append(f"{r[0]['max_mean']:.2f}" if r else "-")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    lines += ["", "Wall / CPU seconds per run (one policy, both faults summed):", "",
              "| policy | " + " | ".join(f"{n:,} clients" for n in clients) + " |",
              "|---|" + "---:|" * len(clients)]
    for p in policies:
        cells = []
        for n in clients:
            r = [x for x in rows if x["clients"] == n and x["policy"] == p]
            cells.append(f"{sum(x['wall_s'] for x in r):.0f} / {sum(x['cpu_s'] for x in r):.0f}"
                         if r else "-")
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(rows: list[dict], path: Path, duration: float) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    never = duration - ONSET_S
    for ax, fault in zip(axes, FAULTS):
        for p in dict.fromkeys(r["policy"] for r in rows):
            pts = sorted((r["clients"], r["drain_s"]) for r in rows
                         if r["fault"] == fault and r["policy"] == p)
            xs = [c for c, _ in pts]
            ys = [never if d is None else d for _, d in pts]
            ax.plot(xs, ys, marker="o", label=p)
        ax.axhline(12, color="grey", linestyle="--", linewidth=0.8)
        ax.axhline(never, color="black", linestyle=":", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_title(f"b0 {fault} at {ONSET_S} s")
        ax.set_xlabel("clients (same total load)")
    axes[0].set_ylabel(f"time to drain (s); {never:.0f} = never")
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


def scale(args) -> None:
    fault = FAULTS["leak 15%"]
    sc = scenario(args.backends, args.clients[0], args.rps, args.duration, fault)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scenario.json"
        path.write_text(json.dumps(sc))
        cmd = ["/usr/bin/time", "-f", "%e s wall, %U s user, %S s sys, %M KiB peak",
               args.sim, str(path), "--policy", args.scale_policy, "--no-oracle"]
        print(" ".join(cmd[3:]), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)


def churn(clients: int, backends: int, size: int) -> dict:
    """Entries of each client's subset that change when one backend joins, and when one of the
    client's own leaves: through the Python package's engines, as an application sees them."""
    import weighted
    ids = [f"10.2.{i // 250}.{i % 250}:8080" for i in range(backends)]

    def members(engine, ids_now):
        svc = engine.service("orders")
        svc.set_endpoints({i: 1 for i in ids_now})
        eps = engine.snapshot()["services"][0]["endpoints"]
        return {e["id"] for e in eps if e["in_subset"]}

    added, removed = [], []
    for c in range(clients):
        cfg = {"subset": {"mode": "fixed", "size": size}}
        with weighted.Engine.from_dict(cfg, clock="manual", client_id=f"client-{c}") as e:
            before = members(e, ids)
            after = members(e, ids + ["10.9.9.9:8080"])
            added.append(len(before - after))
            gone = sorted(before)[0]
            after = members(e, [i for i in ids if i != gone])
            removed.append(len(before - after) - 1)  # the one that left is not a move
    return {"clients": clients, "backends": backends, "size": size,
            "add_moved_mean": sum(added) / clients, "add_moved_max": max(added),
            "remove_moved_mean": sum(removed) / clients, "remove_moved_max": max(removed)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sim", default=str(ROOT / "build/release/sim/weighted-sim"))
    ap.add_argument("--clients", default=None, help="comma-separated client counts")
    ap.add_argument("--backends", type=int, default=None)
    ap.add_argument("--rps", type=float, default=None)
    ap.add_argument("--duration", type=float, default=None)
    ap.add_argument("--only", default="", help="comma-separated policies")
    ap.add_argument("--faults", default="", help="comma-separated faults (\"leak 15%%\", "
                    "\"slow 5x\"); all by default")
    ap.add_argument("--jobs", type=int, default=1, help="runs side by side (at most 2 here)")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--scale", action="store_true")
    ap.add_argument("--scale-policy", default="engine_both")
    ap.add_argument("--churn", action="store_true",
                    help="moves per client on one backend added / removed (needs weighted)")
    args = ap.parse_args()
    if args.churn:
        print(json.dumps(churn(1000, args.backends or 500, 12)))
        return
    if args.scale:
        args.clients = [int(x) for x in (args.clients or "10000").split(",")]
        args.backends = args.backends or 500
        args.rps = args.rps or 100000
        args.duration = args.duration or 120
        return scale(args)
    args.clients = [int(x) for x in (args.clients or "1,10,100,1000,10000").split(",")]
    args.backends = args.backends or 50
    args.rps = args.rps or 5000
    args.duration = args.duration or 60
    rows = grid(args)
    text = table(rows, args)
    print(text)
    if args.write:
        (ROOT / "docs/img").mkdir(exist_ok=True)
        plot(rows, ROOT / "docs/img/fleet_drain.png", args.duration)
        cmd = ("python3 sim/tools/fleet.py --write --clients "
               + ",".join(str(n) for n in args.clients)
               + f" --backends {args.backends} --rps {args.rps:g} --duration {args.duration:g}"
               + (f" --jobs {args.jobs}" if args.jobs > 1 else ""))
        write_block("fleet", f"Produced by `{cmd}`:\n\n{text}")
        (ROOT / "docs/img/fleet_rows.json").write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
