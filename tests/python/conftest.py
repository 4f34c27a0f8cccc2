"""Shared fixtures: engines on the manual clock (every time-dependent test drives time itself).
Helpers live in helpers.py. The benchmarks in bench/ run only with `make bench-python`."""
from __future__ import annotations

import os

import pytest

import weighted
from helpers import ENDPOINTS

# pytest-benchmark timings are not tests: `make bench-python` sets WT_BENCH=1 to collect them.
collect_ignore = [] if os.environ.get("WT_BENCH") else ["bench"]


@pytest.fixture
def engine():
    e = weighted.Engine.from_dict({"seed": 42}, clock="manual")
    yield e
    e.close()


@pytest.fixture
def svc(engine):
    s = engine.service("orders")
    s.set_endpoints(ENDPOINTS)
    return s
