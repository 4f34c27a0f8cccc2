"""A service in another process whose engine writes a state file: the tests attach to it.

    python state_writer.py PATH [SERVICE_NAME]

Runs an engine on the manual clock with export.state_file = PATH and three endpoints a, b, c of
service "orders", and obeys one command per line on stdin, answering one line on stdout, so that
a test decides exactly what the file holds when it reads it (no sleeps):

    cycle        healthy traffic to b and c, slow failing CPU-hot traffic to a, one 5 s cycle
    healthy      healthy traffic to all three, one cycle
    close        closes the engine (the file says "closed") and exits
    (EOF)        exits without closing: as a crash would, but with a clean interpreter exit
"""
from __future__ import annotations

import os
import sys

import weighted

sys.path.insert(0, os.path.dirname(__file__))
from helpers import ENDPOINTS, feed_healthy, make_sick  # noqa: E402


def main() -> int:
    path = sys.argv[1]
    name = sys.argv[2] if len(sys.argv) > 2 else "orders-service"
    engine = weighted.Engine.from_dict(
        {"seed": 3, "export": {"state_file": path, "service_name": name}}, clock="manual")
    svc = engine.service("orders")
    svc.set_endpoints(ENDPOINTS)
    print(f"ready {os.getpid()}", flush=True)
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "cycle":
            feed_healthy(svc, ids=("b", "c"))
            make_sick(svc, "a")
        elif cmd == "healthy":
            feed_healthy(svc)
        elif cmd == "close":
            engine.close()
            print("closed", flush=True)
            return 0
        else:
            print(f"unknown command {cmd!r}", flush=True)
            continue
        engine.advance(5)
        print(f"ok {engine.now():.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
