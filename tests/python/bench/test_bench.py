"""pytest-benchmark: pick, report and batch report from Python, each against the pure-Python code
a script would write instead (a weighted pick with random.choices or nginx's smooth weighted
round-robin; a per-endpoint outcome count and latency sum), measured in the same run. Run with
`make bench-python`; timings are printed as ratios, never asserted."""
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


class Swrr:
    """nginx's smooth weighted round-robin, in pure Python."""

    def __init__(self, ids, weights):
        self.ids, self.weights = ids, weights
        self.current = [0.0] * len(ids)
        self.total = sum(weights)

    def pick(self):
        current, weights = self.current, self.weights
        best = 0
        for i in range(len(current)):
            current[i] += weights[i]
            if current[i] > current[best]:
                best = i
        current[best] -= self.total
        return self.ids[best]


class Recorder:
    """What a script keeps per endpoint without the engine: a count per outcome, a latency sum."""

    def __init__(self, ids):
        self.counts = {i: [0] * 6 for i in ids}
        self.latency_ms = dict.fromkeys(ids, 0.0)

    def report(self, endpoint, latency_ms, outcome):
        self.counts[endpoint][outcome] += 1
        self.latency_ms[endpoint] += latency_ms

    def report_batch(self, endpoints, latencies, outcome):
        for endpoint, latency_ms in zip(endpoints, latencies):
            self.report(endpoint, latency_ms, outcome)


def test_baseline_random_choices(record):
    rng = random.Random(1)
    record(lambda: rng.choices(IDS, WEIGHTS)[0], baseline=None)


def test_baseline_swrr_pick(record):
    record(Swrr(IDS, WEIGHTS).pick)


def test_baseline_report(record):
    record(Recorder(IDS).report, IDS[3], 12.0, 0, baseline=None)


def test_baseline_report_batch_per_entry(record):
    ids = IDS * (BATCH // len(IDS))
    record(Recorder(IDS).report_batch, ids, [12.0] * len(ids), 0, per_call=len(ids),
           baseline=None)


def test_baseline_pick_and_report(record):
    swrr, recorder = Swrr(IDS, WEIGHTS), Recorder(IDS)

    def one():
        recorder.report(swrr.pick(), 12.0, 0)
    record(one, baseline=None)


def test_pick(record, svc):
    record(svc.pick)


def test_pick_endpoint_id(record, svc):
    record(lambda: svc.pick().endpoint)


def test_pick_and_complete(record, svc):
    def one():
        p = svc.pick()
        svc.complete(p, 12.0, 0)
    record(one, baseline="test_baseline_pick_and_report")


def test_report_by_key(record, svc):
    key = svc.key(IDS[3])
    record(svc.report, key, 12.0, 0, baseline="test_baseline_report")


def test_report_by_id(record, svc):
    record(svc.report, IDS[3], 12.0, 0, baseline="test_baseline_report")


def test_report_batch_per_entry(record, svc):
    keys = [svc.key(i) for i in IDS] * (BATCH // len(IDS))
    latencies = [12.0] * len(keys)
    record(svc.report_batch, keys, latencies, 0, per_call=len(keys),
           baseline="test_baseline_report_batch_per_entry")


def test_context_manager_call(record, svc):
    def one():
        with svc.call() as c:
            c.latency_ms = 12.0
    record(one, baseline="test_baseline_pick_and_report")
