"""Bad input that test_errors.py (the binding's own table) does not cover: the limits and fixes of
the bad-input and fuzzing review (docs/reliability.md, "Bad input"), contradictory settings,
misplaced keys, and what Python refuses before the core sees it.
Each case raises one exception with the core's message (or Python's own, for values that cannot
cross into C) and leaves the engine's state exactly as it was. docs/reliability.md lists the
C, Java and Python tables together."""
from __future__ import annotations

import json

import pytest

import weighted


@pytest.fixture
def live():
    e = weighted.Engine.from_dict({"seed": 5, "picker": {"mode": "weighted"},
                                   "limits": {"max_services": 2, "max_latency_ms": 60000}},
                                  clock="manual")
    s = e.service("orders")
    s.set_endpoints({"a": 100, "b": 100})
    e.service("empty")
    for i in range(60):
        p = s.pick()
        s.complete(p, 10.0 + i % 7, "success")
    e.advance(6)
    list(e.events())
    yield e, s
    e.close()


def _rules(n):
    return {"rules": [{"metric": "cpu", "threshold": 0.8, "penalty": 0.1}] * n}


# (name, call(engine, service), exception class, regex on the message)
CASES = [
    ("limit below the 16 KiB floor", lambda e, s: e.reload({"limits": {"max_config_bytes": 100}}),
     weighted.ConfigInvalidError, r"/limits/max_config_bytes: must be an integer in \[16384, 1048576\]"),
    ("document larger than its own limit",
     lambda e, s: e.reload('{"limits": {"max_config_bytes": 16384}, "$schema": "' + "x" * 16400 + '"}'),
     weighted.LimitError, r"this document is \d+ bytes, more than the 16384"),
    ("duplicate key", lambda e, s: e.reload('{"seed": 1, "seed": 2}'),
     weighted.ConfigInvalidError, r"/seed: duplicate key"),
    ("key at the wrong level", lambda e, s: e.reload({"cooldown_ms": 5000}),
     weighted.ConfigInvalidError, r'"cooldown_ms" belongs in /controller'),
    ("window shorter than the cycle", lambda e, s: e.reload({"window": {"length_ms": 4000}}),
     weighted.ConfigInvalidError, r"window\.length_ms \(4000\) is shorter than controller\.interval_ms"),
    ("no way out of isolation",
     lambda e, s: e.reload({"isolation": {"probe_share": 0, "probe_min_per_s": 0.1,
                                          "exit_min_probes": 3}}),
     weighted.ConfigInvalidError, r"could never leave isolation"),
    ("latency threshold above the latency limit",
     lambda e, s: e.reload({"rules": [{"metric": "latency_p99", "threshold_ms": 70000,
                                       "penalty": 0.3}], "limits": {"max_latency_ms": 60000}}),
     weighted.ConfigInvalidError, r"/rules/0/threshold_ms: .* is above limits\.max_latency_ms"),
    ("65 rules", lambda e, s: e.reload(_rules(65)),
     weighted.ConfigInvalidError, r"/rules: at most 64 rules are allowed, got 65"),
    ("integer with a fraction", lambda e, s: e.reload({"window": {"min_requests": 1.5}}),
     weighted.ConfigInvalidError, r"/window/min_requests: must be an integer, got 1\.5"),
    ("reload below the service count", lambda e, s: e.reload({"limits": {"max_services": 1}}),
     weighted.LimitError, r"the engine has 2 services, more than the new limits\.max_services = 1"),
    ("config bytes that are not UTF-8", lambda e, s: e.reload(b'{"$schema": "\xff"}'),
     weighted.ConfigParseError, r"line 1, column 14: .*ill-formed UTF-8 byte; last read: '\"\\xff'"),
    ("enormous endpoint count", lambda e, s: s.set_endpoints([f"e{i}" for i in range(65537)]),
     weighted.LimitError, r"65537 endpoints exceed limits\.max_endpoints_per_service = 65536"),
    ("endpoint id with a lone surrogate", lambda e, s: s.set_endpoints({"a\udcff": 1}),
     TypeError, r"set_endpoints"),
    ("service name with a lone surrogate", lambda e, s: e.service("caf\udcff"),
     TypeError, r"Service"),
    ("weight that is not a number", lambda e, s: s.set_endpoints({"a": "heavy"}),
     ValueError, r'endpoints\[0\] \("a"\): base_weight must be a number \(int or float\), not the '
                 r"str 'heavy'"),
    ("advance past the end of the manual clock", lambda e, s: e.advance(5e9),
     weighted.InvalidArgumentError, r"past its end"),
    ("latency above the configured limit", lambda e, s: s.report("a", 60000.5),
     weighted.InvalidArgumentError, r"in \[0, 60000\] \(limits\.max_latency_ms\)"),
    ("resources for an unknown endpoint", lambda e, s: s.report_resources("zz", cpu=0.2),
     weighted.NotFoundError, r'no endpoint "zz" in service "orders"'),
    ("reload from an endless file", lambda e, s: e.reload_from_file("/dev/zero"),
     weighted.LimitError, r"more than limits\.max_config_bytes"),
]


@pytest.mark.parametrize("name,call,cls,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_refused_and_changes_nothing(live, name, call, cls, message):
    engine, svc = live
    before = engine.snapshot()
    with pytest.raises(cls, match=message):
        call(engine, svc)
    assert engine.snapshot() == before
    assert list(engine.events()) == []


def test_a_report_on_a_forged_key_is_stale_and_counted(live):
    engine, svc = live
    before = engine.snapshot()
    with pytest.raises(weighted.StaleEndpointError, match="is not in service"):
        svc.report(0x7777_0000_0001, 1.0)
    after = engine.snapshot()
    i = [x["name"] for x in after["services"]].index("orders")
    assert after["services"][i]["stale_reports"] == before["services"][i]["stale_reports"] + 1
    after["services"][i]["stale_reports"] = before["services"][i]["stale_reports"]
    assert after == before


def test_the_resolved_form_of_any_accepted_config_is_accepted_again():
    # The fuzz_config property (resolve(resolve(x)) == resolve(x)) from Python, on the case that
    # found the bug: a small max_config_bytes.
    doc = {"limits": {"max_config_bytes": 16384}, **_rules(64)}
    resolved = weighted.resolve_config(doc)
    assert weighted.resolve_config(json.dumps(resolved)) == resolved
