"""Helpers shared by the test modules."""
from __future__ import annotations

import weighted

ENDPOINTS = {"a": 100, "b": 100, "c": 100}


def endpoint_view(engine, service, endpoint):
    """The snapshot entry of one endpoint."""
    for s in engine.snapshot()["services"]:
        if s["name"] == service:
            for ep in s["endpoints"]:
                if ep["id"] == endpoint:
                    return ep
    raise AssertionError(f"{service}/{endpoint} not in the snapshot")


def feed_healthy(svc, ids=("a", "b", "c"), n=50, latency_ms=10.0):
    for _ in range(n):
        for i in ids:
            svc.report(i, latency_ms, weighted.Outcome.SUCCESS)


def make_sick(svc, endpoint="a", n=50):
    """Slow, failing half its requests and CPU-hot: every default rule fires (0.3 + 1, the graded
    error rule at 50%, + 0.2: isolation)."""
    for _ in range(n):
        svc.report(endpoint, 500.0, weighted.Outcome.SUCCESS)  # slow answers (p99 counts these)
        svc.report(endpoint, 500.0, weighted.Outcome.HTTP_5XX)
    svc.report_resources(endpoint, cpu=0.95)
