"""The console attached to engines elsewhere: a state file written by another process, a
directory of them, an HTTP endpoint serving the actuator's JSON; and the page in headless
Chromium showing another process's endpoints, shares and events (screenshot kept in build/)."""
from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.parse
import urllib.request

import pytest

import weighted
from weighted import dashboard
from weighted.dashboard._model import services_view
from test_attach import Writer
from test_dashboard import _row, _texts, _wait, browser  # noqa: F401  (the fixture)

ARTIFACTS = os.path.join(os.path.dirname(__file__), "..", "..", "build", "test-artifacts")


def get_json(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


@pytest.fixture
def writer(tmp_path):
    w = Writer(tmp_path / "orders.state")
    yield w
    w.stop()


def test_a_late_viewer_gets_the_whole_timeline_from_the_file(writer):
    for _ in range(4):
        writer.send("cycle")
    source = dashboard.FileSource(writer.path)  # attaches after four cycles
    try:
        view = source.view({})
        assert view["mode"] == "attach" and "orders-service" in view["title"]
        assert view["writer"]["pid"] == writer.pid and view["writer"]["state"] == "running"
        eps = {e["id"]: e for e in view["services"][0]["endpoints"]}
        assert eps["a"]["state"] == "isolated" and eps["a"]["weight"] == 0
        # The engine's expected share: the isolated endpoint its probes', the others the rest.
        assert 0 < eps["a"]["share"] < 0.05
        assert eps["b"]["share"] + eps["c"]["share"] == pytest.approx(1 - eps["a"]["share"])
        assert {e["share_source"] for e in eps.values()} == {"engine"}
        # The engine's main contributors: the fired rules and the picker's failure share.
        assert {r["name"] for r in eps["a"]["reasons"]} == {"latency_p99", "error_rate", "cpu",
                                                            "failure_share"}
        tl = view["timeline"]
        assert tl["t"] == [5.0, 10.0, 15.0, 20.0]
        assert tl["series"]["orders/a"] == [0, 0, 0, 0]
        assert len(tl["share"]["orders/b"]) == 4
        assert all(0.3 < v < 0.7 for v in tl["share"]["orders/b"])
        assert [e["type"] for e in view["events"]][:3] == ["endpoint_added"] * 3
        assert "isolated" in [e["type"] for e in view["events"]]
        writer.send("cycle")
        view = source.view({})
        assert view["timeline"]["t"][-1] == 25.0 and len(view["timeline"]["t"]) == 5
        # Events are not repeated across polls (the cursor moved).
        adds = [e for e in view["events"] if e["type"] == "endpoint_added"]
        assert len(adds) == 3
    finally:
        source.close()


def test_fields_of_a_newer_engine_are_shown_when_present():
    # The shape a newer engine's snapshot gives: share per endpoint and its reasons.
    snap = {"services": [{"name": "s", "panic": False, "endpoints": [
        {"id": "x", "state": "failing", "weight": 10, "effective_weight": 10, "rules": [],
         "window": {"requests": 5},
         "share": {"expected": 0.25, "last_cycle": {"expected": 0.3, "measured": 0.2}},
         "reasons": [{"kind": "guard", "name": "max_step", "value": 0.5, "threshold": 0.1,
                      "effect": "capped"}]},
        {"id": "y", "state": "healthy", "weight": 30, "rules": [], "window": {"requests": 15},
         "share": {"expected": 0.75}}]},
        # As the engine writes it today: the last cycle's measured share, a number.
        {"name": "t", "endpoints": [
            {"id": "z", "state": "healthy", "weight": 1, "rules": [], "window": {"requests": 3},
             "share": {"last_cycle": 0.4, "results": 3}}]}]}
    (x, y), (z,) = [s["endpoints"] for s in services_view(snap)]
    assert (z["share"], z["measured_share"], z["share_source"]) == (1.0, 0.4, "derived")
    assert (x["state"], x["share"], x["measured_share"], x["share_source"]) == (
        "failing", 0.25, 0.2, "engine")
    assert x["reasons"] == snap["services"][0]["endpoints"][0]["reasons"]
    assert (y["share"], y["measured_share"], y["reasons"]) == (0.75, None, [])


def test_a_directory_lists_its_state_files_and_serves_the_one_picked(tmp_path):
    (tmp_path / "readme.txt").write_text("not a state file")
    first = Writer(tmp_path / "first.state", "first-service")
    second = Writer(tmp_path / "second.state", "second-service")
    try:
        first.send("cycle")
        second.send("healthy")
        with dashboard.attach(str(tmp_path), port=0) as d:
            base = f"http://127.0.0.1:{d.port}"
            code, body = get_json(base + "/api/files")
            assert code == 200
            assert sorted(f["name"] for f in body["files"]) == ["first.state", "second.state"]
            code, view = get_json(base + "/api/state?file=first.state")
            assert code == 200 and view["file"] == "first.state"
            assert view["writer"]["service"] == "first-service"
            code, view = get_json(base + "/api/state?file=second.state")
            assert view["writer"]["service"] == "second-service"
            states = {e["id"]: e["state"] for e in view["services"][0]["endpoints"]}
            assert set(states.values()) == {"healthy"}
            for bad in ("../first.state", "readme.txt", "nope.state", "", "sub/x"):
                code, body = get_json(base + "/api/state?file=" + urllib.parse.quote(bad))
                if bad == "":
                    assert code == 200  # the newest file
                else:
                    assert code == 400 and body["error"], bad
    finally:
        first.stop()
        second.stop()


def test_a_killed_writer_is_shown_as_gone_with_its_last_state(writer):
    writer.send("cycle")
    with dashboard.attach(writer.path, port=0) as d:
        writer.proc.kill()
        writer.proc.wait(timeout=10)
        code, view = get_json(f"http://127.0.0.1:{d.port}/api/state")
        assert code == 200 and view["writer"]["state"] == "gone"
        assert view["services"][0]["endpoints"][0]["state"] == "isolated"


class _Actuator:
    """A real HTTP server answering as /actuator/weighted does: the snapshot of an engine in this
    process and its events since /{cursor} (read from its state file), or a failure on demand."""

    def __init__(self, engine, state_file, token):
        from waitress.server import create_server
        self.engine, self.token, self.fail = engine, token, None
        self.view = weighted.attach(state_file)
        self.cursors = []
        self.server = create_server(self.app, host="127.0.0.1", port=0, threads=2)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.url = f"http://127.0.0.1:{self.server.effective_port}/actuator/weighted"

    def app(self, environ, start_response):
        if environ.get("HTTP_AUTHORIZATION") != f"Bearer {self.token}":
            start_response("401 Unauthorized", [("Content-Type", "text/plain")])
            return [b"no"]
        if self.fail:
            start_response("200 OK", [("Content-Type", "application/json")])
            return [self.fail]
        # GET /actuator/weighted/{cursor}, as the Spring endpoint's selector.
        cursor = int(environ["PATH_INFO"].rsplit("/", 1)[1])
        self.cursors.append(cursor)
        body = json.dumps({"snapshot": self.engine.snapshot(),
                           "events": self.view.events(cursor)}).encode()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        from waitress import wasyncore
        self.server.trigger.pull_trigger(lambda: wasyncore.close_all(self.server._map))
        self.thread.join(timeout=10)
        self.server.task_dispatcher.shutdown(timeout=5)
        self.view.close()


def test_an_http_source_follows_the_cursor_and_reports_failures(tmp_path):
    from helpers import feed_healthy, make_sick
    token = "actuator-token-0123456789"
    engine = weighted.Engine.from_dict(
        {"seed": 5, "export": {"state_file": str(tmp_path / "a.state")}}, clock="manual")
    try:
        svc = engine.service("orders")
        svc.set_endpoints({"a": 100, "b": 100, "c": 100})
        with _Actuator(engine, str(tmp_path / "a.state"), token) as act:
            source = dashboard.HttpSource(act.url, token=token)
            view = source.view({})
            assert [e["type"] for e in view["events"]] == ["endpoint_added"] * 3
            feed_healthy(svc, ids=("b", "c"))
            make_sick(svc, "a")
            engine.advance(5)
            view = source.view({})
            assert act.cursors == [0, 3]
            assert [e["type"] for e in view["events"]].count("endpoint_added") == 3
            assert "isolated" in [e["type"] for e in view["events"]]
            assert view["timeline"]["t"] == [0.0, 5.0]
            eps = {e["id"]: e for e in view["services"][0]["endpoints"]}
            assert eps["a"]["state"] == "isolated"

            act.fail = b"<html>not json</html>"
            with pytest.raises(dashboard.SourceUnavailable, match="not JSON"):
                source.view({})
            act.fail = b'{"events": []}'
            with pytest.raises(dashboard.SourceUnavailable, match="snapshot"):
                source.view({})
            act.fail = None
            with pytest.raises(dashboard.SourceUnavailable, match="HTTP 401"):
                dashboard.HttpSource(act.url, token="wrong-token-0123456789").view({})
            # Served as a 503 with the reason, the page says so.
            act.fail = b"[]"
            with dashboard.Dashboard(source, port=0) as d:
                code, body = get_json(f"http://127.0.0.1:{d.port}/api/state")
                assert code == 503 and "snapshot" in body["error"]
    finally:
        engine.close()
    with pytest.raises(ValueError, match="not an http"):
        dashboard.HttpSource("file:///etc/passwd")
    closed = dashboard.HttpSource("http://127.0.0.1:9/actuator/weighted", timeout=2)
    with pytest.raises(dashboard.SourceUnavailable, match="127.0.0.1:9"):
        closed.view({})


def test_page_attached_to_another_process_shows_its_endpoints_shares_and_events(browser,
                                                                                writer):
    for _ in range(3):
        writer.send("cycle")
    with dashboard.attach(writer.path, port=0) as d:
        browser.set_window_size(1400, 1200)
        browser.get(d.url)
        _wait(browser, lambda b: _row(b, "orders/a") and _row(b, "orders/a")["state"] == "isolated",
              "endpoint a isolated in the other process")
        assert browser.find_element("id", "mode").text == "attach"
        assert "pid %d" % writer.pid in browser.find_element("id", "writer").text
        shares = browser.execute_script(
            "return Object.fromEntries(Array.from(document.querySelectorAll('td.share'))"
            ".map((td) => [td.parentElement.dataset.endpoint, Number(td.dataset.share)]));")
        # The engine's expected share: the isolated endpoint its probes', the others the rest.
        assert 0 < shares["orders/a"] < 0.05 and 0.3 < shares["orders/b"] < 0.7
        reasons = _texts(browser, 'tr[data-endpoint="orders/a"] td.reasons .reason')
        assert any("error_rate" in r for r in reasons)
        assert len(_texts(browser, "svg#timeline polyline")) == 3
        assert len(_texts(browser, "svg#shares polyline")) == 3
        assert _texts(browser, "svg#timeline .y-tick") and _texts(browser, "svg#shares .y-tick")
        _wait(browser, lambda b: _texts(b, '#events li[data-type="isolated"]'), "the isolation")
        assert _texts(browser, "svg#timeline line.event-marker")
        # A cycle in the other process reaches the open page.
        writer.send("healthy")
        _wait(browser, lambda b: _texts(b, "#time") == ["20.0"], "the page to follow the writer")
        os.makedirs(ARTIFACTS, exist_ok=True)
        assert browser.save_screenshot(os.path.join(ARTIFACTS, "console-attach-file.png"))
