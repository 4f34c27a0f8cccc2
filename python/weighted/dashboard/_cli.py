"""``python -m weighted.dashboard``: the operator console for an engine elsewhere, a demo, a replay.

    python -m weighted.dashboard --attach /run/weighted/orders.state    # another process's engine
    python -m weighted.dashboard --attach /run/weighted/                # pick one of its files
    python -m weighted.dashboard --attach http://host:8080/actuator/weighted
    python -m weighted.dashboard                      # a demo engine on the manual clock
    python -m weighted.dashboard --config cfg.json    # the demo traffic on your config
    python -m weighted.dashboard --replay out/results.json [--policy engine_default]
    python -m weighted.dashboard --host 0.0.0.0 --allow-remote --token "$TOKEN"

Bad arguments and unusable inputs end with a one-line message and exit status 2, never a
traceback.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import threading
from typing import List, Optional

from . import Dashboard, LiveSource, ReplaySource
from ._attach import attach_source


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"must be in [0, 65535], got {port}")
    return port


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _demo_driver(engine, dashboard: Dashboard, stop: threading.Event, speed: float) -> None:
    """The article's example on a manual clock: A turns slow at t=30 s (GC pauses), B burns CPU
    from t=60 s, C stays fine; both recover at t=150 s, and it starts over at t=240 s."""
    import random
    rng = random.Random(7)
    svc = engine.service("orders")
    svc.set_endpoints({"A": 100, "B": 100, "C": 100})
    while not stop.is_set():
        t = engine.now() % 240
        for _ in range(200):  # 200 requests per simulated second
            pick = svc.pick()
            ep = pick.endpoint
            latency = rng.lognormvariate(3.0, 0.3)  # ~20 ms
            outcome = "success"
            if ep == "A" and 30 <= t < 150:
                latency *= 5
            if ep == "B" and 60 <= t < 150 and rng.random() < 0.05:
                outcome = "http_5xx"
            svc.complete(pick, latency, outcome)
        svc.report_resources("A", cpu=0.55)
        svc.report_resources("B", cpu=0.92 if 60 <= t < 150 else 0.5)
        svc.report_resources("C", cpu=0.5)
        engine.advance(1.0)
        dashboard.sample()
        stop.wait(1.0 / speed)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m weighted.dashboard",
                                     description="Serve the weighted operator console.")
    parser.add_argument("--host", default="127.0.0.1",
                        help="address to bind (default 127.0.0.1; others need --allow-remote and a token)")
    parser.add_argument("--port", type=_port, default=8765, help="port to bind, 0..65535 (default 8765)")
    parser.add_argument("--allow-remote", action="store_true",
                        help="allow binding a non-loopback address (needs --token)")
    parser.add_argument("--token", default=os.environ.get("WEIGHTED_DASHBOARD_TOKEN"),
                        help="require this token on every request (default: $WEIGHTED_DASHBOARD_TOKEN)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--attach", metavar="PATH|DIR|URL",
                      help="watch another process's engine: its state file (export.state_file), "
                           "a directory of state files, or a service's /actuator/weighted URL")
    what.add_argument("--replay", metavar="RESULTS_JSON",
                      help="replay a simulation's results.json instead of a live engine")
    parser.add_argument("--source-token", default=os.environ.get("WEIGHTED_SOURCE_TOKEN"),
                        help="--attach URL: a Bearer token for the actuator "
                             "(default: $WEIGHTED_SOURCE_TOKEN)")
    parser.add_argument("--policy", help="replay: the policy to show (default: the first engine_*)")
    parser.add_argument("--config", help="live demo: the engine's config file (default: defaults)")
    parser.add_argument("--speed", type=_positive, default=5.0,
                        help="live demo: simulated seconds per wall second, > 0 (default 5)")
    parser.add_argument("--verbose", action="store_true", help="log every request")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)  # bad arguments: argparse's message and exit status 2
    common = dict(host=args.host, port=args.port, token=args.token,
                  allow_remote=args.allow_remote, verbose=args.verbose)
    engine = None
    try:
        if args.attach:
            dash = Dashboard(attach_source(args.attach, token=args.source_token), **common)
            kind = f"attached to {args.attach}"
        elif args.replay:
            dash = Dashboard(ReplaySource(args.replay, policy=args.policy), **common)
            kind = f"replay of {args.replay}"
        else:
            import weighted
            engine = (weighted.Engine.from_file(args.config, clock="manual") if args.config
                      else weighted.Engine.from_dict({"seed": 1}, clock="manual"))
            dash = Dashboard(LiveSource(engine, title="demo: the article's example"),
                             interval=3600, **common)
            kind = "live demo"
    # weighted's errors are ValueError/OSError; ImportError: the console's server is missing.
    except (ValueError, OSError, OverflowError, ImportError) as e:
        if engine is not None:
            engine.close()
        print(f"weighted.dashboard: {e}", file=sys.stderr)
        return 2
    print(f"weighted dashboard ({kind}): {dash.url}", flush=True)
    if engine is None:
        dash.serve_forever()
        return 0
    stop = threading.Event()
    driver = threading.Thread(target=_demo_driver, args=(engine, dash, stop, args.speed),
                              daemon=True)
    driver.start()
    try:
        dash.serve_forever()
    finally:
        stop.set()
        driver.join(timeout=5)
        engine.close()
    return 0
