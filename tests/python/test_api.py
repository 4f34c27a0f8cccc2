"""API behaviour of the Python SDK on the manual clock."""
from __future__ import annotations

import asyncio
import collections

import http

import pytest

import weighted
from helpers import endpoint_view, feed_healthy, make_sick


def test_package_and_library_versions_agree():
    assert weighted.__version__ == weighted.library_version()
    assert weighted._weighted.BUILT_VERSION == weighted._weighted.version_number()


@pytest.mark.parametrize("built,loaded,ok", [
    (10000, 10000, True), (10000, 10203, True), (10200, 10100, False), (10000, 20000, False),
    (20000, 10000, False), (20000, 20000, True), (20000, 20100, True), (20100, 20000, False),
    (20000, 30000, False)])
def test_version_check_refuses_a_mismatched_library(built, loaded, ok):
    if ok:
        weighted._check_version(built, loaded)
    else:
        with pytest.raises(ImportError, match="reinstall"):
            weighted._check_version(built, loaded)


def test_pick_names_its_endpoint(svc):
    for _ in range(200):
        p = svc.pick()
        assert p.endpoint in ("a", "b", "c")
        assert p.endpoint == svc.endpoint_id(p.key)
        assert svc.key(p.endpoint) == p.key
        assert p.index == ["a", "b", "c"].index(p.endpoint)
        assert p.epoch == 1 and not p.probe and not p.panic


def test_pick_frequencies_follow_weights(engine):
    svc = engine.service("weights")
    weights = {"a": 1.0, "b": 2.0, "c": 7.0}
    svc.set_endpoints(weights)
    n = 30000
    counts = collections.Counter(svc.pick().endpoint for _ in range(n))
    total = sum(weights.values())
    chi2 = sum((counts[k] - n * w / total) ** 2 / (n * w / total) for k, w in weights.items())
    assert chi2 < 13.8, (counts, chi2)  # df = 2, p = 0.001


def test_set_endpoints_accepts_dicts_pairs_and_ids(engine):
    svc = engine.service("forms")
    svc.set_endpoints([("x", 3), ("y", 5.5)])
    assert endpoint_view(engine, "forms", "y")["base_weight"] == 5.5
    svc.set_endpoints(["x", "z"])
    assert endpoint_view(engine, "forms", "x")["base_weight"] == 1.0
    svc.set_endpoints({"z": 2})
    assert [e["id"] for e in engine.snapshot()["services"][0]["endpoints"]] == ["z"]
    with pytest.raises(TypeError):
        svc.set_endpoints("xyz")


def test_endpoint_update_keeps_state_and_renames_picks(engine, svc):
    feed_healthy(svc, ids=("a",), n=7)
    svc.set_endpoints({"d": 100, "a": 50})
    a = endpoint_view(engine, "orders", "a")
    assert a["totals"]["success"] == 7 and a["base_weight"] == 50
    seen = {svc.pick().endpoint for _ in range(300)}
    assert seen <= {"a", "d"} and "a" in seen
    p = svc.pick()
    assert p.epoch == 2 and p.endpoint == ["d", "a"][p.index]


def test_complete_report_and_batch_are_counted(engine, svc):
    p = svc.pick()
    svc.complete(p, 12.5, "success")
    svc.report("b", 30.0, weighted.Outcome.TIMEOUT)
    svc.report(svc.key("c"), 5.0, 3)
    svc.report_http("c", 5.0, 503)
    svc.report_http("c", 5.0, 404)
    recorded = svc.report_batch(["a", svc.key("b"), svc.pick()], [1.0, 2.0, 3.0],
                                ["business_error", "success", weighted.Outcome.SUCCESS])
    assert recorded == 3
    assert svc.report_batch(["a"] * 10, [4.0] * 10) == 10  # one outcome for all: success
    totals = {ep: endpoint_view(engine, "orders", ep)["totals"] for ep in "abc"}
    # complete, the 404, two in the first batch, ten in the second
    assert sum(t["success"] for t in totals.values()) == 1 + 1 + 2 + 10
    assert totals["b"]["timeout"] == 1
    assert totals["c"]["connect_error"] == 1 and totals["c"]["http_5xx"] == 1
    assert totals["a"]["business_error"] == 1


