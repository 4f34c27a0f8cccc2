"""The dashboard: bind rules, tokens, its JSON, and the page end to end in headless Chromium."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.error
import urllib.request

import pytest

from weighted import dashboard
from helpers import feed_healthy, make_sick

TOKEN = "s3cret-token-0123456789"


def get(url, headers=None):
    req = urllib.request.Request(url, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read()


def test_binds_loopback_by_default(engine, svc):
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0) as d:
        assert d.host == "127.0.0.1"
        status, body = get(f"http://127.0.0.1:{d.port}/api/state")
        state = json.loads(body)
        assert status == 200 and state["mode"] == "live"
        ids = [e["id"] for e in state["services"][0]["endpoints"]]
        assert ids == ["a", "b", "c"]


@pytest.mark.parametrize("kwargs,message", [
    ({"host": "0.0.0.0"}, "allow_remote"),
    ({"host": "0.0.0.0", "token": TOKEN}, "allow_remote"),
    ({"host": "0.0.0.0", "allow_remote": True}, "token"),
    ({"host": "0.0.0.0", "allow_remote": True, "token": "short"}, "at least 16"),
])
def test_other_addresses_need_an_explicit_option_and_a_token(engine, kwargs, message):
    with pytest.raises(ValueError, match=message):
        dashboard.Dashboard(dashboard.LiveSource(engine), port=0, **kwargs)


def test_cli_refuses_a_public_bind_without_option_and_token(capsys):
    assert dashboard.main(["--host", "0.0.0.0", "--port", "0"]) == 2
    assert "allow_remote" in capsys.readouterr().err


def test_token_is_required_on_every_request(engine, svc):
    d = dashboard.Dashboard(dashboard.LiveSource(engine), host="0.0.0.0", port=0,
                            allow_remote=True, token=TOKEN).start()
    try:
        base = f"http://127.0.0.1:{d.port}"
        for path in ("/api/state", "/metrics", "/api/state?t=1"):
            with pytest.raises(urllib.error.HTTPError) as info:
                get(base + path)
            assert info.value.code == 401
        # The page's static files carry no data.
        assert get(base + "/")[0] == 200 and get(base + "/app.js")[0] == 200
        with pytest.raises(urllib.error.HTTPError):
            get(base + "/api/state?token=wrong-token-0123456789")
        assert get(base + f"/api/state?token={TOKEN}")[0] == 200
        assert get(base + "/api/state", {"Authorization": f"Bearer {TOKEN}"})[0] == 200
        status, body = get(base + "/metrics", {"Authorization": f"Bearer {TOKEN}"})
        assert b"weighted_endpoint_weight" in body
        with pytest.raises(urllib.error.HTTPError) as info:
            get(base + f"/../../etc/passwd?token={TOKEN}")
        assert info.value.code == 404
    finally:
        d.stop()


def test_live_view_follows_the_engine(engine, svc):
    source = dashboard.LiveSource(engine)
    feed_healthy(svc, ids=("b", "c"))
    make_sick(svc, "a")
    engine.advance(5)
    source.sample()
    view = source.view({})
    a = view["services"][0]["endpoints"][0]
    assert (a["id"], a["state"], a["weight"]) == ("a", "isolated", 0)
    assert {r["metric"]: r["contribution"] for r in a["rules"]} == pytest.approx(
        {"latency_p99": 0.3, "error_rate": 1.0, "cpu": 0.2,  # 50% errors: the graded rule's full 1
         "server_latency": 0.0})  # no server reports its latency
    assert view["timeline"]["t"] == [5.0]
    assert view["timeline"]["series"]["orders/a"] == [0]
    assert [e["type"] for e in view["events"]] == ["isolated"]
    engine.advance(5)
    source.sample()
    source.sample()  # same engine time: no new point
    assert source.view({})["timeline"]["t"] == [5.0, 10.0]
    source.close()


def test_replay_view_of_a_simulation(tmp_path):
    sim = pytest.importorskip("weighted.sim")
    results = sim.run("seed", policies=["round_robin", "engine_default"])
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    source = dashboard.ReplaySource(str(path))
    assert source.policy == "engine_default"
    view = source.view({"t": "60"})
    assert view["mode"] == "replay" and view["cursor"] == 60
    ids = [e["id"] for e in view["services"][0]["endpoints"]]
    assert ids == ["b0", "b1", "b2"]
    states = {e["id"]: e["state"] for e in view["services"][0]["endpoints"]}
    assert states == {"b0": "ok", "b1": "fault", "b2": "fault"}  # both faults active at 60 s
    assert len(view["timeline"]["t"]) == results["scenario"]["duration_s"]
    times = [e["time_s"] for e in view["events"]]
    assert times == sorted(times) and {e["type"] for e in view["events"]} >= {"fault_onset"}
    assert source.view({"policy": "round_robin"})["policy"] == "round_robin"
    with pytest.raises(ValueError, match="no series for policy"):
        dashboard.ReplaySource(results, policy="nope")


# ---- end to end in a real headless browser -----------------------------------------------------

def _chromium():
    binary = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not binary or not driver:
        message = "Debian's chromium and chromium-driver are needed (make test installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return binary, driver


@pytest.fixture
def browser():
    binary, driver_path = _chromium()
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service as ChromeService
    profile = tempfile.mkdtemp(prefix="weighted-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    drv = webdriver.Chrome(service=ChromeService(executable_path=driver_path), options=options)
    drv.set_page_load_timeout(30)
    try:
        yield drv
    finally:
        drv.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(drv, predicate, what, timeout=20):
    """Bounded poll for a condition on the page (the page re-renders every 0.5 s)."""
    from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        return WebDriverWait(drv, timeout, poll_frequency=0.1,
                             ignored_exceptions=(StaleElementReferenceException,)).until(predicate)
    except TimeoutException:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}; page:\n"
                             + drv.execute_script("return document.body.innerText")[:2000])


# One atomic read of a table row (elements found one by one could be replaced in between).
_ROW_JS = """
const tr = document.querySelector('tr[data-endpoint="' + arguments[0] + '"]');
if (!tr) return null;
const cell = (c) => tr.querySelector('td.' + c).textContent;
return {state: tr.dataset.state, weight: cell('weight'), target: cell('target'),
        base: cell('base'), penalty: cell('penalty'), p99: cell('p99'),
        error_rate: cell('error-rate'),
        fired: Array.from(tr.querySelectorAll('td.rules .rule-fired')).map(
          (r) => [r.dataset.metric, Number(r.dataset.contribution)])};
