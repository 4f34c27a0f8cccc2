"""The dashboard: bind rules, tokens, its JSON, and the page end to end in headless Chromium."""
from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.error
import urllib.request

import pytest

import weighted
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
        {"latency_p99": 0.3, "error_rate": 0.5, "cpu": 0.2})
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
    assert {e["type"] for e in view["events"]} >= {"fault_onset"}
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
    from selenium.webdriver.support.ui import WebDriverWait
    try:
        return WebDriverWait(drv, timeout, poll_frequency=0.1).until(lambda d: predicate(d))
    except Exception:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}; page:\n"
                             + drv.find_element("tag name", "body").text[:2000])


def _row(drv, endpoint):
    rows = drv.find_elements("css selector", f'tr[data-endpoint="{endpoint}"]')
    return rows[0] if rows else None


def _cell(row, cls):
    return row.find_element("css selector", f"td.{cls}").text


def test_page_shows_endpoints_and_an_isolation_as_it_happens(browser, engine, svc):
    feed_healthy(svc)
    engine.advance(5)
    with dashboard.serve(engine, port=0, token=TOKEN, interval=0.05) as d:
        browser.get(d.url)
        _wait(browser, lambda b: all(_row(b, f"orders/{e}") is not None and
                                     _row(b, f"orders/{e}").get_attribute("data-state") == "healthy"
                                     for e in "abc"), "three healthy endpoints")
        a = _row(browser, "orders/a")
        assert _cell(a, "weight") == "100.00" and _cell(a, "target") == "100.00"
        assert _cell(a, "base") == "100.00" and _cell(a, "penalty") == "0.00"
        assert _cell(a, "p99") != "–" and _cell(a, "error-rate") == "0.00%"
        assert browser.find_element("id", "mode").text == "live"
        assert browser.find_elements("css selector", 'svg#timeline polyline[data-series="orders/a"]')
        # Events from before the dashboard subscribed are not its to show (the queue is the app's).
        assert not browser.find_elements("css selector", "#events li")

        # Bad reports on the manual clock: A is slow, failing and hot, then one cycle runs.
        feed_healthy(svc, ids=("b", "c"))
        make_sick(svc, "a")
        engine.advance(5)
        _wait(browser, lambda b: _row(b, "orders/a").get_attribute("data-state") == "isolated",
              "endpoint a to show isolated")
        a = _row(browser, "orders/a")
        assert _cell(a, "weight") == "0.00" and _cell(a, "penalty") == "1.00"
        assert _cell(a, "error-rate") == "33.33%"  # 50 errors among 150 results in the window
        fired = {r.get_attribute("data-metric"): float(r.get_attribute("data-contribution"))
                 for r in a.find_elements("css selector", "td.rules .rule-fired")}
        assert fired == pytest.approx({"latency_p99": 0.3, "error_rate": 0.5, "cpu": 0.2})
        assert _row(browser, "orders/b").get_attribute("data-state") == "healthy"
        _wait(browser, lambda b: b.find_elements("css selector", '#events li[data-type="isolated"]'),
              "the isolated event in the list")
        assert "orders/a" in browser.find_element("css selector", '#events li[data-type="isolated"]').text
        assert len(browser.find_elements("css selector", "svg#timeline line.event-marker")) >= 1


def test_page_without_the_token_is_refused(browser, engine, svc):
    with dashboard.serve(engine, port=0, token=TOKEN, interval=0.05) as d:
        browser.get(d.url.split("?")[0])
        _wait(browser, lambda b: "HTTP 401" in b.find_element("id", "status").text,
              "the page to report the refused data request")
        assert not browser.find_elements("css selector", "tr[data-endpoint]")
