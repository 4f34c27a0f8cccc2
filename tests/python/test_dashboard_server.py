"""The console's HTTP stack under the abuse an operator's page meets: bursts of half-sent
requests, clients that vanish mid-answer, absurd query values, a closed engine, bad command-line
arguments. Each case once failed (threads held for a minute, tracebacks by the thousand, 503s
with OverflowError, dropped connections, raw tracebacks on the CLI); these tests hold the fixes."""
from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

import weighted
from weighted import dashboard
from helpers import feed_healthy


def status_of(url, timeout=10):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def _closed_by_peer(sock, deadline):
    """True once the server has closed `sock` (EOF or reset), False at the deadline."""
    sock.settimeout(max(0.05, deadline - time.monotonic()))
    try:
        return sock.recv(4096) == b""
    except ConnectionResetError:
        return True
    except socket.timeout:
        return False


def test_half_sent_requests_hold_no_threads_and_are_closed(engine, svc):
    before = threading.active_count()
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0, channel_timeout=1,
                             cleanup_interval=1, connection_limit=300) as d:
        started = threading.active_count()
        socks = []
        for _ in range(200):  # each sends half a request line and then nothing
            s = socket.create_connection(("127.0.0.1", d.port), timeout=5)
            s.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            socks.append(s)
        # A complete request is still answered while they hang: the workers are not theirs.
        code, body = status_of(f"http://127.0.0.1:{d.port}/api/state")
        assert code == 200 and json.loads(body)["services"][0]["name"] == "orders"
        assert d.worker_count() == dashboard._http.THREADS
        assert threading.active_count() == started  # no thread per connection
        deadline = time.monotonic() + 15
        assert all(_closed_by_peer(s, deadline) for s in socks), \
            "half-sent requests were not closed after the channel timeout"
        for s in socks:
            s.close()
    assert threading.active_count() <= before + 1  # the server's threads ended with it


def test_connections_beyond_the_limit_wait_instead_of_spawning(engine, svc):
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0, channel_timeout=1,
                             cleanup_interval=1, connection_limit=8) as d:
        socks = [socket.create_connection(("127.0.0.1", d.port), timeout=5) for _ in range(30)]
        for s in socks:
            s.sendall(b"GET / HTTP/1.1\r\n")
        # Served once the idle ones are closed: later, not never, and still on 4 workers.
        code, _ = status_of(f"http://127.0.0.1:{d.port}/api/state", timeout=20)
        assert code == 200 and d.worker_count() == dashboard._http.THREADS
        for s in socks:
            s.close()


