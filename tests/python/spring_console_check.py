"""The end-to-end check of the console against a real Spring Boot application, run by
examples/spring-boot's ConsoleEndToEndTests (inside `make test`): that JUnit test starts the
example application under load, with one backend failing and export.state_file set, and runs this
file with pytest in a separate Python process. Here the console itself is started as yet another
process (`python -m weighted.dashboard --attach ...`), once on the application's state file and
once on its /actuator/weighted endpoint, and headless Chromium checks that the page shows the
application's endpoints, their shares and the failing backend's weight cut, keeping a screenshot of each.

Not named test_*.py: without the application it has nothing to attach to, so `pytest tests/python`
does not collect it; the JUnit test names it explicitly and passes the application's coordinates:
  WT_E2E_STATE_FILE  the state file the application writes
  WT_E2E_ACTUATOR    http://127.0.0.1:<port>/actuator/weighted
  WT_E2E_SERVICE     the load-balanced service's name
  WT_E2E_ENDPOINTS   its endpoints' ids, comma-separated
  WT_E2E_FAILING     the id of the endpoint that answers 503s
  WT_E2E_ARTIFACTS   where the screenshots go
"""
from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
import time

import pytest

import weighted
from test_dashboard import _row, _texts, _wait, browser  # noqa: F401  (the fixture)


def _env(name):
    value = os.environ.get(name)
    if not value:
        raise AssertionError(f"{name} is not set: this file is run by examples/spring-boot's "
                             "ConsoleEndToEndTests, which starts the application it checks")
    return value


SERVICE = _env("WT_E2E_SERVICE")
ENDPOINTS = _env("WT_E2E_ENDPOINTS").split(",")
FAILING = _env("WT_E2E_FAILING")
ARTIFACTS = _env("WT_E2E_ARTIFACTS")


class Console:
    """`python -m weighted.dashboard --attach SOURCE --port 0` as its own process; the URL is
    the line it prints once it listens."""

    def __init__(self, source, timeout=60):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "weighted.dashboard", "--attach", source, "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines = queue.Queue()
        self.output = []

        def pump():
            for line in self.proc.stdout:
                self.output.append(line)
                lines.put(line)
            lines.put(None)

        threading.Thread(target=pump, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.stop()
                raise AssertionError(f"the console printed no URL within {timeout}s: "
                                     + "".join(self.output))
            try:
                line = lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise AssertionError(f"the console exited ({self.proc.wait()}): "
                                     + "".join(self.output))
            # "weighted dashboard (attach SOURCE): URL"; SOURCE may be a URL itself.
            if line.startswith("weighted dashboard (") and "): http://" in line:
                self.url = line.rsplit("): ", 1)[1].strip()
                return

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)


def _shares(b, attribute):
    return b.execute_script(
        "return Object.fromEntries(Array.from(document.querySelectorAll('td.share'))"
        ".map((td) => [td.parentElement.dataset.endpoint, Number(td.dataset[arguments[0]])]));",
        attribute)


def _check_page(b, console, shot):
    keys = [f"{SERVICE}/{e}" for e in ENDPOINTS]
    b.set_window_size(1400, 1200)
    b.get(console.url)
    _wait(b, lambda d: all(_row(d, k) for k in keys), f"rows for {keys}", timeout=60)
    # Every row of the page is one of the application's endpoints (nothing invented).
    page_rows = b.execute_script(
        "return Array.from(document.querySelectorAll('tr[data-endpoint]'))"
        ".map((tr) => tr.dataset.endpoint);")
    assert sorted(set(page_rows)) == sorted(keys)
    # Two shares per endpoint: the one the engine expects for the next cycle and the one it
    # measured in the last. Both come from the one model, so both show the failing backend
    # drained; they are not compared with each other here, since at the few calls per cycle of
    # this test a drained backend's probes (a share of about 0.005) land as 0 to 3 calls.
    expected = _wait(b, lambda d: (lambda s: s if set(keys) <= set(s) else None)(
        _shares(d, "share")), "a share per endpoint")
    assert all(0.0 <= expected[k] <= 1.0 for k in keys), expected
    assert sum(expected[k] for k in keys) == pytest.approx(1.0, abs=0.01), expected
    measured = _shares(b, "measured")
    assert all(0.0 <= measured[k] <= 1.0 for k in keys), measured
    assert sum(measured[k] for k in keys) == pytest.approx(1.0, abs=0.05), measured
    assert measured[f"{SERVICE}/{FAILING}"] < 0.1, measured
    assert expected[f"{SERVICE}/{FAILING}"] < 0.1, (measured, expected)
    # The failing backend's cut is in the event list with its reason, and marked on the weight
    # plot: a weight change or, failing every call (the graded error rule's full penalty), an
    # isolation.
    cut = (f'#events li[data-type="weight_changed"][data-endpoint="{FAILING}"], '
           f'#events li[data-type="isolated"][data-endpoint="{FAILING}"]')
    _wait(b, lambda d: any("error_rate" in t for t in _texts(d, cut)),
          f"a weight cut of {FAILING} for error_rate in the event list")
    assert any(SERVICE + "/" + FAILING in t for t in _texts(b, cut))
    # An HTTP source's timeline starts at the console's first poll, so its markers are of the
    # events since; the fault keeps producing them (the failing backend's weight is cut again
    # each time it creeps back).
    _wait(b, lambda d: _texts(d, "svg#timeline line.event-marker"), "an event marker on the plot",
          timeout=60)
    assert _texts(b, "svg#timeline polyline") and _texts(b, "svg#shares polyline")
    os.makedirs(ARTIFACTS, exist_ok=True)
    assert b.save_screenshot(os.path.join(ARTIFACTS, shot))


def test_the_state_file_is_the_applications():
    with weighted.attach(_env("WT_E2E_STATE_FILE")) as view:
        info = view.info()
        assert info["state"] == "running" and info["pid"] != os.getpid()
        snap = view.snapshot()
    [svc] = [s for s in snap["services"] if s["name"] == SERVICE]
    assert sorted(e["id"] for e in svc["endpoints"]) == sorted(ENDPOINTS)


def test_console_attached_to_the_state_file(browser):
    console = Console(_env("WT_E2E_STATE_FILE"))
    try:
        _check_page(browser, console, "console-spring-state-file.png")
        assert browser.find_element("id", "mode").text == "attach"
    finally:
        console.stop()


def test_console_attached_to_the_actuator_endpoint(browser):
    console = Console(_env("WT_E2E_ACTUATOR"))
    try:
        _check_page(browser, console, "console-spring-actuator.png")
    finally:
        console.stop()
