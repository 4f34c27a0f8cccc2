"""``python -m weighted.bench``: the article's experiment from Python.

Runs a scenario through the simulator (default: the shipped ``seed`` scenario, S-X1), prints
the same Markdown table as ``weighted-sim`` / ``make demo``, writes ``results.json`` and, when
the plotting helper and matplotlib are available, the same plots.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

from . import sim


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weighted.bench", description=__doc__.split("\n\n")[1])
    parser.add_argument("scenario", nargs="?", default="seed",
                        help="a scenario file or a shipped scenario's name (default: seed)")
    parser.add_argument("--policy", action="append", dest="policies", metavar="NAME",
                        help="run only this policy (repeatable; default: the scenario's list)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--out", default="out/bench-python", help="where results and plots go")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)

    try:
        results, table = sim.run_with_table(args.scenario, policies=args.policies, seed=args.seed)
    except (sim.ScenarioError, OSError) as e:
        print(f"weighted.bench: {e}", file=sys.stderr)
        return 2
    scen = results["scenario"]
    print(f"Scenario `{scen['name']}`, seed {scen['seed']}, {scen['duration_s']:g} s simulated.\n")
    print(table)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results) + "\n", encoding="utf-8")
    print(f"wrote {out / 'results.json'}", file=sys.stderr)
    if not args.no_plots:
        try:
            from ._plots import write_plots
        except ImportError as e:
            print(f"weighted.bench: plots skipped ({e})", file=sys.stderr)
        else:
            written = write_plots(results, str(out))
            print(f"wrote plots to {out}" + (f": {written}" if written else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