def _interruptible():
    # A suite started in the background (`cmd &` in a script, nohup) runs with SIGINT ignored,
    # its children inherit that, and Python then leaves it ignored: the console under test must
    # get the Ctrl-C an operator at a terminal sends.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start_cli(args, **popen):
    proc = subprocess.Popen([sys.executable, "-m", "weighted.dashboard", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_interruptible, **popen)
    line = proc.stdout.readline()
    assert "http://127.0.0.1:" in line, (line, proc.stderr.read() if proc.poll() else "")
    port = int(line.split("http://127.0.0.1:")[1].split("/")[0])
    return proc, port


def _vanish(port, request, read=0):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(request)
    if read:
        s.recv(read)
    # SO_LINGER 0: close() sends a reset, as a browser tab killed mid-answer does.
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def test_clients_that_vanish_leave_no_tracebacks():
    proc, port = _start_cli([])  # the live demo engine
    try:
        for i in range(300):
            path = (b"/api/state", b"/metrics", b"/app.js", b"/")[i % 4]
            _vanish(port, b"GET " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", read=i % 3)
        for _ in range(50):  # and some that leave halfway through their request
            _vanish(port, b"GET /api/state HTTP/1.1\r\nHo")
        code, _ = status_of(f"http://127.0.0.1:{port}/api/state")
        assert code == 200  # still serving
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    for word in ("Traceback", "BrokenPipe", "ConnectionReset", "Exception"):
        assert word not in err, err[-3000:]


def test_a_non_finite_cursor_is_a_400_with_its_reason(tmp_path):
    sim = pytest.importorskip("weighted.sim")
    results = sim.run("seed", policies=["engine_default"])
    with dashboard.replay(results, port=0) as d:
        base = f"http://127.0.0.1:{d.port}/api/state"
        for value in ("inf", "-inf", "nan", "1e400", "abc", "1e30"):
            code, body = status_of(f"{base}?t={value}")
            assert code == 400, (value, body)
            assert "t must be" in json.loads(body)["error"]
        assert status_of(f"{base}?t=12")[0] == 200


def test_a_closed_engine_is_a_503_with_its_reason_not_a_dropped_connection():
    engine = weighted.Engine.from_dict({"seed": 1}, clock="manual")
    svc = engine.service("orders")
    svc.set_endpoints({"a": 1, "b": 1})
    feed_healthy(svc, ids=("a", "b"))
    with dashboard.Dashboard(dashboard.LiveSource(engine), port=0) as d:
        base = f"http://127.0.0.1:{d.port}"
        assert status_of(base + "/metrics")[0] == 200
        engine.close()
        code, body = status_of(base + "/metrics")
        assert code == 503 and "closed" in json.loads(body)["error"].lower()
        # The page keeps the last state it had.
        code, body = status_of(base + "/api/state")
        assert code == 200 and json.loads(body)["services"][0]["name"] == "orders"


@pytest.mark.parametrize("args,message", [
    (["--port", "80000"], "must be in [0, 65535]"),
    (["--port", "http"], "must be an integer"),
    (["--speed", "0"], "must be a finite number > 0"),
    (["--speed", "nan"], "must be a finite number > 0"),
    (["--replay", "{tmp}/notjson.json"], "not a simulation's results.json"),
    (["--replay", "{tmp}/list.json"], "not a JSON object"),
    (["--replay", "{tmp}/missing.json"], "missing.json"),
    (["--attach", "{tmp}/missing.state"], "missing.state"),
    (["--attach", "{tmp}/notjson.json"], "is not a state file this library reads"),
    (["--attach", "ftp://example.com/x"], "cannot open"),  # neither http(s) nor a file
    (["--config", "{tmp}/notjson.json"], "config is not valid JSON: line 1"),
    (["--attach", "x", "--replay", "y"], "not allowed with argument"),
])
def test_bad_arguments_end_with_one_line_and_status_2(tmp_path, args, message):
    (tmp_path / "notjson.json").write_text("this is { not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    proc = subprocess.run([sys.executable, "-m", "weighted.dashboard", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc
    assert message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    # One line says what is wrong (argparse prints its usage above it).
    lines = [ln for ln in proc.stderr.splitlines() if ln and not ln.startswith((" ", "usage:"))]
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_a_console_entered_with_with_runs_one_server_and_drops_no_request():
    # replay() returns a started console and `with` starts it again: two event loops on one
    # set of connections raced for each read, and the loser dropped the connection.
    sim = pytest.importorskip("weighted.sim")
    results = sim.run("seed", policies=["engine_default"])
    with dashboard.replay(results, port=0) as d:
        loops = [t for t in threading.enumerate() if t.name == "weighted-dashboard"]
        assert len(loops) == 1
        codes = [status_of(f"http://127.0.0.1:{d.port}/api/state?t={t % 100}")[0]
                 for t in range(200)]
        assert codes == [200] * 200
    assert not [t for t in threading.enumerate() if t.name == "weighted-dashboard"]


def test_without_waitress_the_console_says_which_extra_to_install(tmp_path):
    # waitress is the "dashboard" extra: the engine installs without it. A console started
    # without it ends with one line naming the extra, not a traceback.
    (tmp_path / "sitecustomize.py").write_text(
        "import sys\nsys.modules['waitress'] = None\nsys.modules['waitress.server'] = None\n")
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "weighted.dashboard", "--port", "0"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2, proc
    assert "pip install 'weighted[dashboard]'" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
