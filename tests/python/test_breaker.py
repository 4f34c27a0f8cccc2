"""S-P3: a circuit breaker and the engine share one data source (BreakerBridge.record) and
count every call exactly once each; a call an open breaker refuses is counted by neither."""
from __future__ import annotations

import math

import pytest

import weighted
from weighted.breaker import AllOpenError, BreakerBridge, BreakerState, CircuitBreaker


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def totals(engine, endpoint):
    for s in engine.snapshot()["services"]:
        for ep in s["endpoints"]:
            if ep["id"] == endpoint:
                return sum(ep["totals"].values()), ep
    raise AssertionError(endpoint)


@pytest.fixture
def setup():
    clock = FakeClock()
    e = weighted.Engine.from_dict({"seed": 11, "picker": {"mode": "weighted"}}, clock="manual")
    s = e.service("orders")
    s.set_endpoints({"a": 100, "b": 100, "c": 100})
    bridge = BreakerBridge(s, breaker_factory=lambda ep: CircuitBreaker(
        window=10, minimum_calls=5, failure_rate=0.5, open_seconds=30, half_open_calls=3,
        clock=clock))
    yield e, s, bridge, clock
    e.close()


def test_each_call_is_counted_once_by_the_engine_and_once_by_its_breaker(setup):
    engine, svc, bridge, clock = setup
    sent = {"a": 0, "b": 0, "c": 0}
    sent_to_b_while_open = 0
    for _ in range(300):
        b_open = bridge.breaker("b").state is BreakerState.OPEN
        with bridge.call() as call:
            sent[call.endpoint] += 1
            sent_to_b_while_open += b_open and call.endpoint == "b"
            call.latency_ms = 5.0
            if call.endpoint == "b":
                call.set_http_status(502)
    assert bridge.breaker("b").state is BreakerState.OPEN
    assert sent_to_b_while_open == 0, "an open breaker vetoes its endpoint at once"
    assert 5 <= sent["b"] <= 10 and bridge.vetoed > 0
    for ep, n in sent.items():
        engine_count, view = totals(engine, ep)
        assert engine_count == n, f"engine counted {ep} {engine_count} times, {n} calls were sent"
        assert bridge.breaker(ep).calls == n, f"breaker of {ep} counted {bridge.breaker(ep).calls}"
        assert view["inflight"] == 0, "vetoed picks were cancelled, sent ones completed"
    assert bridge.breaker("b").failures == sent["b"]
    assert totals(engine, "b")[1]["totals"]["http_5xx"] == sent["b"]


def test_half_open_trials_close_the_breaker_again(setup):
    engine, svc, bridge, clock = setup
    b = bridge.breaker("b")
    for _ in range(5):
        bridge.record("b", 5.0, "http_5xx")
    assert b.state is BreakerState.OPEN and not b.allow()
    clock.t = 29.9
    assert b.state is BreakerState.OPEN
    clock.t = 30.0
    assert b.state is BreakerState.HALF_OPEN
    assert [b.allow() for _ in range(4)] == [True, True, True, False], "three trial calls"
    for _ in range(3):
        bridge.record("b", 5.0, "success")
    assert b.state is BreakerState.CLOSED
    assert b.calls == 8 == totals(engine, "b")[0]


def test_failed_trials_reopen_the_breaker(setup):
    engine, svc, bridge, clock = setup
    b = bridge.breaker("a")
    for _ in range(5):
        bridge.record("a", 5.0, "timeout")
    clock.t = 31
    assert b.allow()
    bridge.record("a", 5.0, "timeout")
    bridge.record("a", 5.0, "timeout")
    bridge.record("a", 5.0, "success")
    assert b.state is BreakerState.OPEN


def test_an_outcome_the_engine_rejects_is_counted_by_nobody(setup):
    engine, svc, bridge, clock = setup
    before = engine.snapshot()
    p = bridge.pick()
    with pytest.raises(weighted.InvalidArgumentError, match="latency_ms"):
        bridge.record(p, math.nan, "success")
    with pytest.raises(ValueError, match="unknown outcome"):
        bridge.record(p, 1.0, "meh")
    assert bridge.breaker(p.endpoint).calls == 0
    bridge.release(p)
    after = engine.snapshot()
    assert after == before