def test_report_resources_reach_the_window(engine, svc):
    svc.report_resources("b", cpu=0.4, memory=0.5, thread_pool=0.25, connection_pool=1.0)
    engine.advance(5)  # window statistics are published by the controller cycle
    res = endpoint_view(engine, "orders", "b")["window"]["resources"]
    assert res == {"cpu": 0.4, "memory": 0.5, "thread_pool": 0.25, "connection_pool": 1.0}
    svc.report_resources("b", cpu=0.6)
    engine.advance(5)
    res = endpoint_view(engine, "orders", "b")["window"]["resources"]
    assert res["cpu"] == pytest.approx(0.5) and res["memory"] == 0.5


def test_bad_endpoint_is_isolated_with_reasons_in_snapshot_and_events(engine, svc):
    seen = []
    engine.on_event(seen.append)
    feed_healthy(svc, ids=("b", "c"))
    make_sick(svc, "a")
    engine.advance(5)
    a = endpoint_view(engine, "orders", "a")
    # The error rule is graded: failing half its requests weighs its full penalty, 1.
    assert a["state"] == "isolated" and a["penalty"] == pytest.approx(1.5)
    contributions = {r["metric"]: r["contribution"] for r in a["rules"]}
    assert contributions == pytest.approx(
        {"latency_p99": 0.3, "error_rate": 1.0, "cpu": 0.2, "server_latency": 0.0})  # no server reports
    assert endpoint_view(engine, "orders", "b")["state"] == "healthy"

    isolated = [e for e in seen if e.type == weighted.EventType.ISOLATED]
    assert len(isolated) == 1
    ev = isolated[0]
    assert (ev.service, ev.endpoint, ev.time) == ("orders", "a", 5.0)
    assert ev.old_weight == 100 and ev.new_weight == 0
    assert {r["metric"] for r in ev.reason["rules"]} == {"latency_p99", "error_rate", "cpu"}
    # The queue holds the same events (and the earlier endpoint_added ones, from before the
    # subscription), independently of the callback.
    queued = list(engine.events())
    assert queued[-len(seen):] == seen
    assert [e.type for e in queued[:3]] == [weighted.EventType.ENDPOINT_ADDED] * 3
    assert list(engine.events()) == []  # drained
    # Most picks avoid the isolated endpoint; it still gets probes.
    counts = collections.Counter(svc.pick().endpoint for _ in range(3000))
    assert counts["a"] < counts["b"] / 5


def test_callback_errors_are_raised_by_advance_and_unsubscribe_works(engine, svc):
    def boom(event):
        raise RuntimeError("listener failed")
    unsubscribe = engine.on_event(boom)
    make_sick(svc, "a")
    feed_healthy(svc, ids=("b", "c"))
    with pytest.raises(RuntimeError, match="listener failed"):
        engine.advance(5)
    unsubscribe()
    engine.advance(5)  # no listener left: no error


def test_context_manager_reports_latency_and_outcome(engine, svc):
    with svc.call() as call:
        assert call.endpoint in ("a", "b", "c")
        call.latency_ms = 42.0
    first = call.pick.endpoint
    assert endpoint_view(engine, "orders", first)["totals"]["success"] == 1

    with pytest.raises(TimeoutError):
        with svc.call() as call:
            raise TimeoutError("slow")
    assert endpoint_view(engine, "orders", call.endpoint)["totals"]["timeout"] == 1

    with svc.call() as call:
        call.set_http_status(502)
    assert endpoint_view(engine, "orders", call.endpoint)["totals"]["http_5xx"] >= 1


class _HttpError(Exception):
    def __init__(self, status_code):
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code


class _Response:
    status = 503


class _WrappedError(Exception):
    response = _Response()


@pytest.mark.parametrize("exc,outcome", [
    (TimeoutError(), weighted.Outcome.TIMEOUT),
    (ConnectionRefusedError(), weighted.Outcome.CONNECT_ERROR),
    (ConnectionResetError(), weighted.Outcome.CONNECT_ERROR),
    (_HttpError(503), weighted.Outcome.HTTP_5XX),
    (_HttpError(404), weighted.Outcome.SUCCESS),
    (_WrappedError(), weighted.Outcome.HTTP_5XX),
    (KeyError("x"), weighted.Outcome.HTTP_5XX),
])
def test_exceptions_are_classified(exc, outcome):
    assert weighted.classify_exception(exc) == outcome


def test_cancel_and_interrupts_report_nothing(engine, svc):
    with svc.call() as call:
        call.cancel()
    with pytest.raises(KeyboardInterrupt):
        with svc.call():
            raise KeyboardInterrupt
    totals = [endpoint_view(engine, "orders", e)["totals"] for e in "abc"]
    assert sum(sum(t.values()) for t in totals) == 0


