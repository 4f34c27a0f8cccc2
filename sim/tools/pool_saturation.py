"""The pool-saturation target on seeds 1-5: when does each engine variant first move traffic off
the backend whose pool fills (b1's weight share below 0.30, from 1/3), and how many requests
fail (5xx and timeouts) over the run. Reads the CSV series weighted-sim writes with --out.

    python3 sim/tools/pool_saturation.py build/release/sim/weighted-sim [seeds...]
"""
import csv
import os
import subprocess
import sys
import tempfile

SCENARIO = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "scenarios",
                        "pool_saturation.json")
VARIANTS = ["engine_client_only", "engine_scrape", "engine_header"]
CYCLE_S = 5  # the default controller.interval_ms


def run(sim, seed, out):
    subprocess.run([sim, SCENARIO, "--seed", str(seed), "--out", out], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    result = {}
    for v in VARIANTS:
        rows = list(csv.DictReader(open(os.path.join(out, f"series_{v}.csv"))))
        shift = next((float(r["t_s"]) for r in rows if float(r["b1_weight"]) < 0.30), None)
        failed = sum(int(r["errors"]) + int(r["timeouts"]) for r in rows)
        result[v] = (shift, failed)
    return result


def main():
    sim = sys.argv[1]
    seeds = [int(s) for s in sys.argv[2:]] or [1, 2, 3, 4, 5]
    print("| seed | " + " | ".join(f"{v}: shift (s), failed" for v in VARIANTS)
          + " | header earlier by (cycles) |")
    print("|---|" + "---|" * (len(VARIANTS) + 1))
    for seed in seeds:
        with tempfile.TemporaryDirectory() as out:
            r = run(sim, seed, out)
        cells = [f"{r[v][0]:.0f}, {r[v][1]}" if r[v][0] is not None else f"never, {r[v][1]}"
                 for v in VARIANTS]
        base, head = r["engine_client_only"][0], r["engine_header"][0]
        earlier = "n/a" if base is None or head is None else f"{(base - head) / CYCLE_S:.1f}"
        print(f"| {seed} | " + " | ".join(cells) + f" | {earlier} |")


if __name__ == "__main__":
    main()
