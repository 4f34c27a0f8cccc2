"""``python -m weighted.bench``: the article's experiment from Python, as ``make demo`` runs it.

Runs a scenario through the simulator (default: the shipped ``seed`` scenario, S-X1, every
policy), prints the same Markdown table as ``weighted-sim``, and writes into ``--out``:
``results.json``, ``table.md`` and the plots of ``weighted._plots`` (matplotlib). Like
``make demo`` it then runs the shipped engine rule variants on the same scenario into
``OUT/tradeoff/`` (the throughput/error trade-off); ``--no-tradeoff`` skips that.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import sim


def _write(results: Dict[str, Any], table: str, out: Path, plots: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(results) + "\n", encoding="utf-8")
    (out / "table.md").write_text(table, encoding="utf-8")
    print(f"wrote {out / 'results.json'} and {out / 'table.md'}", file=sys.stderr)
    if not plots:
        return
    try:
        from ._plots import write_plots
        written = write_plots(results, str(out))
    except ImportError as e:  # matplotlib missing
        print(f"weighted.bench: plots skipped ({e})", file=sys.stderr)
        return
    print(f"wrote {len(written or [])} plots to {out}", file=sys.stderr)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m weighted.bench",
                                     description="Run a simulator scenario; print and plot it.")
    parser.add_argument("scenario", nargs="?", default="seed",
                        help="a scenario file or a shipped scenario's name (default: seed)")
    parser.add_argument("--policy", action="append", dest="policies", metavar="NAME",
                        help="run only this policy (repeatable; default: the scenario's list)")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--engines", metavar="VARIANTS_JSON",
                        help='add engine variants {"engine_name": {config}} to the main run')
    parser.add_argument("--out", default="out/bench-python", help="where results and plots go")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--no-tradeoff", action="store_true",
                        help="skip the engine rule variants run (OUT/tradeoff)")
    args = parser.parse_args(argv)

    try:
        engines = json.loads(Path(args.engines).read_text()) if args.engines else None
        results, table = sim.run_with_table(args.scenario, policies=args.policies, seed=args.seed,
                                            engine_configs=engines)
        scen = results["scenario"]
        print(f"Scenario `{scen['name']}`, seed {scen['seed']}, {scen['duration_s']:g} s simulated.\n")
        print(table)
        out = Path(args.out)
        _write(results, table, out, not args.no_plots)
        variants = sim.engine_variants()
        if variants and not args.no_tradeoff:
            tradeoff, ttable = sim.run_with_table(args.scenario, seed=args.seed,
                                                  engine_configs=variants)
            _write(tradeoff, ttable, out / "tradeoff", not args.no_plots)
    except (sim.ScenarioError, OSError, ValueError) as e:
        print(f"weighted.bench: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