def test_custom_classifier(engine, svc):
    with pytest.raises(ValueError):
        with svc.call(classify=lambda e: "business_error") as call:
            raise ValueError("bad payload")
    assert endpoint_view(engine, "orders", call.endpoint)["totals"]["business_error"] == 1


def test_decorator_tracks_sync_and_async_calls(engine, svc):
    calls = []

    @svc.tracked
    def fetch(endpoint, path):
        calls.append((endpoint, path))
        return f"{endpoint}{path}"

    result = fetch("/x")
    assert result == calls[0][0] + "/x"

    @svc.tracked(classify=lambda e: weighted.Outcome.CONNECT_ERROR)
    async def afetch(endpoint):
        raise OSError("unreachable")

    with pytest.raises(OSError):
        asyncio.run(afetch())
    totals = [endpoint_view(engine, "orders", e)["totals"] for e in "abc"]
    assert sum(t["success"] for t in totals) == 1
    assert sum(t["connect_error"] for t in totals) == 1
    assert fetch.__name__ == "fetch"


def test_snapshot_is_plain_data_and_prometheus_has_the_same_numbers(engine, svc):
    snap = engine.snapshot()
    assert isinstance(snap, dict) and snap["clock"] == "manual"
    assert snap["services"][0]["name"] == "orders"
    text = engine.prometheus()
    assert '# TYPE weighted_endpoint_weight gauge' in text
    assert 'weighted_endpoint_weight{service="orders",endpoint="a"} 100' in text


def test_the_snapshot_publishes_the_expected_share_beside_the_weight():
    # The weighted picker: the model expects exactly the weights' split; the load-aware one
    # expects a failing endpoint to get little although its weight is still its base.
    with weighted.Engine.from_dict({"seed": 4, "picker": {"mode": "weighted"}},
                                   clock="manual") as e:
        s = e.service("orders")
        s.set_endpoints([("a", 3.0), ("b", 1.0)])
        eps = {x["id"]: x for x in e.snapshot()["services"][0]["endpoints"]}
        assert eps["a"]["share"]["expected"] == 0.75 and eps["b"]["share"]["expected"] == 0.25
        assert eps["a"]["effective_weight"] == 3.0
        assert 'weighted_endpoint_expected_share{service="orders",endpoint="a"} 0.75' in e.prometheus()
    with weighted.Engine.from_dict({"seed": 4, "slow_start": {"window_ms": 0}},
                                   clock="manual") as e:
        s = e.service("orders")
        s.set_endpoints([("ok", 1.0), ("bad", 1.0)])
        def one_cycle():  # 200 requests a second; the cycle at the 5-s mark ends it
            for _ in range(1000):
                p = s.pick()
                s.complete(p, 2.0, weighted.Outcome.HTTP_5XX if p.endpoint == "bad"
                           else weighted.Outcome.SUCCESS)
                e.advance(0.005)
        one_cycle()
        expected = s.endpoint_snapshot("bad")["share"]["expected"]
        assert 0 < expected < 0.05
        one_cycle()  # and the next cycle bears it out
        assert s.endpoint_snapshot("bad")["share"]["last_cycle"] == pytest.approx(expected, abs=0.03)


def test_manual_clock_moves_only_when_advanced(engine):
    assert engine.now() == 0 and engine.clock == "manual"
    engine.advance(2.5)
    assert engine.now_ns() == 2_500_000_000
    engine.advance(0)
    assert engine.now() == 2.5


def test_real_clock_engine_runs_cycles_on_request():
    with weighted.Engine(clock="real") as e:
        assert e.clock == "real"
        s = e.service("s")
        s.set_endpoints(["x"])
        assert s.pick().endpoint == "x"
        e.run_cycle()
        assert e.now_ns() > 0
    assert e.closed


def test_reload_changes_config_and_keeps_state(engine, svc):
    feed_healthy(svc, ids=("a",), n=3)
    engine.reload({"profile": "article"})
    assert engine.snapshot()["profile"] == "article"
    assert endpoint_view(engine, "orders", "a")["totals"]["success"] == 3
    reloaded = [e for e in engine.events() if e.type == weighted.EventType.CONFIG_RELOADED]
    assert len(reloaded) == 1