def test_a_call_to_a_removed_endpoint_is_stale_in_the_engine_and_still_one_call(setup):
    engine, svc, bridge, clock = setup
    p = bridge.pick()
    svc.set_endpoints({x: 100 for x in "abc" if x != p.endpoint})
    assert bridge.record(p, 3.0, "success") is False
    assert engine.snapshot()["services"][0]["stale_reports"] == 1
    assert bridge.breaker(p.endpoint).calls == 1


def test_another_breaker_library_sees_exactly_what_the_engine_counts(setup):
    engine, svc, _, clock = setup
    seen = []
    bridge = BreakerBridge(svc, breaker_factory=None,
                           listeners=[lambda ep, ms, o: seen.append((ep, o))])
    for i in range(60):
        with bridge.call() as call:
            call.set_outcome("connect_error" if i % 4 == 0 else "success")
    assert bridge.breaker("a") is None
    assert len(seen) == 60
    for ep in "abc":
        assert totals(engine, ep)[0] == sum(1 for e, _ in seen if e == ep)
    assert sum(1 for _, o in seen if o is weighted.Outcome.CONNECT_ERROR) == 15


def test_every_breaker_open_is_an_error_and_leaves_nothing_in_flight(setup):
    engine, svc, bridge, clock = setup
    for ep in "abc":
        for _ in range(5):
            bridge.record(ep, 1.0, "http_5xx")
    with pytest.raises(AllOpenError, match="open circuit breaker") as info:
        bridge.pick()
    assert isinstance(info.value, weighted.NoEndpointError)
    for ep in "abc":
        assert totals(engine, ep)[1]["inflight"] == 0
        assert totals(engine, ep)[0] == 5


def test_an_exception_in_the_block_is_classified_once(setup):
    engine, svc, bridge, clock = setup
    with pytest.raises(TimeoutError):
        with bridge.call() as call:
            ep = call.endpoint
            raise TimeoutError()
    assert totals(engine, ep)[1]["totals"]["timeout"] == 1
    assert bridge.breaker(ep).failures == 1 and bridge.breaker(ep).calls == 1


def test_breaker_arguments_are_checked():
    with pytest.raises(ValueError, match="failure_rate"):
        CircuitBreaker(failure_rate=0)
    with pytest.raises(ValueError, match=">= 1"):
        CircuitBreaker(window=0)


def test_vetoed_tracked_picks_release_their_in_flight_count():
    with weighted.Engine.from_dict({"seed": 2, "picker": {"mode": "load_aware"}},
                                   clock="manual") as engine:
        svc = engine.service("s")
        svc.set_endpoints({"a": 1, "b": 1})
        bridge = BreakerBridge(svc)
        for ep in "ab":
            for _ in range(10):
                bridge.record(ep, 1.0, "http_5xx")
        with pytest.raises(AllOpenError):
            bridge.pick()
        assert bridge.vetoed == bridge.max_repicks + 1
        for ep in "ab":
            view = totals(engine, ep)[1]
            assert view["inflight"] == 0 and sum(view["totals"].values()) == 10


def test_breakers_of_endpoints_that_left_are_dropped_and_those_that_stay_keep_their_state(setup):
    _, s, bridge, _ = setup
    for _ in range(6):
        bridge.record("a", 5.0, weighted.Outcome.HTTP_5XX)
    assert bridge.breaker("a").state is BreakerState.OPEN
    # A deploy a round: every instance but "a" comes back under a new address.
    for round_ in range(200):
        s.set_endpoints(["a"] + [f"10.0.{round_}.{i}:80" for i in range(3)])
        for i in range(3):
            bridge.record(f"10.0.{round_}.{i}:80", 5.0)
        assert len(bridge._breakers) <= 2 * 4 + 16
    assert bridge.breaker("a").state is BreakerState.OPEN  # the same breaker, still open
    assert set(bridge._breakers) >= {"a", "10.0.199.0:80", "10.0.199.1:80", "10.0.199.2:80"}
