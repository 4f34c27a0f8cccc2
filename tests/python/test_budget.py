"""The error budget (config ``budget``) as Python sees it: the snapshot's ``budget``, the two
events, precise config errors, and the dashboard's view and page."""
from __future__ import annotations

import pytest

import weighted
from weighted import dashboard


def _drive(svc, cycles, engine, fail_every=10, n=400):
    """n reports per cycle on a and b, one in ``fail_every`` failing, then one cycle."""
    for _ in range(cycles):
        for i in range(n):
            outcome = weighted.Outcome.HTTP_5XX if i % fail_every == 0 else weighted.Outcome.SUCCESS
            svc.report("a" if i % 2 else "b", 5.0, outcome)
        engine.advance(5)


def _budget_engine(**budget):
    return weighted.Engine.from_dict({"seed": 9, "budget": {"max_error_rate": 0.01, **budget}},
                                     clock="manual")


def test_the_snapshot_says_what_the_budget_is_and_whether_it_holds():
    with _budget_engine() as engine:
        svc = engine.service("orders")
        svc.set_endpoints({"a": 1, "b": 1})
        b = engine.snapshot()["services"][0]["budget"]
        assert (b["max_error_rate"], b["met"], b["limited"], b["window_ms"]) == (0.01, True, False, 5000)
        assert b["error_cost"] == 500.0  # picker.error_cost, before any evidence
        _drive(svc, 1, engine)
        b = engine.snapshot()["services"][0]["budget"]
        assert b["observed_error_rate"] == pytest.approx(0.1)
        assert (b["window_results"], b["window_failures"]) == (400, 40)
        assert not b["met"]
        assert b["error_cost"] > 500.0  # over the budget: failures cost more


def test_missed_and_met_are_events_with_their_numbers():
    with _budget_engine() as engine:
        svc = engine.service("orders")
        svc.set_endpoints({"a": 1, "b": 1})
        _drive(svc, 1, engine)
        _drive(svc, 1, engine, fail_every=1000)
        types = [e for e in engine.events() if e.type in (weighted.EventType.BUDGET_MISSED,
                                                           weighted.EventType.BUDGET_MET)]
        assert [e.type for e in types] == [weighted.EventType.BUDGET_MISSED,
                                           weighted.EventType.BUDGET_MET]
        assert types[0].name == "budget_missed" and types[0].endpoint == ""
        reason = types[0].reason
        assert reason["observed_error_rate"] == pytest.approx(0.1)
        assert reason["max_error_rate"] == 0.01 and reason["limited"] is False


def test_off_by_default_and_bad_values_name_their_key():
    with weighted.Engine.from_dict({"seed": 1}, clock="manual") as engine:
        engine.service("orders").set_endpoints({"a": 1})
        assert engine.snapshot()["services"][0]["budget"] is None
    with pytest.raises(weighted.ConfigError, match="/budget/max_error_rate"):
        weighted.Engine.from_dict({"budget": {"max_error_rate": 1.5}}, clock="manual")
    with pytest.raises(weighted.ConfigError, match="min_error_cost.*above budget.max_error_cost"):
        weighted.Engine.from_dict({"budget": {"min_error_cost": 10, "max_error_cost": 5}},
                                  clock="manual")


def test_dashboard_view_carries_the_budget():
    with _budget_engine() as engine:
        svc = engine.service("orders")
        svc.set_endpoints({"a": 1, "b": 1})
        _drive(svc, 1, engine)
        source = dashboard.LiveSource(engine)
        source.sample()
        b = source.view({})["services"][0]["budget"]
        assert b["max_error_rate"] == 0.01 and b["met"] is False
        assert b["observed_error_rate"] == pytest.approx(0.1)
        source.close()
