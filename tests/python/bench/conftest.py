"""Collects each benchmark's median per operation and prints it as a ratio to the pure-Python
baseline its test names, measured in the same run. The baseline and the operations per call go
into pytest-benchmark's JSON (extra_info), where benchmarks/report.py reads them."""
from __future__ import annotations

import pytest

MEDIANS = {}
BASELINES = {}
RANDOM_CHOICES = "test_baseline_random_choices"


@pytest.fixture
def record(benchmark, request):
    # baseline=None: the test is a baseline itself.
    def run(fn, *args, per_call=1, baseline=RANDOM_CHOICES):
        benchmark.extra_info["per_call"] = per_call
        benchmark.extra_info["baseline"] = baseline
        benchmark(fn, *args)
        MEDIANS[request.node.name] = benchmark.stats.stats.median / per_call
        BASELINES[request.node.name] = baseline
    return run


def pytest_terminal_summary(terminalreporter):
    if not MEDIANS:
        return
    terminalreporter.section(
        "weighted: per-operation median vs its pure-Python baseline (same run)")
    for name, median in sorted(MEDIANS.items()):
        base = MEDIANS.get(BASELINES[name])
        if not BASELINES[name]:
            vs = "(a baseline)"
        else:
            vs = f"{median / base:6.2f}x {BASELINES[name]}" if base else "(baseline not run)"
        terminalreporter.write_line(f"{name:45s} {median * 1e9:9.0f} ns   {vs}")
