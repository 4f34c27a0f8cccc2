"""Collects each benchmark's median and prints it as a ratio to the pure-Python baseline
(random.choices over the same weights) measured in the same run."""
from __future__ import annotations

import pytest

MEDIANS = {}


@pytest.fixture
def record(benchmark, request):
    def run(fn, *args, per_call=1):
        benchmark(fn, *args)
        MEDIANS[request.node.name] = benchmark.stats.stats.median / per_call
    return run


def pytest_terminal_summary(terminalreporter):
    base = MEDIANS.get("test_baseline_random_choices")
    if not MEDIANS or base is None:
        return
    terminalreporter.section("weighted: per-operation median vs random.choices (same run)")
    for name, median in sorted(MEDIANS.items()):
        terminalreporter.write_line(
            f"{name:45s} {median * 1e9:9.0f} ns   {median / base:6.2f}x baseline")