def test_service_objects_are_shared_by_name(engine):
    assert engine.service("x") is engine.service("x")
    assert engine.service("x") is not engine.service("y")


def test_outcome_from_http_status():
    assert weighted.Outcome.from_http_status(500) == weighted.Outcome.HTTP_5XX
    assert weighted.Outcome.from_http_status(599) == weighted.Outcome.HTTP_5XX
    assert weighted.Outcome.from_http_status(429) == weighted.Outcome.SUCCESS
    assert weighted.Outcome.from_http_status(200) == weighted.Outcome.SUCCESS
    assert weighted.Outcome.from_http_status(http.HTTPStatus.BAD_GATEWAY) == weighted.Outcome.HTTP_5XX


@pytest.mark.parametrize("status", ["500", 500.0, True, None])
def test_http_status_of_another_type_is_refused_and_records_nothing(engine, svc, status):
    # int() took each of these, and the core maps any non-5xx number to success.
    with pytest.raises(TypeError, match="http_status must be an int"):
        svc.report_http("a", 5.0, status)
    with pytest.raises(TypeError, match="http_status must be an int"):
        weighted.Outcome.from_http_status(status)
    with svc.call() as call:
        with pytest.raises(TypeError, match="http_status must be an int"):
            call.set_http_status(status)
    # Only the call itself was recorded (a success: its status was refused, not set).
    totals = [endpoint_view(engine, "orders", ep)["totals"] for ep in "abc"]
    assert sum(sum(t.values()) for t in totals) == 1
    assert sum(t["success"] for t in totals) == 1


@pytest.mark.parametrize("status", [0, 99, 600, 1 << 70, -500])
def test_http_status_out_of_range_is_refused(engine, svc, status):
    with pytest.raises(weighted.InvalidArgumentError, match=r"in 100\.\.599, got"):
        svc.report_http("a", 5.0, status)
    assert endpoint_view(engine, "orders", "a")["totals"]["success"] == 0


def test_pick_objects_are_plain_values(engine, svc):
    p = svc.pick()
    assert repr(p).startswith(f"Pick(endpoint={p.endpoint!r}, index={p.index}, epoch=1")
    assert isinstance(p, weighted.Pick)
    with pytest.raises(TypeError):
        weighted.Pick()
    with pytest.raises(AttributeError):
        p.endpoint = "x"
    with pytest.raises(TypeError, match="expected a weighted.Pick"):
        svc.complete("a", 1.0)
    with pytest.raises(TypeError, match="expected a weighted.Pick"):
        svc.cancel(None)
    engine.close()
    assert p.endpoint in ("a", "b", "c") and p.key > 0  # a value: outlives its engine


README_EXAMPLE = '''
import weighted

engine = weighted.Engine.from_file("examples/config/default.json")
orders = engine.service("orders")
orders.set_endpoints({"10.0.0.7:8080": 100, "10.0.0.8:8080": 100, "10.0.0.9:8080": 50})

with orders.call() as call:                # picks an endpoint, times the block, reports the outcome
    status = send_request(call.endpoint)   # your HTTP client
    call.set_http_status(status)           # a 5xx counts against the endpoint, a 4xx does not
print(engine.snapshot()["services"][0]["endpoints"][0]["weight"])
'''


def test_readme_example_runs(monkeypatch, capsys):
    from pathlib import Path
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    sent = []
    namespace = {"send_request": lambda endpoint: sent.append(endpoint) or 503}
    exec(compile(README_EXAMPLE, "README", "exec"), namespace)
    namespace["engine"].close()
    assert len(sent) == 1 and float(capsys.readouterr().out) == 100.0
    assert len([line for line in README_EXAMPLE.strip().splitlines()]) <= 11


def test_a_service_or_an_endpoint_snapshot_is_its_entry_of_the_whole(engine, svc):
    other = engine.service("other")
    other.set_endpoints({"x": 1})
    for _ in range(30):
        with svc.call() as call:
            call.set_http_status(503 if call.endpoint == "b" else 200)
    engine.run_cycle()
    whole = engine.snapshot()
    entry = next(s for s in whole["services"] if s["name"] == svc.name)
    assert svc.snapshot() == entry
    for i, ep in enumerate(entry["endpoints"]):
        assert svc.endpoint_snapshot(ep["id"]) == ep
        assert ep["index"] == i
    with pytest.raises(weighted.NotFoundError, match='no endpoint "zz" in service'):
        svc.endpoint_snapshot("zz")
