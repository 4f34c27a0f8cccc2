"""pytest-benchmark: pick, report and batch report from Python, against a pure-Python weighted
pick (random.choices) measured in the same run. Run with `make bench-python`; timings are printed
as ratios, never asserted."""
from __future__ import annotations

import random

import pytest

import weighted

IDS = [f"10.0.0.{i}:8080" for i in range(16)]
WEIGHTS = [float(10 + 5 * i) for i in range(16)]
BATCH = 1000

# Calibrate on warm code. Without a warmup, pytest-benchmark sizes its rounds from the first,
# cold call of each test; when that call alone takes longer than a round's minimum time (5 us,
# e.g. after a cache-cold switch between tests), every round is a single call and the median
# includes a perf_counter() call and the harness's loop (~120-170 ns here), making a ~100 ns
# call read 230-330 ns, or not, depending on the run. A short warmup lets calibration settle on
# rounds of many calls. The warmup obeys --benchmark-max-time, so bench-smoke stays short.
pytestmark = pytest.mark.benchmark(warmup=True, warmup_iterations=1000)


@pytest.fixture(scope="module")
def svc():
    engine = weighted.Engine.from_dict({"seed": 1}, clock="manual")
    s = engine.service("bench")
    s.set_endpoints(dict(zip(IDS, WEIGHTS)))
    yield s
    engine.close()


def test_baseline_random_choices(record):
    rng = random.Random(1)
    record(lambda: rng.choices(IDS, WEIGHTS)[0])


def test_pick(record, svc):
    record(svc.pick)


def test_pick_endpoint_id(record, svc):
    record(lambda: svc.pick().endpoint)


def test_pick_and_complete(record, svc):
    def one():
        p = svc.pick()
        svc.complete(p, 12.0, 0)
    record(one)


def test_report_by_key(record, svc):
    key = svc.key(IDS[3])
    record(svc.report, key, 12.0, 0)


def test_report_by_id(record, svc):
    record(svc.report, IDS[3], 12.0, 0)


def test_report_batch_per_entry(record, svc):
    keys = [svc.key(i) for i in IDS] * (BATCH // len(IDS))
    latencies = [12.0] * len(keys)
    record(svc.report_batch, keys, latencies, 0, per_call=len(keys))


def test_context_manager_call(record, svc):
    def one():
        with svc.call() as c:
            c.latency_ms = 12.0
    record(one)