"""


def _row(drv, endpoint):
    return drv.execute_script(_ROW_JS, endpoint)


def _state(drv, endpoint):
    row = _row(drv, endpoint)
    return row and row["state"]


def _texts(drv, selector):
    return drv.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0])).map((e) => e.textContent);",
        selector)


def test_page_shows_endpoints_and_an_isolation_as_it_happens(browser, engine, svc):
    feed_healthy(svc)
    engine.advance(5)
    with dashboard.serve(engine, port=0, token=TOKEN, interval=0.05) as d:
        browser.get(d.url)
        _wait(browser, lambda b: all(_state(b, f"orders/{e}") == "healthy" for e in "abc"),
              "three healthy endpoints")
        a = _row(browser, "orders/a")
        assert (a["weight"], a["target"], a["base"], a["penalty"]) == ("100.00",) * 3 + ("0.00",)
        assert a["p99"] != "–" and a["error_rate"] == "0.00%" and a["fired"] == []
        assert browser.find_element("id", "mode").text == "live"
        assert len(_texts(browser, 'svg#timeline polyline[data-series="orders/a"]')) == 1
        assert len(_texts(browser, "svg#timeline polyline")) == 3
        # Events from before the dashboard subscribed are not its to show (the queue is the app's).
        assert _texts(browser, "#events li") == []

        # Bad reports on the manual clock: A is slow, failing and hot, then one cycle runs.
        feed_healthy(svc, ids=("b", "c"))
        make_sick(svc, "a")
        engine.advance(5)
        _wait(browser, lambda b: _state(b, "orders/a") == "isolated", "endpoint a to show isolated")
        a = _row(browser, "orders/a")
        # 50 errors among 150 results in the window: the graded error rule weighs
        # 0.5 + 0.5 x (0.3333 - 0.01) / (0.5 - 0.01).
        error = 0.5 + 0.5 * (50 / 150 - 0.01) / 0.49
        assert (a["weight"], a["penalty"]) == ("0.00", f"{0.5 + error:.2f}")
        assert a["error_rate"] == "33.33%"
        assert dict(a["fired"]) == pytest.approx({"latency_p99": 0.3, "error_rate": error, "cpu": 0.2},
                                                 abs=0.005)
        assert _state(browser, "orders/b") == "healthy"
        _wait(browser, lambda b: _texts(b, '#events li[data-type="isolated"]'),
              "the isolated event in the list")
        assert "orders/a" in _texts(browser, '#events li[data-type="isolated"]')[0]
        assert len(_texts(browser, "svg#timeline line.event-marker")) >= 1


def test_page_without_the_token_is_refused(browser, engine, svc):
    with dashboard.serve(engine, port=0, token=TOKEN, interval=0.05) as d:
        browser.get(d.url.split("?")[0])
        _wait(browser, lambda b: "HTTP 401" in _texts(b, "#status")[0],
              "the page to report the refused data request")
        assert _texts(browser, "tr[data-endpoint]") == []


def test_page_replays_a_simulation_run(browser, tmp_path):
    sim = pytest.importorskip("weighted.sim")
    results = sim.run("seed", policies=["round_robin", "engine_default"])
    with dashboard.replay(results, port=0) as d:
        browser.get(d.url)
        _wait(browser, lambda b: _row(b, "engine_default/b2") is not None, "the replayed backends")
        assert browser.find_element("id", "mode").text == "replay"
        # The cursor starts at the end; move it to t = 10 s (before the faults), then to 60 s.
        cursor = browser.find_element("id", "cursor")
        for t, state in ((10, "ok"), (60, "fault")):
            browser.execute_script(
                "arguments[0].value = arguments[1];"
                "arguments[0].dispatchEvent(new Event('input'));", cursor, t)
            _wait(browser, lambda b: _texts(b, "#time") == [f"{t}.0"] and
                  _state(b, "engine_default/b1") == state, f"b1 to show {state} at {t} s")
        assert _state(browser, "engine_default/b0") == "ok"
        assert len(_texts(browser, "svg#timeline polyline")) == 3
        assert _texts(browser, '#events li[data-type="fault_onset"]')
        # Another policy from the select.
        from selenium.webdriver.support.ui import Select
        Select(browser.find_element("id", "policy")).select_by_value("round_robin")
        _wait(browser, lambda b: _row(b, "round_robin/b0") is not None, "the round_robin rows")


def test_page_shows_the_error_budget_and_whether_it_holds(browser):
    import weighted
    engine = weighted.Engine.from_dict({"seed": 9, "budget": {"max_error_rate": 0.01}},
                                       clock="manual")
    svc = engine.service("orders")
    svc.set_endpoints({"a": 1, "b": 1})
    try:
        with dashboard.serve(engine, port=0, token=TOKEN, interval=0.05) as d:
            browser.get(d.url)
            badge = lambda b: _texts(b, 'h2[data-service="orders"] .budget')
            _wait(browser, badge, "the budget badge")
            assert "met" in badge(browser)[0] and "1.00%" in badge(browser)[0]
            # One failure in ten for a cycle: over the 1% budget.
            for i in range(400):
                svc.report("a" if i % 2 else "b", 5.0,
                           weighted.Outcome.HTTP_5XX if i % 10 == 0 else weighted.Outcome.SUCCESS)
            engine.advance(5)
            _wait(browser, lambda b: _texts(b, '[data-budget="over"]'), "the budget over")
            text = badge(browser)[0]
            assert "10.00%" in text and "over 5 s" in text
    finally:
        engine.close()


def test_badges_read_failing_with_evidence_and_unknown_without(engine, svc):
    import weighted
    source = dashboard.LiveSource(engine)
    feed_healthy(svc, ids=("b",))
    for i in range(100):  # 10% errors, served at the fleet's speed: the error rule alone fires
        svc.report("a", 10.0, weighted.Outcome.HTTP_5XX if i % 10 == 0 else weighted.Outcome.SUCCESS)
    engine.advance(5)  # "c" got nothing at all
    source.sample()
    eps = {e["id"]: e for e in source.view({})["services"][0]["endpoints"]}
    assert (eps["a"]["state"], eps["a"]["evidence"]) == ("failing", "window")
    assert [r["name"] for r in eps["a"]["reasons"]][:1] == ["error_rate"]
    assert eps["b"]["state"] == "healthy"
    # The engine's state for "c" is healthy (its weight is at base); the badge must not say so.
    assert (eps["c"]["engine_state"], eps["c"]["state"]) == ("healthy", "unknown")
    assert weighted.EndpointState(eps["c"]["state"]) is weighted.EndpointState.UNKNOWN
    source.close()
